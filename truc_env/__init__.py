"""truc-env: the Truc family of card games for reinforcement learning and game theory."""

from .engine import CHANCE, TERMINAL, State, new_game
from .errors import CardError, IllegalActionError, RecordError, RulesError, TrucError
from .rules import VARIANTS, Rules, make_rules

__version__ = "0.1.0"

__all__ = ["CHANCE", "TERMINAL", "State", "new_game", "make_rules", "Rules", "VARIANTS", "TrucError",
           "RulesError", "CardError", "IllegalActionError", "RecordError", "__version__"]
