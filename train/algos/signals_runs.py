"""The PPO runs of a partner-signalling experiment (``configs/signals/experiments.yaml``).

An experiment file lists base PPO configs (each with or without the signal channel) and the seeds to
train each with; run ``<name>_s<seed>`` goes to ``{out_dir}/{name}_s{seed}/``. Runs whose
``policy.pt`` exists are not trained again, so an interrupted experiment continues where it stopped
(an unfinished run resumes from its checkpoint). Training runs in worker processes, one core each.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np

from train import config
from train.analysis.signals import (
    LEAK_DIFFS,
    analyze,
    convention_table,
    cross_play,
    fmt_ci,
    leak,
    leak_intercepts,
    leak_text,
    play_hands,
    plot_cross_play,
    save_figure,
    summary_text,
)
from train.analysis.signals_controls import over_runs, silent_rules
from train.eval.stats import mean_ci
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_write_text

# the definition of the per-run measurements: a cached analysis of another one is measured again
# (2: shuffled is the partner's misreading of the team's own tokens, issue 33; before, a legal re-draw)
CONTROLS = 2


@dataclass
class Run:
    config: str  # base PPO config
    seed: int
    name: str  # run name: <base name>_s<seed>
    out_dir: str
    variant: str
    options: dict
    channel: bool
    twin: str | None = None  # the no-channel config whose run at the same seed is this run's twin
    init_from: str | None = None  # the policy this run starts from (PPO's init_from at this seed)

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
    twin: str | None = None  # a channel config's no-channel twin config (one of runs); None: found by its Rules


@dataclass
class ExperimentAnalysis:
    """The ``analysis`` block: the opponents, deals and intercept sweep of the measurements."""

    KIND = "signals analysis"
    against: str = "heuristic:honest"
    deals: int = 300
    sweep: list = field(default_factory=lambda: [0.0, 0.25, 0.5, 0.75, 1.0])
    out: str = "runs/signals/analysis"
    influence: int = 400  # receiver decisions re-queried for the causal influence, per team
    per_seed: bool = False  # analyse each run on its own (one worker each) and pool the gaps over seeds
    crossplay: bool = True  # cross-play among the seeds of each channel config
    crossplay_deals: int = 0  # duplicate deals per cross-play cell (k x k cells per config); 0: ``deals``
    full: bool = True  # per_seed: every metric per run; false: the points with and without the channel only


@dataclass
class ExperimentLeak:
    """The ``leak`` block: the team measured against each seed's eavesdropper and its deaf twin
    (:func:`train.analysis.signals.leak`), instead of the ``analysis``."""

    KIND = "signals leak"
    team: str = ""
    team_options: dict | None = None  # the options the team was trained for (None: the game's, at intercept 0)
    eavesdropper: str = ""  # the PPO config of the eavesdropper's runs (one of ``runs``)
    twin: str = ""  # the PPO config of its deaf twin's runs (one of ``runs``)
    deals: int = 2000
    seed: int = 1
    cross: bool = True  # also the eavesdropper at intercept 0 and the twin at intercept 1
    sweep: list = field(default_factory=list)  # intercepts the eavesdropper also plays at: the leak curve
    out: str = "runs/signals/leak"


@dataclass
class Experiment:
    """A partner-signalling experiment file."""

    KIND = "signals experiment"
    workers: int = 2
    seeds: list = field(default_factory=lambda: [1, 2, 3])
    runs: list = field(default_factory=list)
    analysis: dict = field(default_factory=dict)
    leak: dict | None = None


ExperimentRun.SCHEMA = {"config": config.STR, "seeds": config.Setting("list", items=config.SEED, none=True),
                        "channel": config.BOOL, "twin": config.Setting("str", none=True)}
ExperimentAnalysis.SCHEMA = {"against": config.STR, "deals": config.Int(1, 10**7),
                             "sweep": config.List(config.Float(0.0, 1.0)), "out": config.STR,
                             "influence": config.Int(0, 10**7), "per_seed": config.BOOL, "crossplay": config.BOOL,
                             "crossplay_deals": config.Int(0, 10**7), "full": config.BOOL}
ExperimentLeak.SCHEMA = {"team": config.STR, "team_options": config.Setting("dict", none=True),
                         "eavesdropper": config.STR, "twin": config.STR, "deals": config.Int(1, 10**7),
                         "seed": config.SEED, "cross": config.BOOL, "sweep": config.List(config.Float(0.0, 1.0)),
                         "out": config.STR}
Experiment.SCHEMA = {"workers": config.WORKERS, "seeds": config.List(config.SEED, min_len=1, unique=True),
                     "runs": config.List(config.DICT), "analysis": config.DICT,
                     "leak": config.Setting("dict", none=True)}


def load_experiment(path: str, overrides=()) -> dict:
    """The experiment file as a dict, checked; ``runs`` expanded into one :class:`Run` per seed."""
    from train.algos.ppo import PPOConfig
    from train.algos.warm_start import init_path

    exp = config.load(Experiment, path, overrides, what="experiment")
    seeds = exp.seeds
    runs = []
    entries = []
    for i, raw in enumerate(exp.runs):
        entry = config.build(ExperimentRun, raw, f"{path}: runs[{i}]")
        base = config.load(PPOConfig, entry.config, what="PPO config")
        entries.append((entry, make_rules(base.variant, **base.options)))
        for seed in entry.seeds or seeds:
            runs.append(Run(entry.config, seed, f"{base.name}_s{seed}", base.out_dir, base.variant, base.options,
                            entry.channel, init_from=init_path(base.init_from, seed) if base.init_from else None))
    twins = find_twins(path, entries)
    for r in runs:
        r.twin = twins.get(r.config)
    analysis = config.build(ExperimentAnalysis, exp.analysis, f"{path}: analysis")
    # seed-major order: an experiment cut short still has every config at the first seeds
    runs = sorted(runs, key=lambda r: (seeds.index(r.seed) if r.seed in seeds else len(seeds), runs.index(r)))
    out = {"workers": exp.workers, "seeds": seeds, "runs": runs, "analysis": asdict(analysis)}
    if exp.leak is not None:
        leak_cfg = config.build(ExperimentLeak, exp.leak, f"{path}: leak")
        listed = {r.config for r in runs}
        for what in ("eavesdropper", "twin"):
            if getattr(leak_cfg, what) not in listed:
                raise TrucError(f"{path}: leak.{what} is {getattr(leak_cfg, what)!r}, not one of the "
                                         f"configs of runs: {sorted(listed)}")
        if not leak_cfg.team:
            raise TrucError(f"{path}: leak.team is empty; give the team's agent spec (ppo:PATH)")
        out["leak"] = asdict(leak_cfg)
    return out


def find_twins(path: str, entries: list) -> dict[str, str]:
    """Each channel config's no-channel twin among the experiment's runs: the entry's ``twin`` (checked:
    a listed config trained for the same Rules with the channel off) or, without one, the only listed
    config that is."""
    silent_keys = {e.config: r.key for e, r in entries if is_silent(r)}
    out = {}
    for e, rules in entries:
        if is_silent(rules):
            if e.twin:
                raise TrucError(f"{path}: {e.config} has no channel, so it has no no-channel twin; remove its twin key")
            continue
        want = silent_rules(rules).key
        if e.twin:
            if e.twin not in silent_keys:
                raise TrucError(f"{path}: the twin of {e.config} is {e.twin!r}, not one of the no-channel configs of "
                                f"runs: {sorted(silent_keys) or 'none'}; list it in runs (channel: false)")
            if silent_keys[e.twin] != want:
                raise TrucError(f"{path}: twin {e.twin} is trained for other rules than {e.config} with the channel off "
                                f"(signals mode 'none'{', instructions off' if rules.options.get('instructions') else ''},"
                                " every other option the same)")
            out[e.config] = e.twin
            continue
        found = [c for c, k in silent_keys.items() if k == want]
        if len(found) == 1:
            out[e.config] = found[0]
    return out


def is_silent(rules) -> bool:
    """No channel and no open hands: a team that can be another's no-channel twin."""
    return rules.signals.mode == "none" and not rules.signals.open_hands


def _train_one(run: Run, steps: int | None, time_limit: float | None) -> str:
    import torch

    from train.algos.ppo import main as ppo_main

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
    """Train every run of the experiment that has no ``policy.pt`` yet; returns the runs with one.

    A run that starts from another run's policy (``init_from``) waits for it: the runs are trained in
    waves, each of the runs whose source is not still to be trained in this call."""
    todo = [r for r in exp["runs"] if not os.path.exists(r.policy) and (not only or r.name in only)]
    n = config.worker_count(int(workers or exp.get("workers", 2)))
    for wave in training_waves(todo):
        print(f"training {len(wave)} run(s), {n} at a time: {', '.join(r.name for r in wave)}", flush=True)
        with ProcessPoolExecutor(max_workers=n) as pool:
            futures = {pool.submit(_train_one, r, steps, time_limit): r for r in wave}
            for fut, r in futures.items():
                try:
                    fut.result()
                    print(f"trained {r.name}", flush=True)
                except Exception as e:  # one failed run must not lose the others
                    print(f"run {r.name} failed: {e!r}", flush=True)
    return [r for r in exp["runs"] if os.path.exists(r.policy)]


def training_waves(todo: list[Run]) -> list[list[Run]]:
    """``todo`` in waves: each run after the run whose policy it starts from (``init_from``), if that one
    is in ``todo`` too; the order of ``todo`` kept within a wave."""
    waves = []
    while todo:
        pending = {os.path.normpath(r.policy) for r in todo}
        wave = [r for r in todo if r.init_from is None or os.path.normpath(r.init_from) not in pending]
        if not wave:
            raise TrucError("the runs' init_from policies form a cycle: " + ", ".join(r.name for r in todo))
        waves.append(wave)
        todo = [r for r in todo if r not in wave]
    return waves


def run_experiment(path: str, steps: int | None = None, train: bool = True, deals: int | None = None,
                   img_dir: str = "docs/results/img", log=print, overrides=()) -> dict:
    """Train the experiment's runs (unless ``train=False``), then analyse them.

    Per base config with the channel: every metric of :func:`train.analysis.signals.analyze` for each seed's
    team, and cross-play among the seeds. Per base config without it: the team's points per hand
    against the same opponents. Writes ``{analysis.out}/<config name>/`` and ``experiment.json``, and
    copies the PNGs to ``{img_dir}/signals_<config name>_*.png``.
    """
    exp = load_experiment(path, overrides)
    if train:
        train_runs(exp, steps)
    if "leak" in exp:
        return run_leak(exp, deals, log, img_dir)
    ana = exp["analysis"]
    suffix, out = opponent_suffix(path, ana, overrides)
    ana = {**ana, "out": out}
    out_root = ana["out"]
    deals = int(deals or ana.get("deals", 300))
    against = ana.get("against", "heuristic:honest")
    sweep = tuple(ana.get("sweep", (0.0, 0.25, 0.5, 0.75, 1.0)))
    groups: dict[str, list[Run]] = {}
    for r in exp["runs"]:
        if os.path.exists(r.policy):
            groups.setdefault(r.config, []).append(r)
    results = {"experiment": path, "against": against, "deals": deals, "configs": {}}
    if ana.get("per_seed"):
        results.update(analyse_per_seed(groups, ana, deals, int(exp.get("workers", 2)), log,
                                        img_prefix=os.path.join(img_dir, experiment_family(path)),
                                        img_suffix=suffix))
        _write_json(os.path.join(out_root, "experiment.json"), results)
        return results
    jobs = [(config, runs, against, deals, sweep, out_root, img_dir, suffix) for config, runs in groups.items()]
    with ProcessPoolExecutor(max_workers=config.worker_count(int(exp.get("workers", 2)))) as pool:
        for (base, entry, text) in pool.map(_analyse_config, jobs):
            log(text)
            results["configs"][base] = entry
    _write_json(os.path.join(out_root, "experiment.json"), results)
    return results


def results_file(results: dict, path: str, note: str) -> str:
    """Write a study's results for the docs to cite: ``{"note": ..., "study": experiment.json}`` with each
    config's per-deal points left out, and a leak study's (``docs/results/data/signals_*.json``;
    ``scripts/signals_table.py`` reads a study's)."""
    import copy

    study = copy.deepcopy(results)
    study.pop("_points", None)  # a leak study's per-deal points
    for c in study.get("configs", {}).values():
        c.pop("_per_deal", None)
    _write_json(path, {"note": note, "study": study}, setting="--results-file")
    return path


def _write_json(path: str, data: dict, setting: str = "analysis.out") -> None:
    import json

    config.output_folder(os.path.dirname(path) or ".", setting)
    atomic_write_text(path, json.dumps(data, indent=1, default=float))


def config_label(path: str) -> str:
    """The short name of a base config: ``configs/signals/ppo_X.yaml`` or ``<family>_ppo_X.yaml`` -> ``X``."""
    name = os.path.splitext(os.path.basename(path))[0]
    return re.sub(r"^(?:signals_)?(?:[a-z]+_)?ppo_", "", name)  # the 0.1 flat names began signals_


def opponent_suffix(path: str, ana: dict, overrides=()) -> tuple[str, str]:
    """``(suffix, out)``: the suffix is ``""`` when the analysis plays the opponent the experiment file
    names, else ``_<opponent>`` (``--set analysis.against=...``), so that the figures of another opponent
    are written beside the file's own, not over them; ``out``, the results folder, gets it too unless
    ``analysis.out`` was set on the command line as well."""
    if not overrides:
        return "", ana["out"]
    written = load_experiment(path)["analysis"]
    if ana["against"] == written["against"]:
        return "", ana["out"]
    suffix = "_" + re.sub(r"[^a-z0-9]+", "_", ana["against"].split(":")[-1].lower()).strip("_")
    return suffix, ana["out"] + suffix if ana["out"] == written["out"] else ana["out"]


def experiment_family(path: str) -> str:
    """The figures' prefix of an experiment file: ``configs/signals/mmd_le_truc_4p.yaml`` -> ``signals_mmd``
    (so that the MMD runs' figures do not overwrite the plain ones, ``signals_conv_*``)."""
    m = re.match(r"(?:signals_)?([a-z]+)(?=_)", os.path.basename(path))  # the 0.1 flat names began signals_
    return f"signals_{m.group(1)}" if m else "signals_conv"


def analyse_per_seed(groups: dict[str, list[Run]], ana: dict, deals: int, workers: int, log=print,
                     img_prefix: str | None = None, img_suffix: str = "") -> dict:
    """Each run analysed on its own (a worker per run) on the same duplicate deals, then pooled.

    Per channel run: every metric of :func:`train.analysis.signals.analyze` except cross-play, written to
    ``{out}/<run name>/``. Per config: the channel - muted and channel - shuffled gaps of each seed,
    pooled two ways: over deals for these teams (the per-deal gap averaged over the seeds, a t
    interval over deals) and over seeds for the training procedure (a t interval over the seed means).
    A config without the channel is compared with the channel configs of the same variant: the
    channel team's points minus the twin's, seed-averaged, paired by deal. With ``crossplay``, the
    seeds of each channel config are also cross-played (reported in the config's entry) on
    ``crossplay_deals`` duplicate deals per cell (0: ``deals``).
    """
    twins = {r.config: r.twin for runs in groups.values() for r in runs if r.twin}
    jobs = [(r, ana, deals) for runs in groups.values() for r in runs]
    xdeals = int(ana.get("crossplay_deals") or deals)
    cross = [(base, runs, ana, xdeals) for base, runs in groups.items()
             if ana.get("crossplay") and runs[0].channel and len(runs) > 1]
    per_run: dict[str, dict] = {}
    crossplay: dict[str, dict] = {}
    with ProcessPoolExecutor(max_workers=config.worker_count(workers)) as pool:
        # the cross-plays first: each is one worker's k x k cells, the longest jobs
        xfutures = {job[0]: pool.submit(_crossplay_config, job) for job in cross}
        futures = [pool.submit(_analyse_run, j) for j in jobs]
        for fut in futures:
            name, entry = fut.result()
            per_run[name] = entry
            log(f"{name}: " + ("; ".join(f"{k} {fmt_ci(v)}" for k, v in entry["summary"].items())))
        for base, fut in xfutures.items():
            crossplay[config_label(base)] = fut.result()
    configs: dict[str, dict] = {}
    for base, runs in groups.items():
        label = config_label(base)
        entries = [per_run[r.name] for r in runs]
        pts = {k: np.array([e["points"][k] for e in entries]) for k in entries[0]["points"]}
        c = {"variant": runs[0].variant, "options": runs[0].options, "channel": runs[0].channel,
             "runs": [r.name for r in runs], "per_seed": {r.name: per_run[r.name]["summary"] for r in runs},
             "conventions": {r.name: per_run[r.name].get("convention") for r in runs},
             "points": {k: mean_ci(v.mean(axis=0)) for k, v in pts.items()}, "_per_deal": pts}
        c["seeds"] = [r.seed for r in runs]
        c["oracle"] = make_rules(runs[0].variant, **runs[0].options).signals.open_hands
        if runs[0].channel:
            for gap, other in (("channel_minus_muted", "muted"), ("channel_minus_shuffled", "shuffled")):
                if other not in pts:
                    continue
                d = pts["channel"] - pts[other]  # seeds x deals
                c[gap] = {"over_deals": mean_ci(d.mean(axis=0)),
                          "over_seeds": over_runs(d.mean(axis=1), what=f"{label}: {gap} pooled")}
        if label in crossplay:
            c["cross_play"] = crossplay[label]
        configs[label] = c
    for base in groups:
        twin = twins.get(base)
        if twin in groups:
            pair_with_twin(configs[config_label(base)], configs[config_label(twin)], config_label(twin))
    for c in configs.values():
        c["_per_deal"] = {k: v.tolist() for k, v in c["_per_deal"].items()}
    log(per_seed_text(configs))
    if img_prefix:
        for label, c in configs.items():
            if c["channel"] or "oracle_minus_twin" in c:
                plot_per_seed(label, c, f"{img_prefix}_{label}{img_suffix}", ana["against"])
            if "cross_play" in c:
                plot_cross_play(c["cross_play"], f"{img_prefix}_{label}{img_suffix}_crossplay.png",
                                f"{label}: cross-play of {len(c['runs'])} seeds vs {ana['against']}")
    return {"configs": configs}


def pair_with_twin(c: dict, tc: dict, twin_label: str) -> None:
    """Channel config ``c`` against its no-channel twin config ``tc``, on the same deals: per seed
    (paired by deal), pooled over deals, and over runs, the runs as the units: paired by seed (the
    seeds both trained) and as two groups (Welch). Written to ``c["channel_minus_twin"]``, or for a team
    that sees its partner's hand (``signals.open_hands``: the oracle bound) ``c["oracle_minus_twin"]``."""
    gap = "oracle_minus_twin" if c.get("oracle") else "channel_minus_twin"
    ch, tw = c["_per_deal"]["channel"], tc["_per_deal"]["channel"]  # runs x deals
    both = [s for s in c["seeds"] if s in tc["seeds"]]
    i, j = [c["seeds"].index(s) for s in both], [tc["seeds"].index(s) for s in both]
    d = ch[i] - tw[j]
    c[gap] = {
        "twin": twin_label, "seeds": both,
        "per_seed": {str(s): mean_ci(d[k]) for k, s in enumerate(both)},
        "over_deals": mean_ci(d.mean(axis=0)),
        "paired_by_seed": over_runs(ch[i].mean(axis=1), tw[j].mean(axis=1), paired=True,
                                    what=f"{gap.replace('_minus_', ' - ')} pooled"),
        "welch_over_runs": over_runs(ch.mean(axis=1), tw.mean(axis=1), what=f"{gap.replace('_minus_', ' - ')} pooled")}
    for s in both:
        name = next(n for n in c["runs"] if n.endswith(f"_s{s}"))
        c["per_seed"][name][gap] = c[gap]["per_seed"][str(s)]


def plot_per_seed(label: str, c: dict, prefix: str, against: str) -> list[str]:
    """``PREFIX_conventions.png`` (each seed's P(signal | hand class)) and ``PREFIX_gaps.png`` (each
    seed's channel - muted gap and the two pooled intervals) of one channel config."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    names = [n for n in c["runs"] if c["conventions"].get(n)]
    if names:
        fig, axes = plt.subplots(1, len(names), figsize=(1.2 + 2.6 * len(names), 3.2), squeeze=False)
        for ax, n in zip(axes[0], names):
            conv = c["conventions"][n]
            counts = np.array(conv["counts"], dtype=float)
            rows = counts.sum(axis=1, keepdims=True)
            share = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
            ax.imshow(share, cmap="viridis", vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(range(len(conv["tokens"])), conv["tokens"], fontsize=7)
            ax.set_yticks(range(len(conv["rows"])), conv["rows"], fontsize=7)
            for i in range(share.shape[0]):
                for j in range(share.shape[1]):
                    if share[i, j] >= 0.05:
                        ax.text(j, i, f"{share[i, j]:.2f}", ha="center", va="center", fontsize=6,
                                color="black" if share[i, j] > 0.6 else "white")
            ax.set_title(n.rsplit("_", 1)[-1], fontsize=8)
            ax.set_xlabel("signal")
        fig.suptitle(f"{label}: P(signal | sender's hand class), per seed", fontsize=9)
        paths.append(save_figure(fig, f"{prefix}_conventions.png"))
        plt.close(fig)
    gaps = [g for g in ("channel_minus_shuffled", "channel_minus_twin", "oracle_minus_twin", "channel_minus_muted")
            if any(g in c["per_seed"][n] for n in c["runs"])]
    names = [n.rsplit("_", 1)[-1] for n in c["runs"]] + ["pooled, deals", "pooled, runs"]
    if gaps:
        fig, ax = plt.subplots(figsize=(5.6, 0.7 + 0.42 * len(names)))
        for k, g in enumerate(gaps):
            pooled = c.get(g) or {}
            cis = [c["per_seed"][n].get(g) for n in c["runs"]]
            cis += [pooled.get("over_deals"), pooled.get("paired_by_seed", pooled.get("over_seeds"))]
            for i, ci in enumerate(cis):
                if ci is None or not np.isfinite(ci["lo"]):
                    continue
                ax.errorbar([ci["mean"]], [i + (k - (len(gaps) - 1) / 2) * 0.22],
                            xerr=[[ci["mean"] - ci["lo"]], [ci["hi"] - ci["mean"]]], fmt="o", ms=4, color=f"C{k}",
                            capsize=2, label=g.replace("_minus_", " - ") if i == 0 else None)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.axvline(0, color="grey", lw=0.7)
        ax.invert_yaxis()
        ax.legend(fontsize=7)
        ax.set_xlabel(f"points per hand vs {against} (95% CI; pooled over runs: the runs as the units)", fontsize=8)
        ax.set_title(f"{label}: what the learned channel is worth, per seed", fontsize=9)
        paths.append(save_figure(fig, f"{prefix}_gaps.png"))
        plt.close(fig)
    return paths


def _analyse_run(job) -> tuple[str, dict]:
    """One run's analysis (a worker process): the summary and per-deal points of each condition.

    Kept in ``{out}/<run name>/`` (``summary.json``, or ``points.json`` without the channel) and
    reused when the policy is older than it and the opponents and deals are the same, so that finished
    runs can be analysed while others still train."""
    import json

    run, ana, deals = job
    folder = os.path.join(ana["out"], run.name)
    cached = os.path.join(folder, "summary.json" if run.channel else "points.json")
    if os.path.exists(cached) and os.path.getmtime(cached) > os.path.getmtime(run.policy):
        with open(cached) as f:
            old = json.load(f)
        t = old["teams"][0] if "teams" in old else old
        if (old.get("against") == ana["against"] and old.get("deals") == deals and old.get("seed", 0) == 0
                and old.get("controls") == CONTROLS):
            if not run.channel or "gap" not in t:
                return run.name, {"points": t["_points"], "summary": {"points": mean_ci(t["_points"]["channel"])}}
            return run.name, {"points": t["_points"], "summary": {"points": t["points"]["channel"], **t["gap"]},
                              "convention": t["convention"]}
    import torch

    torch.set_num_threads(1)
    team = f"ppo:{run.policy}"
    rules = make_rules(run.variant, **run.options)
    if not run.channel or not ana.get("full", True):
        # the points alone (and, with the channel, muted and shuffled: the gaps, without the information metrics)
        ch = play_hands(rules, team, ana["against"], deals, seed=0)
        per_deal = {"channel": ch.points.tolist()}
        summary = {"points": mean_ci(ch.points)}
        out = {"team": team, "against": ana["against"], "deals": deals, "seed": 0, "controls": CONTROLS}
        if run.channel:
            mu = play_hands(rules, team, ana["against"], deals, seed=0, condition="muted").points
            sh = play_hands(rules, team, ana["against"], deals, seed=0, condition="shuffled",
                            bank=ch.tokens or [0]).points
            per_deal["muted"], per_deal["shuffled"] = mu.tolist(), sh.tolist()
            summary["channel_minus_muted"] = mean_ci(ch.points - mu)
            summary["channel_minus_shuffled"] = mean_ci(ch.points - sh)
            L = layout_of(rules)
            out["convention"] = convention_table(ch.events, L.signal_tokens, "strength")
            out["convention_top"] = convention_table(ch.events, L.signal_tokens, "top")
            out["gap"] = {k: summary[k] for k in ("channel_minus_muted", "channel_minus_shuffled")}
            out["points"] = {"channel": summary["points"], "muted": mean_ci(mu), "shuffled": mean_ci(sh)}
            cached = os.path.join(folder, "summary.json")
        _write_json(cached, {**out, "_points": per_deal})
        return run.name, {"points": per_deal, "summary": summary, "convention": out.get("convention")}
    rep = analyze(run.variant, run.options, [team], ana["against"], deals, seed=0, sweep=tuple(ana["sweep"]),
                  influence=int(ana["influence"]), crossplay=False, out=folder, log=lambda m: None)
    t = rep["teams"][0]
    summary = {"points": t["points"]["channel"], **t["gap"]}
    return run.name, {"points": t["_points"], "summary": summary, "convention": t["convention"]}


def _crossplay_config(job) -> dict:
    """Cross-play among one channel config's seeds (a worker process)."""
    base, runs, ana, deals = job
    import torch

    torch.set_num_threads(1)
    rules = make_rules(runs[0].variant, **runs[0].options)
    return {**cross_play(rules, [f"ppo:{r.policy}" for r in runs], ana["against"], deals, seed=0), "deals": deals}


def per_seed_text(configs: dict) -> str:
    """The pooled table of :func:`analyse_per_seed`, as text."""
    lines = []
    for label, c in configs.items():
        lines.append(f"== {label} ({'channel' if c['channel'] else 'no channel'}): "
                     f"points {fmt_ci(c['points']['channel'])} (seed-averaged, per deal)")
        for gap in ("channel_minus_muted", "channel_minus_shuffled"):
            if gap in c:
                lines.append(f"  {gap}: over deals {fmt_ci(c[gap]['over_deals'])}, "
                             f"over seeds {fmt_ci(c[gap]['over_seeds'])}")
        for gap in ("channel_minus_twin", "oracle_minus_twin"):
            v = c.get(gap)
            if v:
                lines.append(f"  {gap} ({v['twin']}, seeds {v['seeds']}): over deals {fmt_ci(v['over_deals'])}, "
                             f"over runs paired by seed {fmt_ci(v['paired_by_seed'])}, "
                             f"Welch over runs {fmt_ci(v['welch_over_runs'])}")
        if "cross_play" in c:
            x = c["cross_play"]
            ratio = "undefined (SP <= 0)" if x["xp_sp_ratio"] is None else f"{x['xp_sp_ratio']:.3f}"
            lines.append(f"  cross-play: SP {fmt_ci(x['self_play'])}, XP {fmt_ci(x['cross_play'])}, "
                         f"XP - SP {fmt_ci(x['xp_minus_sp'])}, XP/SP {ratio}")
    return "\n".join(lines)


def _analyse_config(job) -> tuple[str, dict, str]:
    """One base config's analysis (a worker process): its name, its entry, and the text to print."""
    config, runs, against, deals, sweep, out_root, img_dir, suffix = job
    import torch


    torch.set_num_threads(1)
    base = os.path.splitext(os.path.basename(config))[0].removeprefix("signals_ppo_")
    r0 = runs[0]
    teams = [f"ppo:{r.policy}" for r in runs]
    entry = {"variant": r0.variant, "options": r0.options, "channel": r0.channel, "runs": [r.name for r in runs]}
    if r0.channel:
        rep = analyze(r0.variant, r0.options, teams, against, deals, seed=0, sweep=sweep,
                      out=os.path.join(out_root, base), img_prefix=os.path.join(img_dir, f"signals_{base}{suffix}"),
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


def run_leak(exp: dict, deals: int | None = None, log=print, img_dir: str = "docs/results/img") -> dict:
    """The ``leak`` block: per seed, :func:`train.analysis.signals.leak` of the team against that seed's
    eavesdropper and twin (a worker each, the same duplicate deals), then the cost pooled over deals
    (per deal, averaged over the seeds) and over seeds. Writes ``{leak.out}/leak.json``; with a
    ``sweep``, the leak curve too: ``{leak.out}/leak_curve.png``, copied to
    ``{img_dir}/signals_<out folder name>_curve.png``."""
    lk = exp["leak"]
    deals = int(deals or lk["deals"])
    by_seed: dict[int, dict[str, Run]] = {}
    for r in exp["runs"]:
        for what in ("eavesdropper", "twin"):
            if r.config == lk[what] and os.path.exists(r.policy):
                by_seed.setdefault(r.seed, {})[what] = r
    pairs = {s: p for s, p in sorted(by_seed.items()) if len(p) == 2}
    if not pairs:
        raise TrucError("leak: no seed has both a trained eavesdropper and a trained twin; train the runs first")
    jobs = [(lk, p["eavesdropper"], p["twin"], deals) for p in pairs.values()]
    with ProcessPoolExecutor(max_workers=config.worker_count(int(exp.get("workers", 2)))) as pool:
        per_seed = dict(zip(pairs, pool.map(_leak_one, jobs)))
    for s, res in per_seed.items():
        log(f"== seed {s}\n" + leak_text(res))
    keys = list(next(iter(per_seed.values()))["_points"])
    pts = {k: np.array([res["_points"][k] for res in per_seed.values()]) for k in keys}  # seeds x deals
    pooled = {"points": {k: mean_ci(v.mean(axis=0)) for k, v in pts.items()}}
    for name, (a, b) in LEAK_DIFFS.items():
        if a in pts and b in pts:
            d = pts[a] - pts[b]
            pooled[name] = {"over_deals": mean_ci(d.mean(axis=0)), "over_seeds": mean_ci(d.mean(axis=1))}
    if lk["sweep"]:
        pooled["curve"] = [{"intercept": q, "cost": {"over_deals": mean_ci((pts["twin@0"] - pts[f"eavesdropper@{q:g}"])
                                                                          .mean(axis=0))}}
                           for q in leak_intercepts(pts)]
    text = [f"== pooled over {len(per_seed)} seed(s) {sorted(per_seed)}, {deals} duplicate deals each"]
    for k, c in pooled["points"].items():
        text.append(f"  team points per hand vs {k:16s} {fmt_ci(c)}")
    for name in LEAK_DIFFS:
        if name in pooled:
            text.append(f"  {name}: over deals {fmt_ci(pooled[name]['over_deals'])}, "
                        f"over seeds {fmt_ci(pooled[name]['over_seeds'])}")
    for row in pooled.get("curve", []):
        text.append(f"  curve: intercept {row['intercept']:.2f}: cost over deals {fmt_ci(row['cost']['over_deals'])}")
    log("\n".join(text))
    results = {"team": lk["team"], "deals": deals, "seed": lk["seed"], "pooled": pooled,
               "per_seed": {str(s): {k: v for k, v in res.items() if k != "_points"} for s, res in per_seed.items()},
               "_points": {str(s): res["_points"] for s, res in per_seed.items()}}
    _write_json(os.path.join(lk["out"], "leak.json"), results)
    if lk["sweep"]:
        pngs = [os.path.join(lk["out"], "leak_curve.png")]
        if img_dir:
            pngs.append(os.path.join(img_dir, f"signals_{os.path.basename(os.path.normpath(lk['out']))}_curve.png"))
        plot_leak_curve(results, pngs)
    return results


def plot_leak_curve(results: dict, paths: list[str]) -> None:
    """The leak curve: what the eavesdropper takes from the team (twin@0 - eavesdropper@q, paired by deal)
    as the intercept q goes from 0 to 1, per seed and pooled over deals, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    series = [(f"seed {s}", r["curve"], lambda row: row["cost"]) for s, r in results["per_seed"].items()]
    series.append(("pooled over deals", results["pooled"]["curve"], lambda row: row["cost"]["over_deals"]))
    for i, (label, rows, cost) in enumerate(series):
        xs = [row["intercept"] + 0.008 * (i - len(series) / 2) for row in rows]
        c = [cost(row) for row in rows]
        ax.errorbar(xs, [v["mean"] for v in c], yerr=[[v["mean"] - v["lo"] for v in c], [v["hi"] - v["mean"] for v in c]],
                    marker="o", capsize=3, lw=2.2 if label.startswith("pooled") else 1.0, label=label)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("intercept (probability the opponents see each signal)")
    ax.set_ylabel("cost to the team (points/hand)")
    ax.set_title("what an intercepted convention costs", fontsize=9)
    ax.legend(fontsize=7)
    for path in paths:  # each written atomically
        save_figure(fig, path)
    plt.close(fig)



def _leak_one(job) -> dict:
    """One seed's leak measurement (a worker process)."""
    lk, eaves, twin, deals = job
    import torch

    torch.set_num_threads(1)
    rules = make_rules(eaves.variant, **eaves.options)
    team_rules = None if lk["team_options"] is None else make_rules(eaves.variant, **lk["team_options"])
    return leak(rules, lk["team"], f"ppo:{eaves.policy}", f"ppo:{twin.policy}", deals, seed=lk["seed"],
                team_rules=team_rules, eavesdropper_rules=make_rules(eaves.variant, **eaves.options),
                twin_rules=make_rules(twin.variant, **twin.options), cross=lk["cross"], sweep=lk["sweep"],
                log=lambda m: None)
