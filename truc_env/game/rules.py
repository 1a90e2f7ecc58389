"""Rules: a frozen, validated description of one variant and its options.

Variants differ by data, never by subclasses: each is one record of :mod:`truc_env.game.variants`, which
``make_rules`` reads with the options; the engine reads the resulting fields and nothing else. ``make_rules("truco_paulista", players=2, deck="clean")`` builds one;
unknown variants, options and values raise :class:`RulesError` listing what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from truc_env.errors import RulesError
from truc_env.game.cards import FAMILIES, DeckFamily
from truc_env.game.variants import MANILHA_SUITS, VARIANTS, OptionSpec, Variant, int_range, pick
from truc_env.io.checks import MAX_SEED, check_seed  # noqa: F401  (re-exported: their first home, kept for callers)

SIGNAL_MODES = ("none", "free", "card", "senas")
SIGNAL_TIMINGS = ("deal", "every_trick")
SIGNAL_KEYS = ("mode", "vocab", "truthful", "intercept", "timing", "open_hands")  # the signals option's keys, in its dict order


@dataclass(frozen=True)
class SignalRules:
    """The partner-signal channel (docs/rules.md §8)."""

    mode: str = "none"
    vocab: int = 8
    truthful: bool = True
    intercept: float = 0.0
    timing: str = "deal"
    open_hands: bool = False  # the oracle bound: partners see each other's unplayed cards
    governor_partners_only: bool = False  # Le Truc: only the governors' partners signal

    def as_dict(self) -> dict:
        # open_hands only where set: the Rules keys (and every cache and model keyed by them) stay as they were
        return {key: getattr(self, key) for key in SIGNAL_KEYS if key != "open_hands" or self.open_hands}


def _check_value(variant: str, name: str, spec: OptionSpec, value: Any) -> Any:
    allowed = spec.allowed
    if isinstance(allowed, tuple) and allowed and allowed[0] == "int":
        _, lo, hi = allowed
        if value is None and spec.default is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise RulesError(f"{variant}: option {name}={value!r} is invalid; expected an integer in {lo}..{hi}")
        return value
    if allowed == "signals":
        return value
    if value not in allowed or type(value) is not type(next(a for a in allowed if a == value)):
        raise RulesError(f"{variant}: option {name}={value!r} is invalid; allowed: {', '.join(map(repr, allowed))}")
    return value


COMMON = {
    "ranks": OptionSpec(None, int_range(1, 13), "keep only the k highest ranks of the base ranking (research)"),
    "hand_size": OptionSpec(None, int_range(1, 7), "cards per hand, 1-3 (research; put_n: up to players+1)"),
    "max_raises": OptionSpec(None, int_range(0, 20), "a raise/counter/mon reste/put is legal only while fewer were accepted"),
    "first_dealer": OptionSpec(0, (0, 1, 2, 3, 4, 5, "random"), "dealer of the first hand, or 'random' (a chance event)"),
}

@dataclass(frozen=True, eq=False)
class Rules:
    """Everything the engine needs to know about one variant with its options."""

    variant: str
    options: dict = field(repr=False)  # the effective options, defaults filled in
    players: int
    partnership: bool
    family: DeckFamily
    deck: tuple  # card ids of the deck, ascending
    ranking: tuple  # kept ranks, high -> low (named top cards aside)
    top_cards: tuple  # named top card ids, high -> low (Mineiro, Argentine)
    vira: bool
    hand_size: int
    ladder: tuple
    counter_raise: bool
    all_in: str | None  # "rest" (mon reste) or "put": the call that makes the hand decide the game
    fold: bool
    redeal: bool
    governors: bool  # Le Truc: governors answer calls and instruct their partners
    instructions: bool
    tie_rule: str  # equal non-zero trick counts: "earliest" won trick wins, or "nobody"
    all_tied: str  # "none" | "leader" | "dealer"
    target: int
    eleven: bool  # Brazilian special hands
    eleven_score: int
    eleven_value: int
    blind: bool
    envido: bool
    flor: bool
    signals: SignalRules
    first_dealer: Any
    max_raises: int | None
    put_pass: bool  # put_4p card pass
    put_n: bool

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, Rules) and self.key == other.key

    @cached_property
    def key(self) -> str:
        """A canonical string naming variant and options: identical Rules have identical keys."""
        import json

        return json.dumps({"variant": self.variant, "options": self.options}, sort_keys=True)

    @cached_property
    def n_sides(self) -> int:
        return 2 if (self.partnership or self.players == 2) else self.players

    def side(self, seat: int) -> int:
        return self.side_of[seat]

    @cached_property
    def side_of(self) -> tuple:
        """Side of each seat: seat % 2 with two sides, the seat itself in put_n."""
        return tuple(s % 2 if self.n_sides == 2 else s for s in range(self.players))

    @property
    def spec(self) -> Variant:
        """The declared record of this variant (looked up, not stored: Rules stay small to pickle)."""
        return VARIANTS[self.variant]

    def partner(self, seat: int) -> int:
        """The seat's partner (the other seat of its side), or -1 when it plays without one."""
        return self.partner_of[seat]

    @cached_property
    def partner_of(self) -> tuple:
        """Partner of each seat (-1: none); sides alternate round the table, so a partner sits opposite."""
        side = self.side_of
        mates = [[t for t in range(self.players) if t != s and side[t] == side[s]] for s in range(self.players)]
        return tuple(m[0] if len(m) == 1 else -1 for m in mates)

    def senas_of(self, card: int, vira: int = -1) -> tuple:
        """The seña tokens that truthfully describe a card, this hand's vira given (-1: none turned)."""
        senas = self.spec.senas
        if senas is None:
            return ()
        text = self.family.format(card)
        if senas.vira_manilhas:
            names = {}
            if vira >= 0:
                m = self.manilha_rank(vira)
                names = {m + s: t for s, t in zip(MANILHA_SUITS, senas.vira_manilhas)}
        else:
            names = senas.cards
        if text in names:
            return (names[text],)
        rank = self.family.rank_of(card)
        return (senas.ranks[rank],) if rank in senas.ranks else ()

    @cached_property
    def base_strength(self) -> tuple:
        """Strength of every card id of the family (higher beats lower; -1 = not in the deck)."""
        strength = [-1] * self.family.size
        n = len(self.ranking)
        for card in self.deck:
            rank = self.family.rank_of(card)
            strength[card] = n - self.ranking.index(rank) if rank in self.ranking else 0
        for i, card in enumerate(self.top_cards):
            strength[card] = n + len(self.top_cards) - i
        return tuple(strength)

    def strength_with_vira(self, vira: int) -> tuple:
        """Paulista: the rank above the vira's in the cycle becomes the four manilhas."""
        return _manilha_strength(self, vira)

    def manilha_rank(self, vira: int) -> str:
        cycle = self.ranking[::-1]
        return cycle[(cycle.index(self.family.rank_of(vira)) + 1) % len(cycle)]

    @cached_property
    def ladder_top(self) -> int:
        return len(self.ladder) - 1

    def describe(self) -> str:
        """A human summary: the variant and every option with its value and default."""
        lines = [self.spec.summary, "", f"{'option':<14}{'value':<16}{'default':<16}meaning"]
        for name, spec in option_specs(self.variant).items():
            value, default = _fmt(self.options.get(name)), _fmt(spec.default)
            if name == "signals":
                lines.append(f"{name:<14}{'':<32}{spec.doc}")
                lines.append(f"{'':<14}value:   {value}")
                lines.append(f"{'':<14}default: {default}")
                continue
            lines.append(f"{name:<14}{value:<16}{default:<16}{spec.doc}")
        return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, dict):
        return ",".join(f"{k}={x}" for k, x in v.items())
    return "-" if v is None else str(v)


_MANILHA_CACHE: dict = {}


def _manilha_strength(rules: Rules, vira: int) -> tuple:
    key = (rules.key, vira)
    hit = _MANILHA_CACHE.get(key)
    if hit is None:
        strength = list(rules.base_strength)
        manilha = rules.manilha_rank(vira)
        top = len(rules.ranking) + 1
        for i, suit in enumerate(MANILHA_SUITS):
            card = rules.family.card(manilha, suit)
            if strength[card] >= 0:
                strength[card] = top + 3 - i
        hit = _MANILHA_CACHE[key] = tuple(strength)
    return hit


def option_specs(variant: str) -> dict[str, OptionSpec]:
    """The options of a variant (its own and the common ones), with defaults and allowed values."""
    if not isinstance(variant, str):
        raise RulesError(f"the variant must be a string, got {type(variant).__name__} {variant!r:.60}; "
                         f"known variants: {', '.join(VARIANTS)}")
    if variant not in VARIANTS:
        raise RulesError(f"unknown variant {variant!r}; known variants: {', '.join(VARIANTS)}")
    return {**VARIANTS[variant].options, **COMMON}


def _signal_rules(spec: Variant, value: Any, partnership: bool) -> SignalRules:
    variant = spec.name
    if value is None:
        value = {"mode": "none"}
    if isinstance(value, str):
        value = {"mode": value}
    if not isinstance(value, dict):
        raise RulesError(f"{variant}: option signals must be a dict like {{'mode': 'free', 'vocab': 8}}, got {value!r}")
    allowed_keys = set(SIGNAL_KEYS)
    unknown = set(value) - allowed_keys
    if unknown:
        raise RulesError(f"{variant}: unknown signals key(s) {sorted(unknown)}; allowed: {sorted(allowed_keys)}")
    mode = value.get("mode", "none")
    if mode not in SIGNAL_MODES:
        raise RulesError(f"{variant}: signals mode {mode!r} is invalid; allowed: {', '.join(SIGNAL_MODES)}")
    if mode != "none" and not partnership:
        raise RulesError(f"{variant}: signals are only for partnership games (2 vs 2); this game has none")
    if mode == "senas" and spec.senas is None:
        with_senas = [v.name for v in VARIANTS.values() if v.senas is not None]
        raise RulesError(f"{variant}: signals mode 'senas' exists only for {', '.join(with_senas)}; {variant} "
                         f"allows: {', '.join(m for m in SIGNAL_MODES if m != 'senas')}")
    vocab = value.get("vocab", 8)
    if isinstance(vocab, bool) or not isinstance(vocab, int) or not 1 <= vocab <= 64:
        raise RulesError(f"{variant}: signals vocab={vocab!r} is invalid; expected an integer in 1..64")
    truthful = value.get("truthful", True)
    if not isinstance(truthful, bool):
        raise RulesError(f"{variant}: signals truthful={truthful!r} must be true or false")
    intercept = value.get("intercept", 0.0)
    if isinstance(intercept, bool) or not isinstance(intercept, (int, float)) or not 0.0 <= intercept <= 1.0:
        raise RulesError(f"{variant}: signals intercept={intercept!r} must be a probability in [0, 1]")
    timing = value.get("timing", "deal")
    if timing not in SIGNAL_TIMINGS:
        raise RulesError(f"{variant}: signals timing {timing!r} is invalid; allowed: {', '.join(SIGNAL_TIMINGS)}")
    open_hands = value.get("open_hands", False)
    if not isinstance(open_hands, bool):
        raise RulesError(f"{variant}: signals open_hands={open_hands!r} must be true or false")
    if open_hands and not partnership:
        raise RulesError(f"{variant}: signals open_hands shows a partner's hand; only partnership games (2 vs 2) have one")
    return SignalRules(mode, vocab, truthful, float(intercept), timing, open_hands,
                       governor_partners_only=spec.signal_governor_partners_only)


def make_rules(variant: str = "le_truc", **options) -> Rules:
    """Build validated Rules for a variant; see ``option_specs(variant)`` for the options."""
    specs = option_specs(variant)
    unknown = set(options) - set(specs)
    if unknown:
        raise RulesError(
            f"{variant}: unknown option(s) {', '.join(sorted(unknown))}; allowed: {', '.join(specs)}")
    opts = {name: spec.default for name, spec in specs.items()}
    for name, value in options.items():
        opts[name] = _check_value(variant, name, specs[name], value)

    spec = VARIANTS[variant]
    players = opts.get("players", spec.seats)
    partnership = players == 4 and spec.teams_at_four
    family = FAMILIES[spec.family]
    signals = _signal_rules(spec, opts.get("signals"), partnership)
    opts["signals"] = signals.as_dict() if "signals" in spec.options else None
    if opts["signals"] is None:
        del opts["signals"]
    if opts["first_dealer"] != "random" and opts["first_dealer"] >= players:
        raise RulesError(f"{variant}: first_dealer={opts['first_dealer']} but seats are 0..{players - 1}")

    ranking = pick(spec.ranking, opts)
    if opts["ranks"] is not None:
        if opts["ranks"] > len(ranking):
            raise RulesError(f"{variant}: ranks={opts['ranks']} but the base ranking has only {len(ranking)} ranks")
        ranking = ranking[: opts["ranks"]]
    top_cards = tuple(family.parse(c) for c in spec.top_cards)
    deck = {family.card(r, s) for r in ranking for s in family.suits} | set(top_cards)
    deck -= {family.parse(c) for c in pick(spec.removed, opts)}
    deck = tuple(sorted(deck))

    max_hand = players + 1 if spec.hand_size is None else spec.hand_size
    hand_size = opts["hand_size"] or max_hand
    if hand_size > max_hand:
        raise RulesError(f"{variant}: hand_size={hand_size} is invalid; allowed 1..{max_hand}")
    vira = spec.vira
    needed = players * hand_size + (1 if vira else 0)
    if needed > len(deck):
        raise RulesError(
            f"{variant}: the deck has {len(deck)} cards but the deal needs {needed} "
            f"({players} players x {hand_size} cards{' + the vira' if vira else ''}); keep more ranks")
    if opts.get("flor") and hand_size != 3:
        raise RulesError(f"{variant}: flor needs 3-card hands (hand_size={hand_size})")

    special = pick(spec.special_hands, opts)
    below, eleven_value = special or (1, 3)
    return Rules(
        variant=variant,
        options=opts,
        players=players,
        partnership=partnership,
        family=family,
        deck=deck,
        ranking=ranking,
        top_cards=top_cards,
        vira=vira,
        hand_size=hand_size,
        ladder=pick(spec.ladder, opts),
        counter_raise=spec.counter_raise,
        all_in=spec.all_in,
        fold=bool(opts.get("fold", False)),
        redeal=bool(opts.get("redeal", False)),
        governors=spec.governors,
        instructions=bool(opts.get("instructions", False)),
        tie_rule=spec.tie_rule,
        all_tied=opts.get("all_tied", "none"),
        target=opts["target"],
        eleven=special is not None,
        eleven_score=opts["target"] - below,
        eleven_value=eleven_value,
        blind=bool(opts.get("blind", False)),
        envido=bool(opts.get("envido", False)),
        flor=bool(opts.get("flor", False)),
        signals=signals,
        first_dealer=opts["first_dealer"],
        max_raises=opts["max_raises"],
        put_pass=spec.put_pass,
        put_n=spec.put_n,
    )


PRESETS = tuple(VARIANTS)
