"""The input contract every environment shares: what a seed is and what an action id is.

The PettingZoo env, the Gymnasium env, the OpenSpiel game, the engine and the batched engine all
check seeds and actions here, so that each refuses the same values with the same error class and
message. Nothing is cast before it is checked: ``int(2.7)`` would play 2, ``np.int32(2**32 + 8)``
would play 8.

- a seed is an integer (Python or numpy, not a bool) in ``0..MAX_SEED``, as numpy takes it;
- an action is an integer (Python or numpy, or a 0-d integer array; not a bool) in ``0..n-1``; in the
  batched engine ``-1`` (only ``-1``) lets a game wait.
"""

from __future__ import annotations

import numbers

import numpy as np

from truc_env.errors import IllegalActionError, RulesError

MAX_SEED = 2**63 - 1
WAIT = -1  # the batched engine's "this game does not move now"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_seed(seed, what: str = "seed") -> int:
    """A seed as numpy takes it: an integer in 0..2**63-1 (not a bool, a float or a negative number)."""
    if isinstance(seed, np.ndarray) and seed.ndim == 0:
        seed = seed[()]
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= MAX_SEED:
        raise RulesError(f"{what}={_short(seed)} is invalid; a seed is an integer in 0..{MAX_SEED}")
    return int(seed)


def _allowed(size: int | None, wait: bool) -> str:
    text = "an action is an integer index (a Python or numpy integer)"
    if size is not None:
        text += f" in 0..{size - 1}"
    return text + (", or -1 to let the game wait" if wait else "")


def check_action(action, size: int | None = None, who: str = "") -> int:
    """One action id as an int: an integer (not a bool, float or string) in ``0..size-1`` when ``size`` is given.

    ``who`` prefixes the message (``"player_0: "``). Legality is the engine's question, not this one.
    """
    if type(action) is int and (size is None or 0 <= action < size):  # the usual case, before the ABC test
        return action
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral) \
            or (size is not None and not 0 <= action < size):
        kind = "" if type(action) is int else f" ({type(action).__name__})"
        raise IllegalActionError(f"{who}action {_short(action)}{kind} is invalid; {_allowed(size, False)}")
    return int(action)


def check_actions(actions, size: int, num_envs: int) -> np.ndarray:
    """The batched engine's actions as an int32 array of shape ``(num_envs,)``: each in ``0..size-1`` or -1.

    Checked on the values as given (int64 or Python ints), before the cast to int32 that could wrap.
    """
    arr = np.asarray(actions) if not isinstance(actions, np.ndarray) else actions
    if arr.shape != (num_envs,):
        raise IllegalActionError(f"actions must have shape ({num_envs},), got {arr.shape}")
    if arr.dtype.kind not in "iu":  # 2.7 must not play action 2, nor True action 1 (object: 2**70 and such)
        raise IllegalActionError(f"actions must be integer ids (an int array), got dtype {arr.dtype}; "
                                 f"{_allowed(size, True)}")
    bad = (arr < WAIT) | (arr >= size)  # numpy compares every int dtype with Python ints exactly
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise IllegalActionError(f"game {b}: action {int(arr[b])} is invalid; {_allowed(size, True)}")
    return arr.astype(np.int32, copy=False)


def machine_memory() -> int:
    """Bytes of physical memory here (0 when the system does not say)."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def check_memory(need: float, what: str, shrink: str) -> None:
    """Refuse, before allocating, a job whose estimated ``need`` (bytes) passes this machine's memory.

    ``what`` names the job, ``shrink`` the option that makes it smaller.
    """
    have = machine_memory()
    if have and need > have:
        raise RulesError(f"{what} needs about {memory_size(need)} of memory, more than this machine's {memory_size(have)}; "
                         f"{shrink}")


def memory_size(n: float, decimals: int = 1) -> str:
    """Bytes as people read them: GiB, MiB or bytes."""
    return (f"{n / 2**30:,.{decimals}f} GiB" if n >= 2**30 else f"{n / 2**20:,.{decimals}f} MiB" if n >= 2**20
            else f"{n:,.0f} bytes")


def foreign_file(path: str, magics: tuple, expected: str) -> str | None:
    """Why a file is not of the kind its first bytes announce (``magics``), or None when it may be.

    Loaders that fall back to unpickling (torch, numpy) answer a text file with an unpickler's error
    or advice to load it unsafely; its first bytes say plainly what it is instead."""
    with open(path, "rb") as f:
        head = f.read(8)
    if not head:
        return "an empty file"
    if head.startswith(magics):
        return None
    return f"it starts with {head!r}, where {expected} is expected"

