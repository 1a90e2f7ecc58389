"""OpenSpiel registration: ``import truc_env.openspiel_game`` registers the game ``python_truc``.

    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand",
                                             "options": '{"ranks": 4, "redeal": false}'})
    pyspiel.load_game("python_truc(variant=le_truc,episode=hand,options=ranks:4;redeal:false)")

Parameters (all strings or ints, as OpenSpiel requires):

| parameter | default | meaning |
|---|---|---|
| `variant` | `"le_truc"` | any variant of `truc_env.VARIANTS` |
| `options` | `""` | the variant's options: a JSON object (`'{"signals": {"mode": "free"}}'`) or the compact form `ranks:4;redeal:false;signals.mode:free` |
| `episode` | `"game"` | `"game"` (to the target) or `"hand"` (one hand, for solvers) |
| `score` | `""` | starting score per side, `"11,10"` or `"11:10"`; empty = zeros |

A game string cannot hold ',', '=' or parentheses inside a value, so the game stores its options
and score in the compact forms (what ``game.get_parameters()`` and ``str(game)`` show); both forms
load the same game.
| `dealer` | `-1` | first dealer; -1 = the variant's `first_dealer` option |

The state wraps `truc_env.engine.State`: chance is explicit (every card of the deal and the vira is
a chance outcome, by card id of the deck family; a signal interception is 0 unseen / 1 seen; a
random first dealer is a seat), actions are the integer layout of `truc_env.actions`, returns are
the engine's zero-sum points per seat since the start, and ``rewards()`` those won by the
last move (partners share their side's points;
``put_n``: own minus the mean). Observations come from `truc_env.observe`: the observation tensor
equals the PettingZoo observation, the information-state tensor appends the hand's decision
history, and the information-state string is perfect-recall over the whole episode.
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel

from .actions import layout_of
from .engine import CHANCE, TERMINAL, State
from .errors import TrucError
from .observe import encoder_of, info_state_string, observation_string
from .render import render
from .rules import make_rules

_DEFAULTS = {"variant": "le_truc", "options": "", "episode": "game", "score": "", "dealer": -1}
_MAX_HANDS = 1000  # a safe bound: a game of drawn hands could, in principle, run on

_GAME_TYPE = pyspiel.GameType(
    short_name="python_truc",
    long_name="Python Truc family (Le Truc, Put, Truco)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,  # points can come mid-episode
    max_num_players=6,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


def parse_options(text: str) -> dict:
    """Options from a JSON object or the compact form ``ranks:4;redeal:false;signals.mode:free``."""
    text = (text or "").strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            options = json.loads(text)
        except json.JSONDecodeError as e:
            raise TrucError(f"python_truc: options {text!r} is not a JSON object ({e})") from None
        if not isinstance(options, dict):
            raise TrucError(f"python_truc: options must be a JSON object, got {options!r}")
        return options
    options: dict = {}
    for item in text.split(";"):
        key, sep, raw = item.partition(":")
        if not sep or not key.strip():
            raise TrucError(f"python_truc: bad options item {item!r}; expected key:value items joined by ';' "
                            "(e.g. 'ranks:4;redeal:false;signals.mode:free') or a JSON object")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw.strip()
        *path, last = key.strip().split(".")
        node = options
        for p in path:
            node = node.setdefault(p, {})
        node[last] = value
    return options


def format_options(options: dict, prefix: str = "") -> str:
    """The compact form of options: no ',', '=' or parentheses, so it survives game strings."""
    items = []
    for key, value in options.items():
        if isinstance(value, dict):
            items.append(format_options(value, prefix + key + "."))
        else:
            items.append(f"{prefix}{key}:{json.dumps(value)}")
    return ";".join(i for i in items if i)


def _parse_params(params: dict):
    variant = params.get("variant", _DEFAULTS["variant"])
    options = parse_options(params.get("options", ""))
    rules = make_rules(variant, **options)
    episode = params.get("episode", "game")
    if episode not in ("game", "hand"):
        raise TrucError(f"python_truc: episode must be 'game' or 'hand', got {episode!r}")
    text = params.get("score", "") or ""
    try:
        score = [int(x) for x in text.replace(":", ",").split(",")] if text.strip() else None
    except ValueError:
        raise TrucError(f"python_truc: score must look like '3,7' (one integer per side), got {text!r}") from None
    dealer = params.get("dealer", -1)
    dealer = None if dealer < 0 else dealer
    State(rules, episode=episode, dealer=dealer, score=score)  # validates score and dealer
    canonical = {"variant": variant, "options": format_options(options), "episode": episode,
                 "score": ":".join(map(str, score)) if score else "", "dealer": params.get("dealer", -1)}
    return rules, episode, score, dealer, canonical


def max_hand_length(rules) -> int:
    """A safe bound on the moves of one hand, chance included (deals, vira, interceptions)."""
    enc = encoder_of(rules)
    draws = len(rules.deck)
    intercepts = enc.signal_slots * rules.players
    return draws + enc.history_len + intercepts


def max_points(rules) -> int:
    """A bound on the points one side can gain in an episode (a hand may overshoot the target)."""
    hand = max(rules.ladder[-1], rules.eleven_value, rules.target) + 3 * rules.players + 2 * rules.target
    return rules.target + hand


class TrucGame(pyspiel.Game):
    """The Truc family as a Python OpenSpiel game."""

    def __init__(self, params=None):
        params = {**_DEFAULTS, **(params or {})}
        self.rules, self.episode, self.start_score, self.first_dealer, params = _parse_params(params)
        self.layout = layout_of(self.rules)
        self.encoder = encoder_of(self.rules)
        r = self.rules
        bound = float(max_points(r))
        length = max_hand_length(r) * (1 if self.episode == "hand" else _MAX_HANDS)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.layout.size,
            max_chance_outcomes=max(r.family.size, r.players),
            num_players=r.players,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=length,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self):
        return TrucState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"python_truc observers take no parameters; got {params}")
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        if iig_obs_type is not None and (not iig_obs_type.public_info or
                                         iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER):
            raise ValueError("python_truc provides the player's own view only (public_info=True, "
                             "private_info=SINGLE_PLAYER), with or without perfect recall")
        return TrucObserver(self, perfect_recall)


class _Engine:
    """The engine state and the reward bookkeeping of one TrucState.

    pyspiel clones a Python state by deep-copying its ``__dict__``; this holder makes that copy an
    engine ``clone()`` (the rules are shared, not copied).
    """

    __slots__ = ("s", "last_returns", "rewards")

    def __init__(self, s: State, last_returns: list, rewards: list):
        self.s, self.last_returns, self.rewards = s, last_returns, rewards

    def __deepcopy__(self, memo):
        return _Engine(self.s.clone(), list(self.last_returns), list(self.rewards))


class TrucState(pyspiel.State):
    """An OpenSpiel state around one engine State (``state.s``)."""

    def __init__(self, game, engine_state: State | None = None):
        super().__init__(game)
        # Built lazily: pyspiel's clone() constructs a state and then replaces its __dict__.
        self._e = None if engine_state is None else self._wrap(engine_state)

    def _wrap(self, s: State) -> _Engine:
        return _Engine(s, s.returns(), [0.0] * s.rules.players)

    def _fresh(self) -> _Engine:
        game = self.get_game()
        self._e = self._wrap(State(game.rules, episode=game.episode, dealer=game.first_dealer,
                                   score=game.start_score))
        return self._e

    @property
    def s(self) -> State:
        return (self._e or self._fresh()).s

    def current_player(self):
        p = self.s.current_player()
        if p == CHANCE:
            return pyspiel.PlayerId.CHANCE
        if p == TERMINAL:
            return pyspiel.PlayerId.TERMINAL
        return p

    def _legal_actions(self, player):
        assert player >= 0
        return list(self.s.legal_actions())

    def chance_outcomes(self):
        assert self.s.is_chance_node()
        return self.s.chance_outcomes()

    def _apply_action(self, action):
        e = self._e or self._fresh()
        chance = e.s.is_chance_node()
        e.s.apply_action(int(action))
        if chance:  # chance never scores; keep the last decision's rewards until the next one
            return
        now = e.s.returns()
        e.rewards = [float(a - b) for a, b in zip(now, e.last_returns)]
        e.last_returns = now

    def _action_to_string(self, player, action):
        s = self.s
        if player == pyspiel.PlayerId.CHANCE:
            if s.phase == "intercept":
                return "seen" if action else "unseen"
            if s.phase == "dealer":
                return f"dealer {action}"
            return "deal " + s.rules.family.format(action)
        return s.action_to_string(action)

    def is_terminal(self):
        return self.s.is_terminal()

    def returns(self):
        return [float(x) for x in self.s.returns()]

    def rewards(self):
        """Points won by the last decision (a hand's end, or an envido mid-hand), zero-sum per seat.

        Chance moves score nothing and leave these unchanged, so that summing ``rewards()`` at the
        decision nodes (as ``rl_environment`` and ``random_sim_test`` do) gives ``returns()``.
        """
        return list((self._e or self._fresh()).rewards)

    def __str__(self):
        return render(self.s)


class TrucObserver:
    """PyObserver: the observation (or, with perfect recall, information-state) tensor and string."""

    def __init__(self, game: TrucGame, perfect_recall: bool):
        self.encoder = game.encoder
        self.perfect_recall = perfect_recall
        size = self.encoder.info_size if perfect_recall else self.encoder.size
        self.tensor = np.zeros(size, np.float32)
        self.dict = self.encoder.pieces(self.tensor)

    def set_from(self, state: TrucState, player: int):
        self.tensor[:] = self.encoder.encode(state.s, player, info_state=self.perfect_recall)

    def string_from(self, state: TrucState, player: int):
        if self.perfect_recall:
            return info_state_string(state.s, player)
        return observation_string(state.s, player)


pyspiel.register_game(_GAME_TYPE, TrucGame)
