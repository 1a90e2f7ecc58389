"""The PettingZoo AEC environment: the API contract, seeding, rewards, illegal actions."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import truc_env
from truc_env import VARIANTS
from truc_env.envs.pettingzoo_env import raw_env
from truc_env.errors import IllegalActionError, RulesError, TrucError

# Every variant, and every option that changes the observation or action space.
SPACE_CONFIGS = [(v, {}) for v in VARIANTS] + [
    ("le_truc", {"redeal": False, "fold": False}),
    ("le_truc", {"ranks": 4, "hand_size": 2, "max_raises": 2}),
    ("le_truc_4p", {"signals": {"mode": "none"}, "instructions": False}),
    ("le_truc_4p", {"signals": {"mode": "free", "vocab": 3, "intercept": 0.5, "timing": "every_trick"}}),
    ("put_n", {"players": 3}),
    ("put_n", {"players": 6}),
    ("truco_paulista", {"players": 2, "deck": "clean"}),
    ("truco_paulista", {"blind": False, "fold": True}),
    ("truco_paulista", {"signals": {"mode": "senas", "intercept": 0.5}}),
    ("truco_mineiro", {"players": 2, "deck": "clean", "ladder": "mineiro"}),
    ("truco_mineiro", {"signals": {"mode": "card", "truthful": False}}),
    ("truco_argentino", {"players": 2, "envido": False}),
    ("truco_argentino", {"flor": True, "signals": {"mode": "senas", "timing": "every_trick"}}),
]


def ids(configs):
    return [f"{v}-{'-'.join(f'{k}={o[k]}' for k in o) or 'default'}" for v, o in configs]


@pytest.mark.parametrize("variant,options", SPACE_CONFIGS, ids=ids(SPACE_CONFIGS))
def test_api_and_seed(variant, options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(truc_env.env(variant=variant, **options), num_cycles=100)
        seed_test(lambda: truc_env.env(variant=variant, **options), num_cycles=100)


@pytest.mark.parametrize("kwargs", [{"episode": "hand"}, {"reward": "win"}, {"episode": "hand", "reward": "win"}])
def test_api_episode_and_reward_modes(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(truc_env.env(variant="truco_paulista", **kwargs), num_cycles=100)


def play(env, rng, max_steps=100000):
    """Random legal play to the end; returns the summed rewards per agent."""
    total = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, _ = env.last()
        total[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return total


@pytest.mark.parametrize("variant", VARIANTS)
def test_points_rewards_sum_to_the_game_result(variant):
    rng = np.random.default_rng(0)
    e = raw_env(variant=variant)
    e.reset(seed=5)
    st = e.game_state
    total = play(e, rng)
    assert st.is_terminal() and st.game_over
    assert [total[a] for a in e.possible_agents] == pytest.approx(st.returns())
    assert sum(total.values()) == pytest.approx(0.0)
    if st.rules.partnership:
        assert total["player_0"] == total["player_2"] and total["player_1"] == total["player_3"]


@pytest.mark.parametrize("variant", ["le_truc", "truco_paulista", "put_n"])
def test_win_reward_is_plus_minus_one(variant):
    e = raw_env(variant=variant, reward="win")
    e.reset(seed=1)
    total = play(e, np.random.default_rng(1))
    winner_side = e.game_state.winner
    for seat, agent in enumerate(e.possible_agents):
        side = e.rules.side(seat)
        if side == winner_side:
            assert total[agent] == 1.0
        else:
            assert total[agent] == pytest.approx(-1.0 / (e.rules.n_sides - 1))


def test_hand_episode_ends_after_one_hand():
    e = raw_env(variant="le_truc", episode="hand", score=[5, 7], dealer=1)
    e.reset(seed=2)
    play(e, np.random.default_rng(2))
    assert e.game_state.hands_completed == 1 and e.game_state.dealer == 1


def test_illegal_action_raises_naming_the_legal_ones():
    e = truc_env.env(variant="le_truc")
    e.reset(seed=0)
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="legal:"):
        e.step(illegal)


def test_illegal_action_penalized_ends_the_game():
    e = raw_env(variant="le_truc_4p", illegal="penalize")
    e.reset(seed=0)
    agent = e.agent_selection
    obs = e.observe(agent)
    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(e.terminations.values())
    assert e._cumulative_rewards[agent] == -1.0
    assert sum(e._cumulative_rewards.values()) == -1.0


def test_bad_arguments_are_clear_errors():
    with pytest.raises(RulesError, match="allowed"):
        raw_env(variant="le_truc", colour="red")
    with pytest.raises(TrucError, match="episode"):
        raw_env(episode="match")
    with pytest.raises(TrucError, match="illegal"):
        raw_env(illegal="ignore")


def test_mask_only_for_the_agent_to_act_and_spaces_are_fixed():
    e = raw_env(variant="truco_argentino")
    e.reset(seed=3)
    for agent in e.possible_agents:
        obs = e.observe(agent)
        assert obs["action_mask"].dtype == np.int8 and obs["observation"].dtype == np.float32
        assert obs["action_mask"].any() == (agent == e.agent_selection)
        assert e.observation_space(agent) is e.observation_space(agent)
        assert e.observation_space(agent).contains(obs)
    assert e.metadata["name"] == "truc_v0"
    assert e.action_to_string(e.string_to_action("play 1e")) == "play 1e"


def test_render_modes():
    e = truc_env.env(variant="put", render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str) and "put" in text and "to act" in text


def test_importing_truc_env_does_not_import_pettingzoo():
    code = "import sys, truc_env; assert 'pettingzoo' not in sys.modules; truc_env.raw_env; assert 'pettingzoo' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_docstring_layout_example_matches_the_encoder():
    import re

    from truc_env import make_rules
    from truc_env.envs import pettingzoo_env
    from truc_env.game.observe import encoder_of

    enc = encoder_of(make_rules("le_truc"))
    doc = pettingzoo_env.__doc__
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| (\d+) \|$", doc, re.M)
    assert [(n, int(o), int(s)) for n, o, s in rows] == [(n, o, s) for n, o, s, _ in enc.table()]
    assert f"({enc.size} entries)" in doc


@pytest.mark.parametrize("seed", [-1, 2.5, True, "1"])
def test_reset_refuses_a_bad_seed_with_a_clear_error(seed):
    e = truc_env.env(variant="le_truc")
    with pytest.raises(TrucError, match="seed"):
        e.reset(seed=seed)
