"""The learned best response's settings on the real heads-up Le Truc, against the committed networks of
known exact exploitability (docs/approx_exploitability.md, "Settings on the real game").

    python scripts/approx_br_real_sweep.py --jobs 16 --steps 1500000 --out-dir runs/br_real_sweep

Every (target, setting) pair is one process (``--jobs`` at a time, one torch thread each, each with a numba
cache of its own so that no two write one file): ``approx_br.approx_exploitability`` with the setting's
changes over ``approx_br.BR_SETTINGS``, ``--steps`` learner steps, ``--eval-deals`` fresh duplicate deals,
seed ``--seed``. Each finished pair is written at once as ``OUT/<target>__<setting>.json`` (atomically), so
an interrupted sweep keeps what it finished and a rerun skips it; ``OUT/summary.json`` gathers them with
the fraction of the exact figure each recovers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# exact exploitability (points per hand, one hand from 0-0, the strength abstraction) of the committed
# networks: `truc exploitability --agent SPEC` (models/README.md, docs/results/exploitability.md)
TARGETS = {"league": ("net:models/ppo_le_truc_league.pt", 2.471), "mmd": ("net:models/mmd_le_truc.pt", 0.729),
           "distilled": ("net:le_truc", 0.0923)}
SETTINGS = {
    "default": {},
    "lr3e-3": {"learning_rate": 3e-3},
    "warm_lr1e-3": {"init_from": "agent"},
    "warm_lr3e-4": {"init_from": "agent", "learning_rate": 3e-4},
    "ent0.01": {"ent_coef": 0.01},
    "big_batch_lr3e-3": {"steps_per_update": 8192, "num_envs": 256, "learning_rate": 3e-3},
    "info_state": {"features": "info_state+strength"},
    "w512_ent0.01": {"hidden": [512, 512], "ent_coef": 0.01},
}


def one(target: str, setting: str, steps: int, eval_deals: int, seed: int, out_dir: str) -> dict:
    os.environ["TRUC_CACHE_DIR"] = os.path.join(out_dir, "cache", f"{target}__{setting}")
    from train.eval import approx_br
    from truc_env.game.rules import make_rules
    from truc_env.io.atomic import atomic_write_text

    spec, exact = TARGETS[target]
    r = approx_br.approx_exploitability(spec, make_rules("le_truc"), steps, seed=seed, eval_deals=eval_deals,
                                        overrides=SETTINGS[setting], log=lambda m: None)
    row = {"target": target, "spec": spec, "exact": exact, "setting": setting, "overrides": SETTINGS[setting],
           "bound": r["exploitability_lower_bound"], "ci95": r["ci95"], "recovered": r["exploitability_lower_bound"]
           / exact, "side0": r["br_side0"], "side1": r["br_side1"], "steps": r["br_steps"], "seed": seed,
           "eval_deals": eval_deals, "train_cpu_s": r["train_cpu_seconds"], "measure_cpu_s": r["measure_cpu_seconds"]}
    atomic_write_text(os.path.join(out_dir, f"{target}__{setting}.json"), json.dumps(row, indent=1))
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--targets", nargs="*", default=["league", "mmd"], choices=sorted(TARGETS))
    p.add_argument("--settings", nargs="*", default=list(SETTINGS), choices=list(SETTINGS))
    p.add_argument("--steps", type=int, default=1_500_000, help="learner steps of each best response")
    p.add_argument("--eval-deals", type=int, default=4000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out-dir", default="runs/br_real_sweep")
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    pairs = [(t, s) for s in args.settings for t in args.targets
             if not os.path.exists(os.path.join(args.out_dir, f"{t}__{s}.json"))]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(one, t, s, args.steps, args.eval_deals, args.seed, args.out_dir): (t, s) for t, s in pairs}
        for f in as_completed(futures):
            t, s = futures[f]
            try:
                r = f.result()
                print(f"{t:8s} {s:18s} {r['bound']:+.3f} ({r['ci95'][0]:+.3f} .. {r['ci95'][1]:+.3f}) "
                      f"{100 * r['recovered']:4.0f}%  sides {r['side0']:+.3f} / {r['side1']:+.3f}  "
                      f"{r['train_cpu_s']:.0f}+{r['measure_cpu_s']:.0f} CPU s", flush=True)
            except Exception as e:  # noqa: BLE001 - one failed pair must not lose the others
                print(f"{t:8s} {s:18s} failed: {type(e).__name__}: {e}", flush=True)
    rows = []
    for name in sorted(os.listdir(args.out_dir)):
        if name.endswith(".json") and "__" in name:
            with open(os.path.join(args.out_dir, name)) as f:
                rows.append(json.load(f))
    from truc_env.io.atomic import atomic_write_text

    atomic_write_text(os.path.join(args.out_dir, "summary.json"), json.dumps({"rows": rows}, indent=1))


if __name__ == "__main__":
    main()
