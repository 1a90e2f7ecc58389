"""The single-agent Gymnasium environment."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from truc_env import VARIANTS
from truc_env.errors import IllegalActionError, TrucError
from truc_env.gym_env import SingleAgentEnv


@pytest.mark.parametrize("variant", VARIANTS)
def test_check_env(variant):
    check_env(SingleAgentEnv(variant, seat=1, illegal="penalize", episode="hand"), skip_render_check=True)


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
    env = SingleAgentEnv("le_truc")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError):
        env.step(int(np.flatnonzero(env.action_masks() == 0)[0]))
