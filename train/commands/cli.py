"""The ``truc`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys

from train.commands import flags
from train.config import parse_options
from truc_env.errors import TrucError


class UsageError(TrucError):
    """A flag argparse refused (unknown, missing, or a value of the wrong kind or range)."""


class Parser(argparse.ArgumentParser):
    """argparse whose errors are a :class:`UsageError` (one line, exit code 2), not a usage block and exit."""

    def error(self, message):
        if message.startswith("argument "):  # "argument --seed: must be ..." -> "--seed must be ..."
            flag, _, rest = message[len("argument "):].partition(": ")
            message = f"{flag.split('/')[-1]} {rest}" if rest.startswith("must ") else f"{flag}: {rest}"
        raise UsageError(f"{message} (see {self.prog} --help)")


def add_force(p) -> None:
    """``--force``: take over the run folder's lock (a second run on one folder is refused without it)."""
    p.add_argument("--force", action="store_true",
                   help="take over the run folder from another run that holds it (one that hangs or is gone)")


def add_config_arguments(p, example: str | None = None, shortcuts: tuple = ()) -> None:
    """``--config`` and ``--set key=value`` (repeatable) for a config-taking command.

    With ``example`` the file is optional (the command's built-in defaults apply without one; the
    example names a shipped file); without it ``--config`` is required. ``shortcuts`` are (setting,
    type) pairs kept as their own flags (``--seed 3``); each is the same override as ``--set seed=3``.
    """
    if example is None:
        p.add_argument("--config", required=True, type=flags.shipped_file("configs"), help="the YAML settings file")
        p.set_defaults(config_required=True)
    else:
        p.add_argument("--config", type=flags.shipped_file("configs"),
                       help=f"a YAML settings file (e.g. {example}); default: the built-in settings")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_pairs",
                   help="override a setting (VALUE is YAML: --set deals=10 --set options.redeal=false); repeatable")
    for name, kind in shortcuts:  # the config's schema checks the value (before any work: see check_config)
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

# ---------------------------------------------------------------------- checks before any work
# Each command's ``check`` runs after argparse (which checked every flag's kind and range) and before
# the command's work: what needs several flags together, a settings file, or the variant's rules.
# ``main(argv, run=False)`` stops there (the fuzz suite, tests/test_fuzz_cli.py, drives it).

def _as_error(check, value, setting: str):
    """A ``train.commands.flags`` check on a value that came from a settings file, as a TrucError."""
    try:
        return check(value)
    except argparse.ArgumentTypeError as e:
        raise TrucError(f"{setting}: {e}") from None


def check_rules(args) -> None:
    from truc_env.game.rules import make_rules

    args.rules = make_rules(args.variant, **parse_options(args.options))


def check_replay(args) -> None:
    from truc_env.game.records import load, replay_state

    args.state = replay_state(load(args.record))
    players = args.state.rules.players
    if args.viewer is not None and not 0 <= args.viewer < players:
        raise TrucError(f"--viewer must be a seat in 0..{players - 1} (or omitted: every hand shown), "
                        f"got {args.viewer}")


def check_config(load, setting: str = "out"):
    """The check of a config-taking command: its settings loaded (``load(args)``) and checked, and the
    folder they write to usable; the config is kept as ``args.cfg`` for the command."""
    def check(args) -> None:
        if args.config is not None and getattr(args, "config_required", False):
            from train.config import read_mapping

            if not read_mapping(args.config):  # a training run is never started from no settings at all
                raise TrucError(f"config {args.config} holds no settings; a run's settings are written out "
                                f"(see configs/ for examples)")
        args.cfg = load(args)
        out = out_of(args.cfg)
        if out is not None:
            _as_error(flags.output_folder, out, f"setting {setting}")
    return check


def demo_config(args):
    from train.config import DemoConfig

    return load_config(DemoConfig, args)


def arena_config(args):
    from train.eval.arena import ArenaConfig

    return load_config(ArenaConfig, args)


def cfr_config(args):
    from train.algos.cfr import load_config as load

    return load(args.config, config_overrides(args))


def ppo_config(args):
    from train.algos.ppo import PPOConfig

    return PPOConfig.from_yaml(args.config, config_overrides(args))


def psro_config(args):
    from train.algos.psro import PSROConfig

    return load_config(PSROConfig, args)


def distill_config(args):
    from train.algos.distill import DistillConfig

    return load_config(DistillConfig, args)


def out_of(cfg) -> str | None:
    """The run folder a config writes to (None: it writes none)."""
    import os

    if hasattr(cfg, "out_dir") and hasattr(cfg, "name"):
        return os.path.join(cfg.out_dir, cfg.name)
    return getattr(cfg, "out", None)


def check_play(args) -> None:
    from train.commands.play import check_table

    check_table(args.variant, parse_options(args.options), args.opponents, args.seat)


def check_serve(args) -> None:
    from train.web.hosting import check_serve_settings

    check_serve_settings(args.host, args.port, args.allow_remote, args.models)


def check_exploitability(args) -> None:
    from truc_env.game.rules import make_rules

    rules = make_rules(args.variant, **parse_options(args.options))
    if args.lbr:
        from train.eval.local_br import check_request

        if args.approx or args.as_played:
            raise TrucError("--lbr is its own measurement (a local best response); drop --approx and --as-played")
        lbr_off = [f for f, on in (("--suits", args.suits != 1), ("--real-redeal", args.real_redeal),
                                   ("--check-hands", args.check_hands > 0), ("--viras", args.viras != "all"),
                                   ("--abstraction", args.abstraction != "strength"),
                                   ("--first-hands", args.first_hands != 4), ("--dealer", args.dealer != 0),
                                   ("--br-set", bool(args.br_set)), ("--br-dir", args.br_dir is not None),
                                   ("--br-play", args.br_play != "sample"), ("--response", args.response is not None),
                                   ("--backend", args.backend is not None)) if on]
        if lbr_off:
            raise TrucError(f"{', '.join(lbr_off)}: not settings of --lbr (it plays the real game from seat 0 "
                            "dealing; its settings are --eval-deals, --lbr-samples, --lbr-rollouts, "
                            "--lbr-continuation, --seed)")
        check_request(args.agent, rules, args.eval_deals, args.lbr_samples, args.lbr_rollouts, args.lbr_continuation)
        return
    if args.approx:
        from train.eval.approx_br import check_request

        if args.lbr_continuation is not None:
            raise TrucError("--lbr-continuation is a setting of --lbr, not of --approx")
        if args.as_played:
            raise TrucError("--as-played is an exact measurement on the public tree; --approx learns a best response: "
                            "one or the other")
        exact_only = [flag for flag, on in (("--suits", args.suits != 1), ("--real-redeal", args.real_redeal),
                                            ("--check-hands", args.check_hands > 0),
                                            ("--abstraction", args.abstraction != "strength"),
                                            ("--viras", args.viras != "all"), ("--first-hands", args.first_hands != 4),
                                            ("--relabellings", args.relabellings != "suits"),
                                            ("--response", args.response is not None)) if on]
        if exact_only:
            raise TrucError(f"{', '.join(exact_only)}: settings of the exact measurement, which --approx does not "
                            "take (it plays the real game; its settings are --br-steps, --eval-deals, --br-set, --br-dir, --br-play)")
        if args.dealer != 0:
            raise TrucError("--approx measures from seat 0 dealing (the duplicate deals' seating); drop --dealer")
        from train.eval.approx_br import br_pairs

        check_request(args.agent, rules, args.br_steps, args.eval_deals, args.br_dir, br_pairs(args))
        return
    ray_flags = [f for f, v in (("--backend", args.backend), ("--workers", args.workers),
                                ("--rollout-shards", args.rollout_shards)) if v is not None]
    if ray_flags:
        raise TrucError(f"{', '.join(ray_flags)}: settings of the learned best response; they go with --approx")
    if args.br_play != "sample" or args.lbr_continuation is not None:
        raise TrucError("--br-play goes with --approx, --lbr-continuation with --lbr")
    if rules.players != 2:
        raise TrucError(f"exploitability is exact on the heads-up public tree; {args.variant} has {rules.players} "
                        "players (--approx measures any game)")
    if args.relabellings != "suits" and not args.as_played:
        raise TrucError("--relabellings goes with --as-played")
    if args.response is not None:
        off = [f for f, on in (("--as-played", args.as_played), ("--real-redeal", args.real_redeal),
                               ("--suits", args.suits != 1), ("--check-hands", args.check_hands > 0),
                               ("--viras", args.viras != "all")) if on]
        if off:
            raise TrucError(f"{', '.join(off)}: not settings of --response (it measures the response on the policy's "
                            "table of one canonical suit assignment)")
        if rules.vira:
            raise TrucError(f"{args.variant}: --response takes rules without a vira (one public tree per hand)")
        from agents import make_agent
        from train.eval.exploitability import probability_function

        probability_function(make_agent(args.response, rules, seed=args.seed), rules)  # a spec for these rules, with a policy
    if args.as_played:
        if args.suits != 1 or args.real_redeal or args.abstraction != "strength":
            raise TrucError("--as-played measures every suit relabelling on the strength abstraction; drop --suits, "
                            "--real-redeal and --abstraction")
        if rules.vira:
            raise TrucError(f"{args.variant}: --as-played takes rules without a vira (the vira's suit fixes its "
                            "manilhas, so no suit relabelling but the identity keeps the game)")


def check_signals(args) -> None:
    from train.commands.signals_cli import check

    check(args)


def check_bound(args) -> None:
    from agents.players.heuristic import STYLES

    if args.style not in STYLES:
        raise TrucError(f"--style {args.style!r}: the bounded team is a heuristic; styles: {', '.join(STYLES)}")
    parse_options(args.options)
    parse_options(args.learned_options, "--learned-options")
    if not args.variant and (args.options or args.learned):
        raise TrucError("--options and --learned go with --variant (the default set has its own)")


def check_style(args) -> None:
    check_rules(args)


def check_bench(args) -> None:
    from train.bench import table

    table.check(args)


def locked(args):
    """The run folder of a config-taking run, held for the run (a second run on it is refused)."""
    from truc_env.io.atomic import run_lock

    return run_lock(out_of(args.cfg), force=getattr(args, "force", False))


def cmd_rules(args) -> None:
    from truc_env.game.actions import layout_of

    rules = args.rules
    print(rules.describe())
    print()
    print(layout_of(rules).describe())


def cmd_replay(args) -> None:
    from truc_env.display.render import render
    from truc_env.game.engine import CHANCE, DEAL_DRAW
    from truc_env.game.records import outcome

    state = args.state  # the record loaded and replayed by check_replay
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
        from truc_env.display.draw import write_gif

        frames = write_gif(state, args.gif, viewer=args.viewer, fps=args.fps)
        print(f"animation: {frames} frames written to {args.gif}")


def cmd_demo(args) -> None:
    from train.commands.demo import play_demo

    cfg = args.cfg
    play_demo(cfg.variant, cfg.options, cfg.seed, cfg.show_hands)


def cmd_arena(args) -> None:
    from train.eval.arena import run_arena
    from train.eval.report import ranking_note, ranking_table, summary_variance_sentence

    config = args.cfg
    with locked(args):
        summary = run_arena(config, resume=args.resume)
    print(ranking_table(summary))
    print("\n" + ranking_note(summary))
    sentence = summary_variance_sentence(summary)
    if sentence:
        print(f"\n{sentence}")
    print(f"\nresults in {config.out}/ (summary.json, summary.csv, report.md, ratings.png, pairwise.png, games.jsonl)")


def cmd_play(args) -> None:
    from train.commands.play import play_human

    options = parse_options(args.options)
    play_human(args.variant, options, args.opponents, seat=args.seat, seed=args.seed)


def cmd_serve(args) -> None:
    from train.web.app import serve

    serve(args.host, args.port, open_browser=args.open, allow_remote=args.allow_remote, models_dir=args.models)


def cmd_train_ppo(args) -> None:
    from train.algos.ppo import main as ppo_main

    with locked(args):
        ppo_main(args.config, resume=args.resume, set_pairs=config_overrides(args))


def cmd_train_cfr(args) -> None:
    from train.algos.cfr import main as cfr_main

    with locked(args):
        cfr_main(args.config, resume=args.resume, overrides=config_overrides(args))


def cmd_train_psro(args) -> None:
    from train.algos.psro import run

    with locked(args):
        run(args.cfg)


def cmd_train_distill(args) -> None:
    from train.algos.distill import run

    with locked(args):
        run(args.cfg, resume=args.resume)


def cmd_analyze_signals(args) -> None:
    from train.commands.signals_cli import run_cli

    run_cli(args)


def cmd_analyze_bound(args) -> None:
    from train.analysis.signals_bound import run_cli

    run_cli(args)


def cmd_analyze_style(args) -> None:
    from train.analysis.style import run_cli

    run_cli(args)


def write_result(path: str | None, result: dict) -> None:
    """The measurement as JSON at ``path`` (atomically; nothing when ``path`` is None)."""
    import os

    from truc_env.io.atomic import atomic_open

    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with atomic_open(path, "w") as f:
            json.dump(result, f, indent=2)
        print(f"  written to {path}")


def cmd_exploitability(args) -> None:

    if args.approx:
        from train.eval.approx_br import cmd_approx

        return cmd_approx(args)
    if args.lbr:
        from train.eval.local_br import cmd_lbr

        return cmd_lbr(args)

    if args.as_played:
        return cmd_as_played(args)
    if args.response is not None:
        return cmd_response(args)

    from agents import make_agent
    from train.eval.exploitability import default_cache_dir, policy_exploitability, projection_error
    from truc_env.game.rules import make_rules

    options = parse_options(args.options)
    rules = make_rules(args.variant, **options)
    agent = make_agent(args.agent, rules, seed=args.seed)
    if args.real_redeal:  # refused before the plain figure is computed, not after
        from train.eval.exploitability import check_real_redeal

        check_real_redeal(agent, rules)
    from train.commands.cache_cli import announce_growth, cache_start

    cache_dir = None if args.no_cache else (args.cache_dir or default_cache_dir())
    cached_before = cache_start(cache_dir)
    resume = subgames_resume(args, rules)
    result = policy_exploitability(agent, rules, dealer=args.dealer, abstraction=args.abstraction,
                                   first_hands=args.first_hands, suits=args.suits, seed=args.seed,
                                   progress=not args.quiet, viras=args.viras,
                                   keep=args.check_hands > 0,
                                   cache_dir=None if args.no_cache else (args.cache_dir or default_cache_dir()),
                                   resume=resume)
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
        from train.eval.exploitability import real_redeal_exploitability

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
    announce_growth(cache_dir, cached_before)
    write_result(args.out, result)
    if resume is not None and os.path.exists(resume[0]):
        os.unlink(resume[0])  # the result is written whole: the finished subgames are in it


def subgames_resume(args, rules):
    """Heads-up Paulista with ``--out``: ``(<out>.subgames.json, key)``, where each finished subgame is kept until
    the result is written, so that the same command run again after an interruption measures only the rest.
    The key is what the figure depends on (the agent spec and its file's digest, the Rules, the settings, the
    code); None elsewhere, or with ``--check-hands`` (its tables are held in memory)."""
    import hashlib

    from train.eval.tree_cache import POLICY_SOURCES, TREE_SOURCES, code_version

    if not rules.vira or args.out is None or args.check_hands > 0:
        return None
    path = args.agent.split(":")[-1]
    digest = None
    if os.path.isfile(path):
        with open(path, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
    key = {"agent": args.agent, "agent_file_sha256": digest, "rules": rules.key, "dealer": args.dealer,
           "abstraction": args.abstraction, "suits": args.suits, "seed": args.seed, "viras": args.viras,
           "code": code_version((*TREE_SOURCES, *POLICY_SOURCES))}
    return args.out + ".subgames.json", key


def cmd_response(args) -> None:

    from agents import make_agent
    from train.commands.cache_cli import announce_growth, cache_start
    from train.eval.exploitability import default_cache_dir
    from train.eval.response_value import response_value
    from truc_env.game.rules import make_rules

    rules = make_rules(args.variant, **parse_options(args.options))
    agent = make_agent(args.agent, rules, seed=args.seed)
    response = make_agent(args.response, rules, seed=args.seed)
    cache_dir = None if args.no_cache else (args.cache_dir or default_cache_dir())
    cached_before = cache_start(cache_dir)
    result = response_value(agent, response, rules, dealer=args.dealer, abstraction=args.abstraction,
                            first_hands=args.first_hands, seed=args.seed, cache_dir=cache_dir,
                            log=(lambda msg: None) if args.quiet else None)
    result.update(agent=args.agent, response=args.response)
    d = args.dealer
    print(f"{args.agent} on {rules.variant} (one hand from 0-0, seat {d} deals):")
    print(f"  exploitability {result['exploitability']:.4f} points per hand (best responses {result['br0']:+.4f} / "
          f"{result['br1']:+.4f})")
    share = f", {100 * result['recovered']:.1f}% of it" if result["response_value"] > 0 and result["recovered"] else ""
    print(f"  {args.response}: {result['response0']:+.4f} as seat 0, {result['response1']:+.4f} as seat 1: "
          f"{result['response_value']:.4f} points per hand{share}")
    print("  what its choices alone cost a best response, by kind of decision:")
    for q, seat in enumerate(result["seats"]):
        print(f"    seat {q}: gap {seat['gap']:.4f} = " + ", ".join(f"{k} {v:.4f}" for k, v in seat["loss"].items()))
    print(f"  {result['cpu_seconds']:.0f}s CPU")
    announce_growth(cache_dir, cached_before)
    write_result(args.out, result)


def cmd_as_played(args) -> None:

    from agents import make_agent
    from train.eval.as_played import as_played_exploitability
    from train.eval.exploitability import default_cache_dir
    from truc_env.game.rules import make_rules

    rules = make_rules(args.variant, **parse_options(args.options))
    agent = make_agent(args.agent, rules, seed=args.seed)
    hands = args.check_hands or 2000
    result = as_played_exploitability(agent, rules, dealer=args.dealer, first_hands=args.first_hands, hands=hands,
                                      seed=args.seed, progress=not args.quiet, group=args.relabellings,
                                      cache_dir=None if args.no_cache else (args.cache_dir or default_cache_dir()))
    result["agent"] = args.agent
    pr = result["per_relabelling"]
    print(f"{args.agent} on {rules.variant} as it plays (one hand from 0-0, seat {args.dealer} deals), "
          + (f"{len(result['relabellings'])} suit relabellings:" if result["group"] == "suits" else
             f"the identity and {len(result['relabellings']) - 1} random relabellings within every rank:"))
    print(f"  canonical assignment {result['canonical']:.4f}; per relabelling {pr['min']:.4f} .. {pr['max']:.4f} "
          f"(mean {pr['mean']:.4f})")
    print(f"  the mean of the relabellings' tables: exploitability {result['exploitability']:.4f} "
          f"(best responses {result['br0']:+.4f} / {result['br1']:+.4f})")
    for part, s in result["projection"].items():
        if s["raw_vs_canonical"].get("decisions"):
            print(f"  projection error ({part}, {s['raw_vs_canonical']['decisions']} held-out decisions, total "
                  f"variation mean / p90): raw vs canonical {s['raw_vs_canonical']['mean']:.4f} / "
                  f"{s['raw_vs_canonical']['p90']:.4f}, raw vs averaged {s['raw_vs_averaged']['mean']:.4f} / "
                  f"{s['raw_vs_averaged']['p90']:.4f}, relabellings vs averaged "
                  f"{s['relabellings_vs_averaged']['mean']:.4f} / {s['relabellings_vs_averaged']['p90']:.4f}")
    print(f"  {result['seconds']:.0f}s wall, {result['cpu_seconds']:.0f}s CPU")
    write_result(args.out, result)


def check_leaderboard(args) -> None:
    from train import config
    from train.eval.leaderboard import LeaderboardConfig

    args.cfg = config.load(LeaderboardConfig, args.config, what="leaderboard config")


def cmd_leaderboard(args) -> None:
    from train.eval.leaderboard import write

    write(args.cfg, args.config, args.out, progress=not args.quiet)


def cmd_bench(args) -> None:
    from train.bench import table

    table.main(args)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="truc", description="truc-env: the Truc family of card games for research.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rules", help="print a variant's rules summary and its options with defaults")
    r.add_argument("variant")
    r.add_argument("--options", help='options as JSON, e.g. \'{"players": 2}\'')
    r.set_defaults(func=cmd_rules, check=check_rules)
    rp = sub.add_parser("replay", help="replay a JSON game record and print the hands and the result")
    rp.add_argument("record", type=flags.shipped_file("examples"))
    rp.add_argument("--gif", metavar="OUT.gif", type=flags.output_file, help="also write the game as an animation, one frame per decision")
    rp.add_argument("--viewer", type=flags.integer(0), help="draw the animation as this seat sees it (default: every hand shown)")
    rp.add_argument("--fps", type=flags.number(0, 100, above=True), default=1.5, help="frames per second of the animation")
    rp.set_defaults(func=cmd_replay, check=check_replay)
    d = sub.add_parser("demo", help="play a game between random players, rendering the first hands")
    add_config_arguments(d, "configs/demo.yaml", shortcuts=(("seed", flags.seed),))
    d.set_defaults(func=cmd_demo, check=check_config(demo_config))
    a = sub.add_parser("arena", help="run a tournament between agents and write its report")
    add_config_arguments(a, "configs/arena/le_truc.yaml", shortcuts=(("out", flags.output_folder),
                                                                  ("workers", flags.integer(1, 4096)), ("backend", str),
                                                                  ("deals", flags.integer(1, 10**9)), ("seed", flags.seed)))
    a.add_argument("--resume", action="store_true", help="continue an interrupted tournament in the same 'out'")
    add_force(a)
    a.set_defaults(func=cmd_arena, check=check_config(arena_config))
    pl = sub.add_parser("play", help="play a whole game in the terminal against agents")
    pl.add_argument("--variant", default="le_truc")
    pl.add_argument("--options", help="options as JSON")
    pl.add_argument("--opponents", nargs="+", default=["heuristic:honest"],
                    help="agent specs for the other seats in order after yours (one spec fills them all)")
    pl.add_argument("--seat", type=flags.integer(0), default=0)
    pl.add_argument("--seed", type=flags.seed, default=0)
    pl.set_defaults(func=cmd_play, check=check_play)
    sv = sub.add_parser("serve", help="a local web table: play against any agent, watch agents, replay records "
                        "(needs the web extra)")
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (loopback unless --allow-remote)")
    sv.add_argument("--port", type=flags.integer(1, 65535), default=8000)
    sv.add_argument("--open", action="store_true", help="open the page in the default browser")
    sv.add_argument("--allow-remote", action="store_true", help="allow a --host other computers can reach")
    sv.add_argument("--models", help="folder of the learned opponents offered by name (default: the shipped models)")
    sv.set_defaults(func=cmd_serve, check=check_serve)
    t = sub.add_parser("train", help="train an agent")
    tsub = t.add_subparsers(dest="trainer", required=True)
    tp = tsub.add_parser("ppo", help="PPO self-play (configs/ppo/)")
    add_config_arguments(tp, shortcuts=(("backend", str), ("workers", flags.integer(1, 4096))))
    tp.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    add_force(tp)
    tp.set_defaults(func=cmd_train_ppo, check=check_config(ppo_config, "out_dir/name"))
    tc = tsub.add_parser("cfr", help="CFR+/DCFR/linear CFR solving (configs/cfr/)")
    add_config_arguments(tc)
    tc.add_argument("--resume", action="store_true", help="continue the solve from its last checkpoint")
    add_force(tc)
    tc.set_defaults(func=cmd_train_cfr, check=check_config(cfr_config))
    ts = tsub.add_parser("psro", help="PSRO with the exact best response as oracle (configs/psro/)")
    add_config_arguments(ts)
    add_force(ts)
    ts.set_defaults(func=cmd_train_psro, check=check_config(psro_config))
    td = tsub.add_parser("distill", help="fit a PPO network to a strategy table on the public tree "
                         "(configs/distill/)")
    add_config_arguments(td)
    td.add_argument("--resume", action="store_true", help="continue the fit from its last checkpoint")
    add_force(td)
    td.set_defaults(func=cmd_train_distill, check=check_config(distill_config))
    ex = sub.add_parser("exploitability", help="exact exploitability of an agent's policy (heads-up, public tree)")
    ex.add_argument("--agent", required=True, help="agent spec that gives probabilities: net:PATH, table:PATH, heuristic:STYLE (heads-up, no envido), random")
    ex.add_argument("--variant", default="le_truc")
    ex.add_argument("--options", help="options as JSON (default: the variant's defaults)")
    ex.add_argument("--dealer", type=flags.integer(0, 1), default=0)
    ex.add_argument("--abstraction", choices=["strength", "none"], default="strength")
    ex.add_argument("--first-hands", type=flags.integer(1, 10**6), default=4,
                    help="first hands sampled per seat for the play after a redeal (averaged)")
    ex.add_argument("--suits", type=flags.integer(1, 10**6), default=1,
                    help="1: one canonical suit assignment; k > 1: average over k random suit relabellings")
    ex.add_argument("--viras", choices=["all", "subgames"], default="all",
                    help="heads-up Paulista: ask the policy after every vira (exact), or after one vira per "
                    "subgame (exact for table:PATH and random, a projection for a network)")
    ex.add_argument("--check-hands", type=flags.integer(0, 10**9), default=0,
                    help="self-play hands on which to measure the projection error (0: skip)")
    ex.add_argument("--seed", type=flags.seed, default=0)
    ex.add_argument("--quiet", action="store_true", help="no progress bar (the final figure is still printed)")
    ex.add_argument("--cache-dir", type=flags.output_folder, help="where built public trees are kept and reused "
                    "(default: $TRUC_CACHE_DIR or ~/.cache/truc-env)")
    ex.add_argument("--no-cache", action="store_true", help="build the public trees afresh and keep nothing")
    ex.add_argument("--real-redeal", action="store_true",
                    help="also the exact figure in the real game with its redeal (agents whose play after a redeal "
                    "ignores the first hand: table:PATH, random, heuristic:STYLE, a network distilled with forget_first_hand)")
    ex.add_argument("--as-played", action="store_true",
                    help="the exact figure under every suit relabelling and their mean, with the projection error on "
                    "--check-hands held-out self-play hands (default 2,000; docs/results/exploitability.md)")
    ex.add_argument("--relabellings", type=flags.word_or_integer("suits", 1, 10**4), default="suits",
                    help="--as-played: 'suits' (every suit relabelling, 24 in Le Truc) or k (the identity and k-1 "
                    "random relabellings within every rank, the suits of real deals)")
    ex.add_argument("--response", metavar="SPEC",
                    help="also measure SPEC (net:, table:, greedy:net:, heuristic:, random), e.g. a learned best response, exactly "
                    "against the agent at each seat, and what its choices cost a best response by kind of decision "
                    "(docs/approx_exploitability.md)")
    ex.add_argument("--approx", action="store_true",
                    help="a lower bound for any variant and agent spec: a best response learned by PPO, measured on "
                    "fresh duplicate deals (docs/approx_exploitability.md)")
    ex.add_argument("--br-steps", type=flags.integer(1, 10**9), default=200_000,
                    help="--approx: the learner's budget in learner steps")
    ex.add_argument("--eval-deals", type=flags.integer(2), default=2000,
                    help="--approx: duplicate deals measuring its value")
    ex.add_argument("--br-set", action="append", default=[], metavar="KEY=VALUE",
                    help="--approx: a PPO setting of the learner (train/algos/ppo.py, VALUE is YAML); repeatable")
    ex.add_argument("--br-play", choices=["sample", "greedy"], default="sample",
                    help="--approx: the learned response measured as it samples (default) or greedily, its most "
                    "probable action (a best response is deterministic: greedy play gave tighter bounds)")
    ex.add_argument("--br-dir", type=flags.output_folder,
                    help="--approx: keep the learned best response's run folder here (default: discarded)")
    ex.add_argument("--backend", choices=["local", "ray"],
                    help="--approx: where the learner's rollouts and the measuring deals are played (ray: the "
                    "distributed extra; the same figure)")
    ex.add_argument("--workers", type=flags.integer(1, 4096),
                    help="--approx with --backend ray: Ray workers (at most --rollout-shards)")
    ex.add_argument("--rollout-shards", type=flags.integer(1, 1 << 20),
                    help="--approx: the learner's rollout in this many shards (a divisor of its num_envs, 64; "
                    "the figure depends on it, not on --workers)")
    ex.add_argument("--lbr", action="store_true",
                    help="a lower bound for heads-up games without training: a local best response (each decision "
                    "the best against the policy's belief over the opponent's cards, valued by playouts), measured "
                    "on --eval-deals fresh duplicate deals (docs/approx_exploitability.md)")
    ex.add_argument("--lbr-samples", type=flags.integer(1, 10**6), default=64,
                    help="--lbr: drawn deals of the opponent's unseen cards per decision")
    ex.add_argument("--lbr-rollouts", type=flags.integer(1, 10**6), default=16,
                    help="--lbr: playouts per legal action")
    ex.add_argument("--lbr-continuation", metavar="SPEC",
                    help="--lbr: who plays the responder's later decisions in its playouts, greedily (a net: or "
                    "table: spec, e.g. a best response kept by --approx --br-dir); default: the policy itself")
    ex.add_argument("--out", type=flags.output_file, help="write the result as JSON here")
    ex.set_defaults(func=cmd_exploitability, check=check_exploitability)
    an = sub.add_parser("analyze", help="analyse agents (partner signals)")
    asub = an.add_subparsers(dest="analysis", required=True)
    asig = asub.add_parser("signals", help="signalling, listening, causal influence, ablation, cross-play (docs/signals.md)")
    from train.commands.signals_cli import add_arguments

    add_arguments(asig)
    asig.set_defaults(func=cmd_analyze_signals, check=check_signals)
    abnd = asub.add_parser("bound", help="what perfect team information is worth: oracle vs channel vs muted "
                                         "teams (docs/signals.md)")
    from train.analysis.signals_bound import add_arguments as bound_arguments

    bound_arguments(abnd)
    abnd.set_defaults(func=cmd_analyze_bound, check=check_bound)
    asty = asub.add_parser("style", help="how heads-up agents play: raise, give-up and redeal rates by hand "
                                         "strength, in self-play (docs/results.md)")
    from train.analysis.style import add_arguments as style_arguments

    style_arguments(asty)
    asty.set_defaults(func=cmd_analyze_style, check=check_style)
    from train.commands import cache_cli

    ca = sub.add_parser("cache", help="list the public trees and network inputs kept on disk, or --clear them")
    cache_cli.add_arguments(ca)
    ca.set_defaults(func=cache_cli.run_cli)
    from train.bench import table

    b = sub.add_parser("bench", help="steps per second of the engine, the envs and the batched engine; "
                                     "--peers: like for like beside OpenSpiel, PettingZoo and pgx")
    table.build_parser(b)
    b.set_defaults(func=cmd_bench, check=check_bench)
    lb = sub.add_parser("leaderboard", help="docs/leaderboard.md: every committed agent's exploitability and its Elo "
                        "in one arena per variant (configs/leaderboard/all.yaml)")
    lb.add_argument("--config", default="configs/leaderboard/all.yaml", type=flags.shipped_file("configs"))
    lb.add_argument("--out", type=flags.output_file, help="the page (default: the config's 'out')")
    lb.add_argument("--quiet", action="store_true")
    lb.set_defaults(func=cmd_leaderboard, check=check_leaderboard)
    return p


# optional packages -> the extra that installs them (pyproject.toml)
EXTRA_OF = {"torch": "ppo", "tensorboard": "ppo", "pyspiel": "openspiel", "open_spiel": "openspiel",
            "ray": "distributed", "rlcard": "bench", "pgx": "bench", "jax": "bench",
            "starlette": "web", "uvicorn": "web"}


def disk_full(e: BaseException, args) -> str | None:
    """One line for a full disk or a file-size limit hit while writing (None for any other error): what
    was kept and how to go on. Every artifact is written atomically, so each file is the old one or the
    whole new one; progress files may end in a torn line, which a resumed run skips."""
    import errno

    from truc_env.io.atomic import NO_ROOM

    full = isinstance(e, OSError) and e.errno in NO_ROOM
    # torch's zip writer reports a failed write as a RuntimeError without the errno ("PytorchStreamWriter
    # failed writing file", or "[enforce fail at inline_container.cc] unexpected pos" on a size limit)
    full = full or (isinstance(e, RuntimeError) and ("PytorchStreamWriter" in str(e) or "inline_container" in str(e)))
    if not full:
        return None
    what = {errno.EFBIG: "the file-size limit was reached", errno.ENOSPC: "the disk is full",
            errno.EDQUOT: "the disk quota is used up"}.get(getattr(e, "errno", None),
                                                        "a write failed (the disk is full or a file-size limit was reached)")
    where = f" writing {e.filename}" if getattr(e, "filename", None) else ""
    again = ("free some space and run the same command with --resume to continue from the last checkpoint"
             if hasattr(args, "resume") else "free some space and run the same command again")
    return (f"{what}{where}; every file written before is kept whole (artifacts are replaced atomically, "
            f"the last checkpoint stands); {again}")


def main(argv: list[str] | None = None, run: bool = True) -> int:
    """Run the ``truc`` command line; returns the exit status (2 for bad input).

    Every flag and setting is checked before any work starts; ``run=False`` stops after the checks.
    """
    try:
        args = build_parser().parse_args(argv)
        if hasattr(args, "check"):
            args.check(args)
        if run:
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
    except BrokenPipeError:  # the reader left (`truc rules ... | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        return 141
    except (OSError, RuntimeError) as e:
        line = disk_full(e, args if "args" in locals() else None)
        if line is None:
            raise
        print("truc: error: " + line, file=sys.stderr)
        return 2
    except json.JSONDecodeError as e:
        print(f"truc: error: --options is not valid JSON: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
