"""RLlib's PPO (new API stack) with action masking on one seat of Le Truc against a heuristic bot.

    pip install "truc-env[rllib]"
    python examples/rllib_ppo.py --iterations 20

RLlib's action-masking RLModule (``ActionMaskingTorchRLModule``, shipped with RLlib's examples) reads a
``Dict`` observation ``{"observations": ..., "action_mask": float32}`` and takes the log of the mask:
:class:`truc_env.envs.gym_env.MaskedObservation` (``keys="rllib"``) gives exactly that, with an all-ones mask
on an episode's final observation (where RLlib still computes values and logits).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from truc_env.envs.gym_env import MaskedObservation, SingleAgentEnv, evaluate

ENV_NAME = "truc_masked"


def make_env(config: dict) -> MaskedObservation:
    """RLlib's env creator: ``config`` holds SingleAgentEnv's arguments."""
    return MaskedObservation(SingleAgentEnv(**dict(config)), keys="rllib")


def train(variant: str = "le_truc", iterations: int = 20, opponents="heuristic:honest", seed: int = 0,
          batch: int = 1000, minibatch: int = 250):
    """Train PPO for ``iterations`` training iterations of ``batch`` steps; returns the RLlib Algorithm."""
    register_env(ENV_NAME, make_env)
    config = (
        PPOConfig()
        .environment(ENV_NAME, env_config={"variant": variant, "opponents": opponents, "episode": "hand"})
        .env_runners(num_env_runners=0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                               model_config={"head_fcnet_hiddens": [64, 64]}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=2, gamma=1.0)
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    for _ in range(iterations):
        algo.train()
    return algo


def policy_of(algo):
    """The greedy masked policy as ``(observation, action_mask) -> action``."""
    module = algo.get_module()

    def act(observation, mask):
        obs = {"observations": torch.as_tensor(observation["observations"])[None],
               "action_mask": torch.as_tensor(np.asarray(mask, np.float32))[None]}
        with torch.no_grad():
            logits = module.forward_inference({"obs": obs})["action_dist_inputs"][0]
        return int(torch.argmax(logits))
    return act


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--opponents", default="heuristic:honest")
    p.add_argument("--episodes", type=int, default=500, help="evaluation hands")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    algo = train(a.variant, a.iterations, a.opponents, a.seed)
    env = make_env({"variant": a.variant, "opponents": a.opponents, "episode": "hand", "illegal": "raise"})
    print(f"mean points per hand against {a.opponents}: {evaluate(policy_of(algo), env, a.episodes, a.seed):+.3f}")
    algo.stop()


if __name__ == "__main__":
    main()
