"""Exploitability descent on the public tree: the direction in which a table loses least to a best response.

Exploitability descent (Lockhart et al., "Computing Approximate Equilibria in Sequential Adversarial
Games by Exploitability Descent", IJCAI 2019) moves each seat's policy up the gradient of its value
against a best response to it. On the public tree that gradient is exact: with the opponent fixed at
its best response, the value of a seat is linear in each of its action probabilities, and

    d value / d sigma(I, a) = own reach(I) x q(I, a)

where ``q`` is the counterfactual value (the opponent's reach and chance folded in). Subtracting the
set's value ``v(I) = sum sigma q`` changes nothing on the simplex and gives the counterfactual regret;
:func:`descent_targets` returns it per slot, normalised per information set, with the set's weight
(own reach x the regrets' total size): what a network is pulled along, rows drawn by that weight.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.cfr import kernels as K
from agents.cfr.solver import PublicTreeSolver


@njit(cache=True)
def best_response_choice(seat, actor, hs, act_start, kind, child, util, trans, hs_off, hs_hands, tr_off, tr_pos, W,
                         iset_off, iset_start, slot_k, roff, voff, reach, values, redeal_value, out, temperature):
    """Write ``seat``'s pure best response into ``out`` (its slots only), from the best-response values
    ``values`` of a ``backward(best_response=True)`` pass and the opponent's reach in ``reach``: at each
    of its information sets the action of highest value (the kernel's per-slot values, recomputed; the
    first of equals). An accepted redeal is worth ``redeal_value`` (seat 0's points).

    With ``temperature`` > 0 each set plays instead a softmax of its actions' values (points, given the
    set is reached; the best response below), so that actions within a few ``temperature`` of the best
    share the set: a smoothed response."""
    hsize = hs_off[1:] - hs_off[:-1]
    sign = 1.0 if seat == 0 else -1.0
    for i in range(actor.shape[0]):
        if actor[i] != seat:
            continue
        e0 = act_start[i]
        sp, so = hs[i, seat], hs[i, 1 - seat]
        hp = hs_hands[hs_off[sp]:hs_off[sp] + hsize[sp]]
        ho = hs_hands[hs_off[so]:hs_off[so] + hsize[so]]
        ro = roff[i, 1 - seat]
        for h in range(hsize[sp]):
            iset = iset_off[i] + h
            s0, s1 = iset_start[iset], iset_start[iset + 1]
            w = 0.0
            for b in range(hsize[so]):
                r = reach[ro + b]
                if r != 0.0:
                    w += (W[hp[h], ho[b]] if seat == 0 else W[ho[b], hp[h]]) * r
            best, arg = -1e300, s0
            for s in range(s0, s1):
                e = e0 + slot_k[s]
                if kind[e] == K.LEAF:
                    x = sign * util[e] * w
                elif kind[e] == K.REDEAL:
                    x = sign * redeal_value * w
                else:
                    t = trans[e]
                    j = h if t < 0 else tr_pos[tr_off[t] + h]
                    x = values[voff[child[e], seat] + j]
                if x > best:
                    best, arg = x, s
                out[s] = x
            if temperature > 0.0 and w > 0.0:
                z = 0.0
                for s in range(s0, s1):
                    out[s] = np.exp((out[s] - best) / (w * temperature))
                    z += out[s]
                for s in range(s0, s1):
                    out[s] /= z
            else:
                for s in range(s0, s1):
                    out[s] = 0.0
                out[arg] = 1.0


def best_response_table(solver: PublicTreeSolver, sigma: np.ndarray, seat: int, redeal_value: float = 0.0,
                        temperature: float = 0.0):
    """``sigma`` with ``seat`` playing a pure best response to it, and that response's value (``seat``'s
    points). ``redeal_value``: an accepted redeal's worth, seat 0's points. ``temperature`` > 0: each set
    of the response plays a softmax of its actions' best-response values instead (the value returned is
    still the pure response's)."""
    t = solver.tree
    solver.forward(1 - seat, sigma)
    solver.redeal_value = float(redeal_value)
    value = solver.backward(seat, sigma, best_response=True)
    out = sigma.copy()
    best_response_choice(seat, t.actor, t.hs, t.act_start, t.kind, t.child, t.util, t.trans, t.hs_off, t.hs_hands,
                         t.tr_off, t.tr_pos, t.W, solver.iset_off, solver.iset_start, solver.slot_k, solver.roff,
                         solver.voff, solver.reach, solver.values, solver.redeal_value, out, float(temperature))
    return out, value


def counterfactual_regrets(solver: PublicTreeSolver, profile: np.ndarray, seat: int, redeal_value: float = 0.0):
    """``seat``'s counterfactual regrets ``q(I, a) - v(I)`` per slot (the other seat's slots 0) and its own
    reach per information set, both seats playing ``profile``; ``redeal_value`` as above."""
    t = solver.tree
    solver.forward(1 - seat, profile)
    solver.forward(seat, profile)
    reach = solver.reach.copy()
    R = np.zeros_like(solver.R)
    S = np.zeros_like(solver.S)
    work = profile.copy()  # a CFR update rewrites the strategy it is given
    K.backward(seat, t.actor, t.hs, t.act_start, t.kind, t.child, t.util, t.trans, solver.trans1, t.hs_off,
               t.hs_hands, t.tr_off, t.tr_pos, t.W, solver.iset_off, solver.iset_start, solver.slot_k, solver.roff,
               solver.voff, work, solver.reach, solver.values, float(redeal_value), True, R, S, K.MODE_VANILLA,
               1.0, 1.0, 1.0, 1.0, False)
    node_of = np.repeat(np.arange(t.n_nodes, dtype=np.int64), np.diff(solver.iset_off))
    j = np.arange(solver.n_infosets, dtype=np.int64) - solver.iset_off[node_of]
    q = t.actor[node_of].astype(np.int64)
    mine = q == seat
    own = np.zeros(solver.n_infosets)
    own[mine] = reach[solver.roff[node_of[mine], seat] + j[mine]]
    return R, own


def descent_targets(solver: PublicTreeSolver, sigma: np.ndarray, redeal_br=(0.0, 0.0), temperature: float = 0.0) -> dict:
    """Exploitability descent's direction at ``sigma``, for both seats.

    Each seat's regrets against the other seat's best response (``redeal_br[s]``: seat ``s``'s
    best-response value after an accepted redeal, as in :func:`~agents.cfr.policy_tree.best_response_values`).
    Returns ``target`` (per slot: the regret over its set's total absolute regret, so a set's targets
    sum to 0 in absolute value 1), ``weight`` (per information set: own reach x total absolute regret,
    the set's share of the gradient) and ``br`` (each seat's best-response value, as measured).
    ``temperature`` > 0 takes the regrets against a smoothed response instead (:func:`best_response_table`):
    a best response that switches between near-equal actions from round to round pulls less one way.
    """
    target = np.zeros(solver.n_slots, dtype=np.float32)
    weight = np.zeros(solver.n_infosets)
    br = [0.0, 0.0]
    starts = solver.iset_start
    for seat in (0, 1):
        o = 1 - seat
        leaf = float(redeal_br[o]) if o == 0 else -float(redeal_br[o])  # seat 0's points, the responder's worth
        profile, br[o] = best_response_table(solver, sigma, o, leaf, temperature)
        R, own = counterfactual_regrets(solver, profile, seat, leaf)
        size = np.add.reduceat(np.abs(R).astype(np.float64), starts[:-1]) if len(R) else np.zeros(0)
        size[np.diff(starts) == 0] = 0.0
        mine = own > 0
        weight[mine] = own[mine] * size[mine]
        scale = np.repeat(np.where(size > 0, 1.0 / np.maximum(size, 1e-300), 0.0), np.diff(starts))
        slots = np.repeat(mine, np.diff(starts))
        target[slots] = (R[slots] * scale[slots]).astype(np.float32)
    return {"target": target, "weight": weight, "br": br}
