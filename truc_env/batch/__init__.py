"""The batched engine: B games stepped at once by numba kernels, and where their compiled cache lives."""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector paused inside, and as it was after.

    Importing numba and loading a cached kernel (numba then imports its typing and lowering registries) create
    about 10^5 objects that live as long as the process; with the collector on, their allocation triggers some
    250 collections that traverse them, about 0.06 CPU-s of a warm first use. Not used around a compile, whose
    garbage the collector should see.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
