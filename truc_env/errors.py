"""Exceptions raised for bad input. Every message says what was wrong and what is allowed."""


class TrucError(ValueError):
    """Base class of every error truc-env raises for bad input."""


class RulesError(TrucError):
    """An unknown variant, an unknown option, or a bad option value."""


class CardError(TrucError):
    """A card string that does not parse, or a card that is not in the variant's deck."""


class IllegalActionError(TrucError):
    """An action that is not legal in the current state."""


class RecordError(TrucError):
    """A malformed or inconsistent game record."""
