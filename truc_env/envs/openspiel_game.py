"""OpenSpiel registration: ``import truc_env.envs.openspiel_game`` registers the game ``python_truc``.

    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "ranks": 4,
                                             "redeal": False})
    pyspiel.load_game("python_truc(variant=truco_paulista,players=2,deck=clean,ranks=4,episode=hand)")
    pyspiel.load_game("python_truc(variant=le_truc_4p,signals_mode=free,signals_vocab=4)")

Every option of every variant (``truc rules <variant>`` lists them) is a flat game parameter, in
the dict form and in the string form alike. OpenSpiel fills every parameter a caller leaves out
with its declared default, so a parameter's default here means "the variant's own default"
(``-1``, ``""``, or the one value every variant shares); a parameter of an option the variant does
not have must stay at that default (else ``RulesError`` names the variant's options). An unknown
parameter is refused by OpenSpiel, listing the known ones. OpenSpiel types parameters strictly:
``true``/``false`` are booleans, ``4`` an int, ``0.5`` a float.

| parameter | type, default | meaning |
|---|---|---|
| `variant` | str, `"le_truc"` | any variant of `truc_env.VARIANTS` |
| `episode` | str, `"game"` | `"game"` (to the target) or `"hand"` (one hand, for solvers) |
| `score` | str, `""` | starting score per side, `"11:10"` (or `"11,10"` in the dict form); empty = zeros |
| `dealer` | int, `-1` | first dealer seat; -1 = the variant's `first_dealer` option |
| `players` | int, `-1` | number of players (`truco_*`: 2 or 4; `put_n`: 3 to 6; other variants accept only their own count) |
| `ranks`, `hand_size`, `max_raises` | int, `-1` | research options (-1 = off): keep the k highest ranks, cards per hand, raises allowed |
| `target` | int, `-1` | points to win the game |
| `first_dealer` | str, `""` | `"random"` (a chance event) or a seat (`"1"`; in the string form use `dealer=1`) |
| `ranking`, `ladder`, `all_tied`, `deck` | str, `""` | as `truc rules <variant>` lists them |
| `fold` | str, `""` | `"yes"` or `"no"` (the variants disagree on its default, so it cannot be a boolean) |
| `redeal`, `blind`, `instructions`, `envido`, `flor` | bool, the variants' shared default | as `truc rules <variant>` |
| `signals_mode`, `signals_timing` | str, `""` | partner signals: `none`/`free`/`card`/`senas`; `deal`/`every_trick` |
| `signals_vocab` | int, `-1` | tokens in `free` mode |
| `signals_truthful` | bool, `true` | only true signals are legal |
| `signals_intercept` | float, `-1.0` | probability that an opponent sees a signal (write `1.0`, not `1`) |
| `signals_open_hands` | bool, `false` | the oracle bound: partners see each other's unplayed cards |
| `options` | str, `""` | the options in one string, kept for compatibility: a JSON object (`'{"signals": {"mode": "free"}}'`, dict form only) or the compact form `ranks:4;redeal:false;signals.mode:free`; an option given both here and as a parameter must agree |

The game's parameters (``game.get_parameters()``, ``str(game)``) are the resolved ones: every option
of the variant with its value (``ranks`` and ``hand_size`` as the sizes it deals, the first dealer as
``dealer=<seat>`` or ``first_dealer=random``), and nothing else: no option of another variant and no
empty placeholder (``max_raises`` appears only when it caps). So ``pyspiel.load_game(str(game))`` loads
the same game, and the settings survive wrappers that rebuild the game from its string (shimmy's
``OpenSpielCompatibilityV0``).

The state wraps `truc_env.game.engine.State`: chance is explicit (every card of the deal and the vira is
a chance outcome, by card id of the deck family; a signal interception is 0 unseen / 1 seen; a
random first dealer is a seat), actions are the integer layout of `truc_env.game.actions`, returns are
the engine's zero-sum points per seat since the start, and ``rewards()`` those won by the
last move (partners share their side's points;
``put_n``: own minus the mean). Observations come from `truc_env.game.observe`: the observation tensor
equals the PettingZoo observation, the information-state tensor appends the hand's decision
history, and the information-state string is perfect-recall over the whole episode.
"""

from __future__ import annotations

import json

import numpy as np
import pyspiel

from truc_env.display.render import render
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import CHANCE, TERMINAL, State
from truc_env.game.observe import encoder_of, info_state_string, observation_string
from truc_env.game.rules import SIGNAL_KEYS, VARIANTS, make_rules, option_specs

_BASE = {"variant": "le_truc", "options": "", "episode": "game", "score": "", "dealer": -1}
# signals_<key> for each key of the signals option, at its "the variant's default" placeholder
_SIGNALS = dict(zip(SIGNAL_KEYS, ("", -1, True, -1.0, "", False), strict=True))
_YES_NO = {"yes": True, "true": True, "no": False, "false": False}


def _option_kinds() -> dict[str, tuple[str, object]]:
    """Each option of any variant -> (kind, parameter default), derived from the variants' specs.

    kinds: ``int`` (-1 = the variant's default), ``str`` (""), ``bool`` (a default every variant
    shares), ``yes_no`` (a boolean whose default differs by variant: "" / "yes" / "no", since an
    OpenSpiel parameter cannot be unset), ``seat_or_str`` (ints and words: "", "random", "1").
    """
    kinds: dict[str, tuple[str, object]] = {}
    for variant in VARIANTS:
        for name, spec in option_specs(variant).items():
            if name == "signals":
                continue
            allowed = spec.allowed
            if allowed and allowed[0] == "int":
                kind = ("int", -1)
            elif all(isinstance(a, bool) for a in allowed):
                kind = ("bool", spec.default)
            elif all(isinstance(a, str) for a in allowed):
                kind = ("str", "")
            elif all(isinstance(a, int) for a in allowed):
                kind = ("int", -1)
            else:
                kind = ("seat_or_str", "")
            seen = kinds.setdefault(name, kind)
            if seen != kind:  # a boolean whose default differs between variants
                if kind[0] != "bool" or seen[0] not in ("bool", "yes_no"):
                    raise TypeError(f"option {name!r} has different types in different variants")
                kinds[name] = ("yes_no", "")
    return kinds


_OPTIONS = _option_kinds()
_DEFAULTS = {**_BASE, **{name: default for name, (_, default) in _OPTIONS.items()},
             **{f"signals_{key}": default for key, default in _SIGNALS.items()}}
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


def _flat_option(name: str, value):
    """The option value a flat parameter sets, or None when it is left at its default."""
    kind, default = _OPTIONS[name]
    if value == default:
        return None
    if kind == "yes_no":
        if value not in _YES_NO:
            raise TrucError(f"python_truc: {name}={value!r} is invalid; allowed: 'yes', 'no' (or '' for the "
                            "variant's default)")
        return _YES_NO[value]
    if kind == "seat_or_str" and value.lstrip("-").isdigit():
        return int(value)
    return value


def _flat_param(name: str, value, variant_default):
    """An option value as its flat parameter (the inverse of :func:`_flat_option`), or None if a game
    string cannot hold it: OpenSpiel would read a seat "1" back as an int."""
    kind, default = _OPTIONS[name]
    if value is None:
        return default
    if kind == "yes_no":
        return "yes" if value else "no"
    if kind == "seat_or_str" and isinstance(value, int):
        return "" if value == variant_default else None
    return value


def _merge(options: dict, key: str, value, where: str) -> None:
    if key in options and options[key] != value:
        raise TrucError(f"python_truc: {where} is given twice with different values ({options[key]!r} in "
                        f"options, {value!r} as a parameter); give it once")
    options[key] = value


def _parse_params(params: dict):
    variant = params.get("variant", _DEFAULTS["variant"])
    if variant not in VARIANTS:
        raise TrucError(f"python_truc: unknown variant {variant!r}; known variants: {', '.join(VARIANTS)}")
    options = parse_options(params.get("options", ""))
    for name in _OPTIONS:
        value = _flat_option(name, params.get(name, _DEFAULTS[name]))
        if value is not None:
            _merge(options, name, value, name)
    signals = {key: params.get(f"signals_{key}", default) for key, default in _SIGNALS.items()}
    signals = {key: value for key, value in signals.items() if value != _SIGNALS[key]}
    if signals:
        spec = option_specs(variant).get("signals")
        given = options.get("signals") or {}
        if isinstance(given, str):
            given = {"mode": given}
        base = {**(spec.default if spec is not None else {}), **given}
        for key, value in signals.items():
            _merge(given, key, value, f"signals {key}")
        options["signals"] = {**base, **given}
    if "players" in options and "players" not in option_specs(variant):
        # OpenSpiel callers name the player count of every game; a fixed count is accepted as such
        fixed = make_rules(variant).players
        if options["players"] != fixed:
            raise TrucError(f"python_truc: {variant} is played by {fixed} players, got players={options['players']}"
                            f"; variants with a players option: {', '.join(v for v in VARIANTS if 'players' in option_specs(v))}")
        del options["players"]
    rules = _without_restated_defaults(variant, options)
    episode = params.get("episode", "game")
    if episode not in ("game", "hand"):
        raise TrucError(f"python_truc: episode must be 'game' or 'hand', got {episode!r}")
    text = params.get("score", "") or ""
    try:
        score = [int(x) for x in text.replace(":", ",").split(",")] if text.strip() else None
    except ValueError:
        raise TrucError(f"python_truc: score must look like '3:7' (one integer per side), got {text!r}") from None
    dealer = params.get("dealer", -1)
    dealer = None if dealer < 0 else dealer
    State(rules, episode=episode, dealer=dealer, score=score)  # validates score and dealer
    specs = option_specs(variant)
    unflat = {}  # kept in the compact `options` form instead
    canonical = {"variant": variant, "episode": episode, "score": ":".join(map(str, score)) if score else "",
                 "dealer": params.get("dealer", -1)}
    for name, (_, default) in _OPTIONS.items():
        value = rules.options.get(name)
        flat = _flat_param(name, value, specs[name].default if name in specs else None)
        if flat is None:
            unflat[name], flat = value, default
        canonical[name] = flat
    canonical["options"] = format_options(unflat)
    canonical["players"] = rules.players  # a fact of every game, also of variants without the option
    resolved = rules.options.get("signals") or {}
    for key, default in _SIGNALS.items():
        canonical[f"signals_{key}"] = type(default)(resolved[key]) if key in resolved else default
    return rules, episode, score, dealer, _shown(rules, specs, canonical)


# the research options that take a size, shown as the size they resolve to
_SIZES = {"ranks": lambda r: len(r.ranking), "hand_size": lambda r: r.hand_size}


def _without_restated_defaults(variant: str, options: dict):
    """The rules of these options, where ``ranks`` / ``hand_size`` equal to what the variant deals
    anyway count as not given: a game string shows them resolved, and loading it must give the same Rules."""
    rules = make_rules(variant, **options)
    for name, size in _SIZES.items():
        if name in options:
            rest = {k: v for k, v in options.items() if k != name}
            alt = make_rules(variant, **rest)
            if size(alt) == size(rules) and alt.deck == rules.deck and alt.ranking == rules.ranking:
                options.pop(name)
                rules = alt
    return rules


def _shown(rules, specs: dict, canonical: dict) -> dict:
    """The game's parameters as ``str(game)`` shows them: the settings this variant has, resolved
    (the hand size and ranks it deals, the first dealer), none of another variant's and no empty
    placeholders (OpenSpiel fills those back in with their defaults when the string is loaded)."""
    shown = {}
    for name, value in canonical.items():
        if name in _OPTIONS and name not in specs and name != "players":  # players: a fact of every game
            continue  # an option of other variants: stays at its default
        if name.startswith("signals_") and "signals" not in specs:
            continue
        if name in _SIZES and value == -1:
            value = _SIZES[name](rules)
        if value == "" or (value == -1 and name != "dealer"):
            continue  # off (max_raises: no cap), or kept in the `options` string
        shown[name] = value
    if canonical["dealer"] < 0:  # the first dealer: a seat (dealer=), or first_dealer=random
        shown.pop("dealer")
        if rules.first_dealer == "random":
            shown["first_dealer"] = "random"
        elif "first_dealer:" not in canonical["options"]:
            shown["dealer"] = rules.first_dealer
    return shown


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

    def __reduce__(self):
        # pyspiel's own pickling restores the C++ game only; rebuild from the game string instead,
        # which holds every setting (wrappers such as shimmy's pickle the game they wrap)
        return pyspiel.load_game, (str(self),)

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
        e.s.apply_action(action)  # checked by the engine (truc_env.io.checks): no cast that could wrap
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
