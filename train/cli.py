"""The ``truc`` command line."""

from __future__ import annotations

import argparse
import json
import sys

from train.config import parse_options
from truc_env.errors import TrucError


def add_config_arguments(p, example: str | None = None, shortcuts: tuple = ()) -> None:
    """``--config`` and ``--set key=value`` (repeatable) for a config-taking command.

    With ``example`` the file is optional (the command's built-in defaults apply without one; the
    example names a shipped file); without it ``--config`` is required. ``shortcuts`` are (setting,
    type) pairs kept as their own flags (``--seed 3``); each is the same override as ``--set seed=3``.
    """
    if example is None:
        p.add_argument("--config", required=True, help="the YAML settings file")
    else:
        p.add_argument("--config", help=f"a YAML settings file (e.g. {example}); default: the built-in settings")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_pairs",
                   help="override a setting (VALUE is YAML: --set deals=10 --set options.redeal=false); repeatable")
    for name, kind in shortcuts:
        p.add_argument(f"--{name}", type=kind, help=f"the same as --set {name}=VALUE")
    p.set_defaults(config_shortcuts=tuple(name for name, _ in shortcuts))


def config_overrides(args) -> list[str]:
    """The command's overrides as ``key=value`` strings: shortcut flags first, then ``--set``."""
    import yaml

    pairs = [f"{name}={yaml.safe_dump(getattr(args, name)).splitlines()[0]}"
             for name in getattr(args, "config_shortcuts", ()) if getattr(args, name) is not None]
    return pairs + list(getattr(args, "set_pairs", []))


def load_config(cls, args):
    """The command's config of kind ``cls``: its file, then its overrides, checked."""
    from train import config

    if args.config is None:
        return config.build(cls, config.apply_overrides({}, config_overrides(args)), "built-in settings")
    return config.load(cls, args.config, config_overrides(args))


def cmd_rules(args) -> None:
    from truc_env.actions import layout_of
    from truc_env.rules import make_rules

    options = parse_options(args.options)
    rules = make_rules(args.variant, **options)
    print(rules.describe())
    print()
    print(layout_of(rules).describe())


def cmd_replay(args) -> None:
    from truc_env.engine import CHANCE, DEAL_DRAW
    from truc_env.records import load, outcome, replay_state
    from truc_env.render import render

    record = load(args.record)
    state = replay_state(record)
    fam = state.rules.family
    for i, log in enumerate(state.hand_log):
        if i == len(state.hand_log) - 1 and state.hand_over and "hand_points" not in log:
            break  # the next deal has begun but nothing was played in it
        print(f"hand {i + 1}: dealer {log['dealer']}, score before {log['score']}")
        end = log.get("end", len(state.history))
        events = state.history[log["start"]:end]
        drawn = [a for actor, a, aux in events if actor == CHANCE and aux == DEAL_DRAW]
        print("  cards drawn: " + " ".join(fam.format(c) for c in drawn))
        for actor, action, aux in events:
            if actor >= 0:
                print(f"  {actor} {state.action_to_string(action)}")
            elif aux >= 0:
                print(f"  c {'seen' if action else 'unseen'} {aux}")
        if "hand_points" in log:
            print(f"  hand points {log['hand_points']}")
    if not state.hand_over:
        print(render(state, viewer=None))
    print(json.dumps(outcome(state)))
    if args.gif:
        from truc_env.draw import write_gif

        if args.viewer is not None and not 0 <= args.viewer < state.rules.players:
            raise TrucError(f"--viewer must be a seat in 0..{state.rules.players - 1} (or omitted: every hand shown), "
                            f"got {args.viewer}")
        frames = write_gif(state, args.gif, viewer=args.viewer, fps=args.fps)
        print(f"animation: {frames} frames written to {args.gif}")


def cmd_demo(args) -> None:
    from train.config import DemoConfig
    from train.demo import play_demo

    cfg = load_config(DemoConfig, args)
    play_demo(cfg.variant, cfg.options, cfg.seed, cfg.show_hands)


def cmd_arena(args) -> None:
    from train.arena import ArenaConfig, run_arena
    from train.report import ranking_note, ranking_table, summary_variance_sentence

    config = load_config(ArenaConfig, args)
    summary = run_arena(config, resume=args.resume)
    print(ranking_table(summary))
    print("\n" + ranking_note(summary))
    sentence = summary_variance_sentence(summary)
    if sentence:
        print(f"\n{sentence}")
    print(f"\nresults in {config.out}/ (summary.json, summary.csv, report.md, ratings.png, pairwise.png, games.jsonl)")


def cmd_play(args) -> None:
    from train.play import play_human

    options = parse_options(args.options)
    play_human(args.variant, options, args.opponents, seat=args.seat, seed=args.seed)


def cmd_train_ppo(args) -> None:
    from train.ppo import main as ppo_main

    ppo_main(args.config, resume=args.resume, set_pairs=config_overrides(args))


def cmd_train_cfr(args) -> None:
    from train.cfr import main as cfr_main

    cfr_main(args.config, resume=args.resume, overrides=config_overrides(args))


def cmd_train_psro(args) -> None:
    from train.psro import PSROConfig, run

    run(load_config(PSROConfig, args))


def cmd_train_distill(args) -> None:
    from train.distill import DistillConfig, run

    run(load_config(DistillConfig, args), resume=args.resume)


def cmd_analyze_signals(args) -> None:
    from train.signals_cli import run_cli

    run_cli(args)


def cmd_analyze_bound(args) -> None:
    from train.signals_bound import run_cli

    run_cli(args)


def cmd_analyze_style(args) -> None:
    from train.style import run_cli

    run_cli(args)


def cmd_exploitability(args) -> None:
    import os

    from agents import make_agent
    from train.exploitability import default_cache_dir, policy_exploitability, projection_error
    from truc_env.atomic import atomic_open
    from truc_env.rules import make_rules

    options = parse_options(args.options)
    rules = make_rules(args.variant, **options)
    agent = make_agent(args.agent, rules, seed=args.seed)
    if args.real_redeal:  # refused before the plain figure is computed, not after
        from train.exploitability import check_real_redeal

        check_real_redeal(agent, rules)
    result = policy_exploitability(agent, rules, dealer=args.dealer, abstraction=args.abstraction,
                                   first_hands=args.first_hands, suits=args.suits, seed=args.seed,
                                   progress=not args.quiet, viras=args.viras,
                                   keep=args.check_hands > 0,
                                   cache_dir=None if args.no_cache else (args.cache_dir or default_cache_dir()))
    parts = result.pop("parts", None)
    result["agent"] = args.agent
    if parts is not None:
        result["projection"] = projection_error(agent, rules, parts, args.check_hands, args.seed)
    d = args.dealer
    print(f"{args.agent} on {rules.variant} (one hand from 0-0, seat {d} deals):")
    print(f"  exploitability {result['exploitability']:.4f} points per hand")
    print(f"  best response as seat 0 (dealer: {d == 0}) {result['br0']:+.4f}; as seat 1 {result['br1']:+.4f}")
    print(f"  the policy's value for seat 0 in self-play {result['value_seat0']:+.4f}")
    if "viras" in result:
        print(f"  over {len(result['viras'])} viras asked ({result['viras_asked']}) in "
              f"{len(result['subgames'])} subgames, weighted by their chance")
    if "cont" in result:
        c = result["cont"]
        print(f"  after an accepted redeal: best responses {c['br0']:+.4f} / {c['br1']:+.4f}")
    if args.real_redeal:
        from train.exploitability import real_redeal_exploitability

        real = real_redeal_exploitability(agent, rules, dealer=args.dealer, abstraction=args.abstraction,
                                          cache_dir=None if args.no_cache else (args.cache_dir or default_cache_dir()))
        result["real_redeal"] = real
        print(f"  in the real game with its redeal: exploitability {real['exploitability']:.4f} "
              f"(best responses {real['br0']:+.4f} / {real['br1']:+.4f}; {real['cpu_seconds']:.0f}s CPU)")
    if "projection" in result:
        for part in ("main", "cont"):
            s = result["projection"][part]
            if s.get("decisions"):
                print(f"  projection ({part}): total variation mean {s['mean']:.4f}, p90 {s['p90']:.4f}, "
                      f"max {s['max']:.4f} over {s['decisions']} decisions")
    print(f"  {result['seconds']:.0f}s wall, {result['cpu_seconds']:.0f}s CPU")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with atomic_open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print(f"  written to {args.out}")


def cmd_bench(args) -> None:
    from train.bench import table

    table.main(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="truc", description="truc-env: the Truc family of card games for research.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rules", help="print a variant's rules summary and its options with defaults")
    r.add_argument("variant")
    r.add_argument("--options", help='options as JSON, e.g. \'{"players": 2}\'')
    r.set_defaults(func=cmd_rules)
    rp = sub.add_parser("replay", help="replay a JSON game record and print the hands and the result")
    rp.add_argument("record")
    rp.add_argument("--gif", metavar="OUT.gif", help="also write the game as an animation, one frame per decision")
    rp.add_argument("--viewer", type=int, help="draw the animation as this seat sees it (default: every hand shown)")
    rp.add_argument("--fps", type=float, default=1.5, help="frames per second of the animation")
    rp.set_defaults(func=cmd_replay)
    d = sub.add_parser("demo", help="play a game between random players, rendering the first hands")
    add_config_arguments(d, "configs/demo.yaml", shortcuts=(("seed", int),))
    d.set_defaults(func=cmd_demo)
    a = sub.add_parser("arena", help="run a tournament between agents and write its report")
    add_config_arguments(a, "configs/arena/le_truc.yaml", shortcuts=(("out", str), ("workers", int), ("backend", str),
                                                           ("deals", int), ("seed", int)))
    a.add_argument("--resume", action="store_true", help="continue an interrupted tournament in the same 'out'")
    a.set_defaults(func=cmd_arena)
    pl = sub.add_parser("play", help="play a whole game in the terminal against agents")
    pl.add_argument("--variant", default="le_truc")
    pl.add_argument("--options", help="options as JSON")
    pl.add_argument("--opponents", nargs="+", default=["heuristic:honest"],
                    help="agent specs for the other seats in order after yours (one spec fills them all)")
    pl.add_argument("--seat", type=int, default=0)
    pl.add_argument("--seed", type=int, default=0)
    pl.set_defaults(func=cmd_play)
    t = sub.add_parser("train", help="train an agent")
    tsub = t.add_subparsers(dest="trainer", required=True)
    tp = tsub.add_parser("ppo", help="PPO self-play (configs/ppo/)")
    add_config_arguments(tp)
    tp.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    tp.set_defaults(func=cmd_train_ppo)
    tc = tsub.add_parser("cfr", help="CFR+/DCFR/linear CFR solving (configs/cfr/)")
    add_config_arguments(tc)
    tc.add_argument("--resume", action="store_true", help="continue the solve from its last checkpoint")
    tc.set_defaults(func=cmd_train_cfr)
    ts = tsub.add_parser("psro", help="PSRO with the exact best response as oracle (configs/psro/)")
    add_config_arguments(ts)
    ts.set_defaults(func=cmd_train_psro)
    td = tsub.add_parser("distill", help="fit a PPO network to a strategy table on the public tree "
                         "(configs/distill/)")
    add_config_arguments(td)
    td.add_argument("--resume", action="store_true", help="continue the fit from its last checkpoint")
    td.set_defaults(func=cmd_train_distill)
    ex = sub.add_parser("exploitability", help="exact exploitability of an agent's policy (heads-up, public tree)")
    ex.add_argument("--agent", required=True, help="agent spec that gives probabilities: net:PATH, table:PATH, random")
    ex.add_argument("--variant", default="le_truc")
    ex.add_argument("--options", help="options as JSON (default: the variant's defaults)")
    ex.add_argument("--dealer", type=int, default=0)
    ex.add_argument("--abstraction", choices=["strength", "none"], default="strength")
    ex.add_argument("--first-hands", type=int, default=4,
                    help="first hands sampled per seat for the play after a redeal (averaged)")
    ex.add_argument("--suits", type=int, default=1,
                    help="1: one canonical suit assignment; k > 1: average over k random suit relabellings")
    ex.add_argument("--viras", choices=["all", "subgames"], default="all",
                    help="heads-up Paulista: ask the policy after every vira (exact), or after one vira per "
                    "subgame (exact for table:PATH and random, a projection for a network)")
    ex.add_argument("--check-hands", type=int, default=0,
                    help="self-play hands on which to measure the projection error (0: skip)")
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--quiet", action="store_true", help="no progress bar")
    ex.add_argument("--cache-dir", help="where built public trees are kept and reused "
                    "(default: $TRUC_CACHE_DIR or ~/.cache/truc-env)")
    ex.add_argument("--no-cache", action="store_true", help="build the public trees afresh and keep nothing")
    ex.add_argument("--real-redeal", action="store_true",
                    help="also the exact figure in the real game with its redeal (agents whose play after a redeal "
                    "ignores the first hand: table:PATH, random, a network distilled with forget_first_hand)")
    ex.add_argument("--out", help="write the result as JSON here")
    ex.set_defaults(func=cmd_exploitability)
    an = sub.add_parser("analyze", help="analyse agents (partner signals)")
    asub = an.add_subparsers(dest="analysis", required=True)
    asig = asub.add_parser("signals", help="signalling, listening, causal influence, ablation, cross-play (docs/signals.md)")
    from train.signals_cli import add_arguments

    add_arguments(asig)
    asig.set_defaults(func=cmd_analyze_signals)
    abnd = asub.add_parser("bound", help="what perfect team information is worth: oracle vs channel vs muted "
                                         "teams (docs/signals.md)")
    from train.signals_bound import add_arguments as bound_arguments

    bound_arguments(abnd)
    abnd.set_defaults(func=cmd_analyze_bound)
    asty = asub.add_parser("style", help="how heads-up agents play: raise, give-up and redeal rates by hand "
                                         "strength, in self-play (docs/results.md)")
    from train.style import add_arguments as style_arguments

    style_arguments(asty)
    asty.set_defaults(func=cmd_analyze_style)
    from train.bench import table

    b = sub.add_parser("bench", help="steps per second of the engine, the envs and the batched engine; "
                                     "--peers: like for like beside OpenSpiel, PettingZoo and pgx")
    table.build_parser(b)
    b.set_defaults(func=cmd_bench)
    return p


# optional packages -> the extra that installs them (pyproject.toml)
EXTRA_OF = {"torch": "ppo", "tensorboard": "ppo", "pyspiel": "openspiel", "open_spiel": "openspiel",
            "ray": "distributed", "rlcard": "bench", "pgx": "bench", "jax": "bench"}


def main(argv: list[str] | None = None) -> int:
    """Run the ``truc`` command line; returns the exit status (2 for bad input)."""
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except TrucError as e:
        # one line, whatever the message (a YAML error points at its line over several)
        print("truc: error: " + "; ".join(x.strip() for x in str(e).splitlines() if x.strip()), file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        extra = EXTRA_OF.get((e.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"truc: error: this command needs {e.name}, which is not installed; "
              f"install it with: pip install 'truc-env[{extra}]'", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ntruc: interrupted", file=sys.stderr)
        return 130
    except json.JSONDecodeError as e:
        print(f"truc: error: --options is not valid JSON: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
