"""A fast unfolding of the memo of public situations into the public tree's flat arrays (numba).

:func:`agents.cfr.tree.unfold` builds the tree in Python lists: fine for Le Truc (1.2 M public
nodes), not for the 40-card heads-up Paulista (25 M nodes, 238 M edges: past 11.5 GB of lists).
:func:`unfold_fast` returns the very same arrays (same dtypes, order, values, hand-set and
transition numbering), with memory close to the arrays' own:

- the memo becomes flat arrays (the edges of each situation in CSR form);
- a seat's hand set is keyed by the counts of what it has played (``P``, at most ``hand_size``
  cards): the small universe of such ``P`` and the transitions ``(P, class) -> P'`` are tabulated in
  Python, and the unfolding numbers hand sets and transitions in the order ``unfold`` first meets
  them, so the numbering is identical;
- the number of public nodes below a situation does not depend on the hand sets (a DP over the
  memo counts them); a ``STUCK`` leaf does, so a first breadth-first pass lays out the nodes (and
  which have one), a second fills the edges into preallocated arrays.

Envido and flor announcements (labels ``REVEAL <= label < STUCK``, actor ``NATURE``) and flor's
hand-narrowing edges are not handled here: :func:`unfold_fast` returns None on announcements, and
``build_tree`` sends flor games straight to :func:`agents.cfr.tree.unfold`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement

import numpy as np
from numba import njit

from agents.cfr.abstraction import CardAbstraction
from agents.cfr.labels import CHILD, REVEAL, STUCK

NO_HAND_SET = -2  # a transition leaves the universe of played counts (the tables are wrong)


@njit(cache=True)
def _subtree_sizes(sit_start, e_kind, e_child, root):
    """Public nodes and memo edges (without STUCK leaves) below every situation, root included."""
    n_sit = sit_start.shape[0] - 1
    nodes = np.zeros(n_sit, dtype=np.int64)
    edges = np.zeros(n_sit, dtype=np.int64)
    state = np.zeros(n_sit, dtype=np.int8)  # 0 new, 1 on the path from the root, 2 done
    cursor = sit_start[:-1].copy()  # the next edge to look at, per situation on the path
    stack = np.empty(n_sit, dtype=np.int64)
    top = 0
    stack[0] = root
    state[root] = 1
    while top >= 0:
        s = stack[top]
        descended = False
        while cursor[s] < sit_start[s + 1]:
            e = cursor[s]
            cursor[s] += 1
            if e_kind[e] == CHILD:
                c = e_child[e]
                if state[c] == 0:
                    top += 1
                    stack[top] = c
                    state[c] = 1
                    descended = True
                    break
                if state[c] == 1:
                    return nodes, edges, False  # a cycle: no tree
        if descended:
            continue
        nn = 1
        ne = sit_start[s + 1] - sit_start[s]
        for e in range(sit_start[s], sit_start[s + 1]):
            if e_kind[e] == CHILD:
                nn += nodes[e_child[e]]
                ne += edges[e_child[e]]
        nodes[s] = nn
        edges[s] = ne
        state[s] = 2
        top -= 1
    return nodes, edges, True


@njit(cache=True)
def _layout_nodes(n_nodes, root, sit_start, sit_actor, e_kind, e_class, e_child, sit_plays, plays_start, plays_cls,
                  u_child, u_counts, hand_counts, n_plays):
    """First pass, breadth first: each node's situation and hand sets, and its STUCK transition.

    Hand sets and transitions are numbered as ``tree.unfold`` numbers them (first met, first
    numbered); ``hs_univ[s]`` is the played-count vector (universe index) of hand set ``s``, and
    transition ``t`` is ``(tr_what[t], tr_a[t], tr_b[t])``: 0 = play of class ``tr_b`` from universe
    ``tr_a``, 1 = the STUCK leaf of universe ``tr_a`` at plays tuple ``tr_b``.
    """
    n_univ, n_cls = u_child.shape
    n_hands = hand_counts.shape[0]
    node_sit = np.empty(n_nodes, dtype=np.int64)
    hs = np.empty((n_nodes, 2), dtype=np.int32)
    stuck_t = np.full(n_nodes, -1, dtype=np.int64)
    hs_of_univ = np.full(n_univ, -1, dtype=np.int32)
    hs_univ = np.empty(n_univ, dtype=np.int64)
    tr_of_play = np.full(n_univ * n_cls, -1, dtype=np.int64)
    tr_of_stuck = np.full(n_univ * n_plays, -2, dtype=np.int64)  # -2 unknown, -1 no leaf
    cap = n_univ * (n_cls + n_plays)  # every (P, class) and every (P, plays tuple) at most once
    tr_what = np.empty(cap, dtype=np.int8)
    tr_a = np.empty(cap, dtype=np.int64)
    tr_b = np.empty(cap, dtype=np.int64)
    n_hs = 0
    n_tr = 0
    hs_of_univ[0] = 0  # the empty set of plays: universe 0, hand set 0
    hs_univ[0] = 0
    n_hs = 1
    node_sit[0] = root
    hs[0, 0] = 0
    hs[0, 1] = 0
    nxt = 1
    for n in range(n_nodes):
        sid = node_sit[n]
        q = sit_actor[sid]
        h0 = hs[n, 0]
        h1 = hs[n, 1]
        hq_own = h0 if q == 0 else h1
        for e in range(sit_start[sid], sit_start[sid + 1]):
            hq = hq_own
            c = e_class[e]
            if c >= 0:
                u = hs_univ[hq]
                key = u * n_cls + c
                if tr_of_play[key] < 0:
                    v = u_child[u, c]
                    if v < 0:
                        return node_sit, hs, stuck_t, hs_univ[:n_hs], tr_what[:0], tr_a[:0], tr_b[:0], False
                    if hs_of_univ[v] < 0:
                        hs_of_univ[v] = n_hs
                        hs_univ[n_hs] = v
                        n_hs += 1
                    tr_what[n_tr] = 0
                    tr_a[n_tr] = u
                    tr_b[n_tr] = c
                    tr_of_play[key] = n_tr
                    n_tr += 1
                hq = hs_of_univ[u_child[u, c]]
            if e_kind[e] == CHILD:
                node_sit[nxt] = e_child[e]
                if q == 0:
                    hs[nxt, 0] = hq
                    hs[nxt, 1] = h1
                else:
                    hs[nxt, 0] = h0
                    hs[nxt, 1] = hq
                nxt += 1
        pid = sit_plays[sid]
        if pid >= 0:
            u = hs_univ[hq_own]
            key = u * n_plays + pid
            t = tr_of_stuck[key]
            if t == -2:
                # a hand of the set (it contains P) that holds no more card of any playable class
                any_stuck = False
                for h in range(n_hands):
                    inside = True
                    for k in range(n_cls):
                        if hand_counts[h, k] < u_counts[u, k]:
                            inside = False
                            break
                    if not inside:
                        continue
                    stuck = True
                    for j in range(plays_start[pid], plays_start[pid + 1]):
                        k = plays_cls[j]
                        if hand_counts[h, k] > u_counts[u, k]:
                            stuck = False
                            break
                    if stuck:
                        any_stuck = True
                        break
                t = -1
                if any_stuck:  # as unfold: a leaf only where some hand of the set is stuck
                    tr_what[n_tr] = 1
                    tr_a[n_tr] = u
                    tr_b[n_tr] = pid
                    t = n_tr
                    n_tr += 1
                tr_of_stuck[key] = t
            stuck_t[n] = t
    return node_sit, hs, stuck_t, hs_univ[:n_hs], tr_what[:n_tr], tr_a[:n_tr], tr_b[:n_tr], True


@njit(cache=True)
def _fill_edges(node_sit, hs, stuck_t, sit_start, sit_actor, e_label, e_kind, e_class, e_util, hs_univ,
                tr_of_play_key, n_cls, act_start, label, kind, child, util, trans, actor):
    """Second pass: every node's actions, in the order of ``tree.unfold``."""
    n_nodes = node_sit.shape[0]
    nxt = 1
    j = 0
    for n in range(n_nodes):
        sid = node_sit[n]
        q = sit_actor[sid]
        actor[n] = q
        act_start[n] = j
        hq = hs[n, q]
        u = hs_univ[hq]
        for e in range(sit_start[sid], sit_start[sid + 1]):
            label[j] = e_label[e]
            kind[j] = e_kind[e]
            util[j] = e_util[e]
            c = e_class[e]
            trans[j] = tr_of_play_key[u * n_cls + c] if c >= 0 else -1
            if e_kind[e] == CHILD:
                child[j] = nxt
                nxt += 1
            else:
                child[j] = -1
            j += 1
        if stuck_t[n] >= 0:
            label[j] = STUCK
            kind[j] = 1  # LEAF
            util[j] = 0.0
            trans[j] = stuck_t[n]
            child[j] = -1
            j += 1
    act_start[n_nodes] = j


def _universe(ab: CardAbstraction):
    """Every played-count vector a seat can reach (at most ``hand_size`` cards, within the deck)."""
    nc = ab.n_classes
    hand_size = max((len(h) for h in ab.hands), default=0)
    univ = [(0,) * nc]
    for size in range(1, hand_size + 1):
        for combo in combinations_with_replacement(range(nc), size):
            P = [0] * nc
            for x in combo:
                P[x] += 1
            if all(a <= m for a, m in zip(P, ab.mult)):
                univ.append(tuple(P))
    index = {P: i for i, P in enumerate(univ)}
    u_child = np.full((len(univ), max(nc, 1)), -1, dtype=np.int64)
    for i, P in enumerate(univ):
        for c in range(nc):
            u_child[i, c] = index.get(P[:c] + (P[c] + 1,) + P[c + 1:], -1)
    return univ, u_child


@dataclass
class Memo:
    """The memo of situations as flat arrays: the edges of situation ``s`` are ``start[s]:start[s + 1]``."""

    root: int
    start: np.ndarray
    actor: np.ndarray
    label: np.ndarray
    cls: np.ndarray
    kind: np.ndarray
    child: np.ndarray
    util: np.ndarray
    plays: np.ndarray  # per situation: its plays tuple (an index into plays_list) where only plays are legal, else -1
    plays_list: list

    def sizes(self) -> tuple[int, int]:
        """Public nodes and edges of the unfolded tree (its STUCK leaves aside)."""
        nodes, edges, ok = _subtree_sizes(self.start, self.kind, self.child, self.root)
        if not ok:
            raise ValueError("the memo has a cycle")
        return int(nodes[self.root]), int(edges[self.root])

    def tree_bytes(self) -> int:
        """About what :func:`unfold_memo` allocates for the tree (without ``trans1``), known before it does:
        29 bytes per edge, 17 per node and 24 more while unfolding, a STUCK leaf per node at most."""
        nodes, edges = self.sizes()
        return 29 * (edges + nodes) + 41 * nodes


def memo_arrays(root_sit: int, sit_actor: list, sit_edges: list) -> Memo | None:
    """The memo of ``tree.expand_situations`` as arrays (None with envido announcements).

    Dropping the Python memo afterwards frees its memory (1-2 GB for the 40-card games) before
    :func:`unfold_memo` allocates the tree.
    """
    n_sit = len(sit_actor)
    if any(a not in (0, 1) for a in sit_actor):
        return None
    start = np.zeros(n_sit + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(x) for x in sit_edges), dtype=np.int64, count=n_sit), out=start[1:])
    n_e = int(start[-1])
    flat = [x for edges in sit_edges for x in edges]
    label = np.fromiter((x[0] for x in flat), dtype=np.int64, count=n_e)
    if np.any((label >= REVEAL) & (label < STUCK)):
        return None
    columns = [np.fromiter((x[k] for x in flat), dtype=dt, count=n_e)
               for k, dt in ((1, np.int64), (2, np.int8), (3, np.int64), (4, np.float64))]
    del flat
    # the plays tuple of every plays-only situation (its STUCK leaf is memoised per tuple, as in unfold)
    plays_id: dict = {}
    plays = np.full(n_sit, -1, dtype=np.int64)
    for sid, edges in enumerate(sit_edges):
        key = tuple(c for _, c, _, _, _ in edges)
        if min(key) >= 0:
            plays[sid] = plays_id.setdefault(key, len(plays_id))
    return Memo(root_sit, start, np.asarray(sit_actor, dtype=np.int8), label, *columns, plays, list(plays_id))


def unfold_fast(ab: CardAbstraction, root_sit: int, sit_actor: list, sit_edges: list, dealer: int = 0,
                trans1: bool = True) -> dict | None:
    """The arrays of :func:`agents.cfr.tree.unfold` (identical), unfolded in numba.

    Returns None where this unfolding does not apply (envido announcements): use ``tree.unfold``.
    ``dealer`` only matters to announcements (accepted for the same signature). ``trans1`` (seat
    1's transition at an announcement) is all -1 without announcements; ``trans1=False`` leaves it
    out of the result (None), which saves 8 bytes per edge where the solver fills it itself.
    """
    memo = memo_arrays(root_sit, sit_actor, sit_edges)
    return None if memo is None else unfold_memo(ab, memo, trans1)


def unfold_memo(ab: CardAbstraction, memo: Memo, trans1: bool = True) -> dict | None:
    """:func:`unfold_fast` from the memo's arrays."""
    m = memo
    root_sit, sit_start, actor_arr, e_label, e_class, e_kind, e_child, e_util, sit_plays = (
        m.root, m.start, m.actor, m.label, m.cls, m.kind, m.child, m.util, m.plays)
    plays_list = m.plays_list
    plays_start = np.zeros(len(plays_list) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in plays_list], out=plays_start[1:])
    plays_cls = np.array([c for p in plays_list for c in p], dtype=np.int64)

    univ, u_child = _universe(ab)
    nc = ab.n_classes
    u_counts = np.array(univ, dtype=np.int64).reshape(len(univ), nc)
    hand_counts_l = [ab.counts(h) for h in ab.hands]
    hand_counts = np.array(hand_counts_l, dtype=np.int64).reshape(len(ab.hands), nc)

    nodes_below, edges_below, ok = _subtree_sizes(sit_start, e_kind, e_child, root_sit)
    if not ok:
        return None
    n_nodes = int(nodes_below[root_sit])
    node_sit, hs, stuck_t, hs_univ, tr_what, tr_a, tr_b, ok = _layout_nodes(
        n_nodes, root_sit, sit_start, actor_arr, e_kind, e_class, e_child, sit_plays, plays_start, plays_cls,
        u_child, u_counts, hand_counts, max(len(plays_list), 1))
    if not ok:
        raise RuntimeError("unfold_fast: a seat played more cards than the universe of played counts holds")
    del nodes_below
    n_edges = int(edges_below[root_sit]) + int(np.count_nonzero(stuck_t >= 0))
    del edges_below

    tr_of_play_key = np.full(len(univ) * max(nc, 1), -1, dtype=np.int64)
    for t in np.flatnonzero(tr_what == 0):
        tr_of_play_key[tr_a[t] * nc + tr_b[t]] = t

    actor = np.empty(n_nodes, dtype=np.int8)
    act_start = np.empty(n_nodes + 1, dtype=np.int64)
    label = np.empty(n_edges, dtype=np.int32)
    kind = np.empty(n_edges, dtype=np.int8)
    child = np.empty(n_edges, dtype=np.int64)
    util = np.empty(n_edges, dtype=np.float64)
    trans = np.empty(n_edges, dtype=np.int64)
    _fill_edges(node_sit, hs, stuck_t, sit_start, actor_arr, e_label, e_kind, e_class, e_util, hs_univ,
                tr_of_play_key, nc, act_start, label, kind, child, util, trans, actor)
    del stuck_t
    node_sit = node_sit.astype(np.int32)  # kept: each node's situation lets the network inputs skip repeats

    # hand sets and transitions, in the order they were met
    hs_counts = [univ[u] for u in hs_univ]
    hs_lists = [[i for i, hc in enumerate(hand_counts_l) if all(a >= b for a, b in zip(hc, P))] for P in hs_counts]
    if not all(hs_lists):
        return None  # a hand set no hand fits: unfold leaves such plays out (never met without announcements)
    set_of_univ = {int(u): s for s, u in enumerate(hs_univ)}
    tr_lists = []
    for what, a, b in zip(tr_what.tolist(), tr_a.tolist(), tr_b.tolist()):
        src = hs_lists[set_of_univ[a]]
        P = univ[a]
        if what == 0:
            where = {h: j for j, h in enumerate(hs_lists[set_of_univ[int(u_child[a, b])]])}
            tr_lists.append([where.get(h, -1) for h in src])
        else:
            plays = plays_list[b]
            tr_lists.append([0 if all(hand_counts_l[h][c] <= P[c] for c in plays) else -1 for h in src])
    hs_off = np.zeros(len(hs_lists) + 1, dtype=np.int64)
    hs_off[1:] = np.cumsum([len(x) for x in hs_lists])
    tr_off = np.zeros(len(tr_lists) + 1, dtype=np.int64)
    tr_off[1:] = np.cumsum([len(x) for x in tr_lists])
    return dict(
        actor=actor, hs=hs, act_start=act_start, label=label, kind=kind, child=child, util=util, trans=trans,
        trans1=np.full(n_edges, -1, dtype=np.int64) if trans1 else None,
        hs_off=hs_off, hs_hands=np.array([h for x in hs_lists for h in x], dtype=np.int32), hs_counts=hs_counts,
        tr_off=tr_off, tr_pos=np.array([j for x in tr_lists for j in x], dtype=np.int32), node_sit=node_sit)
