"""Learner steps per CPU-second: our PPO trainer beside sb3-contrib's MaskablePPO, in one run.

    python -m train.bench.learners [--config configs/ppo/le_truc_fast.yaml] [--updates 8]
                                   [--sb3-updates 2] [--repeats 1] [--out results/bench]

A *learner step* is one recorded transition: a decision of a learning seat (in self-play both seats
learn, so both count; ``global_step`` of the trainer). Each row runs a whole training loop (rollouts
and updates) after a warm-up of one update in the same process (numba's kernel load, torch's lazy
imports), and divides the learner steps by the CPU seconds of this process (``time.process_time``,
every thread included; one torch thread, numba serial below ``PARALLEL_MIN_B`` games, TensorBoard,
evaluation, plots and checkpoints off), pinned to one core (:mod:`train.bench.threads`).

Rows:

- ``ours``: ``truc train ppo`` with ``--config`` (default ``configs/ppo/le_truc_fast.yaml``: pure
  self-play on the batched engine);
- ``ours, ppo_le_truc.yaml network``: the same self-play with the network, epochs and ``num_envs``
  of ``configs/ppo/le_truc.yaml`` (the trainer's speed before the fast config);
- ``MaskablePPO``: sb3-contrib's MaskablePPO on our Gymnasium env (``truc_env.envs.gym_env.SingleAgentEnv``,
  seat 0 against the ``random`` agent, one hand per episode, the same reward), with the config's
  network (separate actor and critic MLPs of ``hidden``, tanh), ``steps_per_update`` as ``n_steps``,
  ``update_epochs`` as ``n_epochs`` and ``steps_per_update / num_minibatches`` as ``batch_size``.
  Its learner steps are the learning seat's decisions; the opponent's decisions are part of its
  environment's cost (the single-agent interface has no self-play), as are the 325 inputs of the
  observation vector (ours: 336, the same vector plus card strengths).

``--repeats`` runs the rows in turn that many times and keeps each row's median, so the load of a
shared machine falls on all of them alike. ``benchmarks/targets.md`` holds the target this is held to.
Results: ``<out>/learners.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import tempfile
import time

from train.bench.threads import pin_single_thread
from truc_env.io.atomic import atomic_open

FAST_CONFIG = "configs/ppo/le_truc_fast.yaml"
BASE_CONFIG = "configs/ppo/le_truc.yaml"
# the trainer evaluates at its last update whatever eval_every says: one episode against random
QUIET = {"eval_every": 10**9, "eval_episodes": 1, "eval_opponent": "random", "checkpoint_every": 10**9, "tensorboard": False, "plot": False, "progress": False,
         "curves_png": "", "exploitability_every": 0, "time_limit_minutes": 0.0, "device": "cpu", "torch_threads": 1}


def ours(cfg, updates: int, out_dir: str) -> dict:
    """Our trainer on ``cfg`` for ``updates`` updates after a one-update warm-up; learner steps per CPU-second."""
    from train.algos.ppo import PPOConfig, train

    def run(name: str, n: int) -> tuple[int, float]:
        c = PPOConfig.from_dict({**dataclasses.asdict(cfg), **QUIET, "name": name, "out_dir": out_dir,
                                 "total_steps": n * cfg.steps_per_update})
        t = time.process_time()
        summary = train(c)
        return summary["global_step"], time.process_time() - t

    run("warmup", 1)
    steps, cpu = run("measured", updates)
    return {"learner_steps": steps, "cpu_s": cpu, "steps_per_cpu_s": steps / cpu}


def maskable_ppo(cfg, updates: int) -> dict:
    """sb3-contrib's MaskablePPO on ``SingleAgentEnv`` with ``cfg``'s network and batch sizes (see the module docstring)."""
    import torch
    from sb3_contrib import MaskablePPO

    from truc_env.envs.gym_env import SingleAgentEnv

    env = SingleAgentEnv(cfg.variant, seat=0, opponents="random", episode=cfg.episode, reward=cfg.reward,
                         **(cfg.options or {}))
    model = MaskablePPO("MlpPolicy", env, n_steps=cfg.steps_per_update,
                        batch_size=cfg.steps_per_update // cfg.num_minibatches, n_epochs=cfg.update_epochs,
                        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
                        clip_range=cfg.clip_coef, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
                        max_grad_norm=cfg.max_grad_norm, seed=cfg.seed, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": {"pi": list(cfg.hidden), "vf": list(cfg.hidden)},
                                       "activation_fn": torch.nn.Tanh})
    model.learn(cfg.steps_per_update)  # warm-up: one rollout and one update
    before = model.num_timesteps
    t = time.process_time()
    model.learn(updates * cfg.steps_per_update, reset_num_timesteps=False)
    cpu = time.process_time() - t
    steps = model.num_timesteps - before
    return {"learner_steps": steps, "cpu_s": cpu, "steps_per_cpu_s": steps / cpu}


def base_network(cfg, base_path: str):
    """``cfg`` (pure self-play) with the network, epochs, minibatches and ``num_envs`` of ``base_path``."""
    from train.algos.ppo import PPOConfig

    base = PPOConfig.from_yaml(base_path)
    keep = ("hidden", "update_epochs", "num_minibatches", "num_envs", "steps_per_update", "features")
    return dataclasses.replace(cfg, **{k: getattr(base, k) for k in keep})


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=FAST_CONFIG, help="our trainer's PPO config (pure self-play)")
    p.add_argument("--base-config", default=BASE_CONFIG, help="the config whose network the second row uses ('' skips it)")
    p.add_argument("--updates", type=int, default=8, help="measured updates of our trainer")
    p.add_argument("--sb3-updates", type=int, default=2, help="measured updates of MaskablePPO")
    p.add_argument("--repeats", type=int, default=1, help="rounds of all rows; each row keeps its median")
    p.add_argument("--no-sb3", action="store_true", help="skip MaskablePPO")
    p.add_argument("--out", default="results/bench", help="folder of learners.json")
    args = p.parse_args(argv)

    core = pin_single_thread()
    import torch

    from train.algos.ppo import PPOConfig

    torch.set_num_threads(1)
    cfg = PPOConfig.from_yaml(args.config)
    rows = {"ours": lambda d: ours(cfg, args.updates, d)}
    if args.base_config:
        base = base_network(cfg, args.base_config)
        rows[f"ours, {os.path.basename(args.base_config)} network"] = lambda d: ours(base, args.updates, d)
    if not args.no_sb3:
        rows["MaskablePPO"] = lambda d: maskable_ppo(cfg, args.sb3_updates)
    runs: dict[str, list] = {name: [] for name in rows}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for i, (name, fn) in enumerate(rows.items()):
                res = fn(os.path.join(tmp, f"round{r}-row{i}"))
                runs[name].append(res)
                print(f"{name:40s} {res['steps_per_cpu_s']:>10,.0f} learner steps/CPU-s "
                      f"({res['learner_steps']} steps in {res['cpu_s']:.2f} CPU-s)", flush=True)
    result = {name: {"steps_per_cpu_s": statistics.median(x["steps_per_cpu_s"] for x in rs), "runs": rs}
              for name, rs in runs.items()}
    out = {"config": args.config, "hidden": list(cfg.hidden), "steps_per_update": cfg.steps_per_update,
           "update_epochs": cfg.update_epochs, "num_minibatches": cfg.num_minibatches, "num_envs": cfg.num_envs,
           "core": core, "torch_threads": torch.get_num_threads(), "rows": result}
    if "MaskablePPO" in result:
        out["ours_over_maskable_ppo"] = result["ours"]["steps_per_cpu_s"] / result["MaskablePPO"]["steps_per_cpu_s"]
        print(f"ours / MaskablePPO: {out['ours_over_maskable_ppo']:.1f}x")
    os.makedirs(args.out, exist_ok=True)
    with atomic_open(os.path.join(args.out, "learners.json"), "w") as f:
        json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
