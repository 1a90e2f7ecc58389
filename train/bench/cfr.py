"""CFR benchmark: our public-tree CFR+ against OpenSpiel's Python ``CFRPlusSolver`` on one shrunk game.

    python -m train.bench.cfr [--options '{"ranks": 3, "hand_size": 1, "max_raises": 2, "redeal": false}']
                              [--iterations 10] [--target 0.1]

Both run CFR+ with alternating updates, regret matching+ and linear averaging on ``le_truc`` hands
from 0-0 (dealer 0); their iterates are the same (tests/test_cfr.py checks the exploitability to
1e-6), so the iterations to reach a target are the same and the time ratio is the per-iteration
ratio. Reported in the same run: set-up time (tree build / OpenSpiel's info-state table), seconds per
iteration, iterations per second, and the time each needs to reach ``--target`` points per hand.
"""

from __future__ import annotations

import argparse
import json
import time


def ours(options: dict, iterations: int, target: float) -> dict:
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree
    from truc_env import make_rules

    rules = make_rules("le_truc", **options)
    PublicTreeSolver(build_tree(make_rules("le_truc", ranks=2, hand_size=1, redeal=False))).iterate(2)  # compile
    t = time.perf_counter()
    tree = build_tree(rules)
    solver = PublicTreeSolver(tree, "cfr+")
    setup = time.perf_counter() - t
    curve = []
    reached = None
    while solver.iteration < max(iterations, 1) or (reached is None and solver.iteration < 100000):
        solver.iterate(1)
        e = solver.exploitability()
        curve.append(e)
        if reached is None and e <= target:
            reached = (solver.iteration, solver.seconds)
        if solver.iteration >= iterations and reached is not None:
            break
    return {"setup_s": setup, "s_per_iter": solver.seconds / solver.iteration, "curve": curve[:iterations],
            "iters_to_target": reached[0], "time_to_target_s": setup + reached[1], "size": tree.size()}


def openspiel(options: dict, iterations: int) -> dict:
    import pyspiel
    from open_spiel.python.algorithms import cfr, exploitability

    import truc_env.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(options)})
    t = time.perf_counter()
    solver = cfr.CFRPlusSolver(game)
    setup = time.perf_counter() - t
    spent = 0.0
    curve = []
    for _ in range(iterations):
        t = time.perf_counter()
        solver.evaluate_and_update_policy()
        spent += time.perf_counter() - t
        curve.append(exploitability.exploitability(game, solver.average_policy()))
    return {"setup_s": setup, "s_per_iter": spent / iterations, "curve": curve}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--options", default='{"ranks": 3, "hand_size": 1, "max_raises": 2, "redeal": false}')
    p.add_argument("--iterations", type=int, default=5, help="OpenSpiel iterations to time")
    p.add_argument("--target", type=float, default=0.1, help="exploitability target, points per hand")
    args = p.parse_args(argv)
    options = json.loads(args.options)
    a = ours(options, args.iterations, args.target)
    b = openspiel(options, args.iterations)
    same = max(abs(x - y) for x, y in zip(a["curve"], b["curve"]))
    os_time = b["setup_s"] + a["iters_to_target"] * b["s_per_iter"]
    out = {
        "game": {"variant": "le_truc", "options": options, **a["size"]},
        "ours": {k: a[k] for k in ("setup_s", "s_per_iter", "iters_to_target", "time_to_target_s")},
        "openspiel_cfr_plus": {"setup_s": b["setup_s"], "s_per_iter": b["s_per_iter"], "time_to_target_s": os_time},
        "max_exploitability_difference": same,
        "speedup_per_iteration": b["s_per_iter"] / a["s_per_iter"],
        "speedup_to_target": os_time / a["time_to_target_s"],
    }
    print(json.dumps(out, indent=2))
    print(f"CFR+ per iteration: ours {a['s_per_iter'] * 1e3:.2f} ms, OpenSpiel {b['s_per_iter'] * 1e3:.0f} ms "
          f"-> {out['speedup_per_iteration']:.0f}x; to exploitability {args.target}: ours "
          f"{a['time_to_target_s']:.2f}s, OpenSpiel {os_time:.1f}s -> {out['speedup_to_target']:.0f}x "
          f"(same iterates: max difference {same:.1e})")
    return out


if __name__ == "__main__":
    main()
