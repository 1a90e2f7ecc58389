"""Gymnasium ``VectorEnv`` over the batched engine: one side learns, fixed opponents play the other.

    envs = TrucVectorEnv("le_truc", num_envs=256, opponents=None, seed=0)
    obs, info = envs.reset()
    obs, reward, terminated, truncated, info = envs.step(policy(obs, info["action_mask"]))

- Each of the ``num_envs`` games is a :class:`truc_env.batch.vector.VectorEnv` game (numba kernel where it
  exists). The learner controls every seat of side ``side`` (both partners in 2 vs 2: one shared
  policy, the observation is relative to the seat to act); the dealer is drawn at random each
  episode, so the learner plays both positions.
- ``opponents``: None (uniformly random legal actions, drawn inside the kernel), a batched policy
  ``f(obs (k, size), mask (k, A)) -> actions (k,)``, or an agent with ``act(obs, mask)`` (called
  row by row; slow).
- Observation: the float32 vector of the learner's seat to act (the layout of the PettingZoo env);
  the legal actions are ``info["action_mask"]`` (int8, (B, A)) and :meth:`action_masks` (bool).
- Reward: the learner side's reward (``reward="points"``: zero-sum hand points as hands end) summed
  over the opponents' moves until its next decision.
- Autoreset is ``SAME_STEP``: when ``terminated[b]``, ``obs[b]`` is already the first decision of the
  next episode. Episodes in which the learner never decides are skipped.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from truc_env.batch.vector import VectorEnv
from truc_env.errors import TrucError
from truc_env.io.checks import check_actions


class TrucVectorEnv(gymnasium.vector.VectorEnv):
    """B Truc games as a single-agent Gymnasium vector env against fixed opponents."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, variant: str = "le_truc", num_envs: int = 64, *, side: int = 0, opponents=None,
                 episode: str = "hand", reward: str = "points", seed: int | None = None,
                 backend: str = "auto", **options):
        self.venv = VectorEnv(variant, num_envs, episode=episode, reward=reward, dealer="random", seed=seed,
                              backend=backend, **options)
        r = self.venv.rules
        if side not in range(r.n_sides) or r.n_sides != 2:
            raise TrucError(f"side must be 0 or 1 in a two-sided game, got {side!r} ({r.variant})")
        if isinstance(opponents, str) or not (opponents is None or callable(opponents) or hasattr(opponents, "act")):
            raise TrucError(f"opponents={opponents!r} is invalid here; allowed: None, a batched policy "
                            "f(obs (k, size), mask (k, A)) -> actions (k,), or an agent with act(obs_row, mask_row). "
                            "Agent specs such as 'heuristic:honest' read engine states, which the batched engine "
                            "does not keep: use gymnasium.make_vec('truc/LeTruc-v0', num_envs=..., opponents=...)")
        self.side = side
        self.learner_seat = side  # seats of a side share its reward; seat `side` is one of them
        self.opponents = opponents
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(0.0, 1.0, (self.venv.obs_size,), np.float32)
        self.single_action_space = spaces.Discrete(self.venv.n_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._carry = np.zeros(num_envs, np.float32)
        self._mask = np.zeros((num_envs, self.venv.n_actions), np.int8)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, _, _ = self.venv.reset(seed=seed)
        self._carry[:] = 0.0
        reward = np.zeros(self.num_envs, np.float32)
        done = np.zeros(self.num_envs, np.bool_)
        obs = self._play_opponents(reward, done)
        return obs.copy(), {"action_mask": self._mask.copy()}

    def step(self, actions):
        actions = check_actions(actions, self.venv.n_actions, self.num_envs)  # before any cast: 2.7 is no 2
        reward = self._carry.copy()
        self._carry[:] = 0.0
        st = self.venv.step(actions)
        reward += st.reward[:, self.learner_seat]
        done = st.done.copy()
        obs = self._play_opponents(reward, done)
        return obs.copy(), reward, done, np.zeros(self.num_envs, np.bool_), {"action_mask": self._mask.copy()}

    def action_masks(self) -> np.ndarray:
        """Legal actions of every game's learner decision, as bool (sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    def _play_opponents(self, reward: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Step the opponents' decisions until the learner is to act in every game."""
        v = self.venv
        st = v.step(np.full(self.num_envs, -1, np.int32))  # observe without acting
        while True:
            theirs = (st.seat % 2) != self.side
            if not theirs.any():
                break
            actions = self._opponent_actions(st.obs, st.mask, theirs)
            st = v.step(actions)
            gained = st.reward[:, self.learner_seat]
            # what comes after an episode's end this step belongs to the next episode
            reward += np.where(done, 0.0, gained)
            self._carry += np.where(done, gained, 0.0)
            self._carry[done & st.done] = 0.0  # a next episode without a learner decision is skipped
            done |= st.done
        self._mask[:] = st.mask
        return st.obs

    def _opponent_actions(self, obs, mask, theirs) -> np.ndarray:
        out = np.full(self.num_envs, -1, np.int32)
        idx = np.flatnonzero(theirs)
        opp = self.opponents
        if opp is None:
            out[idx] = self.venv.random_actions(mask)[idx]
        elif hasattr(opp, "act"):
            for b in idx:
                out[b] = int(opp.act(obs[b], mask[b]))
        else:
            out[idx] = np.asarray(opp(obs[idx], mask[idx]), np.int32)
        return out
