"""The learning-algorithm benchmark of docs/results/learning_algorithms.md ("Learning algorithms side by side"), run from the configs.

Every row of the table is one config run for several seeds (``ROWS``): PPO and MMD
(``configs/ppo/small*.yaml``, ``truc train ppo``), PSRO (``configs/psro/small.yaml``, deterministic),
OpenSpiel's NFSP (``train.algos.openspiel_nfsp``, the options and budget of ``configs/learn_small_nfsp.yaml``'s
PPO-style file) and CFR+ for scale (``configs/cfr/small.yaml``). A run whose curve is already in
``--runs`` is read, not run again (``--force`` reruns). Writes, atomically, one CSV of every measurement
(``--csv``: row, seed, learner steps or oracle calls, exploitability of the last iterate and of the
average policy where one is kept, the run's CPU seconds) and the figure (``--png``: the median over the
seeds and their range), and prints the table's rows (median, range, per seed).

    python scripts/learning_benchmark.py                        # every row, seeds 0 1 2
    python scripts/learning_benchmark.py --only mmd_tuned --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from train.algos.ppo_plots import save_figure  # noqa: E402
from train.algos.psro import write_csv  # noqa: E402
from truc_env.io.atomic import atomic_write_text  # noqa: E402

# key, label, kind, config; PPO-kind rows are measured in learner steps, the tabular ones in oracle calls
ROWS = (
    ("ppo", "PPO self-play", "ppo", "configs/ppo/small.yaml"),
    ("mmd", "MMD, uniform magnet", "ppo", "configs/ppo/small_mmd.yaml"),
    ("mmd_moving", "MMD, moving magnet", "ppo", "configs/ppo/small_mmd_moving.yaml"),
    ("mmd_tuned", "MMD, tuned (this sweep)", "ppo", "configs/ppo/small_mmd_tuned.yaml"),
    ("mmd_small_steps", "MMD, small steps (clip 0.1, 8 epochs)", "ppo", "configs/ppo/small_mmd_small_steps.yaml"),
    ("nfsp", "OpenSpiel NFSP (average policy)", "nfsp", "configs/ppo/small.yaml"),
    ("psro", "PSRO, exact best-response oracle", "psro", "configs/psro/small.yaml"),
    ("cfr", "CFR+ (for scale)", "cfr", "configs/cfr/small.yaml"),
    ("mmd_full", "full-width MMD, tabular (last iterate)", "cfr", "configs/cfr/mmd_small.yaml"),
    ("mmd_full_net", "full-width MMD distilled into the network", "distill", "configs/distill/small_mmd.yaml"),
    ("mmd_full_net_descent", "the same, then exploitability descent", "distill",
     "configs/distill/small_mmd_descent.yaml"),
)
# the same tuned MMD and a CFR+ solve for scale on other shrunk games (``--game``; docs/results.md)
GAMES = {
    "le_truc": ("shrunk heads-up Le Truc (4 ranks, 2-card hands, 2 raises, no redeal)", ROWS),
    "put": ("shrunk heads-up Put (4 ranks, 2-card hands, 2 raises)", (
        ("mmd_tuned", "MMD, tuned", "ppo", "configs/ppo/small_mmd_tuned_put.yaml"),
        ("cfr", "CFR+ (for scale)", "cfr", "configs/cfr/small_put.yaml"),
        ("mmd_full", "full-width MMD, tabular (last iterate)", "cfr", "configs/cfr/mmd_small_put.yaml"))),
    "mineiro": ("shrunk heads-up clean-deck Truco Mineiro (4 ranks, 2-card hands, 2 raises)", (
        ("mmd_tuned", "MMD, tuned", "ppo", "configs/ppo/small_mmd_tuned_mineiro.yaml"),
        ("cfr", "CFR+ (for scale)", "cfr", "configs/cfr/small_mineiro.yaml"),
        ("mmd_full", "full-width MMD, tabular (last iterate)", "cfr", "configs/cfr/mmd_small_mineiro.yaml"))),
}
DETERMINISTIC = ("psro", "cfr")
ON_THE_TREE = ("psro", "cfr", "distill")  # plotted against oracle calls, iterations or distillation steps
COLUMNS = ("row", "seed", "x", "exploitability", "avg_exploitability", "run_cpu_seconds")


def read_csv(path: str) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def run_one(key: str, kind: str, cfg_path: str, seed: int, runs: str, force: bool) -> list[dict]:
    """Run (or read) one row's run for one seed; its measurements as rows of ``COLUMNS``."""
    out = os.path.join(runs, key if kind in DETERMINISTIC else f"{key}_s{seed}")
    curve = os.path.join(out, {"ppo": "exploitability.csv", "nfsp": "curve.csv", "psro": "curve.csv",
                               "cfr": "curve.csv", "distill": "curve.csv"}[kind])
    teacher_cpu = 0.0
    if kind == "distill":  # its teacher is the full-width MMD row's strategy: run (or read) it first
        run_one("mmd_full", "cfr", "configs/cfr/mmd_small.yaml", 0, runs, False)
        teacher_cpu = float(open(os.path.join(runs, "mmd_full", "benchmark_cpu_seconds.txt")).read())
    cpu_file = os.path.join(out, "benchmark_cpu_seconds.txt")
    if force or not os.path.exists(cpu_file):
        cpu0 = time.process_time()
        if kind == "ppo":
            from train.algos.ppo import PPOConfig, train

            cfg = PPOConfig.from_yaml(cfg_path, [f"seed={seed}", f"name={os.path.basename(out)}", f"out_dir={runs}",
                                                 "progress=false", "plot=false"])
            if force and os.path.isdir(out):
                import shutil

                shutil.rmtree(out)
            train(cfg)
        elif kind == "nfsp":
            from train.algos.openspiel_nfsp import run
            from train.algos.ppo import PPOConfig

            cfg = PPOConfig.from_yaml(cfg_path)
            run(cfg.options, steps=cfg.total_steps, seed=seed, eval_every=cfg.steps_per_update * cfg.exploitability_every,
                out=out, variant=cfg.variant, hidden=tuple(cfg.hidden), log=lambda msg: None)
        elif kind == "distill":
            from train import config
            from train.algos.distill import DistillConfig, run

            run(config.load(DistillConfig, cfg_path, [f"seed={seed}", f"out={out}",
                                                      f"teacher=cfr:{os.path.join(runs, 'mmd_full', 'strategy.npz')}"]),
                log=lambda msg: None)
        elif kind == "psro":
            from train import config
            from train.algos.psro import PSROConfig, run

            run(config.load(PSROConfig, cfg_path, [f"out={out}"]), log=lambda msg: None)
        else:
            from train.algos.cfr import main as cfr_main

            cfr_main(cfg_path, overrides=[f"out={out}"])
        atomic_write_text(cpu_file, f"{time.process_time() - cpu0:.2f}\n")
    cpu = float(open(cpu_file).read()) + teacher_cpu  # a distilled network's cost includes its teacher's
    rows = []
    for r in read_csv(curve):
        if r["exploitability"] == "":  # a distillation's log rows without a measurement
            continue
        x = r.get("global_step") or r.get("iteration") or r.get("step")
        avg = r.get("avg_exploitability", "")
        rows.append({"row": key, "seed": seed, "x": int(float(x)), "exploitability": float(r["exploitability"]),
                     "avg_exploitability": float(avg) if avg not in ("", None) else "", "run_cpu_seconds": cpu})
    return rows


def reported(rows: list[dict]) -> str:
    """The figure a row reports: the average policy where the run keeps one, else the last iterate."""
    return "avg_exploitability" if rows and rows[-1]["avg_exploitability"] != "" else "exploitability"


def summary_lines(rows: list[dict], table=ROWS) -> list[str]:
    """One markdown table row per benchmark row: the reported figure (the average policy where the run
    keeps one) and the last iterate at the budget, median (range) over the seeds, CPU s per run."""
    def spread(v):
        return f"**{np.median(v):.3f}** ({v.min():.3f} … {v.max():.3f})" if len(v) > 1 else f"**{v[0]:.3f}**"

    lines = []
    for key, label, kind, cfg_path in table:
        mine = [r for r in rows if r["row"] == key]
        if not mine:
            continue
        seeds = sorted({r["seed"] for r in mine})
        last = [[r for r in mine if r["seed"] == s][-1] for s in seeds]
        unit = {"psro": "oracle calls", "cfr": "iterations", "distill": "gradient steps"}.get(kind, "steps")
        budget = f"{int(np.median([r['x'] for r in last])):,} {unit}"
        cpu = np.median([r["run_cpu_seconds"] for r in last])
        it = np.array([r["exploitability"] for r in last])
        if reported(mine) == "avg_exploitability":
            avg = np.array([r["avg_exploitability"] for r in last])
            figures = f"{spread(avg)} | {spread(it)}"
        else:
            figures = f"{spread(it)} | —"
        lines.append(f"| {label} | {len(seeds) if kind not in DETERMINISTIC else 'deterministic'} | {budget} | "
                     f"{figures} | {cpu:.0f} | `{cfg_path}` |")
    return lines


def plot(rows: list[dict], path: str, table=ROWS, title: str = GAMES["le_truc"][0], uniform=None) -> None:
    """Median over the seeds (line) and range (band) of each row against learner steps / oracle calls;
    ``uniform``: [the uniform policy's exploitability] for its line (default: PSRO's first measurement)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5))
    for i, (key, label, kind, _) in enumerate(table):
        mine = [r for r in rows if r["row"] == key]
        if not mine:
            continue
        target = bx if kind in ON_THE_TREE else ax
        seeds = sorted({r["seed"] for r in mine})
        per = [[r for r in mine if r["seed"] == s] for s in seeds]
        n = min(len(p) for p in per)  # the same measurement schedule in every seed
        xs = np.median([[p[j]["x"] for j in range(n)] for p in per], axis=0)
        cols = [("avg_exploitability", "-", "average policy"), ("exploitability", ":", "last iterate")] \
            if reported(mine) == "avg_exploitability" else [("exploitability", "-", "")]
        for col, ls, what in cols:
            ys = np.array([[p[j][col] for j in range(n)] for p in per], dtype=float)
            name = f"{label}{', ' + what if what and ls == '-' else ''}" if ls == "-" else None
            target.plot(xs, np.median(ys, axis=0), ls=ls, color=f"C{i}", marker="." if ls == "-" else None, label=name)
            if len(seeds) > 1 and ls == "-":
                target.fill_between(xs, ys.min(axis=0), ys.max(axis=0), color=f"C{i}", alpha=0.15)
    if uniform is None:
        uniform = [r["exploitability"] for r in rows if r["row"] == "psro" and r["x"] == 0]  # PSRO starts uniform
    for a in (ax, bx):
        if uniform:
            a.axhline(uniform[0], color="grey", ls="--", lw=0.8, label="uniform policy")
    for a, xlabel, panel in ((ax, "learner steps", "sample-based learners: median of the seeds, range shaded; "
                              "dotted: last iterate"),
                             (bx, "PSRO oracle calls / CFR+, MMD iterations / distillation steps",
                              "methods on the public tree")):
        a.set_xlabel(xlabel)
        a.set_yscale("log")
        a.set_title(panel, fontsize=9)
        a.grid(alpha=0.3, which="both")
        a.legend(fontsize=7)
    ax.set_ylabel("exploitability (points per hand)")
    fig.suptitle(f"Exact exploitability, {title}")
    fig.tight_layout()
    save_figure(fig, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="le_truc", choices=sorted(GAMES),
                   help="which shrunk game's rows (default le_truc: the full table; others: tuned MMD and CFR+)")
    p.add_argument("--runs", default=None, help="folder of the runs, read again when present "
                   "(default runs/learning_benchmark, runs/learning_benchmark_GAME for the other games)")
    p.add_argument("--only", default="", help="comma-separated row keys (default: every row)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--nfsp-seeds", type=int, nargs="*", default=None, help="seeds of the NFSP row (default: --seeds)")
    p.add_argument("--csv", default=None, help="default docs/results/data/learning_small.csv (docs/results/data/learning_small_GAME.csv)")
    p.add_argument("--png", default=None, help="default docs/results/img/learning_small.png (docs/results/img/learning_small_GAME.png)")
    p.add_argument("--force", action="store_true", help="rerun runs whose results are present")
    args = p.parse_args(argv)
    title, table = GAMES[args.game]
    tail = "" if args.game == "le_truc" else f"_{args.game}"
    args.runs = args.runs or f"runs/learning_benchmark{tail}"
    args.csv = args.csv or f"docs/results/data/learning_small{tail}.csv"
    args.png = args.png or f"docs/results/img/learning_small{tail}.png"
    keys = [r[0] for r in table]
    only = [k for k in args.only.split(",") if k] or keys
    bad = [k for k in only if k not in keys]
    if bad:
        p.error(f"--only: unknown row(s) {', '.join(bad)}; the rows are {', '.join(keys)}")
    jobs = []
    for key, _, kind, cfg_path in table:
        if key in only:
            seeds = [0] if kind in DETERMINISTIC else (args.nfsp_seeds if kind == "nfsp" and args.nfsp_seeds is not None
                                                       else args.seeds)
            jobs += [(key, kind, cfg_path, s) for s in seeds]
    from tqdm import tqdm

    rows = []
    old = read_csv(args.csv) if os.path.exists(args.csv) else []
    for key, kind, cfg_path, seed in tqdm(jobs, desc="learning benchmark", unit="run"):
        rows += run_one(key, kind, cfg_path, seed, args.runs, args.force)
    # rows not run this time keep their committed measurements
    done = {(r["row"], r["seed"]) for r in rows}
    for r in old:
        if (r["row"], int(r["seed"])) not in done:
            rows.append({"row": r["row"], "seed": int(r["seed"]), "x": int(r["x"]),
                         "exploitability": float(r["exploitability"]),
                         "avg_exploitability": float(r["avg_exploitability"]) if r["avg_exploitability"] else "",
                         "run_cpu_seconds": float(r["run_cpu_seconds"])})
    order = {k: i for i, k in enumerate(keys)}
    rows.sort(key=lambda r: (order[r["row"]], r["seed"], r["x"]))
    write_csv(args.csv, rows, COLUMNS)
    uniform = None
    if "psro" not in keys:  # no PSRO row starting from the uniform policy: measure it on the MMD row's game
        from agents.players.random import RandomAgent
        from train.algos.ppo import PPOConfig
        from train.eval.exploitability import policy_exploitability
        from truc_env.game.rules import make_rules

        cfg = PPOConfig.from_yaml(next(c for _, _, kind, c in table if kind == "ppo"))
        uniform = [policy_exploitability(RandomAgent(), make_rules(cfg.variant, **cfg.options),
                                         log=lambda msg: None)["exploitability"]]
        print(f"uniform policy: {uniform[0]:.3f} points per hand")
    plot(rows, args.png, table, title, uniform)
    print("| algorithm | seeds | budget | average policy: median (range) | last iterate: median (range) | CPU s per run | config |")
    print("|---|---|---|---:|---:|---:|---|")
    print("\n".join(summary_lines(rows, table)))
    print(f"wrote {args.csv} and {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
