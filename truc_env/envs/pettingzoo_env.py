# noqa: D212, D415
"""
# Truc (PettingZoo AEC environment, `truc_v0`)

Every variant of the Truc family (docs/rules.md): `le_truc`, `le_truc_4p`, `put`, `put_4p`, `put_n`,
`truco_paulista`, `truco_mineiro`, `truco_argentino`, with all their options and the partner-signal
channel. A thin adapter over `truc_env.game.engine.State`: the rules live there, not here.

| Creation           | `truc_env.env(variant="le_truc", **options)`; `truc_env.raw_env(...)` for speed |
|--------------------|----------------------------------------------------------------------------|
| Agents             | `player_0 .. player_{n-1}` (seat i = `player_i`, seats in play order)       |
| Action space       | `Discrete(layout.size)`, fixed per Rules (`truc_env.game.actions.layout_of`)     |
| Observation space  | `Dict(observation=Box(0, 1, (size,), float32), action_mask=Box(0, 1, (A,), int8))` |
| Render modes       | `ansi` (text), `rgb_array` (HxWx3 uint8 picture), `human` (a window; text headless) |

## Arguments

```python
truc_env.env(variant="le_truc", episode="game", reward="points", illegal="raise",
             render_mode=None, dealer=None, score=None, **options)
```

- `variant`, `**options`: as `truc_env.make_rules` (e.g. `players=2`, `signals={"mode": "free"}`,
  `ranks=4, hand_size=2`); unknown options raise `RulesError` naming the allowed ones.
- `episode`: `"game"` (to the target score, the default) or `"hand"` (one hand).
- `reward`: `"points"` — when points are scored (a hand's at its end; Argentine envido and flor
  points when settled), every seat receives its side's zero-sum share of them (own minus
  opponents'; `put_n`: own minus the mean); partners receive the same reward.
  `"win"` — at the end of the episode, +1 to the winning side and -1 to the other (`put_n`: +1 to
  the winner, -1/(n-1) to each other seat; a hand episode that does not end the game: the side
  ahead in the episode's points wins, 0 on a draw).
- `illegal`: `"raise"` (default) raises `IllegalActionError` naming the legal actions; `"penalize"`
  ends the episode with -1 to the offender and 0 to everyone else (the classic-env convention).
- `dealer`, `score`: the first hand's dealer and the starting score per side; also accepted by
  `reset(options={"dealer": ..., "score": [...]})`.
- `render_mode`: `"ansi"` returns the table as text, `"rgb_array"` draws it as an (H, W, 3) uint8
  picture (`truc_env.display.draw`), `"human"` shows that picture in a window, or prints the text where no
  display exists. Every hand is shown unless `env.unwrapped.render_viewer` is set to a seat, which
  then sees only what that seat knows.

Chance (the shuffle, the first dealer, signal interception) is sampled with one
`numpy.random.Generator`, re-seeded by `reset(seed=...)`: `truc_env.game.episode.Dealer.shuffled`, one deck
order per hand dealt down (a redeal continues down the same deck), as the vector env deals.

## Observation

`observation` is built from the observing seat's information only (`truc_env.game.observe.Encoder`), with
seats relative to the observer: relative seat k is k places after it in play order (0 = self,
2 = partner), relative side 0 is its own side. Every entry is in [0, 1]. Sections appear in this
order; a section marked with a condition exists only in Rules that have it. `n` = players,
`D` = deck size, `h` = hand size, `L` = ladder length, `S` = number of sides.

| section | size | condition | meaning |
|---|---|---|---|
| `to_act` | n | | relative seat whose decision it is (zero at the end) |
| `decision` | 8 (9 with flor) | | pending decision kind: turn, answer, envido, signal, instruct, eleven, give, discard (, flor: the answer to a flor) |
| `hand` | D | | own unplayed cards (zero in a blind hand) |
| `slots` | h | | dealt slots still unplayed (blind play is by slot) |
| `first_hand` | D | redeal | own hand before an accepted redeal |
| `partner_hand` | D | Brazilian 2 vs 2 | partner's unplayed cards in a mão de onze, for the side at 11 |
| `given`, `discarded` | D, D | put_4p | card passed to me; my discard |
| `played` | h·n·D | | card played in trick t by relative seat k |
| `trick_winner` | h·(n+1) | | winner of each finished trick (relative seat; last column = tie) |
| `trick_leader` | h·n | | relative seat that led each trick begun |
| `active` | n | | relative seats still in the hand |
| `stake` | L | | ladder rung accepted |
| `raises` | L+2 or L+1 | | accepted raises (incl. mon reste / put), clipped |
| `last_raiser` | S+1 | | side of the last accepted raise (none, then relative side) |
| `all_in` | 2 | mon reste / put | called, accepted |
| `special` | 2 | Brazilian | mão de onze, mão de ferro |
| `call` | 3 | | pending call: raise, mon reste / put, redeal |
| `call_caller` | n | | relative seat of the pending call's caller |
| `call_level` | L | | ladder rung the pending raise asks for |
| `envido_calls` | 4·3 | envido | the envido chain (call i: envido, real envido, falta envido) |
| `envido_caller` | n | envido | relative seat of the last envido caller |
| `envido_done` | 1 | envido | envido settled this hand |
| `envido_winner` | n | envido | announced winner of the envido (relative seat) |
| `envido_points` | 34 | envido | announced winning points (one-hot) |
| `flor` | n | flor | relative seats that announced flor |
| `flor_winner` | n | flor | announced holder of the better flor, flor against flor accepted (relative seat) |
| `flor_points` | 19 | flor | announced better flor points, 20..38 (one-hot) |
| `vira`, `manilhas` | D, D | Paulista | the turned card; the four manilhas it makes |
| `score` | S | | score / target per relative side |
| `hand_points` | S | | points of this hand / target per relative side |
| `dealer` | n | | relative seat of the dealer |
| `governor` | n | le_truc_4p | relative seats of the two governors |
| `signals` | slots·(n+T+h+3) | signals | per signal made: present, sender, token (T = none + tokens), unseen, trick |
| `instruction` | I+1 | instructions | governor instruction in force (none given yet, then the tokens) |

Offsets for any Rules: `truc_env.game.observe.encoder_of(rules).table()`; named views of an observation:
`encoder_of(rules).pieces(obs["observation"])`. Example, `le_truc` defaults (325 entries):

| section | offset | size |
|---|---|---|
| `to_act` | 0 | 2 |
| `decision` | 2 | 8 |
| `hand` | 10 | 32 |
| `slots` | 42 | 3 |
| `first_hand` | 45 | 32 |
| `played` | 77 | 192 |
| `trick_winner` | 269 | 9 |
| `trick_leader` | 278 | 6 |
| `active` | 284 | 2 |
| `stake` | 286 | 7 |
| `raises` | 293 | 9 |
| `last_raiser` | 302 | 3 |
| `all_in` | 305 | 2 |
| `call` | 307 | 3 |
| `call_caller` | 310 | 2 |
| `call_level` | 312 | 7 |
| `score` | 319 | 2 |
| `hand_points` | 321 | 2 |
| `dealer` | 323 | 2 |

`action_mask` marks the legal actions of the agent to act (all zero for the others and at the end).

## Actions

Sections of `Discrete(A)` in order (`truc_env.game.actions.ActionLayout`; a section exists only where the
Rules have it); `env.unwrapped.action_to_string(a)` gives the docs/rules.md §9 text.

| section | size | action |
|---|---|---|
| `play` | D | play that card (deck order) |
| `slot` | h | play slot i blind (Brazilian iron hand) |
| `raise`, `accept`, `refuse`, `fold`, `rest`/`put`, `redeal` | 1 each | the calls and answers |
| `envido`, `real_envido`, `falta_envido`, `flor` | 1 each | Argentine envido and flor |
| `give`, `discard` | D, D | put_4p card pass and discard |
| `signal` | 1 + tokens | `signal none`, then the mode's tokens |
| `instruct` | 3 + ranks | `instruct none/high/low/<rank>` (le_truc_4p governor) |

Example, `le_truc`: 0-31 `play <card>` (7c 7d 7h 7s 8c ... Ah As), 32 raise, 33 accept,
34 refuse, 35 fold, 36 rest, 37 redeal.

## Rewards

See `reward` above: zero-sum per side, partners share their side's reward.

## Version history

* v0: initial release.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from truc_env.display.draw import TableWindow, draw_table
from truc_env.display.render import render
from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode, win_rewards  # noqa: F401  (win_rewards: re-exported)
from truc_env.game.observe import encoder_of
from truc_env.game.rules import make_rules
from truc_env.io.checks import check_action, check_seed

EPISODES = ("game", "hand")
REWARDS = ("points", "win")
ILLEGAL = ("raise", "penalize")


def env(**kwargs) -> AECEnv:
    """The AEC environment with PettingZoo's call-order wrapper.

    No AssertOutOfBoundsWrapper: ``step`` itself refuses an action outside the space with an
    IllegalActionError (an assert would be a bare AssertionError, and gone under ``python -O``).
    """
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):
    """The Truc AEC environment without wrappers (fast); see the module docstring."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "name": "truc_v0", "is_parallelizable": False,
                "render_fps": 1}
    render_viewer: int | None = None  # the seat render() shows the table to; None: every hand shown

    def __init__(self, variant: str = "le_truc", episode: str = "game", reward: str = "points",
                 illegal: str = "raise", render_mode: str | None = None, dealer: int | None = None,
                 score=None, **options):
        super().__init__()
        for name, value, allowed in (("episode", episode, EPISODES), ("reward", reward, REWARDS),
                                     ("illegal", illegal, ILLEGAL)):
            if value not in allowed:
                raise TrucError(f"{name}={value!r} is invalid; allowed: {', '.join(map(repr, allowed))}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise TrucError(f"render_mode={render_mode!r} is invalid; allowed: None, "
                            + ", ".join(map(repr, self.metadata["render_modes"])))
        self.rules = make_rules(variant, **options)
        self.encoder = encoder_of(self.rules)
        self.layout = self.encoder.L
        self.episode, self.reward_kind, self.illegal = episode, reward, illegal
        self.render_mode = render_mode
        self._window = None
        self._dealer, self._score = dealer, score
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        A = self.layout.size
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (self.encoder.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (A,), np.int8),
            }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self.state_: State | None = None
        self._masks: dict[tuple, np.ndarray] = {}  # legal actions -> their action mask (copied out)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(check_seed(seed))
        if options is not None and not isinstance(options, dict):
            raise TrucError(f"reset options must be a dict like {{'dealer': 0, 'score': [0, 0]}}, got {options!r:.60}")
        options = options or {}
        dealer = options.get("dealer", self._dealer)
        score = options.get("score", self._score)
        self.state_ = State(self.rules, episode=self.episode, dealer=dealer, score=score)
        self._episode = Episode(self.state_, Dealer.shuffled(self.rules, self._rng), self.reward_kind)
        self._episode.to_decision()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self.state_.current_player()]

    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        st = self.state_
        if st.current_player() == seat:
            legal = st.legal_tuple()
            mask = self._masks.get(legal)
            if mask is None:  # a legal set not seen yet: its mask, kept
                if len(self._masks) >= 4096:  # hands of a large deck make many sets: bound the memory
                    self._masks.clear()
                mask = self._masks[legal] = np.zeros(self.layout.size, np.int8)
                for a in legal:  # a few entries: each set alone costs less than put's conversion of the tuple
                    mask[a] = 1
            mask = mask.copy()  # the caller's own: it may write to it
        else:
            mask = np.zeros(self.layout.size, np.int8)
        return {"observation": self.encoder.encode(st, seat), "action_mask": mask}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        size = self.layout.size
        a = action if type(action) is int and 0 <= action < size else _action_index(action, agent, size)
        st = self.state_
        seat = self.agent_name_mapping[agent]
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        rewards = self.rewards
        if a not in st.legal_tuple():
            for a_ in rewards:
                rewards[a_] = 0.0
            if self.illegal == "raise":
                raise IllegalActionError(
                    f"{agent} (seat {seat}) cannot take action {a} "
                    f"({self._name(a)!r}) now; legal: "
                    + ", ".join(f"{x} {self.layout.to_string(x)}" for x in st.legal_actions()))
            rewards[agent] = -1.0
            self.terminations = dict.fromkeys(self.agents, True)
            for a_, rw in rewards.items():  # AECEnv._accumulate_rewards
                cumulative[a_] += rw
        else:
            episode = self._episode
            episode.play(a)
            seat = episode.to_decision()
            # every agent is live here: each one's reward set, and accumulated, in one pass
            for name, rw in zip(self.possible_agents, episode.rewards()):
                rewards[name] = rw
                cumulative[name] += rw
            if seat < 0:
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.agent_selection = self.possible_agents[seat]
        if self.terminations[agent]:  # the episode ends for every agent at once: else no agent is dead
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def render(self):
        """``ansi``: the table as text; ``rgb_array``: an (H, W, 3) uint8 picture; ``human``: a window
        (text on a machine without a display). Seen by ``render_viewer`` (None: every hand shown)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use one of "
                                  + ", ".join(map(repr, self.metadata["render_modes"])))
            return None
        if self.render_mode == "ansi":
            return render(self.state_, self.render_viewer)
        if self.render_mode == "rgb_array":
            return draw_table(self.state_, self.render_viewer)
        if self._window is None:
            self._window = TableWindow()
        self._window.show(self.state_, self.render_viewer, self.metadata["render_fps"])
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    # ------------------------------------------------------------------ helpers
    @property
    def game_state(self) -> State:
        """The engine state (read it, don't mutate it)."""
        return self.state_

    def action_to_string(self, action: int) -> str:
        return self.layout.to_string(int(action))

    def string_to_action(self, text: str) -> int:
        return self.layout.from_string(text)

    def _name(self, a: int) -> str:
        try:
            return self.layout.to_string(a)
        except TrucError:
            return f"outside 0..{self.layout.size - 1}"


def _action_index(action, agent: str, size: int) -> int:
    """An action as an int, checked before it indexes anything: int() would play 2 for 2.7 and 1 for "1"."""
    return check_action(action, size, f"{agent}: ")
