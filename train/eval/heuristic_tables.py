"""A heuristic player's exact table on the public tree, filled in batches from the observation of every row.

``heuristic:*`` agents draw their bluffs and blind slots from a generator, so they cannot be asked for
probabilities one engine state at a time; but :class:`~agents.players.heuristic_batch.BatchHeuristic`
decides from the observation vector and the mask alone, and its :meth:`probabilities` integrates the
draws exactly. Every (node, hand) row's observation is its node's hand-free input (the ``observation``
features of :func:`~train.eval.node_inputs.node_inputs`, the same cache as a network's) with the hand's
cards written in, so the table costs one batched decision per row (three for ``bluffer``).

The heuristic reads strengths only (its choice between two cards of one strength goes by action name,
and the strength abstraction plays both as one class), so a suit relabelling does not change its table:
one canonical pass is exact, and with a vira each subgame's table is that of every vira in it. It does
not read the first hand of a redealt hand either: the hand after a redeal takes one pass."""

from __future__ import annotations

import numpy as np

from agents.cfr.policy_tree import CardClasses, scatter_rows
from agents.cfr.solver import PublicTreeSolver
from agents.cfr.tree import NATURE, PublicTree
from train.eval.net_tables import chunk_rows
from train.eval.node_inputs import node_inputs
from truc_env.errors import TrucError
from truc_env.game.rules import Rules

FEATURES = "observation"  # the flat vector the batched heuristic reads
ROWS = 16384  # rows decided at once


def tabulate_heuristic(tree: PublicTree, solver: PublicTreeSolver, style: str, rules: Rules | None = None,
                       after_redeal: bool = False, chunk_nodes: int = 256, progress: bool = False,
                       cache_dir: str | None = None) -> np.ndarray:
    """The exact table (one probability per solver slot) of ``heuristic:<style>``, batched over public nodes.

    ``after_redeal``: the tree is the hand after an accepted redeal (its observation has the first-hand
    section, which the heuristic does not read). The test suite checks it against
    :func:`~train.eval.exploitability.tabulate_agent`, which asks real engine states."""
    from tqdm import tqdm

    from agents.players.heuristic_batch import BatchHeuristic
    from truc_env.game.observe import encoder_of

    rules = rules or tree.rules
    if tree.abstraction.kind != "strength":
        raise TrucError("the batched heuristic table takes the strength abstraction (the heuristic plays one card "
                        "of a strength by name, which the abstraction 'none' would tell apart)")
    player = BatchHeuristic(rules, style)
    ab = tree.abstraction
    cards = CardClasses.of(ab, rules)
    enc = encoder_of(rules)
    L = enc.L
    D, hs, A = enc.D, rules.hand_size, L.size
    inputs = node_inputs(tree, rules, FEATURES, after_redeal, cache_dir, progress)
    F = enc.size
    o_hand = enc.piece("hand").offset
    pct = np.zeros(D, dtype=np.float32)  # strength features: not in the observation
    hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
    act_class = np.full(A, -1, dtype=np.int64)
    act_class[L.play:L.play + D] = cards.card_class
    identity = np.arange(D, dtype=np.int64)
    sigma = np.zeros(solver.n_slots)
    bar = tqdm(total=int((tree.actor != NATURE).sum()), desc="policy", unit="node", disable=not progress, mininterval=5)
    for c in chunk_rows(tree, inputs, hand_counts, cards.index, pct, F, A, chunk_nodes):
        # The heuristic reads the observation and the legal actions: members of a group with the same non-card
        # actions decide alike, so it decides once per distinct (representative, non-card actions) and hand.
        packed = np.packbits(c.m_nonplay, axis=1)
        key = np.concatenate([c.m_rep.astype(np.int64)[:, None].view(np.uint8), packed], axis=1)
        key = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1]))).ravel()
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        u_rep = c.m_rep[first]
        count = c.row_start[u_rep + 1] - c.row_start[u_rep]
        u_off = np.zeros(len(first) + 1, dtype=np.int64)
        np.cumsum(count, out=u_off[1:])
        u_of_row = np.repeat(np.arange(len(first)), count)
        src = np.repeat(c.row_start[u_rep] - u_off[:-1], count) + np.arange(u_off[-1])  # the representative's row
        probs = np.empty((u_off[-1], A))
        for lo in range(0, len(src), ROWS):  # in slices: a chunk of groups with many hands stays small
            sl = slice(lo, lo + ROWS)
            cards_in = c.row_cards[src[sl]]
            obs = c.base[c.row_node[src[sl]]]
            mask = c.m_nonplay[first[u_of_row[sl]]]
            held = cards_in >= 0
            r_idx = np.repeat(np.arange(len(cards_in)), hs)[held.ravel()]
            obs[r_idx, o_hand + cards_in[held]] = 1.0
            mask[r_idx, L.play + cards_in[held]] = True
            probs[sl] = player.probabilities(obs, mask)
        row_of = u_off[inv[c.m_node]] + c.m_hand  # each member row's decided row
        scatter_rows(probs, row_of, False, c.m_node, c.m_hand, c.m_cards, identity, c.m_nonplay, L.play, c.m_nodes,
                     solver.iset_off, solver.iset_start, solver.slot_k, tree.act_start, tree.label, act_class,
                     ab.n_classes, 1.0, sigma)
        bar.update(len(c.m_nodes))
    bar.close()
    return sigma
