"""The agent interface: ``act(observation, action_mask) -> int``, plus an optional ``reset``."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def act(self, observation, action_mask: np.ndarray) -> int:
        """Choose a legal action id given the seat's observation and the legal-action mask."""

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; ``seed`` makes a stochastic agent reproducible."""


def sample_policy(policy: dict, rng: np.random.Generator) -> int:
    """Draw an action from an {action: probability} policy."""
    actions = list(policy)
    probs = np.array([policy[a] for a in actions])
    return int(actions[int(rng.choice(len(actions), p=probs / probs.sum()))])


def policy_array(policy: dict, size: int) -> np.ndarray:
    """An {action: probability} policy as probabilities over all ``size`` action ids (0 elsewhere)."""
    p = np.zeros(size)
    for a, q in policy.items():
        p[a] = q
    return p


def legal_ids(action_mask) -> np.ndarray:
    ids = np.flatnonzero(np.asarray(action_mask))
    if ids.size == 0:
        raise ValueError("the action mask has no legal action: an agent was asked to act where nobody may")
    return ids
