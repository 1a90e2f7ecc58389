"""PPO's privileged critic (``critic: privileged``): what it reads, that it trains, and that the policy never sees it."""

import os

import numpy as np
import pytest
import torch
from test_ppo import _params, die_at_third_checkpoint, tiny_config

from agents.network import encode_state
from train.algos import ppo
from train.algos.privileged import hidden_of_hands, hidden_of_states
from truc_env import TrucError, make_rules
from truc_env.batch.vector import VectorEnv
from truc_env.game.engine import State, sample_chance
from truc_env.game.observe import encoder_of


@pytest.mark.parametrize("variant", ["le_truc", "le_truc_4p"])
def test_hidden_cards_are_each_other_seats_unplayed_cards_in_both_rollout_paths(variant):
    rules = make_rules(variant)
    n, deck = rules.players, len(rules.deck)
    hand = encoder_of(rules).piece("hand").slice
    rng = np.random.default_rng(0)
    checked = 0
    st = State(rules, episode="hand", dealer=1)
    while not st.is_terminal():  # engine tables: block k is what the k-th seat after the actor sees as its hand
        if st.is_chance_node():
            st.apply_action(sample_chance(st, rng))
            continue
        seat = st.current_player()
        got = hidden_of_states([(st, seat)], rules)[0]
        for k in range(1, n):
            assert np.array_equal(got[(k - 1) * deck:k * deck], encode_state(st, (seat + k) % n, "observation")[hand])
        checked += 1
        st.apply_action(int(rng.choice(st.legal_actions())))
    venv = VectorEnv(rules, 8, episode="hand", reward="points", dealer="random")
    venv.reset(seed=3)
    for _ in range(20):  # the batched engine: the actor is the k-th seat after (actor - k), so block k is its hand
        for k in range(1, n):
            got = hidden_of_hands(venv.hands, (venv._seat - k) % n, rules)[:, (k - 1) * deck:k * deck]
            assert np.array_equal(got, venv._obs[:, hand])
        venv.step(venv.random_actions())
        checked += 1
    assert checked > 22  # the engine hand (a few decisions) and 20 batched steps


def test_the_privileged_critic_trains_is_checkpointed_and_stays_out_of_the_policy(tmp_path):
    plain = ppo.train(tiny_config(tmp_path / "plain", deterministic=True))
    priv = ppo.train(tiny_config(tmp_path / "priv", deterministic=True, critic="privileged"))
    a, b = _params(plain["net"]), _params(priv["net"])
    assert set(a) == set(b) and any(not torch.equal(a[k], b[k]) for k in a)  # the advantages differ, so the steps do
    run = os.path.join(str(tmp_path / "priv"), "t")
    ck = torch.load(os.path.join(run, "checkpoint.pt"), weights_only=False)
    assert ck["privileged"] and all(r["privileged_value_loss"] > 0 for r in ck["history"])
    policy = torch.load(os.path.join(run, "policy.pt"), weights_only=False)
    assert not any("privileged" in str(k) for k in policy) and not any("privileged" in k for k in policy.get("model", {}))


def test_a_privileged_run_resumes_bit_identically(tmp_path, monkeypatch):
    full = ppo.train(tiny_config(tmp_path / "a", deterministic=True, critic="privileged"))
    revive = die_at_third_checkpoint(monkeypatch)
    cfg = tiny_config(tmp_path / "b", deterministic=True, critic="privileged")
    with pytest.raises(KeyboardInterrupt):
        ppo.train(cfg)
    revive()
    resumed = ppo.train(cfg, resume=True)
    a, b = _params(full["net"]), _params(resumed["net"])
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_the_privileged_critic_explains_more_of_the_return_than_the_observation_one(tmp_path):
    # the hidden cards decide much of a hand: over the second half of a short run the critic that reads them
    # fits the returns better than the policy's own critic, on the same transitions
    ppo.train(tiny_config(tmp_path, critic="privileged", total_steps=40 * 256, fixed_prob=0.0, fixed_opponents=[],
                          self_play_prob=1.0, reward_scale=0.25, learning_rate=3e-3))
    ck = torch.load(os.path.join(str(tmp_path), "t", "checkpoint.pt"), weights_only=False)
    late = ck["history"][20:]
    assert len(late) == 20
    assert np.mean([r["privileged_value_loss"] for r in late]) < 0.95 * np.mean([r["value_loss"] for r in late])


@pytest.mark.parametrize("kw, match", [
    (dict(critic="oracle"), "critic"),
    (dict(critic="privileged", other_play=True), "privileged does not go with other_play"),
])
def test_bad_critic_settings_are_refused_in_one_line(tmp_path, kw, match):
    with pytest.raises(TrucError, match=match) as e:
        ppo.start_run(tiny_config(tmp_path, **kw), resume=False)
    assert "\n" not in str(e.value)
