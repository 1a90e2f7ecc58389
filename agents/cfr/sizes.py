"""Game sizes for ``docs/cfr.md``: histories and information sets, with and without the abstraction.

- :func:`exact_sizes`: from a public tree, exactly (the concrete game's counts follow from the
  abstract tree: an abstract public node stands for every way of giving its class plays distinct
  cards, and a seat's concrete hand is any set of unseen cards containing what it played).
- :func:`sampled_sizes`: Knuth's unbiased estimator over the engine for any heads-up variant
  (random root-to-leaf walks weighted by the product of branching factors). A decision history ``h``
  counts ``1 / |I(h)|`` information sets, ``|I(h)|`` being the ways the unseen cards could hide the
  opponent's unplayed cards (public announcements such as envido points are ignored, so this is an
  estimate of the information sets of the concrete game). Hands count as sets of cards, whatever
  the order the engine dealt them in.

"Histories" are the decision nodes of the hand after the deal (chance nodes and leaves excluded).
"""

from __future__ import annotations

from math import comb, factorial, perm

import numpy as np

from agents.cfr.tree import NATURE, PublicTree
from truc_env.game.engine import State


def exact_sizes(tree: PublicTree) -> dict:
    ab = tree.abstraction
    W = tree.W > 0
    hs_size = np.diff(tree.hs_off)
    N, hsz = len(tree.rules.deck), tree.rules.hand_size
    mult = ab.mult
    # combined class counts per node: recover from the two seats' hand-set keys
    memo: dict = {}
    abs_hist = 0
    conc_hist = 0
    conc_isets = 0
    for n in range(tree.n_nodes):
        s0, s1 = int(tree.hs[n, 0]), int(tree.hs[n, 1])
        q = int(tree.actor[n])
        if q == NATURE:  # an envido or flor announcement: no decision
            continue
        key = (s0, s1, q)
        hit = memo.get(key)
        if hit is None:
            P0, P1 = tree.hs_counts[s0], tree.hs_counts[s1]
            k = [a + b for a, b in zip(P0, P1)]
            tot, own0, own1 = sum(k), sum(P0), sum(P1)
            ways = 1
            for m, kc in zip(mult, k):
                ways *= perm(m, kc)
            pairs = int(W[np.ix_(tree.hand_set(s0), tree.hand_set(s1))].sum())
            own = (own0, own1)[q]
            c_hist = ways * comb(N - tot, hsz - own0) * comb(N - tot - (hsz - own0), hsz - own1)
            c_iset = ways * comb(N - tot, hsz - own)
            hit = memo[key] = (pairs, c_hist, c_iset)
        abs_hist += hit[0]
        conc_hist += hit[1]
        conc_isets += hit[2]
    decide = tree.actor != NATURE
    abs_isets = int(hs_size[tree.hs[decide, tree.actor[decide]]].sum())
    if tree.rules.envido or tree.rules.flor:  # every card its own class: the tree is the concrete game
        conc_hist, conc_isets = abs_hist, abs_isets
    return {"public_nodes": int(decide.sum()), "histories": conc_hist, "infosets": conc_isets,
            "histories_abstract": abs_hist, "infosets_abstract": abs_isets}


def _hidden_ways(state: State, seat: int) -> int:
    """How many card sets the actor cannot tell apart: the opponent's unplayed (and first) hands."""
    r = state.rules
    opp = 1 - seat
    known = set(state.dealt_hands[seat]) | {c for s, c in _played(state)}
    for old in state.old_hands:
        known |= set(old[seat])
    if state.vira >= 0:
        known.add(state.vira)
    unknown = len(r.deck) - len(known)
    ways = 1
    for _old in state.old_hands:  # the opponent's first hand, never shown
        ways *= comb(unknown, r.hand_size)
        unknown -= r.hand_size
    opp_unplayed = len([c for c in state.hands[opp] if c >= 0])
    return ways * comb(unknown, opp_unplayed)


def _played(state: State):
    L = state.L
    out = []
    for actor, a, _aux in state.history:
        if actor >= 0 and L.play <= a < L.play + len(L.deck):
            out.append((actor, L.deck[a - L.play]))
    return out


def sampled_sizes(rules, samples: int = 2000, seed: int = 0, dealer: int = 0, score=None) -> dict:
    """Knuth estimates (mean and standard error) of histories and information sets of one hand."""
    rng = np.random.default_rng(seed)
    hist = np.zeros(samples)
    isets = np.zeros(samples)
    for i in range(samples):
        s = State(rules, episode="hand", dealer=dealer, score=score)
        w = 1.0
        h = 0.0
        k = 0.0
        while not s.is_terminal():
            if s.is_chance_node():
                outs = s.chance_outcomes()
                w *= len(outs)
                s.apply_action(outs[int(rng.integers(len(outs)))][0])
                continue
            # the engine deals one card at a time: count hands as sets, not in dealt order
            ws = w / factorial(rules.hand_size) ** (rules.players * (1 + len(s.old_hands)))
            h += ws
            k += ws / _hidden_ways(s, s.current_player())
            acts = s.legal_actions()
            w *= len(acts)
            s.apply_action(acts[int(rng.integers(len(acts)))])
        hist[i], isets[i] = h, k
    se = np.sqrt(samples)
    return {"histories": float(hist.mean()), "histories_se": float(hist.std() / se),
            "infosets": float(isets.mean()), "infosets_se": float(isets.std() / se), "samples": samples}


def redeal_subtree_sizes(tree: PublicTree) -> dict:
    """Sizes of the subtree after an accepted redeal, from the redeal-free tree of the same game.

    After the redeal a seat's information is its first hand (never shown) and its new hand; the
    public tree is the redeal-free one. Concrete counts: ``C(N - played, h)`` first hands times the
    new hands; abstract counts: pairs of class multisets that fit in the deck with what was played.
    """
    ab = tree.abstraction
    N, hsz = len(tree.rules.deck), tree.rules.hand_size
    mult = ab.mult
    counts = [ab.counts(h) for h in ab.hands]
    memo: dict = {}
    conc_isets = abs_isets = conc_hist = 0
    for n in range(tree.n_nodes):
        s0, s1, q = int(tree.hs[n, 0]), int(tree.hs[n, 1]), int(tree.actor[n])
        key = (s0, s1, q)
        hit = memo.get(key)
        if hit is None:
            P = (tree.hs_counts[s0], tree.hs_counts[s1])
            k = [a + b for a, b in zip(*P)]
            tot = sum(k)
            own = sum(P[q])
            ways = 1
            for m, kc in zip(mult, k):
                ways *= perm(m, kc)
            c_iset = ways * comb(N - tot, hsz) * comb(N - tot - hsz, hsz - own)
            # both first hands hidden from each other, both new hands dealt from the rest
            rest = N - tot
            c_hist = ways * comb(rest, hsz) * comb(rest - hsz, hsz) * comb(rest - 2 * hsz, hsz - sum(P[0])) \
                * comb(rest - 3 * hsz + sum(P[0]), hsz - sum(P[1]))
            opp = P[1 - q]
            a_iset = 0
            for i in tree.hand_set((s0, s1)[q]):
                new = counts[i]
                for old in counts:
                    if all(o + x + y <= m for o, x, y, m in zip(old, new, opp, mult)):
                        a_iset += 1
            hit = memo[key] = (c_iset, a_iset, c_hist)
        conc_isets += hit[0]
        abs_isets += hit[1]
        conc_hist += hit[2]
    return {"public_nodes": tree.n_nodes, "infosets": conc_isets, "infosets_abstract": abs_isets,
            "histories": conc_hist}


def main() -> None:
    """Print the size table of docs/cfr.md (slow: builds the full Le Truc tree, samples the others)."""
    import json
    import sys

    from agents.cfr.tree import build_tree
    from truc_env import make_rules

    out = {}
    tree = build_tree(make_rules("le_truc", redeal=False))
    out["le_truc redeal:false"] = exact_sizes(tree)
    out["le_truc redeal subtree"] = redeal_subtree_sizes(tree)
    print(json.dumps(out, indent=1), flush=True)
    del tree
    for variant, opts in [("put", {}), ("truco_paulista", {"players": 2}), ("truco_mineiro", {"players": 2}),
                          ("truco_argentino", {"players": 2}), ("le_truc", {})]:
        r = make_rules(variant, **opts)
        out[f"{variant} sampled"] = sampled_sizes(r, samples=int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
        print(variant, json.dumps(out[f"{variant} sampled"]), flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
