"""One core, one thread: the like-for-like condition of every measurement in the speed table."""

from __future__ import annotations

import os
import sys

# One thread everywhere, set before numba or JAX start their thread pools (JAX reads XLA_FLAGS at import).
SINGLE_THREAD_ENV = {
    "NUMBA_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "JAX_PLATFORMS": "cpu",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def pin_single_thread() -> int | None:
    """Pin this process to one core and ask numba and JAX for one thread; the core, or None if pinning failed."""
    env = dict(SINGLE_THREAD_ENV)
    if "numba" in sys.modules:
        # numba read its thread count at import; a different NUMBA_NUM_THREADS now would make its next compile
        # (a cold cache) refuse to run once the pool has started. set_num_threads below limits it instead.
        del env["NUMBA_NUM_THREADS"]
    os.environ.update(env)
    if "jax" in sys.modules:  # XLA reads its flags once, at import
        print("warning: JAX was imported before pinning; its thread flags may not apply", file=sys.stderr)
    try:
        import numba

        numba.set_num_threads(1)
    except (ImportError, ValueError):
        pass
    try:
        core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return core
    except (AttributeError, OSError):
        return None
