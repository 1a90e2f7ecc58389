"""The PPO runs of a partner-signalling experiment (``configs/signals_experiments.yaml``).

An experiment file lists base PPO configs (each with or without the signal channel) and the seeds to
train each with; run ``<name>_s<seed>`` goes to ``{out_dir}/{name}_s{seed}/``. Runs whose
``policy.pt`` exists are not trained again, so an interrupted experiment continues where it stopped
(an unfinished run resumes from its checkpoint). Training runs in worker processes, one core each.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field

from truc_env.rules import make_rules

from . import config
from .signals import analyze, play_hands, summary_text
from .stats import mean_ci


@dataclass
class Run:
    config: str  # base PPO config
    seed: int
    name: str  # run name: <base name>_s<seed>
    out_dir: str
    variant: str
    options: dict
    channel: bool

    @property
    def policy(self) -> str:
        return os.path.join(self.out_dir, self.name, "policy.pt")

    @property
    def checkpoint(self) -> str:
        return os.path.join(self.out_dir, self.name, "checkpoint.pt")


@dataclass
class ExperimentRun:
    """One entry of ``runs``: a base PPO config trained at the experiment's (or its own) seeds."""

    KIND = "signals run"
    config: str = ""
    seeds: list | None = None
    channel: bool = True


@dataclass
class ExperimentAnalysis:
    """The ``analysis`` block: the opponents, deals and intercept sweep of the measurements."""

    KIND = "signals analysis"
    against: str = "heuristic:honest"
    deals: int = 300
    sweep: list = field(default_factory=lambda: [0.0, 0.25, 0.5, 0.75, 1.0])
    out: str = "runs/signals/analysis"


@dataclass
class Experiment:
    """A partner-signalling experiment file."""

    KIND = "signals experiment"
    workers: int = 2
    seeds: list = field(default_factory=lambda: [1, 2, 3])
    runs: list = field(default_factory=list)
    analysis: dict = field(default_factory=dict)


ExperimentRun.SCHEMA = {"config": config.STR, "seeds": config.Setting("list", items=config.SEED, none=True),
                        "channel": config.BOOL}
ExperimentAnalysis.SCHEMA = {"against": config.STR, "deals": config.Int(1, 10**7),
                             "sweep": config.List(config.Float(0.0, 1.0)), "out": config.STR}
Experiment.SCHEMA = {"workers": config.WORKERS, "seeds": config.List(config.SEED, min_len=1, unique=True),
                     "runs": config.List(config.DICT), "analysis": config.DICT}


def load_experiment(path: str, overrides=()) -> dict:
    """The experiment file as a dict, checked; ``runs`` expanded into one :class:`Run` per seed."""
    from train.ppo import PPOConfig

    exp = config.load(Experiment, path, overrides, what="experiment")
    seeds = exp.seeds
    runs = []
    for i, raw in enumerate(exp.runs):
        entry = config.build(ExperimentRun, raw, f"{path}: runs[{i}]")
        base = config.load(PPOConfig, entry.config, what="PPO config")
        for seed in entry.seeds or seeds:
            runs.append(Run(entry.config, seed, f"{base.name}_s{seed}", base.out_dir, base.variant, base.options,
                            entry.channel))
    analysis = config.build(ExperimentAnalysis, exp.analysis, f"{path}: analysis")
    # seed-major order: an experiment cut short still has every config at the first seeds
    runs = sorted(runs, key=lambda r: (seeds.index(r.seed) if r.seed in seeds else len(seeds), runs.index(r)))
    return {"workers": exp.workers, "seeds": seeds, "runs": runs, "analysis": asdict(analysis)}


def _train_one(run: Run, steps: int | None, time_limit: float | None) -> str:
    import torch

    from train.ppo import main as ppo_main

    torch.set_num_threads(1)
    overrides = {"seed": run.seed, "name": run.name, "progress": False, "tensorboard": False}
    if steps:
        overrides["total_steps"] = int(steps)
    if time_limit:
        overrides["time_limit_minutes"] = float(time_limit)
    ppo_main(run.config, resume=os.path.exists(run.checkpoint), overrides=overrides)
    return run.policy


def train_runs(exp: dict, steps: int | None = None, time_limit: float | None = None, workers: int | None = None,
               only: list[str] | None = None) -> list[Run]:
    """Train every run of the experiment that has no ``policy.pt`` yet; returns the runs with one."""
    todo = [r for r in exp["runs"] if not os.path.exists(r.policy) and (not only or r.name in only)]
    n = config.worker_count(int(workers or exp.get("workers", 2)))
    if todo:
        print(f"training {len(todo)} run(s), {n} at a time: {', '.join(r.name for r in todo)}", flush=True)
        with ProcessPoolExecutor(max_workers=n) as pool:
            futures = {pool.submit(_train_one, r, steps, time_limit): r for r in todo}
            for fut, r in futures.items():
                try:
                    fut.result()
                    print(f"trained {r.name}", flush=True)
                except Exception as e:  # one failed run must not lose the others
                    print(f"run {r.name} failed: {e!r}", flush=True)
    return [r for r in exp["runs"] if os.path.exists(r.policy)]


def run_experiment(path: str, steps: int | None = None, train: bool = True, deals: int | None = None,
                   img_dir: str = "docs/img", log=print, overrides=()) -> dict:
    """Train the experiment's runs (unless ``train=False``), then analyse them.

    Per base config with the channel: every metric of :func:`train.signals.analyze` for each seed's
    team, and cross-play among the seeds. Per base config without it: the team's points per hand
    against the same opponents. Writes ``{analysis.out}/<config name>/`` and ``experiment.json``, and
    copies the PNGs to ``{img_dir}/signals_<config name>_*.png``.
    """
    import json

    exp = load_experiment(path, overrides)
    if train:
        train_runs(exp, steps)
    ana = exp["analysis"]
    out_root = ana.get("out", "runs/signals/analysis")
    deals = int(deals or ana.get("deals", 300))
    against = ana.get("against", "heuristic:honest")
    sweep = tuple(ana.get("sweep", (0.0, 0.25, 0.5, 0.75, 1.0)))
    groups: dict[str, list[Run]] = {}
    for r in exp["runs"]:
        if os.path.exists(r.policy):
            groups.setdefault(r.config, []).append(r)
    results = {"experiment": path, "against": against, "deals": deals, "configs": {}}
    jobs = [(config, runs, against, deals, sweep, out_root, img_dir) for config, runs in groups.items()]
    with ProcessPoolExecutor(max_workers=config.worker_count(int(exp.get("workers", 2)))) as pool:
        for (base, entry, text) in pool.map(_analyse_config, jobs):
            log(text)
            results["configs"][base] = entry
    config.output_folder(out_root, "analysis.out")
    with open(os.path.join(out_root, "experiment.json.tmp"), "w") as f:
        json.dump(results, f, indent=1, default=float)
    os.replace(os.path.join(out_root, "experiment.json.tmp"), os.path.join(out_root, "experiment.json"))
    return results


def _analyse_config(job) -> tuple[str, dict, str]:
    """One base config's analysis (a worker process): its name, its entry, and the text to print."""
    config, runs, against, deals, sweep, out_root, img_dir = job
    import torch


    torch.set_num_threads(1)
    base = os.path.splitext(os.path.basename(config))[0].removeprefix("signals_ppo_")
    r0 = runs[0]
    teams = [f"ppo:{r.policy}" for r in runs]
    entry = {"variant": r0.variant, "options": r0.options, "channel": r0.channel, "runs": [r.name for r in runs]}
    if r0.channel:
        rep = analyze(r0.variant, r0.options, teams, against, deals, seed=0, sweep=sweep,
                      out=os.path.join(out_root, base), img_prefix=os.path.join(img_dir, f"signals_{base}"),
                      log=lambda m: None)
        entry["summary"] = os.path.join(out_root, base, "summary.json")
        return base, entry, f"== {base}\n" + summary_text(rep)
    rules = make_rules(r0.variant, **r0.options)
    entry["points"] = {}
    lines = [f"== {base} (no channel): points per hand vs {against}"]
    for t in teams:
        entry["points"][t] = mean_ci(play_hands(rules, t, against, deals, seed=0).points)
        c = entry["points"][t]
        lines.append(f"  {t}: {c['mean']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]")
    return base, entry, "\n".join(lines)
