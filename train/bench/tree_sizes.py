"""Public-tree sizes, build times and memory of one heads-up hand (0-0, dealer 0), and optionally a solve.

    python -m train.bench.tree_sizes truco_paulista --options '{"players": 2}' --vira-rank 4 [--solve]
    python -m train.bench.tree_sizes truco_mineiro --options '{"players": 2}'
    python -m train.bench.tree_sizes put [--python-unfold] [--max-gb 12]

Steps, each timed (wall and CPU seconds) with the process's peak resident memory after it: the memo of
situations (``tree.expand_situations``), the unfolding into flat arrays (``agents.cfr.unfold``: the memo as
arrays, the Python memo dropped, then ``unfold_memo`` without ``trans1``; or ``tree.unfold`` with
``--python-unfold``), ``PublicTree.size()``, and with ``--solve`` the
solver's set-up (``PublicTreeSolver(tree, "dcfr", dtype="float32")``), ``--iterations`` iterations and
one ``evaluate()`` (exact best response). Before each big allocation the script estimates its bytes
from counts it already has and stops (printing the estimate) past ``--max-gb``; run one at a time,
under ``/usr/bin/time -v`` for the kernel's own peak.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import time

from train.algos.cfr import solver_counts


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def rss_gb() -> float:
    """Resident memory now (Linux), the peak elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**30
    except OSError:
        return peak_gb()


class Steps:
    def __init__(self):
        self.rows = []

    def run(self, name, fn, *args, **kw):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*args, **kw)
        self.rows.append((name, time.perf_counter() - w, time.process_time() - c, peak_gb()))
        print(f"  {name}: {self.rows[-1][1]:.1f} s wall, {self.rows[-1][2]:.1f} s CPU, peak {self.rows[-1][3]:.2f} GB",
              flush=True)
        return out

    def table(self):
        print("| step | wall s | CPU s | peak RSS GB |\n|---|---:|---:|---:|")
        for name, w, c, p in self.rows:
            print(f"| {name} | {w:.1f} | {c:.1f} | {p:.2f} |")


def main():
    from agents.cfr import tree as T
    from agents.cfr.unfold import memo_arrays, unfold_memo
    from truc_env.game.rules import make_rules

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variant")
    ap.add_argument("--options", default="{}", help="make_rules options as JSON")
    ap.add_argument("--vira-rank", default=None, help="Paulista: the subgame of the vira of this rank")
    ap.add_argument("--abstraction", default="strength")
    ap.add_argument("--python-unfold", action="store_true", help="tree.unfold (Python lists) instead of unfold_fast")
    ap.add_argument("--solve", action="store_true")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--max-gb", type=float, default=13.0, help="skip a step whose estimated peak passes this")
    args = ap.parse_args()

    rules = make_rules(args.variant, **json.loads(args.options))
    vira = None
    if rules.vira:
        subs = T.vira_subgames(rules)
        pick = [s for s in subs if args.vira_rank is None or rules.family.rank_of(s[0]) == args.vira_rank]
        vira = pick[0][0]
        print(f"{args.variant} {args.options}: vira {rules.family.format(vira)} (weight {pick[0][1]}), "
              f"{len(subs)} subgames")
    else:
        print(f"{args.variant} {args.options}")
    steps = Steps()
    ab, root, sit_actor, sit_edges = steps.run("expand (memo)", T.expand_situations, rules, 0, (0, 0),
                                               args.abstraction, vira)
    situations = len(sit_actor)
    print(f"  memo: {situations:,} situations, {sum(len(e) for e in sit_edges):,} edges; "
          f"{ab.n_classes} classes, {ab.n_hands} hands")
    if args.python_unfold:
        arrays = steps.run("unfold (Python)", T.unfold, ab, root, sit_actor, sit_edges)
    else:
        memo = steps.run("memo to arrays", memo_arrays, root, sit_actor, sit_edges)
        del sit_actor, sit_edges  # the Python memo: 1-2 GB in the 40-card games
        gc.collect()
        print(f"  resident after dropping the Python memo: {rss_gb():.2f} GB")
        n_nodes, n_e = memo.sizes()
        est = memo.tree_bytes() / 2**30
        print(f"  public nodes {n_nodes:,}, edges {n_e:,} (+ STUCK leaves); arrays about {est:.1f} GB "
              f"(+ {8 * (n_e + n_nodes) / 2**30:.1f} GB for trans1)")
        if est + rss_gb() > args.max_gb:
            print(f"  stop: unfolding needs about {est + rss_gb():.1f} GB > --max-gb {args.max_gb}")
            steps.table()
            return
        arrays = steps.run("unfold_memo", unfold_memo, ab, memo, trans1=False)
        del memo
    fields = set(T.PublicTree.__dataclass_fields__)
    tree = T.PublicTree(rules=rules, abstraction=ab, dealer=0, score=(0, 0), W=ab.deal_weights(),
                        situations=situations, vira=-1 if vira is None else vira,
                        **{k: v for k, v in arrays.items() if k in fields})
    del arrays
    size = steps.run("size()", tree.size)
    need = solver_counts(tree)
    size["edges"] = tree.n_actions
    size["solver_slots"] = need["slots"]
    size["solver_GB_est"] = round(need["bytes"] / 2**30, 2)
    print("| " + " | ".join(size) + " |\n|" + "---:|" * len(size))
    print("| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in size.values()) + " |")
    if args.solve:
        from agents.cfr.solver import PublicTreeSolver

        if rss_gb() + need["bytes"] / 2**30 > args.max_gb:
            print(f"  no solve: the solver needs about {need['bytes'] / 2**30:.1f} GB more "
                  f"(peak would be {rss_gb() + need['bytes'] / 2**30:.1f} GB > --max-gb {args.max_gb})")
        else:
            solver = steps.run("solver set-up", PublicTreeSolver, tree, algorithm="dcfr", dtype="float32")
            steps.run(f"{args.iterations} DCFR iterations", solver.iterate, args.iterations)
            ev = steps.run("evaluate (best response)", solver.evaluate)
            print(f"  exploitability after {args.iterations}: {ev['exploitability']:.4f}")
    steps.table()


if __name__ == "__main__":
    main()
