"""``truc bench``: random-play steps per second of every way to run Truc; ``--peers``: beside other libraries.

    truc bench [--seconds 1] [--variants le_truc truco_paulista truco_paulista+signals | all]
               [--sizes 1 64 1024 8192] [--threads N] [--out results/bench]
    truc bench --peers [--variants le_truc] [--sizes 1024 8192] [--repeats 3]

A *step* is one decision of one game (chance events are resolved inside the step, not counted).
Every row plays uniformly random legal actions.

Without ``--peers`` (our own throughput): ``engine`` (``engine.State`` in a Python loop, one hand per
episode), ``raw_env`` / ``env`` (the PettingZoo AEC env without / with wrappers) and ``batched B=...``
(:class:`truc_env.batch.vector.VectorEnv`, observations and masks included, on as many threads as
``--threads`` gives; its ``backend`` column says numba kernel or engine loop). Columns: ``steps/s``
(wall clock), ``cores`` (CPU seconds per wall second) and ``steps/cpu-s`` (per CPU-second of this
process).

With ``--peers``: the like-for-like comparison of :mod:`train.bench.peers` — one process pinned to
one core, one thread, figures per CPU-second, each Truc row beside the peers measured in the same run
(in turn, ``--repeats`` rounds, median kept) and driven the same way; a ratio compares only rows of
one group.

Results: ``<out>/bench.json`` (or ``peers.json``) and a chart ``bench.png`` (``peers.png``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

from train.bench import peers
from train.bench.envs import aec_chunk
from train.commands import flags
from truc_env.errors import TrucError
from truc_env.game.rules import VARIANTS, make_rules
from truc_env.io.atomic import atomic_open

SIZES = (1, 64, 1024, 8192)
PEER_SIZES = (1024, 8192)
CONFIGS = {  # name -> (variant, options)
    "le_truc": ("le_truc", {}),
    "truco_paulista": ("truco_paulista", {}),
    "truco_paulista+signals": ("truco_paulista", {"signals": {"mode": "card"}}),
    # interception as a chance event (0 < intercept < 1): the one config left on the engine loop
    "truco_paulista+intercept": ("truco_paulista", {"signals": {"mode": "free", "intercept": 0.5}}),
}
DEFAULT_CONFIGS = ("le_truc", "truco_paulista", "truco_paulista+signals", "le_truc_4p", "put_4p", "truco_argentino",
                   "put_n")
PEER_CONFIGS = ("le_truc",)


def config_of(name: str) -> tuple[str, dict]:
    """The (variant, options) of a bench config name or a variant name."""
    if name in CONFIGS:
        return CONFIGS[name]
    if name in VARIANTS:
        return name, {}
    raise TrucError(f"unknown bench variant {name!r}; known: {', '.join(list(CONFIGS) + list(VARIANTS))} or 'all'")


class Timer:
    """Runs ``chunk() -> steps`` for ``seconds`` of wall time after one warm-up call; wall and CPU rates."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __call__(self, chunk) -> dict:
        chunk()  # warm up (compilation, caches)
        steps = 0
        w0, c0 = time.perf_counter(), time.process_time()
        while True:
            steps += chunk()
            w = time.perf_counter() - w0
            if w >= self.seconds:
                break
        c = time.process_time() - c0
        return {"steps_per_s": steps / w, "steps_per_cpu_s": steps / max(c, 1e-9), "cores": c / w, "steps": steps}


def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), since the ratios to peers differ from one CPU to another."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """What the figures were measured on (load included: the machine may be shared)."""
    import numba

    return {"cpus": os.cpu_count(), "cpu_model": cpu_model(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "processor": platform.processor() or platform.machine(), "python": sys.version.split()[0],
            "numpy": np.__version__, "numba": numba.__version__, "platform": platform.platform()}


def _fmt_row(group: str, what: str, backend: str, res: dict) -> str:
    return (f"{group:<24}{what:<28}{backend:<8}{res['steps_per_s']:>14,.0f}"
            f"{res['cores']:>7.2f}{res['steps_per_cpu_s']:>15,.0f}")


HEADER = f"{'':<24}{'':<28}{'backend':<8}{'steps/s':>14}{'cores':>7}{'steps/cpu-s':>15}"


def run_own(args) -> dict:
    """Our own throughput table: engine, AEC envs and the batched engine, wall clock and CPU."""
    from truc_env.envs.pettingzoo_env import env as truc_env_fn
    from truc_env.envs.pettingzoo_env import raw_env as truc_raw_env

    timer = Timer(args.seconds)
    rows: list[dict] = []

    def add(group: str, what: str, res: dict, **extra) -> None:
        rows.append({"group": group, "what": what, **res, **extra})
        print(_fmt_row(group, what, extra.get("backend", ""), res), flush=True)

    print(HEADER)
    for name in args.variants:
        variant, options = config_of(name)
        rules = make_rules(variant, **options)
        add(name, "engine", timer(peers.truc_loop_chunk(rules, 0)))
        add(name, "raw_env", timer(aec_chunk(lambda v=variant, o=options: truc_raw_env(variant=v, **o), 0)))
        add(name, "env", timer(aec_chunk(lambda v=variant, o=options: truc_env_fn(variant=v, **o), 0)))
        for B in args.sizes:
            chunk, backend = peers.vector_chunk(variant, options, B, 0, args.threads)
            add(name, f"batched B={B}", timer(chunk), backend=backend, B=B)
    return {"kind": "own", "machine": machine(), "seconds": args.seconds, "rows": rows,
            "time": time.strftime("%Y-%m-%d %H:%M:%S")}


def run_peers(args) -> dict:
    """The like-for-like table: one core, one thread, per CPU-second, peers in the same run."""
    core = peers.pin_single_thread()
    timer = Timer(args.seconds)
    configs = [(name, *config_of(name)) for name in args.variants]
    print(f"one process pinned to core {core} ({cpu_model()}), one thread; steps per CPU-second of that process\n")
    print(f"{'group':<16}{'what':<34}{'steps/cpu-s':>14}{'steps/s':>14}")

    def report(row: dict) -> None:
        if "missing" in row:
            print(f"{row['group']:<16}{row['what']:<34}{row['missing']:>28}", flush=True)
        else:
            print(f"{row['group']:<16}{row['what']:<34}{row['steps_per_cpu_s']:>14,.0f}{row['steps_per_s']:>14,.0f}",
                  flush=True)

    rows = peers.peer_rows(timer, configs, args.sizes, report, repeats=args.repeats)
    return {"kind": "peers", "machine": {**machine(), "pinned_core": core}, "seconds": args.seconds,
            "repeats": args.repeats,
            "rows": rows, "ratios": peers.ratios(rows), "time": time.strftime("%Y-%m-%d %H:%M:%S")}


def plot(result: dict, path: str) -> str | None:
    """A bar chart of the rows (per CPU-second for --peers, wall clock otherwise), written atomically."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = [r for r in result["rows"] if "missing" not in r]
    if not rows:
        return None
    per_cpu = result["kind"] == "peers"
    key = "steps_per_cpu_s" if per_cpu else "steps_per_s"
    labels = [f"{r['group']}: {r['what']}" for r in rows]
    values = [r[key] for r in rows]
    colors = ["tab:gray" if r.get("peer") else ("tab:green" if r["what"].startswith("batched") or "B" in r
                                                else "tab:blue") for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    ax.barh(y, values, color=colors)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("random-play steps per " + ("CPU-second, one core (log scale)" if per_cpu
                                              else "second, wall clock (log scale)"))
    m = result["machine"]
    ax.set_title(f"truc bench{' --peers' if per_cpu else ''}: {m['cpus']} CPUs"
                 + (f", load {m['load_avg'][0]:.1f}" if m["load_avg"] else "") + f", {result['time']}", fontsize=9)
    for yi, v in zip(y, values):
        ax.text(v, yi, f" {v:,.0f}", va="center", fontsize=7)
    fig.tight_layout()
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)
    return path


def save(result: dict, out: str) -> tuple[str, str | None]:
    """``<out>/bench.json`` (``peers.json``) and its chart, each written atomically."""
    os.makedirs(out, exist_ok=True)
    stem = "peers" if result["kind"] == "peers" else "bench"
    path = os.path.join(out, stem + ".json")
    with atomic_open(path, "w") as f:
        json.dump(result, f, indent=1)
    return path, plot(result, os.path.join(out, stem + ".png"))


def build_parser(p: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The options of ``truc bench`` (on ``p`` when given, e.g. a subparser)."""
    p = p or argparse.ArgumentParser(prog="truc bench", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=flags.number(0, 3600, above=True), default=1.0, help="wall seconds per measurement (default 1)")
    p.add_argument("--variants", nargs="+", default=None,
                   help=f"variants or configs ({', '.join(CONFIGS)}), or 'all' for every variant "
                        f"(default: {' '.join(DEFAULT_CONFIGS)}; with --peers: {' '.join(PEER_CONFIGS)})")
    p.add_argument("--sizes", nargs="+", type=flags.COUNT, default=None,
                   help=f"batch sizes B (default: {' '.join(map(str, SIZES))}; "
                        f"with --peers: {' '.join(map(str, PEER_SIZES))})")
    p.add_argument("--threads", type=flags.integer(1, 4096), default=None,
                   help="threads for the batched engine (default: 1 below B=4096, all cores above; "
                        "--peers always uses 1)")
    p.add_argument("--peers", action="store_true",
                   help="compare with OpenSpiel, PettingZoo classic and pgx, like for like, per CPU-second of one core")
    p.add_argument("--repeats", type=flags.integer(1, 1000), default=3,
                   help="--peers: rounds over each group's rows, in turn; each row keeps its median (default 3)")
    p.add_argument("--out", type=flags.output_folder, default="results/bench", help="folder for the JSON results and the chart")
    return p


def check(args) -> None:
    """Fill in the defaults and refuse what cannot run, before measuring anything: unknown names, a
    value out of range, a batch too big for this machine's memory."""
    from truc_env.batch.vector import batch_bytes
    from truc_env.io.checks import check_memory

    if not (math.isfinite(args.seconds) and 0 < args.seconds <= 3600):
        raise TrucError(f"--seconds must be a finite number in (0, 3600], got {args.seconds}")
    if args.repeats < 1:
        raise TrucError(f"--repeats must be at least 1, got {args.repeats}")
    if args.sizes is not None and any(b < 1 for b in args.sizes):
        raise TrucError(f"--sizes must be positive batch sizes, got {args.sizes}")
    if args.threads is not None and args.threads < 1:
        raise TrucError(f"--threads must be at least 1, got {args.threads}")
    if args.variants is None:
        args.variants = list(PEER_CONFIGS if args.peers else DEFAULT_CONFIGS)
    elif args.variants == ["all"]:
        args.variants = [name for name in CONFIGS if name not in VARIANTS] + list(VARIANTS)
    configs = [config_of(name) for name in args.variants]  # refuse an unknown name before measuring anything
    if args.sizes is None:
        args.sizes = list(PEER_SIZES if args.peers else SIZES)
    for variant, options in configs:
        rules = make_rules(variant, **options)
        check_memory(batch_bytes(rules, max(args.sizes), "numba"),
                     f"--sizes {max(args.sizes)} ({rules.variant})", "give smaller --sizes")


def main(args=None) -> int:
    """Run the table (or the peers table), print it and save it."""
    if args is None or isinstance(args, list):
        args = build_parser().parse_args(args)
    check(args)
    warnings.simplefilter("ignore")  # PettingZoo's and JAX's notices would break the table
    result = run_peers(args) if args.peers else run_own(args)
    if result["kind"] == "peers":
        print()
        for r in result["ratios"]:
            print(f"{r['group']:<16}{r['truc']} / {r['peer']}".ljust(66) + f"{r['ratio']:>9.2f}x")
    js, png = save(result, args.out)
    print(f"\nresults: {js}" + (f", {png}" if png else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
