"""First use of the batched engine: cold (empty numba cache) and warm CPU-seconds and peak memory per variant
family, each in a fresh process, beside pgx's jit.

    python -m train.bench.compile [--families le_truc put_n ...] [--batch 64] [--no-pgx]

A row is one fresh Python process doing what a new user does first: ``VectorEnv(family, B)``, ``reset()`` and
one ``step`` of random legal actions, imports included. ``cold`` runs it with an empty cache directory
(``TRUC_CACHE_DIR`` a new temporary folder: numba compiles the kernel), ``warm`` runs it again in a new
process with the cache the cold run left (``--warm-runs`` processes, their median: one process's figure moves by
0.1-0.3 CPU-s with the machine's state). CPU-seconds are the child's user + system time and memory its peak
resident set (``os.wait4``), so the load of a shared machine does not count. pgx's rows (where pgx is
installed) do the same with ``pgx.make(name)``: ``jax.jit`` of a batched init and step, then one step; JAX
keeps no compile cache between processes by default, so every process pays it.

Every family of the main kernel compiles the same kernel (the rules are runtime parameters); ``put_n`` has a
kernel of its own.

Python's own bytecode cache is on in the children, as on a user's machine: ``pip install`` compiles every
module's bytecode, and an editable install writes it on first import. A ``PYTHONDONTWRITEBYTECODE`` in the
caller's environment (some containers set it) would make every warm process compile the package's source
again, about 0.2 CPU-s that no installed user pays; the header says when it was set and dropped.
The cold runs are heavy (about 20 CPU-s each): run this under the machine's heavy-job lock.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from truc_env.errors import TrucError
from truc_env.game.rules import VARIANTS

TRUC_CHILD = r"""
import sys
from truc_env.batch.vector import VectorEnv
v = VectorEnv(sys.argv[1], int(sys.argv[2]), seed=0)
v.reset()
v.step(v.random_actions())
assert v.backend == "numba", v.fallback_reason
"""

PGX_CHILD = r"""
import sys
import jax, jax.numpy as jnp, pgx
env, B = pgx.make(sys.argv[1]), int(sys.argv[2])
init, step = jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))
key = jax.random.PRNGKey(0)
state = init(jax.random.split(key, B))
action = jax.random.categorical(key, jnp.where(state.legal_action_mask, 0.0, -jnp.inf), axis=-1)
step(state, action).terminated.block_until_ready()
"""

PGX_GAMES = ("leduc_holdem", "chess")
TARGET_CPU_S, TARGET_GB, WARM_CPU_S = 20.0, 1.5, 1.0  # issue 30's first-use targets


def kernel_families() -> list[str]:
    """Every variant the numba kernels play."""
    return [name for name, v in VARIANTS.items() if v.kernel]


def first_use(code: str, args: list[str], cache: str) -> dict:
    """Run ``code`` in a fresh Python process; its CPU-seconds (user + system) and peak memory."""
    env = dict(os.environ, TRUC_CACHE_DIR=cache, JAX_PLATFORMS="cpu")
    env.pop("NUMBA_CACHE_DIR", None)  # the cache under test is TRUC_CACHE_DIR's
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached as after pip install (module docstring)
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]}: the child failed ({proc.returncode}): {err.strip().splitlines()[-1:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_gb": usage.ru_maxrss * 1024 / 1e9,
            "announced": "compiling" in err}


def pgx_available() -> bool:
    try:
        import jax  # noqa: F401
        import pgx  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train.bench.compile", description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=None,
                    help=f"variants (default: every kernel variant: {' '.join(kernel_families())})")
    ap.add_argument("--batch", type=int, default=64, help="batch size B of the first VectorEnv (default 64)")
    ap.add_argument("--no-pgx", action="store_true", help="skip pgx's rows even where pgx is installed")
    ap.add_argument("--warm-runs", type=int, default=3, help="warm processes per row, their median (default 3)")
    args = ap.parse_args(argv)
    families = args.families or kernel_families()
    for name in families:
        if name not in VARIANTS or not VARIANTS[name].kernel:
            raise TrucError(f"{name!r} is not a kernel variant; kernel variants: {', '.join(kernel_families())}")
    if args.batch < 1:
        raise TrucError(f"--batch must be a positive batch size, got {args.batch}")
    if args.warm_runs < 1:
        raise TrucError(f"--warm-runs must be at least 1, got {args.warm_runs}")
    print(f"first use, B={args.batch}: a fresh process each; CPU-s = user + system; "
          f"targets cold <= {TARGET_CPU_S:g} CPU-s and {TARGET_GB:g} GB, warm <= {WARM_CPU_S:g} CPU-s "
          f"(median of {args.warm_runs} processes)")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("(PYTHONDONTWRITEBYTECODE is set here: dropped in the children, whose bytecode is cached as after "
              "pip install)")
    print(f"{'first use of':<34}{'cold CPU-s':>11}{'cold GB':>9}{'warm CPU-s':>12}{'warm GB':>9}")
    rows = [("truc-env VectorEnv " + f, TRUC_CHILD, f) for f in families]
    if not args.no_pgx and pgx_available():
        rows += [("pgx (JAX jit) " + g, PGX_CHILD, g) for g in PGX_GAMES]
    elif not args.no_pgx:
        print("(pgx rows skipped: pip install 'truc-env[bench]' for pgx and JAX)")
    failed = False
    for label, code, name in rows:
        with tempfile.TemporaryDirectory(prefix="truc-compile-") as cache:
            cold = first_use(code, [name, str(args.batch)], cache)
            warms = [first_use(code, [name, str(args.batch)], cache) for _ in range(args.warm_runs)]
        warm = sorted(warms, key=lambda w: w["cpu_s"])[len(warms) // 2]  # the median (upper middle if even)
        print(f"{label:<34}{cold['cpu_s']:>11.1f}{cold['peak_gb']:>9.2f}{warm['cpu_s']:>12.2f}{warm['peak_gb']:>9.2f}",
              flush=True)
        if code is TRUC_CHILD:
            failed |= not cold["announced"] or any(w["announced"] for w in warms)  # the message comes once, cold only
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
