"""The hand-free network input of every public node: what a batched table of a network starts from.

Kept apart from :mod:`train.eval.exploitability` because its disk cache is keyed by the sources it depends
on: a change to how a table is measured must not throw away the inputs (minutes to rebuild).
"""

from __future__ import annotations

import numpy as np

from agents.cfr.policy_tree import CardClasses, root_state
from agents.cfr.tree import CHILD, PLAY, PublicTree
from train.eval.tree_cache import ENCODER_SOURCES, cache_read, cache_write, code_version, tree_cache_key, vira_of
from truc_env.game.rules import Rules


def node_inputs(tree: PublicTree, rules: Rules, features: str, after_redeal: bool, cache_dir: str | None = None,
                progress: bool = False) -> dict:
    """The hand-free network input of every public node, as one engine state per node would encode it.

    One engine state is built per public node (depth-first, each child a clone plus one action) and
    encoded with the hand-dependent sections (own cards, dealt slots, own card strengths, first
    hand) cleared, the dealt order made canonical (the played cards first). Returned as a sparse
    matrix (``indptr``, ``indices``, ``data``: one row per node) with, per node, the cards of each
    class played so far (``used``) and by the acting seat (``own``). That walk is most of the cost
    of a table, and depends on the tree and the encoder only, so with ``cache_dir`` it is kept on
    disk beside the tree (keyed like it, plus the features and the encoder's sources).
    """

    from agents.network.network import encode_state, strength_offset
    from truc_env.game.observe import encoder_of

    key = {**tree_cache_key(rules, tree.dealer, tree.score, tree.abstraction.kind, vira_of(tree)), "inputs": features,
           "after_redeal": bool(after_redeal), "tree_rules": tree.rules.key,
           "encoder": code_version(ENCODER_SOURCES)}
    path, out = cache_read(cache_dir, "inputs", key, "network-input cache file")
    if out is not None:
        out.pop("header")
        return out
    from tqdm import tqdm

    ab = tree.abstraction
    cards = CardClasses.of(ab, rules)
    enc = encoder_of(rules)
    L = enc.L
    D, hs, C = enc.D, rules.hand_size, ab.n_classes
    o_hand, o_slots = enc.piece("hand").offset, enc.piece("slots").offset
    o_first = enc.offset_of("first_hand")
    o_strength = strength_offset(rules, features)
    n = tree.n_nodes
    rows: list = [None] * n
    used_a = np.zeros((n, C), dtype=np.int8)
    own_a = np.zeros((n, C), dtype=np.int8)
    bar = tqdm(total=n, desc="inputs", unit="node", disable=not progress, mininterval=5)
    zero = (0,) * C
    no_hands = [[] for _ in range(rules.players)]
    actor, act_start, kind, label, child = tree.actor, tree.act_start, tree.kind, tree.label, tree.child
    stack = [(0, root_state(rules, tree.dealer, tree.score, after_redeal, tree.vira), zero, (zero, zero))]
    while stack:
        node, st, used, own = stack.pop()
        q = int(actor[node])
        # the public tree's states hold every card of every class; the hand sections are cleared
        # below, so they are encoded from no hands at all (the same input, without the wasted work)
        hands, st.hands = st.hands, no_hands
        x = encode_state(st, q, features)
        st.hands = hands
        x[o_hand:o_hand + D] = 0.0
        x[o_slots:o_slots + hs] = 0.0
        x[o_slots + sum(own[q]):o_slots + hs] = 1.0  # canonical dealt order: the played cards first
        if o_first >= 0:
            x[o_first:o_first + D] = 0.0
        if o_strength >= 0:
            x[o_strength:o_strength + hs] = 0.0
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
            nxt = st if i == len(edges) - 1 else st.clone()  # the node is encoded: its last child takes its state
            if lab >= PLAY:
                c = lab - PLAY
                nxt.apply_action(L.play + int(cards.index[c, used[c]]))
                used2 = used[:c] + (used[c] + 1,) + used[c + 1:]
                mine = own[q][:c] + (own[q][c] + 1,) + own[q][c + 1:]
                own2 = (mine, own[1]) if q == 0 else (own[0], mine)
            else:
                nxt.apply_action(lab)
                used2, own2 = used, own
            stack.append((node_child, nxt, used2, own2))
    bar.close()
    empty = (np.zeros(0, np.int32), np.zeros(0, np.float32))
    rows = [r if r is not None else empty for r in rows]  # nodes no path reaches (none expected)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r[0]) for r in rows])
    out = {"indptr": indptr, "indices": np.concatenate([r[0] for r in rows]),
           "data": np.concatenate([r[1] for r in rows]), "used": used_a, "own": own_a}
    if path is not None:
        cache_write(path, {"key": key}, out)
    return out
