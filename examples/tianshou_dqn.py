"""Tianshou's DQN with action masking on one seat of Le Truc against a heuristic bot.

    pip install "truc-env[tianshou]"
    python examples/tianshou_dqn.py --epochs 5

Tianshou's DQN-family policies mask Q-values with ``batch.obs.mask`` and feed ``batch.obs.obs`` to the
network: :class:`truc_env.envs.gym_env.MaskedObservation` with ``keys="tianshou"`` gives exactly that.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from truc_env.envs.gym_env import MaskedObservation, SingleAgentEnv, evaluate


def make_env(variant: str, opponents, illegal: str = "penalize") -> MaskedObservation:
    return MaskedObservation(SingleAgentEnv(variant, opponents=opponents, episode="hand", illegal=illegal),
                             keys="tianshou")


def train(variant: str = "le_truc", epochs: int = 5, epoch_steps: int = 2000, opponents="heuristic:honest",
          seed: int = 0, num_envs: int = 4, buffer_size: int = 20_000) -> DQN:
    """Train a DQN for ``epochs`` x ``epoch_steps`` environment steps on one-hand episodes."""
    torch.manual_seed(seed)
    envs = DummyVectorEnv([lambda: make_env(variant, opponents) for _ in range(num_envs)])
    envs.seed(seed)
    probe = make_env(variant, opponents)
    obs_space, n_actions = probe.observation_space["obs"], probe.action_space.n
    net = Net(state_shape=obs_space.shape, action_shape=n_actions, hidden_sizes=(128, 128))
    policy = DiscreteQLearningPolicy(model=net, action_space=probe.action_space, observation_space=obs_space,
                                     eps_training=0.1, eps_inference=0.0)
    algorithm = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=200)
    collector = Collector(algorithm, envs, VectorReplayBuffer(buffer_size, num_envs), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=256, random=True)  # warm-up: random legal actions (the mask applies)
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=epochs, epoch_num_steps=epoch_steps,
        collection_step_num_env_steps=64, update_step_num_gradient_steps_per_sample=0.25, batch_size=64,
        test_in_training=False, verbose=False, show_progress=False))
    return algorithm


def policy_of(algorithm: DQN):
    """The greedy masked policy as ``(observation, action_mask) -> action``."""
    policy = algorithm.policy
    policy.eval()

    def act(observation, mask):
        batch = Batch(obs=Batch(obs=observation["obs"][None], mask=np.asarray(mask, bool)[None]), info=Batch())
        with torch.no_grad():
            return int(policy(batch).act[0])
    return act


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--opponents", default="heuristic:honest")
    p.add_argument("--episodes", type=int, default=500, help="evaluation hands")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    algorithm = train(a.variant, a.epochs, opponents=a.opponents, seed=a.seed)
    env = make_env(a.variant, a.opponents, illegal="raise")
    print(f"mean points per hand against {a.opponents}: "
          f"{evaluate(policy_of(algorithm), env, a.episodes, a.seed):+.3f}")


if __name__ == "__main__":
    main()
