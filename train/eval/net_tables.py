"""A network's table on the public tree, filled in batches: the hand-free input of every node, the information sets a flat input cannot tell apart, the first-hand columns a forgetful network must not read."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from agents.cfr.policy_tree import (
    CardClasses,
    first_hand_bits,
    hand_rows,
    root_state,
    scatter_rows,
)
from agents.cfr.solver import PublicTreeSolver
from agents.cfr.tree import NATURE, STUCK, PublicTree
from train.eval.node_inputs import node_inputs  # noqa: F401
from train.eval.tree_cache import cached_tree, code_version, default_cache_dir, tree_cache_key  # noqa: F401
from truc_env.errors import TrucError
from truc_env.game.rules import Rules


@njit(cache=True)
def _node_rows(nodes, indptr, indices, data, base):
    """Dense hand-free inputs of a chunk of public nodes."""
    base[:, :] = 0.0
    for b in range(nodes.shape[0]):
        n = nodes[b]
        for k in range(indptr[n], indptr[n + 1]):
            base[b, indices[k]] = data[k]


@njit(cache=True)
def _nonplay(nodes, act_start, label, nonplay):
    """The non-card legal actions of a chunk of public nodes."""
    nonplay[:, :] = False
    for b in range(nodes.shape[0]):
        n = nodes[b]
        for e in range(act_start[n], act_start[n + 1]):
            if label[e] < STUCK:  # card plays (PLAY and above) are added per hand; STUCK is no engine action
                nonplay[b, label[e]] = True


@njit(cache=True)
def _first_layer_rows(node_part, seat_part, row_node, node_seat, row_cards, card_w, row_strength, strength_w, out):
    """Each row's first-layer pre-activation: its node's hand-free part, its seat's part (bias, first
    hand), the weight columns of its cards in hand and its strength features times theirs."""
    H = out.shape[1]
    for r in range(out.shape[0]):
        b = row_node[r]
        q = node_seat[b]
        for k in range(H):
            out[r, k] = node_part[b, k] + seat_part[q, k]
        for u in range(row_cards.shape[1]):
            d = row_cards[r, u]
            if d >= 0:
                for k in range(H):
                    out[r, k] += card_w[d, k]
        for t in range(strength_w.shape[0]):
            v = row_strength[r, t]
            if v != 0.0:
                for k in range(H):
                    out[r, k] += v * strength_w[t, k]


@njit(cache=True)
def _node_hashes(actor, hs, indptr, indices, data, used, own, out):
    """A 64-bit hash per acting node of what its rows' inputs depend on: the acting seat, its hand set,
    the cards of each class used and its own played, and the hand-free input (NATURE nodes: 0)."""
    for n in range(actor.shape[0]):
        q = actor[n]
        if q == NATURE:
            out[n] = 0
            continue
        h = np.uint64(1469598103934665603)
        p = np.uint64(1099511628211)
        h = (h ^ np.uint64(q + 1)) * p
        h = (h ^ np.uint64(hs[n, q] + 7)) * p
        for c in range(used.shape[1]):
            h = (h ^ np.uint64(used[n, c] * 31 + own[n, c] + 3)) * p
        for k in range(indptr[n], indptr[n + 1]):
            h = (h ^ np.uint64(indices[k] + 11)) * p
            h = (h ^ np.uint64(np.int64(data[k] * 1048576.0) & 0xFFFFFFFF)) * p  # (equality is checked exactly)
        out[n] = h


@njit(cache=True)
def _same_rows(a, b, actor, hs, indptr, indices, data, used, own) -> bool:
    if actor[a] != actor[b] or hs[a, actor[a]] != hs[b, actor[b]]:
        return False
    for c in range(used.shape[1]):
        if used[a, c] != used[b, c] or own[a, c] != own[b, c]:
            return False
    if indptr[a + 1] - indptr[a] != indptr[b + 1] - indptr[b]:
        return False
    for k in range(indptr[a + 1] - indptr[a]):
        if indices[indptr[a] + k] != indices[indptr[b] + k] or data[indptr[a] + k] != data[indptr[b] + k]:
            return False
    return True


@njit(cache=True)
def _representatives(order, hashes, actor, hs, indptr, indices, data, used, own, rep):
    """``rep[n]``: the first node (in ``order``, sorted by hash) whose rows' inputs equal ``n``'s (checked
    exactly: a hash collision only costs a representative of its own)."""
    i = 0
    m = order.shape[0]
    while i < m:
        j = i
        while j < m and hashes[order[j]] == hashes[order[i]]:
            j += 1
        for u in range(i, j):
            n = order[u]
            rep[n] = n
            for v in range(i, u):
                r = order[v]
                if rep[r] == r and _same_rows(n, r, actor, hs, indptr, indices, data, used, own):
                    rep[n] = r
                    break
        i = j


def input_groups(tree: PublicTree, inputs: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Public nodes whose (node, hand) network inputs are all equal, grouped: (representatives, CSR
    offsets into members, members), each representative's members (itself first) listed together.

    A flat observation does not tell apart nodes of different histories with the same stake, calls and
    cards in view (on heads-up Le Truc, 3.5 M acting nodes have 0.8 M distinct inputs): the network
    need be evaluated at one node per group, its logits masked per member."""
    acting = np.flatnonzero(tree.actor != NATURE).astype(np.int64)
    hashes = np.zeros(tree.n_nodes, dtype=np.uint64)
    used, own = inputs["used"], inputs["own"]
    _node_hashes(tree.actor, tree.hs, inputs["indptr"], inputs["indices"], inputs["data"], used, own, hashes)
    order = acting[np.argsort(hashes[acting], kind="stable")]
    rep = np.full(tree.n_nodes, -1, dtype=np.int64)
    _representatives(order, hashes, tree.actor, tree.hs, inputs["indptr"], inputs["indices"], inputs["data"],
                     used, own, rep)
    reps = acting[rep[acting] == acting]
    pos = np.full(tree.n_nodes, -1, dtype=np.int64)
    pos[reps] = np.arange(len(reps))
    members = acting[np.argsort(pos[rep[acting]], kind="stable")]  # by representative, in node order within
    offsets = np.zeros(len(reps) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pos[rep[acting]], minlength=len(reps)), out=offsets[1:])
    return reps, offsets, members


@njit(cache=True)
def _member_rows(offsets, row_start, row_hand, row_cards, src, m_node, m_hand, m_cards):
    """Each member's rows: its representative's (the same hands, cards and logits)."""
    r = 0
    for b in range(offsets.shape[0] - 1):
        for i in range(offsets[b], offsets[b + 1]):
            for k in range(row_start[b], row_start[b + 1]):
                src[r] = k
                m_node[r] = i - offsets[0]
                m_hand[r] = row_hand[k]
                for u in range(row_cards.shape[1]):
                    m_cards[r, u] = row_cards[k, u]
                r += 1


@dataclass
class Chunk:
    """The rows of a chunk of representative public nodes (see :func:`chunk_rows`)."""

    nodes: np.ndarray  # the representatives
    base: np.ndarray  # their dense hand-free inputs
    seat_of: np.ndarray  # each representative's acting seat
    row_node: np.ndarray  # per (representative, hand) row: its representative's index in the chunk,
    row_hand: np.ndarray  # its hand's index in the node's hand set,
    row_cards: np.ndarray  # the cards held (-1: played) and
    row_strength: np.ndarray  # their strength features
    m_nodes: np.ndarray  # every member node of the chunk's groups, and per member row:
    m_nonplay: np.ndarray  # (per member) its non-card legal actions
    src: np.ndarray  # the representative row it copies,
    m_node: np.ndarray  # the member's index in m_nodes,
    m_hand: np.ndarray  # its hand's index and
    m_cards: np.ndarray  # its cards held
    row_start: np.ndarray  # where each representative's rows start in row_node ... (one past the end last)
    m_rep: np.ndarray  # each member's representative (index in the chunk)


def chunk_rows(tree: PublicTree, inputs: dict, hand_counts, card_index, pct, F: int, A: int, chunk_nodes: int):
    """The public tree's (node, hand) rows in chunks of ``chunk_nodes`` representatives of
    :func:`input_groups`: what a batched table evaluates (on the representatives' rows) and scatters
    (on every member's rows, masked by its own actions). ``F``: the input's width, ``A``: the actions'."""
    reps, offsets, members = input_groups(tree, inputs)
    set_size = np.diff(tree.hs_off)
    hs = tree.rules.hand_size
    # 512 nodes a chunk keeps each chunk's arrays under glibc's mmap threshold, so they are reused from the
    # heap: 4,096 cost 0.75 M page faults more on real Le Truc (24 of its 67 CPU-s, warm), no faster in user time
    base = np.zeros((chunk_nodes, F), dtype=np.float32)
    for start in range(0, len(reps), chunk_nodes):
        nodes = reps[start:start + chunk_nodes]
        nb = len(nodes)
        _node_rows(nodes, inputs["indptr"], inputs["indices"], inputs["data"], base[:nb])
        seat_of = tree.actor[nodes].astype(np.int64)
        node_set = tree.hs[nodes, seat_of].astype(np.int64)
        rows = int(set_size[node_set].sum())
        row_node = np.zeros(rows, dtype=np.int64)
        row_hand = np.zeros(rows, dtype=np.int64)
        row_cards = np.zeros((rows, hs), dtype=np.int64)
        row_strength = np.zeros((rows, hs), dtype=np.float32)
        hand_rows(node_set, inputs["used"][nodes].astype(np.int64), inputs["own"][nodes].astype(np.int64),
                  tree.hs_off, tree.hs_hands, hand_counts, card_index, pct, hs, row_node, row_hand, row_cards,
                  row_strength)
        # the members of the chunk's groups: each takes its representative's rows, masked by its own actions
        grp = offsets[start:start + nb + 1]
        m_nodes = members[grp[0]:grp[-1]]
        m_nonplay = np.zeros((len(m_nodes), A), dtype=np.bool_)
        _nonplay(m_nodes, tree.act_start, tree.label, m_nonplay)
        row_start = np.zeros(nb + 1, dtype=np.int64)
        np.cumsum(set_size[node_set], out=row_start[1:])
        m_rows = int(((grp[1:] - grp[:-1]) * (row_start[1:] - row_start[:-1])).sum())
        src = np.zeros(m_rows, dtype=np.int64)
        m_node = np.zeros(m_rows, dtype=np.int64)
        m_hand = np.zeros(m_rows, dtype=np.int64)
        m_cards = np.zeros((m_rows, hs), dtype=np.int64)
        _member_rows(grp, row_start, row_hand, row_cards, src, m_node, m_hand, m_cards)
        yield Chunk(nodes, base[:nb], seat_of, row_node, row_hand, row_cards, row_strength, m_nodes, m_nonplay, src,
                    m_node, m_hand, m_cards, row_start, np.repeat(np.arange(nb), np.diff(grp)))


def card_blocks(rules: Rules, features: str) -> list[int]:
    """Input offsets of every block of one column per deck card (own, first-hand and played cards, the
    history's card plays): what a suit relabelling permutes."""
    from agents.network.network import HISTORY_FEATURES
    from truc_env.game.observe import encoder_of

    return encoder_of(rules).card_blocks(info_state=features in HISTORY_FEATURES)


def tabulate_ppo(tree: PublicTree, solver: PublicTreeSolver, net, features: str, rules: Rules | None = None,
                 first_hands=None, perms=None, chunk_nodes: int = 512, progress: bool = False,
                 cache_dir: str | None = None) -> np.ndarray:
    """The table of a PPO network (canonical projection), batched over public nodes.

    The input of each (node, hand) row is the node's hand-free input (:func:`node_inputs`, kept in
    ``cache_dir`` when given) with the hand-dependent sections (own cards, own card strengths,
    first hand) written in directly; the test suite checks it against :func:`tabulate_agent`, which
    encodes real states. First hands (``first_hands``, the hand after a redeal) are averaged over, one
    pass each; a network whose first-hand weights are all zero takes one pass for all. A suit
    relabelling (``perms``) permutes the card columns of the input (own, first-hand and played cards,
    the history's card plays) and of the mask: the same as encoding the relabelled state.
    """
    import torch
    from tqdm import tqdm

    from agents.network.network import percentiles, strength_offset
    from truc_env.game.observe import encoder_of

    rules = rules or tree.rules
    ab = tree.abstraction
    cards = CardClasses.of(ab, rules)
    enc = encoder_of(rules)
    L = enc.L
    D, hs = enc.D, rules.hand_size
    F = int(net.actor[0].in_features)
    A = L.size
    after_redeal = first_hands is not None
    inputs = node_inputs(tree, rules, features, after_redeal, cache_dir, progress)
    pct_of = percentiles(tuple(root_state(rules, tree.dealer, tree.score, after_redeal, tree.vira).strength))
    pct = np.array([pct_of.get(c, 0.0) for c in L.deck], dtype=np.float32)
    o_hand = enc.piece("hand").offset
    o_first = enc.offset_of("first_hand")
    o_strength = strength_offset(rules, features)
    hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
    act_class = np.full(A, -1, dtype=np.int64)
    act_class[L.play:L.play + D] = cards.card_class
    samples = first_hands if after_redeal else [None]
    if after_redeal and not reads_first_hand(net, rules):
        samples = samples[:1]  # its first-hand inputs are dead (forget_first_hand): every sample is the same pass
    first_bits = [first_hand_bits(ab, cards, first) for first in samples]
    perms = perms if perms is not None else [np.arange(D)]
    blocks = card_blocks(rules, features)
    # A relabelling only renames cards: the card columns of the input move (the same as permuting the
    # first layer's weights) and card d in hand becomes card perm[d], in the input and in the mask.
    layer0 = net.actor[0]
    dt = layer0.weight.dtype
    W0, b0 = layer0.weight.detach(), layer0.bias.detach()
    Hd = W0.shape[0]
    weights0 = []
    for perm in perms:
        src = np.arange(F)
        for o in blocks:
            src[o + perm] = o + np.arange(D)
        W0p = torch.zeros_like(W0)
        W0p[:, torch.from_numpy(src)] = W0
        weights0.append(W0p)
    passes = max(len(first_bits), len(perms))
    sigma = np.zeros(solver.n_slots)
    torch.set_num_threads(1)
    pass_parts = []
    for i in range(passes):
        W0p = weights0[i % len(perms)]
        card_w = W0p[:, o_hand:o_hand + D].T.contiguous().numpy()
        strength_w = W0p[:, o_strength:o_strength + hs].T.contiguous().numpy() if o_strength >= 0 \
            else np.zeros((0, Hd), dtype=card_w.dtype)
        first_w = torch.from_numpy(first_bits[i % len(first_bits)]).to(dt) @ W0p[:, o_first:o_first + D].T \
            if o_first >= 0 else torch.zeros(2, Hd, dtype=dt)
        pass_parts.append(((2.0 * W0p).T.contiguous(), 2.0 * card_w, 2.0 * strength_w, (2.0 * (first_w + b0)).numpy(),
                           perms[i % len(perms)].astype(np.int64)))
    # tanh(z) = 2 sigmoid(2z) - 1, its affine parts folded into the weights (the first layer's are doubled
    # above): each hidden layer is one in-place sigmoid, 3x faster here than torch's tanh
    mods = list(net.actor)
    folded = []
    for k, m in enumerate(mods[1:], start=1):
        if isinstance(m, torch.nn.Linear):
            W, b = m.weight.detach(), m.bias.detach()
            shift = b - W.sum(dim=1)  # W a + b with a = 2 s - 1
            hidden = k + 1 < len(mods) and isinstance(mods[k + 1], torch.nn.Tanh)
            folded.append(torch.nn.Linear(W.shape[1], W.shape[0], dtype=dt))
            with torch.no_grad():
                folded[-1].weight.copy_(4.0 * W if hidden else 2.0 * W)
                folded[-1].bias.copy_(2.0 * shift if hidden else shift)
        elif isinstance(m, torch.nn.Tanh):
            folded.append(None)
        else:
            raise TrucError(f"the batched table takes tanh networks; this one has a {type(m).__name__} layer")

    bar = tqdm(total=int((tree.actor != NATURE).sum()), desc="policy", unit="node", disable=not progress, mininterval=5)
    for c in chunk_rows(tree, inputs, hand_counts, cards.index, pct, F, A, chunk_nodes):  # one network call per group
        base_t = torch.from_numpy(c.base).to(dt)
        h = np.empty((len(c.row_node), Hd), dtype=pass_parts[0][1].dtype)
        for w0t, card_w, strength_w, seat_w, perm in pass_parts:
            with torch.inference_mode():
                node_part = (base_t @ w0t).numpy()  # the hand-free part of the first layer, once per node
                _first_layer_rows(node_part, seat_w, c.row_node, c.seat_of, c.row_cards, card_w,
                                  c.row_strength.astype(card_w.dtype), strength_w, h)
                y = torch.from_numpy(h)
                for layer in folded:
                    y = y.sigmoid_() if layer is None else layer(y)
                logits = y.numpy()
            scatter_rows(logits, c.src, True, c.m_node, c.m_hand, c.m_cards, perm, c.m_nonplay, L.play, c.m_nodes,
                         solver.iset_off, solver.iset_start, solver.slot_k, tree.act_start, tree.label, act_class,
                         ab.n_classes, 1.0 / passes, sigma)
        bar.update(len(c.m_nodes))
    bar.close()
    return sigma


# ---------------------------------------------------------------------------------- the real redeal
def first_hand_columns(rules: Rules) -> slice | None:
    """The network input's columns of the own hand before an accepted redeal (None without a redeal)."""
    from truc_env.game.observe import encoder_of

    enc = encoder_of(rules)
    return enc.piece("first_hand").slice if enc.has("first_hand") else None


def reads_first_hand(net, rules: Rules) -> bool:
    """Whether a PPO network's input has a first-hand block with a non-zero weight on it;
    ``forget_first_hand`` of ``truc train distill`` keeps those weights at zero."""
    cols = first_hand_columns(rules)
    return cols is not None and bool(net.actor[0].weight[:, cols].any())
