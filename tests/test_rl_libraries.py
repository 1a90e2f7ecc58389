"""The RL-library examples in examples/, each trained on a tiny budget and then played with masks.

The evaluation env has ``illegal="raise"``: a policy that ignored the mask would raise. sb3-contrib,
Tianshou and TorchRL are in the ``test`` extra; RLlib (which pins an older gymnasium) is the ``rllib``
extra; each test is skipped when its library is absent.
"""

import runpy
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from truc_env.envs.gym_env import LIBRARY_KEYS, MaskedObservation, SingleAgentEnv, evaluate
from truc_env.errors import TrucError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def one_torch_thread():
    """Tiny batches on a shared CPU: a thread pool only adds contention (as tests/test_ppo.py does)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def example(name: str) -> dict:
    return runpy.run_path(str(EXAMPLES / name))


def hands_against_random(policy, wrap=lambda env: env, variant="le_truc", hands=20) -> float:
    """Mean points per hand of ``policy`` against random play, raising on any illegal action."""
    env = wrap(SingleAgentEnv(variant, opponents="random", episode="hand", illegal="raise"))
    return evaluate(policy, env, hands, seed=100)


@pytest.mark.parametrize("library", LIBRARY_KEYS)
def test_masked_observation_keys_and_terminal_mask(library):
    obs_key, mask_key, dtype = LIBRARY_KEYS[library]
    env = MaskedObservation(SingleAgentEnv("le_truc_4p", episode="hand"), keys=library)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert set(obs) == {obs_key, mask_key} and env.observation_space.contains(obs)
    assert obs[mask_key].dtype == dtype and np.array_equal(obs[mask_key].astype(bool), info["action_mask"] == 1)
    done = False
    while not done:
        obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.observation_space.contains(obs)
    assert obs[mask_key].all() and not info["action_mask"].any()  # all ones at the end; the env's info keeps zeros
    zeros = MaskedObservation(SingleAgentEnv("le_truc", episode="hand"), keys=("o", "m"), terminal_mask="zeros")
    obs, _ = zeros.reset(seed=0)
    assert obs["m"].dtype == np.int8
    obs, *_ = zeros.step(int(np.flatnonzero(obs["m"] == 0)[0]))  # illegal: penalized, episode over
    assert not obs["m"].any()


def test_masked_observation_refuses_bad_keys():
    with pytest.raises(TrucError, match="allowed: tianshou, rllib, torchrl"):
        MaskedObservation(SingleAgentEnv(), keys="keras")
    with pytest.raises(TrucError, match="two different key strings"):
        MaskedObservation(SingleAgentEnv(), keys=("obs", "obs"))
    with pytest.raises(TrucError, match="terminal_mask"):
        MaskedObservation(SingleAgentEnv(), terminal_mask="none")


def test_sb3_maskable_ppo(one_torch_thread):
    pytest.importorskip("sb3_contrib")
    ex = example("sb3_maskable_ppo.py")
    model = ex["train"](steps=128, n_steps=64, batch_size=32, opponents="heuristic:honest")
    assert model.num_timesteps >= 128
    assert abs(hands_against_random(ex["policy_of"](model))) <= 12


@pytest.mark.slow  # Tianshou numba-compiles its replay-buffer kernels on first use: ~60 s on 2 cores
def test_tianshou_dqn(one_torch_thread):
    pytest.importorskip("tianshou")
    ex = example("tianshou_dqn.py")
    algorithm = ex["train"](epochs=1, epoch_steps=128, num_envs=2, buffer_size=1000, opponents="random")
    wrap = lambda env: MaskedObservation(env, keys="tianshou")  # noqa: E731
    assert abs(hands_against_random(ex["policy_of"](algorithm), wrap)) <= 12


def test_torchrl_dqn(one_torch_thread):
    pytest.importorskip("torchrl")
    ex = example("torchrl_dqn.py")
    policy = ex["train"](frames=256, frames_per_batch=128, batch_size=64, opponents="random")
    wrap = lambda env: MaskedObservation(env, keys="torchrl")  # noqa: E731
    assert abs(hands_against_random(ex["policy_of"](policy), wrap)) <= 12


@pytest.mark.slow  # starts a local Ray: ~70 s on 2 cores
def test_rllib_ppo(one_torch_thread):
    pytest.importorskip("ray.rllib")
    ex = example("rllib_ppo.py")
    algo = ex["train"](iterations=1, batch=200, minibatch=100, opponents="random")
    try:
        wrap = lambda env: MaskedObservation(env, keys="rllib")  # noqa: E731
        assert abs(hands_against_random(ex["policy_of"](algo), wrap)) <= 12
    finally:
        algo.stop()
