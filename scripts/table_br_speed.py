"""The learned best response against a ``table:`` strategy, its table on engine tables and on the batched engine.

    python scripts/table_br_speed.py --table runs/cfr_le_truc_redeal/strategy.npz --steps 200000 --turns 2 \
        --out docs/results/data/table_br_speed.json

The big-batch learner of docs/approx_exploitability.md (1,024 games, updates of 16,384 steps, 8 epochs, clip
0.1, step 1e-3 annealed, one torch thread), seed 0, the same budget with ``rollout: engine`` and with the
default (the table on the batched engine, ``agents.cfr.table_batch``), in turns. Per run: the CPU seconds of
the whole call (loading the strategy three times and measuring 2 deals included), the training's own CPU
seconds and its learner steps.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LEARNER = dict(num_envs=1024, steps_per_update=16384, update_epochs=8, clip_coef=0.1, learning_rate=0.001,
               anneal_lr=True, torch_threads=1)


def main(argv=None) -> dict:
    from train.eval import approx_br
    from truc_env.game.rules import make_rules
    from truc_env.io.atomic import atomic_open

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", required=True, help="a strategy file of heads-up le_truc or put (default options)")
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--turns", type=int, default=2)
    p.add_argument("--out")
    args = p.parse_args(argv)
    rules = make_rules(args.variant)
    runs = []
    for turn in range(args.turns):
        for rollout in ("engine", "auto"):
            t = time.process_time()
            r = approx_br.approx_exploitability(f"table:{args.table}", rules, args.steps, seed=0, eval_deals=2,
                                                overrides={**LEARNER, "rollout": rollout}, log=lambda *a: None)
            row = {"turn": turn, "rollout": r["br_settings"]["rollout"], "learner_steps": r["br_steps"],
                   "train_cpu_seconds": r["train_cpu_seconds"], "call_cpu_seconds": time.process_time() - t}
            row["steps_per_train_cpu_second"] = row["learner_steps"] / row["train_cpu_seconds"]
            runs.append(row)
            print(json.dumps(row), flush=True)
    out = {"table": args.table, "variant": args.variant, "budget": args.steps, "learner": LEARNER, "runs": runs}
    if args.out:
        with atomic_open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
