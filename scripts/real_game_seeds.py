"""One sampled learner on the real heads-up game over several seeds (docs/results/learning_algorithms.md,
"Small steps on the real game"): each seed's run of ``--config`` (``truc train ppo``, ``seed=S``, named
``<config name>_s<S>``), its exact exploitability curve, and their median.

A seed whose run has finished in ``--runs`` is read, not run again; an interrupted one is resumed from its
checkpoint. Writes, atomically, one CSV of every measurement (seed, update, learner steps, exploitability of
the last iterate, both best responses) and a figure (each seed, the median), and prints the end-of-run
figure of each seed with their median, the headline of item 4 of issue 32.

    python scripts/real_game_seeds.py                                   # configs/ppo/le_truc_mmd_small_steps.yaml, seeds 0 1 2
    python scripts/real_game_seeds.py --seeds 0 1 2 --jobs 2
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from train.algos.ppo_plots import save_figure  # noqa: E402
from train.algos.psro import write_csv  # noqa: E402

COLUMNS = ("seed", "update", "global_step", "exploitability", "br0", "br1")


def run_dir(cfg, seed: int, runs: str) -> str:
    return os.path.join(runs, f"{cfg.name}_s{seed}")


def finished(cfg, seed: int, runs: str) -> bool:
    """The run's last update measured (its curve ends at the budget)."""
    rows = read_curve(cfg, seed, runs)
    return bool(rows) and int(rows[-1]["update"]) >= cfg.num_updates


def read_curve(cfg, seed: int, runs: str) -> list[dict]:
    path = os.path.join(run_dir(cfg, seed, runs), "exploitability.csv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [{"seed": seed, **{k: r[k] for k in COLUMNS[1:]}} for r in csv.DictReader(f)]


def command(config: str, seed: int, runs: str, name: str) -> list[str]:
    resume = ["--resume"] if os.path.exists(os.path.join(runs, name, "checkpoint.pt")) else []
    return [sys.executable, "-m", "train.commands.cli", "train", "ppo", "--config", config, "--set", f"seed={seed}",
            "--set", f"name={name}", "--set", f"out_dir={runs}", *resume]


def plot(rows: list[dict], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    seeds = sorted({r["seed"] for r in rows})
    per = [[r for r in rows if r["seed"] == s] for s in seeds]
    for s, p in zip(seeds, per):
        ax.plot([float(r["global_step"]) for r in p], [float(r["exploitability"]) for r in p], lw=0.9, alpha=0.6,
                marker=".", label=f"seed {s}")
    n = min(len(p) for p in per)
    if len(seeds) > 1 and n:
        xs = np.median([[float(p[j]["global_step"]) for j in range(n)] for p in per], axis=0)
        ys = np.median([[float(p[j]["exploitability"]) for j in range(n)] for p in per], axis=0)
        ax.plot(xs, ys, color="k", lw=2, label="median of the seeds")
    ax.axhline(0.20, color="grey", ls="--", lw=0.8, label="issue 32's target (0.20)")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("exact exploitability, last iterate (points per hand)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)


def main(argv=None) -> int:
    from train.algos.ppo import PPOConfig

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="configs/ppo/le_truc_mmd_small_steps.yaml")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--runs", default="runs/real_game_seeds", help="folder of the runs, read again when present")
    p.add_argument("--jobs", type=int, default=1, help="seeds trained at once, each a process of its own")
    p.add_argument("--csv", default=None, help="default docs/results/data/<config name>.csv")
    p.add_argument("--png", default=None, help="default docs/results/img/<config name>.png")
    args = p.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        p.error("--seeds: each seed once")
    if args.jobs < 1:
        p.error("--jobs: at least 1")
    cfg = PPOConfig.from_yaml(args.config)
    if not cfg.exploitability_every:
        p.error(f"{args.config} measures no exploitability (exploitability_every: 0): nothing to report")
    args.csv = args.csv or f"docs/results/data/{cfg.name}.csv"
    args.png = args.png or f"docs/results/img/{cfg.name}.png"
    todo = [s for s in args.seeds if not finished(cfg, s, args.runs)]
    while todo:  # at most --jobs seeds at once; each logs to its run folder's train.log
        batch, todo = todo[:args.jobs], todo[args.jobs:]
        procs = []
        for s in batch:
            name = os.path.basename(run_dir(cfg, s, args.runs))
            os.makedirs(os.path.join(args.runs, name), exist_ok=True)
            log = open(os.path.join(args.runs, f"{name}.log"), "a")
            cmd = command(args.config, s, args.runs, name)
            print(f"training seed {s} ({' '.join(cmd[1:])})", flush=True)
            procs.append((s, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log))
        for s, proc, log in procs:
            if proc.wait() != 0:
                print(f"seed {s} failed (exit {proc.returncode}); its log: {log.name}", file=sys.stderr)
                return 1
            log.close()
    curves = {s: read_curve(cfg, s, args.runs) for s in args.seeds}
    rows = [r for s in args.seeds for r in curves[s]]
    write_csv(args.csv, rows, COLUMNS)
    plot(rows, args.png, f"{cfg.name}: heads-up {cfg.variant}, seeds {', '.join(map(str, args.seeds))}")
    ends = [float(curves[s][-1]["exploitability"]) for s in args.seeds]
    for s, e in zip(args.seeds, ends):
        print(f"seed {s}: {e:.3f} points per hand at the end of the run")
    print(f"median {np.median(ends):.3f} (range {min(ends):.3f} ... {max(ends):.3f}); "
          f"wrote {args.csv} and {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
