"""Lossless card abstraction for the exact heads-up solver.

In a game where a card matters only through its strength (``le_truc``, ``put``, Mineiro's fixed
manilhas without envido), two cards of equal strength are interchangeable: permuting them maps the
game onto itself. So a hand is a *multiset of strength classes*, dealt with the multiplicity weight
of the concrete deals it stands for, and a card play is public as its class. With envido or flor (Argentine) a
card's suit and pips count too, and no two cards are interchangeable: there ``"strength"`` keeps every
card its own class (ordered by strength), which is the lossless abstraction. ``abstraction="none"``
keeps every card its own class (the concrete game, as OpenSpiel sees it) for cross-checks.

Heads-up Truco Paulista turns a public card (the vira) after the deal; ``vira=card`` gives the
abstraction of the game that follows it: the deck without the vira, cards ranked by
``rules.strength_with_vira`` (the four manilhas on top, one class each, ordered by suit).

Class ``0`` is the weakest. A class is named by the rank of its cards (``"7"``), or by the card
itself where it is alone in its class (Mineiro's ``"4c"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement
from math import comb

import numpy as np

from truc_env.errors import TrucError
from truc_env.game.rules import Rules

ABSTRACTIONS = ("strength", "none")


@dataclass(frozen=True)
class CardAbstraction:
    """Cards -> classes, the hands as class multisets, and the chance weight of each pair of hands."""

    rules: Rules
    kind: str
    card_class: dict  # card id -> class index
    names: tuple  # class index -> printable name
    mult: tuple  # class index -> number of deck cards in it
    hands: tuple  # hand index -> sorted tuple of class indices
    hand_index: dict  # sorted class tuple -> hand index
    vira: int = -1  # the turned card this abstraction is for (Paulista), -1 without one

    @property
    def n_classes(self) -> int:
        return len(self.names)

    @property
    def n_hands(self) -> int:
        return len(self.hands)

    def counts(self, hand: tuple) -> tuple:
        c = [0] * self.n_classes
        for x in hand:
            c[x] += 1
        return tuple(c)

    def hand_of_cards(self, cards) -> int:
        """Index of the hand (class multiset) made by these card ids."""
        key = tuple(sorted(self.card_class[c] for c in cards))
        try:
            return self.hand_index[key]
        except KeyError:
            raise TrucError(f"cards {list(cards)} are not a hand of this game") from None

    def class_of_name(self, name: str) -> int:
        return self.names.index(name)

    def deal_weights(self) -> np.ndarray:
        """``W[h0, h1]``: probability that seat 0 is dealt hand h0 and seat 1 hand h1.

        The deal gives each seat a uniformly random set of cards, so the weight of a pair of class
        multisets is the number of concrete card sets behind it (a product over classes of binomials)
        over the number of deals.
        """
        hs = self.rules.hand_size
        n = sum(self.mult)  # the deck (without the vira, if any)
        total = comb(n, hs) * comb(n - hs, hs)
        counts = [self.counts(h) for h in self.hands]
        W = np.zeros((self.n_hands, self.n_hands))
        for i, ci in enumerate(counts):
            for j, cj in enumerate(counts):
                w = 1
                for m, a, b in zip(self.mult, ci, cj):
                    if a + b > m:
                        w = 0
                        break
                    w *= comb(m, a) * comb(m - a, b)
                W[i, j] = w
        return W / total


def make_abstraction(rules: Rules, kind: str = "strength", vira: int | None = None) -> CardAbstraction:
    """The lossless strength-class abstraction (or ``"none"``: every card its own class).

    With ``vira`` (a card id, Paulista only): the game after that vira is turned.
    """
    if kind not in ABSTRACTIONS:
        raise TrucError(f"unknown abstraction {kind!r}; known: {', '.join(ABSTRACTIONS)}")
    fam = rules.family
    if vira is None:
        deck, strength = rules.deck, rules.base_strength
    else:
        if not rules.vira:
            raise TrucError(f"{rules.variant} turns no vira")
        if vira not in rules.deck:
            raise TrucError(f"vira {vira} is not a card of this deck")
        deck, strength = tuple(c for c in rules.deck if c != vira), rules.strength_with_vira(vira)
    if kind == "strength" and not (rules.envido or rules.flor):  # envido and flor count suits
        levels = sorted({strength[c] for c in deck})
        card_class = {c: levels.index(strength[c]) for c in deck}
        names = []
        for k in range(len(levels)):
            members = [c for c in deck if card_class[c] == k]
            ranks = {fam.rank_of(c) for c in members}
            names.append(ranks.pop() if len(ranks) == 1 and len(members) > 1 else
                         (fam.format(members[0]) if len(members) == 1 else "/".join(sorted(ranks))))
    else:
        order = sorted(deck, key=lambda c: (strength[c], c))
        card_class = {c: i for i, c in enumerate(order)}
        names = [fam.format(c) for c in order]
    mult = [0] * len(names)
    for c in deck:
        mult[card_class[c]] += 1
    hands = []
    for h in combinations_with_replacement(range(len(names)), rules.hand_size):
        if all(h.count(x) <= mult[x] for x in set(h)):
            hands.append(h)
    return CardAbstraction(rules, kind, card_class, tuple(names), tuple(mult), tuple(hands),
                           {h: i for i, h in enumerate(hands)}, -1 if vira is None else vira)
