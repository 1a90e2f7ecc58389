"""Learner steps per CPU-second of PPO's rollouts here and on Ray workers (docs/approx_exploitability.md).

    python scripts/ppo_ray_speed.py --config ppo/small --shards 2 --workers 2 --updates 16 --out speed.json
    python scripts/ppo_ray_speed.py --approx net:le_truc --br-steps 65536 --eval-deals 400 --out approx.json

Trains the config three times for ``--updates`` updates, exploitability and evaluation off: ``local`` with one
shard (the rollout of every run before Ray), ``local`` with ``--shards`` shards, and ``ray`` with the same
shards on ``--workers`` Ray actors of a local cluster started here, then checks that the last two wrote the
same weights. The CPU counted for a run is every process's user + system time: this one (getrusage) and,
on Ray, every process the cluster started (its workers, raylet, GCS, ...: psutil, children included) over
the run, with the cluster's start-up counted apart. A one-update warm-up run comes first (loading the
batched engine's compiled kernels is not counted against the first run). Wall seconds are printed too; they depend on what else
the machine is running, CPU seconds far less. ``--approx AGENT`` measures the learned best response of
``truc exploitability --approx`` (its learner and its measuring deals) the same three ways instead.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class ClusterCPU:
    """CPU seconds of every process below this one (Ray's workers, raylet, GCS, ...), sampled every half
    second in a thread: each process's own user + system time at its last sample, dead ones included
    (a process's last half second before it ends may be missed; children's times are not added twice)."""

    def __init__(self):
        import threading

        self.seen: dict[int, float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        import psutil

        for p in psutil.Process().children(recursive=True):
            try:
                t = p.cpu_times()
                self.seen[(p.pid, p.create_time())] = t.user + t.system
            except psutil.Error:  # gone meanwhile
                pass

    def _watch(self) -> None:
        while not self.stop.wait(0.5):
            self._sample()

    def total(self) -> float:
        self._sample()
        return sum(self.seen.values())


CLUSTER = None


def cluster_cpu() -> float:
    global CLUSTER
    if CLUSTER is None:
        CLUSTER = ClusterCPU()
    return CLUSTER.total()


def train_once(cfg_dict: dict, label: str) -> dict:
    from train.algos import ppo

    cfg = ppo.PPOConfig.from_dict(cfg_dict)
    before, cluster_before, t0 = own_cpu(), cluster_cpu(), time.time()
    summary = ppo.train(cfg)
    wall, cpu, cluster = time.time() - t0, own_cpu() - before, cluster_cpu() - cluster_before
    total = cpu + cluster
    row = {"run": label, "backend": cfg.backend, "rollout_shards": cfg.rollout_shards, "workers": cfg.workers,
           "learner_steps": summary["global_step"], "driver_cpu_s": round(cpu, 2), "cluster_cpu_s": round(cluster, 2),
           "cpu_s": round(total, 2), "steps_per_cpu_s": round(summary["global_step"] / total, 1),
           "wall_s": round(wall, 2), "steps_per_wall_s": round(summary["global_step"] / wall, 1)}
    if "worker_cpu_s" in summary:
        row["worker_cpu_s"] = round(summary["worker_cpu_s"], 2)
        row["worker_rollout_cpu_s"] = round(summary["worker_rollout_cpu_s"], 2)
    print(json.dumps(row), flush=True)
    return {**row, "net": summary["net"]}


def approx_once(args, label: str, **settings) -> dict:
    from train.eval import approx_br
    from truc_env.game.rules import make_rules

    before, cluster_before, t0 = own_cpu(), cluster_cpu(), time.time()
    r = approx_br.approx_exploitability(args.approx, make_rules(args.variant), args.br_steps, args.seed,
                                        args.eval_deals, overrides=settings, log=lambda m: None)
    wall, cpu, cluster = time.time() - t0, own_cpu() - before, cluster_cpu() - cluster_before
    total = cpu + cluster
    row = {"run": label, **settings, "learner_steps": r["br_steps"], "lower_bound": r["exploitability_lower_bound"],
           "ci95": r["ci95"], "driver_cpu_s": round(cpu, 2), "cluster_cpu_s": round(cluster, 2), "cpu_s": round(total, 2),
           "steps_per_cpu_s": round(r["br_steps"] / total, 1), "wall_s": round(wall, 2)}
    if "train_worker_cpu_seconds" in r:  # the workers' own accounts (getrusage in each)
        row["learner_workers_cpu_s"] = round(r["train_worker_cpu_seconds"], 2)
        row["measure_tasks_cpu_s"] = round(r["measure_task_cpu_seconds"], 2)
    print(json.dumps(row), flush=True)
    return row


def main_approx(args) -> None:
    """``--approx AGENT``: the learned best response of ``truc exploitability --approx`` the same three ways."""
    import ray

    rows = [approx_once(args, "local, 1 shard")]
    rows.append(approx_once(args, f"local, {args.shards} shards", rollout_shards=args.shards))
    cpu0, cluster0, t0 = own_cpu(), cluster_cpu(), time.time()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    start = {"ray_start_cpu_s": round(own_cpu() - cpu0 + cluster_cpu() - cluster0, 2),
             "ray_start_wall_s": round(time.time() - t0, 2)}
    rows.append(approx_once(args, f"ray, {args.shards} shards, {args.workers} workers", rollout_shards=args.shards,
                            backend="ray", workers=args.workers))
    ray.shutdown()
    same = all(rows[1][k] == rows[2][k] for k in ("lower_bound", "ci95", "learner_steps"))
    out = {"approx": args.approx, "variant": args.variant, "br_steps": args.br_steps, "eval_deals": args.eval_deals,
           "seed": args.seed, "cores": os.cpu_count(), "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
           **start, "ray_equals_local": same, "runs": rows}
    print(json.dumps(out, indent=1))
    if not same:
        raise SystemExit("the Ray measurement differs from the local one with the same shards")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="ppo/small")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--updates", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting of the config")
    ap.add_argument("--approx", metavar="AGENT", help="measure truc exploitability --approx against AGENT instead")
    ap.add_argument("--variant", default="le_truc", help="--approx: the variant (default options)")
    ap.add_argument("--br-steps", type=int, default=65536, help="--approx: the learner's budget")
    ap.add_argument("--eval-deals", type=int, default=400, help="--approx: the measuring deals")
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.approx:
        return main_approx(args)

    import ray
    import torch

    from train import config
    from train.algos.ppo import PPOConfig

    base = config.load(PPOConfig, args.config, args.set).__dict__.copy()
    root = tempfile.mkdtemp(prefix="truc-ray-speed-")
    base.update({"out_dir": root, "seed": args.seed, "total_steps": args.updates * base["steps_per_update"],
                 "exploitability_every": 0, "average": "none", "eval_every": 10**9, "eval_episodes": 2,
                 "progress": False, "tensorboard": False, "plot": False, "checkpoint_every": 10**9})
    train_once({**base, "name": "warm", "total_steps": base["steps_per_update"]}, "warm-up (not counted)")
    rows = [train_once({**base, "name": "local1"}, "local, 1 shard")]
    rows.append(train_once({**base, "name": "local_s", "rollout_shards": args.shards}, f"local, {args.shards} shards"))
    cpu0, cluster0, t0 = own_cpu(), cluster_cpu(), time.time()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False)
    start = {"ray_start_cpu_s": round(own_cpu() - cpu0 + cluster_cpu() - cluster0, 2),
             "ray_start_wall_s": round(time.time() - t0, 2)}
    rows.append(train_once({**base, "name": "ray", "rollout_shards": args.shards, "backend": "ray",
                            "workers": args.workers}, f"ray, {args.shards} shards, {args.workers} workers"))
    ray.shutdown()
    a, b = rows[1].pop("net").state_dict(), rows[2].pop("net").state_dict()
    rows[0].pop("net")
    same = all(torch.equal(a[k], b[k]) for k in a)
    load = os.getloadavg()
    out = {"config": args.config, "set": args.set, "updates": args.updates, "seed": args.seed, "cores": os.cpu_count(),
           "load_average_1_5_15": [round(x, 2) for x in load], **start, "ray_equals_local": same, "runs": rows}
    print(json.dumps(out, indent=1))
    if not same:
        raise SystemExit("the Ray run's weights differ from the local run's with the same shards")
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
