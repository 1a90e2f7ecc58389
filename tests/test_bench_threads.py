"""The single-thread pin of the speed table must leave numba able to compile (a cold kernel cache)."""

import subprocess
import sys

PROGRAM = """
import numba
from train.bench.threads import pin_single_thread
pin_single_thread()

@numba.njit(cache=False)
def twice(x):
    return 2 * x

assert twice(21) == 42
assert numba.get_num_threads() == 1
"""


def test_pin_after_numba_import_still_compiles():
    # numba imported first (as the CLI does) then pinned: its next compile re-reads the environment, and a
    # changed NUMBA_NUM_THREADS after the thread pool started made every cold-cache compile raise
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
