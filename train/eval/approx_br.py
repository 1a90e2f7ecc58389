"""Approximate exploitability: a best response *learned* against a frozen policy (Timbers et al.,
"Approximate exploitability: learning a best response", IJCAI 2022), for any variant and any agent.

Where the public tree does not fit (:mod:`train.eval.exploitability` measures it exactly where it does),
the best response is trained, not computed: PPO (:mod:`train.algos.ppo`) with every episode's other side
played by the agent under test (``fixed_opponents: [spec]``, ``fixed_prob: 1``; the learner takes a
side drawn at random, both seats of it in a team game, so the best response is a team), for a stated
budget of learner steps. Its value is then measured on fresh duplicate deals (the arena's units,
:func:`train.eval.arena.play_unit`, on deal seeds of their own stream, never the training one): each deal
is played once with the best response on each side, from one hand at 0-0 with seat 0 dealing, so
the mean over deals is the mean of the two sides' best-response values, the definition of
``truc exploitability`` (OpenSpiel's, points per hand; the policy's self-play values cancel in a
zero-sum game), with a 95% t interval (:func:`train.eval.stats.mean_ci`).

A learned response is a best response only as far as training got, so the figure is a **lower bound**
on the exploitability (up to its interval): a policy the learner fails to beat may still be exploitable.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

from train import config
from train.eval import stats
from train.eval.arena import ArenaConfig, play_unit
from truc_env.errors import TrucError
from truc_env.game.rules import Rules

MAX_STEPS = 10**9  # more learner steps than any run of this project (a CPU-week): a typo, refused
EVAL_STREAM = 0x42525F45  # "BR_E": the evaluation deals' seed stream, apart from the arena's and training's
# the learner's settings where they differ from PPOConfig's defaults: one network for every seat of its
# side, against the agent alone, no league, no periodic evaluation or checkpoint (the run is one call).
# Against a fixed opponent the value targets are stationary: a constant step of 1e-3 on updates of 2,048
# steps (0.2: 3e-4 annealed to 0 on 4,096) took the real game's league PPO from 31% to 48% of its exact
# figure at 2M steps, and the shrunk game's targets alike (docs/approx_exploitability.md)
BR_SETTINGS = {"features": "observation+strength", "hidden": [256, 256], "num_envs": 64, "steps_per_update": 2048,
               "self_play_prob": 0.0, "fixed_prob": 1.0, "episode": "hand", "learning_rate": 1e-3,
               "anneal_lr": False, "ent_coef": 0.003, "fixed_batched": True, "tensorboard": False, "plot": False}
FIXED = ("name", "out_dir", "seed", "variant", "options", "total_steps", "fixed_opponents", "eval_opponent",
         "fixed_options", "time_limit_minutes")


def check_budget(steps: int, eval_deals: int) -> None:
    """Refuse a budget that measures nothing or that no run could finish."""
    if not 1 <= steps <= MAX_STEPS:
        raise TrucError(f"best-response budget {steps:,} learner steps: between 1 and {MAX_STEPS:,}")
    if eval_deals < 2:
        raise TrucError(f"evaluation deals {eval_deals}: at least 2 (an interval needs two)")


BR_PLAY = ("sample", "greedy")


def check_br_play(br_play: str) -> None:
    if br_play not in BR_PLAY:
        raise TrucError(f"--br-play {br_play!r}: one of {', '.join(BR_PLAY)}")


def check_request(spec: str, rules: Rules, steps: int, eval_deals: int, out_dir: str | None = None,
                  set_pairs=()) -> None:
    """Everything a measurement could be refused for, checked before any training starts."""
    from agents import make_agent

    check_budget(steps, eval_deals)
    if spec.partition(":")[0] == "human":
        raise TrucError("a best response is learned against an agent that plays by itself, not 'human'")
    make_agent(spec, rules, seed=0)  # an agent trained for other rules is refused here, before training
    if out_dir is not None and os.path.exists(os.path.join(out_dir, "br")):
        raise TrucError(f"{out_dir} already holds a best-response run (br/); choose another folder")
    with tempfile.TemporaryDirectory(prefix="truc-br-check-") as root:
        br_config(spec, rules, steps, 0, root, set_pairs=set_pairs)  # unknown or fixed --br-set keys


def br_config(spec: str, rules: Rules, steps: int, seed: int, out_dir: str, name: str = "br",
              overrides: dict | None = None, progress: bool = False, set_pairs=()):
    """The PPO config of the best-response learner against ``spec`` on ``rules``; ``overrides`` (a
    mapping) and ``set_pairs`` (``key=value`` strings, as ``--set``) change its settings."""
    from agents import spec_kind
    from agents.cfr.table_batch import BatchTable
    from train.algos.ppo import PPOConfig

    # the batched engine runs the episodes against a heads-up heuristic, a network or random
    # (train.algos.rollout.BatchPolicy), a table where BatchTable plays (agents.cfr.table_batch); other agents play
    # on engine tables (and it would only be built for nothing)
    kind = spec_kind(spec)  # net: and its alias ppo: alike (a check naming only ppo: sent net: to tables)
    table = kind == "table" and BatchTable.why_not_rules(rules) is None
    batched = (kind == "heuristic" and not rules.partnership and rules.players == 2) or kind in ("net", "random") or table
    d = {**BR_SETTINGS, "rollout": "auto" if batched else "engine", "progress": progress}
    d.update(overrides or {})
    d = config.apply_overrides(d, set_pairs)
    if d.get("init_from") == "agent":
        d.update(warm_start(spec, rules))
    fixed = sorted(set(d) & set(FIXED))
    if fixed:
        raise TrucError(f"best-response settings {', '.join(fixed)} are set by the measurement itself "
                        "(the agent, the rules, the budget, the run folder)")
    d.update({"name": name, "out_dir": out_dir, "seed": seed, "variant": rules.variant, "options": dict(rules.options),
              "total_steps": steps, "fixed_opponents": [spec], "eval_opponent": spec})
    d.setdefault("eval_every", max(1, steps // d["steps_per_update"]))  # the last update only
    d.setdefault("checkpoint_every", d["eval_every"])
    cfg = PPOConfig.from_dict(d, "best-response settings")
    cfg.validate()
    return cfg


def recorded_settings(overrides, set_pairs) -> list[str]:
    """The learner's settings a result names: :data:`BR_SETTINGS`' and every one the caller set (``--br-set
    update_epochs=8`` must be in the file that a figure is reproduced from)."""
    keys = [*BR_SETTINGS, "rollout", "rollout_shards", "init_from"]
    keys += list(overrides or {}) + [path[0] for path, _ in config.parse_overrides(set_pairs)]
    return [k for k in dict.fromkeys(keys) if k not in FIXED]


def play_deals(cfg_dict: dict, units: list[dict]) -> tuple[list[dict], float]:
    """The arena's units ``units`` played here (a Ray task of :func:`measure_value`), with the CPU seconds they took."""
    from train.algos.rollout_shards import cpu_seconds

    cpu0 = cpu_seconds()
    return [play_unit(cfg_dict, u) for u in units], cpu_seconds() - cpu0


def ray_units(cfg_dict: dict, units: list[dict], workers: int, bar) -> tuple[list[dict], float]:
    """``units`` played as Ray tasks (blocks of deals, about four per worker), in their order; the tasks' CPU seconds."""
    ray = config.require_ray()
    task = ray.remote(play_deals)
    size = max(1, -(-len(units) // (4 * workers)))
    calls = [task.remote(cfg_dict, units[i:i + size]) for i in range(0, len(units), size)]
    out, cpu = [], 0.0
    for call in calls:  # in order: the figure is a mean over deals, the same whoever played them
        results, seconds = ray.get(call)
        out += results
        cpu += seconds
        bar.update(len(results))
    return out, cpu


def warm_start(spec: str, rules: Rules) -> dict:
    """``init_from=agent``: the learner starts as the frozen network itself (its file, its features and
    hidden sizes), so it begins at the policy's own value against itself (0 in a zero-sum game) and
    PPO moves it from there, where a fresh learner must first learn to play the game at all."""
    from agents import is_network, spec_file, spec_kind
    from agents.network import load_policy

    if spec_kind(spec) != "net" or not is_network(spec):
        raise TrucError(f"init_from=agent starts the learner from the frozen network; {spec!r} is not a net: agent")
    path = spec_file(spec)
    _, meta = load_policy(path, rules)
    return {"init_from": path, "hidden": list(meta["net"]["hidden"]), "features": meta["net"]["features"]}


def measure_value(br_spec: str, spec: str, rules: Rules, deals: int, seed: int, progress: bool = False,
                  backend: str = "local", workers: int = 1) -> dict:
    """``br_spec``'s points per hand against ``spec`` over ``deals`` duplicate deals (each played with
    ``br_spec`` on either side, one hand from 0-0, seat 0 dealing), with a 95% t interval; ``backend: ray``
    plays the deals as Ray tasks (``workers`` of them at a time at most), with the same figure."""
    from tqdm import tqdm

    cfg = ArenaConfig(variant=rules.variant, options=dict(rules.options), agents=[br_spec, spec],
                      format="gauntlet", hero=br_spec, deals=deals, episode="hand",
                      seed=int(np.random.SeedSequence([seed, EVAL_STREAM]).generate_state(1)[0]))
    cfg.validate()
    cfg_dict = cfg.__dict__.copy()
    units = [{"id": f"0:{d}", "pairing": 0, "a": br_spec, "b": spec, "deal": d} for d in range(deals)]
    bar = tqdm(total=deals, desc="measure", unit="deal", disable=not progress, mininterval=5)
    if backend == "ray":
        results, task_cpu = ray_units(cfg_dict, units, workers, bar)
    else:
        results, task_cpu = [], 0.0
        for u in units:
            results.append(play_unit(cfg_dict, u))
            bar.update()
    bar.close()
    per_deal, per_side = [], [[], []]
    for unit in results:
        pts = [g["a_points"] / max(1, g["hands"]) for g in unit["games"]]
        per_deal.append(float(np.mean(pts)))
        for g, p in zip(unit["games"], pts):
            per_side[g["seating"] % 2].append(p)
    ci = stats.mean_ci(per_deal)
    return {"value": ci["mean"], "lo": ci["lo"], "hi": ci["hi"], "deals": deals, "sd": ci["sd"],
            "side0": float(np.mean(per_side[0])), "side1": float(np.mean(per_side[1])), "eval_seed": cfg.seed,
            "task_cpu": task_cpu, "per_deal": per_deal}


def approx_exploitability(spec: str, rules: Rules, steps: int, seed: int = 0, eval_deals: int = 2000,
                          out_dir: str | None = None, overrides: dict | None = None, progress: bool = False,
                          log=None, set_pairs=(), br_play: str = "sample") -> dict:
    """A lower bound on the exploitability of agent ``spec`` on ``rules`` (points per hand): PPO's best
    response after ``steps`` learner steps, measured on ``eval_deals`` fresh duplicate deals.

    ``br_play``: how the learned response plays the measuring deals, ``"sample"`` (its softmax, as it
    trained) or ``"greedy"`` (its most probable action, :mod:`agents.players.greedy`; a best response is
    deterministic, and greedy play measured 0.03-0.07 points a hand more on heads-up Le Truc).

    ``out_dir``: where the learner's run folder (``br/policy.pt``, playable as ``ppo:PATH``) is kept
    (None: a temporary folder, removed). ``overrides`` (a mapping), ``set_pairs`` (``key=value``): PPO
    settings over :data:`BR_SETTINGS`.
    """
    from train.algos.ppo import train

    check_request(spec, rules, steps, eval_deals, out_dir, set_pairs)
    check_br_play(br_play)
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    tmp = tempfile.TemporaryDirectory(prefix="truc-br-") if out_dir is None else None
    root = tmp.name if tmp is not None else out_dir
    ray_started = False
    try:
        cfg = br_config(spec, rules, steps, seed, root, overrides=overrides, progress=progress, set_pairs=set_pairs)
        if cfg.backend == "ray":  # one Ray for the learner's workers and the measurement's tasks
            from train.algos.rollout_shards import start_ray

            ray = config.require_ray()
            ray_started = start_ray(cfg.workers)
        cpu0, t0 = time.process_time(), time.time()
        say(f"[br] learning a best response to {spec} on {rules.variant}: {cfg.total_steps:,} learner steps")
        run = train(cfg)
        train_cpu = time.process_time() - cpu0
        policy = os.path.join(run["run_dir"], "policy.pt")
        say(f"[br] trained {run['global_step']:,} steps in {train_cpu:.0f}s CPU; measuring on {eval_deals} deals")
        cpu1 = time.process_time()
        br_spec = f"greedy:ppo:{policy}" if br_play == "greedy" else f"ppo:{policy}"
        value = measure_value(br_spec, spec, rules, eval_deals, seed, progress, cfg.backend, cfg.workers)
        out = {"agent": spec, "variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key,
               "dealer": 0, "score": [0, 0], "kind": "lower bound (learned best response)",
               "exploitability_lower_bound": value["value"], "ci95": [value["lo"], value["hi"]],
               "br_side0": value["side0"], "br_side1": value["side1"], "eval_deals": eval_deals,
               "eval_seed": value["eval_seed"], "sd_per_deal": value["sd"], "br_steps": run["global_step"],
               "br_budget": steps, "seed": seed, "br_play": br_play,
               "br_settings": {k: getattr(cfg, k) for k in recorded_settings(overrides, set_pairs)},
               "br_policy": policy if tmp is None else None, "train_cpu_seconds": train_cpu,
               "measure_cpu_seconds": time.process_time() - cpu1, "seconds": time.time() - t0,
               "backend": cfg.backend, "workers": cfg.workers}
        if cfg.backend == "ray":  # the workers' CPU beside the driver's
            out["train_worker_cpu_seconds"], out["measure_task_cpu_seconds"] = run["worker_cpu_s"], value["task_cpu"]
    finally:
        if ray_started:
            ray.shutdown()
        if tmp is not None:
            tmp.cleanup()
    return out


def br_pairs(args) -> list[str]:
    """The learner's settings of ``truc exploitability --approx``: ``--backend``, ``--workers``,
    ``--rollout-shards``, then every ``--br-set``."""
    flags = (("backend", args.backend), ("workers", args.workers), ("rollout_shards", args.rollout_shards))
    return [f"{k}={v}" for k, v in flags if v is not None] + list(args.br_set)


def cmd_approx(args) -> None:
    """``truc exploitability --approx``: print the lower bound and its interval (and write it as JSON)."""
    import json

    from train.config import parse_options
    from truc_env.game.rules import make_rules
    from truc_env.io.atomic import atomic_write_text

    rules = make_rules(args.variant, **parse_options(args.options))
    if args.dealer != 0:
        raise TrucError("--approx measures from seat 0 dealing (the duplicate deals' seating); drop --dealer")
    r = approx_exploitability(args.agent, rules, args.br_steps, args.seed, args.eval_deals, args.br_dir,
                              progress=not args.quiet, set_pairs=br_pairs(args), br_play=args.br_play)
    lo, hi = r["ci95"]
    print(f"{args.agent} on {rules.variant} (one hand from 0-0, seat 0 deals), learned best response:")
    print(f"  exploitability >= {r['exploitability_lower_bound']:.4f} points per hand (95% interval "
          f"{lo:.4f} .. {hi:.4f}; a lower bound: the response is learned, not exact)")
    if hi < 0:
        print("  (below 0: the learner has not caught up with the policy yet; a larger --br-steps may)")
    print(f"  best response on side 0 {r['br_side0']:+.4f}; on side 1 {r['br_side1']:+.4f} (played: {r['br_play']})")
    print(f"  {r['br_steps']:,} learner steps (budget {r['br_budget']:,}), {r['eval_deals']} fresh duplicate deals; "
          f"{r['train_cpu_seconds']:.0f}s CPU training, {r['measure_cpu_seconds']:.0f}s CPU measuring")
    if r["backend"] == "ray":
        print(f"  on Ray, {r['workers']} workers, {r['br_settings']['rollout_shards']} rollout shards: "
              f"{r['train_worker_cpu_seconds']:.0f}s CPU in the learner's workers, "
              f"{r['measure_task_cpu_seconds']:.0f}s in the measurement's tasks")
    if r["br_policy"]:
        print(f"  best response kept as ppo:{r['br_policy']}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        atomic_write_text(args.out, json.dumps(r, indent=2))
        print(f"  written to {args.out}")
