"""PPO's rollout buffer: learner transitions in the order they were taken, per-seat credit and GAE."""

from __future__ import annotations

import numpy as np


class Buffer:
    """Learner transitions in the order they were taken; ``nxt`` links a seat's successive steps.

    Observations and masks are kept as the 2-D blocks they arrive in (a row per table decision, a
    block per batched-engine group) and joined once, by :attr:`obs` / :attr:`mask`: stacking
    thousands of rows one by one cost more than the rest of the bookkeeping."""

    def __init__(self):
        self._obs, self._mask = [], []  # blocks of rows
        self._belief = []  # blocks of rows: the partner's cards at each transition (PPO's belief_coef only)
        self._hidden = []  # blocks of rows: every other seat's cards at each transition (critic: privileged only)
        self.action, self.logp, self.value = [], [], []
        self.reward, self.done, self.nxt = [], [], []

    def __len__(self) -> int:
        return len(self.action)

    @property
    def obs(self) -> np.ndarray:
        """(n, features) float32: every transition's network input, in order."""
        return self._joined(self._obs)

    @property
    def mask(self) -> np.ndarray:
        """(n, actions) bool: every transition's legal actions, in order."""
        return self._joined(self._mask)

    @property
    def belief(self) -> np.ndarray:
        """(n, deck) float32: the cards the partner held at each transition (``belief_coef`` runs only)."""
        return self._joined(self._belief)

    @property
    def hidden(self) -> np.ndarray:
        """(n, (players - 1) * deck) float32: each other seat's unplayed cards at each transition, by seat after
        the acting one (``critic: privileged`` runs only)."""
        return self._joined(self._hidden)

    @staticmethod
    def _joined(blocks: list) -> np.ndarray:
        if len(blocks) > 1:
            blocks[:] = [np.concatenate(blocks)]  # joined once, kept joined
        return blocks[0] if blocks else np.zeros((0, 0), np.float32)

    @classmethod
    def join(cls, parts: list) -> Buffer:
        """The buffers of a rollout's shards one after the other (:mod:`train.algos.rollout_shards`): each
        part's successor links shifted by the transitions before it (a part's links stay inside it: its
        episodes are complete)."""
        out = cls()
        for part in parts:
            o = len(out)
            if len(part):
                out._obs.append(part.obs)
                out._mask.append(part.mask)
                if part._belief:
                    out._belief.append(part.belief)
                if part._hidden:
                    out._hidden.append(part.hidden)
            out.action += part.action
            out.logp += part.logp
            out.value += part.value
            out.reward += part.reward
            out.done += part.done
            out.nxt += [j + o if j >= 0 else -1 for j in part.nxt]
        return out

    def own_arrays(self) -> None:
        """Observations and masks as one writable array each: joined before they are sent, copied where
        they were received read-only (Ray's object store hands out views of its memory)."""
        self._obs = [np.array(self.obs)] if self._obs else []
        self._mask = [np.array(self.mask)] if self._mask else []
        self._belief = [np.array(self.belief)] if self._belief else []
        self._hidden = [np.array(self.hidden)] if self._hidden else []

    def add(self, obs, mask, action, logp, value, belief=None, hidden=None) -> int:
        if belief is not None:
            self._belief.append(np.asarray(belief)[None])
        if hidden is not None:
            self._hidden.append(np.asarray(hidden)[None])
        self._obs.append(np.asarray(obs)[None])
        self._mask.append(np.asarray(mask)[None])
        self.action.append(action)
        self.logp.append(logp)
        self.value.append(value)
        self.reward.append(0.0)
        self.done.append(False)
        self.nxt.append(-1)
        return len(self.action) - 1

    def extend(self, obs, mask, action, logp, value, belief=None, hidden=None) -> int:
        """Add a batch of transitions (rows of fresh arrays, kept as they are); returns the index of the first."""
        j, k = len(self.action), len(action)
        if belief is not None:
            self._belief.append(belief)
        if hidden is not None:
            self._hidden.append(hidden)
        self._obs.append(obs)
        self._mask.append(mask)
        self.action.extend(action.tolist())
        self.logp.extend(logp.tolist())
        self.value.extend(value.tolist())
        self.reward.extend([0.0] * k)
        self.done.extend([False] * k)
        self.nxt.extend([-1] * k)
        return j

    def credit(self, pending, acc, nxt=None) -> None:
        """Close each seat's pending transition ``pending[i]`` (-1: none): it gets the reward ``acc[i]``
        accumulated since, and the link to its successor ``nxt[i]``; ``nxt`` None: the episode ended
        (``done``). The one credit rule of both rollout paths (engine tables and the batched engine)."""
        for i, (p, a) in enumerate(zip(pending, acc)):
            if p >= 0:
                self.reward[p] += a
                if nxt is None:
                    self.done[p] = True
                else:
                    self.nxt[p] = nxt[i]

    def advantages(self, gamma: float, lam: float, values=None) -> tuple[np.ndarray, np.ndarray]:
        """GAE along each seat's own trajectory (a successor always comes later in the buffer); ``values``:
        another critic's values of the transitions instead of the recorded ones."""
        n = len(self)
        # Python floats are float64, as numpy's were: the same values, without a numpy scalar per step
        values = [float(v) for v in (self.value if values is None else values)]
        adv = [0.0] * n
        reward, done, nxt = self.reward, self.done, self.nxt
        for i in range(n - 1, -1, -1):
            if done[i]:
                next_value = next_adv = 0.0
            else:
                j = nxt[i]
                assert j > i, "a transition without successor must be done: rollouts finish their episodes"
                next_value, next_adv = values[j], adv[j]
            delta = reward[i] + gamma * next_value - values[i]
            adv[i] = delta + gamma * lam * next_adv
        adv_a = np.array(adv)
        return adv_a, adv_a + np.array(values)
