"""PPO self-play for every Truc variant, in one readable file (after CleanRL's ``ppo.py``).

Run: ``truc train ppo --config configs/ppo/le_truc.yaml [--resume]``.

How a rollout works. ``num_envs`` slots each play one episode at a time. An episode whose every
seat is a network (self-play, or the learner against a frozen snapshot of the league) is a game of
the batched engine (:class:`~truc_env.vector.VectorEnv`, slot ``b`` = game ``b``) when ``rollout``
allows it, and so is a heads-up episode against a ``heuristic:*`` player, which decides there for
all its games at once (:mod:`agents.heuristic_batch`, the per-state player's actions exactly); an
episode against another fixed agent (CFR; any fixed agent in partnership rules: they read engine
states) is an engine :class:`~truc_env.engine.State` ("table") driven in Python, advanced through
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
variants and options are listed in :func:`truc_env.vector.kernel_supports`); ``auto`` is ``vector``
where possible, else ``engine`` (training prints which, and why). The batched engine draws deals,
dealers and random start scores from streams seeded by the training generator at each rollout.

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
from agents.heuristic import HeuristicAgent
from agents.heuristic_batch import BatchHeuristic, batch_supports
from agents.ppo import FEATURES, PolicyNet, encode_state, feature_size, read_checkpoint, save_atomic
from agents.ppo.checkpoint import FORMAT, VERSION
from agents.ppo.network import encode_batch, stack_actors, stacked_actor_logits
from truc_env.actions import layout_of
from truc_env.checks import check_memory
from truc_env.engine import State
from truc_env.episode import Dealer, Episode, leading_side, side_rewards
from truc_env.errors import TrucError
from truc_env.observe import SeatObservation
from truc_env.rules import make_rules
from truc_env.vector import VectorEnv, batch_bytes

from . import config, signals_otherplay

ROLLOUTS = ("auto", "vector", "engine")
ALGORITHMS = ("ppo", "mmd")
AVERAGES = ("none", "uniform", "linear")


@dataclass
class PPOConfig:
    # --- experiment
    name: str = "ppo"
    """run name: files go to ``{out_dir}/{name}/``"""
    out_dir: str = "runs"
    """folder of the runs"""
    seed: int = 0
    """seed of every random generator (deals, opponents, sampling, initial weights)"""
    device: str = "auto"
    """``auto`` (CUDA when present, else CPU), ``cpu`` or ``cuda``"""
    deterministic: bool = False
    """``torch.use_deterministic_algorithms(True)``: bit-exact reruns on one device"""
    torch_threads: int = 1
    """intra-op threads of torch (the engine is single-threaded Python; small MLPs gain little)"""
    # --- game
    variant: str = "le_truc"
    """the variant (``truc rules <variant>`` lists its options)"""
    options: dict = field(default_factory=dict)
    """the variant's options"""
    episode: str = "hand"
    """``hand`` (one hand per episode; dealer and learner seats drawn at random) or ``game``"""
    reward: str = "points"
    """``points``: zero-sum hand points as they are scored; ``win``: +-1 at the end of the episode"""
    reward_scale: float = 1.0
    """rewards are multiplied by this before learning"""
    random_start_score: float = 0.0
    """probability that a training hand starts from a random score (so the policy sees mon reste / 11)"""
    # --- budget
    total_steps: int = 1_000_000
    """learner transitions (decisions of learning seats) to train on: the budget, independent of the CPU"""
    time_limit_minutes: float = 0.0
    """stop after the update that passes this wall-clock time (0: no limit); makes a run depend on the CPU"""
    num_envs: int = 64
    """tables played at once (the inference batch)"""
    steps_per_update: int = 4096
    """learner transitions per update, at least (rollouts finish their episodes)"""
    rollout: str = "auto"
    """where network-only episodes are played: ``vector`` (the batched engine), ``engine`` (State
    tables), ``auto`` (vector where the kernel supports the Rules, features and options); episodes
    against fixed agents are on tables, except heads-up ``heuristic:*`` ones. See the module docstring."""
    # --- network
    features: str = "observation"
    """network input: ``observation`` (flat) or ``info_state`` (flat + this hand's decision history)"""
    hidden: list = field(default_factory=lambda: [256, 256])
    """hidden layer sizes of the actor and of the critic"""
    # --- learning algorithm
    algorithm: str = "ppo"
    """``ppo``: clipped PPO (CleanRL's loss); ``mmd``: magnetic mirror descent (Sokota et al. 2023) as a
    PPO loss plus a reverse-KL pull towards a magnet policy, ``loss += alpha_t * KL(pi || magnet)``, with
    ``alpha_t`` annealed from ``magnet_coef`` to ``magnet_coef_end``. The KL to the magnet is logged
    (``magnet_kl``). With the uniform magnet, ``KL(pi || uniform) = log(#legal) - H(pi)``: an entropy
    bonus of weight alpha_t on top of ``ent_coef``. (PSRO is ``truc train psro``, :mod:`train.psro`.)"""
    magnet: str = "uniform"
    """mmd: the magnet, ``uniform`` over the legal actions, or ``moving``: a frozen copy of the policy,
    refreshed every ``magnet_update_every`` updates (the policy is pulled towards its own recent past)"""
    magnet_coef: float = 0.05
    """mmd: the KL weight (MMD's temperature alpha) at the first update"""
    magnet_coef_end: float = 0.005
    """mmd: the KL weight at the last update; linear annealing in between (equal to magnet_coef: constant)"""
    magnet_update_every: int = 10
    """mmd with ``magnet: moving``: updates between refreshes of the magnet (a copy of the current policy)"""
    average: str = "none"
    """also keep the average policy of the iterates measured by ``exploitability_every`` (heads-up rules
    without a vira; with a redeal, the hand after it too): each is tabulated on the public tree and averaged per information set, weighted by
    its own reach (:class:`train.psro.ReachAverage`); ``uniform`` weighs every iterate alike, ``linear``
    the iterate of update t by t. Its exploitability joins the log; it is saved as ``average.npz``
    (``table:PATH`` plays it). ``none``: the last iterate only."""
    # --- PPO
    learning_rate: float = 2.5e-4
    """Adam step size"""
    anneal_lr: bool = True
    """anneal the step size linearly to 0 over the run"""
    gamma: float = 1.0
    """discount per own decision"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    update_epochs: int = 4
    """passes over the batch per update"""
    num_minibatches: int = 4
    """minibatches per pass"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    clip_coef: float = 0.2
    """PPO surrogate clipping"""
    clip_vloss: bool = True
    """clip the value loss as in the PPO paper's code"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clipping"""
    target_kl: float | None = None
    """stop an update's epochs early when the approximate KL passes this (None: never)"""
    # --- league
    self_play_prob: float = 0.5
    """probability that an episode is pure self-play against the current policy"""
    pool_scheme: str = "prioritized"
    """how a frozen opponent is drawn from the pool: ``latest``, ``uniform`` or ``prioritized``"""
    snapshot_every: int = 10
    """updates between snapshots of the learner added to the pool"""
    pool_size: int = 20
    """snapshots kept (the oldest leaves first)"""
    pfsp_power: float = 2.0
    """prioritized: weight of a snapshot is (1 - learner's win rate against it) ** pfsp_power"""
    fixed_opponents: list = field(default_factory=list)
    """agent specs mixed in as opponents (``heuristic:honest``, ``table:PATH``...)"""
    fixed_prob: float = 0.0
    """probability that an episode's opponents are one of ``fixed_opponents``"""
    fixed_options: dict | None = None
    """the variant options the fixed (and evaluation) opponents were trained for, when they play under
    the training options without sharing them (a ``net:`` team trained at ``intercept: 0`` facing a
    learner trained at ``intercept: 1``); None: the training options"""
    fixed_batched: bool = False
    """also play the episodes against a fixed ``ppo:`` network or ``random`` on the batched engine
    (:class:`BatchPolicy`; off: on engine tables, as the committed runs did)"""
    other_play: bool = False
    """free signals only: per episode and side, one seat plays with the signal tokens relabelled by a
    random permutation (other-play, :mod:`train.signals_otherplay`), on engine tables and the batched engine"""
    # --- evaluation, logging, checkpoints
    eval_opponent: str = "heuristic:honest"
    """fixed opponent of the periodic evaluation"""
    eval_every: int = 10
    """updates between evaluations (and at the last update)"""
    eval_episodes: int = 400
    """episodes per evaluation"""
    exploitability_every: int = 0
    """updates between exact exploitability measurements (heads-up public-tree games; 0: never)"""
    exploitability_first_hands: int = 4
    """first hands sampled per seat for the play after a redeal in those measurements"""
    exploitability_cache: str = ""
    """where the measurements keep their public trees ("": ``$TRUC_CACHE_DIR`` or ``~/.cache/truc-env``)"""
    checkpoint_every: int = 1
    """updates between checkpoints: updates completed since the last one are lost on a kill"""
    keep_every: int = 0
    """also keep ``checkpoint_<update>.pt`` every this many updates (0: never)"""
    plot: bool = True
    """draw the learning curves as a PNG (``curves.png`` in the run folder) at the end"""
    curves_png: str = ""
    """also copy the learning-curve PNG here (e.g. ``docs/results/img/ppo_le_truc.png``)"""
    progress: bool = True
    """tqdm progress bar"""
    tensorboard: bool = True
    """TensorBoard scalars in the run folder"""

    KIND = "PPO"

    @classmethod
    def from_dict(cls, d: dict, source: str = "PPO config") -> PPOConfig:
        """A checked config from a mapping of settings (missing ones take the defaults)."""
        return config.build(cls, d, source)

    @classmethod
    def from_yaml(cls, path: str, overrides=()) -> PPOConfig:
        """The config of a YAML file, checked, with ``--set`` overrides applied."""
        return config.load(cls, path, overrides)

    def validate(self) -> None:
        """Cross-setting rules (ranges and types are in ``SCHEMA``)."""
        def need(ok, what):
            if not ok:
                raise TrucError(f"PPO setting {what}")

        rules = make_rules(self.variant, **(self.options or {}))
        if self.fixed_options is not None:
            make_rules(self.variant, **self.fixed_options)
        need(self.fixed_prob + self.self_play_prob <= 1.0 + 1e-9, "fixed_prob + self_play_prob must be at most 1")
        need(not (self.fixed_prob > 0 and not self.fixed_opponents), "fixed_prob > 0 needs fixed_opponents")
        need(self.random_start_score == 0.0 or self.episode == "hand", "random_start_score needs episode: hand")
        need(self.average == "none" or self.exploitability_every > 0,
             "average needs exploitability_every > 0 (the iterates it averages are the ones measured)")
        if self.average != "none" and rules.vira:
            need(False, "average needs a game without a vira (the average is kept on the tree of one hand; "
                 "heads-up Paulista has one per vira); exploitability_every alone measures it")
        if self.other_play:
            try:
                signals_otherplay.check_applies(rules)
            except TrucError as e:
                need(False, f"other_play: {e}")
        if self.exploitability_every:
            from train.exploitability import check_applies

            try:
                check_applies(rules)
            except TrucError as e:
                need(False, f"exploitability_every needs a game the public tree takes: {e}")
        check_memory(self.memory_estimate(rules), f"this PPO run (hidden={self.hidden}, num_envs={self.num_envs}, "
                     f"steps_per_update={self.steps_per_update})", "shrink hidden, num_envs or steps_per_update")

    def memory_estimate(self, rules) -> int:
        """Bytes the run needs at least, an estimate made before anything is allocated: the actor and
        critic with their gradients and Adam moments, the pool of actor snapshots, one update's
        transitions and a minibatch's activations, and the batched engine's tables."""
        F, A = feature_size(rules, self.features), layout_of(rules).size
        widths = [F, *self.hidden]
        body = sum(a * b for a, b in zip(widths, widths[1:]))
        actor, critic = body + self.hidden[-1] * A, body + self.hidden[-1]
        steps = self.steps_per_update
        return (16 * (actor + critic) + 4 * actor * self.pool_size + steps * (4 * F + A + 64)
                + 12 * (steps // self.num_minibatches + 1) * sum(self.hidden)
                + batch_bytes(rules, self.num_envs, "loop" if self.rollout == "engine" else "numba", F))

    @property
    def num_updates(self) -> int:
        return max(1, self.total_steps // self.steps_per_update)


_COUNT = config.Int(1, 10**12)
_PROB = config.Float(0.0, 1.0)
PPOConfig.SCHEMA = {
    "name": config.NAME, "out_dir": config.STR, "seed": config.SEED, "device": config.Choice("auto", "cpu", "cuda"),
    "deterministic": config.BOOL, "torch_threads": config.Int(1, 1024), "variant": config.STR,
    "options": config.DICT, "episode": config.Choice("hand", "game"), "reward": config.Choice("points", "win"),
    "reward_scale": config.Float(), "random_start_score": _PROB, "total_steps": _COUNT,
    "time_limit_minutes": config.Float(0.0), "num_envs": config.Int(1, 1 << 20), "steps_per_update": _COUNT,
    "rollout": config.Choice(*ROLLOUTS), "features": config.Choice(*FEATURES),
    "hidden": config.List(config.Int(1, 1 << 16), min_len=1), "learning_rate": config.Float(0.0),
    "anneal_lr": config.BOOL, "gamma": _PROB, "gae_lambda": _PROB, "update_epochs": config.Int(1, 10**6),
    "num_minibatches": config.Int(1, 10**6), "norm_adv": config.BOOL, "clip_coef": config.Float(0.0),
    "clip_vloss": config.BOOL, "ent_coef": config.Float(), "vf_coef": config.Float(), "max_grad_norm": config.Float(0.0),
    "target_kl": config.Float(0.0, none=True), "self_play_prob": _PROB,
    "pool_scheme": config.Choice("latest", "uniform", "prioritized"), "snapshot_every": _COUNT,
    "pool_size": config.Int(1, 10**6), "pfsp_power": config.Float(0.0), "fixed_opponents": config.List(config.STR),
    "fixed_prob": _PROB, "fixed_options": config.Setting("dict", none=True), "fixed_batched": config.BOOL, "other_play": config.BOOL, "eval_opponent": config.STR, "eval_every": _COUNT, "eval_episodes": config.Int(1, 10**9),
    "checkpoint_every": _COUNT, "keep_every": config.Int(0), "plot": config.BOOL, "curves_png": config.STR,
    "progress": config.BOOL, "tensorboard": config.BOOL, "exploitability_every": config.Int(0, 10**12),
    "exploitability_first_hands": config.Int(1, 10**6), "exploitability_cache": config.STR,
    "algorithm": config.Choice(*ALGORITHMS), "magnet": config.Choice("uniform", "moving"),
    "magnet_coef": config.Float(0.0), "magnet_coef_end": config.Float(0.0), "magnet_update_every": _COUNT,
    "average": config.Choice(*AVERAGES),
}


# ---------------------------------------------------------------------------------------------- rollouts
class Buffer:
    """Learner transitions in the order they were taken; ``nxt`` links a seat's successive steps.

    Observations and masks are kept as the 2-D blocks they arrive in (a row per table decision, a
    block per batched-engine group) and joined once, by :attr:`obs` / :attr:`mask`: stacking
    thousands of rows one by one cost more than the rest of the bookkeeping."""

    def __init__(self):
        self._obs, self._mask = [], []  # blocks of rows
        self.action, self.logp, self.value = [], [], []
        self.reward, self.done, self.nxt = [], [], []

    def __len__(self) -> int:
        return len(self.action)

    @property
    def obs(self) -> np.ndarray:
        """(n, features) float32: every transition's network input, in order."""
        return self._joined(self._obs)

    @property
    def mask(self) -> np.ndarray:
        """(n, actions) bool: every transition's legal actions, in order."""
        return self._joined(self._mask)

    @staticmethod
    def _joined(blocks: list) -> np.ndarray:
        if len(blocks) > 1:
            blocks[:] = [np.concatenate(blocks)]  # joined once, kept joined
        return blocks[0] if blocks else np.zeros((0, 0), np.float32)

    def add(self, obs, mask, action, logp, value) -> int:
        self._obs.append(np.asarray(obs)[None])
        self._mask.append(np.asarray(mask)[None])
        self.action.append(action)
        self.logp.append(logp)
        self.value.append(value)
        self.reward.append(0.0)
        self.done.append(False)
        self.nxt.append(-1)
        return len(self.action) - 1

    def extend(self, obs, mask, action, logp, value) -> int:
        """Add a batch of transitions (rows of fresh arrays, kept as they are); returns the index of the first."""
        j, k = len(self.action), len(action)
        self._obs.append(obs)
        self._mask.append(mask)
        self.action.extend(action.tolist())
        self.logp.extend(logp.tolist())
        self.value.extend(value.tolist())
        self.reward.extend([0.0] * k)
        self.done.extend([False] * k)
        self.nxt.extend([-1] * k)
        return j

    def credit(self, pending, acc, nxt=None) -> None:
        """Close each seat's pending transition ``pending[i]`` (-1: none): it gets the reward ``acc[i]``
        accumulated since, and the link to its successor ``nxt[i]``; ``nxt`` None: the episode ended
        (``done``). The one credit rule of both rollout paths (engine tables and the batched engine)."""
        for i, (p, a) in enumerate(zip(pending, acc)):
            if p >= 0:
                self.reward[p] += a
                if nxt is None:
                    self.done[p] = True
                else:
                    self.nxt[p] = nxt[i]

    def advantages(self, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """GAE along each seat's own trajectory (a successor always comes later in the buffer)."""
        n = len(self)
        # Python floats are float64, as numpy's were: the same values, without a numpy scalar per step
        values = [float(v) for v in self.value]
        adv = [0.0] * n
        reward, done, nxt = self.reward, self.done, self.nxt
        for i in range(n - 1, -1, -1):
            if done[i]:
                next_value = next_adv = 0.0
            else:
                j = nxt[i]
                assert j > i, "a transition without successor must be done: rollouts finish their episodes"
                next_value, next_adv = values[j], adv[j]
            delta = reward[i] + gamma * next_value - values[i]
            adv[i] = delta + gamma * lam * next_adv
        adv_a = np.array(adv)
        return adv_a, adv_a + np.array(values)


@dataclass
class Table:
    """One game in progress: its state, who controls each seat, each learning seat's pending step."""

    state: State
    control: list  # per seat: "learner", ("pool", k) or an agent object
    learner_seats: list  # seats whose decisions are recorded
    opponent: str  # label for statistics: "self", "pool:<k>", or the fixed spec
    pending: list
    acc: list
    decisions: int = 0
    episode: Episode | None = None  # the driver, made when the table is first played
    relabel: signals_otherplay.Relabelling | None = None  # other_play: this episode's token frames


class League:
    """Frozen snapshots of the learner and the learner's win rate against each."""

    def __init__(self, cfg: PPOConfig):
        self.cfg = cfg
        self.snapshots: list[dict] = []  # {"update", "params", "win_rate", "games"}

    def add(self, update: int, net: nn.Module) -> None:
        params = {k: v.detach().clone() for k, v in net.state_dict().items()}
        self.snapshots.append({"update": update, "params": params, "win_rate": 0.5, "games": 0})
        if len(self.snapshots) > self.cfg.pool_size:
            self.snapshots.pop(0)

    def pick(self, rng: np.random.Generator) -> int:
        n = len(self.snapshots)
        if self.cfg.pool_scheme == "latest":
            return n - 1
        if self.cfg.pool_scheme == "uniform":
            return int(rng.integers(n))
        w = np.array([(1.0 - s["win_rate"]) ** self.cfg.pfsp_power + 1e-3 for s in self.snapshots])
        return int(rng.choice(n, p=w / w.sum()))

    def record(self, k: int, score: float) -> None:
        s = self.snapshots[k]
        s["games"] += 1
        s["win_rate"] += (score - s["win_rate"]) / min(s["games"], 100)  # running mean, then EMA

    def state_dict(self) -> list:
        return [dict(s) for s in self.snapshots]

    def load_state_dict(self, snaps: list) -> None:
        self.snapshots = [dict(s) for s in snaps]


def fixed_rules(cfg: PPOConfig, rules):
    """The Rules the fixed and evaluation opponents are built for (``fixed_options``); they play the
    training ``rules`` (a policy trained for other options may be refused by ``make_agent`` otherwise)."""
    return rules if cfg.fixed_options is None else make_rules(cfg.variant, **cfg.fixed_options)


def vector_blocker(cfg: PPOConfig, rules) -> str | None:
    """Why the network-only episodes of ``cfg`` cannot run on the batched engine (None: they can)."""
    if cfg.features == "info_state":
        return "info_state features need the decision history, which only engine states keep"
    if abs(cfg.random_start_score * 1000 - round(cfg.random_start_score * 1000)) > 1e-9:
        return "the batched engine draws random start scores per mille: random_start_score must be a multiple of 0.001"
    return None


class VectorGames:
    """The batched engine's part of a rollout: game ``b`` plays slot ``b``'s network-only episodes
    and its heads-up episodes against ``heuristic:*`` players.

    Per game: who plays which side (the learner everywhere in self-play, else the learner on
    ``side`` and snapshot ``pool`` or batched fixed player ``fixed`` on the other), and per seat the same credit bookkeeping as a
    :class:`Table` (pending transition, reward accumulated since). A game whose slot plays a table
    episode, or whose rollout has enough episodes, waits (action -1); the episode the batched engine
    reset it to is used when the slot next draws a network-only episode.
    """

    def __init__(self, cfg: PPOConfig, rules, venv: VectorEnv):
        self.cfg, self.rules, self.venv = cfg, rules, venv
        B, n = venv.num_envs, rules.players
        self.side_of = np.array([rules.side(s) for s in range(n)])
        self.first_seat = np.array([self.side_of.tolist().index(sd) for sd in range(rules.n_sides)])
        # win rewards per winning side, the last row a draw (leading_side -1)
        self.win_table = np.array([side_rewards(rules, w) for w in [*range(rules.n_sides), -1]])
        self.live = np.zeros(B, bool)  # slot b plays on the batched engine now
        self.side = np.full(B, -1)  # learner side; -1: self-play, every seat learns
        self.pool = np.full(B, -1)  # snapshot playing the other side
        self.fixed = np.full(B, -1)  # batched fixed player (Collector.batched) playing the other side
        self.label = [""] * B
        self.pending = np.full((B, n), -1, np.int64)
        self.acc = np.zeros((B, n))
        self.ret = np.zeros((B, n))  # zero-sum points since the episode began (statistics, reward "win")
        self.decisions = np.zeros(B, np.int64)
        self.actions = np.full(B, -1, np.int32)
        self.seeded = False
        self.fixed_seeded: set[int] = set()  # batched fixed players seeded in this rollout
        # other_play: each game's token frames, drawn when its episode starts
        self.relabel = signals_otherplay.Relabellings(rules, B) if cfg.other_play else None

    def begin(self) -> None:
        self.live[:] = False
        self.seeded = False
        self.fixed_seeded = set()

    def start(self, b: int, rng, label: str, pool_k: int, fixed: int = -1) -> None:
        if not self.seeded:  # one reset per rollout, seeded from the training generator: resumable
            # the arrays of a reset are the environment's own buffers, which every step rewrites
            self.obs, self.mask, self.seat = self.venv.reset(seed=int(rng.integers(2**62)))
            self.seeded = True
        self.live[b] = True
        self.label[b] = label
        self.side[b] = -1 if label == "self" else int(rng.integers(self.rules.n_sides))
        self.pool[b] = pool_k
        self.fixed[b] = fixed
        if self.relabel is not None:
            self.relabel.draw(b, rng)

    def groups(self) -> dict[int, np.ndarray]:
        """Live games by the player of their acting seat: -1 the learner, k >= 0 snapshot k, -2 - f
        batched fixed player f."""
        live = np.flatnonzero(self.live)
        side = self.side[live]
        learner = (side < 0) | (self.side_of[self.seat[live]] == side) if len(live) else side < 0
        fixed = self.fixed[live]
        ctl = np.where(learner, -1, np.where(fixed >= 0, -2 - fixed, self.pool[live]))
        return {int(k): live[ctl == k] for k in np.unique(ctl)}

    def inputs(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network inputs and masks of games ``idx`` (with other-play, in the acting seats' frames)."""
        obs, mask = encode_batch(self.rules, self.obs[idx], self.cfg.features), self.mask[idx].astype(bool)
        if self.relabel is not None:
            obs, mask = self.relabel.observe(obs, idx, self.seat[idx]), self.relabel.mask(mask, idx, self.seat[idx])
        return obs, mask

    def record(self, idx, obs, masks, actions, logp, values, buf: Buffer | None) -> None:
        """The chosen actions of games ``idx``; learner transitions go to ``buf`` (None: not recorded).

        Actions chosen on :meth:`inputs` (``obs`` given) are in the seats' frames and are sent through
        them; a batched fixed player's (``obs`` None) are the game's own."""
        sent = actions if self.relabel is None or obs is None else self.relabel.act(actions, idx, self.seat[idx])
        self.actions[idx] = sent
        self.decisions[idx] += 1
        if buf is None:
            return
        seats = self.seat[idx]
        j = buf.extend(obs, masks, actions, logp, values)
        js = np.arange(j, j + len(idx))
        buf.credit(self.pending[idx, seats].tolist(), self.acc[idx, seats].tolist(), js.tolist())
        self.acc[idx, seats] = 0.0  # a reward before a seat's first decision is nobody's doing
        self.pending[idx, seats] = js

    def step(self, buf: Buffer | None) -> list[tuple]:
        """One step of the batched engine; the episodes it finished, as ``(slot, label, return, decisions)``."""
        cfg = self.cfg
        step = self.venv.step(self.actions)
        self.actions[:] = -1
        rew = step.reward.astype(np.float64)
        rew[~self.live] = 0.0
        self.ret += rew
        if cfg.reward == "points":
            self.acc += rew * cfg.reward_scale
        ended = np.flatnonzero(step.done & self.live)
        if not len(ended):
            return []
        if cfg.reward == "win":  # the engine's win reward; ret is zero-sum, so its order is the points'
            for b in ended.tolist():
                self.acc[b] += self.win_table[leading_side(self.ret[b, self.first_seat])] * cfg.reward_scale
        if buf is not None:  # every ended game's seats at once: each pending transition is its own
            buf.credit(self.pending[ended].ravel().tolist(), self.acc[ended].ravel().tolist())
        side = self.side[ended]
        first = np.where(side < 0, 0, self.first_seat[np.maximum(side, 0)])
        finished = [(b, self.label[b], r, d) for b, r, d in
                    zip(ended.tolist(), self.ret[ended, first].tolist(), self.decisions[ended].tolist())]
        self.live[ended] = False
        self.pending[ended] = -1
        self.acc[ended] = 0.0
        self.ret[ended] = 0.0
        self.decisions[ended] = 0
        return finished


class BatchPolicy:
    """A fixed ``ppo:`` network (``observation`` features, or ``+strength``) or the random agent deciding
    for its games of the batched engine at once: the agent's own masked distribution, sampled."""

    def __init__(self, rules, agent):
        self.rules, self.agent, self.key = rules, agent, id(agent)
        self.gen = torch.Generator()

    @staticmethod
    def takes(agent) -> bool:
        from agents.ppo import PPOAgent
        from agents.random import RandomAgent

        return isinstance(agent, RandomAgent) or (isinstance(agent, PPOAgent) and agent.features != "info_state"
                                                  and not agent.greedy)

    def reset(self, seed: int) -> None:
        self.gen.manual_seed(seed)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        """(B, actions) the agent's distribution in each game, from the batched engine's observations."""
        m = torch.as_tensor(mask.astype(bool))
        with torch.inference_mode():
            if hasattr(self.agent, "net"):
                x = torch.as_tensor(encode_batch(self.rules, obs, self.agent.features))
                return torch.softmax(self.agent.net.masked_logits(x, m), -1)
            return m.float() / m.sum(-1, keepdim=True)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return torch.multinomial(self.probabilities(obs, mask), 1, generator=self.gen).squeeze(-1).numpy()


class Collector:
    """Plays batches of episodes with the learner, the league and fixed agents."""

    def __init__(self, cfg: PPOConfig, rules, device: torch.device):
        self.cfg, self.rules, self.device = cfg, rules, device
        self.fixed_rules = fixed_rules(cfg, rules)
        self.n_actions = layout_of(rules).size
        self.fixed: dict[str, object] = {}
        self._snapshots: dict[int, tuple] = {}  # id(snapshot params) -> (params, network)
        self._stacked: tuple = (None, None, None)  # (snapshot ids, stacked actor layers, their params)
        self.vector: VectorGames | None = None
        self.path, self.why = "engine", "rollout: engine"
        self.batch_players: list = []  # fixed players on the batched engine (BatchHeuristic by style, BatchPolicy)
        if cfg.rollout != "engine":
            why = vector_blocker(cfg, rules)
            if why is None:
                venv = VectorEnv(rules, cfg.num_envs, episode=cfg.episode, reward="points", dealer="random",
                                 random_start_score=cfg.random_start_score)
                why = None if venv.backend == "numba" else (venv.fallback_reason or "numba is not installed")
                if why is None:
                    self.vector = VectorGames(cfg, rules, venv)
                    self.path, self.why = "vector", "network-only episodes on the batched engine"
            if why is not None:
                if cfg.rollout == "vector":
                    raise TrucError(f"rollout: vector cannot run this config: {why}; use rollout: engine (or auto)")
                self.why = f"rollout: auto fell back to engine tables: {why}"

    def agent(self, spec: str):
        if spec not in self.fixed:
            self.fixed[spec] = make_agent(spec, self.fixed_rules, seed=0)
        return self.fixed[spec]

    def batched(self, agent, rng) -> int:
        """The batched player standing in for fixed ``agent`` on the batched engine (-1: none, a table).

        The ``heuristic:*`` players of heads-up rules decide there as on a table (the same action
        for the same information, ``agents/heuristic_batch.py``), and so do ``ppo:`` networks whose
        features the batched engine gives and the random agent (:class:`BatchPolicy`); their draws
        come from a generator seeded from ``rng`` in each rollout that needs one."""
        vec = self.vector
        if vec is None:
            return -1
        if isinstance(agent, HeuristicAgent) and batch_supports(self.rules) is None:
            key, build = agent.style_name, lambda: BatchHeuristic(self.rules, agent.style_name)
        elif self.cfg.fixed_batched and self.cfg.fixed_options is None and BatchPolicy.takes(agent):
            # (a network of other options reads another observation layout: it stays on tables)
            key, build = id(agent), lambda: BatchPolicy(self.rules, agent)
        else:
            return -1
        keys = [getattr(p, "style_name", None) or p.key for p in self.batch_players]
        if key not in keys:
            self.batch_players.append(build())
            keys.append(key)
        f = keys.index(key)
        if f not in vec.fixed_seeded:  # at its first episode of each rollout, like the deals: resumable
            self.batch_players[f].reset(int(rng.integers(2**62)))
            vec.fixed_seeded.add(f)
        return f

    def new_table(self, rng, opponent: str, pool_k: int = -1, agent=None) -> Table:
        r, cfg = self.rules, self.cfg
        dealer = int(rng.integers(r.players))
        score = None
        if cfg.episode == "hand" and cfg.random_start_score and rng.random() < cfg.random_start_score:
            score = [int(x) for x in rng.integers(0, r.target, size=r.n_sides)]
        state = State(r, episode=cfg.episode, dealer=dealer, score=score)
        if opponent == "self":
            control = ["learner"] * r.players
        else:
            side = int(rng.integers(r.n_sides))
            other = ("pool", pool_k) if pool_k >= 0 else agent
            control = ["learner" if r.side(s) == side else other for s in range(r.players)]
        learner_seats = [s for s in range(r.players) if control[s] == "learner"]
        n = r.players
        relabel = signals_otherplay.Relabelling(r, rng) if cfg.other_play else None
        return Table(state, control, learner_seats, opponent, [-1] * n, [0.0] * n, relabel=relabel)

    def _rewards(self, t: Table) -> None:
        """Add the reward each learning seat received since the last call to its accumulator."""
        rewards = t.episode.rewards()
        for s in t.learner_seats:
            t.acc[s] += rewards[s] * self.cfg.reward_scale

    def _advance(self, t: Table, rng) -> int:
        """Play chance and fixed agents until a network decides; its seat, or -1 at the end."""
        if t.episode is None:
            t.episode = Episode(t.state, self.dealer(rng), self.cfg.reward)
        ep = t.episode
        while True:
            seat = ep.to_decision()
            self._rewards(t)
            if seat < 0:
                return -1
            ctl = t.control[seat]
            if ctl == "learner" or isinstance(ctl, tuple):
                return seat
            mask = ep.mask()
            ep.play(ctl.act(SeatObservation(t.state, seat, mask.copy()), mask))
            self._rewards(t)

    def dealer(self, rng) -> Dealer:
        """Chance for one table's episode: uniform draws from the rollout's generator."""
        return Dealer(self.rules, rng)

    def decide(self, net: PolicyNet, league: League, k: int, x, m, gen, states):
        """Actions, log-probabilities and values of one batch of decisions: the learner (k = -1) or snapshot k."""
        with torch.inference_mode():  # no autograd bookkeeping at all: the rollout never backpropagates
            player = net if k < 0 else self.snapshot_net(net, league, k)
            action, logp, value = player.sample(x, m, generator=gen)
        return action.cpu().numpy(), logp.cpu().numpy(), value.cpu().numpy()

    def snapshot_actions(self, league: League, ks: np.ndarray, obs: np.ndarray, masks: np.ndarray, gen) -> np.ndarray:
        """Sampled actions of many snapshots at once (row i plays snapshot ``ks[i]``): the actor
        layers of every snapshot stacked, and each snapshot's rows in one batched matrix product."""
        key = tuple(id(snap["params"]) for snap in league.snapshots)
        if self._stacked[0] != key:  # the league changes between rollouts only
            params = [snap["params"] for snap in league.snapshots]
            self._stacked = (key, stack_actors(params), params)  # params kept: their ids stay theirs
        S, R = len(league.snapshots), len(ks)
        order = np.argsort(ks, kind="stable")
        counts = np.bincount(ks, minlength=S)
        pos = np.empty(R, np.int64)  # row i is the pos[i]-th decision of snapshot ks[i]
        pos[order] = np.arange(R) - (np.cumsum(counts) - counts)[ks[order]]
        kt, pt = torch.as_tensor(ks, device=self.device), torch.as_tensor(pos, device=self.device)
        x = torch.zeros((S, int(counts.max()), obs.shape[1]), device=self.device)
        x[kt, pt] = torch.as_tensor(obs, device=self.device)
        with torch.no_grad():
            logits = stacked_actor_logits(self._stacked[1], x)[kt, pt]
            m = torch.as_tensor(masks, device=self.device)
            probs = torch.softmax(logits.masked_fill(~m, torch.finfo(logits.dtype).min), -1)
            return torch.multinomial(probs, 1, generator=gen).squeeze(-1).cpu().numpy()

    def snapshot_net(self, net: PolicyNet, league: League, k: int) -> PolicyNet:
        """A network holding snapshot k's parameters, built once per snapshot (a functional call per
        batch costs more than the forward on small batches)."""
        params = league.snapshots[k]["params"]
        hit = self._snapshots.get(id(params))
        if hit is None or hit[0] is not params:
            current = {id(s["params"]) for s in league.snapshots}
            self._snapshots = {i: v for i, v in self._snapshots.items() if i in current}
            player = copy.deepcopy(net)
            player.load_state_dict(params)
            hit = self._snapshots[id(params)] = (params, player)
        return hit[1]

    def _finish(self, t: Table, buf: Buffer | None) -> None:
        if buf is None:
            return
        buf.credit([t.pending[s] for s in t.learner_seats], [t.acc[s] for s in t.learner_seats])

    def rollout(self, net: PolicyNet, league: League, rng: np.random.Generator, gen: torch.Generator,
                pick, target_steps: int = 0, target_episodes: int = 0, learn: bool = True):
        """Play complete episodes until ``target_steps`` learner transitions or ``target_episodes``.

        ``pick(rng) -> (label, pool_k, agent)`` draws each episode's opponents. Returns the buffer
        (None when not learning) and one ``(label, learner_return, decisions)`` per episode.
        """
        cfg = self.cfg
        buf = Buffer() if learn else None
        tables: list[Table | None] = [None] * cfg.num_envs
        vec = self.vector
        live = vec.live if vec is not None else np.zeros(cfg.num_envs, bool)
        if vec is not None:
            vec.begin()
        episodes: list[tuple] = []
        started = 0
        while True:
            for i in np.flatnonzero(~live).tolist():  # free slots in order; the targets hold for all or none
                if not ((target_episodes and started < target_episodes) or (target_steps and len(buf) < target_steps)):
                    break
                if tables[i] is None:
                    label, k, agent = pick(rng)
                    fixed = -1 if agent is None else self.batched(agent, rng)
                    if vec is not None and (agent is None or fixed >= 0):
                        vec.start(i, rng, label, k, fixed)
                    else:
                        tables[i] = self.new_table(rng, label, k, agent)
                    started += 1
            if not any(tables) and not live.any():
                break
            groups: dict[int, list[tuple[int, int]]] = {}  # -1: learner, k: pool snapshot k
            for i, t in enumerate(tables):
                if t is None:
                    continue
                seat = self._advance(t, rng)
                if seat < 0:
                    self._finish(t, buf)
                    ret = t.state.returns()
                    first = t.learner_seats[0]
                    episodes.append((t.opponent, ret[first], t.decisions))
                    tables[i] = None
                    continue
                ctl = t.control[seat]
                groups.setdefault(-1 if ctl == "learner" else ctl[1], []).append((i, seat))
            vgroups = vec.groups() if vec is not None else {}
            for k in [k for k in vgroups if k <= -2]:  # fixed players on the batched engine: no network
                idx = vgroups.pop(k)
                action = self.batch_players[-2 - k].act(vec.obs[idx], vec.mask[idx])
                vec.record(idx, None, None, action, None, None, None)
            pool = [k for k in vgroups if k >= 0]
            if len(pool) > 1:  # several snapshots act on the batched engine: one stacked forward for all
                idx = np.concatenate([vgroups.pop(k) for k in pool])
                obs, masks = vec.inputs(idx)
                ks = vec.pool[idx]
                action = self.snapshot_actions(league, ks, obs, masks, gen)
                assert masks[np.arange(len(idx)), action].all(), "masked sampling chose an illegal action"
                vec.record(idx, obs, masks, action, None, None, None)
            for k in [*groups, *(k for k in vgroups if k not in groups)]:
                items = groups.get(k, [])
                obs = np.stack([encode_state(tables[i].state, s, cfg.features) for i, s in items]) if items else None
                masks = np.zeros((len(items), self.n_actions), dtype=bool)
                for row, (i, s) in enumerate(items):
                    masks[row, tables[i].state.legal_actions()] = True
                    if tables[i].relabel is not None:  # other-play: the seat's own frame
                        obs[row] = tables[i].relabel.observe(obs[row], s)
                        masks[row] = tables[i].relabel.mask(masks[row], s)
                states = [tables[i].state for i, _ in items]
                vidx = vgroups.get(k)
                if vidx is not None:  # this network's decisions on the batched engine join the same forward
                    vobs, vmasks = vec.inputs(vidx)
                    obs = vobs if obs is None else np.concatenate([obs, vobs])
                    masks = np.concatenate([masks, vmasks])
                    states += [None] * len(vidx)
                x = torch.as_tensor(obs, device=self.device)
                m = torch.as_tensor(masks, device=self.device)
                action, logp, value = self.decide(net, league, k, x, m, gen, states)
                if vidx is not None:
                    ne = len(items)
                    va = action[ne:]
                    assert masks[np.arange(ne, len(masks)), va].all(), "masked sampling chose an illegal action"
                    vec.record(vidx, obs[ne:], masks[ne:], va, logp[ne:], value[ne:], buf if k < 0 else None)
                for row, (i, s) in enumerate(items):
                    t = tables[i]
                    a = int(action[row])
                    assert masks[row, a], "masked sampling chose an illegal action"
                    if k < 0 and buf is not None:
                        j = buf.add(obs[row], masks[row], a, float(logp[row]), float(value[row]))
                        buf.credit([t.pending[s]], [t.acc[s]], [j])
                        t.acc[s] = 0.0  # a reward before a seat's first decision is nobody's doing
                        t.pending[s] = j
                    t.decisions += 1
                    t.episode.play(a if t.relabel is None else t.relabel.act(a, s))
                    self._rewards(t)
            if vec is not None and live.any():
                for _, label, ret, decisions in vec.step(buf):
                    episodes.append((label, ret, decisions))
        return buf, episodes


def score_of(ret: float) -> float:
    return 1.0 if ret > 0 else (0.5 if ret == 0 else 0.0)


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


def train(cfg: PPOConfig, resume: bool = False) -> dict:
    """Train (or continue) the run described by ``cfg``; returns a summary of the last metrics."""
    cfg.validate()
    rules = make_rules(cfg.variant, **(cfg.options or {}))
    run_dir = os.path.join(cfg.out_dir, cfg.name)
    ck_path = os.path.join(run_dir, "checkpoint.pt")
    if not resume and os.path.exists(ck_path):
        raise TrucError(f"{ck_path} exists: continue it with --resume, or choose another name / out_dir")
    # every opponent is built now, so that a bad spec is refused before the run folder exists and not
    # at the first episode or evaluation that draws it (minutes into training)
    opponents = {spec: make_agent(spec, fixed_rules(cfg, rules), seed=0)
                 for spec in dict.fromkeys([*cfg.fixed_opponents, cfg.eval_opponent])}
    config.output_folder(run_dir, "out_dir")

    # seeding, in one block
    rng = np.random.default_rng(cfg.seed)  # deals, seats, opponents, minibatches
    torch.manual_seed(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)  # action sampling during rollouts
    if cfg.deterministic or torch.are_deterministic_algorithms_enabled():  # the call imports torch's compiler
        torch.use_deterministic_algorithms(cfg.deterministic)
    torch.set_num_threads(cfg.torch_threads)
    device = resolve_device(cfg.device)
    if device.type == "cuda":
        gen = torch.Generator(device=device).manual_seed(cfg.seed)

    meta = net_meta(cfg, rules)
    net = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate, eps=1e-5)
    league = League(cfg)
    history: list[dict] = []
    start_update, global_step, elapsed_before = 1, 0, 0.0
    magnet = None  # mmd with a moving magnet: the frozen policy the loss pulls towards
    average = IterateAverage(cfg, rules) if cfg.average != "none" else None
    if resume:
        if not os.path.exists(ck_path):
            raise TrucError(f"--resume: no checkpoint at {ck_path}")
        ck = read_checkpoint(ck_path, rules)
        try:
            if ck["net"] != meta:
                raise TrucError(f"--resume: {ck_path} has network {ck['net']}, the config asks for {meta}")
            net.load_state_dict(ck["model"])
            optimizer.load_state_dict(ck["optimizer"])
            rng.bit_generator.state = ck["rng"]["numpy"]
            gen.set_state(ck["rng"]["torch"])
            torch.set_rng_state(ck["rng"]["torch_global"])
            league.load_state_dict(ck["league"])
            for s in league.snapshots:
                s["params"] = {k: v.to(device) for k, v in s["params"].items()}
            history = list(ck["history"])
            if average is not None and "average" in ck:
                average.load_state_dict(ck["average"])
            if "magnet" in ck:
                magnet = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden, init=False).to(device)
                magnet.load_state_dict(ck["magnet"])
                magnet.eval().requires_grad_(False)
            start_update, global_step = ck["update"] + 1, ck["global_step"]
            elapsed_before = ck["elapsed"]
            changed = {k: (ck["config"].get(k), v) for k, v in dataclasses.asdict(cfg).items()
                       if ck["config"].get(k) != v}
        except TrucError:
            raise
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
            # a checkpoint of the right format but missing or mangled training state
            raise TrucError(f"--resume: {ck_path} lacks this run's training state ({type(e).__name__}: "
                            f"{str(e)[:120]})") from None
        if changed:
            print(f"resume: settings changed since the checkpoint (was, now): {changed}")

    writer = None
    if cfg.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(os.path.join(run_dir, "tb"))
    collector = Collector(cfg, rules, device)
    collector.fixed.update((spec, opponents[spec]) for spec in cfg.fixed_opponents)
    print(f"ppo {cfg.name}: rollout {collector.path} ({collector.why})")

    def pick_training(r):
        u = r.random()
        if u < cfg.fixed_prob:
            spec = cfg.fixed_opponents[int(r.integers(len(cfg.fixed_opponents)))]
            agent = collector.agent(spec)
            agent.reset(int(r.integers(2**31)))
            return spec, -1, agent
        if u < cfg.fixed_prob + cfg.self_play_prob or not league.snapshots:
            return "self", -1, None
        k = league.pick(r)
        return f"pool:{k}", k, None

    num_updates = cfg.num_updates
    t0 = time.time()
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=num_updates, initial=start_update - 1, desc=f"ppo {cfg.name}", unit="upd")
    last_eval: dict = history[-1].get("eval", {}) if history else {}
    for update in range(start_update, num_updates + 1):
        if cfg.anneal_lr:
            optimizer.param_groups[0]["lr"] = cfg.learning_rate * (1.0 - (update - 1.0) / num_updates)
        t_roll = time.time()
        net.eval()
        buf, episodes = collector.rollout(net, league, rng, gen, pick_training, target_steps=cfg.steps_per_update)
        rollout_s = time.time() - t_roll
        for label, ret, _ in episodes:
            if label.startswith("pool:"):
                league.record(int(label[5:]), score_of(ret))
        global_step += len(buf)

        # ---- the PPO update
        adv, returns = buf.advantages(cfg.gamma, cfg.gae_lambda)
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
        if mmd:
            # MMD's temperature, annealed linearly over the run
            frac = (update - 1.0) / max(num_updates - 1, 1)
            magnet_coef = cfg.magnet_coef + frac * (cfg.magnet_coef_end - cfg.magnet_coef)
            if cfg.magnet == "moving" and (magnet is None or (update - 1) % cfg.magnet_update_every == 0):
                magnet = copy.deepcopy(net).eval().requires_grad_(False)
        net.train()
        clipfracs, approx_kl, pg_loss, v_loss, entropy, magnet_kl = [], torch.zeros(()), 0.0, 0.0, 0.0, 0.0
        for _epoch in range(cfg.update_epochs):
            perm = torch.as_tensor(rng.permutation(batch), device=device)
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
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optimizer.step()
                pg_loss, v_loss, entropy = pg.item(), vl.item(), ent_mean.item()
            if cfg.target_kl is not None and approx_kl.item() > cfg.target_kl:
                break
        y_pred, y_true = b_val.cpu().numpy(), b_ret.cpu().numpy()
        var_y = np.var(y_true)
        explained_var = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)

        # ---- league, evaluation, metrics
        if update % cfg.snapshot_every == 0:
            league.add(update, net)
        elapsed = elapsed_before + time.time() - t0
        others = [ret for label, ret, _ in episodes if label != "self"]
        row = {
            "update": update, "global_step": global_step, "elapsed_s": elapsed,
            "sps": global_step / max(elapsed, 1e-9), "rollout_sps": len(buf) / max(rollout_s, 1e-9),
            "learning_rate": optimizer.param_groups[0]["lr"], "value_loss": v_loss, "policy_loss": pg_loss,
            "entropy": entropy, "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)),
            "explained_variance": explained_var, "episodes": len(episodes),
            "episode_length": float(np.mean([d for *_, d in episodes])),
            "episode_return": float(np.mean(others)) if others else float("nan"),
            "self_play_share": 1.0 - len(others) / max(len(episodes), 1),
        }
        if mmd:
            row["magnet_kl"], row["magnet_coef"] = magnet_kl, magnet_coef
        for spec in cfg.fixed_opponents:
            rets = [ret for label, ret, _ in episodes if label == spec]
            if rets:
                row[f"return_vs/{spec}"] = float(np.mean(rets))
        if update % cfg.eval_every == 0 or update == num_updates:
            last_eval = evaluate(net, cfg, rules, device, collector, league, update)
            row["eval"] = last_eval
        if cfg.exploitability_every and (update % cfg.exploitability_every == 0 or update == num_updates):
            row["exploitability"] = measure_exploitability(net, cfg, rules, average, update)
            write_exploitability_csv(history + [row], os.path.join(run_dir, "exploitability.csv"))
        history.append(row)
        if writer is not None:
            log_scalars(writer, row, global_step)
        stop = cfg.time_limit_minutes and elapsed > 60 * cfg.time_limit_minutes
        if update % cfg.checkpoint_every == 0 or update == num_updates or stop:
            ck = policy_dict(cfg, rules, net)
            ck.update({
                "update": update, "global_step": global_step, "elapsed": elapsed,
                "optimizer": optimizer.state_dict(),
                "rng": {"numpy": rng.bit_generator.state, "torch": gen.get_state(),
                        "torch_global": torch.get_rng_state()},
                "league": [{**s, "params": {k: v.cpu() for k, v in s["params"].items()}} for s in league.snapshots],
                "history": history,
            })
            if average is not None:
                ck["average"] = average.state_dict()
            if magnet is not None:
                ck["magnet"] = {k: v.detach().cpu() for k, v in magnet.state_dict().items()}
            save_atomic(ck, ck_path)
            if cfg.keep_every and update % cfg.keep_every == 0:
                save_atomic(ck, os.path.join(run_dir, f"checkpoint_{update}.pt"))
        if bar is not None:
            bar.update(1)
            post = {"sps": f"{row['sps']:.0f}", "ent": f"{entropy:.2f}"}
            if last_eval:
                post["eval_wr"] = f"{last_eval['win_rate']:.2f}"
            bar.set_postfix(post)
        if stop:
            print(f"time limit of {cfg.time_limit_minutes} min reached after update {update}")
            break
    if bar is not None:
        bar.close()
    if writer is not None:
        writer.close()
    save_atomic(policy_dict(cfg, rules, net), os.path.join(run_dir, "policy.pt"))
    if average is not None and average.count:
        average.save(os.path.join(run_dir, "average.npz"))
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
    return {"run_dir": run_dir, "updates": last.get("update", 0), "global_step": global_step,
            "elapsed_s": last.get("elapsed_s", 0.0), "sps": last.get("sps", 0.0), "eval": last_eval, "net": net}


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


class IterateAverage:
    """The reach-weighted average of the policy's iterates on the public tree (``average`` setting).

    With a redeal the average has two parts, like a CFR strategy file: the hand (``main``, its redeal
    decisions included) and the redeal-free hand after an accepted redeal (``cont``). In ``cont`` a seat's
    iterate counts with its own probability of having taken its step to the redeal (proposing as first
    player, accepting as dealer, over the first hands it is dealt), times its reach inside ``cont``: the
    average then plays like drawing one iterate per hand and following it through the redeal too.
    Only the sums are kept between measurements; each is added to with the measurement's own tree and
    solver while they are in memory (:func:`train.exploitability.policy_exploitability`'s ``on_table``).
    """

    def __init__(self, cfg: PPOConfig, rules):
        self.cfg, self.rules = cfg, rules
        self.sums: dict = {}  # part -> train.psro.ReachAverage, bound to a tree only while one is measured
        self.count = 0
        self.last: dict | None = None
        self._weight = 0.0
        self._redeal = ((0.0, 0.0), 0.0)  # the average's best responses and value after a redeal, this measurement

    def begin(self, update: int) -> None:
        """The next tables are those of the iterate of ``update``."""
        self._weight = 1.0 if self.cfg.average == "uniform" else float(update)

    def on_table(self, part: str, tree, solver, sigma, step) -> None:
        """Add one part of the current iterate, and measure the average's part with the same solver."""
        from agents.cfr.policy_tree import best_response_values
        from train.psro import ReachAverage, TableGame

        game = TableGame(tree, solver)
        if part in self.sums:
            self.sums[part].bind(game)
        else:
            self.sums[part] = ReachAverage(game)
        sums = self.sums[part]
        w = self._weight
        if part == "cont":  # seat 0 deals the measured hand: seat 1 proposes the redeal, seat 0 accepts it
            sums.add(sigma, w * step["accept"], w * step["propose"])
            ev = best_response_values(solver, sums.table())
            self._redeal = ((ev["br0"], ev["br1"]), ev["value_seat0"])
        else:
            sums.add(sigma, w)
            redeal_br, redeal_value = self._redeal
            ev = best_response_values(solver, sums.table(), redeal_br, redeal_value)
            self.count += 1
            self.last = {"avg_exploitability": float(ev["exploitability"]), "avg_br0": float(ev["br0"]),
                         "avg_br1": float(ev["br1"]), "value_seat0": float(ev["value_seat0"]),
                         "redeal_value": float(redeal_value) if self.rules.redeal else None}
        sums.unbind()  # the measurement's tree and solver are freed with it

    def state_dict(self) -> dict:
        """The sums as tensors (a checkpoint loads with ``weights_only=True``)."""
        d = {"count": self.count, "last": self.last}
        for part, sums in self.sums.items():
            d[part] = {k: torch.as_tensor(v) for k, v in sums.state_dict().items()}
        return d

    def load_state_dict(self, d: dict) -> None:
        from train.psro import ReachAverage

        if self.rules.redeal != ("cont" in d) and d.get("count", 0):
            raise TrucError("the checkpoint's average policy was kept for rules with"
                            f"{'out' if 'cont' not in d else ''} a redeal; these rules differ")
        self.sums = {part: ReachAverage.restored({k: np.asarray(v) for k, v in d[part].items()})
                     for part in ("main", "cont") if part in d}
        self.count, self.last = int(d["count"]), d.get("last")

    def save(self, path: str) -> None:
        """The average as a strategy file (``table:PATH`` plays it); each part's tree is read from the cache."""
        from agents.cfr.solver import PublicTreeSolver
        from agents.cfr.strategy import StrategyTable, save_strategy
        from train.exploitability import cached_tree, default_cache_dir
        from train.psro import TableGame

        cache = self.cfg.exploitability_cache or default_cache_dir()
        parts = {}
        for part, sums in self.sums.items():
            rules = self.rules if part == "main" else make_rules(self.rules.variant,
                                                                 **{**self.rules.options, "redeal": False})
            tree = cached_tree(rules, 0, (0, 0), "strength", cache)
            solver = PublicTreeSolver(tree, dtype="float32")
            sums.bind(TableGame(tree, solver))
            parts[part] = StrategyTable.from_solver(tree, solver, sums.table())
            sums.unbind()
            del tree, solver
        header = {"variant": self.rules.variant, "options": dict(self.rules.options), "rules_key": self.rules.key,
                  "dealer": 0, "score": [0, 0], "abstraction": "strength", "algorithm": f"{self.cfg.algorithm} average",
                  "iterations": self.count, "exploitability": self.last["avg_exploitability"],
                  "value_seat0": self.last["value_seat0"], "redeal_value": self.last["redeal_value"]}
        save_strategy(path, header, parts)


def measure_exploitability(net, cfg: PPOConfig, rules, average: IterateAverage | None = None, update: int = 0) -> dict:
    """Exact exploitability (points per hand, one hand from 0-0, seat 0 dealing) of the current policy,
    and of the average of the iterates so far when ``average`` is given (the current one added to it)."""
    import copy

    from agents.ppo import PPOAgent
    from train.exploitability import default_cache_dir, policy_exploitability

    cpu_net = copy.deepcopy(net).cpu().eval()  # the tables are filled on the CPU; the learner's net is left alone
    threads = torch.get_num_threads()
    cpu0 = time.process_time()
    if average is not None:
        average.begin(update)
    result = policy_exploitability(PPOAgent(cpu_net, rules, cfg.features), rules, first_hands=cfg.exploitability_first_hands,
                                   seed=cfg.seed, log=lambda msg: None, cache_dir=cfg.exploitability_cache or default_cache_dir(),
                                   on_table=None if average is None else average.on_table)
    torch.set_num_threads(threads)  # the tables run single-threaded
    out = {k: float(result[k]) for k in ("exploitability", "br0", "br1", "value_seat0")}
    if average is not None:
        out.update({k: average.last[k] for k in ("avg_exploitability", "avg_br0", "avg_br1")})
    out["cpu_seconds"] = time.process_time() - cpu0
    return out


EXPLOITABILITY_COLUMNS = ("update", "global_step", "exploitability", "br0", "br1", "value_seat0", "cpu_seconds")
AVERAGE_COLUMNS = ("avg_exploitability", "avg_br0", "avg_br1")


def write_exploitability_csv(history: list[dict], path: str) -> None:
    """The exploitability curve so far as CSV (one row per measurement; with the average's columns when
    it is kept), written atomically."""
    from truc_env.atomic import atomic_write_text

    rows = [{**h["exploitability"], "update": h["update"], "global_step": h["global_step"]}
            for h in history if h.get("exploitability")]
    columns = EXPLOITABILITY_COLUMNS + (AVERAGE_COLUMNS if rows and all(c in rows[0] for c in AVERAGE_COLUMNS) else ())
    lines = [",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]
    atomic_write_text(path, "\n".join(lines) + "\n")


def run_title(cfg: PPOConfig, rules) -> str:
    """A plot's title: the algorithm that ran (an MMD run says MMD), the run and the variant."""
    return f"{cfg.algorithm.upper()} {cfg.name} ({rules.variant})"


def _single_point(ax, xs: list, ys: list, what: str) -> bool:
    """Write a series of one measurement (or several at one step, as a resumed run can log) as text, not
    as markers on a degenerate axis; True if it did."""
    if len(set(xs)) > 1:
        return False
    ax.text(0.5, 0.5, f"{what}: one measurement\n{ys[-1]:.4g} at step {xs[-1]:,}" if xs else f"{what}: none",
            ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return True


def plot_exploitability(history: list[dict], path: str, title: str = "PPO") -> str | None:
    """The exploitability curve (points per hand against learner steps, log scale) as a PNG; the
    average policy's too when it is kept."""
    rows = [(h["global_step"], h["exploitability"]) for h in history if h.get("exploitability")]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_title(f"{title}: exact exploitability")
    if _single_point(ax, [x for x, _ in rows], [e["exploitability"] for _, e in rows], "exploitability"):
        fig.tight_layout()
        return save_figure(fig, path)
    ax.plot([x for x, _ in rows], [e["exploitability"] for _, e in rows], marker="o", label="last iterate")
    if "avg_exploitability" in rows[0][1]:
        ax.plot([x for x, _ in rows], [e["avg_exploitability"] for _, e in rows], marker=".", label="average policy")
        ax.legend()
    ax.set_yscale("log")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("exploitability (points per hand)")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(fig, path: str) -> str:
    """Write a matplotlib figure as PNG atomically (a temporary file renamed over ``path``) and close it."""
    import matplotlib.pyplot as plt

    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def plot_curves(history: list[dict], path: str, title: str = "PPO") -> str | None:
    """Learning curves (evaluation, entropy, KL, explained variance, SPS) as one PNG."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["global_step"] for h in history]
    evals = [(h["global_step"], h["eval"]) for h in history if h.get("eval")]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    ax = axes[0, 0]
    xs = [s for s, _ in evals]
    if evals:
        ax.set_title(f"win rate vs {evals[0][1]['opponent']}")
    if not _single_point(ax, xs, [e["win_rate"] for _, e in evals], "win rate"):
        ax.plot(xs, [e["win_rate"] for _, e in evals], marker="o")
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax = axes[0, 1]
    if evals:
        ax.set_title(f"points per episode vs {evals[0][1]['opponent']} (95% CI)")
    if not _single_point(ax, xs, [e["return"] for _, e in evals], "points per episode"):
        ys = np.array([e["return"] for _, e in evals])
        ci = np.array([e["return_ci95"] for _, e in evals])
        ax.plot(xs, ys, marker="o")
        ax.fill_between(xs, ys - ci, ys + ci, alpha=0.25)
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    for ax, key, name in ((axes[0, 2], "entropy", "policy entropy"), (axes[1, 0], "approx_kl", "approx KL"),
                          (axes[1, 1], "explained_variance", "explained variance"), (axes[1, 2], "sps", "learner steps / s")):
        ax.set_title(name)
        if not _single_point(ax, steps, [h[key] for h in history], name):
            ax.plot(steps, [h[key] for h in history])
    for ax in axes.flat:
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)


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
    print(msg)
    print(f"policy: net:{os.path.join(summary['run_dir'], 'policy.pt')}")
    return summary
