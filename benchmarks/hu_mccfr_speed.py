"""Heads-up MCCFR iterations per CPU-second: the walk on the numba kernel beside the Python engine's, paired.

    python benchmarks/hu_mccfr_speed.py [--variant le_truc] [--options '{}'] [--iterations 2000] [--turns 5]

Both solvers live in one process, fresh, same seed, and take turns of ``--iterations`` iterations each (loop,
numba, numba, loop, ...), so the load of a shared machine falls on both alike; each turn of the numba walk is
divided by the loop's turn beside it and the median of those ratios is the figure (with its range). One thread,
CPU-seconds of this process (``time.process_time``), compiles before the clock. Both tables grow as they go
(the loop's is slower to fill its tables, so later turns favour neither). Also prints decision nodes per CPU-second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from agents.cfr.hu_mccfr import HeadsUpMCCFR
from agents.cfr.hu_mccfr_numba import NumbaHeadsUpMCCFR
from truc_env import make_rules


def turn(solver, n: int) -> tuple[float, float]:
    """(iterations, decision nodes) per CPU-second over ``n`` iterations."""
    nodes, t0 = solver.nodes, time.process_time()
    solver.iterate(n)
    dt = time.process_time() - t0
    return n / dt, (solver.nodes - nodes) / dt


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="le_truc")
    ap.add_argument("--options", default="{}", help="rule options (JSON)")
    ap.add_argument("--iterations", type=int, default=2000, help="iterations per turn")
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rules = make_rules(args.variant, **json.loads(args.options))
    loop, numba = HeadsUpMCCFR(rules, seed=args.seed), NumbaHeadsUpMCCFR(rules, seed=args.seed)
    numba.iterate(0)  # compiled (or loaded from the cache) before the clock
    ratios = []
    for t in range(args.turns):
        order = [(loop, "loop"), (numba, "numba")]
        got = {}
        for solver, name in order if t % 2 == 0 else order[::-1]:
            got[name] = turn(solver, args.iterations)
        ratios.append(got["numba"][0] / got["loop"][0])
        print(f"turn {t}: loop {got['loop'][0]:,.0f} it/CPU-s ({got['loop'][1]:,.0f} nodes), numba "
              f"{got['numba'][0]:,.0f} it/CPU-s ({got['numba'][1]:,.0f} nodes): {ratios[-1]:.1f}x")
    print(f"{args.variant} {args.options}: numba / loop, median of {args.turns} turns: "
          f"{statistics.median(ratios):.1f}x (range {min(ratios):.1f}-{max(ratios):.1f}); "
          f"{numba.infosets:,} and {loop.infosets:,} information sets at the end")


if __name__ == "__main__":
    main()
