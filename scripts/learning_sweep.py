"""The PPO/MMD settings sweep of docs/results/learning_algorithms.md ("Why MMD stalled"), on the shrunk heads-up Le Truc.

Each setting is ``configs/ppo/small_mmd.yaml`` with ``--set`` overrides (``SETTINGS``), run for the
given seeds at one learner-step budget, measured exactly after every ``exploitability_every`` updates,
last iterate and reach-weighted average of the measured iterates (``average: linear``). A run already
in ``--runs`` is read, not run again. Writes the curves of every run as one CSV (``--csv``, atomically)
and prints one line per (setting, seed): exploitability at the budget, last iterate and average, and
the run's CPU seconds (``time.process_time()``, measurements included).

    python scripts/learning_sweep.py --only base,alpha0 --seeds 0
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from train.algos.psro import write_csv  # noqa: E402
from truc_env.io.atomic import atomic_write_text  # noqa: E402

BASE = "configs/ppo/small_mmd.yaml"
BUDGET = ["total_steps=245760", "exploitability_every=2", "average=linear"]
SETTINGS = {
    "base": [],  # the committed MMD settings (alpha 0.5 -> 0.1), longer, with the average
    "ppo": ["algorithm=ppo"],  # plain PPO, the same budget, with the average
    "alpha0": ["magnet_coef_end=0.0"],  # the magnet's weight annealed to zero
    "alpha_low": ["magnet_coef=0.1", "magnet_coef_end=0.0"],  # a weaker magnet throughout
    "many_updates": ["steps_per_update=1024", "num_envs=16", "exploitability_every=8", "magnet_coef_end=0.0"],
    "slow_lr": ["learning_rate=3.0e-4", "update_epochs=8", "magnet_coef_end=0.0"],
    "raw_adv": ["norm_adv=false", "reward_scale=1.0", "magnet_coef_end=0.0"],
    "no_ent": ["ent_coef=0.0", "magnet_coef_end=0.0"],
    # the flat observation keeps the count and last side of the raises, not when they came: two information
    # sets of the tree can look alike to the network; info_state adds the hand's decision history
    "info_state": ["features=info_state", "magnet_coef=0.1", "magnet_coef_end=0.0"],
    # round 2, from alpha_low (the best of round 1)
    "long": ["magnet_coef=0.1", "magnet_coef_end=0.0", "total_steps=983040", "exploitability_every=8"],
    "fast_lr": ["magnet_coef=0.1", "magnet_coef_end=0.0", "learning_rate=3.0e-3"],
}
COLUMNS = ("setting", "seed", "update", "global_step", "exploitability", "avg_exploitability", "run_cpu_seconds")


def run_setting(name: str, seed: int, runs: str) -> list[dict]:
    """Run (or read) one setting for one seed; its curve as rows of ``COLUMNS``."""
    from train.algos.ppo import PPOConfig, train

    out = os.path.join(runs, f"{name}_s{seed}")
    cpu_file = os.path.join(out, "sweep_cpu_seconds.txt")
    if not os.path.exists(cpu_file):
        overrides = BUDGET + SETTINGS[name] + [f"seed={seed}", f"name={name}_s{seed}", f"out_dir={runs}",
                                               "progress=false", "plot=false"]
        cpu0 = time.process_time()
        train(PPOConfig.from_yaml(BASE, overrides))
        atomic_write_text(cpu_file, f"{time.process_time() - cpu0:.2f}\n")
    cpu = float(open(cpu_file).read())
    with open(os.path.join(out, "exploitability.csv")) as f:
        return [{"setting": name, "seed": seed, "update": int(r["update"]), "global_step": int(r["global_step"]),
                 "exploitability": float(r["exploitability"]), "avg_exploitability": float(r["avg_exploitability"]),
                 "run_cpu_seconds": cpu} for r in csv.DictReader(f)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default="runs/learning_sweep")
    p.add_argument("--only", default="", help="comma-separated settings (default: all)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--csv", default="", help="write every run found in --runs as one CSV here")
    args = p.parse_args(argv)
    only = [k for k in args.only.split(",") if k] or list(SETTINGS)
    bad = [k for k in only if k not in SETTINGS]
    if bad:
        p.error(f"--only: unknown setting(s) {', '.join(bad)}; the settings are {', '.join(SETTINGS)}")
    for name in only:
        for seed in args.seeds:
            rows = run_setting(name, seed, args.runs)
            last = rows[-1]
            print(f"{name} seed {seed}: {last['global_step']:,} steps, last iterate {last['exploitability']:.3f}, "
                  f"average {last['avg_exploitability']:.3f}, {last['run_cpu_seconds']:.0f} CPU s", flush=True)
    if args.csv:
        rows = []
        for name in SETTINGS:
            for seed in range(10):
                if os.path.exists(os.path.join(args.runs, f"{name}_s{seed}", "sweep_cpu_seconds.txt")):
                    rows += run_setting(name, seed, args.runs)
        write_csv(args.csv, rows, COLUMNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
