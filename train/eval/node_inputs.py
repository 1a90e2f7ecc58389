"""The hand-free network input of every public node: what a batched table of a network starts from.

Kept apart from :mod:`train.eval.exploitability` because its disk cache is keyed by the sources it depends
on: a change to how a table is measured must not throw away the inputs (minutes to rebuild).

The nodes of one *situation* (the tree builder's memo entry) share their input but for the cards played
before the current trick, which the situation leaves out (it keeps only how many of each class are
gone). So one engine state is encoded per situation, with the played cards cleared, and each node's
played cards are written in from its path by :func:`_fill_rows` (numba): about a sixth of the engine
work on Le Truc (560 k situations for 3.5 M nodes). Trees without their situations (the Python
unfolding: envido, flor) and ``info_state`` inputs (which hold the whole history) take the walk of one
engine state per node, :func:`_walk_nodes`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.cfr.labels import CHILD, PLAY
from agents.cfr.policy_tree import CardClasses, root_state
from agents.cfr.tree import PublicTree
from train.eval.tree_cache import (
    ENCODER_SOURCES,
    cache_write,
    code_version,
    read_or_lock,
    tree_cache_key,
    vira_of,
)
from truc_env.game.rules import Rules


def node_inputs(tree: PublicTree, rules: Rules, features: str, after_redeal: bool, cache_dir: str | None = None,
                progress: bool = False) -> dict:
    """The hand-free network input of every public node, as one engine state per node would encode it.

    As one engine state per public node encodes it (see the module doc for how it is computed), with
    the hand-dependent sections (own cards, dealt slots, own card strengths, first hand) cleared and
    the dealt order made canonical (the played cards first). Returned as a sparse
    matrix (``indptr``, ``indices``, ``data``: one row per node) with, per node, the cards of each
    class played so far (``used``) and by the acting seat (``own``). It depends on the tree and the
    encoder only, so with ``cache_dir`` it is kept on disk beside the tree (keyed like it, plus the
    features and the encoder's sources).
    """
    key = {**tree_cache_key(rules, tree.dealer, tree.score, tree.abstraction.kind, vira_of(tree)), "inputs": features,
           "after_redeal": bool(after_redeal), "tree_rules": tree.rules.key,
           "encoder": code_version(ENCODER_SOURCES)}
    by_situation = tree.node_sit is not None and features in ("observation", "observation+strength")
    if by_situation:  # kept as the situations' rows and the nodes' plays: a seventh of the rows' bytes
        key["form"] = "situations"
    with read_or_lock(cache_dir, "inputs", key, "network-input cache file") as (path, out):
        if out is None:  # no file (or no cache): computed here, another process waiting for it meanwhile
            out = (_by_situation if by_situation else _walk_nodes)(tree, rules, features, after_redeal, progress)
            if path is not None:
                cache_write(path, {"key": key}, out, "network inputs")
    out.pop("header", None)  # read back: its header; computed here: none
    return _rows_of(out, tree.actor) if by_situation else out


class _Layout:
    """Where a node's played cards go in the input: the ``played`` section and, with strength features,
    the played cards' and the current trick's strengths (the seat's own strengths stay cleared)."""

    def __init__(self, rules: Rules, features: str):
        from truc_env.game.observe import encoder_of

        enc = encoder_of(rules)
        self.enc, self.L = enc, enc.L
        self.D, self.hs, self.n = enc.D, rules.hand_size, rules.players
        self.o_hand, self.o_slots = enc.piece("hand").offset, enc.piece("slots").offset
        self.o_first = enc.offset_of("first_hand")
        self.o_played = enc.piece("played").offset
        from agents.network.network import feature_size, strength_offset

        self.o_strength = strength_offset(rules, features)
        self.width = feature_size(rules, features)

    def clear_hand(self, x: np.ndarray, own_played: int) -> None:
        """The hand-dependent sections cleared, the dealt order made canonical (the played cards first)."""
        D, hs = self.D, self.hs
        x[self.o_hand:self.o_hand + D] = 0.0
        x[self.o_slots:self.o_slots + hs] = 0.0
        x[self.o_slots + own_played:self.o_slots + hs] = 1.0
        if self.o_first >= 0:
            x[self.o_first:self.o_first + D] = 0.0
        if self.o_strength >= 0:
            x[self.o_strength:self.o_strength + hs] = 0.0


def _encode(st, q: int, features: str):
    """``encode_state`` of ``q`` at ``st`` from no hands at all: the public tree's states hold every card
    of every class, and the hand sections are cleared anyway (the same input, without the wasted work)."""
    from agents.network.network import encode_state

    hands, st.hands = st.hands, [[] for _ in range(st.rules.players)]
    x = encode_state(st, q, features)
    st.hands = hands
    return x


def _child_state(st, lab: int, used: tuple, cards: CardClasses, L, last: bool):
    """The state after edge label ``lab`` (a clone unless ``last``: the node is encoded, its last child
    takes its state) and the classes used after it."""
    nxt = st if last else st.clone()
    if lab >= PLAY:
        c = lab - PLAY
        nxt.apply_action(L.play + int(cards.index[c, used[c]]))
        return nxt, used[:c] + (used[c] + 1,) + used[c + 1:]
    nxt.apply_action(lab)
    return nxt, used


def _by_situation(tree: PublicTree, rules: Rules, features: str, after_redeal: bool, progress: bool) -> dict:
    from tqdm import tqdm

    ab = tree.abstraction
    cards = CardClasses.of(ab, rules)
    lay = _Layout(rules, features)
    L, hs, n = lay.L, lay.hs, lay.n
    actor, act_start, kind, label, child, node_sit = (tree.actor, tree.act_start, tree.kind, tree.label, tree.child,
                                                      tree.node_sit)
    n_sit = int(node_sit.max()) + 1
    sit_row = np.full(n_sit, -1, dtype=np.int64)
    base_idx: list = []
    base_val: list = []
    root = root_state(rules, tree.dealer, tree.score, after_redeal, tree.vira)
    from agents.network.network import percentiles

    pct = percentiles(tuple(root.strength))
    strength_of = np.array([pct.get(c, 0.0) for c in L.deck], dtype=np.float32)  # by deck index
    bar = tqdm(total=n_sit, desc="inputs", unit="situation", disable=not progress, mininterval=5)
    zero = (0,) * ab.n_classes
    stack = [(0, root, zero)]
    while stack:  # one engine state per situation, met at its first node (depth first)
        node, st, used = stack.pop()
        s = int(node_sit[node])
        if sit_row[s] >= 0:
            continue
        q = int(actor[node])
        x = _encode(st, q, features)
        lay.clear_hand(x, _own_played(st, q))
        x[lay.o_played:lay.o_played + hs * n * lay.D] = 0.0  # the path's plays are written per node
        if lay.o_strength >= 0:
            x[lay.o_strength + hs:lay.width] = 0.0
        nz = np.flatnonzero(x)
        sit_row[s] = len(base_idx)
        base_idx.append(nz.astype(np.int32))
        base_val.append(x[nz].astype(np.float32))
        bar.update(1)
        lo, hi = int(act_start[node]), int(act_start[node + 1])
        edges = [(lab, c) for lab, c, k in zip(label[lo:hi].tolist(), child[lo:hi].tolist(), kind[lo:hi].tolist())
                 if k == CHILD and sit_row[node_sit[c]] < 0]
        if len(edges) > 1:
            st.legal_actions()  # computed once here, shared by the clones: each apply checks against it
        for i, (lab, node_child) in enumerate(edges):
            nxt, used2 = _child_state(st, lab, used, cards, L, i == len(edges) - 1)
            stack.append((node_child, nxt, used2))
    bar.close()
    b_ptr = np.zeros(len(base_idx) + 1, dtype=np.int64)
    b_ptr[1:] = np.cumsum([len(r) for r in base_idx])
    b_idx, b_val = np.concatenate(base_idx), np.concatenate(base_val)
    del base_idx, base_val
    plays, seats, n_plays, used_a, own_a = _node_plays(actor, act_start, kind, label, child, cards.index,
                                                       ab.n_classes, 2 * hs)
    return {"sit_ptr": b_ptr, "sit_indices": b_idx, "sit_data": b_val, "rows": sit_row[node_sit].astype(np.int32),
            "plays": plays, "seats": seats, "n_plays": n_plays, "used": used_a, "own": own_a,
            "strength_of": strength_of,
            "layout": np.array([n, lay.D, lay.o_played, lay.o_strength, hs, lay.width], dtype=np.int64)}


def _rows_of(parts: dict, actor: np.ndarray) -> dict:
    """The per-node rows (``indptr``, ``indices``, ``data``, ``used``, ``own``) from :func:`_by_situation`'s parts."""
    n, D, o_played, o_strength, hs, width = (int(v) for v in parts["layout"])
    rows, b_ptr, n_plays = parts["rows"], parts["sit_ptr"], parts["n_plays"]
    # at most: the situation's entries, a card and its strength per play, the trick's two best strengths
    cap = int(np.sum(np.diff(b_ptr)[rows])) + 2 * int(np.sum(n_plays)) + 2 * len(rows)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indices = np.empty(cap, dtype=np.int32)
    data = np.empty(cap, dtype=np.float32)
    total = _fill_rows(rows, b_ptr, parts["sit_indices"], parts["sit_data"], actor, parts["plays"], parts["seats"],
                       n_plays, n, D, o_played, o_strength, hs, width, parts["strength_of"], indptr, indices, data)
    # views, not copies: the slack is 8 bytes a node at most, a copy would briefly double the largest arrays
    return {"indptr": indptr, "indices": indices[:total], "data": data[:total], "used": parts["used"],
            "own": parts["own"]}


def _own_played(st, q: int) -> int:
    return sum(1 for _, seat, _ in st.played if seat == q)


@njit(cache=True)
def _node_plays(actor, act_start, kind, label, child, class_index, n_cls, max_plays):
    """Per node, from the root (the tree lists parents before children): the cards played on its path
    (deck index and seat, in order), the classes used and the acting seat's own plays per class."""
    n = len(actor)
    plays = np.zeros((n, max_plays), dtype=np.int16)
    seats = np.zeros((n, max_plays), dtype=np.int8)
    n_plays = np.zeros(n, dtype=np.int8)
    used = np.zeros((n, n_cls), dtype=np.int8)
    own = np.zeros((n, 2, n_cls), dtype=np.int8)
    for node in range(n):
        q = actor[node]
        for e in range(act_start[node], act_start[node + 1]):
            if kind[e] != CHILD:
                continue
            ch = child[e]
            k = n_plays[node]
            plays[ch, :] = plays[node, :]
            seats[ch, :] = seats[node, :]
            used[ch, :] = used[node, :]
            own[ch, :, :] = own[node, :, :]
            n_plays[ch] = k
            lab = label[e]
            if lab >= PLAY:
                c = lab - PLAY
                plays[ch, k] = class_index[c, used[node, c]]
                seats[ch, k] = q
                n_plays[ch] = k + 1
                used[ch, c] += 1
                own[ch, q, c] += 1
    own_q = np.zeros((n, n_cls), dtype=np.int8)
    for node in range(n):
        q = actor[node]
        if q >= 0:
            own_q[node, :] = own[node, q, :]
    return plays, seats, n_plays, used, own_q


@njit(cache=True)
def _fill_rows(rows, b_ptr, b_idx, b_val, actor, plays, seats, n_plays, n, D, o_played, o_strength, hs, width,
               strength_of, indptr, indices, data):
    """Each node's row: its situation's entries (zero on the played cards and their strengths) with the
    path's played cards (and their strengths) merged in, in index order as ``np.flatnonzero`` lists them."""
    K = plays.shape[1]
    pos_p = np.empty(K, dtype=np.int64)  # the plays' one-hot positions, then their strength positions
    pos_s = np.empty(K + 2, dtype=np.int64)
    val_s = np.empty(K + 2, dtype=np.float32)
    played_end = o_played + hs * n * D
    strength_at = o_strength + hs
    pos = 0
    for node in range(len(rows)):
        r = rows[node]
        q = actor[node]
        k = n_plays[node]
        current = (k // n) * n  # the plays of the trick under way begin here
        best0 = np.float32(0.0)
        best1 = np.float32(0.0)
        ns = 0
        for i in range(k):
            at = (i // n) * n + (seats[node, i] + n - q) % n
            pos_p[i] = o_played + at * D + plays[node, i]
            if o_strength >= 0:
                v = strength_of[plays[node, i]]
                if v != 0.0:
                    pos_s[ns] = strength_at + at
                    val_s[ns] = v
                    ns += 1
                if i >= current:
                    if seats[node, i] == q:
                        best0 = max(best0, v)
                    else:
                        best1 = max(best1, v)
        if o_strength >= 0:
            if best0 != 0.0:
                pos_s[ns] = width - 2
                val_s[ns] = best0
                ns += 1
            if best1 != 0.0:
                pos_s[ns] = width - 1
                val_s[ns] = best1
                ns += 1
        _sort_small(pos_p, None, k)
        _sort_small(pos_s, val_s, ns)
        j, stop = b_ptr[r], b_ptr[r + 1]
        while j < stop and b_idx[j] < played_end:
            indices[pos] = b_idx[j]
            data[pos] = b_val[j]
            pos += 1
            j += 1
        for i in range(k):
            indices[pos] = pos_p[i]
            data[pos] = 1.0
            pos += 1
        while j < stop and (o_strength < 0 or b_idx[j] < strength_at):
            indices[pos] = b_idx[j]
            data[pos] = b_val[j]
            pos += 1
            j += 1
        for i in range(ns):
            indices[pos] = pos_s[i]
            data[pos] = val_s[i]
            pos += 1
        while j < stop:  # nothing follows the strengths today; kept exact if a section ever does
            indices[pos] = b_idx[j]
            data[pos] = b_val[j]
            pos += 1
            j += 1
        indptr[node + 1] = pos
    return pos


@njit(cache=True)
def _sort_small(keys, values, m):
    """Insertion sort of the first ``m`` keys (a handful), ``values`` (or None) alongside."""
    for a in range(1, m):
        kk = keys[a]
        vv = values[a] if values is not None else 0.0
        b = a - 1
        while b >= 0 and keys[b] > kk:
            keys[b + 1] = keys[b]
            if values is not None:
                values[b + 1] = values[b]
            b -= 1
        keys[b + 1] = kk
        if values is not None:
            values[b + 1] = vv


def _walk_nodes(tree: PublicTree, rules: Rules, features: str, after_redeal: bool, progress: bool) -> dict:
    """One engine state per public node (depth first, each child a clone plus one action)."""
    from tqdm import tqdm

    ab = tree.abstraction
    cards = CardClasses.of(ab, rules)
    lay = _Layout(rules, features)
    C, n = ab.n_classes, tree.n_nodes
    rows: list = [None] * n
    used_a = np.zeros((n, C), dtype=np.int8)
    own_a = np.zeros((n, C), dtype=np.int8)
    bar = tqdm(total=n, desc="inputs", unit="node", disable=not progress, mininterval=5)
    zero = (0,) * C
    actor, act_start, kind, label, child = tree.actor, tree.act_start, tree.kind, tree.label, tree.child
    stack = [(0, root_state(rules, tree.dealer, tree.score, after_redeal, tree.vira), zero, (zero, zero))]
    while stack:
        node, st, used, own = stack.pop()
        q = int(actor[node])
        x = _encode(st, q, features)
        lay.clear_hand(x, sum(own[q]))
        nz = np.flatnonzero(x)
        rows[node] = (nz.astype(np.int32), x[nz].astype(np.float32))
        used_a[node] = used
        own_a[node] = own[q]
        bar.update(1)
        lo, hi = int(act_start[node]), int(act_start[node + 1])
        edges = [(lab, c) for lab, c, k in zip(label[lo:hi].tolist(), child[lo:hi].tolist(), kind[lo:hi].tolist())
                 if k == CHILD]
        if len(edges) > 1:
            st.legal_actions()  # computed once here, shared by the clones: each apply checks against it
        for i, (lab, node_child) in enumerate(edges):
            nxt, used2 = _child_state(st, lab, used, cards, lay.L, i == len(edges) - 1)
            own2 = own
            if lab >= PLAY:
                c = lab - PLAY
                mine = own[q][:c] + (own[q][c] + 1,) + own[q][c + 1:]
                own2 = (mine, own[1]) if q == 0 else (own[0], mine)
            stack.append((node_child, nxt, used2, own2))
    bar.close()
    empty = (np.zeros(0, np.int32), np.zeros(0, np.float32))
    rows = [r if r is not None else empty for r in rows]  # nodes no path reaches (none expected)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r[0]) for r in rows])
    return {"indptr": indptr, "indices": np.concatenate([r[0] for r in rows]),
            "data": np.concatenate([r[1] for r in rows]), "used": used_a, "own": own_a}
