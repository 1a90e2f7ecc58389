"""truc-env: the Truc family of card games for reinforcement learning and game theory."""

from .engine import CHANCE, TERMINAL, State, new_game
from .errors import CardError, IllegalActionError, RecordError, RulesError, TrucError
from .rules import VARIANTS, Rules, make_rules

__version__ = "0.1.0"

__all__ = ["CHANCE", "TERMINAL", "State", "new_game", "make_rules", "Rules", "VARIANTS", "TrucError",
           "RulesError", "CardError", "IllegalActionError", "RecordError", "__version__"]


def __getattr__(name):  # lazy: importing truc_env must not import pettingzoo
    if name in ("env", "raw_env"):
        from . import pettingzoo_env

        return getattr(pettingzoo_env, name)
    raise AttributeError(f"module 'truc_env' has no attribute {name!r}")
