"""Decks and card notation.

A card is a small int: ``rank_index * 4 + suit_index`` within its deck family.

- French (Le Truc, Put, Brazilian truco): ranks ``2-9 T J Q K A`` (index 0..12), suits ``c d h s``.
- Spanish (Argentine truco): numbers ``1-7 10 11 12`` (index 0..9), suits ``o c e b``
  (oros, copas, espadas, bastos).

Rankings (which card beats which) are not here: they belong to a variant and live in ``variants.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from truc_env.errors import CardError


@dataclass(frozen=True)
class DeckFamily:
    name: str
    ranks: tuple[str, ...]
    suits: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.ranks) * len(self.suits)

    def card(self, rank: str, suit: str) -> int:
        return self.ranks.index(rank) * 4 + self.suits.index(suit)

    def rank_of(self, card: int) -> str:
        return self.ranks[card // 4]

    def suit_of(self, card: int) -> str:
        return self.suits[card % 4]

    def format(self, card: int) -> str:
        if not 0 <= card < self.size:
            raise CardError(f"card id {card} is outside the {self.name} deck (0..{self.size - 1})")
        return self.rank_of(card) + self.suit_of(card)

    def parse(self, text: str) -> int:
        """Parse ``'7h'`` / ``'Ts'`` (French) or ``'1e'`` / ``'12b'`` (Spanish) into a card id."""
        if not isinstance(text, str) or len(text) < 2:
            raise CardError(f"bad card {text!r}: expected {self._notation()}")
        rank, suit = text[:-1], text[-1]
        if rank not in self.ranks or suit not in self.suits:
            raise CardError(f"bad card {text!r}: expected {self._notation()}")
        return self.card(rank, suit)

    def _notation(self) -> str:
        return (
            f"<rank><suit> with ranks {' '.join(self.ranks)} and suits {' '.join(self.suits)}"
            f" ({self.name} deck)"
        )


FRENCH = DeckFamily("french", ("2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"), ("c", "d", "h", "s"))
SPANISH = DeckFamily("spanish", ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12"), ("o", "c", "e", "b"))
FAMILIES = {"french": FRENCH, "spanish": SPANISH}
