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
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from agents import is_table, spec_file, spec_kind, spec_path
from agents.cfr.labels import PLAY, STUCK
from agents.cfr.policy_tree import CardClasses, first_hand_bits, hand_row, root_state
from train import config
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import make_rules
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


# ---------------------------------------------------------------------------------- rows
@njit(cache=True)
def _rows(isets, node_of, iset_off, actor, hs, hs_off, hs_hands, act_start, label, indptr, indices, data, used, own,
          hand_counts, card_index, pct, hand_size, o_hand, o_strength, o_first, first_bits, first_pick, play,
          iset_start, slot_k, target, X, legal, T):
    """Inputs, legal actions and teacher targets of a batch of information sets.

    ``T`` has one column per engine action (non-card actions) followed by one per card class."""
    n_act = legal.shape[1]
    vals = np.zeros(hand_size + 8, dtype=np.float32)
    cards = np.zeros(hand_size, dtype=np.int64)
    strength = np.zeros(hand_size, dtype=np.float32)
    D = first_bits.shape[2]
    for r in range(isets.shape[0]):
        i = isets[r]
        n = node_of[i]
        q = actor[n]
        h = hs_hands[hs_off[hs[n, q]] + i - iset_off[n]]
        X[r, :] = 0.0
        legal[r, :] = False
        T[r, :] = 0.0
        for k in range(indptr[n], indptr[n + 1]):
            X[r, indices[k]] = data[k]
        hand_row(h, used[n], own[n], hand_counts, card_index, pct, hand_size, vals, cards, strength)
        plays = False
        for e in range(act_start[n], act_start[n + 1]):
            if label[e] < STUCK:
                legal[r, label[e]] = True
            elif label[e] >= PLAY:
                plays = True
        for u in range(hand_size):
            d = cards[u]
            if d >= 0:
                X[r, o_hand + d] = 1.0
                legal[r, play + d] = plays  # cards in hand are legal where the node is a card play
        if o_strength >= 0:
            for t in range(hand_size):
                X[r, o_strength + t] = strength[t]
        if o_first >= 0:
            for d in range(D):
                X[r, o_first + d] = first_bits[first_pick[r], q, d]
        for s in range(iset_start[i], iset_start[i + 1]):
            lab = label[act_start[n] + slot_k[s]]
            if lab >= PLAY:
                T[r, n_act + lab - PLAY] += target[s]
            elif lab != STUCK:  # STUCK: a hand the plays rule out, no engine action
                T[r, lab] += target[s]


class Part:
    """One tree's rows: the teacher's table, the sampling distribution and the node inputs."""

    def __init__(self, name, rules, tree, solver, target, inputs, features, first_bits, uniform_share):
        from agents.network.network import percentiles
        from truc_env.game.observe import encoder_of

        self.name, self.tree, self.solver, self.target = name, tree, solver, target
        ab = tree.abstraction
        enc = encoder_of(rules)
        self.inputs = inputs
        self.cards = CardClasses.of(ab, rules)
        after = first_bits is not None
        pct_of = percentiles(tuple(root_state(rules, tree.dealer, tree.score, after, tree.vira).strength))
        self.pct = np.array([pct_of.get(c, 0.0) for c in enc.L.deck], dtype=np.float32)
        self.hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
        self.o_hand = enc.piece("hand").offset
        self.L_play = enc.L.play
        self.o_first = enc.offset_of("first_hand") if after else -1
        self.o_strength = enc.size if features == "observation+strength" else -1
        self.first_bits = first_bits if after else np.zeros((1, 2, enc.D), dtype=np.float32)
        n_isets = solver.n_infosets
        self.node_of = np.repeat(np.arange(tree.n_nodes, dtype=np.int64), np.diff(solver.iset_off))
        self.n_isets = n_isets
        self.cdf = None  # (no teacher: rows are drawn by the descent's direction only)
        if target is not None:  # stake: own reach under the teacher x the hand's chance
            solver.forward(0, target)
            solver.forward(1, target)
            q = tree.actor[self.node_of].astype(np.int64)
            j = np.arange(n_isets, dtype=np.int64) - solver.iset_off[self.node_of]
            hand = tree.hs_hands[tree.hs_off[tree.hs[self.node_of, q]] + j]
            prior = ab.deal_weights().sum(axis=1)
            stake = solver.reach[solver.roff[self.node_of, q] + j] * prior[hand]
            del q, j, hand
            p = (1.0 - uniform_share) * stake / stake.sum() + uniform_share / n_isets
            self.cdf = np.cumsum(p)
            self.cdf /= self.cdf[-1]
        self.descent, self.descent_cdf, self.direction = None, None, None

    def draw(self, rng, k: int, cdf=None) -> np.ndarray:
        cdf = self.cdf if cdf is None else cdf
        if cdf is None:  # no teacher and no direction: uniformly
            return rng.integers(self.n_isets, size=k)
        return np.minimum(np.searchsorted(cdf, rng.random(k), side="right"), self.n_isets - 1)

    def set_descent(self, target: np.ndarray, weight: np.ndarray, momentum: float = 0.0) -> None:
        """Exploitability descent's direction at the student's table (:func:`agents.cfr.descent.descent_targets`):
        its rows are drawn by their weight. With ``momentum`` the direction is the exponential average of
        the rounds' gradients (per slot: own reach x regret, ``target`` x its set's ``weight``)."""
        if momentum > 0.0:
            grad = (target * np.repeat(weight, np.diff(self.solver.iset_start))).astype(np.float32)
            if self.direction is not None:
                grad = (momentum * self.direction + (1.0 - momentum) * grad).astype(np.float32)
            self.use_direction(grad)
            return
        self.descent = target.astype(np.float64)
        total = weight.sum()
        self.descent_cdf = np.cumsum(weight / total) if total > 0 else None

    def use_direction(self, grad: np.ndarray) -> None:
        """Take ``grad`` (per slot, own reach x regret) as the direction: each set's rows normalised to
        absolute sum 1, the sets drawn by that sum."""
        starts = self.solver.iset_start
        self.direction = grad
        size = np.add.reduceat(np.abs(grad).astype(np.float64), starts[:-1]) if len(grad) else np.zeros(0)
        size[np.diff(starts) == 0] = 0.0
        scale = np.repeat(np.where(size > 0, 1.0 / np.maximum(size, 1e-300), 0.0), np.diff(starts))
        self.descent = grad * scale
        total = size.sum()
        self.descent_cdf = np.cumsum(size / total) if total > 0 else None

    def rows(self, isets, rng, F, A, C, target=None):
        t, s = self.tree, self.solver
        target = self.target if target is None else target
        B = len(isets)
        X = np.zeros((B, F), dtype=np.float32)
        legal = np.zeros((B, A), dtype=np.bool_)
        T = np.zeros((B, A + C), dtype=np.float32)
        pick = rng.integers(len(self.first_bits), size=B)
        _rows(isets, self.node_of, s.iset_off, t.actor, t.hs, t.hs_off, t.hs_hands, t.act_start, t.label,
              self.inputs["indptr"], self.inputs["indices"], self.inputs["data"], self.inputs["used"],
              self.inputs["own"], self.hand_counts, self.cards.index, self.pct, t.rules.hand_size, self.o_hand,
              self.o_strength, self.o_first, self.first_bits, pick, self.L_play, s.iset_start, s.slot_k,
              target, X, legal, T)
        return X, legal, T


def _first_bits(rules, ab, teacher, dealer, score, k, seed) -> np.ndarray:
    """First hands for the rows after a redeal, as input bits per seat: ``k`` drawn from the teacher's
    odds of reaching the redeal with them and ``k`` from the deal (highest cards of each class)."""
    from train.eval.exploitability import first_hand_samples, probability_function

    cards = CardClasses.of(ab, rules)
    samples, _ = first_hand_samples(rules, ab, probability_function(teacher), dealer, score, k, seed)
    rng = np.random.default_rng(seed + 1)
    prior = ab.deal_weights()
    flat = rng.choice(prior.size, size=k, p=(prior / prior.sum()).ravel())
    samples += [(ab.hands[int(x) // ab.n_hands], ab.hands[int(x) % ab.n_hands]) for x in flat]
    return np.stack([first_hand_bits(ab, cards, first) for first in samples])


def _check_inputs(cfg: DistillConfig) -> None:
    """TrucError when the teacher or the initial network is not on disk (before any folder is made)."""
    if cfg.teacher is not None and spec_path(cfg.teacher) is None:
        raise TrucError(f"teacher {cfg.teacher!r}: no such file {cfg.teacher.partition(':')[2]!r} (solve it "
                        "first, e.g. truc train cfr --config configs/cfr/le_truc_redeal.yaml)")
    if cfg.init is not None and spec_path(cfg.init) is None:
        raise TrucError(f"init {cfg.init!r}: no such file {cfg.init.partition(':')[2]!r} (a network written by "
                        "truc train ppo or truc train distill)")


def load_parts(cfg: DistillConfig, rules, log=print) -> list[Part]:
    """The parts to fit (the hand, and the hand after a redeal), their trees cached like truc exploitability's."""
    from agents import make_agent
    from agents.cfr.solver import PublicTreeSolver
    from train.eval.exploitability import cached_tree, default_cache_dir, node_inputs, stored_table

    cache = cfg.cache_dir or default_cache_dir()
    _check_inputs(cfg)
    teacher = make_agent(cfg.teacher or cfg.init, rules)  # without one, the initial network's redeal odds
    parts = []
    names = (["cont"] if rules.redeal else []) + ["main"]
    for name in names:
        part_rules = make_rules(rules.variant, **{**rules.options, "redeal": False}) if name == "cont" else rules
        t0 = time.process_time()
        tree = cached_tree(part_rules, cfg.dealer, tuple(cfg.score), cfg.abstraction, cache)
        solver = PublicTreeSolver(tree, dtype="float32")
        target = stored_table(teacher, name, tree, solver) if cfg.teacher else None
        if target is None and cfg.teacher:
            raise TrucError(f"teacher {cfg.teacher!r} has no table written from the public tree of the "
                            f"{'hand after a redeal' if name == 'cont' else 'hand'} of these Rules "
                            f"({rules.variant}, dealer {cfg.dealer}, score {cfg.score}, {cfg.abstraction}); "
                            "a strategy file of a CFR solve of the same config is")
        inputs = node_inputs(tree, rules, cfg.features, name == "cont", cache, progress=True)
        bits = _first_bits(rules, tree.abstraction, teacher, cfg.dealer, cfg.score, cfg.first_hands, cfg.seed) \
            if name == "cont" else None
        part = Part(name, rules, tree, solver, None if target is None else target.astype(np.float64), inputs,
                    cfg.features, bits, cfg.uniform_share)
        parts.append(part)
        log(f"[{name}] {tree.n_nodes:,} public nodes, {part.n_isets:,} information sets ready "
            f"({time.process_time() - t0:.0f} CPU s)")
    return parts


# ---------------------------------------------------------------------------------- training
def _class_matrix(rules, ab):
    """``[deck index, class]`` one-hot: a card play's probability summed into its class."""
    import torch

    cards = CardClasses.of(ab, rules)
    M = torch.zeros(len(cards.card_class), ab.n_classes)
    for d, c in enumerate(cards.card_class):
        if c >= 0:
            M[d, c] = 1.0
    return M


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


def _deal_order(X, o_slots: int, hand_size: int, rng) -> None:
    """Each row's unplayed dealt slots at random (as many as it has): the table's canonical order puts
    the played cards first, real play any order, and the teacher plays every order alike."""
    block = X[:, o_slots:o_slots + hand_size]
    left = block.sum(axis=1, keepdims=True)
    rank = np.argsort(np.argsort(rng.random(block.shape), axis=1), axis=1)
    block[:] = (rank < left).astype(X.dtype)


def _relabel(X, legal, perm, blocks, play):
    """The rows as the suit relabelling ``perm`` (deck index -> deck index) would encode them."""
    D = len(perm)
    idx = np.arange(X.shape[1])
    for o in blocks:
        idx[o + perm] = o + np.arange(D)
    Xp = np.empty_like(X)
    Xp[:, idx] = X
    lp = legal.copy()
    lp[:, play + perm] = legal[:, play:play + D]
    return Xp, lp


def run(cfg: DistillConfig, resume: bool = False, log=print) -> dict:
    """Fit the student, measure it, write ``{out}/policy.pt``, the curve and the summary."""
    import torch

    from agents.cfr.policy_tree import suit_permutations
    from agents.network.checkpoint import read_checkpoint, save_atomic
    from agents.network.network import PolicyNet, feature_size
    from train.algos.ppo import PPOConfig, policy_dict
    from train.eval.exploitability import card_blocks, first_hand_columns
    from truc_env.game.observe import encoder_of

    cfg.validate()
    rules = cfg.rules()
    _check_inputs(cfg)  # a refused run leaves no empty out folder behind
    out = config.output_folder(cfg.out)
    ck_path = os.path.join(out, "checkpoint.pt")
    cpu0 = time.process_time()
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    L = layout_of(rules)
    F, A = feature_size(rules, cfg.features), L.size
    net = PolicyNet(F, A, cfg.hidden)
    opt = torch.optim.Adam(net.actor.parameters(), lr=cfg.learning_rate)
    rng = np.random.default_rng(cfg.seed)
    step, curve, cpu_before = 0, [], 0.0
    best = {"exploitability": float("inf"), "step": None, "model": None}  # during descent: the lowest measured
    if resume and os.path.exists(ck_path):
        ck = read_checkpoint(ck_path, rules)
        if ck.get("distill") != _identity(cfg):
            raise TrucError(f"{ck_path} was written by another distill config; resume it with the same settings "
                            "(or start afresh in another out folder)")
        net.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        rng.bit_generator.state = json.loads(ck["numpy_rng"])
        torch.set_rng_state(ck["torch_rng"])
        step, curve, cpu_before = int(ck["step"]), json.loads(ck["curve"]), float(ck["cpu_seconds"])
        if ck.get("best_model") is not None:
            best = {"exploitability": float(ck["best_exploitability"]), "step": int(ck["best_step"]),
                    "model": ck["best_model"]}
        if step > cfg.steps and ck.get("descent") != _descent_identity(cfg):
            raise TrucError(f"{ck_path} is in exploitability descent after a fit of {ck.get('fit_steps')} steps "
                            f"with other settings ({ck.get('descent')}); resume it with the same steps and "
                            "descent_* settings")
        log(f"resumed at step {step:,}")
    elif cfg.init is not None:
        model, optimizer = _init_model(cfg, rules)
        net.load_state_dict(model)
        if optimizer is not None:  # a distill checkpoint: Adam's moments go on (a fresh Adam's first steps are large)
            opt.load_state_dict(optimizer)
        log(f"student starts from {cfg.init}{' with its optimizer state' if optimizer is not None else ''}")
    forget = first_hand_columns(rules) if cfg.forget_first_hand else None
    if forget is not None:
        _forget(net, forget)
    parts = load_parts(cfg, rules, log)
    ab = parts[-1].tree.abstraction
    M = _class_matrix(rules, ab)
    blocks = card_blocks(rules, cfg.features)
    o_slots = encoder_of(rules).piece("slots").offset
    shares = [cfg.cont_share, 1.0 - cfg.cont_share] if len(parts) == 2 else [1.0]
    ppo_cfg = PPOConfig(variant=cfg.variant, options=dict(cfg.options), hidden=list(cfg.hidden),
                        features=cfg.features, seed=cfg.seed)
    from tqdm import tqdm

    def policy():
        d = policy_dict(ppo_cfg, rules, net)
        d["distill"] = _identity(cfg)
        return d

    def measure(descent: bool = False):
        """The student's exact exploitability; with ``descent`` also exploitability descent's direction
        at its table, handed to each part (computed while each tree is in memory)."""
        from agents.cfr.descent import descent_targets
        from agents.network import PPOAgent
        from train.eval.exploitability import default_cache_dir, policy_exploitability

        by_name = {p.name: p for p in parts}
        cont_br = [(0.0, 0.0)]

        def on_table(name, tree, solver, sigma, _step):
            d = descent_targets(solver, sigma, cont_br[0] if name == "main" else (0.0, 0.0), cfg.descent_temperature)
            if name == "cont":
                cont_br[0] = tuple(d["br"])
            by_name[name].set_descent(d["target"], d["weight"], cfg.descent_momentum)

        net.eval()
        agent = PPOAgent(net, rules, cfg.features, name="student")
        res = policy_exploitability(agent, rules, cfg.dealer, tuple(cfg.score), cfg.abstraction,
                                    cache_dir=cfg.cache_dir or default_cache_dir(), log=lambda m: None,
                                    on_table=on_table if descent else None)
        net.train()
        return res

    def memory_path(k: int) -> str:
        return os.path.join(out, f"descent_direction_{k}.npz")

    def save_checkpoint():
        if cfg.descent_momentum > 0 and step >= cfg.steps and parts[0].direction is not None:
            # the averaged direction is state the next round needs; kept beside the checkpoint (large)
            from truc_env.io.atomic import atomic_open

            with atomic_open(memory_path(step), "wb") as f:
                np.savez(f, **{p.name: p.direction for p in parts})
        ck = policy()
        ck.update({"optimizer": opt.state_dict(), "numpy_rng": json.dumps(rng.bit_generator.state),
                   "torch_rng": torch.get_rng_state(), "step": step, "curve": json.dumps(curve),
                   "cpu_seconds": cpu_before + time.process_time() - cpu0})
        if step > cfg.steps:
            ck.update({"descent": _descent_identity(cfg), "fit_steps": cfg.steps})
        if best["model"] is not None:
            ck.update({"best_model": best["model"], "best_exploitability": best["exploitability"],
                       "best_step": best["step"]})
        save_atomic(ck, ck_path)
        for name in os.listdir(out):  # the directions of earlier rounds are no longer needed
            if name.startswith("descent_direction_") and name != os.path.basename(memory_path(step)):
                os.remove(os.path.join(out, name))

    if step == 0 and cfg.measure_start and not (cfg.steps == 0 and cfg.descent_rounds):
        res = measure()
        curve.append({"step": 0, "kl": "", "cross_entropy": "", "exploitability": res["exploitability"],
                      "cpu_seconds": round(time.process_time() - cpu0, 1)})
        log(f"untrained student: exploitability {res['exploitability']:.4f}")
    total = cfg.steps + cfg.descent_rounds * cfg.descent_steps

    def round_start(k: int) -> bool:  # a round of exploitability descent begins after step k
        return cfg.steps <= k < total and (k - cfg.steps) % cfg.descent_steps == 0

    if step >= cfg.steps and round_start(step) and step > 0 and cfg.descent_momentum > 0 \
            and os.path.exists(memory_path(step)):  # resumed at a round's start: its averaged direction
        with np.load(memory_path(step)) as z:
            for p in parts:
                p.use_direction(z[p.name])
    elif step > cfg.steps and round_start(step) and cfg.descent_momentum > 0:
        raise TrucError(f"{ck_path} is in exploitability descent with momentum, and its averaged direction "
                        f"({memory_path(step)}) is missing; start the descent afresh")
    elif step >= cfg.steps and round_start(step):  # descent starts here, or resumed at a round's start
        res = measure(descent=True)
        if step == 0:  # descent from an initial network: its measurement is the curve's first point
            curve.append({"step": 0, "kl": "", "cross_entropy": "", "descent_gain": "",
                          "exploitability": res["exploitability"], "cpu_seconds": round(time.process_time() - cpu0, 1)})
            log(f"initial student: exploitability {res['exploitability']:.4f}")
        if res["exploitability"] < best["exploitability"]:  # a fit finished before descent was asked for
            best = {"exploitability": res["exploitability"], "step": step,
                    "model": {k: v.detach().clone() for k, v in net.state_dict().items()}}
    elif cfg.steps < step < total:
        raise TrucError(f"{ck_path} stopped inside a round of exploitability descent (step {step:,}); "
                        "its checkpoints are written at the rounds' ends")

    def batch(rows_of):
        """One batch: rows from each part, suits relabelled and dealt orders shuffled."""
        counts = rng.multinomial(cfg.batch, shares)
        Xs, Ls, Ts = [], [], []
        for part, k in zip(parts, counts):
            if k == 0:
                continue
            X, legal, T = rows_of(part, int(k))
            Xs.append(X), Ls.append(legal), Ts.append(T)
        X, legal, T = np.concatenate(Xs), np.concatenate(Ls), np.concatenate(Ts)
        if cfg.suits:  # a fresh relabelling within every class per batch, and a random dealt order per row
            perm = suit_permutations(ab, rules, 2, int(rng.integers(2**31)))[0]  # (k=1 is the identity)
            X, legal = _relabel(X, legal, perm, blocks, L.play)
            _deal_order(X, o_slots, rules.hand_size, rng)
        return torch.from_numpy(X), torch.from_numpy(legal), torch.from_numpy(T)

    def teacher_rows(part, k):
        return part.rows(part.draw(rng, k), rng, F, A, M.shape[1])

    def descent_rows(part, k):
        if part.descent_cdf is None:  # no regret anywhere in this part: nothing to move
            X, legal, T = part.rows(part.draw(rng, k), rng, F, A, M.shape[1], np.zeros(part.solver.n_slots))
            return X, legal, T
        return part.rows(part.draw(rng, k, part.descent_cdf), rng, F, A, M.shape[1], part.descent)

    stats = {"ce": 0.0, "kl": 0.0, "gain": 0.0, "n": 0}
    bar = tqdm(total=total, initial=step, desc="distill", unit="step", mininterval=5)
    while step < total:
        descending = step >= cfg.steps
        frac = step / max(1, cfg.steps - 1)
        for g in opt.param_groups:
            g["lr"] = _descent_lr(cfg, (step - cfg.steps) // cfg.descent_steps) if descending else \
                cfg.learning_rate + frac * (cfg.learning_rate_end - cfg.learning_rate)
        ce = kl = torch.zeros(())
        if cfg.teacher is not None:
            X, legal, T = batch(teacher_rows)
            ce, kl = distill_loss(net, X, legal, T, L.play, M)
        loss = ce
        if descending:
            Xd, legal_d, G = batch(descent_rows)
            gain = descent_loss(net, Xd, legal_d, G, L.play, M)
            loss = ce + cfg.descent_weight * gain
            stats["gain"] += -float(gain.detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if forget is not None:
            _forget(net, forget)
        step += 1
        bar.update(1)
        stats["ce"] += float(ce.detach())
        stats["kl"] += float(kl.detach())
        stats["n"] += 1
        last = step == total
        row = None
        if step % cfg.log_every == 0 or last or step == cfg.steps:
            fitted = cfg.teacher is not None
            row = {"step": step, "kl": stats["kl"] / stats["n"] if fitted else "",
                   "cross_entropy": stats["ce"] / stats["n"] if fitted else "",
                   "descent_gain": stats["gain"] / stats["n"] if descending else "", "exploitability": "",
                   "cpu_seconds": round(cpu_before + time.process_time() - cpu0, 1)}
            stats = {"ce": 0.0, "kl": 0.0, "gain": 0.0, "n": 0}
        if (cfg.eval_every and step % cfg.eval_every == 0) or last or round_start(step) or step == cfg.steps:
            res = measure(descent=round_start(step))
            row = row or {"step": step, "kl": "", "cross_entropy": "", "descent_gain": "", "cpu_seconds": 0.0}
            row["exploitability"] = res["exploitability"]
            row["cpu_seconds"] = round(cpu_before + time.process_time() - cpu0, 1)
            if cfg.descent_rounds and step >= cfg.steps and res["exploitability"] < best["exploitability"]:
                best = {"exploitability": res["exploitability"], "step": step,
                        "model": {k: v.detach().clone() for k, v in net.state_dict().items()}}
            log(f"step {step:,}: exploitability {res['exploitability']:.4f} (BR {res['br0']:+.4f} / {res['br1']:+.4f})")
        if row is not None:
            curve.append(row)
            if row["kl"] != "":
                bar.write(f"step {step:,}: KL {row['kl']:.4f}, cross-entropy {row['cross_entropy']:.4f}")
        if step % cfg.checkpoint_every == 0 and not cfg.steps < step < total or last or round_start(step) \
                or step == cfg.steps:
            save_checkpoint()
    bar.close()
    final = next((r for r in reversed(curve) if r["exploitability"] != ""), {})
    kept = {"exploitability": final.get("exploitability"), "step": step}
    if cfg.descent_keep_best and best["model"] is not None and best["exploitability"] < final["exploitability"]:
        net.load_state_dict(best["model"])
        kept = {"exploitability": best["exploitability"], "step": best["step"]}
    save_atomic(policy(), os.path.join(out, "policy.pt"))
    _write_curve(out, curve)
    summary = {"config": dataclasses.asdict(cfg), "steps": step, "exploitability": kept["exploitability"],
               "policy_step": kept["step"], "last_exploitability": final.get("exploitability"),
               "kl": next((r["kl"] for r in reversed(curve) if r["kl"] != ""), None),
               "untrained_exploitability": curve[0]["exploitability"] if curve and curve[0]["step"] == 0 else None,
               "cpu_seconds": cpu_before + time.process_time() - cpu0, "policy": os.path.join(out, "policy.pt")}
    atomic_write_text(os.path.join(out, "summary.json"), json.dumps(summary, indent=2) + "\n")
    log(f"policy: {summary['policy']} (net:{summary['policy']}); exploitability {summary['exploitability']}")
    return summary


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
