"""PPO's rollout in shards, played in this process or by Ray actors (``rollout_shards``, ``backend``, ``workers``).

With ``rollout_shards: S`` the ``num_envs`` tables are split into S shards of ``num_envs / S``. Shard ``i``
has its own :class:`~train.algos.rollout.Collector` (its tables, its batched engine, its fixed agents) and
its own two generators (deals, seats and opponents; action sampling), seeded from ``(seed, i)``, and
collects at least ``ceil(steps_per_update / S)`` learner steps per update. The learner joins the shards'
transitions and episodes in shard order (:meth:`~train.algos.buffer.Buffer.join`) and updates on them, so
what it learns is a function of the seed, the config and S, whoever plays the shards:

- ``backend: local`` plays them in this process, one after the other; with S = 1 it is the rollout every run
  of the project made before (one collector of ``num_envs`` tables on the training generators);
- ``backend: ray`` hands them to ``workers`` Ray actors (worker ``w`` holds shards ``w, w + workers, ...``
  with their collectors for the whole run). Each update the learner sends the policy's weights, the
  league (its snapshots' parameters only when new) and the generator states of the worker's shards; the
  worker plays them and sends back their transitions, episodes and generator states. The generators live
  with the learner, so a checkpoint holds them and ``--resume`` continues on any number of workers;
  with S = 1 a Ray run is the local one.

The equality is exact (tests/test_ppo_ray.py): workers run torch on the CPU (a learner on CUDA is refused)
with the learner's ``torch_threads`` (1 by default) and ``deterministic`` setting; with ``torch_threads`` above 1 a
forward may sum in another order on another thread count or CPU, so the last bits of a probability, and
from there a sampled action, may differ between machines (as between two local runs on different CPUs).
"""

from __future__ import annotations

import dataclasses
import math
import os
import resource

import numpy as np
import torch

from agents import make_agent
from train.algos.buffer import Buffer
from train.algos.league import League
from train.algos.rollout import Collector, fixed_rules, opponent_picker
from train.config import require_ray
from truc_env.errors import TrucError

SHARD_STREAM = 0x5348_4152  # "SHAR": the shards' seed stream, apart from every other one


def start_ray(workers: int) -> bool:
    """Ray for ``workers`` workers: the one already running in this process; else the cluster at
    ``$RAY_ADDRESS`` (``ray start`` on the machines; truc-env installed on each); else a local one started
    with ``workers`` CPUs, capped at the cores here. True when this call started or joined it (the caller
    then shuts it down)."""
    from train import config

    ray = require_ray()
    if ray.is_initialized():
        return False
    if os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
    else:
        ray.init(address="local", num_cpus=config.worker_count(workers), include_dashboard=False, log_to_driver=False)
    return True


def cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def shard_generators(cfg, shard: int, device) -> tuple[np.random.Generator, torch.Generator]:
    """Shard ``shard``'s generators (of a run with more than one shard), seeded from (seed, shard)."""
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, shard, SHARD_STREAM]))
    seed = int(np.random.SeedSequence([cfg.seed, shard, SHARD_STREAM, 1]).generate_state(1, np.uint64)[0] >> 1)
    return rng, torch.Generator(device=device).manual_seed(seed)


class Shard:
    """One shard's tables: a collector of ``num_envs / rollout_shards`` slots with fixed agents of its own
    (a fixed agent is reseeded per episode but shared by its collector's tables: shards must not share it)."""

    def __init__(self, cfg, rules, device, league: League):
        self.cfg, self.league = cfg, league
        self.collector = Collector(dataclasses.replace(cfg, num_envs=cfg.num_envs // cfg.rollout_shards), rules, device)
        with torch.random.fork_rng(devices=[]):  # loading an agent must not move the learner's global generator
            for spec in cfg.fixed_opponents:
                self.collector.fixed[spec] = make_agent(spec, fixed_rules(cfg, rules), seed=0)
        self.pick = opponent_picker(cfg, self.collector, league)

    def rollout(self, net, rng, gen) -> tuple[Buffer, list]:
        target = math.ceil(self.cfg.steps_per_update / self.cfg.rollout_shards)
        return self.collector.rollout(net, self.league, rng, gen, self.pick, target_steps=target)


def joined(parts: list) -> tuple[Buffer, list]:
    """The shards' ``(buffer, episodes)`` in shard order, as one rollout."""
    return Buffer.join([b for b, _ in parts]), [e for _, eps in parts for e in eps]


class LocalRollouts:
    """``backend: local``: the shards in this process, one after the other (one shard: the run's own
    collector on the training generators, the rollout of every run before shards existed)."""

    def __init__(self, run, collector: Collector, pick):
        self.collector, self.pick = collector, pick
        cfg = run.cfg
        self.shards = [Shard(cfg, run.rules, run.device, run.league) for _ in range(cfg.rollout_shards)] \
            if cfg.rollout_shards > 1 else []
        self.worker_cpu = 0.0

    def rollout(self, run) -> tuple[Buffer, list]:
        if not self.shards:
            return self.collector.rollout(run.net, run.league, run.rng, run.gen, self.pick,
                                          target_steps=run.cfg.steps_per_update)
        return joined([sh.rollout(run.net, rng, gen) for sh, (rng, gen) in zip(self.shards, run.shard_generators)])

    def close(self) -> None:
        pass


class ShardWorker:
    """A Ray actor's side: shards ``owned`` of the run ``cfg``, their collectors kept for the whole run."""

    def __init__(self, cfg, owned: list[int], device: str):
        from agents.network import PolicyNet, feature_size
        from truc_env.game.actions import layout_of

        torch.set_num_threads(cfg.torch_threads)
        if cfg.deterministic:
            torch.use_deterministic_algorithms(True)
        rules = cfg.rules()
        self.device = torch.device(device)
        self.net = PolicyNet(feature_size(rules, cfg.features), layout_of(rules).size, cfg.hidden,
                             init=False).to(self.device).eval()
        self.league = League(cfg)
        self.params: dict[int, dict] = {}  # snapshot's update -> its parameters, kept: the collectors cache by them
        self.shards = {i: Shard(cfg, rules, self.device, self.league) for i in owned}

    def rollout(self, weights: dict, league: list, new_params: dict, jobs: list) -> tuple[list, float]:
        """Play ``jobs`` (shard, numpy generator state, torch generator state) with the policy ``weights``
        against the ``league`` (its snapshots' update, win rate and games; parameters of new ones in
        ``new_params``); per job its buffer, episodes and generator states, and the CPU seconds it took."""
        cpu0 = cpu_seconds()
        self.net.load_state_dict(weights)
        self.params.update({u: {k: v.to(self.device) for k, v in p.items()} for u, p in new_params.items()})
        self.params = {s["update"]: self.params[s["update"]] for s in league}
        self.league.snapshots = [{**s, "params": self.params[s["update"]]} for s in league]
        out = []
        for shard, np_state, torch_state in jobs:
            rng = np.random.default_rng()
            rng.bit_generator.state = np_state
            gen = torch.Generator(device=self.device)
            gen.set_state(torch_state)
            buf, episodes = self.shards[shard].rollout(self.net, rng, gen)
            buf.own_arrays()  # joined here: one array each to send
            out.append((buf, episodes, rng.bit_generator.state, gen.get_state()))
        return out, cpu_seconds() - cpu0

    def cpu_seconds(self) -> float:
        """CPU seconds of this worker's process since it started (imports and set-up included)."""
        return cpu_seconds()


class RayRollouts:
    """``backend: ray``: the shards played by ``workers`` Ray actors (on the Ray of :func:`start_ray`,
    stopped at the end if this started it)."""

    def __init__(self, run):
        ray = self.ray = require_ray()
        cfg = run.cfg
        if run.device.type != "cpu":  # Ray hides the GPUs from workers that reserve none
            raise TrucError(f"backend: ray plays the rollouts on the workers' CPUs, and this run's device is "
                            f"{run.device.type}: set device: cpu (or backend: local)")
        self.started = start_ray(cfg.workers)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        n = min(cfg.workers, max(1, cpus))
        if n < cfg.workers:
            print(f"ppo {cfg.name}: {n} Ray workers, not {cfg.workers}: the cluster has {cpus} CPUs (same result)")
        self.owned = [list(range(w, cfg.rollout_shards, n)) for w in range(n)]
        print(f"ppo {cfg.name}: {cfg.rollout_shards} rollout shards on {n} Ray workers")
        worker = ray.remote(num_cpus=1)(ShardWorker)
        self.actors = [worker.remote(cfg, owned, "cpu") for owned in self.owned]
        self.sent: set[int] = set()  # snapshots whose parameters the workers hold
        self.worker_cpu = 0.0  # CPU seconds the workers spent in rollouts

    def rollout(self, run) -> tuple[Buffer, list]:
        ray = self.ray
        gens = run.shard_generators or [(run.rng, run.gen)]
        weights = ray.put({k: v.detach().cpu() for k, v in run.net.state_dict().items()})
        snaps = run.league.snapshots
        league = [{k: s[k] for k in ("update", "win_rate", "games")} for s in snaps]
        new = ray.put({s["update"]: {k: v.cpu() for k, v in s["params"].items()}
                       for s in snaps if s["update"] not in self.sent})
        self.sent = {s["update"] for s in snaps}
        calls = [actor.rollout.remote(weights, league, new,
                                      [(i, gens[i][0].bit_generator.state, gens[i][1].get_state()) for i in owned])
                 for actor, owned in zip(self.actors, self.owned)]
        try:
            results = ray.get(calls)
        except ray.exceptions.RayActorError as e:  # killed, out of memory, its node gone
            raise TrucError(f"a Ray rollout worker died ({type(e).__name__}); the last checkpoint stands: "
                            "--resume continues, on any number of workers") from None
        parts: list = [None] * len(gens)
        for owned, (out, cpu) in zip(self.owned, results):
            self.worker_cpu += cpu
            for i, (buf, episodes, np_state, torch_state) in zip(owned, out):
                buf.own_arrays()
                parts[i] = (buf, episodes)
                gens[i][0].bit_generator.state = np_state
                gens[i][1].set_state(torch_state)
        return parts[0] if len(parts) == 1 else joined(parts)

    def process_cpu(self) -> float:
        """CPU seconds of the workers' processes since they started."""
        return float(sum(self.ray.get([a.cpu_seconds.remote() for a in self.actors])))

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
        if self.started:
            self.ray.shutdown()


def make_rollouts(run, collector: Collector, pick):
    """The run's rollouts on its backend."""
    return RayRollouts(run) if run.cfg.backend == "ray" else LocalRollouts(run, collector, pick)
