"""The uniform random agent."""

from __future__ import annotations

import numpy as np

from agents.base import legal_ids


class RandomAgent:
    """Uniform over the legal actions."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask) -> int:
        ids = legal_ids(action_mask)
        return int(ids[self.rng.integers(ids.size)])
