"""``greedy:<spec>``: an agent that always plays the most probable action of a policy (``net:`` or ``table:``).

A best response is deterministic, while a learned one (PPO's masked softmax) keeps some probability on its
worse actions. Played greedily it is still a policy of its own seat's information, so its value against a
frozen policy is still a lower bound on that policy's exploitability (``truc exploitability --approx
--br-play greedy``). Ties go to the lowest action id, so the agent has no randomness of its own.
"""

from __future__ import annotations

import numpy as np

from agents.base import policy_array


class GreedyAgent:
    """The argmax of ``inner``'s probabilities; :meth:`probabilities` says so (one-hot)."""

    def __init__(self, inner, name: str):
        if not (hasattr(inner, "probabilities") or hasattr(inner, "policy")):
            from agents import AgentSpecError

            raise AgentSpecError(f"{name!r}: greedy: needs an agent that gives its action probabilities "
                                 "(greedy:net:PATH or greedy:table:PATH)")
        self.inner, self.name = inner, name

    def reset(self, seed: int | None = None) -> None:
        if hasattr(self.inner, "reset"):
            self.inner.reset(seed)

    def _inner_probabilities(self, observation, action_mask) -> np.ndarray:
        if hasattr(self.inner, "probabilities"):
            return np.asarray(self.inner.probabilities(observation, action_mask), dtype=np.float64)
        return policy_array(self.inner.policy(observation, action_mask), len(action_mask))

    def probabilities(self, observation, action_mask) -> np.ndarray:
        """One-hot on the action :meth:`act` plays."""
        p = np.zeros(len(action_mask))
        p[self.act(observation, action_mask)] = 1.0
        return p

    def act(self, observation, action_mask) -> int:
        p = self._inner_probabilities(observation, action_mask)
        p = np.where(np.asarray(action_mask, dtype=bool), p, -1.0)  # never an illegal action, even at probability 0
        return int(np.argmax(p))
