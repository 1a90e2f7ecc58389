"""A ``table:`` strategy on the batched engine: the solver's key from the rollout's own hand history, the table
agent's distribution at engine replicas of the same games, and the learned best response's rollouts using it."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from test_ppo import tiny_config  # noqa: E402
from test_vector import Reference  # noqa: E402

from agents.cfr import load_agent  # noqa: E402
from agents.cfr.keys import parse_info_state  # noqa: E402
from agents.cfr.table_batch import BatchTable  # noqa: E402
from train.algos import ppo  # noqa: E402
from train.algos.rollout import VectorGames  # noqa: E402
from truc_env.batch.vector import VectorEnv  # noqa: E402
from truc_env.game.observe import info_state_string  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

REDEAL = {"ranks": 4, "hand_size": 2, "max_raises": 2}  # le_truc: the redeal is on by default
PUT = {"ranks": 4, "hand_size": 2, "max_raises": 2}


def _solve(tmp_path, variant, options, iterations=30) -> str:
    from train.algos.cfr import main

    cfg = tmp_path / f"{variant}.yaml"
    cfg.write_text(f"variant: {variant}\noptions: {json.dumps(options)}\nalgorithm: cfr+\niterations: {iterations}\n"
                   f"dtype: float64\nout: {tmp_path / variant}\n")
    main(str(cfg))
    return str(tmp_path / variant / "strategy.npz")


@pytest.mark.parametrize("variant,options", [("le_truc", REDEAL), ("put", PUT)], ids=["le_truc-redeal", "put"])
def test_batched_table_decides_as_the_table_agent_at_engine_replicas(tmp_path, variant, options):
    rules = make_rules(variant, **options)
    agent = load_agent(_solve(tmp_path, variant, options), rules, seed=0)
    B = 16
    venv = VectorEnv(rules, B, episode="hand", reward="points", dealer="random")
    vg = VectorGames(tiny_config("/nonexistent", variant=variant, options=options, episode="hand", num_envs=B),
                     rules, venv)
    vg.keep_table_history()
    table = BatchTable(rules, agent)
    table.reset(1)
    rng = np.random.default_rng(0)
    vg.begin()
    for b in range(B):
        vg.start(b, rng, "self", -1)
    ref = Reference(venv)
    for b in range(B):
        ref.new_episode(b)
    ab = agent.strategy.abstraction
    checked, redealt, ended = 0, 0, 0
    for tick in range(300):
        idx = np.flatnonzero(vg.live)
        for b in idx.tolist():
            st, seat = ref.states[b], int(vg.seat[b])
            k = int(vg.decisions[b])
            key = table.key_of(seat, int(venv.dealers[b]), venv.hands[b, seat], vg.t_actor[b, :k], vg.t_action[b, :k])
            text = info_state_string(st, seat)
            assert key == parse_info_state(text, rules, ab), (key, text)
            legal = np.flatnonzero(vg.mask[b]).tolist()
            got = table.probabilities(key, legal)
            want = agent.policy({"info_state": text}, vg.mask[b])
            assert got.keys() == want.keys() and all(got[a] == pytest.approx(want[a], abs=1e-12) for a in got)
            checked += 1
            redealt += key.redealt
        # the table plays half of the decisions (its sampler), random legal actions the rest
        actions = np.array([rng.choice(np.flatnonzero(vg.mask[b])) for b in idx])
        half = idx[idx % 2 == tick % 2]
        if len(half):
            actions[idx % 2 == tick % 2] = table.act_in(vg, half)
        assert vg.mask[idx, actions].all()
        vg.record(idx, None, None, actions, None, None, None)
        states = list(ref.states)
        finished = {e[0] for e in vg.step(None)}
        for b, a in zip(idx.tolist(), actions.tolist()):
            states[b].apply_action(int(a))
            if states[b].is_terminal():
                assert b in finished
                ended += 1
                ref.new_episode(b)
                vg.start(b, rng, "self", -1)
            else:
                ref.feed(b)
    assert table.misses == 0 and checked > 1000 and ended > 100
    assert (redealt > 20) == (variant == "le_truc")


def test_the_rollout_puts_a_table_on_the_batched_engine_where_it_can(tmp_path):
    rules = make_rules("le_truc", **REDEAL)
    path = _solve(tmp_path, "le_truc", REDEAL, iterations=5)
    spec = f"table:{path}"
    cfg = tiny_config("/nonexistent", options=REDEAL, episode="hand", fixed_opponents=[spec], fixed_prob=1.0,
                      self_play_prob=0.0, fixed_batched=True)
    col = ppo.Collector(cfg, rules, torch.device("cpu"))
    f = col.batched(col.agent(spec), np.random.default_rng(0))
    assert f >= 0 and isinstance(col.batch_players[f], BatchTable) and col.vector.t_actor is not None
    # not without fixed_batched, and not for rules it was not solved for or a game the key cannot follow
    off = ppo.Collector(tiny_config("/nonexistent", options=REDEAL, episode="hand", fixed_opponents=[spec]),
                        rules, torch.device("cpu"))
    assert off.batched(off.agent(spec), np.random.default_rng(0)) == -1
    assert "other rules" in BatchTable.why_not(col.agent(spec), make_rules("le_truc"))
    assert "not a table" in BatchTable.why_not(object(), rules)
