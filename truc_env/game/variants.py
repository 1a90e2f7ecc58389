"""The variants as declared data: one :class:`Variant` record per game, nothing else.

Every difference between the games is a field here: deck, ranking, top cards, ladders, counter-raise,
all-in call, special hands, the señas and their meaning, the option specs, whether the array kernel
runs it and the card classes of the partnership abstraction. Options that change a field are
:class:`ByOption` mappings (option value -> field value). :func:`truc_env.game.rules.make_rules` reads the
record; the engine, kernel, encoders and agents read the resulting ``Rules`` (and ``rules.spec``,
this record). No module compares a variant's name: that is what this one is for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Base rankings, high -> low. Manilha cycles run over the reverse of the Brazilian ranking.
LE_TRUC_RANKING = ("7", "8", "A", "K", "Q", "J", "T", "9")
LE_TRUC_SEVEN_ACE = ("7", "A", "K", "Q", "J", "T", "9", "8")
PUT_RANKING = ("3", "2", "A", "K", "Q", "J", "T", "9", "8", "7", "6", "5", "4")
BRAZIL_RANKING = ("3", "2", "A", "K", "J", "Q", "7", "6", "5", "4")
ARGENTINE_RANKING = ("3", "2", "1", "12", "11", "10", "7", "6", "5", "4")
# Named top cards, high -> low; they keep their place whatever `ranks` keeps.
MINEIRO_TOP = ("4c", "7h", "As", "7d")
ARGENTINE_TOP = ("1e", "1b", "7e", "7o")
# The clean Mineiro deck drops these cards (the top cards 4c and 7h stay).
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


@dataclass(frozen=True)
class OptionSpec:
    """One option of a variant: its default, what it allows, and a line saying what it means."""

    default: Any
    allowed: Any  # a tuple of values, or a (min, max) int range as ("int", lo, hi)
    doc: str


def int_range(lo: int, hi: int) -> tuple:
    """The ``allowed`` of an integer option in lo..hi."""
    return ("int", lo, hi)


@dataclass(frozen=True)
class ByOption:
    """A record field chosen by one option's value (``values[opts[option]]``)."""

    option: str
    values: dict

    def pick(self, opts: dict) -> Any:
        return self.values[opts[self.option]]


def pick(value: Any, opts: dict) -> Any:
    """A record field's value under these options (a :class:`ByOption` resolved, anything else as is)."""
    return value.pick(opts) if isinstance(value, ByOption) else value


@dataclass(frozen=True)
class Senas:
    """Señas, the partner signals that name a card: the tokens, and which cards each truthfully describes.

    A card is named by ``cards`` (card text -> token) or, with ``vira_manilhas``, by the manilha
    tokens of this hand's vira (suits clubs, hearts, spades, diamonds); a card not named so may be
    named by its rank (``ranks``).
    """

    tokens: tuple
    cards: dict = field(default_factory=dict)
    ranks: dict = field(default_factory=dict)
    vira_manilhas: tuple = ()  # manilha tokens by MANILHA_SUITS order when the manilhas follow the vira


@dataclass(frozen=True)
class CardClasses:
    """Card classes of the partnership abstraction: strength level (0 = strongest) -> class, and names."""

    groups: tuple
    names: tuple


@dataclass(frozen=True)
class Variant:
    """One game of the family, as data; see the module docstring."""

    name: str
    summary: str
    options: dict  # option name -> OptionSpec (the common options are added by rules.option_specs)
    family: str  # deck family: "french" | "spanish"
    ranking: Any  # base ranking high -> low, or a ByOption of rankings
    ladder: Any  # stake ladder, or a ByOption of ladders
    seats: int = 2  # seats when the variant has no ``players`` option
    teams_at_four: bool = True  # four players play two sides of partners (not Put with n players)
    top_cards: tuple = ()  # named top cards, high -> low
    removed: Any = ()  # card texts left out of the deck (or a ByOption)
    vira: bool = False  # a turned card picks this hand's manilhas
    hand_size: int | None = 3  # cards per hand; None: players + 1
    counter_raise: bool = False
    all_in: str | None = None  # "rest" (mon reste) or "put"
    governors: bool = False
    tie_rule: str = "earliest"  # equal non-zero trick counts: "earliest" won trick wins, or "nobody"
    special_hands: Any = None  # (points below target, hand value) of the hand at 11, or a ByOption; None: none
    senas: Senas | None = None
    signal_governor_partners_only: bool = False
    put_pass: bool = False
    put_n: bool = False
    kernel: bool = False  # the numba array kernel implements this variant
    card_classes: CardClasses | None = None  # partnership MCCFR card abstraction (None: not modelled)
    table_talk: str = "french"  # whose words name the calls when narrating: french, english (Put), brazil, argentino


_BRAZIL_SENAS = ("zap", "copas", "espadilha", "picafumo", "three")
_BRAZIL_CLASSES = (0, 0, 1, 1, 2, 3, 4, 4, 5, 5, 5, 5, 5, 5)
_SIGNALS_OPTION = OptionSpec({"mode": "none"}, "signals", "partner-signal channel (docs/rules.md §8)")
_TARGET_12 = OptionSpec(12, int_range(1, 1000), "points to win the game")
_TARGET_5 = OptionSpec(5, int_range(1, 1000), "points to win the game")
_PUT_ALL_TIED = OptionSpec("none", ("none", "leader"), "three ties: nobody scores")
_LE_TRUC_RANKINGS = ByOption("ranking", {"standard": LE_TRUC_RANKING, "seven_ace": LE_TRUC_SEVEN_ACE})
_LE_TRUC_LADDERS = ByOption("ladder", {"standard": LADDERS["le_truc"], "doubling": LADDERS["doubling"]})
_LE_TRUC = dict(family="french", ranking=_LE_TRUC_RANKINGS, ladder=_LE_TRUC_LADDERS, all_in="rest", governors=True,
                kernel=True)
_PUT = dict(family="french", ranking=PUT_RANKING, ladder=LADDERS["put"], all_in="put", tie_rule="nobody",
            table_talk="english")
_BRAZIL = dict(family="french", counter_raise=True, special_hands=(1, 3), table_talk="brazil")

DECLARED = (
    Variant(
        "le_truc",
        "Le Truc, 2 players, 32 cards (7..A), 3 tricks; raises 1-2-4-6-8-10-12, mon reste, fold, one redeal; target 12.",
        {
            "ranking": OptionSpec("standard", ("standard", "seven_ace"), "standard 7>8>A>K>Q>J>10>9; seven_ace 7>A>...>9>8"),
            "redeal": OptionSpec(True, (True, False), "non-dealer may propose one redeal before any card"),
            "ladder": OptionSpec("standard", ("standard", "doubling"), "standard 1,2,4,6,8,10,12; doubling 1,2,4,8,16"),
            "all_tied": OptionSpec("none", ("none", "leader"), "all tricks tied: nobody scores, or the side that led trick 1"),
            "fold": OptionSpec(True, (True, False), "a player may fold at his turn"),
            "target": _TARGET_12,
        },
        **_LE_TRUC,
    ),
    Variant(
        "le_truc_4p",
        "Le Truc, 2 vs 2 with governors, partner signals and governor instructions; target 12.",
        {
            "ranking": OptionSpec("standard", ("standard", "seven_ace"), "as le_truc"),
            "redeal": OptionSpec(True, (True, False), "the non-dealing governor may propose one redeal"),
            "ladder": OptionSpec("standard", ("standard", "doubling"), "as le_truc"),
            "all_tied": OptionSpec("leader", ("leader", "none"), "all tricks tied: the side that led trick 1 wins"),
            "fold": OptionSpec(False, (True, False), "fold (not in the seed; off by default)"),
            "target": _TARGET_12,
            "signals": OptionSpec({"mode": "card", "truthful": True, "intercept": 0.0, "timing": "deal"}, "signals",
                                  "partner signals of the governors' partners (docs/rules.md §8)"),
            "instructions": OptionSpec(True, (True, False), "governors instruct their partner's play"),
        },
        **_LE_TRUC, seats=4, signal_governor_partners_only=True,
        card_classes=CardClasses((0, 1, 2, 3, 4, 4, 5, 5), ("7", "8", "A", "K", "Q/J", "T/9")),
    ),
    Variant(
        "put",
        "Put, 2 players, 52 cards (3>2>A>...>4); 'trick and tie' scores nothing; the put call; target 5.",
        {
            "all_tied": _PUT_ALL_TIED,
            "fold": OptionSpec(True, (True, False), "a player may throw in at his turn"),
            "target": _TARGET_5,
        },
        **_PUT, kernel=True,
    ),
    Variant(
        "put_4p",
        "Put, 2 vs 2: dealer and his right pass their highest card to partners, who discard one and play heads-up.",
        {
            "all_tied": _PUT_ALL_TIED,
            "fold": OptionSpec(True, (True, False), "a receiver may throw in at his turn"),
            "target": _TARGET_5,
        },
        **_PUT, seats=4, put_pass=True, kernel=True,
    ),
    Variant(
        "put_n",
        "Put, 3-6 independent players, players+1 cards and tricks; put with resignations; target 5.",
        {
            "players": OptionSpec(4, (3, 4, 5, 6), "number of independent players"),
            "target": _TARGET_5,
        },
        **_PUT, teams_at_four=False, hand_size=None, put_n=True, kernel=True,
    ),
    Variant(
        "truco_paulista",
        "Truco Paulista: vira and manilhas, ladder 1-3-6-9-12 with counter-raises, mão de onze/ferro; target 12.",
        {
            "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
            "deck": OptionSpec("dirty", ("dirty", "clean"), "dirty 40 cards; clean 24 (A 2 3 J Q K)"),
            "all_tied": OptionSpec("dealer", ("dealer", "none", "leader"), "all three tied: the dealing side wins"),
            "blind": OptionSpec(True, (True, False), "the iron hand (both at 11) is played blind"),
            "fold": OptionSpec(False, (True, False), "a player may fold at his turn"),
            "target": _TARGET_12,
            "signals": _SIGNALS_OPTION,
        },
        **_BRAZIL, ranking=ByOption("deck", {"dirty": BRAZIL_RANKING, "clean": BRAZIL_RANKING[:6]}),
        ladder=LADDERS["truco"], vira=True, kernel=True,
        senas=Senas(_BRAZIL_SENAS, ranks={"3": "three"}, vira_manilhas=_BRAZIL_SENAS[:4]),
        card_classes=CardClasses(_BRAZIL_CLASSES, ("zap/copas", "espadilha/ouros", "3", "2", "A/K", "J Q 7 6 5 4")),
    ),
    Variant(
        "truco_mineiro",
        "Truco Mineiro: fixed manilhas 4c>7h>As>7d, ladder 1-3-6-9-12, mão de onze/ferro; target 12.",
        {
            "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
            "deck": OptionSpec("dirty", ("dirty", "clean"), "dirty 40 cards; clean 27"),
            "ladder": OptionSpec("standard", ("standard", "mineiro"),
                                 "standard 1,3,6,9,12; mineiro 2,4,6,10,12 (special hand at 10)"),
            "all_tied": OptionSpec("none", ("none", "dealer", "leader"), "all three tied: nobody scores"),
            "blind": OptionSpec(True, (True, False), "the iron hand is played blind"),
            "fold": OptionSpec(False, (True, False), "a player may fold at his turn"),
            "target": _TARGET_12,
            "signals": _SIGNALS_OPTION,
        },
        **{**_BRAZIL, "special_hands": ByOption("ladder", {"standard": (1, 3), "mineiro": (2, 4)})},
        ranking=BRAZIL_RANKING, top_cards=MINEIRO_TOP, removed=ByOption("deck", {"dirty": (), "clean": MINEIRO_CLEAN_REMOVED}),
        ladder=ByOption("ladder", {"standard": LADDERS["truco"], "mineiro": LADDERS["mineiro"]}),
        kernel=True, senas=Senas(_BRAZIL_SENAS, cards=dict(zip(MINEIRO_TOP, _BRAZIL_SENAS)), ranks={"3": "three"}),
        card_classes=CardClasses(_BRAZIL_CLASSES, ("zap/copas", "espadilha/picafumo", "3", "2", "A/K", "J Q 7 6 5 4")),
    ),
    Variant(
        "truco_argentino",
        "Argentine Truco: Spanish deck, ladder 1-2-3-4, envido (and flor option), irse al mazo; target 30.",
        {
            "players": OptionSpec(4, (4, 2), "2 vs 2, or heads-up"),
            "envido": OptionSpec(True, (True, False), "envido calls in the first trick"),
            "flor": OptionSpec(False, (True, False),
                               "flor: three cards of one suit, compulsory, replaces envido; worth 3 (4 flor against flor)"),
            "all_tied": OptionSpec("leader", ("leader", "none", "dealer"), "all three parda: the mano's side wins"),
            "fold": OptionSpec(True, (True, False), "irse al mazo"),
            "target": OptionSpec(30, int_range(1, 1000), "points to win the game (15 is common)"),
            "signals": _SIGNALS_OPTION,
        },
        family="spanish", ranking=ARGENTINE_RANKING, top_cards=ARGENTINE_TOP, ladder=LADDERS["argentino"],
        counter_raise=True, table_talk="argentino", kernel=True,
        senas=Senas(ARGENTINE_TOP + ("three", "two", "ancho_falso"), cards={**{c: c for c in ARGENTINE_TOP},
                    "1c": "ancho_falso", "1o": "ancho_falso"}, ranks={"3": "three", "2": "two"}),
    ),
)

VARIANTS: dict[str, Variant] = {v.name: v for v in DECLARED}


# A game's name alone is its best committed network (models/README.md says how each was made).
DEFAULT_MODELS = {"le_truc": "distilled_mmd_le_truc", "truco_paulista": "ppo_paulista"}
