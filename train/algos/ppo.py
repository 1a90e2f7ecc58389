"""PPO self-play for every Truc variant, in one readable file (after CleanRL's ``ppo.py``).

Run: ``truc train ppo --config configs/ppo/le_truc.yaml [--resume]``.

How a rollout works. ``num_envs`` slots each play one episode at a time. An episode whose every
seat is a network (self-play, or the learner against a frozen snapshot of the league) is a game of
the batched engine (:class:`~truc_env.batch.vector.VectorEnv`, slot ``b`` = game ``b``) when ``rollout``
allows it, and so is a heads-up episode against a ``heuristic:*`` player, which decides there for
all its games at once (:mod:`agents.players.heuristic_batch`, the per-state player's actions exactly); an
episode against another fixed agent (CFR; any fixed agent in partnership rules: they read engine
states) is an engine :class:`~truc_env.game.engine.State` ("table") driven in Python, advanced through
chance events and the fixed agent to the next decision of a network. At each tick the decisions of
both kinds are grouped per network (the learner, or snapshot k), each group is one batched forward,
the batched heuristics decide for their games, the tables apply their actions and the batched
engine takes one step (games of other slots wait with action -1); on the
batched engine the decisions of all snapshots acting in a tick share one stacked forward. Both
kinds fill one buffer. One network plays every learning seat: the observation is relative to the
acting seat, so seats and partners share parameters.

``rollout``: ``engine`` plays every episode on tables (the path of the committed result configs);
``vector`` puts network-only episodes on the batched engine and refuses a config it cannot run
(``info_state`` features need the decision history, which only engine states keep; the kernel's
variants and options are listed in :func:`truc_env.batch.vector.kernel_supports`); ``auto`` is ``vector``
where possible, else ``engine`` (training prints which, and why). The batched engine draws deals,
dealers and random start scores from streams seeded by the training generator at each rollout.

Shards and Ray. ``rollout_shards: S`` splits the ``num_envs`` tables into S shards with generators of
their own, seeded from (seed, shard), joined in shard order; ``backend: ray`` plays them on ``workers`` Ray
actors, ``local`` here, with the same checkpoint either way (:mod:`train.algos.rollout_shards`). S = 1, the
default, is the rollout described above on the training generators.

Credit in turn-based play. Each learning seat of each table keeps its own trajectory: a pending
transition (its last decision) and the reward accumulated since. When the seat decides again, the
pending transition gets that reward and a link to the new one (its successor for GAE); when the
episode ends, the pending transition gets the rest of the reward and ``done``. So a hand that ends
on an opponent's (or the partner's) move is credited to the seat's last step, and no seat trains on
another seat's reward (partners do get their side's reward, which is their own). Rollouts collect
complete episodes (at least ``steps_per_update`` learner transitions), so no bootstrapping across
updates is needed and a checkpoint holds no half-played table.

Opponents (the league). Each episode's opponents are drawn: a fixed agent spec (heuristic, cfr)
with probability ``fixed_prob``; else the current policy itself (pure self-play, every seat learns)
with probability ``self_play_prob``; else a frozen past snapshot from the pool, chosen by
``pool_scheme``: ``latest``, ``uniform`` over the history, or ``prioritized`` by the learner's win
rate against it (PFSP: weight ``(1 - win_rate) ** pfsp_power``). Against a snapshot or a fixed
agent only the learner's side records transitions.

Algorithms (``algorithm``). ``ppo`` is CleanRL's clipped loss. ``mmd`` (magnetic mirror descent,
Sokota et al. 2023) adds ``alpha_t * KL(pi || magnet)`` to it, the reverse KL over the legal actions
to a uniform magnet or to a frozen copy of the policy refreshed every ``magnet_update_every``
updates, with ``alpha_t`` annealed linearly from ``magnet_coef`` to ``magnet_coef_end``; the KL is
logged as ``magnet_kl``. ``average`` also keeps the reach-weighted average of the iterates that
``exploitability_every`` measures (exact, on the public tree), logged and saved as ``average.npz``.
Exact exploitability of both on a shrunk game, and the sweep that tuned MMD: ``docs/results.md``.

Masking. Illegal actions get the smallest float as logit when sampling, and the stored masks are
applied again when the update recomputes log-probabilities and entropies.

Checkpoints (``{out_dir}/{name}/checkpoint.pt``) are written atomically after every
``checkpoint_every`` updates with the optimiser, every RNG state, the league and the metric history;
``--resume`` restarts from the last one, and with ``checkpoint_every: 1`` a kill -9 loses no
completed update. ``policy.pt`` (the network only) is what ``net:PATH`` loads in the arena.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

import truc_env
from agents import make_agent
from agents.network import PolicyNet, feature_size, read_checkpoint, save_atomic
from agents.network.checkpoint import FORMAT, VERSION
from train import config
from train.algos.league import League
from train.algos.ppo_config import PPOConfig
from train.algos.ppo_exploitability import IterateAverage, measure_exploitability, write_exploitability_csv
from train.algos.ppo_plots import plot_curves, plot_exploitability, run_title
from train.algos.rollout import Collector, fixed_rules, opponent_picker, score_of
from train.algos.rollout_shards import make_rollouts, shard_generators
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of


# ---------------------------------------------------------------------------------------------- training
def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise TrucError("device: cuda was asked for, but torch sees no CUDA device")
    return torch.device(name)


def net_meta(cfg: PPOConfig, rules) -> dict:
    return {"obs_size": feature_size(rules, cfg.features), "n_actions": layout_of(rules).size,
            "hidden": list(cfg.hidden), "features": cfg.features}


def policy_dict(cfg: PPOConfig, rules, net: nn.Module) -> dict:
    """What ``net:PATH`` needs: format, versions, Rules, network shape and parameters (plain types)."""
    return {"format": FORMAT, "version": VERSION, "code_version": truc_env.__version__,
            "rules_key": rules.key, "variant": rules.variant, "options": dict(rules.options),
            "net": net_meta(cfg, rules), "config": dataclasses.asdict(cfg),
            "model": {k: v.detach().cpu() for k, v in net.state_dict().items()}}


@dataclass
class Run:
    """What a run carries from one update to the next (and what its checkpoint holds)."""

    cfg: PPOConfig
    rules: object
    run_dir: str
    device: torch.device
    rng: np.random.Generator  # deals, seats, opponents, minibatches
    gen: torch.Generator  # action sampling during rollouts
    net: PolicyNet
    optimizer: torch.optim.Optimizer
    league: League
    average: IterateAverage | None
    magnet: PolicyNet | None = None  # mmd with a moving magnet: the frozen policy the loss pulls towards
    shard_generators: list = field(default_factory=list)  # rollout_shards > 1: each shard's (rng, gen)
    belief: nn.Module | None = None  # belief_coef: the head predicting the partner's cards (train.algos.belief)
    privileged: nn.Module | None = None  # critic: privileged: the baseline reading the hidden cards (train.algos.privileged)
    history: list = field(default_factory=list)
    start_update: int = 1
    global_step: int = 0
    elapsed_before: float = 0.0

    @property
    def checkpoint_path(self) -> str:
        return os.path.join(self.run_dir, "checkpoint.pt")


def train(cfg: PPOConfig, resume: bool = False) -> dict:
    """Train (or continue) the run described by ``cfg``; returns a summary of the last metrics.

    The stages: :func:`start_run` (checks, seeding, the network, ``--resume``), then per update a rollout
    (:class:`~train.algos.rollout.Collector`; in shards, here or on Ray workers: :mod:`train.algos.rollout_shards`),
    :func:`update_epochs` (the PPO / MMD loss), :func:`metrics_row`
    (league, evaluation, exploitability) and :func:`save_checkpoint`; :func:`finish_run` writes the outputs.
    """
    run, opponents = start_run(cfg, resume)
    rules = run.rules
    writer = None
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(os.path.join(run.run_dir, "tb"))
    collector = Collector(cfg, rules, run.device)
    collector.fixed.update((spec, opponents[spec]) for spec in cfg.fixed_opponents)
    print(f"ppo {cfg.name}: rollout {collector.path} ({collector.why})")
    rollouts = make_rollouts(run, collector, opponent_picker(cfg, collector, run.league))
    try:
        return train_updates(run, cfg, collector, rollouts, writer)
    finally:
        rollouts.close()
        if writer is not None:
            writer.close()


def train_updates(run: Run, cfg: PPOConfig, collector: Collector, rollouts, writer) -> dict:
    """The updates of :func:`train`, from ``run.start_update`` to the last."""
    rules = run.rules
    num_updates = cfg.num_updates
    t0 = time.time()
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=num_updates, initial=run.start_update - 1, desc=f"ppo {cfg.name}", unit="upd")
    last_eval: dict = run.history[-1].get("eval", {}) if run.history else {}
    for update in range(run.start_update, num_updates + 1):
        if cfg.anneal_lr:
            run.optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1.0 - (update - 1.0) / num_updates)
        t_roll = time.time()
        run.net.eval()
        buf, episodes = rollouts.rollout(run)
        rollout_s = time.time() - t_roll
        for label, ret, _ in episodes:
            if label.startswith("pool:"):
                run.league.record(int(label[5:]), score_of(ret))
        run.global_step += len(buf)
        stats = update_epochs(run, buf, update)
        if update % cfg.snapshot_every == 0:
            run.league.add(update, run.net)
        elapsed = run.elapsed_before + time.time() - t0
        row = metrics_row(run, update, buf, episodes, stats, elapsed, rollout_s)
        if update % cfg.eval_every == 0 or update == num_updates:
            last_eval = evaluate(run.net, cfg, rules, run.device, collector, run.league, update)
            row["eval"] = last_eval
        if cfg.exploitability_every and (update % cfg.exploitability_every == 0 or update == num_updates):
            row["exploitability"] = measure_exploitability(run.net, cfg, rules, run.average, update)
            write_exploitability_csv(run.history + [row], os.path.join(run.run_dir, "exploitability.csv"))
        run.history.append(row)
        if writer is not None:
            log_scalars(writer, row, run.global_step)
        stop = cfg.time_limit_minutes and elapsed > 60 * cfg.time_limit_minutes
        if update % cfg.checkpoint_every == 0 or update == num_updates or stop:
            save_checkpoint(run, update, elapsed)
        if bar is not None:
            bar.update(1)
            post = {"sps": f"{row['sps']:.0f}", "ent": f"{stats['entropy']:.2f}"}
            if last_eval:
                post["eval_wr"] = f"{last_eval['win_rate']:.2f}"
            bar.set_postfix(post)
        if stop:
            print(f"time limit of {cfg.time_limit_minutes} min reached after update {update}")
            break
    if bar is not None:
        bar.close()
    summary = finish_run(run, last_eval)
    if cfg.backend == "ray":  # the workers' CPU, for steps per CPU-second (the learner's own: getrusage)
        summary["worker_rollout_cpu_s"], summary["worker_cpu_s"] = rollouts.worker_cpu, rollouts.process_cpu()
    return summary


def start_run(cfg: PPOConfig, resume: bool) -> tuple[Run, dict]:
    """Check the config, build every opponent, seed, and make the network (from the checkpoint on --resume)."""
    cfg.validate()
    rules = cfg.rules()
    run_dir = os.path.join(cfg.out_dir, cfg.name)
    ck_path = os.path.join(run_dir, "checkpoint.pt")
    if not resume and os.path.exists(ck_path):
        raise TrucError(f"{ck_path} exists: continue it with --resume, or choose another name / out_dir")
    # every opponent is built now, so that a bad spec is refused before the run folder exists and not
    # at the first episode or evaluation that draws it (minutes into training)
    opponents = {spec: make_agent(spec, fixed_rules(cfg, rules), seed=0)
                 for spec in dict.fromkeys([*cfg.fixed_opponents, cfg.eval_opponent])}
    meta = net_meta(cfg, rules)
    init = None
    if cfg.init_from and not resume:  # read and checked before the run folder is made
        from train.algos.warm_start import initial_state

        init = initial_state(cfg, rules)
    config.output_folder(run_dir, "out_dir")

    # seeding, in one block
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    if cfg.deterministic or torch.are_deterministic_algorithms_enabled():  # the call imports torch's compiler
        torch.use_deterministic_algorithms(cfg.deterministic)
    torch.set_num_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    if device.type == "cuda":
        gen = torch.Generator(device=device).manual_seed(cfg.seed)
    shard_gens = [shard_generators(cfg, i, device) for i in range(cfg.rollout_shards)] if cfg.rollout_shards > 1 else []

    net = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden).to(device)
    if init is not None:  # warm start: the weights drawn above are replaced (the RNG draws stay the same)
        net.load_state_dict({k: v.to(device) for k, v in init[1].items()})
        print(f"ppo {cfg.name}: initialised from {init[0]}")
    belief = None
    if cfg.belief_coef:
        from train.algos.belief import BeliefHead

        belief = BeliefHead(cfg.hidden[-1], len(rules.deck)).to(device)
    privileged = None
    if cfg.critic == "privileged":  # built after the policy: the policy's initial weights stay those of the seed
        from train.algos.privileged import PrivilegedCritic, hidden_size

        privileged = PrivilegedCritic(meta["obs_size"], hidden_size(rules), cfg.hidden).to(device)
    params = [*net.parameters(), *(belief.parameters() if belief is not None else ()),
              *(privileged.parameters() if privileged is not None else ())]
    run = Run(cfg, rules, run_dir, device, rng, gen, net,
              torch.optim.Adam(params, lr=cfg.learning_rate, eps=1e-5), League(cfg),
              IterateAverage(cfg, rules) if cfg.average != "none" else None, shard_generators=shard_gens,
              belief=belief, privileged=privileged)
    if resume:
        resume_run(run, meta)
    return run, opponents


def resume_run(run: Run, meta: dict) -> None:
    """Load the checkpoint's network, optimiser, RNG states, league, history and magnet into ``run``."""
    cfg, ck_path = run.cfg, run.checkpoint_path
    if not os.path.exists(ck_path):
        raise TrucError(f"--resume: no checkpoint at {ck_path}")
    ck = read_checkpoint(ck_path, run.rules)
    try:
        if ck["net"] != meta:
            raise TrucError(f"--resume: {ck_path} has network {ck['net']}, the config asks for {meta}")
        run.net.load_state_dict(ck["model"])
        run.optimizer.load_state_dict(ck["optimizer"])
        run.rng.bit_generator.state = ck["rng"]["numpy"]
        run.gen.set_state(ck["rng"]["torch"])
        shards = ck["rng"].get("shards", [])
        if len(shards) != len(run.shard_generators):
            raise TrucError(f"--resume: {ck_path} was made with rollout_shards {max(1, len(shards))}, the config "
                            f"asks for {cfg.rollout_shards} (the shards' generators do not carry over)")
        for (rng, gen), st in zip(run.shard_generators, shards):
            rng.bit_generator.state = st["numpy"]
            gen.set_state(st["torch"])
        torch.set_rng_state(ck["rng"]["torch_global"])
        run.league.load_state_dict(ck["league"])
        for s in run.league.snapshots:
            s["params"] = {k: v.to(run.device) for k, v in s["params"].items()}
        run.history = list(ck["history"])
        if run.average is not None and "average" in ck:
            run.average.load_state_dict(ck["average"])
        if run.belief is not None and "belief" in ck:
            run.belief.load_state_dict(ck["belief"])
        if run.privileged is not None:
            run.privileged.load_state_dict(ck["privileged"])
        if "magnet" in ck:
            run.magnet = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden, init=False).to(run.device)
            run.magnet.load_state_dict(ck["magnet"])
            run.magnet.eval().requires_grad_(False)
        run.start_update, run.global_step = ck["update"] + 1, ck["global_step"]
        run.elapsed_before = ck["elapsed"]
        defaults = dataclasses.asdict(PPOConfig())  # a setting newer than the checkpoint, at its default, is no change
        changed = {k: (ck["config"].get(k), v) for k, v in dataclasses.asdict(cfg).items()
                   if ck["config"].get(k, defaults[k]) != v}
    except TrucError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
        # a checkpoint of the right format but missing or mangled training state
        raise TrucError(f"--resume: {ck_path} lacks this run's training state ({type(e).__name__}: "
                        f"{str(e)[:120]})") from None
    if changed:
        print(f"resume: settings changed since the checkpoint (was, now): {changed}")


def update_epochs(run: Run, buf, update: int) -> dict:
    """The PPO update on one rollout (CleanRL's clipped loss; with ``mmd`` the magnet's reverse KL too)."""
    cfg, net, device = run.cfg, run.net, run.device
    adv, returns = buf.advantages(cfg.gamma, cfg.gae_lambda)
    b_hid = b_pret = None
    if run.privileged is not None:  # the advantages from the critic that reads the hidden cards
        p_values = run.privileged.values(buf.obs, buf.hidden, device)
        adv, p_returns = buf.advantages(cfg.gamma, cfg.gae_lambda, p_values)
        b_hid = torch.as_tensor(buf.hidden, device=device)
        b_pret = torch.as_tensor(p_returns.astype(np.float32), device=device)
    b_obs = torch.as_tensor(buf.obs, device=device)
    b_mask = torch.as_tensor(buf.mask, device=device)
    b_act = torch.as_tensor(np.asarray(buf.action), device=device)
    b_logp = torch.as_tensor(np.asarray(buf.logp, np.float32), device=device)
    b_val = torch.as_tensor(np.asarray(buf.value, np.float32), device=device)
    b_adv = torch.as_tensor(adv.astype(np.float32), device=device)
    b_ret = torch.as_tensor(returns.astype(np.float32), device=device)
    batch = len(buf)
    mb_size = math.ceil(batch / cfg.num_minibatches)
    mmd = cfg.algorithm == "mmd"
    magnet_coef = 0.0
    if mmd:
        # MMD's temperature, annealed linearly over the run
        frac = (update - 1.0) / max(cfg.num_updates - 1, 1)
        magnet_coef = cfg.magnet_coef + frac * (cfg.magnet_coef_end - cfg.magnet_coef)
        if cfg.magnet == "moving" and (run.magnet is None or (update - 1) % cfg.magnet_update_every == 0):
            run.magnet = copy.deepcopy(net).eval().requires_grad_(False)
    magnet = run.magnet
    biases = None
    if cfg.signal_coef or cfg.listen_coef:
        from train.algos.signals_biases import SignalBiases

        biases = SignalBiases(run.rules)
    signal_mi = listen_tv = belief_loss = privileged_loss = 0.0
    b_bel = torch.as_tensor(buf.belief, device=device) if run.belief is not None else None
    params = [*net.parameters(), *(run.belief.parameters() if run.belief is not None else ()),
              *(run.privileged.parameters() if run.privileged is not None else ())]
    net.train()
    clipfracs, approx_kl, pg_loss, v_loss, entropy, magnet_kl = [], torch.zeros(()), 0.0, 0.0, 0.0, 0.0
    for _epoch in range(cfg.update_epochs):
        perm = torch.as_tensor(run.rng.permutation(batch), device=device)
        for start in range(0, batch, mb_size):
            mb = perm[start:start + mb_size]
            # index_select: the same rows as b_obs[mb], gathered ~3x faster on the CPU
            _, newlogp, ent, newv = net(b_obs.index_select(0, mb), b_mask[mb], b_act[mb])
            logratio = newlogp - b_logp[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > cfg.clip_coef).float().mean().item())
            mb_adv = b_adv[mb]
            if cfg.norm_adv and len(mb) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg1 = -mb_adv * ratio
            pg2 = -mb_adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)
            pg = torch.max(pg1, pg2).mean()
            if cfg.clip_vloss:
                v_unclipped = (newv - b_ret[mb]) ** 2
                v_clipped = b_val[mb] + torch.clamp(newv - b_val[mb], -cfg.clip_coef, cfg.clip_coef)
                vl = 0.5 * torch.max(v_unclipped, (v_clipped - b_ret[mb]) ** 2).mean()
            else:
                vl = 0.5 * ((newv - b_ret[mb]) ** 2).mean()
            ent_mean = ent.mean()
            loss = pg - cfg.ent_coef * ent_mean + cfg.vf_coef * vl
            if b_hid is not None:  # the privileged critic's regression to its own GAE returns
                pv = run.privileged(b_obs.index_select(0, mb), b_hid.index_select(0, mb))
                pvl = 0.5 * ((pv - b_pret[mb]) ** 2).mean()
                loss = loss + cfg.vf_coef * pvl
                privileged_loss = pvl.item()
            if biases is not None:  # Eccles et al.'s positive signalling and listening, maximised
                mb_obs, mb_mask = b_obs.index_select(0, mb), b_mask[mb]
                logits = net.actor(mb_obs)
                mi, _ = biases.mutual_information(logits, mb_mask)
                tv, _ = biases.listening(net, mb_obs, mb_mask, logits)
                loss = loss - cfg.signal_coef * mi - cfg.listen_coef * tv
                signal_mi, listen_tv = mi.item(), tv.item()
            if run.belief is not None:  # the listener's auxiliary task: the partner's unplayed cards
                bl = run.belief.loss(net, b_obs.index_select(0, mb), b_bel.index_select(0, mb))
                loss = loss + cfg.belief_coef * bl
                belief_loss = bl.item()
            if mmd:
                # reverse KL to the magnet over the legal actions: sum_a pi(a) (log pi(a) - log m(a))
                mb_mask = b_mask[mb]
                logp_all = torch.log_softmax(net.masked_logits(b_obs[mb], mb_mask), dim=-1)
                if magnet is None:  # uniform over the legal actions
                    logm = -torch.log(mb_mask.sum(-1, keepdim=True).float())
                else:
                    with torch.no_grad():
                        logm = torch.log_softmax(magnet.masked_logits(b_obs[mb], mb_mask), dim=-1)
                kl = (logp_all.exp() * (logp_all - logm).masked_fill(~mb_mask, 0.0)).sum(-1).mean()
                loss = loss + magnet_coef * kl
                magnet_kl = kl.item()
            run.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            run.optimizer.step()
            pg_loss, v_loss, entropy = pg.item(), vl.item(), ent_mean.item()
        if cfg.target_kl is not None and approx_kl.item() > cfg.target_kl:
            break
    y_pred, y_true = b_val.cpu().numpy(), b_ret.cpu().numpy()
    var_y = np.var(y_true)
    explained_var = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
    stats = {"value_loss": v_loss, "policy_loss": pg_loss, "entropy": entropy, "approx_kl": approx_kl.item(),
             "clipfrac": float(np.mean(clipfracs)), "explained_variance": explained_var}
    if mmd:
        stats["magnet_kl"], stats["magnet_coef"] = magnet_kl, magnet_coef
    if biases is not None:
        stats["signal_mi"], stats["listen_tv"] = signal_mi, listen_tv
    if run.belief is not None:
        stats["belief_loss"] = belief_loss
    if run.privileged is not None:
        stats["privileged_value_loss"] = privileged_loss
    return stats


def metrics_row(run: Run, update: int, buf, episodes: list, stats: dict, elapsed: float, rollout_s: float) -> dict:
    """One row of the run's history: the update's losses, speeds, episodes and returns by opponent."""
    cfg = run.cfg
    others = [ret for label, ret, _ in episodes if label != "self"]
    row = {
        "update": update, "global_step": run.global_step, "elapsed_s": elapsed,
        "sps": run.global_step / max(elapsed, 1e-9), "rollout_sps": len(buf) / max(rollout_s, 1e-9),
        "learning_rate": run.optimizer.param_groups[0]["lr"], "value_loss": stats["value_loss"],
        "policy_loss": stats["policy_loss"], "entropy": stats["entropy"], "approx_kl": stats["approx_kl"],
        "clipfrac": stats["clipfrac"], "explained_variance": stats["explained_variance"], "episodes": len(episodes),
        "episode_length": float(np.mean([d for *_, d in episodes])),
        "episode_return": float(np.mean(others)) if others else float("nan"),
        "self_play_share": 1.0 - len(others) / max(len(episodes), 1),
    }
    if "magnet_kl" in stats:
        row["magnet_kl"], row["magnet_coef"] = stats["magnet_kl"], stats["magnet_coef"]
    if "signal_mi" in stats:
        row["signal_mi"], row["listen_tv"] = stats["signal_mi"], stats["listen_tv"]
    for k in ("belief_loss", "privileged_value_loss"):
        if k in stats:
            row[k] = stats[k]
    for spec in cfg.fixed_opponents:
        rets = [ret for label, ret, _ in episodes if label == spec]
        if rets:
            row[f"return_vs/{spec}"] = float(np.mean(rets))
    return row


def save_checkpoint(run: Run, update: int, elapsed: float) -> None:
    """Write everything a --resume needs, atomically (and a kept copy every ``keep_every`` updates)."""
    cfg = run.cfg
    ck = policy_dict(cfg, run.rules, run.net)
    ck.update({
        "update": update, "global_step": run.global_step, "elapsed": elapsed,
        "optimizer": run.optimizer.state_dict(),
        "rng": {"numpy": run.rng.bit_generator.state, "torch": run.gen.get_state(),
                "torch_global": torch.get_rng_state()},
        "league": [{**s, "params": {k: v.cpu() for k, v in s["params"].items()}} for s in run.league.snapshots],
        "history": run.history,
    })
    if run.shard_generators:
        ck["rng"]["shards"] = [{"numpy": rng.bit_generator.state, "torch": gen.get_state()}
                               for rng, gen in run.shard_generators]
    if run.average is not None:
        ck["average"] = run.average.state_dict()
    if run.magnet is not None:
        ck["magnet"] = {k: v.detach().cpu() for k, v in run.magnet.state_dict().items()}
    if run.belief is not None:
        ck["belief"] = {k: v.detach().cpu() for k, v in run.belief.state_dict().items()}
    if run.privileged is not None:
        ck["privileged"] = {k: v.detach().cpu() for k, v in run.privileged.state_dict().items()}
    save_atomic(ck, run.checkpoint_path)
    if cfg.keep_every and update % cfg.keep_every == 0:
        save_atomic(ck, os.path.join(run.run_dir, f"checkpoint_{update}.pt"))


def finish_run(run: Run, last_eval: dict) -> dict:
    """Write policy.pt, the average and the pictures; the run's summary."""
    cfg, rules, run_dir, history = run.cfg, run.rules, run.run_dir, run.history
    save_atomic(policy_dict(cfg, rules, run.net), os.path.join(run_dir, "policy.pt"))
    if run.average is not None and run.average.count:
        run.average.save(os.path.join(run_dir, "average.npz"))
    png = None
    if cfg.plot:
        png = plot_curves(history, os.path.join(run_dir, "curves.png"), title=run_title(cfg, rules))
    if cfg.plot and any("exploitability" in h for h in history):
        plot_exploitability(history, os.path.join(run_dir, "exploitability.png"), title=run_title(cfg, rules))
    if cfg.curves_png and png:
        import shutil

        os.makedirs(os.path.dirname(cfg.curves_png) or ".", exist_ok=True)
        shutil.copyfile(png, cfg.curves_png)
    last = history[-1] if history else {}
    return {"run_dir": run_dir, "updates": last.get("update", 0), "global_step": run.global_step,
            "elapsed_s": last.get("elapsed_s", 0.0), "sps": last.get("sps", 0.0), "eval": last_eval, "net": run.net}


def evaluate(net, cfg: PPOConfig, rules, device, collector: Collector, league: League, update: int) -> dict:
    """The current policy against ``eval_opponent`` on seeds of its own (training RNGs untouched)."""
    rng = np.random.default_rng([cfg.seed, update, 7])
    gen = torch.Generator(device=device).manual_seed(cfg.seed * 1_000_003 + update)
    agent = make_agent(cfg.eval_opponent, collector.fixed_rules, seed=int(rng.integers(2**31)))
    net.eval()
    _, episodes = collector.rollout(net, league, rng, gen, lambda r: (cfg.eval_opponent, -1, agent),
                                    target_episodes=cfg.eval_episodes, learn=False)
    rets = np.array([ret for _, ret, _ in episodes], dtype=float)
    scores = np.array([score_of(r) for r in rets])
    n = len(rets)
    return {"opponent": cfg.eval_opponent, "episodes": n, "return": float(rets.mean()),
            "return_ci95": float(1.96 * rets.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan"),
            "win_rate": float(scores.mean())}


def log_scalars(writer, row: dict, step: int) -> None:
    names = {"sps": "charts/SPS", "rollout_sps": "charts/rollout_SPS", "learning_rate": "charts/learning_rate",
             "episode_return": "charts/episode_return", "episode_length": "charts/episode_length",
             "self_play_share": "charts/self_play_share", "value_loss": "losses/value_loss",
             "policy_loss": "losses/policy_loss", "entropy": "losses/entropy", "approx_kl": "losses/approx_kl",
             "clipfrac": "losses/clipfrac", "explained_variance": "losses/explained_variance",
             "magnet_kl": "losses/magnet_kl", "magnet_coef": "charts/magnet_coef"}
    for key, tag in names.items():
        v = row.get(key)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            writer.add_scalar(tag, v, step)
    for key, v in row.items():
        if key.startswith("return_vs/"):
            writer.add_scalar("charts/" + key, v, step)
    ev = row.get("eval")
    if ev:
        writer.add_scalar("eval/win_rate", ev["win_rate"], step)
        writer.add_scalar("eval/return", ev["return"], step)
    ex = row.get("exploitability")
    if ex:
        writer.add_scalar("eval/exploitability", ex["exploitability"], step)
        if "avg_exploitability" in ex:
            writer.add_scalar("eval/avg_exploitability", ex["avg_exploitability"], step)


def main(config_path: str, resume: bool = False, overrides: dict | None = None, set_pairs=()) -> dict:
    """``truc train ppo --config PATH [--resume] [--set key=value ...]``."""
    cfg = PPOConfig.from_yaml(config_path, set_pairs)
    if overrides:
        cfg = PPOConfig.from_dict({**dataclasses.asdict(cfg), **overrides}, config_path)
    summary = train(cfg, resume=resume)
    ev = summary["eval"]
    msg = f"done: {summary['updates']} updates, {summary['global_step']} learner steps in {summary['elapsed_s'] / 60:.1f} min"
    msg += f" ({summary['sps']:.0f} steps/s)"
    if ev:
        msg += f"; vs {ev['opponent']}: {ev['return']:+.3f} ± {ev['return_ci95']:.3f} points/episode, win rate {ev['win_rate']:.3f}"
    if "worker_cpu_s" in summary:
        msg += f"; Ray workers {summary['worker_cpu_s']:.0f}s CPU ({summary['worker_rollout_cpu_s']:.0f}s in rollouts)"
    print(msg)
    print(f"policy: net:{os.path.join(summary['run_dir'], 'policy.pt')}")
    return summary
