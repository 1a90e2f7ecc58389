"""Numba kernels of the public-tree solver: reach (top-down), CFR updates and best response (bottom-up).

Storage is compact: an information set is a (public node, hand of the actor's hand set) pair, and it
owns one *slot* per action that hand can take (``iset_start``/``slot_k``: the slots of information
set ``I`` are ``iset_start[I]:iset_start[I + 1]``, each naming its action's index at the node).
Information sets of node ``n`` are ``iset_off[n] + h`` for the hands ``h`` of the actor's set.

One pass touches every slot once; a leaf costs a product with a block of the chance-weight matrix
``W`` (own hand set x opponent hand set), done once per node for all its leaves. Regret updates:
mode 0 = CFR+ (regret matching+, linear averaging), 1 = discounted CFR (alpha, beta, gamma; linear
CFR is 1, 1, 1), 2 = vanilla CFR, 3 = magnetic mirror descent (``pos_discount`` is its step
size, ``neg_discount`` the magnet's weight; see :func:`backward`). Seats update alternately, as in OpenSpiel's ``CFRPlusSolver``,
and the new current strategy of an information set is computed as soon as its regrets change.

An announcement (actor ``NATURE``: envido, flor) has no information set: each seat's reach passes into the
branch its hand agrees with (``trans`` for seat 0, ``trans1`` for seat 1), and a hand's value there
is the sum over the branches it agrees with (the opponent's hands are narrowed inside each branch).
"""

from __future__ import annotations

import numpy as np
from numba import njit

MODE_PLUS, MODE_DISCOUNT, MODE_VANILLA, MODE_MMD = 0, 1, 2, 3
CHILD, LEAF, REDEAL = 0, 1, 2
NATURE = 2  # an announcement node (tree.NATURE)


@njit(cache=True)
def layout(actor, hs, act_start, kind, child, trans, hs_off, tr_off, tr_pos):
    """Offsets: information sets and their slots, reach vectors (a seat that did not act shares
    its parent's; after an announcement both seats get new ones), and value vectors per seat."""
    n = actor.shape[0]
    hsize = hs_off[1:] - hs_off[:-1]
    iset_off = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        iset_off[i + 1] = iset_off[i] + (0 if actor[i] == NATURE else hsize[hs[i, actor[i]]])
    n_isets = iset_off[n]
    iset_start = np.zeros(n_isets + 1, dtype=np.int64)
    for i in range(n):
        if actor[i] == NATURE:
            continue
        for h in range(hsize[hs[i, actor[i]]]):
            cnt = 0
            for e in range(act_start[i], act_start[i + 1]):
                t = trans[e]
                if t < 0 or tr_pos[tr_off[t] + h] >= 0:
                    cnt += 1
            iset_start[iset_off[i] + h + 1] = cnt
    for j in range(n_isets):
        iset_start[j + 1] += iset_start[j]
    slot_k = np.zeros(iset_start[n_isets], dtype=np.int8)
    for i in range(n):
        if actor[i] == NATURE:
            continue
        for h in range(hsize[hs[i, actor[i]]]):
            s = iset_start[iset_off[i] + h]
            for e in range(act_start[i], act_start[i + 1]):
                t = trans[e]
                if t < 0 or tr_pos[tr_off[t] + h] >= 0:
                    slot_k[s] = e - act_start[i]
                    s += 1
    roff = np.full((n, 2), -1, dtype=np.int64)
    roff[0, 0] = 0
    roff[0, 1] = hsize[hs[0, 0]]
    top = hsize[hs[0, 0]] + hsize[hs[0, 1]]
    for i in range(n):
        q = actor[i]
        for e in range(act_start[i], act_start[i + 1]):
            if kind[e] == CHILD:
                c = child[e]
                if q == NATURE:
                    roff[c, 0] = top
                    top += hsize[hs[c, 0]]
                    roff[c, 1] = top
                    top += hsize[hs[c, 1]]
                    continue
                roff[c, 1 - q] = roff[i, 1 - q]
                roff[c, q] = top
                top += hsize[hs[c, q]]
    voff = np.zeros((n + 1, 2), dtype=np.int64)
    for i in range(n):
        voff[i + 1, 0] = voff[i, 0] + hsize[hs[i, 0]]
        voff[i + 1, 1] = voff[i, 1] + hsize[hs[i, 1]]
    return iset_off, iset_start, slot_k, roff, top, voff


@njit(cache=True)
def regret_matching(iset_start, R, sigma, first, last):
    """Current strategy of information sets ``first:last`` from their cumulative regrets."""
    for j in range(first, last):
        a, b = iset_start[j], iset_start[j + 1]
        tot = 0.0
        for s in range(a, b):
            if R[s] > 0:
                tot += R[s]
        for s in range(a, b):
            if tot > 0:
                sigma[s] = R[s] / tot if R[s] > 0 else 0.0
            else:
                sigma[s] = 1.0 / (b - a)


@njit(cache=True)
def initial_strategy(actor, iset_off, iset_start, R, sigma):
    for i in range(actor.shape[0]):
        regret_matching(iset_start, R, sigma, iset_off[i], iset_off[i + 1])


@njit(cache=True)
def normalize(iset_start, S, out):
    """The average strategy: S normalised per information set (uniform where S sums to 0)."""
    for j in range(iset_start.shape[0] - 1):
        a, b = iset_start[j], iset_start[j + 1]
        tot = 0.0
        for s in range(a, b):
            tot += S[s]
        for s in range(a, b):
            out[s] = S[s] / tot if tot > 0 else 1.0 / (b - a)


@njit(cache=True)
def forward(seat, actor, hs, act_start, kind, child, trans, trans1, hs_off, tr_off, tr_pos, iset_off, iset_start,
            slot_k, roff, sigma, reach):
    """Reach probability of ``seat``'s hands at every node (its own contributions only)."""
    n = actor.shape[0]
    hsize = hs_off[1:] - hs_off[:-1]
    reach[roff[0, seat]:roff[0, seat] + hsize[hs[0, seat]]] = 1.0
    for i in range(n):
        if actor[i] == NATURE:  # an announcement: the hands it allows keep their reach
            src = roff[i, seat]
            for e in range(act_start[i], act_start[i + 1]):
                if kind[e] != CHILD:
                    continue
                t = trans[e] if seat == 0 else trans1[e]
                dst = roff[child[e], seat]
                for h in range(hsize[hs[i, seat]]):
                    j = tr_pos[tr_off[t] + h]
                    if j >= 0:
                        reach[dst + j] = reach[src + h]
            continue
        if actor[i] != seat:
            continue
        src = roff[i, seat]
        e0 = act_start[i]
        for h in range(hsize[hs[i, seat]]):
            iset = iset_off[i] + h
            r = reach[src + h]
            for s in range(iset_start[iset], iset_start[iset + 1]):
                e = e0 + slot_k[s]
                if kind[e] != CHILD:
                    continue
                t = trans[e]
                j = h if t < 0 else tr_pos[tr_off[t] + h]
                reach[roff[child[e], seat] + j] = r * sigma[s]


@njit(cache=True)
def backward(seat, actor, hs, act_start, kind, child, util, trans, trans1, hs_off, hs_hands, tr_off, tr_pos, W,
             iset_off, iset_start, slot_k, roff, voff, sigma, reach, values, redeal_value,
             update, R, S, mode, avg_weight, pos_discount, neg_discount, avg_discount, best_response):
    """Counterfactual values of ``seat`` bottom-up; returns the root's value (expected points).

    ``update``: add regrets and average-strategy mass, then refresh the current strategy (one CFR
    half-iteration for ``seat``). ``best_response``: ``seat`` maximises instead of following
    ``sigma`` (exact best response).

    ``mode`` 3 (MMD, Sokota et al. 2023, behavioural form): at each information set, with ``Q`` the
    action values given the set (counterfactual values over the opponent's and chance's reach of it),
    step size ``eta`` (``pos_discount``) and magnet weight ``alpha`` (``neg_discount``) towards the
    uniform policy: ``sigma' ~ (sigma * exp(eta * Q)) ** (1 / (1 + eta * alpha))``. The values passed up
    are the regularised game's (each set's value minus ``alpha`` x its reach x KL(sigma || uniform)),
    whose equilibrium (a QRE) MMD's last iterate converges to; ``S`` holds the last iterate.
    """
    n = actor.shape[0]
    hsize = hs_off[1:] - hs_off[:-1]
    sign = 1.0 if seat == 0 else -1.0
    nh = W.shape[0]
    w = np.zeros(nh)
    g = np.zeros(nh)
    vk = np.zeros(64)
    for i in range(n - 1, -1, -1):
        q = actor[i]
        na = act_start[i + 1] - act_start[i]
        e0 = act_start[i]
        sp = hs[i, seat]
        so = hs[i, 1 - seat]
        np_ = hsize[sp]
        no = hsize[so]
        hp = hs_hands[hs_off[sp]:hs_off[sp] + np_]
        ho = hs_hands[hs_off[so]:hs_off[so] + no]
        vo = voff[i, seat]
        if q == NATURE:  # an announcement: each hand pair takes the one branch it is consistent with
            ro = roff[i, 1 - seat]
            for h in range(np_):
                values[vo + h] = 0.0
            for k in range(na):
                e = e0 + k
                tp = trans[e] if seat == 0 else trans1[e]
                to = trans1[e] if seat == 0 else trans[e]
                if kind[e] == CHILD:
                    vc = voff[child[e], seat]
                    for h in range(np_):
                        j = tr_pos[tr_off[tp] + h]
                        if j >= 0:
                            values[vo + h] += values[vc + j]
                else:
                    for h in range(np_):
                        if tr_pos[tr_off[tp] + h] < 0:
                            continue
                        acc = 0.0
                        for b in range(no):
                            r = reach[ro + b]
                            if r != 0.0 and tr_pos[tr_off[to] + b] >= 0:
                                acc += (W[hp[h], ho[b]] if seat == 0 else W[ho[b], hp[h]]) * r
                        values[vo + h] += sign * util[e] * acc
            continue
        has_leaf = False
        for k in range(na):
            if kind[e0 + k] != CHILD:
                has_leaf = True
        if q == seat:
            if has_leaf or (update and mode == 3):
                ro = roff[i, 1 - seat]
                for a in range(np_):
                    acc = 0.0
                    for b in range(no):
                        r = reach[ro + b]
                        if r != 0.0:
                            acc += (W[hp[a], ho[b]] if seat == 0 else W[ho[b], hp[a]]) * r
                    w[a] = acc
            rp = roff[i, seat]
            for h in range(np_):
                iset = iset_off[i] + h
                s0, s1 = iset_start[iset], iset_start[iset + 1]
                v = 0.0
                best = -1e300
                for s in range(s0, s1):
                    e = e0 + slot_k[s]
                    kd = kind[e]
                    if kd == LEAF:
                        x = sign * util[e] * w[h]
                    elif kd == REDEAL:
                        x = sign * redeal_value * w[h]
                    else:
                        t = trans[e]
                        j = h if t < 0 else tr_pos[tr_off[t] + h]
                        x = values[voff[child[e], seat] + j]
                    vk[s - s0] = x
                    v += sigma[s] * x
                    if x > best:
                        best = x
                if best_response:
                    values[vo + h] = best
                    continue
                values[vo + h] = v
                if update and mode == 3:
                    eta, magnet, wh, n_a = pos_discount, neg_discount, w[h], s1 - s0
                    kl = 0.0
                    for s in range(s0, s1):
                        if sigma[s] > 0:
                            kl += sigma[s] * np.log(sigma[s] * n_a)
                    values[vo + h] = v - magnet * wh * kl
                    if wh > 0:
                        top = -1e300
                        for s in range(s0, s1):
                            x = (np.log(max(sigma[s], 1e-30)) + eta * vk[s - s0] / wh) / (1.0 + eta * magnet)
                            vk[s - s0] = x
                            if x > top:
                                top = x
                        tot = 0.0
                        for s in range(s0, s1):
                            vk[s - s0] = np.exp(vk[s - s0] - top)
                            tot += vk[s - s0]
                        for s in range(s0, s1):
                            sigma[s] = vk[s - s0] / tot
                    for s in range(s0, s1):
                        S[s] = sigma[s]
                elif update:
                    reach_h = reach[rp + h]
                    tot = 0.0
                    for s in range(s0, s1):
                        r = R[s] + (vk[s - s0] - v)
                        if mode == 0:
                            if r < 0:
                                r = 0.0
                            S[s] += avg_weight * reach_h * sigma[s]
                        elif mode == 1:
                            r *= pos_discount if r > 0 else neg_discount
                            S[s] = (S[s] + reach_h * sigma[s]) * avg_discount
                        else:
                            S[s] += reach_h * sigma[s]
                        R[s] = r
                        if r > 0:
                            tot += r
                    for s in range(s0, s1):
                        if tot > 0:
                            sigma[s] = R[s] / tot if R[s] > 0 else 0.0
                        else:
                            sigma[s] = 1.0 / (s1 - s0)
        else:
            for h in range(np_):
                values[vo + h] = 0.0
            for k in range(na):
                e = e0 + k
                if kind[e] == CHILD:
                    vc = voff[child[e], seat]
                    for h in range(np_):
                        values[vo + h] += values[vc + h]
            if has_leaf:
                ro = roff[i, q]
                for b in range(no):
                    acc = 0.0
                    iset = iset_off[i] + b
                    for s in range(iset_start[iset], iset_start[iset + 1]):
                        e = e0 + slot_k[s]
                        kd = kind[e]
                        if kd == LEAF:
                            acc += sigma[s] * util[e]
                        elif kd == REDEAL:
                            acc += sigma[s] * redeal_value
                    g[b] = sign * acc * reach[ro + b]
                for a in range(np_):
                    acc = 0.0
                    for b in range(no):
                        if g[b] != 0.0:
                            acc += (W[hp[a], ho[b]] if seat == 0 else W[ho[b], hp[a]]) * g[b]
                    values[vo + a] += acc
    total = 0.0
    for h in range(hsize[hs[0, seat]]):
        total += values[voff[0, seat] + h]
    return total
