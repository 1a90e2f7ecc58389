"""PettingZoo, OpenSpiel and the engine agree along the same random histories.

The PettingZoo env samples chance itself; its engine history is then replayed into an OpenSpiel
state action by action, and at every decision the observations, the legal actions and, at the
end, the returns must be the same.
"""

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import truc_env.envs.openspiel_game  # noqa: E402,F401
from truc_env import VARIANTS  # noqa: E402
from truc_env.envs.pettingzoo_env import raw_env  # noqa: E402

CONFIGS = [(v, {}) for v in VARIANTS] + [
    ("truco_paulista", {"signals": {"mode": "senas", "intercept": 0.5, "timing": "every_trick"}}),
    ("truco_argentino", {"flor": True, "players": 4, "signals": {"mode": "free", "vocab": 3}}),
]


@pytest.mark.parametrize("episode", ["hand", "game"])
@pytest.mark.parametrize("variant,options", CONFIGS)
def test_pettingzoo_and_openspiel_agree(variant, options, episode):
    rng = np.random.default_rng(11)
    env = raw_env(variant=variant, episode=episode, **options)
    game = pyspiel.load_game("python_truc", {"variant": variant, "episode": episode,
                                             "options": json.dumps(options)})
    for episode_seed in range(2 if episode == "hand" else 1):
        env.reset(seed=episode_seed)
        state = game.new_initial_state()
        engine = env.game_state
        total = dict.fromkeys(env.possible_agents, 0.0)
        synced = 0
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            total[agent] += reward
            for actor, action, _ in engine.history[synced:]:
                assert (actor == -1) == state.is_chance_node()
                state.apply_action(action)
            synced = len(engine.history)
            if term or trunc:
                assert state.is_terminal()
                env.step(None)
                continue
            seat = env.agent_name_mapping[agent]
            assert state.current_player() == seat
            assert np.flatnonzero(obs["action_mask"]).tolist() == state.legal_actions()
            assert np.array_equal(obs["action_mask"], np.array(state.legal_actions_mask(seat), np.int8))
            for s, other in enumerate(env.possible_agents):
                assert np.array_equal(env.observe(other)["observation"],
                                      np.array(state.observation_tensor(s), np.float32))
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
        assert [total[a] for a in env.possible_agents] == pytest.approx(state.returns())
        assert state.returns() == pytest.approx(engine.returns())
