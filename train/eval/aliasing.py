"""The aliasing of a network's input: information sets that a flat observation cannot tell apart.

Two information sets alias when a network's input is the same at both (the same seat to act, the same
hand, the same hand-free input: stake, raises, last raiser, cards on the table...) though their
histories differ: the network must play the same at both. :func:`aliased_table` replaces a strategy
table's play at each group by the group's average, weighted by the seat's own reach times the hand's
chance (what a network that fitted the table perfectly would play), so that measuring it exactly says
what the observation alone costs (``scripts/aliasing_floor.py``).
"""

from __future__ import annotations

import numpy as np

from agents.cfr.solver import PublicTreeSolver


def group_nodes(tree, inputs) -> np.ndarray:
    """Per public node, the id of its group (-1: no seat acts): the nodes where every (node, hand) network
    input is the same, as :func:`train.eval.exploitability.input_groups` finds them for the batched table."""
    from train.eval.net_tables import input_groups

    reps, offsets, members = input_groups(tree, inputs)
    group = np.full(tree.n_nodes, -1, dtype=np.int64)
    group[members] = np.repeat(np.arange(len(reps), dtype=np.int64), np.diff(offsets))
    return group


def aliased_table(tree, solver: PublicTreeSolver, sigma: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, dict]:
    """``sigma`` averaged over each group of aliased information sets (same group, same hand), per action
    label, weighted by own reach x the hand's chance; and counts of what aliased."""
    solver.forward(0, sigma)
    solver.forward(1, sigma)
    n_isets = solver.n_infosets
    node_of = np.repeat(np.arange(tree.n_nodes, dtype=np.int64), np.diff(solver.iset_off))
    q = tree.actor[node_of].astype(np.int64)
    j = np.arange(n_isets, dtype=np.int64) - solver.iset_off[node_of]
    hand = tree.hs_hands[tree.hs_off[tree.hs[node_of, q]] + j].astype(np.int64)
    prior = tree.abstraction.deal_weights().sum(axis=1)
    w = solver.reach[solver.roff[node_of, q] + j] * prior[hand]
    del q, j
    per_set = np.diff(solver.iset_start)
    slot_set = np.repeat(np.arange(n_isets, dtype=np.int64), per_set)
    slot_label = tree.label[tree.act_start[node_of[slot_set]] + solver.slot_k.astype(np.int64)].astype(np.int64)
    n_labels = int(slot_label.max()) + 1
    set_key = group[node_of] * tree.abstraction.n_hands + hand  # (group, hand): what the network sees
    del hand
    uniq_sets, set_id = np.unique(set_key, return_inverse=True)
    mass = np.bincount(set_id, weights=w)
    slot_key = set_id[slot_set] * n_labels + slot_label
    uniq_slots, slot_id = np.unique(slot_key, return_inverse=True)
    avg = np.bincount(slot_id, weights=w[slot_set] * sigma) / np.maximum(mass[uniq_slots // n_labels], 1e-300)
    out = np.where(mass[set_id[slot_set]] > 0, avg[slot_id], sigma)
    total = np.add.reduceat(out, solver.iset_start[:-1])
    out = out / np.repeat(np.where(total > 0, total, 1.0), per_set)
    stats = {"infosets": int(n_isets), "groups": int(len(uniq_sets)),
             "aliased_infosets": int(n_isets - len(uniq_sets)),
             "groups_of_nodes": int(group.max() + 1), "acting_nodes": int((group >= 0).sum())}
    return out.astype(sigma.dtype), stats
