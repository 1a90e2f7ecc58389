"""Rules: a frozen, validated description of one variant and its options.

Variants differ by data (deck, ranking, ladder, flags), never by subclasses: the engine reads these
fields and nothing else. ``make_rules("truco_paulista", players=2, deck="clean")`` builds one;
unknown variants, options and values raise :class:`RulesError` listing what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .cards import FAMILIES, DeckFamily
from .errors import RulesError

# Base rankings, high -> low. Manilha cycles run over the reverse of the Brazilian ranking.
LE_TRUC_RANKING = ("7", "8", "A", "K", "Q", "J", "T", "9")
LE_TRUC_SEVEN_ACE = ("7", "A", "K", "Q", "J", "T", "9", "8")
PUT_RANKING = ("3", "2", "A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4")
BRAZIL_RANKING = ("3", "2", "A", "K", "J", "Q", "7", "6", "5", "4")
ARGENTINE_RANKING = ("3", "2", "1", "12", "11", "10", "7", "6", "5", "4")
# Named top cards, high -> low; they keep their place whatever `ranks` keeps.
MINEIRO_TOP = ("4c", "7h", "As", "7d")
ARGENTINE_TOP = ("1e", "1b", "7e", "7o")
# Cards whose ranks are otherwise equal but rank apart: (card, rank it ranks among).
MINEIRO_CLEAN_REMOVED = ("7c", "7s", "6c", "6d", "6h", "6s", "5c", "5d", "5h", "5s", "4h", "4s", "4d")
MANILHA_SUITS = ("c", "h", "s", "d")  # zap > copas > espadilha > ouros (pica-fumo)

LADDERS = {
    "le_truc": (1, 2, 4, 6, 8, 10, 12),
    "doubling": (1, 2, 4, 8, 16),
    "put": (1,),
    "truco": (1, 3, 6, 9, 12),
    "mineiro": (2, 4, 6, 10, 12),
    "argentino": (1, 2, 3, 4),
}

SENAS = {
    "truco_mineiro": ("zap", "copas", "espadilha", "picafumo", "three"),
    "truco_paulista": ("zap", "copas", "espadilha", "picafumo", "three"),
    "truco_argentino": ("1e", "1b", "7e", "7o", "three", "two", "ancho_falso"),
}

SIGNAL_MODES = ("none", "free", "card", "senas")
SIGNAL_TIMINGS = ("deal", "every_trick")


@dataclass(frozen=True)
class SignalRules:
    """The partner-signal channel (RULES.md §8)."""

    mode: str = "none"
    vocab: int = 8
    truthful: bool = True
    intercept: float = 0.0
    timing: str = "deal"
    governor_partners_only: bool = False  # Le Truc: only the governors' partners signal

    def as_dict(self) -> dict:
        return {"mode": self.mode, "vocab": self.vocab, "truthful": self.truthful,
                "intercept": self.intercept, "timing": self.timing}


@dataclass(frozen=True)
class OptionSpec:
    default: Any
    allowed: Any  # a tuple of values, or a (min, max) int range as ("int", lo, hi)
    doc: str


def _int_range(lo, hi):
    return ("int", lo, hi)


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
    "ranks": OptionSpec(None, _int_range(1, 13), "keep only the k highest ranks of the base ranking (research)"),
    "hand_size": OptionSpec(None, _int_range(1, 7), "cards per hand, 1-3 (research; put_n: up to players+1)"),
    "max_raises": OptionSpec(None, _int_range(0, 20), "a raise/counter/mon reste/put is legal only while fewer were accepted"),
    "first_dealer": OptionSpec(0, (0, 1, 2, 3, 4, 5, "random"), "dealer of the first hand, or 'random' (a chance event)"),
}

VARIANTS: dict[str, dict[str, OptionSpec]] = {
    "le_truc": {
        "ranking": OptionSpec("standard", ("standard", "seven_ace"), "standard 7>8>A>K>Q>J>10>9; seven_ace 7>A>...>9>8"),
        "redeal": OptionSpec(True, (True, False), "non-dealer may propose one redeal before any card"),
        "ladder": OptionSpec("standard", ("standard", "doubling"), "standard 1,2,4,6,8,10,12; doubling 1,2,4,8,16"),
        "all_tied": OptionSpec("none", ("none", "leader"), "all tricks tied: nobody scores, or the side that led trick 1"),
        "fold": OptionSpec(True, (True, False), "a player may fold at his turn"),
        "target": OptionSpec(12, _int_range(1, 1000), "points to win the game"),
    },
    "le_truc_4p": {
        "ranking": OptionSpec("standard", ("standard", "seven_ace"), "as le_truc"),
        "redeal": OptionSpec(True, (True, False), "the non-dealing governor may propose one redeal"),
        "ladder": OptionSpec("standard", ("standard", "doubling"), "as le_truc"),
        "all_tied": OptionSpec("leader", ("leader", "none"), "all tricks tied: the side that led trick 1 wins"),
        "fold": OptionSpec(False, (True, False), "fold (not in the seed; off by default)"),
        "target": OptionSpec(12, _int_range(1, 1000), "points to win the game"),
        "signals": OptionSpec({"mode": "card", "truthful": True, "intercept": 0.0, "timing": "deal"}, "signals",
                              "partner signals of the governors' partners (RULES.md §8)"),
        "instructions": OptionSpec(True, (True, False), "governors instruct their partner's play"),
    },
    "put": {
        "all_tied": OptionSpec("none", ("none", "leader"), "three ties: nobody scores"),
        "fold": OptionSpec(True, (True, False), "a player may throw in at his turn"),
        "target": OptionSpec(5, _int_range(1, 1000), "points to win the game"),
    },
    "put_4p": {
        "all_tied": OptionSpec("none", ("none", "leader"), "three ties: nobody scores"),
        "fold": OptionSpec(True, (True, False), "a receiver may throw in at his turn"),
        "target": OptionSpec(5, _int_range(1, 1000), "points to win the game"),
    },
    "put_n": {
        "players": OptionSpec(4, (3, 4, 5, 6), "number of independent players"),
        "target": OptionSpec(5, _int_range(1, 1000), "points to win the game"),
    },
    "truco_paulista": {
        "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
        "deck": OptionSpec("dirty", ("dirty", "clean"), "dirty 40 cards; clean 24 (A 2 3 J Q K)"),
        "all_tied": OptionSpec("dealer", ("dealer", "none", "leader"), "all three tied: the dealing side wins"),
        "blind": OptionSpec(True, (True, False), "the iron hand (both at 11) is played blind"),
        "fold": OptionSpec(False, (True, False), "a player may fold at his turn"),
        "target": OptionSpec(12, _int_range(1, 1000), "points to win the game"),
        "signals": OptionSpec({"mode": "none"}, "signals", "partner-signal channel (RULES.md §8)"),
    },
    "truco_mineiro": {
        "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
        "deck": OptionSpec("dirty", ("dirty", "clean"), "dirty 40 cards; clean 27"),
        "ladder": OptionSpec("standard", ("standard", "mineiro"), "standard 1,3,6,9,12; mineiro 2,4,6,10,12 (special hand at 10)"),
        "all_tied": OptionSpec("none", ("none", "dealer", "leader"), "all three tied: nobody scores"),
        "blind": OptionSpec(True, (True, False), "the iron hand is played blind"),
        "fold": OptionSpec(False, (True, False), "a player may fold at his turn"),
        "target": OptionSpec(12, _int_range(1, 1000), "points to win the game"),
        "signals": OptionSpec({"mode": "none"}, "signals", "partner-signal channel (RULES.md §8)"),
    },
    "truco_argentino": {
        "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
        "envido": OptionSpec(True, (True, False), "envido calls in the first trick"),
        "flor": OptionSpec(False, (True, False), "flor: three cards of one suit, compulsory, replaces envido; worth 3 (4 flor against flor)"),
        "all_tied": OptionSpec("leader", ("leader", "none", "dealer"), "all three parda: the mano's side wins"),
        "fold": OptionSpec(True, (True, False), "irse al mazo"),
        "target": OptionSpec(30, _int_range(1, 1000), "points to win the game (15 is common)"),
        "signals": OptionSpec({"mode": "none"}, "signals", "partner-signal channel (RULES.md §8)"),
    },
}

SUMMARIES = {
    "le_truc": "Le Truc, 2 players, 32 cards (7..A), 3 tricks; raises 1-2-4-6-8-10-12, mon reste, fold, one redeal; target 12.",
    "le_truc_4p": "Le Truc, 2 vs 2 with governors, partner signals and governor instructions; target 12.",
    "put": "Put, 2 players, 52 cards (3>2>A>...>4); 'trick and tie' scores nothing; the put call; target 5.",
    "put_4p": "Put, 2 vs 2: dealer and his right pass their highest card to partners, who discard one and play heads-up.",
    "put_n": "Put, 3-6 independent players, players+1 cards and tricks; put with resignations; target 5.",
    "truco_paulista": "Truco Paulista: vira and manilhas, ladder 1-3-6-9-12 with counter-raises, mão de onze/ferro; target 12.",
    "truco_mineiro": "Truco Mineiro: fixed manilhas 4c>7h>As>7d, ladder 1-3-6-9-12, mão de onze/ferro; target 12.",
    "truco_argentino": "Argentine Truco: Spanish deck, ladder 1-2-3-4, envido (and flor option), irse al mazo; target 30.",
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
        lines = [SUMMARIES[self.variant], "", f"{'option':<14}{'value':<16}{'default':<16}meaning"]
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
    if variant not in VARIANTS:
        raise RulesError(f"unknown variant {variant!r}; known variants: {', '.join(VARIANTS)}")
    return {**VARIANTS[variant], **COMMON}


def _signal_rules(variant: str, value: Any, partnership: bool) -> SignalRules:
    if value is None:
        value = {"mode": "none"}
    if isinstance(value, str):
        value = {"mode": value}
    if not isinstance(value, dict):
        raise RulesError(f"{variant}: option signals must be a dict like {{'mode': 'free', 'vocab': 8}}, got {value!r}")
    allowed_keys = {"mode", "vocab", "truthful", "intercept", "timing"}
    unknown = set(value) - allowed_keys
    if unknown:
        raise RulesError(f"{variant}: unknown signals key(s) {sorted(unknown)}; allowed: {sorted(allowed_keys)}")
    mode = value.get("mode", "none")
    if mode not in SIGNAL_MODES:
        raise RulesError(f"{variant}: signals mode {mode!r} is invalid; allowed: {', '.join(SIGNAL_MODES)}")
    if mode != "none" and not partnership:
        raise RulesError(f"{variant}: signals are only for partnership games (2 vs 2); this game has none")
    if mode == "senas" and variant not in SENAS:
        raise RulesError(f"{variant}: signals mode 'senas' exists only for {', '.join(SENAS)}")
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
    return SignalRules(mode, vocab, truthful, float(intercept), timing, governor_partners_only=variant == "le_truc_4p")


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

    players = opts.get("players", 4 if variant in ("le_truc_4p", "put_4p") else 2)
    partnership = players == 4 and variant != "put_n"
    family = FAMILIES["spanish" if variant == "truco_argentino" else "french"]
    signals = _signal_rules(variant, opts.get("signals"), partnership and variant != "put_4p")
    if variant == "put_4p" and signals.mode != "none":
        raise RulesError("put_4p: signals are not part of Put")
    opts["signals"] = signals.as_dict() if "signals" in specs and "signals" in VARIANTS[variant] else None
    if opts["signals"] is None:
        del opts["signals"]
    if opts["first_dealer"] != "random" and opts["first_dealer"] >= players:
        raise RulesError(f"{variant}: first_dealer={opts['first_dealer']} but seats are 0..{players - 1}")

    top_names: tuple = ()
    if variant.startswith("le_truc"):
        ranking = LE_TRUC_SEVEN_ACE if opts["ranking"] == "seven_ace" else LE_TRUC_RANKING
    elif variant.startswith("put"):
        ranking = PUT_RANKING
    elif variant == "truco_argentino":
        ranking, top_names = ARGENTINE_RANKING, ARGENTINE_TOP
    else:
        ranking = BRAZIL_RANKING
        if variant == "truco_mineiro":
            top_names = MINEIRO_TOP
        if variant == "truco_paulista" and opts["deck"] == "clean":
            ranking = ranking[:6]
    if opts["ranks"] is not None:
        if opts["ranks"] > len(ranking):
            raise RulesError(f"{variant}: ranks={opts['ranks']} but the base ranking has only {len(ranking)} ranks")
        ranking = ranking[: opts["ranks"]]
    top_cards = tuple(family.parse(c) for c in top_names)
    deck = {family.card(r, s) for r in ranking for s in family.suits} | set(top_cards)
    if variant == "truco_mineiro" and opts["deck"] == "clean":
        deck -= {family.parse(c) for c in MINEIRO_CLEAN_REMOVED}
    deck = tuple(sorted(deck))

    hand_size = opts["hand_size"] or (players + 1 if variant == "put_n" else 3)
    max_hand = players + 1 if variant == "put_n" else 3
    if hand_size > max_hand:
        raise RulesError(f"{variant}: hand_size={hand_size} is invalid; allowed 1..{max_hand}")
    vira = variant == "truco_paulista"
    needed = players * hand_size + (1 if vira else 0)
    if needed > len(deck):
        raise RulesError(
            f"{variant}: the deck has {len(deck)} cards but the deal needs {needed} "
            f"({players} players x {hand_size} cards{' + the vira' if vira else ''}); keep more ranks")
    if opts.get("flor") and hand_size != 3:
        raise RulesError(f"{variant}: flor needs 3-card hands (hand_size={hand_size})")

    if variant.startswith("le_truc"):
        ladder = LADDERS["doubling" if opts["ladder"] == "doubling" else "le_truc"]
    elif variant.startswith("put"):
        ladder = LADDERS["put"]
    elif variant == "truco_argentino":
        ladder = LADDERS["argentino"]
    else:
        ladder = LADDERS["mineiro" if opts.get("ladder") == "mineiro" else "truco"]

    brazil = variant in ("truco_paulista", "truco_mineiro")
    mineiro_ladder = opts.get("ladder") == "mineiro"
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
        ladder=ladder,
        counter_raise=variant.startswith("truco"),
        all_in="rest" if variant.startswith("le_truc") else ("put" if variant.startswith("put") else None),
        fold=bool(opts.get("fold", False)),
        redeal=bool(opts.get("redeal", False)),
        governors=variant.startswith("le_truc"),
        instructions=bool(opts.get("instructions", False)),
        tie_rule="nobody" if variant.startswith("put") else "earliest",
        all_tied=opts.get("all_tied", "none"),
        target=opts["target"],
        eleven=brazil,
        eleven_score=(opts["target"] - 2) if mineiro_ladder else (opts["target"] - 1),
        eleven_value=4 if mineiro_ladder else 3,
        blind=bool(opts.get("blind", False)),
        envido=bool(opts.get("envido", False)),
        flor=bool(opts.get("flor", False)),
        signals=signals,
        first_dealer=opts["first_dealer"],
        max_raises=opts["max_raises"],
        put_pass=variant == "put_4p",
        put_n=variant == "put_n",
    )


PRESETS = tuple(VARIANTS)
