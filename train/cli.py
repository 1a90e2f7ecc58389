"""The ``truc`` command line."""

from __future__ import annotations

import argparse
import json
import sys

from truc_env.errors import TrucError


def _load_config(path: str) -> dict:
    from train.yaml_config import read_mapping

    return read_mapping(path)


def cmd_rules(args) -> None:
    from truc_env.actions import layout_of
    from truc_env.rules import make_rules

    options = json.loads(args.options) if args.options else {}
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


def cmd_demo(args) -> None:
    from train.demo import play_demo

    cfg = _load_config(args.config)
    known = {"variant", "options", "seed", "show_hands"}
    unknown = set(cfg) - known
    if unknown:
        raise TrucError(f"{args.config}: unknown setting(s) {sorted(unknown)}; allowed: {sorted(known)}")
    if args.seed is not None:
        cfg["seed"] = args.seed
    play_demo(cfg.get("variant", "le_truc"), cfg.get("options") or {}, int(cfg.get("seed", 0)),
              int(cfg.get("show_hands", 3)))


def cmd_arena(args) -> None:
    from train.arena import ArenaConfig, run_arena
    from train.report import ranking_table

    cfg = _load_config(args.config)
    for key in ("out", "workers", "backend", "deals", "seed"):
        value = getattr(args, key)
        if value is not None:
            cfg[key] = value
    config = ArenaConfig.from_dict(cfg)
    summary = run_arena(config, resume=args.resume)
    print(ranking_table(summary))
    if summary.get("variance_reduction"):
        print(f"\nduplicate deals: variance reduction x{summary['variance_reduction']:.2f}")
    print(f"\nresults in {config.out}/ (summary.json, summary.csv, report.md, ratings.png, pairwise.png, games.jsonl)")


def cmd_play(args) -> None:
    from train.play import play_human

    options = json.loads(args.options) if args.options else {}
    play_human(args.variant, options, args.opponents, seat=args.seat, seed=args.seed)


def cmd_train_ppo(args) -> None:
    from train.ppo import main as ppo_main

    ppo_main(args.config, resume=args.resume)


def cmd_train_cfr(args) -> None:
    from train.cfr import main as cfr_main

    cfr_main(args.config, resume=args.resume)


def cmd_analyze_signals(args) -> None:
    from train.signals import run_cli

    run_cli(args)


def cmd_exploitability(args) -> None:
    import os

    from agents import make_agent
    from agents.cfr.policy_tree import policy_exploitability, projection_error
    from truc_env.atomic import atomic_open
    from truc_env.rules import make_rules

    options = json.loads(args.options) if args.options else {}
    rules = make_rules(args.variant, **options)
    agent = make_agent(args.agent, rules, seed=args.seed)
    result = policy_exploitability(agent, rules, dealer=args.dealer, abstraction=args.abstraction,
                                   first_hands=args.first_hands, suits=args.suits, seed=args.seed,
                                   progress=not args.quiet,
                                   keep=args.check_hands > 0)
    parts = result.pop("parts", None)
    result["agent"] = args.agent
    if parts is not None:
        result["projection"] = projection_error(agent, rules, parts, args.check_hands, args.seed)
    d = args.dealer
    print(f"{args.agent} on {rules.variant} (one hand from 0-0, seat {d} deals):")
    print(f"  exploitability {result['exploitability']:.4f} points per hand")
    print(f"  best response as seat 0 (dealer: {d == 0}) {result['br0']:+.4f}; as seat 1 {result['br1']:+.4f}")
    print(f"  the policy's value for seat 0 in self-play {result['value_seat0']:+.4f}")
    if "cont" in result:
        c = result["cont"]
        print(f"  after an accepted redeal: best responses {c['br0']:+.4f} / {c['br1']:+.4f}")
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


def _bench_module():
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/ is not installed
    from benchmarks import bench

    return bench


def cmd_bench(args) -> None:
    _bench_module().main(args)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="truc", description="truc-env: the Truc family of card games for research.")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("rules", help="print a variant's rules summary and its options with defaults")
    r.add_argument("variant")
    r.add_argument("--options", help='options as JSON, e.g. \'{"players": 2}\'')
    r.set_defaults(func=cmd_rules)
    rp = sub.add_parser("replay", help="replay a JSON game record and print the hands and the result")
    rp.add_argument("record")
    rp.set_defaults(func=cmd_replay)
    d = sub.add_parser("demo", help="play a game between random players, rendering the first hands")
    d.add_argument("--config", default="configs/demo.yaml")
    d.add_argument("--seed", type=int)
    d.set_defaults(func=cmd_demo)
    a = sub.add_parser("arena", help="run a tournament between agents and write its report")
    a.add_argument("--config", default="configs/arena.yaml")
    a.add_argument("--resume", action="store_true", help="continue an interrupted tournament in the same 'out'")
    a.add_argument("--out")
    a.add_argument("--workers", type=int)
    a.add_argument("--backend", choices=["multiprocessing", "ray"])
    a.add_argument("--deals", type=int)
    a.add_argument("--seed", type=int)
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
    tp = tsub.add_parser("ppo", help="PPO self-play (configs/ppo_*.yaml)")
    tp.add_argument("--config", required=True)
    tp.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    tp.set_defaults(func=cmd_train_ppo)
    tc = tsub.add_parser("cfr", help="CFR+/DCFR/linear CFR solving (configs/cfr_*.yaml)")
    tc.add_argument("--config", required=True)
    tc.add_argument("--resume", action="store_true", help="continue the solve from its last checkpoint")
    tc.set_defaults(func=cmd_train_cfr)
    ex = sub.add_parser("exploitability", help="exact exploitability of an agent's policy (heads-up, public tree)")
    ex.add_argument("--agent", required=True, help="agent spec that gives probabilities: ppo:PATH, cfr:PATH, random")
    ex.add_argument("--variant", default="le_truc")
    ex.add_argument("--options", help="options as JSON (default: the variant's defaults)")
    ex.add_argument("--dealer", type=int, default=0)
    ex.add_argument("--abstraction", choices=["strength", "none"], default="strength")
    ex.add_argument("--first-hands", type=int, default=4,
                    help="first hands sampled per seat for the play after a redeal (averaged)")
    ex.add_argument("--suits", type=int, default=1,
                    help="1: one canonical suit assignment; k > 1: average over k random suit relabellings")
    ex.add_argument("--check-hands", type=int, default=0,
                    help="self-play hands on which to measure the projection error (0: skip)")
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--quiet", action="store_true", help="no progress bar")
    ex.add_argument("--out", help="write the result as JSON here")
    ex.set_defaults(func=cmd_exploitability)
    an = sub.add_parser("analyze", help="analyse agents (partner signals)")
    asub = an.add_subparsers(dest="analysis", required=True)
    asig = asub.add_parser("signals", help="signalling, listening, causal influence, ablation, cross-play (docs/signals.md)")
    from train.signals import add_arguments

    add_arguments(asig)
    asig.set_defaults(func=cmd_analyze_signals)
    b = sub.add_parser("bench", help="steps per second of the engine, the envs and the batched engine, beside peers")
    _bench_module().build_parser(b)
    b.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except TrucError as e:
        print(f"truc: error: {e}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as e:
        print(f"truc: error: --options is not valid JSON: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
