"""The rows a distilled student is fitted on (:mod:`train.algos.distill`): for each part of the hand (the hand,
and the hand after an accepted redeal) its public tree, the teacher's table on it, the distribution its
information sets are drawn by, and the batch kernel that writes a drawn set as the network's input, its legal
actions and the teacher's target; with the suit relabelling and dealt-order shuffle applied to a batch."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from numba import njit

from agents import spec_path
from agents.cfr.labels import PLAY, STUCK
from agents.cfr.policy_tree import CardClasses, first_hand_bits, hand_row, root_state
from truc_env.errors import TrucError


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


def check_inputs(cfg) -> None:
    """TrucError when the teacher or the initial network is not on disk (before any folder is made)."""
    if cfg.teacher is not None and spec_path(cfg.teacher) is None:
        raise TrucError(f"teacher {cfg.teacher!r}: no such file {cfg.teacher.partition(':')[2]!r} (solve it "
                        "first, e.g. truc train cfr --config configs/cfr/le_truc_redeal.yaml)")
    if cfg.init is not None and spec_path(cfg.init) is None:
        raise TrucError(f"init {cfg.init!r}: no such file {cfg.init.partition(':')[2]!r} (a network written by "
                        "truc train ppo or truc train distill)")


def load_parts(cfg, rules, log=print) -> list[Part]:
    """The parts to fit (the hand, and the hand after a redeal), their trees cached like truc exploitability's."""
    from agents import make_agent
    from agents.cfr.solver import PublicTreeSolver
    from train.eval.exploitability import cached_tree, default_cache_dir, node_inputs, stored_table

    cache = cfg.cache_dir or default_cache_dir()
    check_inputs(cfg)
    teacher = make_agent(cfg.teacher or cfg.init, rules)  # without one, the initial network's redeal odds
    parts = []
    names = (["cont"] if rules.redeal else []) + ["main"]
    for name in names:
        part_rules = dataclasses.replace(cfg, options={**cfg.options, "redeal": False}).rules() \
            if name == "cont" else rules
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



def class_matrix(rules, ab):
    """``[deck index, class]`` one-hot: a card play's probability summed into its class."""
    import torch

    cards = CardClasses.of(ab, rules)
    M = torch.zeros(len(cards.card_class), ab.n_classes)
    for d, c in enumerate(cards.card_class):
        if c >= 0:
            M[d, c] = 1.0
    return M


def deal_order(X, o_slots: int, hand_size: int, rng) -> None:
    """Each row's unplayed dealt slots at random (as many as it has): the table's canonical order puts
    the played cards first, real play any order, and the teacher plays every order alike."""
    block = X[:, o_slots:o_slots + hand_size]
    left = block.sum(axis=1, keepdims=True)
    rank = np.argsort(np.argsort(rng.random(block.shape), axis=1), axis=1)
    block[:] = (rank < left).astype(X.dtype)


def relabel(X, legal, perm, blocks, play):
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
