"""Heads-up ES-MCCFR beside OpenSpiel's own ``ExternalSamplingSolver`` on a tiny Le Truc, same iterations.

    python scripts/hu_mccfr_openspiel.py [--seeds 0 1 2] [--iterations 100 300 1000 3000 10000] \
        [--out docs/results/data/hu_mccfr_openspiel.json]

The game is the cross-check game of docs/cfr.md (3 ranks, 1-card hands, at most 1 raise, no redeal), played by
OpenSpiel through the ``python_truc`` binding. OpenSpiel's solver keys the concrete game (every suit apart) and
averages uniformly; ours keys strength classes and weights iteration t by t (and, for the like-for-like row,
uniformly), on the Python engine and (``ours, numba``, linear) walked on the batched engine's numba kernel. Every figure is OpenSpiel's own ``exploitability``; for ours it is also our exact measurement
(``export_strategy``), and the script checks that the two agree.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np


def main(argv=None) -> None:
    import pyspiel
    from open_spiel.python.algorithms import exploitability
    from open_spiel.python.algorithms import external_sampling_mccfr as os_es

    import truc_env.envs.openspiel_game  # noqa: F401  (registers python_truc)
    from agents.cfr.hu_mccfr import HeadsUpMCCFR
    from agents.cfr.hu_mccfr_numba import NumbaHeadsUpMCCFR
    from agents.cfr.openspiel_export import to_tabular_policy
    from agents.cfr.strategy import load_strategy
    from train.algos.hu_mccfr import export_strategy
    from truc_env import make_rules
    from truc_env.io.atomic import atomic_write_text

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--iterations", type=int, nargs="+", default=[100, 300, 1000, 3000, 10000])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    options = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}
    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(options)})
    rules = make_rules("le_truc", **options)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.npz")
        for seed in args.seeds:
            np.random.seed(seed)  # OpenSpiel's Python solver draws from numpy's global generator
            solvers = {"openspiel": os_es.ExternalSamplingSolver(game, os_es.AverageType.SIMPLE),
                       "ours, linear": HeadsUpMCCFR(rules, seed=seed),
                       "ours, uniform": HeadsUpMCCFR(rules, seed=seed, weighting="uniform"),
                       "ours, numba": NumbaHeadsUpMCCFR(rules, seed=seed)}
            solvers["ours, numba"].iterate(0)  # compiled (or loaded) before the clock
            cpu = dict.fromkeys(solvers, 0.0)
            done = 0
            for n in sorted(args.iterations):
                for name, s in solvers.items():
                    t = time.process_time()
                    if name == "openspiel":
                        for _ in range(n - done):
                            s.iteration()
                    else:
                        s.iterate(n - done)
                    cpu[name] += time.process_time() - t
                done = n
                for name, s in solvers.items():
                    if name == "openspiel":
                        e = exploitability.exploitability(game, s.average_policy())
                    else:
                        ours = export_strategy(s, path)["exploitability"]
                        e = exploitability.exploitability(game, to_tabular_policy(game, load_strategy(path)))
                        if abs(e - ours) > 1e-5:  # the file holds float32
                            raise SystemExit(f"OpenSpiel measures {e} where we measure {ours}")
                    rows.append({"seed": seed, "solver": name, "iterations": n, "exploitability": e,
                                 "cpu_seconds": cpu[name]})
                    print(f"seed {seed}  {name:14s} {n:>7,} iterations  exploitability {e:.4f}  {cpu[name]:.2f} CPU s")
    if args.out:
        atomic_write_text(args.out, json.dumps({"game": {"variant": "le_truc", "options": options},
                                                "rows": rows}, indent=1))
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
