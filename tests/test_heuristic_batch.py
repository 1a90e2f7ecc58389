"""The batched heuristic (agents/players/heuristic_batch.py) decides exactly as the per-state heuristic."""

from __future__ import annotations

import numpy as np
import pytest

from agents.players.heuristic import STYLES, HeuristicAgent
from agents.players.heuristic_batch import BatchHeuristic, batch_supports
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.observe import SeatObservation, encoder_of
from truc_env.game.rules import make_rules

HEADS_UP_KERNEL = [("le_truc", {}), ("put", {}), ("truco_mineiro", {"players": 2}), ("truco_paulista", {"players": 2})]


class Draws:
    """A stand-in generator that hands the per-state player the batch's uniforms for one decision."""

    def __init__(self, u):
        self.u = u

    def random(self):
        return float(self.u[0])

    def integers(self, k):
        return int(self.u[1] * k)


def _decisions(rules, count, seed):
    """Observation vectors, masks and engine states of decisions in seeded games (random scores, so
    mão de onze and blind hands come up), played half by the honest heuristic and half at random."""
    enc, rng = encoder_of(rules), np.random.default_rng(seed)
    honest = HeuristicAgent("honest")
    out = []
    while len(out) < count:
        score = [int(x) for x in rng.integers(0, rules.target, size=rules.n_sides)] if rng.random() < 0.5 else None
        st = State(rules, episode="game" if rng.random() < 0.3 else "hand", dealer=int(rng.integers(rules.players)),
                   score=score)
        ep = Episode(st, Dealer(rules, rng))
        while (seat := ep.to_decision()) >= 0:
            mask = ep.mask()
            out.append((enc.encode(st, seat), mask, st.clone(), seat))
            if rng.random() < 0.5:
                ep.play(honest.act(SeatObservation(st, seat, mask.copy()), mask))
            else:
                ep.play(rng.choice(np.flatnonzero(mask)))
    return out


@pytest.mark.parametrize("variant,options", HEADS_UP_KERNEL, ids=lambda x: str(x))
def test_batched_heuristic_takes_the_per_state_action_on_every_decision(variant, options):
    rules = make_rules(variant, **options)
    L = layout_of(rules)
    decisions = _decisions(rules, 2500, seed=3)
    obs = np.stack([d[0] for d in decisions])
    masks = np.stack([d[1] for d in decisions])
    uniforms = np.random.default_rng(7).random((len(decisions), 2))
    seen = set()
    for style in STYLES:
        got = BatchHeuristic(rules, style).act(obs, masks, uniforms)
        agent = HeuristicAgent(style)
        for i, (_, mask, st, seat) in enumerate(decisions):
            agent.rng = Draws(uniforms[i])
            want = agent.act(SeatObservation(st, seat, mask.copy()), mask)
            assert got[i] == want, (style, i, st.phase, L.to_string(want), L.to_string(int(got[i])))
            name = L.to_string(want)
            seen.add("play" if name.startswith("play ") and "slot" not in name else name.split()[0] + (
                " slot" if "slot" in name else ""))
    # the decisions covered every kind of choice these rules offer
    expect = {"play", "accept", "refuse"} | ({"raise"} if "raise" in [L.to_string(a) for a in range(L.size)] else set())
    expect |= {"rest", "redeal"} if variant == "le_truc" else ({"put"} if variant == "put" else set())
    expect |= {"play slot"} if rules.eleven else set()
    assert expect <= seen, expect - seen


def test_batched_heuristic_plays_the_batched_engine():
    pytest.importorskip("numba")
    from truc_env.batch.vector import VectorEnv

    rules = make_rules("truco_paulista", players=2)
    venv = VectorEnv(rules, 256, episode="game", seed=0)
    obs, mask, _ = venv.reset(seed=0)
    players = BatchHeuristic(rules, "bluffer", seed=1)
    done = 0
    for _ in range(300):
        actions = players.act(obs, mask)
        assert mask[np.arange(len(actions)), actions].all()
        obs, mask, _, d, _ = venv.step(actions)
        done += int(d.sum())
    assert done > 50


def test_batched_heuristic_refuses_what_it_does_not_play():
    assert batch_supports(make_rules("le_truc")) is None
    with pytest.raises(TrucError, match="heads-up only"):
        BatchHeuristic(make_rules("truco_paulista", players=4))
    with pytest.raises(TrucError, match="envido and flor"):
        BatchHeuristic(make_rules("truco_argentino", players=2))
    with pytest.raises(TrucError, match="unknown heuristic style 'bold'; styles: honest, bluffer, cautious"):
        BatchHeuristic(make_rules("le_truc"), "bold")
