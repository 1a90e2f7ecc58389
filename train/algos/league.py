"""The league of a self-play run: frozen snapshots of the learner and its win rate against each (PFSP)."""

from __future__ import annotations

import numpy as np
from torch import nn

from train.algos.ppo_config import PPOConfig


class League:
    """Frozen snapshots of the learner and the learner's win rate against each."""

    def __init__(self, cfg: PPOConfig):
        self.cfg = cfg
        self.snapshots: list[dict] = []  # {"update", "params", "win_rate", "games"}

    def add(self, update: int, net: nn.Module) -> None:
        params = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.snapshots.append({"update": update, "params": params, "win_rate": 0.5, "games": 0})
        if len(self.snapshots) > self.cfg.pool_size:
            self.snapshots.pop(0)

    def pick(self, rng: np.random.Generator) -> int:
        n = len(self.snapshots)
        if self.cfg.pool_scheme == "latest":
            return n - 1
        if self.cfg.pool_scheme == "uniform":
            return int(rng.integers(n))
        w = np.array([(1.0 - s["win_rate"]) ** self.cfg.pfsp_power + 1e-3 for s in self.snapshots])
        return int(rng.choice(n, p=w / w.sum()))

    def record(self, k: int, score: float) -> None:
        s = self.snapshots[k]
        s["games"] += 1
        s["win_rate"] += (score - s["win_rate"]) / min(s["games"], 100)  # running mean, then EMA

    def state_dict(self) -> list:
        return [dict(s) for s in self.snapshots]

    def load_state_dict(self, snaps: list) -> None:
        self.snapshots = [dict(s) for s in snaps]
