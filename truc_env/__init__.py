"""truc-env: the Truc family of card games for reinforcement learning and game theory.

Importing it registers one Gymnasium id per variant (:data:`GYM_IDS`), e.g.
``gymnasium.make("truc/LeTruc-v0", opponents="heuristic:honest")``: a
:class:`truc_env.envs.gym_env.SingleAgentEnv` of that variant; every argument of ``SingleAgentEnv``
(``seat``, ``opponents``, ``episode``, ``reward``, ``illegal``, options) passes through ``make``.
"""

from truc_env.errors import CardError, IllegalActionError, RecordError, RulesError, TrucError
from truc_env.game.engine import CHANCE, TERMINAL, State, new_game
from truc_env.game.rules import VARIANTS, Rules, make_rules
from truc_env.moved import keep_old_paths

# the 0.1 module paths (truc_env.engine, truc_env.vector, ...) import their 0.2 homes for one release
keep_old_paths({f"truc_env.{m}": f"truc_env.{home}.{m}" for home, mods in {
    "game": ("cards", "variants", "rules", "actions", "hand_rules", "engine", "view", "episode", "records", "observe"),
    "envs": ("pettingzoo_env", "gym_env", "gym_vector", "openspiel_game"),
    "batch": ("vector", "_vector_kernels", "_vector_put_n", "_kernel_cache"),
    "display": ("render", "draw", "talk"),
    "io": ("assets", "atomic", "checks")}.items() for m in mods})

__version__ = "0.2.0"

# "le_truc_4p" -> "truc/LeTruc4p-v0"; the version moves when observations, actions or rewards change.
GYM_IDS = {v: "truc/" + "".join(p.capitalize() for p in v.split("_")) + "-v0" for v in VARIANTS}

__all__ = ["CHANCE", "TERMINAL", "State", "new_game", "make_rules", "Rules", "VARIANTS", "TrucError",
           "RulesError", "CardError", "IllegalActionError", "RecordError", "GYM_IDS", "__version__"]


def _register_gymnasium() -> None:
    """Register :data:`GYM_IDS` (entry points are strings: nothing of the env is imported now)."""
    try:
        from gymnasium.envs.registration import register, registry
    except ImportError:  # gymnasium is a dependency; without it there is nothing to register with
        return
    for variant, env_id in GYM_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point="truc_env.envs.gym_env:registered_env", kwargs={"variant_of_id": variant})


_register_gymnasium()


def __getattr__(name):  # lazy: importing truc_env must not import pettingzoo
    if name in ("env", "raw_env"):
        from truc_env.envs import pettingzoo_env

        return getattr(pettingzoo_env, name)
    raise AttributeError(f"module 'truc_env' has no attribute {name!r}")
