"""PPO self-play agents: ``net:PATH`` loads a checkpoint written by ``truc train ppo``.

The agent samples from its masked policy (a mixed strategy is how a policy bluffs); ``greedy=True``
plays the most probable legal action instead.
"""

from __future__ import annotations

import json

import numpy as np
import torch

from agents.network.checkpoint import (
    FORMAT,
    POLICY_KEYS,
    VERSION,
    CheckpointError,
    check_rules,
    read_checkpoint,
    save_atomic,
)
from agents.network.network import FEATURES, PolicyNet, encode_observation, encode_state, feature_size
from truc_env.game.rules import make_rules

__all__ = ["PPOAgent", "PolicyNet", "load_agent", "load_policy", "read_checkpoint", "save_atomic",
           "CheckpointError", "FORMAT", "VERSION", "FEATURES", "encode_state", "feature_size"]


def rules_of_checkpoint(ck: dict):
    key = json.loads(ck["rules_key"])
    return make_rules(key["variant"], **key["options"])


_LOADED: dict = {}


def load_policy(path: str, rules=None) -> tuple[PolicyNet, dict]:
    """The network of a checkpoint (eval mode, CPU) and the checkpoint's metadata.

    Cached per file and modification time: the arena builds a fresh agent per game where one spec
    holds two seats, and agents only read the network.
    """
    import os

    key = (os.path.abspath(path), os.path.getmtime(path)) if os.path.exists(path) else None
    hit = _LOADED.get(key)
    if hit is not None:
        check_rules(hit[1], path, rules)
        return hit
    ck = read_checkpoint(path, rules)
    net_cfg = ck["net"]
    net = PolicyNet(net_cfg["obs_size"], net_cfg["n_actions"], net_cfg["hidden"], init=False)
    net.load_state_dict(ck["model"])
    net.eval()
    meta = {k: v for k, v in ck.items() if k in POLICY_KEYS and k != "model"}
    if key is not None:
        if len(_LOADED) > 8:
            _LOADED.clear()
        _LOADED[key] = (net, meta)
    return net, meta


class PPOAgent:
    """Plays a trained PPO policy: masked softmax over the legal actions."""

    def __init__(self, net: PolicyNet, rules, features: str = "observation", seed: int | None = None,
                 greedy: bool = False, name: str = "ppo"):
        if features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
        self.net, self.rules, self.features, self.greedy, self.name = net, rules, features, greedy, name
        # one decision at a time: torch's intra-op threads only add overhead, and on a busy machine
        # their synchronisation costs milliseconds per operation (measured: 11 ms vs 12 us per tanh)
        torch.set_num_threads(1)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observation, action_mask) -> np.ndarray:
        """The policy's distribution over all action ids (zero on illegal ones)."""
        x = torch.as_tensor(encode_observation(observation, self.features)).unsqueeze(0)
        mask = torch.as_tensor(np.asarray(action_mask, dtype=bool)).unsqueeze(0)
        if not mask.any():
            raise ValueError("the action mask has no legal action: an agent was asked to act where nobody may")
        with torch.no_grad():
            p = torch.softmax(self.net.masked_logits(x, mask), -1)[0].double().numpy()
        p[~mask[0].numpy()] = 0.0
        return p / p.sum()

    def act(self, observation, action_mask) -> int:
        p = self.probabilities(observation, action_mask)
        if self.greedy:
            return int(np.argmax(p))
        return int(self.rng.choice(p.size, p=p))


def load_agent(path: str, rules=None, seed: int | None = None, greedy: bool = False) -> PPOAgent:
    """The agent of a PPO checkpoint; refuses a checkpoint trained for other Rules than ``rules``."""
    net, ck = load_policy(path, rules)
    return PPOAgent(net, rules if rules is not None else rules_of_checkpoint(ck), ck["net"]["features"],
                    seed=seed, greedy=greedy, name=f"ppo:{path}")
