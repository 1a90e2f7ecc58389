"""Exact heads-up solving on the public tree: CFR+, discounted and linear CFR, MMD, best response.

    tree = build_tree(make_rules("le_truc", redeal=False))
    solver = PublicTreeSolver(tree, algorithm="cfr+")
    solver.iterate(100)
    solver.exploitability()   # points per hand: (BR_0 + BR_1) / 2 against the average strategy

Exploitability is OpenSpiel's: the mean over the two seats of what a best response to the average
strategy wins, in hand points (zero-sum), for one hand from the tree's score with its dealer.
"""

from __future__ import annotations

import time

import numpy as np

from agents.cfr import kernels as K
from agents.cfr.tree import PublicTree
from truc_env.errors import TrucError

ALGORITHMS = ("cfr+", "dcfr", "lcfr", "cfr", "mmd")


class PublicTreeSolver:
    """Tabular CFR over (public node, own hand) information sets, with exact best response."""

    def __init__(self, tree: PublicTree, algorithm: str = "cfr+", alpha: float = 1.5, beta: float = 0.0,
                 gamma: float = 2.0, redeal_value: float = 0.0, dtype: str = "float64", mmd_step: float = 1.0,
                 mmd_magnet: float = 0.1, mmd_magnet_end: float = 0.001, mmd_iterations: int = 1000,
                 measure_only: bool = False):
        if algorithm not in ALGORITHMS:
            raise TrucError(f"unknown algorithm {algorithm!r} for the exact solver; known: {', '.join(ALGORITHMS)}")
        self.tree = tree
        self.algorithm = algorithm
        if algorithm == "lcfr":
            alpha, beta, gamma = 1.0, 1.0, 1.0
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.redeal_value = float(redeal_value)
        # MMD: the step size, and the magnet's weight annealed geometrically over mmd_iterations
        self.mmd_step, self.mmd_magnet, self.mmd_magnet_end = float(mmd_step), float(mmd_magnet), float(mmd_magnet_end)
        self.mmd_iterations = max(1, int(mmd_iterations))
        t = tree
        # seat 1's transitions are read at announcements only, and a tree has trans1 exactly when it has
        # announcements (tree.py): an empty array stands for None (a full one of -1 took 3.1 GB on 40-card Mineiro)
        self.trans1 = t.trans1 if t.trans1 is not None else np.empty(0, dtype=np.int64)
        (self.iset_off, self.iset_start, self.slot_k, self.roff, n_reach,
         self.voff) = K.layout(t.actor, t.hs, t.act_start, t.kind, t.child, t.trans, t.hs_off, t.tr_off, t.tr_pos)
        # measure_only: a solver that only measures given tables (best response, a policy's value) holds
        # no regrets, sums or strategy of its own: three slot-sized arrays fewer, what lets the 40-card
        # heads-up decks' subgames be measured within 24 GiB (the kernels read them only when updating)
        self.measure_only = bool(measure_only)
        m = 0 if measure_only else int(self.iset_start[-1])
        self.dtype = np.dtype(dtype)
        self.R = np.zeros(m, dtype=self.dtype)
        self.S = np.zeros(m, dtype=self.dtype)
        self.sigma = np.zeros(m, dtype=self.dtype)
        self.reach = np.zeros(int(n_reach))
        self.values = np.zeros(int(max(self.voff[-1])))
        self.iteration = 0
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        if not measure_only:
            K.initial_strategy(t.actor, self.iset_off, self.iset_start, self.R, self.sigma)

    def _check_solving(self) -> None:
        if self.measure_only:
            raise TrucError("this solver only measures given tables (measure_only): it holds no regrets or "
                            "strategy to iterate, average or save")

    @property
    def n_infosets(self) -> int:
        return len(self.iset_start) - 1

    @property
    def n_slots(self) -> int:
        return len(self.slot_k)

    # ------------------------------------------------------------------ passes
    def forward(self, seat: int, sigma: np.ndarray) -> None:
        """Store ``seat``'s reach probabilities under strategy ``sigma`` (one probability per slot)."""
        t = self.tree
        K.forward(seat, t.actor, t.hs, t.act_start, t.kind, t.child, t.trans, self.trans1, t.hs_off, t.tr_off, t.tr_pos,
                  self.iset_off, self.iset_start, self.slot_k, self.roff, sigma, self.reach)

    def backward(self, seat: int, sigma: np.ndarray, update: bool = False, best_response: bool = False,
                 weights=(1.0, 1.0, 1.0, 1.0)) -> float:
        """``seat``'s value (seat 0's points for seat 0, seat 1's for seat 1) against the other seat's
        stored reach: following ``sigma``, or best-responding with ``best_response``; ``update`` adds the
        regrets and the average strategy (``weights``: the iteration's weights) as CFR does. An accepted
        redeal is worth :attr:`redeal_value` (seat 0's points)."""
        if update:
            self._check_solving()
        t = self.tree
        mode = {"cfr+": K.MODE_PLUS, "dcfr": K.MODE_DISCOUNT, "lcfr": K.MODE_DISCOUNT, "cfr": K.MODE_VANILLA,
                "mmd": K.MODE_MMD}[self.algorithm]
        avg_weight, pos, neg, avg_disc = weights
        return K.backward(seat, t.actor, t.hs, t.act_start, t.kind, t.child, t.util, t.trans, self.trans1, t.hs_off,
                          t.hs_hands, t.tr_off, t.tr_pos, t.W, self.iset_off, self.iset_start, self.slot_k, self.roff, self.voff,
                          sigma, self.reach, self.values, self.redeal_value, update, self.R, self.S, mode,
                          avg_weight, pos, neg, avg_disc, best_response)

    def iterate(self, n: int = 1, callback=None) -> None:
        """Run ``n`` iterations (each: seat 0 updates, then seat 1 against seat 0's new strategy)."""
        self._check_solving()
        for _ in range(n):
            start, cpu = time.perf_counter(), time.process_time()
            self.iteration += 1
            it = self.iteration
            weights = (float(it), it ** self.alpha / (it ** self.alpha + 1), it ** self.beta / (it ** self.beta + 1),
                       (it / (it + 1)) ** self.gamma)
            if self.algorithm == "mmd":
                weights = (1.0, self.mmd_step, self.magnet_at(it), 0.0)
            if it == 1:
                self.forward(0, self.sigma)
                self.forward(1, self.sigma)
            # seat 0 updates against seat 1's reach; then seat 1 against seat 0's new strategy
            self.backward(0, self.sigma, update=True, weights=weights)
            self.forward(0, self.sigma)
            self.backward(1, self.sigma, update=True, weights=weights)
            self.forward(1, self.sigma)
            self.seconds += time.perf_counter() - start
            self.cpu_seconds += time.process_time() - cpu
            if callback is not None:
                callback(self)

    def magnet_at(self, it: int) -> float:
        """MMD's magnet weight at iteration ``it``: from ``mmd_magnet`` to ``mmd_magnet_end``, geometrically."""
        frac = min(1.0, (it - 1) / max(1, self.mmd_iterations - 1))
        return self.mmd_magnet * (self.mmd_magnet_end / self.mmd_magnet) ** frac if self.mmd_magnet > 0 else 0.0

    # ------------------------------------------------------------------ results
    def average_strategy(self) -> np.ndarray:
        self._check_solving()
        out = np.zeros_like(self.S)
        K.normalize(self.iset_start, self.S, out)
        return out

    def evaluate(self, sigma: np.ndarray | None = None) -> dict:
        """Best-response values and exploitability of a strategy (default: the average strategy)."""
        if sigma is None:
            sigma = self.average_strategy()
        self.forward(0, sigma)
        self.forward(1, sigma)
        value0 = self.backward(0, sigma)
        br0 = self.backward(0, sigma, best_response=True)
        br1 = self.backward(1, sigma, best_response=True)
        if not self.measure_only:
            self.forward(0, self.sigma)  # leave the current strategy's reach for the next iteration
            self.forward(1, self.sigma)
        nash_conv = br0 + br1
        return {"value": value0, "br0": br0, "br1": br1, "nash_conv": nash_conv, "exploitability": nash_conv / 2}

    def policy_at(self, node: int = 0, sigma: np.ndarray | None = None):
        """The strategy at a public node: (hand names, action names, probabilities [hand, action]).

        Rows are the acting seat's hands that can be there; an action a hand cannot take has 0.
        """
        from agents.cfr.tree import label_text

        t = self.tree
        sigma = self.average_strategy() if sigma is None else sigma
        a0, a1 = t.act_start[node], t.act_start[node + 1]
        names = [label_text(t, int(x)) for x in t.label[a0:a1]]
        hands = t.hand_set(t.hs[node, t.actor[node]])
        probs = np.zeros((len(hands), a1 - a0))
        for h in range(len(hands)):
            i = self.iset_off[node] + h
            a, b = self.iset_start[i], self.iset_start[i + 1]
            probs[h, self.slot_k[a:b]] = sigma[a:b]
        ab = t.abstraction
        hand_names = [" ".join(ab.names[c] for c in sorted(ab.hands[x], reverse=True)) for x in hands]
        return hand_names, names, probs

    def exploitability(self, sigma: np.ndarray | None = None) -> float:
        return self.evaluate(sigma)["exploitability"]

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        self._check_solving()
        return {"R": self.R, "S": self.S, "iteration": np.int64(self.iteration), "seconds": np.float64(self.seconds),
                "cpu_seconds": np.float64(self.cpu_seconds)}

    def load_state_dict(self, d: dict) -> None:
        self._check_solving()
        if d["R"].shape != self.R.shape:
            raise TrucError(f"checkpoint does not match this game tree ({d['R'].shape[0]} regrets, "
                            f"tree has {self.R.shape[0]})")
        self.R[:] = d["R"]
        self.S[:] = d["S"]
        self.iteration = int(d["iteration"])
        self.seconds = float(d["seconds"])
        self.cpu_seconds = float(d.get("cpu_seconds", 0.0))
        K.initial_strategy(self.tree.actor, self.iset_off, self.iset_start, self.R, self.sigma)
        if self.algorithm == "mmd" and self.iteration > 0:  # MMD's current strategy: its last iterate, kept in S
            self.sigma[:] = self.S
        self.forward(0, self.sigma)
        self.forward(1, self.sigma)
