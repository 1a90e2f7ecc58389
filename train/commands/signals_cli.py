"""The command ``truc analyze signals``: one analysis (:mod:`train.analysis.signals`) or a whole experiment
(:mod:`train.algos.signals_runs`, with ``--config``). It sits above both so that neither imports the other's
caller: signals_runs uses the analysis, the analysis knows nothing of experiments.
"""

from __future__ import annotations

import json
import os

from agents import is_network
from train import config
from train.algos.signals_runs import results_file, run_experiment
from train.analysis.signals import analyze, leak, leak_text, summary_text
from train.analysis.signals_checks import controls, controls_text
from train.analysis.signals_controls import check_twins
from train.commands import flags
from train.config import parse_options
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_write_text


def add_arguments(p) -> None:
    """The options of ``truc analyze signals``."""
    p.add_argument("--variant", help="a partnership variant (truco_paulista, le_truc_4p, ...)")
    p.add_argument("--options", default=None, help='variant options as JSON, e.g. \'{"signals": {"mode": "free"}}\'')
    p.add_argument("--team", action="append", default=[],
                   help="the team's agent spec (SPEC or SPEC+SPEC); repeat for cross-play among several teams")
    p.add_argument("--against", default="heuristic:honest", help="the opposing team's agent spec")
    p.add_argument("--eavesdropper", default=None,
                   help="leak: an opponent trained at intercept 1 (ppo:PATH); with --twin, measures what the team's "
                        "intercepted signals cost it instead of the analysis (docs/signals.md 'Leaks')")
    p.add_argument("--twin", default=None, help="leak: the eavesdropper's twin trained identically at intercept 0")
    p.add_argument("--silent-twin", action="append", default=[], metavar="SPEC", dest="silent_twins",
                   help="the team's no-channel twin: trained with the channel off, same budget and seed (e.g. "
                        "configs/signals/conv_ppo_le_truc_4p_none.yaml); one per --team, in order: adds channel - twin")
    p.add_argument("--pool", action="store_true",
                   help="the teams are independent runs (seeds) of one procedure: pool each gap over them, the runs "
                        "as the units (at least 2 teams; with --silent-twin also paired by seed and Welch)")
    p.add_argument("--controls", action="store_true",
                   help="the positive and negative controls of channel - shuffled (heuristic:honest and "
                        "deaf:heuristic:honest against random; --variant, default le_truc_4p; --deals, default 2000)")
    p.add_argument("--deals", type=flags.integer(1, 10**9), default=None,
                   help="duplicate deals per measurement, 2 hands each (default 300, or the experiment file's)")
    p.add_argument("--seed", type=flags.seed, default=0)
    p.add_argument("--sweep", default="0,0.25,0.5,0.75,1", help="intercept values, comma-separated ('' for none); with --eavesdropper: the leak curve's")
    p.add_argument("--influence", type=flags.integer(0, 10**9), default=400, help="receiver decisions re-queried for the causal influence")
    p.add_argument("--samples", type=flags.integer(1, 10**6), default=8, help="draws per policy estimate for agents without action_probs")
    p.add_argument("--out", type=flags.output_folder, default=None, help="folder for summary.json, report.md and the PNGs")
    p.add_argument("--img-prefix", type=flags.output_prefix, default=None,
                   help="with --out: also copy the PNGs to PREFIX_<name>.png (e.g. docs/results/img/signals_conv_le_truc_4p)")
    p.add_argument("--config", type=flags.shipped_file("configs"), default=None,
                   help="an experiment file (configs/signals/experiments.yaml): train its PPO runs, then analyse them")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_pairs",
                   help="with --config: override an experiment setting (VALUE is YAML: --set analysis.deals=50)")
    p.add_argument("--steps", type=flags.integer(1, 10**12), default=None, help="with --config: learner steps per run instead of the config's")
    p.add_argument("--no-train", action="store_true", help="with --config: analyse only the runs already trained")
    p.add_argument("--results-file", type=flags.output_file, default=None, metavar="PATH",
                   help="with --config: also write the study's results without the per-deal points, with the command "
                        "that made them, for the docs to cite (docs/results/data/signals_<study>.json)")
    p.add_argument("--note", default="", help="with --results-file: where the docs use it (e.g. \"docs/signals.md 'Leaks'\")")


def _intercepts(text: str) -> tuple[float, ...]:
    """``--sweep``: comma-separated intercepts in [0, 1]."""
    try:
        values = tuple(float(x) for x in (text or "").split(",") if x.strip())
    except ValueError:
        raise TrucError(f"--sweep {text!r}: give intercepts between 0 and 1 separated by commas, e.g. 0,0.5,1") from None
    if any(not 0.0 <= q <= 1.0 for q in values):
        raise TrucError(f"--sweep {text!r}: intercepts are probabilities, between 0 and 1")
    return values


def check(args) -> None:
    """What ``truc analyze signals`` checks before any work: the sweep, the variant and its options."""
    _intercepts(args.sweep)
    if (args.results_file or args.note) and not args.config:
        raise TrucError("--results-file and --note go with --config (an experiment file)")
    if args.note and not args.results_file:
        raise TrucError("--note goes with --results-file")
    if args.config:
        return
    if args.controls and not args.team:
        make_rules(args.variant or "le_truc_4p", **parse_options(args.options))
        return
    if not args.variant or not args.team:
        raise TrucError("truc analyze signals needs --variant and at least one --team (or --config)")
    make_rules(args.variant, **parse_options(args.options))
    if (args.eavesdropper or args.twin) and not (args.eavesdropper and args.twin and len(args.team) == 1):
        raise TrucError("the leak measurement needs one --team, --eavesdropper and --twin")
    if args.pool and len(args.team) < 2:
        raise TrucError(f"--pool: a pooled figure needs at least 2 seeds (one --team per independent run); "
                        f"got {len(args.team)}")
    check_twins(make_rules(args.variant, **parse_options(args.options)), args.team, args.silent_twins)


def run_cli(args) -> None:
    """``truc analyze signals``."""
    if args.config:
        results = run_experiment(args.config, steps=args.steps, train=not args.no_train,
                                 deals=args.deals, overrides=args.set_pairs)
        if args.results_file:
            command = " ".join(["truc analyze signals --config", args.config,
                                *(f"--set {kv}" for kv in args.set_pairs),
                                *([f"--deals {args.deals}"] if args.deals else []),
                                *([f"--steps {args.steps}"] if args.steps else [])])
            note = f"{args.note}. study: " if args.note else "study: "
            source = "experiment.json" if "configs" in results else "leak.json"
            path = results_file(results, args.results_file, f"{note}{command} ({source} without the per-deal points)")
            print(f"results file: {path}")
        return
    if args.controls:
        res = controls(args.variant or "le_truc_4p", parse_options(args.options), args.deals or 2000, args.seed)
        print(controls_text(res))
        if args.out:
            config.output_folder(args.out, "--out")
            atomic_write_text(os.path.join(args.out, "controls.json"), json.dumps(res, indent=1, default=float))
        if not args.team:
            return
    if not args.variant or not args.team:
        raise TrucError("truc analyze signals needs --variant and at least one --team (or --config)")
    options = parse_options(args.options)
    if any(is_network(t) for t in args.team + args.silent_twins + [args.against, args.eavesdropper or "", args.twin or ""]):
        import torch  # small networks, one decision at a time: extra threads only contend

        torch.set_num_threads(1)
    if args.eavesdropper or args.twin:
        if not (args.eavesdropper and args.twin) or len(args.team) != 1:
            raise TrucError("the leak measurement needs one --team, --eavesdropper and --twin")
        rules = make_rules(args.variant, **(options or {}))
        res = leak(rules, args.team[0], args.eavesdropper, args.twin, args.deals or 2000, args.seed,
                   sweep=_intercepts(args.sweep), log=lambda m: print(m, flush=True))
        print(leak_text(res))
        if args.out:
            config.output_folder(args.out, "--out")
            atomic_write_text(os.path.join(args.out, "leak.json"), json.dumps(res, indent=1, default=float))
            print(f"\nresults in {args.out}/leak.json")
        return
    sweep = _intercepts(args.sweep)
    report = analyze(args.variant, options, args.team, args.against, args.deals or 300, args.seed, sweep, args.influence,
                     args.samples, out=args.out, img_prefix=args.img_prefix if args.out else None,
                     log=lambda m: print(m, flush=True), twins=args.silent_twins, pool=args.pool,
                     crossplay=not args.pool)
    print(summary_text(report))
    if args.out:
        print(f"\nresults in {args.out}/ (summary.json, report.md, PNGs)")
