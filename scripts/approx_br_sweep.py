"""The learned best response's settings, compared on the shrunk heads-up Le Truc (docs/approx_exploitability.md).

    python scripts/approx_br_sweep.py --out docs/results/data/approx_br_sweep.json

Targets of known exploitability: PPO self-play networks (``observation+strength``, 64-64) trained on the shrunk
game of ``tests/test_approx_exploitability.py`` (4 ranks, 2-card hands, at most 2 raises, no redeal) for a few
budgets, each measured exactly (``exploitability.policy_exploitability``), and ``random``. Against each,
``approx_br.approx_exploitability`` learns a best response under every setting of ``SETTINGS`` (changes over
``approx_br.BR_SETTINGS``) for ``--steps`` learner steps and measures it on ``--eval-deals`` duplicate deals:
the fraction of the exact figure it recovers, per setting. Seed 0 everywhere.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from train.algos import ppo  # noqa: E402
from train.eval import approx_br  # noqa: E402
from train.eval import exploitability as ex  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402
from truc_env.io.atomic import atomic_write_text  # noqa: E402

OPTIONS = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}
TARGET_STEPS = (20_000, 200_000)  # self-play budgets of the target networks
SETTINGS = {
    "default (0.2 settings)": {"features": "observation+strength", "learning_rate": 3e-4, "anneal_lr": True,
                               "ent_coef": 0.003},
    "info_state+strength": {"features": "info_state+strength", "learning_rate": 3e-4, "anneal_lr": True,
                            "ent_coef": 0.003},
    "constant step 3e-4": {"features": "observation+strength", "anneal_lr": False},
    "step 1e-3, annealed": {"features": "observation+strength", "learning_rate": 1e-3},
    "constant step 1e-3": {"features": "observation+strength", "learning_rate": 1e-3, "anneal_lr": False},
    "info_state+strength, constant 1e-3": {"features": "info_state+strength", "learning_rate": 1e-3,
                                           "anneal_lr": False},
    "info_state+strength, constant 1e-3, no entropy": {"features": "info_state+strength", "learning_rate": 1e-3,
                                                       "anneal_lr": False, "ent_coef": 0.0},
    "info_state+strength, constant 1e-3, 2048/update": {"features": "info_state+strength", "learning_rate": 1e-3,
                                                        "anneal_lr": False, "steps_per_update": 2048},
    "constant 1e-3, 2048/update": {"features": "observation+strength", "learning_rate": 1e-3, "anneal_lr": False,
                                   "steps_per_update": 2048},
    "constant 3e-3, 2048/update": {"features": "observation+strength", "learning_rate": 3e-3, "anneal_lr": False,
                                   "steps_per_update": 2048},
    "constant 1e-3, 2048/update, 10 epochs": {"features": "observation+strength", "learning_rate": 1e-3,
                                              "anneal_lr": False, "steps_per_update": 2048, "update_epochs": 10},
    "warm start (init_from=agent), constant 1e-3, 2048/update": {"init_from": "agent", "learning_rate": 1e-3,
                                                                  "anneal_lr": False, "steps_per_update": 2048},
    "warm start, constant 3e-4, 2048/update": {"init_from": "agent", "learning_rate": 3e-4, "anneal_lr": False,
                                               "steps_per_update": 2048},
    "constant 1e-3, 2048/update, 512-512": {"features": "observation+strength", "learning_rate": 1e-3,
                                            "anneal_lr": False, "steps_per_update": 2048, "hidden": [512, 512]},
}


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def train_target(rules, steps: int, root: str) -> str:
    """A PPO self-play network of the shrunk game after ``steps`` learner steps: its ``net:`` spec."""
    import os

    if os.path.exists(f"{root}/target_{steps}/policy.pt"):  # kept by an earlier call with --targets-dir
        return f"net:{root}/target_{steps}/policy.pt"
    cfg = ppo.PPOConfig.from_dict({
        "name": f"target_{steps}", "out_dir": root, "variant": "le_truc", "options": OPTIONS, "seed": 0,
        "total_steps": steps, "steps_per_update": 2048, "num_envs": 64, "hidden": [64, 64],
        "features": "observation+strength", "self_play_prob": 1.0, "learning_rate": 1e-3, "eval_episodes": 10,
        "eval_opponent": "random", "eval_every": 10**6, "checkpoint_every": 10**6, "progress": False,
        "tensorboard": False, "plot": False})
    run = ppo.train(cfg)
    return f"net:{run['run_dir']}/policy.pt"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100_000, help="learner steps of each best response")
    p.add_argument("--eval-deals", type=int, default=1500)
    p.add_argument("--only", nargs="*", help="the settings to run (names of SETTINGS; default all)")
    p.add_argument("--no-random", action="store_true", help="skip the random target")
    p.add_argument("--targets", nargs="*", type=int, default=list(TARGET_STEPS), help="self-play budgets of the targets")
    p.add_argument("--targets-dir", help="keep the target networks here (and reuse them)")
    p.add_argument("--out")
    args = p.parse_args()
    rules = make_rules("le_truc", **OPTIONS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="truc-br-sweep-") as tmp:
        root = args.targets_dir or tmp
        targets = {} if args.no_random else {"random": "random"}
        targets |= {f"self-play {s:,} steps": train_target(rules, s, root) for s in args.targets}
        for label, spec in targets.items():
            exact = ex.policy_exploitability(make_agent(spec, rules, seed=0), rules, log=lambda m: None)
            exact = exact["exploitability"]
            print(f"{label}: exact {exact:.4f}", flush=True)
            for name, over in SETTINGS.items():
                if args.only and name not in args.only:
                    continue
                c0 = cpu()
                r = approx_br.approx_exploitability(spec, rules, args.steps, seed=0, eval_deals=args.eval_deals,
                                                    overrides=over, log=lambda m: None)
                row = {"target": label, "exact": exact, "setting": name, "overrides": over,
                       "bound": r["exploitability_lower_bound"], "ci95": r["ci95"], "recovered": r[
                           "exploitability_lower_bound"] / exact, "steps": r["br_steps"], "cpu_s": cpu() - c0}
                rows.append(row)
                print(f"  {name:50s} {row['bound']:+.3f} ({row['ci95'][0]:+.3f} .. {row['ci95'][1]:+.3f}) "
                      f"{100 * row['recovered']:.0f}%  {row['cpu_s']:.0f} CPU s", flush=True)
    if args.out:
        atomic_write_text(args.out, json.dumps({"options": OPTIONS, "steps": args.steps, "eval_deals": args.eval_deals,
                                                "seed": 0, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
