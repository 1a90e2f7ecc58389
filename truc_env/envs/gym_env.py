"""Single-agent Gymnasium environment: one seat learns, the other seats are played by given agents.

    env = SingleAgentEnv("le_truc", seat=0, opponents="heuristic:honest", episode="hand")
    env = gymnasium.make("truc/LeTruc-v0", opponents="heuristic:honest")   # the same, registered
    obs, info = env.reset(seed=0)
    action = my_policy(obs, info["action_mask"])        # or env.action_masks() (sb3-contrib)
    obs, reward, terminated, truncated, info = env.step(action)

- Observation: the flat ``Box(0, 1, (size,), float32)`` vector of the learning seat (the layout is
  in :mod:`truc_env.envs.pettingzoo_env`); the legal actions are ``info["action_mask"]`` (int8) and
  ``action_masks()`` (bool), the interface of sb3-contrib's ``MaskablePPO``. At the end of an
  episode the mask is all zeros.
- ``opponents``: one opponent for every other seat in seat order (partners included), or a single
  one used for all of them. An opponent is
  ``None`` (uniformly random legal play, seeded by ``reset(seed=...)``), an agent spec string
  (``"random"``, ``"heuristic:honest"``, ``"table:PATH"``, ``"net:PATH"``: built by ``agent_factory``,
  by default :func:`agents.make_agent`), an agent object with ``act(observation, legal_mask) -> int``
  (the project's agents; it is given a :class:`truc_env.game.observe.SeatObservation`, as in the arena), or
  a callable ``f(observation, legal_mask) -> int`` given the flat observation vector of its seat.
  Agents with ``reset(seed)`` are reset at every ``reset``.
- Reward: the learning seat's reward from :class:`truc_env.envs.pettingzoo_env.raw_env` (``reward``
  option), summed over the other seats' moves until its next decision.
- ``illegal="penalize"`` (default): an illegal action leaves the game as it was, ends the episode
  with reward -1 and sets ``info["illegal_action"] = True`` (the PettingZoo env's convention; it is
  what lets Gymnasium's and Stable-Baselines3's ``check_env``, which step random actions, and
  unmasked learners run). ``illegal="raise"`` raises :class:`truc_env.errors.IllegalActionError`
  naming the legal actions.
- An episode that ends before the learning seat's first decision (e.g. an opponent folds at once
  in a one-hand episode) is skipped: ``reset`` deals again until the learner has a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
import numpy as np

from truc_env.envs.pettingzoo_env import raw_env
from truc_env.errors import TrucError
from truc_env.game.observe import SeatObservation
from truc_env.io.checks import check_action, check_seed

AgentFactory = Callable[..., object]  # (spec, rules=..., seed=...) -> agent, as agents.make_agent


def default_agent_factory(spec: str, rules=None, seed: int | None = None):
    """Build an agent from its spec string with :func:`agents.make_agent`.

    Imported here, not at module level: ``truc_env`` sits below ``agents`` and must load without it.
    """
    try:
        from agents import make_agent
    except ImportError as e:
        raise TrucError(f"opponent spec {spec!r} needs the 'agents' package of truc-env ({e}); pass an agent "
                        "object, a callable (observation, legal_mask) -> action, or agent_factory=...") from None
    return make_agent(spec, rules=rules, seed=seed)


class SingleAgentEnv(gymnasium.Env):
    """One seat of a Truc game as a Gymnasium environment."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 1}
    render_viewer: int | None = None  # the seat render() shows the table to; None: every hand shown

    def __init__(self, variant: str = "le_truc", seat: int = 0,
                 opponents: Sequence | Callable | object | str | None = None, episode: str = "game",
                 reward: str = "points", illegal: str = "penalize", render_mode: str | None = None,
                 agent_factory: AgentFactory | None = None, **options):
        self.aec = raw_env(variant=variant, episode=episode, reward=reward, illegal=illegal,
                           render_mode=None, **options)
        n = self.aec.rules.players
        if isinstance(seat, bool) or not (isinstance(seat, int) and 0 <= seat < n):
            raise TrucError(f"seat must be in 0..{n - 1}, got {seat!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise TrucError(f"render_mode={render_mode!r} is invalid; allowed: None, "
                            + ", ".join(map(repr, self.metadata["render_modes"])))
        self.seat = seat
        self.agent = self.aec.possible_agents[seat]
        self.render_mode = render_mode
        others = [s for s in range(n) if s != seat]
        if opponents is None or isinstance(opponents, str) or callable(opponents) or hasattr(opponents, "act"):
            opponents = [opponents] * len(others)
        try:
            opponents = list(opponents)
        except TypeError:
            raise TrucError(f"opponents must be None, an agent spec string, an agent with act(), a callable, "
                            f"or a list of those; got {opponents!r}") from None
        if len(opponents) != len(others):
            raise TrucError(f"opponents must give one agent per other seat ({len(others)}: seats {others}), "
                            f"or a single agent for all; got {len(opponents)}")
        factory = agent_factory or default_agent_factory
        built: dict[str, object] = {}  # one agent per distinct spec string, shared by the seats it names
        self.opponents = {}
        for s, opp in zip(others, opponents):
            if isinstance(opp, str):
                if opp not in built:
                    built[opp] = factory(opp, rules=self.aec.rules, seed=None)
                opp = built[opp]
            elif opp is not None and not (hasattr(opp, "act") or callable(opp)):
                raise TrucError(f"opponent for seat {s} must be None, an agent spec string (random, "
                                f"heuristic:<style>, table:<path>, net:<path>), an agent with act(), or a callable "
                                f"(observation, legal_mask) -> action; got {opp!r}")
            self.opponents[s] = opp
        self.observation_space = self.aec.observation_space(self.agent)["observation"]
        self.action_space = self.aec.action_space(self.agent)
        self._mask = np.zeros(self.action_space.n, np.int8)
        self._opp_rng = np.random.default_rng()
        self._illegal = False

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = None if seed is None else check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            self._opp_rng = np.random.default_rng(seed + 1)
        for s, agent in self.opponents.items():
            if hasattr(agent, "reset"):  # a new game; seeded per seat so that a seeded reset replays
                agent.reset(None if seed is None else seed + 2 + s)
        self.aec.reset(seed=seed, options=options)
        for _ in range(1000):
            self._reward = 0.0
            self._play_others()
            if not self._done():
                break
            self.aec.reset(options=options)
        else:
            raise TrucError("no episode gave the learning seat a decision in 1000 deals")
        self._illegal = False
        obs, info = self._observe()
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        if self._done():
            raise TrucError("the episode is over: call reset()")
        action = check_action(action, self._mask.size)  # a type error, never an illegal move scored -1
        self._reward = 0.0
        self._illegal = not self._mask[action]
        self.aec.step(action)
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
        from truc_env.display.draw import TableWindow, draw_table
        from truc_env.display.render import render

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
        if hasattr(agent, "act"):  # the project's agent interface: a SeatObservation, as the arena gives
            return int(agent.act(SeatObservation(self.aec.state_, seat, mask.copy()), mask.copy()))
        return int(agent(observation, mask))

    def _observe(self):
        obs = self.aec.observe(self.agent)
        self._mask = obs["action_mask"] if not self._done() else np.zeros_like(obs["action_mask"])
        info = {"action_mask": self._mask.copy()}
        if self._illegal:
            info["illegal_action"] = True
        return obs["observation"], info


# Where RL libraries look for the observation and the legal-action mask in a dict observation,
# and the mask's dtype they compute with.
LIBRARY_KEYS = {
    "tianshou": ("obs", "mask", np.bool_),  # DQN-family policies read batch.obs.obs and batch.obs.mask
    "rllib": ("observations", "action_mask", np.float32),  # RLlib's action-masking RLModule takes log(mask)
    "torchrl": ("observation", "action_mask", np.bool_),  # torchrl's ActionMask, QValueModule, EGreedyModule
}


class MaskedObservation(gymnasium.ObservationWrapper):
    """The observation and the legal-action mask in one ``Dict`` observation, under a library's keys.

        env = MaskedObservation(SingleAgentEnv("le_truc"), keys="tianshou")   # {"obs": ..., "mask": ...}

    ``keys``: a library of :data:`LIBRARY_KEYS` (which also sets the mask's dtype) or an
    ``(observation_key, mask_key)`` pair (mask ``int8`` unless ``mask_dtype`` says otherwise). At the end
    of an episode nobody acts, but libraries still evaluate their masked policy on the final observation
    (value targets, exploration modules), where a mask with no legal action gives NaNs or errors:
    ``terminal_mask="ones"`` (default) gives an all-ones mask there, ``"zeros"`` keeps the env's zeros.
    """

    def __init__(self, env: gymnasium.Env, keys: str | tuple[str, str] = "torchrl", mask_dtype=None,
                 terminal_mask: str = "ones"):
        super().__init__(env)
        dtype = np.int8
        if isinstance(keys, str):
            if keys not in LIBRARY_KEYS:
                raise TrucError(f"keys={keys!r} is not a known library; allowed: {', '.join(LIBRARY_KEYS)}, "
                                "or an (observation_key, mask_key) pair")
            *keys, dtype = LIBRARY_KEYS[keys]
        if not (isinstance(keys, (tuple, list)) and len(keys) == 2 and all(isinstance(k, str) for k in keys)
                and keys[0] != keys[1]):
            raise TrucError(f"keys must be a library name or two different key strings, got {keys!r}")
        if terminal_mask not in ("ones", "zeros"):
            raise TrucError(f"terminal_mask={terminal_mask!r} is invalid; allowed: 'ones', 'zeros'")
        self.obs_key, self.mask_key = keys
        self.terminal_mask = terminal_mask
        self.mask_dtype = np.dtype(mask_dtype or dtype)
        n = env.action_space.n
        self.observation_space = gymnasium.spaces.Dict({
            self.obs_key: env.observation_space,
            self.mask_key: gymnasium.spaces.Box(0, 1, (n,), self.mask_dtype),
        })

    def observation(self, observation):
        mask = self.env.unwrapped.action_masks()
        if not mask.any() and self.terminal_mask == "ones":
            mask = np.ones_like(mask)
        return {self.obs_key: observation, self.mask_key: mask.astype(self.mask_dtype)}

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learning seat (bool), as :meth:`SingleAgentEnv.action_masks`."""
        return self.env.unwrapped.action_masks()


def registered_env(variant_of_id: str, variant: str | None = None, **kwargs) -> SingleAgentEnv:
    """What a registered id (``truc/LeTruc-v0``) builds: its own variant; a ``variant=`` naming another is refused."""
    if variant is not None and variant != variant_of_id:
        raise TrucError(f"variant={variant!r:.60} contradicts the registered id (variant {variant_of_id!r}); "
                        f"make that variant's own id (truc_env.GYM_IDS) or SingleAgentEnv(variant=...)")
    return SingleAgentEnv(variant_of_id, **kwargs)


registered_env.metadata = SingleAgentEnv.metadata  # gymnasium.make reads the render modes from the entry point


def evaluate(policy: Callable, env: gymnasium.Env, episodes: int, seed: int = 0) -> float:
    """Mean episode reward of ``policy(observation, action_mask) -> action`` over ``episodes`` episodes.

    ``env`` is a :class:`SingleAgentEnv`, possibly wrapped (the observation is then the wrapper's);
    the mask is the learning seat's legal actions as bool. Episode i is reset with ``seed + i``.
    """
    total = 0.0
    for i in range(episodes):
        observation, _ = env.reset(seed=seed + i)
        done = False
        while not done:
            action = policy(observation, env.unwrapped.action_masks())
            observation, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
    return total / episodes
