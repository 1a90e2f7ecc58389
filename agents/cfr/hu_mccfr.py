"""Sampling MCCFR for the heads-up games, keyed as the exact solver's tables: no public tree in training.

External sampling (Lanctot et al. 2009), as the partnership solver (:mod:`agents.cfr.mccfr`) runs it:
an iteration is one traversal per seat on its own sampled deal, the traverser enumerating its actions,
chance and the opponent sampled, the opponent's current strategy added to the average where it acts;
iteration ``t`` weighted by ``t`` (linear) unless ``weighting: uniform``. What differs is the key. An
information set is what the exact solver indexes its tables by (:mod:`agents.cfr.keys`): the seat's
role (dealer or first player), its dealt hand as strength classes, and the public actions of the hand
with each card play written as its class; after an accepted redeal, the actions since and the new hand
only (the solver's ``cont`` part forgets the first hand the same way). Nothing here builds or reads a
public tree: the keys come from the engine's history, one sampled game at a time.

So the average strategy can be written, after training, into the exact solver's strategy-file format
on the public trees (:func:`table_on_tree`; :func:`train.algos.hu_mccfr.export_strategy` writes and measures
it): ``table:PATH`` plays it and ``truc exploitability`` measures it exactly (for the redeal, in the real
game). The trees are built for that export only.

Rules: two players, no envido or flor (their announcements are labels this key does not write) and no
vira (heads-up Paulista keys per vira); ``le_truc`` (its redeal too), ``put`` and heads-up
``truco_mineiro``.
"""

from __future__ import annotations

import time
from array import array

import numpy as np

import truc_env
from agents.cfr.abstraction import make_abstraction
from agents.cfr.labels import NATURE, PLAY
from agents.cfr.mccfr import (
    atomic_savez,
    json_bytes,
    keys_bytes,
    keys_of,
    read_checkpoint,
    read_header,
    read_npz,
    sample_index,
)
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import CHANCE, TERMINAL, State, sample_chance
from truc_env.game.rules import make_rules

NAME = "exact-solver-keys-v1"
CHECKPOINT_FORMAT = "truc-hu-mccfr-checkpoint"
FORMAT_VERSION = 1


def unsupported_reason(rules) -> str:
    """Why heads-up MCCFR cannot key these Rules ('' if it can)."""
    if rules.players != 2:
        return "heads-up MCCFR is for two players (the 2 vs 2 games: the partnership MCCFR)"
    if rules.envido or rules.flor:
        return "envido and flor announcements are not written in its keys"
    if rules.vira:
        return "a vira changes the card classes per deal (heads-up Paulista: the exact solver, one vira at a time)"
    return ""


def hand_text(classes) -> str:
    """A hand's classes (ascending) as a key writes them."""
    return ",".join(map(str, classes))


def key_text(role: int, redealt: bool, hand: str, labels: str) -> str:
    """An information-set key: the role (0 dealer, 1 first player), ``R`` after an accepted redeal, the hand and
    the public labels; the one writer of keys for training (:meth:`HeadsUpMCCFR.key`) and export
    (:func:`table_on_tree`)."""
    return f"{role}{'R' if redealt else ''}|{hand}|{labels}"


class HeadsUpMCCFR:
    """Regret and average-strategy rows per information set, and external-sampling iterations."""

    BACKEND = "loop"  # games on engine.State objects (agents.cfr.hu_mccfr_numba: on the numba kernel)
    CHECKPOINT_FORMAT = CHECKPOINT_FORMAT

    def __init__(self, rules, seed: int = 0, weighting: str = "linear", dealer: int = 0):
        why = unsupported_reason(rules)
        if why:
            raise TrucError(f"{rules.variant}: {why}")
        if weighting not in ("linear", "uniform"):
            raise TrucError(f"MCCFR weighting {weighting!r} is unknown; allowed: linear, uniform")
        self.rules = rules
        self.ab = make_abstraction(rules, "strength")
        self.weighting = weighting
        self.dealer = dealer
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        # key -> (labels, row): row[:n] the cumulative regrets, row[n:] the average-strategy sums
        self.table: dict[str, tuple[tuple, array]] = {}
        self._labels: dict[tuple, tuple] = {}  # one shared tuple per distinct label set
        self.iteration = 0
        self.nodes = 0
        self.cpu_seconds = 0.0
        self.L = L = layout_of(rules)
        self._card = {a: L.deck[a - L.play] for a in range(L.play, L.play + len(L.deck))}
        self._cls = self.ab.card_class
        self._text = [str(self.label(a)) for a in range(L.size)]  # each action's label, as the key writes it
        self._by_legal: dict[tuple, tuple] = {}  # legal actions -> their abstract actions (a cache)
        self._hand_text: dict[tuple, str] = {}  # dealt cards -> the key's hand (a cache)

    # ------------------------------------------------------------------ keys
    def label(self, action: int) -> int:
        """The public label of a decision: a card play as its class, any other action as itself."""
        card = self._card.get(action)
        return action if card is None else PLAY + self._cls[card]

    def key(self, state: State, seat: int) -> str:
        """``seat``'s information-set key in ``state`` (the exact solver's key, written as text)."""
        text = self._text
        labels = [text[a] for who, a, _ in state.history if who != CHANCE]
        redealt = bool(state.old_hands)
        if redealt:  # the hand after the accepted redeal: its actions only
            labels = labels[self._after_redeal(labels):]
        dealt = tuple(state.dealt_hands[seat])
        hand = self._hand_text.get(dealt)
        if hand is None:
            hand = self._hand_text[dealt] = hand_text(sorted(self._cls[c] for c in dealt))
        return key_text(0 if seat == state.dealer else 1, redealt, hand, " ".join(labels))

    def _after_redeal(self, labels: list[str]) -> int:
        redeal, accept = str(self.L.REDEAL), str(self.L.ACCEPT)
        for i in range(len(labels) - 1):
            if labels[i] == redeal and labels[i + 1] == accept:
                return i + 2
        raise AssertionError("a redeal was accepted, but the history does not say so")

    def _actions(self, state: State) -> tuple[tuple, list[int]]:
        """The decision's abstract actions (labels, ascending) and one engine action for each."""
        legal = state.legal_tuple()
        hit = self._by_legal.get(legal)
        if hit is None:
            by_label: dict[int, int] = {}
            for a in legal:
                by_label.setdefault(self.label(a), a)
            labels = tuple(sorted(by_label))
            hit = self._by_legal[legal] = (self._labels.setdefault(labels, labels), [by_label[x] for x in labels])
        return hit

    def _entry(self, key: str, labels: tuple) -> array:
        e = self.table.get(key)
        if e is None:
            e = self.table[key] = (labels, array("d", bytes(16 * len(labels))))
        elif e[0] != labels:
            raise TrucError(f"information set {key!r} met with actions {labels} and {e[0]}: the key misses something")
        return e[1]

    def _decision(self, state: State):
        """Skip chance and forced moves: (seat, key, labels, engine actions), or TERMINAL."""
        while True:
            cp = state.current_player()
            if cp == TERMINAL:
                return cp, None, None, None
            if cp == CHANCE:
                state.apply_action(sample_chance(state, self.rng))
                continue
            self.nodes += 1
            labels, acts = self._actions(state)
            if len(acts) == 1:
                state.apply_action(acts[0])
                continue
            return cp, self.key(state, cp), labels, acts

    @staticmethod
    def _match(row: array, n: int) -> list[float]:
        pos = [x if x > 0.0 else 0.0 for x in row[:n]]
        total = sum(pos)
        return [p / total for p in pos] if total > 0.0 else [1.0 / n] * n

    def _es(self, state: State, p: int, w: float) -> float:
        cp, key, labels, acts = self._decision(state)
        if cp == TERMINAL:
            return state.returns()[p]
        n = len(acts)
        row = self._entry(key, labels)
        sigma = self._match(row, n)
        if cp == p:
            values = []
            for i, a in enumerate(acts):
                child = state if i == n - 1 else state.clone()
                child.apply_action(a)
                values.append(self._es(child, p, w))
            v = sum(s * x for s, x in zip(sigma, values))
            for i, x in enumerate(values):
                row[i] += w * (x - v)
            return v
        for i, s in enumerate(sigma):
            row[n + i] += w * s
        state.apply_action(acts[sample_index(self.rng, sigma)])
        return self._es(state, p, w)

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (each: one traversal per seat, each on its own sampled deal)."""
        t0 = time.process_time()
        for _ in range(n):
            self.iteration += 1
            w = float(self.iteration) if self.weighting == "linear" else 1.0
            for p in (0, 1):
                self._es(State(self.rules, episode="hand", dealer=self.dealer), p, w)
        self.cpu_seconds += time.process_time() - t0

    def average(self, key: str) -> dict[int, float] | None:
        """The normalised average strategy at ``key`` as {label: probability} (None: never reached)."""
        e = self.table.get(key)
        if e is None:
            return None
        labels, row = e
        n = len(labels)
        s = row[n:]
        total = sum(s)
        return {lab: x / total for lab, x in zip(labels, s)} if total > 0 else None

    @property
    def infosets(self) -> int:
        return len(self.table)

    def sigma_on_tree(self, tree, tree_solver, redealt: bool = False) -> tuple[np.ndarray, int]:
        """The average strategy on ``tree``'s slots (:func:`table_on_tree`)."""
        return table_on_tree(self, tree, tree_solver, redealt)

    # ------------------------------------------------------------------ checkpoints
    def header(self) -> dict:
        r = self.rules
        return {"variant": r.variant, "options": dict(r.options), "rules_key": r.key, "abstraction": NAME,
                "algorithm": "es_mccfr", "weighting": self.weighting, "dealer": self.dealer, "score": [0, 0],
                "seed": self.seed, "iterations": self.iteration, "nodes": self.nodes,
                "cpu_seconds": self.cpu_seconds, "infosets": len(self.table)}

    def save_checkpoint(self, path: str) -> None:
        keys = list(self.table)
        sizes = np.array([len(self.table[k][0]) for k in keys], dtype=np.int64)
        labels = np.fromiter((x for k in keys for x in self.table[k][0]), dtype=np.int64, count=int(sizes.sum()))
        rows = np.fromiter((x for k in keys for x in self.table[k][1]), dtype=np.float64,
                           count=int(2 * sizes.sum()))
        header = {**self.header(), "rng": self.rng.bit_generator.state, "format": CHECKPOINT_FORMAT,
                  "format_version": FORMAT_VERSION, "truc_env_version": truc_env.__version__}
        atomic_savez(path, compressed=False, header=json_bytes(header), keys=keys_bytes(keys), sizes=sizes,
                      labels=labels, rows=rows)

    @classmethod
    def from_checkpoint(cls, path: str) -> HeadsUpMCCFR:
        """A solver restored from a checkpoint file (its Rules and settings from the header)."""
        h = read_header(read_npz(path, "MCCFR checkpoint"), path, cls.CHECKPOINT_FORMAT)
        solver = cls(make_rules(h["variant"], **h["options"]), seed=h["seed"], weighting=h["weighting"],
                     dealer=h["dealer"])
        solver.load_checkpoint(path)
        return solver

    def load_checkpoint(self, path: str) -> None:
        """Restore tables, counters and generator state from a checkpoint of the same Rules and settings."""
        data, h = read_checkpoint(path, CHECKPOINT_FORMAT, self.rules,
                                  {"weighting": self.weighting, "dealer": self.dealer, "abstraction": NAME})
        try:
            keys, sizes, labels, rows = keys_of(data["keys"]), data["sizes"], data["labels"], data["rows"]
        except KeyError as e:
            raise TrucError(f"{path}: corrupt checkpoint (missing {e})") from None
        if len(sizes) != len(keys) or len(labels) != sizes.sum() or len(rows) != 2 * len(labels):
            raise TrucError(f"{path}: corrupt checkpoint ({len(keys)} keys, {len(sizes)} sizes, "
                            f"{len(labels)} labels, {len(rows)} values)")
        table = {}
        a = 0
        for k, n in zip(keys, sizes.tolist()):
            labs = tuple(labels[a:a + n].tolist())
            table[k] = (self._labels.setdefault(labs, labs), array("d", rows[2 * a:2 * a + 2 * n].tobytes()))
            a += n
        self.table = table
        self.iteration = int(h["iterations"])
        self.nodes = int(h["nodes"])
        self.cpu_seconds = float(h["cpu_seconds"])
        self.rng.bit_generator.state = h["rng"]


# ---------------------------------------------------------------------- export

def table_on_tree(solver: HeadsUpMCCFR, tree, tree_solver, redealt: bool = False) -> tuple[np.ndarray, int]:
    """The average strategy as one probability per slot of ``tree`` (``redealt``: the tree is the hand after
    an accepted redeal); an information set training never reached is uniform. Also returns how many
    information sets had a row."""
    from agents.cfr.policy_tree import parents_of

    parent, edge = parents_of(tree)
    prefix = [""] * tree.n_nodes  # each node's public labels, written once
    sigma = np.zeros(tree_solver.n_slots)
    found = 0
    hands = tree.abstraction.hands
    for node in range(tree.n_nodes):  # parents come before their children
        if node > 0:
            up = int(parent[node])
            lab = str(int(tree.label[edge[node]]))
            prefix[node] = f"{prefix[up]} {lab}" if prefix[up] else lab
        q = int(tree.actor[node])
        if q == NATURE:
            continue
        role = 0 if q == tree.dealer else 1
        start = int(tree.act_start[node])
        for j, h in enumerate(tree.hand_set(tree.hs[node, q])):
            i0 = int(tree_solver.iset_off[node]) + j
            a, b = int(tree_solver.iset_start[i0]), int(tree_solver.iset_start[i0 + 1])
            labs = tree.label[start + tree_solver.slot_k[a:b].astype(np.int64)]
            avg = solver.average(key_text(role, redealt, hand_text(hands[int(h)]), prefix[node]))
            if avg is None:
                sigma[a:b] = 1.0 / (b - a)
                continue
            found += 1
            p = np.array([avg.get(int(x), 0.0) for x in labs])
            sigma[a:b] = p / p.sum() if p.sum() > 0 else 1.0 / (b - a)
    return sigma, found
