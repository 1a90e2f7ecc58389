"""The single-agent Gymnasium environment."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import truc_env
from agents import AgentSpecError, make_agent
from truc_env import GYM_IDS, VARIANTS
from truc_env.envs.gym_env import SingleAgentEnv
from truc_env.errors import IllegalActionError, TrucError


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_env(variant):
    check_env(SingleAgentEnv(variant, seat=1, illegal="penalize", episode="hand"), skip_render_check=True)


@pytest.mark.parametrize("variant", VARIANTS)
def test_checkers_pass_with_default_arguments(variant):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    check_env(SingleAgentEnv(variant), skip_render_check=True)
    sb3_checker.check_env(SingleAgentEnv(variant), warn=False)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_is_registered_for_gymnasium_make(variant):
    env_id = GYM_IDS[variant]
    assert env_id in gymnasium.registry
    env = gymnasium.make(env_id, opponents="heuristic:honest", episode="hand")
    assert env.spec.id == env_id and env.unwrapped.aec.rules.variant == variant
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and info["action_mask"].any()
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_gymnasium_make_passes_options_and_names_the_module():
    env = gymnasium.make("truc_env:truc/TrucoPaulista-v0", players=2, deck="clean", seat=1)
    assert env.unwrapped.aec.rules.players == 2 and env.unwrapped.seat == 1
    assert GYM_IDS["le_truc_4p"] == "truc/LeTruc4p-v0" and GYM_IDS["put_n"] == "truc/PutN-v0"


def test_illegal_action_is_penalized_by_default_without_changing_the_game():
    env = SingleAgentEnv("le_truc", episode="hand")
    obs, info = env.reset(seed=3)
    before = env.aec.state_.clone()
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] and not info["action_mask"].any()
    assert env.aec.state_.history == before.history and env.aec.state_.score == before.score
    with pytest.raises(TrucError, match="call reset"):
        env.step(0)
    _, info = env.reset(seed=3)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "illegal_action" not in info


def test_random_game_rewards_add_up_to_the_result():
    env = SingleAgentEnv("truco_paulista", seat=2)
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    total, done = 0.0, False
    while not done:
        mask = env.action_masks()
        assert mask.dtype == bool and np.array_equal(mask, info["action_mask"].astype(bool))
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs) and not truncated
        total += reward
    assert total == env.aec.game_state.returns()[2]


class AlwaysFirst:
    def __init__(self):
        self.calls = 0

    def act(self, observation, legal_mask):
        self.calls += 1
        return int(np.flatnonzero(legal_mask)[0])


def test_opponents_agents_and_callables():
    agent = AlwaysFirst()
    seen = []

    def last_legal(observation, legal_mask):
        seen.append(observation.shape)
        return int(np.flatnonzero(legal_mask)[-1])

    env = SingleAgentEnv("le_truc_4p", seat=0, opponents=[agent, last_legal, agent], episode="hand")
    env.reset(seed=1)
    done = False
    while not done:
        _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert agent.calls > 0 and seen


def test_bad_opponents_and_illegal_actions():
    with pytest.raises(TrucError, match="one agent per other seat"):
        SingleAgentEnv("le_truc_4p", opponents=[None, None])
    with pytest.raises(TrucError, match="seat"):
        SingleAgentEnv("le_truc", seat=2)
    env = SingleAgentEnv("le_truc", illegal="raise")  # asked for explicitly: still raises
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal"):
        env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))


def play_out(env, seed):
    """Play an episode with the learner's first legal action; returns its rewards."""
    _, info = env.reset(seed=seed)
    rewards, done = [], False
    while not done:
        _, reward, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        rewards.append(reward)
    return rewards


@pytest.mark.parametrize("variant,opponents", [
    ("le_truc", "heuristic:honest"),
    ("le_truc", ["random"]),
    ("truco_argentino", ["heuristic:bluffer", "random", "heuristic:cautious"]),
    ("le_truc_4p", "heuristic:honest"),
])
def test_opponents_as_spec_strings(variant, opponents):
    env = SingleAgentEnv(variant, opponents=opponents, episode="hand")
    specs = [opponents] * (env.aec.rules.players - 1) if isinstance(opponents, str) else opponents
    assert [a.name for a in env.opponents.values()] == specs
    assert play_out(env, 5) == play_out(env, 5)  # a seeded reset replays the bots too


def test_opponents_as_agent_objects_see_the_seat_observation():
    agent = make_agent("heuristic:cautious", seed=0)
    env = SingleAgentEnv("truco_paulista", players=2, opponents=agent, episode="hand")
    assert env.opponents == {1: agent}
    for seed in range(3):
        play_out(env, seed)


def test_spec_strings_go_through_the_agent_factory():
    built = []

    def factory(spec, rules=None, seed=None):
        built.append((spec, rules.variant))
        return make_agent("random")

    env = SingleAgentEnv("put_n", players=3, opponents=["cfr:any.npz", "cfr:any.npz"], agent_factory=factory)
    assert built == [("cfr:any.npz", "put_n")]  # one agent per distinct spec
    play_out(env, 0)


def test_bad_opponent_specs_say_what_is_allowed():
    with pytest.raises(AgentSpecError, match="unknown agent spec"):
        SingleAgentEnv("le_truc", opponents="grandmaster")
    with pytest.raises(AgentSpecError, match="no such file"):
        SingleAgentEnv("le_truc", opponents="cfr:/nonexistent/strategy.npz")
    with pytest.raises(TrucError, match="agent spec string"):
        SingleAgentEnv("le_truc", opponents=[42])
    with pytest.raises(TrucError, match="or a list of those"):
        SingleAgentEnv("le_truc", opponents=42)


def test_importing_truc_env_registers_without_importing_the_env_modules():
    import subprocess
    import sys

    code = ("import sys, truc_env, gymnasium; assert 'truc/LeTruc-v0' in gymnasium.registry; "
            "assert 'truc_env.envs.gym_env' not in sys.modules and 'pettingzoo' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    assert truc_env.GYM_IDS["le_truc"] == "truc/LeTruc-v0"


def test_make_vec_runs_bots_and_the_batched_env_says_where_specs_go():
    from truc_env.envs.gym_vector import TrucVectorEnv

    envs = gymnasium.make_vec("truc/LeTruc-v0", num_envs=2, opponents="heuristic:honest", episode="hand")
    _, info = envs.reset(seed=0)
    for _ in range(10):  # an all-zero mask: the episode ended, and the next step only resets it (NEXT_STEP)
        actions = [int(np.flatnonzero(m)[0]) if m.any() else 0 for m in info["action_mask"]]
        _, _, _, _, info = envs.step(actions)
        assert not any(info.get("illegal_action", []))
    envs.close()
    with pytest.raises(TrucError, match="make_vec"):
        TrucVectorEnv("le_truc", num_envs=2, opponents="heuristic:honest")
