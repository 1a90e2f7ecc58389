"""Single-agent Gymnasium environment: one seat learns, the other seats are played by given agents.

    env = SingleAgentEnv("le_truc", seat=0, opponents=[my_agent], episode="hand")
    obs, info = env.reset(seed=0)
    action = my_policy(obs, info["action_mask"])        # or env.action_masks() (sb3-contrib)
    obs, reward, terminated, truncated, info = env.step(action)

- Observation: the flat ``Box(0, 1, (size,), float32)`` vector of the learning seat (the layout is
  in :mod:`truc_env.pettingzoo_env`); the legal actions are ``info["action_mask"]`` (int8) and
  ``action_masks()`` (bool), the interface of sb3-contrib's ``MaskablePPO``.
- ``opponents``: one agent or callable for every other seat in seat order (partners included), or
  a single one used for all of them, or None for uniformly random legal play. An agent has
  ``act(observation, legal_mask) -> int``; a callable is called as ``f(observation, legal_mask)``.
- Reward: the learning seat's reward from :class:`truc_env.pettingzoo_env.raw_env` (``reward``
  option), summed over the other seats' moves until its next decision.
- ``illegal="raise"`` (default) raises on an illegal action; ``"penalize"`` ends the episode with -1
  (use it with checkers and learners that may sample illegal actions).
- An episode that ends before the learning seat's first decision (e.g. an opponent folds at once
  in a one-hand episode) is skipped: ``reset`` deals again until the learner has a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
import numpy as np

from .errors import TrucError
from .pettingzoo_env import raw_env


class SingleAgentEnv(gymnasium.Env):
    """One seat of a Truc game as a Gymnasium environment."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 1}
    render_viewer: int | None = None  # the seat render() shows the table to; None: every hand shown

    def __init__(self, variant: str = "le_truc", seat: int = 0,
                 opponents: Sequence | Callable | object | None = None, episode: str = "game",
                 reward: str = "points", illegal: str = "raise", render_mode: str | None = None, **options):
        self.aec = raw_env(variant=variant, episode=episode, reward=reward, illegal=illegal,
                           render_mode=None, **options)
        n = self.aec.rules.players
        if not (isinstance(seat, int) and 0 <= seat < n):
            raise TrucError(f"seat must be in 0..{n - 1}, got {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise TrucError(f"render_mode={render_mode!r} is invalid; allowed: None, "
                            + ", ".join(map(repr, self.metadata["render_modes"])))
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        self.render_mode = render_mode
        others = [s for s in range(n) if s != seat]
        if opponents is None or callable(opponents) or hasattr(opponents, "act"):
            opponents = [opponents] * len(others)
        opponents = list(opponents)
        if len(opponents) != len(others):
            raise TrucError(f"opponents must give one agent per other seat ({len(others)}: seats {others}), "
                            f"or a single agent for all; got {len(opponents)}")
        self.opponents = dict(zip(others, opponents))
        self.observation_space = self.aec.observation_space(self.agent)["observation"]
        self.action_space = self.aec.action_space(self.agent)
        self._mask = np.zeros(self.action_space.n, np.int8)
        self._opp_rng = np.random.default_rng()

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._opp_rng = np.random.default_rng(seed + 1)
        self.aec.reset(seed=seed, options=options)
        for _ in range(1000):
            self._reward = 0.0
            self._play_others()
            if not self._done():
                break
            self.aec.reset(options=options)
        else:
            raise TrucError("no episode gave the learning seat a decision in 1000 deals")
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        if self._done():
            raise TrucError("the episode is over: call reset()")
        self._reward = 0.0
        self.aec.step(int(action))
        self._collect()
        self._play_others()
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, float(self._reward), self._done(), False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learning seat as a bool array (sb3-contrib's MaskablePPO)."""
        return self._mask.astype(bool)

    def render(self):
        """``ansi``: the table as text; ``rgb_array``: an (H, W, 3) uint8 picture; ``human``: a window
        (text on a machine without a display). Seen by ``render_viewer`` (None: every hand shown)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use one of "
                                  + ", ".join(map(repr, self.metadata["render_modes"])))
            return None
        from .draw import TableWindow, draw_table
        from .render import render

        if self.render_mode == "ansi":
            return render(self.aec.state_, self.render_viewer)
        if self.render_mode == "rgb_array":
            return draw_table(self.aec.state_, self.render_viewer)
        if getattr(self, "_window", None) is None:
            self._window = TableWindow()
        self._window.show(self.aec.state_, self.render_viewer, self.metadata["render_fps"])
        return None

    def close(self) -> None:
        if getattr(self, "_window", None) is not None:
            self._window.close()
            self._window = None

    # ------------------------------------------------------------------ helpers
    def _done(self) -> bool:
        return self.aec.state_.is_terminal() or self.aec.terminations[self.agent]

    def _collect(self) -> None:
        self._reward += self.aec.rewards.get(self.agent, 0.0)

    def _play_others(self) -> None:
        aec = self.aec
        while not self._done() and aec.agent_selection != self.agent:
            seat = aec.agent_name_mapping[aec.agent_selection]
            obs = aec.observe(aec.agent_selection)
            aec.step(self._opponent_action(seat, obs["observation"], obs["action_mask"]))
            self._collect()

    def _opponent_action(self, seat: int, observation: np.ndarray, mask: np.ndarray) -> int:
        agent = self.opponents[seat]
        if agent is None:
            legal = np.flatnonzero(mask)
            return int(legal[self._opp_rng.integers(len(legal))])
        if hasattr(agent, "act"):
            return int(agent.act(observation, mask))
        return int(agent(observation, mask))

    def _observe(self):
        obs = self.aec.observe(self.agent)
        self._mask = obs["action_mask"] if not self._done() else np.zeros_like(obs["action_mask"])
        return obs["observation"], {"action_mask": self._mask.copy()}
