"""A policy network fitted to a strategy table on the public tree: ``truc train distill --config ...``.

The teacher is a table with one action distribution per information set (public node, own hand as
strength classes) of a heads-up hand: a ``table:`` strategy file written from the same public trees
(a CFR solve, a full-width MMD run, a PSRO mixture, a PPO/MMD ``average.npz``). The student is the
PPO network of ``net:PATH``, so everything that plays, measures or ranks a PPO policy takes the
result. With a redeal both parts are fitted: the hand and the hand after an accepted redeal (whose
rows carry a first hand, drawn from the teacher's odds of reaching the redeal with it, or from the
deal: the student learns to play there whatever its first hand was, as the teacher does).

Rows are information sets, sampled with the student's stake in them: the seat's own probability of
reaching the set under the teacher times the chance of its hand (what a best response against the
seat can make of that set), mixed with a share drawn uniformly (sets the teacher never reaches, where
the student may still go). A row's input is what the network would see at the canonical suit
assignment of :mod:`agents.cfr.policy_tree` (the node's hand-free input from
:func:`train.eval.exploitability.node_inputs`, the hand's cards, strengths and first hand written in), and
with ``suits`` a fresh class-preserving relabelling of the suits per batch and a random order of the
unplayed dealt slots per row (so the student plays real deals, whose suits and dealt order are any, as
it plays the canonical ones: the game does not depend on them). The loss is the cross-entropy of the teacher's distribution against the
student's, card plays summed per class; the log reports its KL divergence. The budget is a count of
gradient steps; the result's exact exploitability is measured at the end (``truc exploitability``'s
path) and every ``eval_every`` steps.

**Exploitability descent** (``descent_rounds``): after the fit, each round measures the student exactly,
takes the gradient of its value against a best response to it (:mod:`agents.cfr.descent`: per
information set, its regrets against that response, drawn by own reach x their size) and makes
``descent_steps`` steps on the cross-entropy plus ``descent_weight`` x minus the student's first-order
gain along that direction: the teacher keeps the student near equilibrium, the descent moves it off what
the best response exploits. A round costs one exact measurement; checkpoints are at the rounds' ends. The
policy written is the measured network of lowest exploitability (``descent_keep_best``; the descent's
iterates oscillate, and each is measured exactly anyway), the last one's figure kept in the summary.
``descent_learning_rate_end`` shrinks the step round by round (a subgradient method on a maximum settles
only with shrinking steps), ``descent_momentum`` averages the rounds' directions and ``descent_temperature``
takes them against a smoothed best response (a softmax of its actions' values per set). ``init: net:PATH``
starts the student from a saved network; with ``steps: 0`` and ``teacher: null`` the run is exploitability
descent alone from it (no cross-entropy: the rows are drawn by the direction only).

``forget_first_hand`` keeps the weights of the input's first-hand block at zero (set at the start and after
every step), so that the network plays the hand after a redeal whatever its first hand was: the real game's
exact figure (``truc exploitability --real-redeal``) covers such a network.

:func:`run` is a sequence of named stages on a :class:`DistillRun` (the student, Adam, the generators, the
parts, the curve): :func:`start` (seeded afresh, then :func:`resume_from_checkpoint` or ``init``),
:func:`build_parts` (the teacher's tables and rows, :mod:`train.algos.distill_parts`), :func:`measure_before`,
then :func:`fit_step` and :func:`after_step` (curve row, :func:`measure`, :func:`save_checkpoint`) over the fit
and each :func:`descent_round`, and :func:`write_outputs`.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from agents import is_table, spec_file, spec_kind
from train import config
from train.algos.distill_parts import Part, check_inputs, class_matrix, deal_order, load_parts, relabel
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.io.atomic import atomic_write_text


@dataclass
class DistillConfig(config.RunConfig):
    dealer: int = 0
    """the dealer of the hand"""
    score: list = field(default_factory=lambda: [0, 0])
    """the score before the hand"""
    abstraction: str = "strength"
    """the public tree's card abstraction (the teacher's)"""
    teacher: str | None = "cfr:runs/cfr_le_truc_redeal/strategy.npz"
    """a ``table:`` strategy file written from these public trees; null: none, for exploitability descent
    alone from ``init`` (``steps: 0``; the first hands after a redeal drawn from the initial network's odds)"""
    hidden: list = field(default_factory=lambda: [64, 64])
    """the student's hidden layers (a PPO network)"""
    features: str = "observation+strength"
    """the student's input features (agents.network.network.FEATURES)"""
    steps: int = 20000
    """gradient steps: the budget"""
    batch: int = 4096
    """information sets per step"""
    learning_rate: float = 1.0e-3
    """Adam's step size at the start, annealed linearly to ``learning_rate_end``"""
    learning_rate_end: float = 1.0e-4
    """Adam's step size at the last step"""
    cont_share: float = 0.3
    """share of each batch drawn from the hand after an accepted redeal (rules with a redeal)"""
    uniform_share: float = 0.05
    """share of each part's draws made uniformly over its information sets rather than by stake"""
    suits: bool = True
    """relabel the suits at random per batch and deal the unplayed slots in a random order per row (the
    table's rows are at the canonical suits and dealt order; real play is at any)"""
    first_hands: int = 64
    """first hands after a redeal drawn from the teacher's odds (as many again from the deal)"""
    seed: int = 0
    """seeds the student's initial weights, the draws and the relabellings"""
    log_every: int = 500
    """steps between log lines and curve rows"""
    eval_every: int = 0
    """steps between exact exploitability measurements (0: at the end only)"""
    measure_start: bool = True
    """also measure the untrained student (the curve's first point)"""
    checkpoint_every: int = 2000
    """steps between checkpoints (``--resume`` continues from the last)"""
    descent_rounds: int = 0
    """rounds of exploitability descent after the fit (each: measure, then ``descent_steps`` steps)"""
    descent_steps: int = 10
    """gradient steps per round of exploitability descent (few: the best response is fixed in a round)"""
    descent_weight: float = 1.0
    """weight of the descent term beside the teacher's cross-entropy in those steps"""
    descent_learning_rate: float = 1.0e-4
    """Adam's step size during exploitability descent"""
    descent_learning_rate_end: float | None = None
    """Adam's step size in the last round of descent, annealed linearly from ``descent_learning_rate``
    round by round (None: constant): a subgradient method on a max needs shrinking steps to settle"""
    descent_momentum: float = 0.0
    """each round's direction is this share of the previous direction plus the rest of its own (the
    rounds' gradients, own reach x regret, averaged exponentially): against a best response that switches
    from round to round the average does not chase each one (0: the round's own direction only)"""
    descent_temperature: float = 0.0
    """the descent's direction is each seat's regrets against a smoothed best response to the other: at each
    of the responder's sets a softmax of its actions' values at this temperature (points; 0: the pure best
    response, whose choice between near-equal actions flips from round to round)"""
    descent_keep_best: bool = True
    """write the measured network of lowest exploitability (the fit's end or a round's start: each is
    measured exactly) as the policy, rather than the last"""
    forget_first_hand: bool = False
    """keep the first layer's weights on the first-hand inputs at zero: the network's play after a redeal
    then does not depend on its first hand, and its real-game exploitability is exact"""
    init: str | None = None
    """start the student from this network (``net:PATH``, the same Rules, layers and features) rather than
    afresh: with ``steps: 0`` the descent starts from it directly; a distill ``checkpoint.pt`` also hands
    on its Adam state (its network is its last iterate)"""
    cache_dir: str | None = None
    """where the public trees and node inputs are kept (default: truc exploitability's cache)"""
    out: str = "runs/distill_le_truc"
    """folder of the policy (policy.pt, a net: checkpoint), the curve (CSV, PNG) and the summary"""

    KIND = "distill"

    def validate(self) -> None:
        from agents.network.network import FEATURES
        from train.eval.exploitability import check_applies

        rules = self.rules()
        check_applies(rules, tuple(self.score))
        if rules.vira or rules.envido:
            raise TrucError(f"distill takes games whose table a network is written into directly (no vira, no "
                            f"envido); {self.variant} with these options has "
                            f"{'a vira' if rules.vira else 'envido'}")
        if self.features not in FEATURES:
            raise TrucError(f"features {self.features!r}: one of {', '.join(FEATURES)}")
        if self.teacher is None:
            if self.steps or self.init is None:
                raise TrucError("teacher: null is for exploitability descent alone (steps: 0, init: net:PATH, "
                                "descent_rounds > 0); a fit needs a teacher, table:PATH")
        elif not is_table(self.teacher):
            raise TrucError(f"teacher {self.teacher!r}: a strategy file, table:PATH")
        if len(self.score) != 2:
            raise TrucError(f"score must be two numbers (seat 0, seat 1), got {self.score}")
        if self.init is not None and spec_kind(self.init) != "net":
            raise TrucError(f"init {self.init!r}: a network to start from, net:PATH")
        if self.forget_first_hand and not rules.redeal:
            raise TrucError(f"forget_first_hand: {self.variant} with these options has no redeal, so no first hand")
        if self.steps == 0 and (self.init is None or not self.descent_rounds):
            raise TrucError("steps: 0 fits nothing; it is for exploitability descent (descent_rounds > 0) from a "
                            "network given as init: net:PATH")


DistillConfig.SCHEMA = {
    **config.RUN_SCHEMA, "dealer": config.Int(0, 1),
    "score": config.List(config.Int(0, 10**6), min_len=2), "abstraction": config.Choice("strength", "none"),
    "teacher": config.Setting("str", none=True), "hidden": config.List(config.Int(1, 4096), min_len=1),
    "features": config.STR, "steps": config.Int(0, 10**9), "batch": config.Int(1, 10**6),
    "learning_rate": config.Float(1e-8, 1.0), "learning_rate_end": config.Float(0.0, 1.0),
    "cont_share": config.Float(0.0, 1.0), "uniform_share": config.Float(0.0, 1.0), "suits": config.BOOL,
    "first_hands": config.Int(1, 10**5), "seed": config.SEED, "log_every": config.Int(1, 10**9),
    "eval_every": config.Int(0, 10**9), "measure_start": config.BOOL, "checkpoint_every": config.Int(1, 10**9),
    "cache_dir": config.Setting("str", none=True), "out": config.STR,
    "descent_rounds": config.Int(0, 10**6), "descent_steps": config.Int(1, 10**9),
    "descent_weight": config.Float(0.0, 1e6), "descent_learning_rate": config.Float(1e-8, 1.0),
    "descent_keep_best": config.BOOL,
    "descent_learning_rate_end": config.Setting("float", lo=1e-8, hi=1.0, none=True),
    "descent_momentum": config.Float(0.0, 0.999),
    "descent_temperature": config.Float(0.0, 100.0), "init": config.Setting("str", none=True),
    "forget_first_hand": config.BOOL,
}


# ---------------------------------------------------------------------------------- losses
def distill_loss(net, X, legal, T, play: int, class_matrix):
    """(cross-entropy, KL divergence) of the teacher's targets ``T`` against the network, card plays
    summed per class; ``T``'s first ``A`` columns are engine actions, the rest card classes."""
    import torch

    logp = torch.log_softmax(net.actor(X).masked_fill(~legal, float("-inf")), dim=-1)
    D = class_matrix.shape[0]
    log_class = torch.log((logp[:, play:play + D].exp() @ class_matrix).clamp_min(1e-30))
    logq = torch.cat([logp.masked_fill(~legal, 0.0), log_class], dim=1)
    has = T > 0  # 0 * log 0 is 0: targets of 0 take no log-probability (illegal actions sit at -inf)
    ce = -(T * torch.where(has, logq, torch.zeros_like(logq))).sum(1)
    ent = -(T * torch.where(has, torch.log(T.clamp_min(1e-30)), torch.zeros_like(T))).sum(1)
    return ce.mean(), (ce - ent).mean()


def descent_loss(net, X, legal, G, play: int, class_matrix):
    """Minus the student's first-order gain along exploitability descent's direction ``G`` (per row:
    each action's regret against a best response, over the set's total; card plays per class)."""
    import torch

    p = torch.softmax(net.actor(X).masked_fill(~legal, float("-inf")), dim=-1)
    D = class_matrix.shape[0]
    P = torch.cat([p.masked_fill(~legal, 0.0), p[:, play:play + D] @ class_matrix], dim=1)
    return -(G * P).sum(1).mean()


# ---------------------------------------------------------------------------------- the run's state
def _no_stats() -> dict:
    return {"ce": 0.0, "kl": 0.0, "gain": 0.0, "n": 0}


@dataclass
class DistillRun:
    """What the stages of a run hand on: the student, its optimiser, the generators, the parts it is fitted
    on and the curve so far; built by :func:`start`, moved by :func:`fit_step`, written by :func:`write_outputs`."""

    cfg: DistillConfig
    rules: object
    out: str
    net: object
    """the student, a PPO network (:class:`agents.network.network.PolicyNet`)"""
    opt: object
    """Adam on the student's actor"""
    rng: np.random.Generator
    """the draws: batch shares, rows, their first hands, suit relabellings and dealt orders (torch's global
    generator, seeded beside it, seeds the student's initial weights)"""
    cpu0: float
    """this process's clock at the start"""
    step: int = 0
    curve: list = field(default_factory=list)
    cpu_before: float = 0.0
    """CPU seconds of the runs this one resumes"""
    best: dict = field(default_factory=lambda: {"exploitability": float("inf"), "step": None, "model": None})
    """during descent: the measured network of lowest exploitability"""
    forget: slice | None = None
    """the first-hand inputs kept at zero (``forget_first_hand``)"""
    parts: list[Part] = field(default_factory=list)
    batches: Batches | None = None
    stats: dict = field(default_factory=_no_stats)
    """the losses summed since the last curve row"""
    bar: object = None

    @property
    def total(self) -> int:
        """The budget: the fit's steps and the descent rounds' steps."""
        return self.cfg.steps + self.cfg.descent_rounds * self.cfg.descent_steps

    @property
    def ck_path(self) -> str:
        return os.path.join(self.out, "checkpoint.pt")

    def cpu_seconds(self) -> float:
        return self.cpu_before + time.process_time() - self.cpu0

    def round_start(self, k: int) -> bool:
        """A round of exploitability descent begins after step ``k``."""
        cfg = self.cfg
        return cfg.steps <= k < self.total and (k - cfg.steps) % cfg.descent_steps == 0

    def memory_path(self, k: int) -> str:
        """Where the averaged direction of the round beginning after step ``k`` is kept (``descent_momentum``)."""
        return os.path.join(self.out, f"descent_direction_{k}.npz")


@dataclass
class Batches:
    """What turns the parts' rows into a batch for the student: the network's sizes, the card classes'
    matrix, the input blocks the suit relabelling moves and each part's share of a batch."""

    F: int
    """the network's input size"""
    A: int
    """engine actions"""
    play: int
    """the first card-play action"""
    M: object
    """``[deck index, class]`` one-hot (:func:`train.algos.distill_parts.class_matrix`)"""
    blocks: list
    """offsets of the input's blocks indexed by deck card (relabelled with the suits)"""
    o_slots: int
    """offset of the dealt slots (shuffled per row)"""
    shares: list
    """each part's share of a batch"""


# ---------------------------------------------------------------------------------- the stages
def start(cfg: DistillConfig, rules, resume: bool, log=print) -> DistillRun:
    """The student and its optimiser seeded afresh, then resumed from ``checkpoint.pt`` or started from
    ``cfg.init``; the out folder made."""
    import torch

    from agents.network.network import PolicyNet, feature_size

    out = config.output_folder(cfg.out)
    cpu0 = time.process_time()
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    net = PolicyNet(feature_size(rules, cfg.features), layout_of(rules).size, cfg.hidden)
    opt = torch.optim.Adam(net.actor.parameters(), lr=cfg.learning_rate)
    r = DistillRun(cfg, rules, out, net, opt, np.random.default_rng(cfg.seed), cpu0)
    if resume and os.path.exists(r.ck_path):
        resume_from_checkpoint(r, log)
    elif cfg.init is not None:
        model, optimizer = _init_model(cfg, rules)
        net.load_state_dict(model)
        if optimizer is not None:  # a distill checkpoint: Adam's moments go on (a fresh Adam's first steps are large)
            opt.load_state_dict(optimizer)
        log(f"student starts from {cfg.init}{' with its optimizer state' if optimizer is not None else ''}")
    return r


def resume_from_checkpoint(r: DistillRun, log=print) -> None:
    """The student, Adam, the generators, the step, the curve and the best network so far from
    ``checkpoint.pt``; refused when it was written by another config."""
    import torch

    from agents.network.checkpoint import read_checkpoint

    cfg = r.cfg
    ck = read_checkpoint(r.ck_path, r.rules)
    if ck.get("distill") != _identity(cfg):
        raise TrucError(f"{r.ck_path} was written by another distill config; resume it with the same settings "
                        "(or start afresh in another out folder)")
    r.net.load_state_dict(ck["model"])
    r.opt.load_state_dict(ck["optimizer"])
    r.rng.bit_generator.state = json.loads(ck["numpy_rng"])
    torch.set_rng_state(ck["torch_rng"])
    r.step, r.curve, r.cpu_before = int(ck["step"]), json.loads(ck["curve"]), float(ck["cpu_seconds"])
    if ck.get("best_model") is not None:
        r.best = {"exploitability": float(ck["best_exploitability"]), "step": int(ck["best_step"]),
                  "model": ck["best_model"]}
    if r.step > cfg.steps and ck.get("descent") != _descent_identity(cfg):
        raise TrucError(f"{r.ck_path} is in exploitability descent after a fit of {ck.get('fit_steps')} steps "
                        f"with other settings ({ck.get('descent')}); resume it with the same steps and "
                        "descent_* settings")
    log(f"resumed at step {r.step:,}")


def build_parts(r: DistillRun, log=print) -> None:
    """The parts fitted (the teacher's tables on the public trees) and what makes their rows a batch."""
    from agents.network.network import feature_size
    from train.eval.net_tables import card_blocks, first_hand_columns
    from truc_env.game.observe import encoder_of

    cfg, rules = r.cfg, r.rules
    r.forget = first_hand_columns(rules) if cfg.forget_first_hand else None
    if r.forget is not None:
        _forget(r.net, r.forget)
    r.parts = load_parts(cfg, rules, log)
    L = layout_of(rules)
    r.batches = Batches(F=feature_size(rules, cfg.features), A=L.size, play=L.play,
                        M=class_matrix(rules, r.parts[-1].tree.abstraction), blocks=card_blocks(rules, cfg.features),
                        o_slots=encoder_of(rules).piece("slots").offset,
                        shares=[cfg.cont_share, 1.0 - cfg.cont_share] if len(r.parts) == 2 else [1.0])


class _Directions:
    """The measurement's ``on_table``: exploitability descent's direction at the student's table of each part,
    handed to the part while its tree is in memory (the hand after a redeal comes first: each seat's
    best-response value there is the hand's at an accepted redeal)."""

    def __init__(self, parts: list, cfg: DistillConfig):
        self.by_name, self.cfg, self.cont_br = {p.name: p for p in parts}, cfg, (0.0, 0.0)

    def __call__(self, name, tree, solver, sigma, _step) -> None:
        from agents.cfr.descent import descent_targets

        d = descent_targets(solver, sigma, self.cont_br if name == "main" else (0.0, 0.0), self.cfg.descent_temperature)
        if name == "cont":
            self.cont_br = tuple(d["br"])
        self.by_name[name].set_descent(d["target"], d["weight"], self.cfg.descent_momentum)


def measure(r: DistillRun, descent: bool = False) -> dict:
    """The student's exact exploitability (``truc exploitability``'s path); with ``descent`` also exploitability
    descent's direction at its table, handed to each part."""
    from agents.network import PPOAgent
    from train.eval.exploitability import default_cache_dir, policy_exploitability

    cfg = r.cfg
    r.net.eval()
    agent = PPOAgent(r.net, r.rules, cfg.features, name="student")
    res = policy_exploitability(agent, r.rules, cfg.dealer, tuple(cfg.score), cfg.abstraction,
                                cache_dir=cfg.cache_dir or default_cache_dir(), log=lambda m: None,
                                on_table=_Directions(r.parts, cfg) if descent else None)
    r.net.train()
    return res


def _keep_if_best(r: DistillRun, res: dict) -> None:
    if res["exploitability"] < r.best["exploitability"]:
        r.best = {"exploitability": res["exploitability"], "step": r.step,
                  "model": {k: v.detach().clone() for k, v in r.net.state_dict().items()}}


def measure_before(r: DistillRun, log=print) -> None:
    """The measurements before the first step: the untrained student (the curve's first point), and at the
    start of descent its first direction (or, resumed between rounds with momentum, the averaged one kept)."""
    cfg, step = r.cfg, r.step
    if step == 0 and cfg.measure_start and not (cfg.steps == 0 and cfg.descent_rounds):
        res = measure(r)
        r.curve.append({"step": 0, "kl": "", "cross_entropy": "", "exploitability": res["exploitability"],
                        "cpu_seconds": round(r.cpu_seconds(), 1)})
        log(f"untrained student: exploitability {res['exploitability']:.4f}")
    if step >= cfg.steps and r.round_start(step) and step > 0 and cfg.descent_momentum > 0 \
            and os.path.exists(r.memory_path(step)):  # resumed at a round's start: its averaged direction
        with np.load(r.memory_path(step)) as z:
            for p in r.parts:
                p.use_direction(z[p.name])
    elif step > cfg.steps and r.round_start(step) and cfg.descent_momentum > 0:
        raise TrucError(f"{r.ck_path} is in exploitability descent with momentum, and its averaged direction "
                        f"({r.memory_path(step)}) is missing; start the descent afresh")
    elif step >= cfg.steps and r.round_start(step):  # descent starts here, or resumed at a round's start
        res = measure(r, descent=True)
        if step == 0:  # descent from an initial network: its measurement is the curve's first point
            r.curve.append({"step": 0, "kl": "", "cross_entropy": "", "descent_gain": "",
                            "exploitability": res["exploitability"], "cpu_seconds": round(r.cpu_seconds(), 1)})
            log(f"initial student: exploitability {res['exploitability']:.4f}")
        _keep_if_best(r, res)  # (a fit finished before descent was asked for)
    elif cfg.steps < step < r.total:
        raise TrucError(f"{r.ck_path} stopped inside a round of exploitability descent (step {step:,}); "
                        "its checkpoints are written at the rounds' ends")


def draw_batch(r: DistillRun, descent: bool = False):
    """One batch of rows from each part by its share, the teacher's targets (or with ``descent`` the descent's
    direction), suits relabelled and dealt orders shuffled: tensors (X, legal, targets)."""
    import torch

    from agents.cfr.policy_tree import suit_permutations

    cfg, b, rng = r.cfg, r.batches, r.rng
    counts = rng.multinomial(cfg.batch, b.shares)
    Xs, Ls, Ts = [], [], []
    for part, k in zip(r.parts, counts):
        if k == 0:
            continue
        X, legal, T = _descent_rows(r, part, int(k)) if descent else \
            part.rows(part.draw(rng, int(k)), rng, b.F, b.A, b.M.shape[1])
        Xs.append(X)
        Ls.append(legal)
        Ts.append(T)
    X, legal, T = np.concatenate(Xs), np.concatenate(Ls), np.concatenate(Ts)
    if cfg.suits:  # a fresh relabelling within every class per batch, and a random dealt order per row
        perm = suit_permutations(r.parts[-1].tree.abstraction, r.rules, 2, int(rng.integers(2**31)))[0]
        X, legal = relabel(X, legal, perm, b.blocks, b.play)  # (k=1 is the identity)
        deal_order(X, b.o_slots, r.rules.hand_size, rng)
    return torch.from_numpy(X), torch.from_numpy(legal), torch.from_numpy(T)


def _descent_rows(r: DistillRun, part, k: int):
    """``k`` rows of ``part`` drawn by the descent's direction, which is their target."""
    b = r.batches
    if part.descent_cdf is None:  # no regret anywhere in this part: nothing to move
        return part.rows(part.draw(r.rng, k), r.rng, b.F, b.A, b.M.shape[1], np.zeros(part.solver.n_slots))
    return part.rows(part.draw(r.rng, k, part.descent_cdf), r.rng, b.F, b.A, b.M.shape[1], part.descent)


def step_size(cfg: DistillConfig, step: int) -> float:
    """Adam's step size at ``step``: annealed linearly over the fit, then per round of descent."""
    if step >= cfg.steps:
        return _descent_lr(cfg, (step - cfg.steps) // cfg.descent_steps)
    frac = step / max(1, cfg.steps - 1)
    return cfg.learning_rate + frac * (cfg.learning_rate_end - cfg.learning_rate)


def fit_step(r: DistillRun) -> None:
    """One gradient step: on the teacher's cross-entropy, plus in descent ``descent_weight`` x minus the
    student's gain along the round's direction."""
    import torch

    cfg, b = r.cfg, r.batches
    descending = r.step >= cfg.steps
    for g in r.opt.param_groups:
        g["lr"] = step_size(cfg, r.step)
    ce = kl = torch.zeros(())
    if cfg.teacher is not None:
        X, legal, T = draw_batch(r)
        ce, kl = distill_loss(r.net, X, legal, T, b.play, b.M)
    loss = ce
    if descending:
        Xd, legal_d, G = draw_batch(r, descent=True)
        gain = descent_loss(r.net, Xd, legal_d, G, b.play, b.M)
        loss = ce + cfg.descent_weight * gain
        r.stats["gain"] += -float(gain.detach())
    r.opt.zero_grad()
    loss.backward()
    r.opt.step()
    if r.forget is not None:
        _forget(r.net, r.forget)
    r.step += 1
    r.bar.update(1)
    r.stats["ce"] += float(ce.detach())
    r.stats["kl"] += float(kl.detach())
    r.stats["n"] += 1


def after_step(r: DistillRun, log=print) -> None:
    """The step's bookkeeping: a curve row every ``log_every`` steps, an exact measurement every
    ``eval_every`` steps and at each round's start (its direction), a checkpoint every ``checkpoint_every``
    steps of the fit and at the rounds' ends; all three at the fit's end and the last step."""
    cfg, step = r.cfg, r.step
    last, fit_end = step == r.total, step == cfg.steps
    row = None
    if step % cfg.log_every == 0 or last or fit_end:
        row = _stats_row(r)
    if (cfg.eval_every and step % cfg.eval_every == 0) or last or r.round_start(step) or fit_end:
        row = _measured_row(r, row, log)
    if row is not None:
        r.curve.append(row)
        if row["kl"] != "":
            r.bar.write(f"step {step:,}: KL {row['kl']:.4f}, cross-entropy {row['cross_entropy']:.4f}")
    if step % cfg.checkpoint_every == 0 and not cfg.steps < step < r.total or last or r.round_start(step) \
            or fit_end:
        save_checkpoint(r)


def _stats_row(r: DistillRun) -> dict:
    """The curve's row of the losses averaged since the last one (which they restart); the step just made
    was one of descent after the fit's end."""
    s, fitted = r.stats, r.cfg.teacher is not None
    row = {"step": r.step, "kl": s["kl"] / s["n"] if fitted else "", "cross_entropy": s["ce"] / s["n"] if fitted else "",
           "descent_gain": s["gain"] / s["n"] if r.step > r.cfg.steps else "", "exploitability": "",
           "cpu_seconds": round(r.cpu_seconds(), 1)}
    r.stats = _no_stats()
    return row


def _measured_row(r: DistillRun, row: dict | None, log=print) -> dict:
    """``row`` (or a row of its own) with the student's exact exploitability; at a round's start the
    measurement also takes the round's direction, and in descent the best network is kept."""
    res = measure(r, descent=r.round_start(r.step))
    row = row or {"step": r.step, "kl": "", "cross_entropy": "", "descent_gain": "", "cpu_seconds": 0.0}
    row["exploitability"] = res["exploitability"]
    row["cpu_seconds"] = round(r.cpu_seconds(), 1)
    if r.cfg.descent_rounds and r.step >= r.cfg.steps:
        _keep_if_best(r, res)
    log(f"step {r.step:,}: exploitability {res['exploitability']:.4f} (BR {res['br0']:+.4f} / {res['br1']:+.4f})")
    return row


def descent_round(r: DistillRun, log=print) -> None:
    """One round of exploitability descent: ``descent_steps`` steps along the direction measured at its start
    (the measurement after its last step gives the next round's)."""
    for _ in range(r.cfg.descent_steps):
        fit_step(r)
        after_step(r, log)


def _policy_dict(r: DistillRun) -> dict:
    """What ``net:PATH`` reads (a PPO network's file) and the distill identity that resumes it."""
    from train.algos.ppo import PPOConfig, policy_dict

    cfg = r.cfg
    ppo_cfg = PPOConfig(variant=cfg.variant, options=dict(cfg.options), hidden=list(cfg.hidden),
                        features=cfg.features, seed=cfg.seed)
    d = policy_dict(ppo_cfg, r.rules, r.net)
    d["distill"] = _identity(cfg)
    return d


def save_checkpoint(r: DistillRun) -> None:
    """``checkpoint.pt``: the student, Adam, the generators, the step, the curve, the best network so far;
    with momentum in descent the averaged direction beside it (large), the earlier rounds' removed."""
    import torch

    from agents.network.checkpoint import save_atomic
    from truc_env.io.atomic import atomic_open

    cfg, step = r.cfg, r.step
    if cfg.descent_momentum > 0 and step >= cfg.steps and r.parts[0].direction is not None:
        with atomic_open(r.memory_path(step), "wb") as f:  # state the next round needs
            np.savez(f, **{p.name: p.direction for p in r.parts})
    ck = _policy_dict(r)
    ck.update({"optimizer": r.opt.state_dict(), "numpy_rng": json.dumps(r.rng.bit_generator.state),
               "torch_rng": torch.get_rng_state(), "step": step, "curve": json.dumps(r.curve),
               "cpu_seconds": r.cpu_seconds()})
    if step > cfg.steps:
        ck.update({"descent": _descent_identity(cfg), "fit_steps": cfg.steps})
    if r.best["model"] is not None:
        ck.update({"best_model": r.best["model"], "best_exploitability": r.best["exploitability"],
                   "best_step": r.best["step"]})
    save_atomic(ck, r.ck_path)
    kept = os.path.basename(r.memory_path(step))
    for name in os.listdir(r.out):  # the directions of earlier rounds are no longer needed
        if name.startswith("descent_direction_") and name != kept:
            os.remove(os.path.join(r.out, name))


def write_outputs(r: DistillRun, log=print) -> dict:
    """``policy.pt`` (the measured network of lowest exploitability with ``descent_keep_best``, else the last),
    the curve (CSV, PNG) and ``summary.json``; returns the summary."""
    from agents.network.checkpoint import save_atomic

    cfg, curve = r.cfg, r.curve
    final = next((row for row in reversed(curve) if row["exploitability"] != ""), {})
    kept = {"exploitability": final.get("exploitability"), "step": r.step}
    best = r.best
    if cfg.descent_keep_best and best["model"] is not None and best["exploitability"] < final["exploitability"]:
        r.net.load_state_dict(best["model"])
        kept = {"exploitability": best["exploitability"], "step": best["step"]}
    policy = os.path.join(r.out, "policy.pt")
    save_atomic(_policy_dict(r), policy)
    _write_curve(r.out, curve)
    summary = {"config": dataclasses.asdict(cfg), "steps": r.step, "exploitability": kept["exploitability"],
               "policy_step": kept["step"], "last_exploitability": final.get("exploitability"),
               "kl": next((row["kl"] for row in reversed(curve) if row["kl"] != ""), None),
               "untrained_exploitability": curve[0]["exploitability"] if curve and curve[0]["step"] == 0 else None,
               "cpu_seconds": r.cpu_seconds(), "policy": policy}
    atomic_write_text(os.path.join(r.out, "summary.json"), json.dumps(summary, indent=2) + "\n")
    log(f"policy: {summary['policy']} (net:{summary['policy']}); exploitability {summary['exploitability']}")
    return summary


def run(cfg: DistillConfig, resume: bool = False, log=print) -> dict:
    """Fit the student, measure it, write ``{out}/policy.pt``, the curve and the summary."""
    from tqdm import tqdm

    cfg.validate()
    rules = cfg.rules()
    check_inputs(cfg)  # a refused run leaves no empty out folder behind
    r = start(cfg, rules, resume, log)
    build_parts(r, log)
    measure_before(r, log)
    r.bar = tqdm(total=r.total, initial=r.step, desc="distill", unit="step", mininterval=5)
    while r.step < cfg.steps:  # the fit
        fit_step(r)
        after_step(r, log)
    while r.step < r.total:  # exploitability descent (resumed only at a round's start)
        descent_round(r, log)
    r.bar.close()
    return write_outputs(r, log)


def _identity(cfg: DistillConfig) -> str:
    """What a checkpoint must share with the config that resumes it (all but the logging and the budget)."""
    d = dataclasses.asdict(cfg)
    for k in ("steps", "log_every", "eval_every", "measure_start", "checkpoint_every", "cache_dir", "out"):
        d.pop(k)
    for k in [k for k in d if k.startswith("descent_")]:  # they act after the fit: checked there
        d.pop(k)
    if not d["forget_first_hand"]:  # (older checkpoints lack it)
        d.pop("forget_first_hand")
    return json.dumps(d, sort_keys=True)


def _descent_identity(cfg: DistillConfig) -> str:
    """What a checkpoint written during exploitability descent must share with the config resuming it."""
    d = {"fit_steps": cfg.steps, "descent_steps": cfg.descent_steps, "descent_weight": cfg.descent_weight,
         "descent_learning_rate": cfg.descent_learning_rate}
    if cfg.descent_learning_rate_end is not None or cfg.descent_momentum:  # (older checkpoints lack them)
        d.update(descent_learning_rate_end=cfg.descent_learning_rate_end, descent_momentum=cfg.descent_momentum,
                 descent_rounds=cfg.descent_rounds)
    if cfg.descent_temperature:
        d.update(descent_temperature=cfg.descent_temperature)
    return json.dumps(d, sort_keys=True)


def _forget(net, cols: slice) -> None:
    """Zero the first layer's weights on ``cols``, actor and critic: those inputs no longer count."""
    import torch

    with torch.no_grad():
        for mlp in (net.actor, net.critic):
            mlp[0].weight[:, cols] = 0.0


def _descent_lr(cfg: DistillConfig, k: int) -> float:
    """Adam's step size in round ``k`` (from 0) of exploitability descent."""
    if cfg.descent_learning_rate_end is None:
        return cfg.descent_learning_rate
    frac = min(1.0, k / max(1, cfg.descent_rounds - 1))
    return cfg.descent_learning_rate + frac * (cfg.descent_learning_rate_end - cfg.descent_learning_rate)


def _init_model(cfg: DistillConfig, rules) -> tuple[dict, dict | None]:
    """The parameters of ``cfg.init`` and, when it is a distill checkpoint (``checkpoint.pt``), its Adam
    state; refused unless its network is the student's (Rules, layers, features)."""
    from agents.network.checkpoint import read_checkpoint

    ck = read_checkpoint(spec_file(cfg.init), rules)
    net = ck.get("net") or {}
    if list(net.get("hidden", [])) != list(cfg.hidden) or net.get("features") != cfg.features:
        raise TrucError(f"init {cfg.init!r} is a network with layers {net.get('hidden')} and features "
                        f"{net.get('features')!r}; the student has {list(cfg.hidden)} and {cfg.features!r}")
    return ck["model"], ck.get("optimizer") if isinstance(ck.get("optimizer"), dict) else None


def _write_curve(out: str, curve: list) -> None:
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["step", "kl", "cross_entropy", "descent_gain", "exploitability", "cpu_seconds"])
    w.writeheader()
    w.writerows(curve)
    atomic_write_text(os.path.join(out, "curve.csv"), buf.getvalue())
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
    kl = [(r["step"], r["kl"]) for r in curve if r["kl"] != ""]
    ex = [(r["step"], r["exploitability"]) for r in curve if r["exploitability"] != ""]
    if kl:
        ax[0].plot(*zip(*kl))
    ax[0].set(xlabel="gradient steps", ylabel="KL(teacher || student)", yscale="log", title="fit")
    if ex:
        ax[1].plot(*zip(*ex), marker="o")
    ax[1].set(xlabel="gradient steps", ylabel="points per hand", yscale="log", title="exact exploitability")
    fig.tight_layout()
    from truc_env.io.atomic import atomic_open

    with atomic_open(os.path.join(out, "curve.png"), "wb") as f:
        fig.savefig(f, format="png", dpi=110)
    plt.close(fig)
