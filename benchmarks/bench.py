"""``truc bench``: random-play steps per second of every way to run Truc, beside installed peers.

    truc bench [--seconds 1] [--variants le_truc truco_paulista truco_paulista+signals | all]
               [--sizes 1 64 1024 8192] [--out results/bench] [--no-peers] [--threads N]

One table, one run, one machine. A *step* is one decision of one game (chance events are not
counted; they are resolved inside the step). Every row plays uniformly random legal actions:

- ``engine``: ``engine.State`` in a Python loop (``benchmarks/engine.py``'s loop, one hand per episode);
- ``raw_env`` / ``env``: the PettingZoo AEC env without / with wrappers (``benchmarks/envs.py``'s loop);
- ``batched B=...``: :class:`truc_env.vector.VectorEnv` with B games, observations and masks included,
  actions drawn by its ``random_actions`` (the numba kernel, or the engine loop where no kernel exists:
  the ``backend`` column says which);
- peers: OpenSpiel's C++ ``leduc_poker`` and ``kuhn_poker`` stepped from Python through the same loop
  as ``engine`` (``pyspiel``), and PettingZoo's ``texas_holdem_v4`` (rlcard) through the AEC loop.

Columns: ``steps/s`` (wall clock), ``cores`` (CPU seconds per wall second: on a shared machine
below the cores asked for), and ``steps/cpu-s`` (steps per CPU second of this process, the fairer
figure when other jobs compete; for the multi-threaded batched rows multiply by the cores to get
the capacity of an idle machine). Results: ``<out>/bench.json`` and ``<out>/bench.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.envs import aec_chunk  # noqa: E402
from truc_env.rules import VARIANTS, make_rules  # noqa: E402

SIZES = (1, 64, 1024, 8192)
CONFIGS = {  # name -> (variant, options)
    "le_truc": ("le_truc", {}),
    "truco_paulista": ("truco_paulista", {}),
    "truco_paulista+signals": ("truco_paulista", {"signals": {"mode": "card"}}),
}
DEFAULT_CONFIGS = ("le_truc", "truco_paulista", "truco_paulista+signals")
AIMS = {("le_truc", 8192): 2_000_000, ("truco_paulista+signals", 8192): 1_000_000}
PGX_LEDUC_QUOTED = 1_600_000  # pgx's JAX Leduc on this kind of machine, as quoted by issue 7 (not measured)


def config_of(name: str) -> tuple[str, dict]:
    if name in CONFIGS:
        return CONFIGS[name]
    if name in VARIANTS:
        return name, {}
    raise SystemExit(f"unknown variant {name!r}; known: {', '.join(list(CONFIGS) + list(VARIANTS))} or 'all'")


class Timer:
    """Runs ``chunk() -> steps`` until ``seconds`` of wall time; wall and CPU rates."""

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


def engine_chunk(rules, seed: int):
    from benchmarks.engine import truc_hand_loop

    play_one = truc_hand_loop(rules, np.random.default_rng(seed))
    return lambda: sum(play_one() for _ in range(20))


def batched_chunk(variant: str, options: dict, B: int, seed: int, threads):
    from truc_env.vector import VectorEnv

    v = VectorEnv(variant, B, seed=seed, threads=threads, **options)
    v.reset()
    reps = max(1, 4096 // B) if v.backend == "numba" else 1

    def chunk() -> int:
        for _ in range(reps):
            v.step(v.random_actions())
        return reps * B

    return chunk, v.backend


def spiel_chunk(name: str, seed: int):
    import pyspiel

    from benchmarks.engine import leduc_loop

    play_one = leduc_loop(pyspiel.load_game(name), np.random.default_rng(seed))
    return lambda: sum(play_one() for _ in range(50))


def run(args) -> dict:
    warnings.simplefilter("ignore")
    timer = Timer(args.seconds)
    rows: list[dict] = []

    def add(group: str, what: str, res: dict, **extra) -> None:
        row = {"group": group, "what": what, **res, **extra}
        rows.append(row)
        print(f"{group:<24}{what:<16}{extra.get('backend', ''):<8}{res['steps_per_s']:>14,.0f}"
              f"{res['cores']:>7.2f}{res['steps_per_cpu_s']:>15,.0f}", flush=True)

    print(f"{'':<24}{'':<16}{'backend':<8}{'steps/s':>14}{'cores':>7}{'steps/cpu-s':>15}")
    if not args.no_peers:
        for name in ("leduc_poker", "kuhn_poker"):
            try:
                add("openspiel (C++)", name, timer(spiel_chunk(name, 0)))
            except ImportError:
                print(f"open_spiel not installed: no {name}")
        try:
            from pettingzoo.classic import texas_holdem_v4

            add("pettingzoo", "texas raw_env", timer(aec_chunk(texas_holdem_v4.raw_env, 0)))
            add("pettingzoo", "texas env", timer(aec_chunk(texas_holdem_v4.env, 0)))
        except Exception as exc:  # rlcard / pygame missing
            print(f"pettingzoo texas_holdem_v4 unavailable ({exc})")
    from truc_env.pettingzoo_env import env as truc_env_fn
    from truc_env.pettingzoo_env import raw_env as truc_raw_env

    for name in args.variants:
        variant, options = config_of(name)
        rules = make_rules(variant, **options)
        add(name, "engine.py", timer(engine_chunk(rules, 0)))
        add(name, "raw_env", timer(aec_chunk(lambda v=variant, o=options: truc_raw_env(variant=v, **o), 0)))
        add(name, "env", timer(aec_chunk(lambda v=variant, o=options: truc_env_fn(variant=v, **o), 0)))
        for B in args.sizes:
            chunk, backend = batched_chunk(variant, options, B, 0, args.threads)
            add(name, f"batched B={B}", timer(chunk), backend=backend, B=B)

    by = {(r["group"], r["what"]): r for r in rows}
    ratios = {}
    leduc = by.get(("openspiel (C++)", "leduc_poker"))
    texas = by.get(("pettingzoo", "texas raw_env"))
    for name in args.variants:
        eng = by[(name, "engine.py")]
        big = by.get((name, f"batched B={max(args.sizes)}"))
        if big:
            ratios[f"{name}: batched B={max(args.sizes)} / engine.py"] = big["steps_per_s"] / eng["steps_per_s"]
        if leduc:
            ratios[f"{name}: engine.py / openspiel leduc"] = eng["steps_per_s"] / leduc["steps_per_s"]
            if big:
                ratios[f"{name}: batched B={max(args.sizes)} / openspiel leduc"] = big["steps_per_s"] / leduc["steps_per_s"]
        if texas:
            ratios[f"{name}: raw_env / pettingzoo texas raw_env"] = by[(name, "raw_env")]["steps_per_s"] / texas["steps_per_s"]
        if big:
            ratios[f"{name}: batched B={max(args.sizes)} / pgx leduc (quoted 1.6M)"] = big["steps_per_s"] / PGX_LEDUC_QUOTED
    aims = []
    for (name, B), aim in AIMS.items():
        row = by.get((name, f"batched B={B}"))
        if row:
            aims.append({"config": name, "B": B, "aim": aim, "steps_per_s": row["steps_per_s"],
                         "steps_per_cpu_s": row["steps_per_cpu_s"], "cores_used": row["cores"],
                         "met_wall": row["steps_per_s"] >= aim})
    import numba

    return {
        "machine": {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
                    "load_avg": os.getloadavg() if hasattr(os, "getloadavg") else None,
                    "processor": platform.processor() or platform.machine(), "python": sys.version.split()[0],
                    "numpy": np.__version__, "numba": numba.__version__, "platform": platform.platform()},
        "seconds": args.seconds, "rows": rows, "ratios": ratios, "aims": aims,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def plot(result: dict, path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = result["rows"]
    labels = [f"{r['group']}: {r['what']}" for r in rows]
    values = [r["steps_per_s"] for r in rows]
    colors = ["tab:gray" if r["group"] in ("openspiel (C++)", "pettingzoo") else
              ("tab:green" if r["what"].startswith("batched") else "tab:blue") for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.5))
    y = np.arange(len(rows))[::-1]
    ax.barh(y, values, color=colors)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("random-play steps per second (wall clock, log scale)")
    m = result["machine"]
    ax.set_title(f"truc bench: {m['cpus']} CPUs, load {m['load_avg'][0]:.1f}, {result['time']}" if m["load_avg"]
                 else "truc bench", fontsize=9)
    for yi, v in zip(y, values):
        ax.text(v, yi, f" {v:,.0f}", va="center", fontsize=7)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def save(result: dict, out: str) -> tuple[str, str | None]:
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "bench.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1)
    os.replace(tmp, path)
    return path, plot(result, os.path.join(out, "bench.png"))


def build_parser(p: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    p = p or argparse.ArgumentParser(prog="truc bench", description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=1.0, help="wall seconds per measurement (default 1)")
    p.add_argument("--variants", nargs="+", default=list(DEFAULT_CONFIGS),
                   help=f"variants or configs ({', '.join(CONFIGS)}), or 'all' for every variant")
    p.add_argument("--sizes", nargs="+", type=int, default=list(SIZES), help="batch sizes B")
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads for the batched kernel (default: 1 below B=4096, all cores above)")
    p.add_argument("--out", default="results/bench", help="folder for bench.json and bench.png")
    p.add_argument("--no-peers", action="store_true", help="skip OpenSpiel and PettingZoo poker")
    return p


def main(args=None) -> int:
    if args is None or isinstance(args, list):
        args = build_parser().parse_args(args)
    if args.variants == ["all"]:
        args.variants = list(DEFAULT_CONFIGS[2:]) + list(VARIANTS)
    result = run(args)
    print()
    for k, v in result["ratios"].items():
        print(f"{k:<62}{v:>10.2f}x")
    for a in result["aims"]:
        print(f"aim {a['config']} B={a['B']}: {a['steps_per_s']:,.0f} steps/s (wall, {a['cores_used']:.2f} cores "
              f"used) vs {a['aim']:,} -> {'met' if a['met_wall'] else 'NOT met'}; "
              f"{a['steps_per_cpu_s']:,.0f} steps per CPU-second")
    js, png = save(result, args.out)
    print(f"\nresults: {js}" + (f", {png}" if png else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
