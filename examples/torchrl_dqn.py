"""TorchRL's DQN with action masking on one seat of Le Truc against a heuristic bot.

    pip install "truc-env[torchrl]"
    python examples/torchrl_dqn.py --frames 20000

TorchRL masks with an ``"action_mask"`` entry next to ``"observation"``:
:class:`truc_env.envs.gym_env.MaskedObservation` (``keys="torchrl"``) provides both, with an all-ones mask
on the final observation of an episode (TorchRL's masked exploration and Q-value modules fail on a mask
with no legal action, and they do run on that observation).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tensordict import TensorDict
from tensordict.nn import TensorDictModule, TensorDictSequential
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.envs import GymWrapper
from torchrl.modules import MLP, EGreedyModule, QValueModule
from torchrl.objectives import DQNLoss, SoftUpdate

from truc_env.envs.gym_env import MaskedObservation, SingleAgentEnv, evaluate


def make_env(variant: str, opponents, illegal: str = "penalize") -> GymWrapper:
    gym_env = MaskedObservation(SingleAgentEnv(variant, opponents=opponents, episode="hand", illegal=illegal),
                                keys="torchrl")
    return GymWrapper(gym_env, categorical_action_encoding=True, device="cpu")


def q_network(env: GymWrapper) -> TensorDictSequential:
    """observation -> action values -> greedy legal action."""
    n_obs = env.observation_spec["observation"].shape[-1]
    n_actions = env.action_spec.space.n
    values = TensorDictModule(MLP(in_features=n_obs, out_features=n_actions, num_cells=[128, 128]),
                              in_keys=["observation"], out_keys=["action_value"])
    return TensorDictSequential(values, QValueModule(action_space="categorical", action_mask_key="action_mask",
                                                     spec=env.action_spec))


def train(variant: str = "le_truc", frames: int = 20_000, opponents="heuristic:honest", seed: int = 0,
          frames_per_batch: int = 256, batch_size: int = 128) -> TensorDictSequential:
    """Train a DQN for ``frames`` environment steps on one-hand episodes; returns the greedy policy."""
    torch.manual_seed(seed)
    env = make_env(variant, opponents)
    env.set_seed(seed)
    policy = q_network(env)
    explore = TensorDictSequential(policy, EGreedyModule(env.action_spec, eps_init=1.0, eps_end=0.05,
                                                         annealing_num_steps=max(1, frames // 2),
                                                         action_mask_key="action_mask"))
    collector = Collector(env, explore, frames_per_batch=frames_per_batch, total_frames=frames)
    buffer = ReplayBuffer(storage=LazyTensorStorage(50_000), batch_size=batch_size)
    loss = DQNLoss(policy, action_space=env.action_spec, delay_value=True)
    loss.make_value_estimator(gamma=1.0)
    target = SoftUpdate(loss, eps=0.99)
    optim = torch.optim.Adam(loss.parameters(), lr=1e-3)
    for batch in collector:
        buffer.extend(batch.reshape(-1))
        for _ in range(frames_per_batch // batch_size):
            sample = buffer.sample()
            optim.zero_grad()
            loss(sample)["loss"].backward()
            optim.step()
            target.step()
        explore[1].step(batch.numel())
    collector.shutdown()
    return policy


def policy_of(policy: TensorDictSequential):
    """The greedy masked policy as ``(observation, action_mask) -> action``."""
    def act(observation, mask):
        td = TensorDict({"observation": torch.as_tensor(observation["observation"]),
                         "action_mask": torch.as_tensor(np.asarray(mask, bool))})
        with torch.no_grad():
            return int(policy(td)["action"])
    return act


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--frames", type=int, default=20_000)
    p.add_argument("--opponents", default="heuristic:honest")
    p.add_argument("--episodes", type=int, default=500, help="evaluation hands")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    policy = train(a.variant, a.frames, a.opponents, a.seed)
    env = MaskedObservation(SingleAgentEnv(a.variant, opponents=a.opponents, episode="hand", illegal="raise"),
                            keys="torchrl")
    print(f"mean points per hand against {a.opponents}: {evaluate(policy_of(policy), env, a.episodes, a.seed):+.3f}")


if __name__ == "__main__":
    main()
