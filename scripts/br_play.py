"""Kept learned best responses measured as they sample and greedily, on the same fresh duplicate deals.

    python scripts/br_play.py --pair runs/br/league/br/policy.pt net:models/ppo_le_truc_league.pt [--pair ...] \
        [--variant le_truc] [--options JSON] [--deals 10000] [--seed 1] [--out docs/results/data/approx_le_truc_br_play.json]

Each ``--pair`` is a best response kept by ``truc exploitability --approx --br-dir DIR`` (``DIR/br/policy.pt``)
and the agent it was trained against. Both plays are measured by :func:`train.eval.approx_br.measure_value` on
the deals of ``--seed`` (pick one the response was not measured on before), so the greedy − sampled gap is paired
by deal and its 95% interval is over deals.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from train.config import parse_options
from train.eval import stats
from train.eval.approx_br import measure_value
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_write_text


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", nargs=2, action="append", required=True, metavar=("POLICY", "AGENT"))
    ap.add_argument("--variant", default="le_truc")
    ap.add_argument("--options", default="{}", help="the rule options, as JSON (those the responses were trained for)")
    ap.add_argument("--deals", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rules = make_rules(args.variant, **parse_options(args.options))
    rows = []
    for policy, agent in args.pair:
        if not os.path.isfile(policy):
            ap.error(f"{policy}: no such best response (keep one with truc exploitability --approx --br-dir DIR)")
        plays = {play: measure_value(f"greedy:ppo:{policy}" if play == "greedy" else f"ppo:{policy}", agent, rules,
                                     args.deals, args.seed) for play in ("sample", "greedy")}
        gap = stats.mean_ci(np.subtract(plays["greedy"]["per_deal"], plays["sample"]["per_deal"]))
        row = {"policy": policy, "agent": agent, "gap_greedy_minus_sample": [gap["mean"], gap["lo"], gap["hi"]]}
        for play, v in plays.items():
            row[play] = {k: v[k] for k in ("value", "lo", "hi", "side0", "side1", "deals", "eval_seed")}
        rows.append(row)
        print(f"{agent}: sampled {row['sample']['value']:.3f} ({row['sample']['lo']:.3f} … {row['sample']['hi']:.3f}), "
              f"greedy {row['greedy']['value']:.3f} ({row['greedy']['lo']:.3f} … {row['greedy']['hi']:.3f}), "
              f"greedy − sampled {gap['mean']:+.3f} ({gap['lo']:+.3f} … {gap['hi']:+.3f})", flush=True)
    if args.out:
        atomic_write_text(args.out, json.dumps({"variant": args.variant, "deals": args.deals, "seed": args.seed,
                                                "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
