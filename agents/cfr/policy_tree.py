"""A policy as a tabular strategy on the public tree: the tree side, without any agent.

The public-tree solver (:mod:`agents.cfr.solver`) measures the exact best response to a strategy
given as one action distribution per information set (public node, own dealt hand). This module has
what it takes to write any policy into that table and best-respond to it; asking a particular agent
(a network, a strategy file, the random agent) lives above both agent families, in
:mod:`train.eval.exploitability`.

**Projection.** With the strength abstraction an information set stands for every concrete way of
giving its classes suits. A policy is asked at one *canonical* assignment: the cards played in the
hand take the lowest free card of their class in order of play, the seat's unplayed cards the next
ones, and a hand dealt before an accepted redeal the highest ones. The seat's dealt order is
canonical too: the cards it played, in play order, then the rest. A card play's probability is that
of every card of the class in hand summed (:func:`slot_probabilities`). :func:`suit_permutations`
gives relabellings of the suits that change nothing in the game, to average a policy that is not
suit-blind over them. With ``abstraction="none"`` every card is its own class.

- :func:`infoset_state`: a real engine state at an information set (any agent, small games);
- :func:`root_state`, :func:`hand_rows`, :func:`scatter_rows`: one state per public node, the
  hand-dependent parts of a batch's rows and the batch's answers added to the table;
- :func:`best_response_values`: each seat's exact best response to the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from agents.cfr.solver import PublicTreeSolver
from agents.cfr.tree import PLAY, STUCK, PublicTree, announcement, is_reveal
from truc_env.errors import TrucError
from truc_env.game.engine import State
from truc_env.game.rules import Rules


# ---------------------------------------------------------------------------------- cards
@dataclass(frozen=True)
class CardClasses:
    """The cards of each class in canonical order, as card ids and deck indices."""

    members: tuple  # class -> tuple of card ids (ascending)
    index: np.ndarray  # [class, k] -> deck index of the k-th card of the class (-1 past the end)
    card_class: np.ndarray  # deck index -> class (-1: the vira, in no class)

    @classmethod
    def of(cls, tree_or_ab, rules: Rules) -> CardClasses:
        ab = getattr(tree_or_ab, "abstraction", tree_or_ab)
        from truc_env.game.actions import layout_of

        L = layout_of(rules)
        members = tuple(tuple(sorted(c for c in rules.deck if ab.card_class.get(c) == k)) for k in range(ab.n_classes))
        index = np.full((ab.n_classes, max(ab.mult)), -1, dtype=np.int64)
        for k, ms in enumerate(members):
            index[k, :len(ms)] = [L.card_index[c] for c in ms]
        card_class = np.array([ab.card_class.get(c, -1) for c in L.deck], dtype=np.int64)  # the vira: -1
        return cls(members, index, card_class)


def first_hand_bits(ab, cards: CardClasses, first) -> np.ndarray:
    """``[seat, deck index]``: each seat's hand dealt before an accepted redeal (``first``: a class hand
    per seat, or None for none) at its canonical cards, the highest of each class."""
    bits = np.zeros((2, len(cards.card_class)), dtype=np.float32)
    if first is not None:
        for q in range(2):
            for c, k in enumerate(ab.counts(first[q])):
                for t in range(k):
                    bits[q, cards.index[c, len(cards.members[c]) - 1 - t]] = 1.0
    return bits


def suit_permutations(ab, rules: Rules, k: int, seed: int = 0) -> list[np.ndarray]:
    """``k`` permutations of the deck indices, each within every class (a relabelling of suits that
    changes nothing in the game); ``k == 1``: the identity alone (the canonical assignment)."""
    cards = CardClasses.of(ab, rules)
    n = len(cards.card_class)
    if k <= 1:
        return [np.arange(n)]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(k):
        perm = np.arange(n)
        for c in range(len(cards.members)):
            idx = cards.index[c][cards.index[c] >= 0]
            perm[idx] = rng.permutation(idx)
        out.append(perm)
    return out


def parents_of(tree: PublicTree) -> tuple[np.ndarray, np.ndarray]:
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    edge = np.full(tree.n_nodes, -1, dtype=np.int64)
    ok = tree.child >= 0
    parent[tree.child[ok]] = np.repeat(np.arange(tree.n_nodes), np.diff(tree.act_start))[ok]
    edge[tree.child[ok]] = np.flatnonzero(ok)
    return parent, edge


def node_path(tree: PublicTree, node: int, parents=None) -> list[tuple[int, int]]:
    """(actor, label) of each public action from the root to ``node``."""
    parent, edge = parents if parents is not None else parents_of(tree)
    out = []
    while node > 0:
        up = int(parent[node])
        out.append((int(tree.actor[up]), int(tree.label[edge[node]])))
        node = up
    return out[::-1]


def deal_cards(state: State, hands: list[list[int]], vira: int = -1) -> None:
    """Deal these cards (each seat's list in dealt order) by explicit chance outcomes, and turn
    ``vira`` when the deal turns one (Paulista)."""
    taken = [0] * len(hands)
    while state.is_chance_node():
        seat = state.deal_seq[-1]
        if seat < 0:
            if vira < 0:
                raise TrucError(f"{state.rules.variant} turns a vira: say which (vira=card)")
            state.apply_action(vira)
            continue
        state.apply_action(hands[seat][taken[seat]])
        taken[seat] += 1


def infoset_state(rules: Rules, ab, dealer: int, score, path, actor: int, hand: tuple, first_hand=None,
                  perm: np.ndarray | None = None, others=None) -> State | None:
    """A real engine state at an information set: public ``path`` ((actor, label) pairs), ``actor``'s
    dealt hand (class tuple), and with ``first_hand`` (class tuple) the hand after an accepted redeal
    in which ``actor`` was first dealt that.

    Cards follow the canonical assignment (module docstring), mapped through ``perm`` (a permutation of
    deck indices within each class, see :func:`suit_permutations`) when given. None where the
    engine cannot realise it (the hand holds a card the opponent played; a first hand too).
    ``others`` (with envido, where every card is its own class): the opponent's hands the public
    actions allow; the first one that fits is dealt, so the engine announces the path's envido result.
    Paulista: the deal turns the abstraction's vira (``ab.vira``), which no hand holds.
    """
    members = [list(m) for m in CardClasses.of(ab, rules).members]
    if perm is not None:
        from truc_env.game.actions import layout_of

        L = layout_of(rules)
        members = [[L.deck[perm[L.card_index[c]]] for c in m] for m in members]
    used = [0] * len(members)
    played: list[list[int]] = [[], []]
    cards = []
    for seat, lab in path:
        if lab >= PLAY:
            c = lab - PLAY
            if used[c] >= len(members[c]):
                return None
            cards.append(members[c][used[c]])
            used[c] += 1
            played[seat].append(cards[-1])
    need = list(ab.counts(hand))
    for card in played[actor]:
        need[ab.card_class[card]] -= 1
    if min(need) < 0 or any(used[c] + k > len(members[c]) for c, k in enumerate(need)):
        return None
    own = played[actor] + [x for c, k in enumerate(need) for x in members[c][used[c]:used[c] + k]]
    taken = set(own) | set(played[1 - actor]) | ({ab.vira} if ab.vira >= 0 else set())
    first = None
    if first_hand is not None:
        first = [[], []]
        for c, k in enumerate(ab.counts(first_hand)):
            free = [x for x in reversed(members[c]) if x not in taken]
            if len(free) < k:
                return None
            first[actor] += free[:k]
            taken |= set(free[:k])
    if others is None:
        other = played[1 - actor] + [x for x in reversed(rules.deck) if x not in taken][:rules.hand_size - len(played[1 - actor])]
    else:
        other = None
        for oh in others:
            cards_o = [members[c][0] for c in oh]
            if not set(cards_o) & set(own) and set(played[1 - actor]) <= set(cards_o):
                other = played[1 - actor] + [x for x in cards_o if x not in played[1 - actor]]
                break
        if other is None:
            return None
    taken |= set(other)
    hands = [own, other] if actor == 0 else [other, own]
    st = State(rules, episode="hand", dealer=dealer, score=list(score))
    if first is not None:
        first[1 - actor] = [x for x in reversed(rules.deck) if x not in taken][:rules.hand_size]
        deal_cards(st, first)
        st.apply_action(st.L.REDEAL)
        st.apply_action(st.L.ACCEPT)
    deal_cards(st, hands, ab.vira)
    it = iter(cards)
    for _, lab in path:
        if is_reveal(lab):  # the engine announces it from the dealt hands: check it agrees
            if st.env_result != announcement(lab, dealer):
                return None
            continue
        st.apply_action(st.L.play + st.L.card_index[next(it)] if lab >= PLAY else lab)
    return st


# ---------------------------------------------------------------------------------- tables
def slot_probabilities(tree: PublicTree, solver: PublicTreeSolver, node: int, j: int, probs: np.ndarray, held: list[int],
                card_class: np.ndarray, play: int) -> tuple[int, np.ndarray]:
    """The agent's probabilities (over action ids) as the slots of information set (node, j-th hand)."""
    i = solver.iset_off[node] + j
    a, b = int(solver.iset_start[i]), int(solver.iset_start[i + 1])
    labs = tree.label[tree.act_start[node] + solver.slot_k[a:b].astype(np.int64)]
    out = np.zeros(b - a)
    for k, lab in enumerate(labs):
        if lab >= PLAY:
            out[k] = sum(probs[play + d] for d in held if card_class[d] == lab - PLAY)
        elif lab == STUCK:  # no engine action: only hands of chance weight 0 take it
            out[k] = 0.0
        else:
            out[k] = probs[lab]
    tot = out.sum()
    return a, out / tot if tot > 0 else np.full(b - a, 1.0 / (b - a))


@njit(cache=True)
def hand_row(h, used, own_played, hand_counts, card_index, pct, hand_size, vals, cards_out, strength_out):
    """One row's hand-dependent inputs: the deck indices of hand ``h``'s unplayed cards (canonical
    assignment, -1 past the last) and its sorted card strengths, at a node where ``used`` cards of
    each class are played, ``own_played`` of them by the seat."""
    cards_out[:] = -1
    nc = 0
    nv = 0
    for c in range(card_index.shape[0]):
        k = hand_counts[h, c] - own_played[c]
        for t in range(k):
            idx = used[c] + t
            if idx >= card_index.shape[1] or card_index[c, idx] < 0:
                idx = used[c] - 1 if used[c] > 0 else 0  # unreachable hand: any card
            d = card_index[c, idx]
            seen = False
            for u in range(nc):
                seen = seen or cards_out[u] == d
            if not seen and nc < cards_out.shape[0]:
                cards_out[nc] = d
                nc += 1
            if nv < vals.shape[0]:
                vals[nv] = pct[d]
                nv += 1
    strength_out[:] = 0.0
    srt = np.sort(vals[:nv])[::-1]
    for t in range(min(nv, hand_size)):
        strength_out[t] = srt[t]


@njit(cache=True)
def hand_rows(node_set, used, own_played, hs_off, hs_hands, hand_counts, card_index, pct, hand_size,
               row_node, row_hand, row_cards, row_strength):
    """Per (node, hand) row of a chunk: :func:`hand_row` for every hand of each node's hand set."""
    r = 0
    vals = np.zeros(hand_size + 8, dtype=np.float32)
    for b in range(node_set.shape[0]):
        s = node_set[b]
        for j in range(hs_off[s + 1] - hs_off[s]):
            hand_row(hs_hands[hs_off[s] + j], used[b], own_played[b], hand_counts, card_index, pct, hand_size, vals,
                     row_cards[r], row_strength[r])
            row_node[r] = b
            row_hand[r] = j
            r += 1
    return r


@njit(cache=True)
def scatter_rows(values, src, logits, row_node, row_hand, row_cards, perm, nonplay, play, nodes, iset_off, iset_start,
                 slot_k, act_start, label, act_class, n_classes, weight, sigma):
    """Each row's distribution over its legal actions (the node's non-card actions and the hand's cards,
    relabelled by ``perm``), card plays summed per class, ``weight`` x that added to the row's slots. Row ``r``
    reads row ``src[r]`` of ``values``: logits (``logits``: a softmax) or probabilities (renormalised)."""
    A = values.shape[1]
    legal = np.zeros(A, dtype=np.bool_)
    p = np.zeros(A)
    pc = np.zeros(n_classes)
    for r in range(src.shape[0]):
        b = row_node[r]
        n = nodes[b]
        v = values[src[r]]
        for a in range(A):
            legal[a] = nonplay[b, a]
        for u in range(row_cards.shape[1]):
            if row_cards[r, u] >= 0:
                legal[play + perm[row_cards[r, u]]] = True
        top = -np.inf
        if logits:
            for a in range(A):
                if legal[a] and v[a] > top:
                    top = v[a]
        tot = 0.0
        for a in range(A):
            if not legal[a]:
                p[a] = 0.0
            elif logits:
                p[a] = np.exp(np.float64(v[a]) - np.float64(top))
            else:
                p[a] = v[a]
            tot += p[a]
        pc[:] = 0.0
        for a in range(A):
            p[a] /= tot
            if act_class[a] >= 0:
                pc[act_class[a]] += p[a]
        i = iset_off[n] + row_hand[r]
        a0, a1 = iset_start[i], iset_start[i + 1]
        tot = 0.0
        for s in range(a0, a1):
            lab = label[act_start[n] + slot_k[s]]
            tot += pc[lab - PLAY] if lab >= PLAY else (0.0 if lab == STUCK else p[lab])
        for s in range(a0, a1):
            lab = label[act_start[n] + slot_k[s]]
            q = pc[lab - PLAY] if lab >= PLAY else (0.0 if lab == STUCK else p[lab])  # STUCK: no engine action
            sigma[s] += weight * (q / tot if tot > 0 else 1.0 / (a1 - a0))


@njit(cache=True)
def _uniform_rows(actor, hs, hs_off, hs_hands, played, hand_counts, act_start, label, iset_off, iset_start, slot_k,
                  nature, sigma):
    for n in range(actor.shape[0]):
        q = actor[n]
        if q == nature:
            continue
        s = hs[n, q]
        for j in range(hs_off[s + 1] - hs_off[s]):
            h = hs_hands[hs_off[s] + j]
            i = iset_off[n] + j
            a0, a1 = iset_start[i], iset_start[i + 1]
            tot = 0.0
            for t in range(a0, a1):
                lab = label[act_start[n] + slot_k[t]]
                w = 1.0
                if lab >= PLAY:
                    w = max(hand_counts[h, lab - PLAY] - played[s, lab - PLAY], 0)
                elif lab == STUCK:
                    w = 0.0
                sigma[t] = w
                tot += w
            for t in range(a0, a1):
                sigma[t] = sigma[t] / tot if tot > 0 else 1.0 / (a1 - a0)


def uniform_table(tree: PublicTree, solver: PublicTreeSolver) -> np.ndarray:
    """The table of the uniformly random policy over the engine's legal actions, written directly: every
    non-card action weight 1, a class play the number of the hand's unplayed cards of that class (no
    card play for ``STUCK``). Where every card is public by its class alone (no envido, no flor), legal
    actions depend only on the public node and the hand, so this is what asking the random agent at
    every information set gives (tested), without an engine state per information set."""
    from agents.cfr.tree import NATURE

    ab = tree.abstraction
    played = np.array(tree.hs_counts, dtype=np.int64).reshape(len(tree.hs_counts), -1)
    hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
    sigma = np.zeros(solver.n_slots)
    # the edge- and slot-sized arrays as they are (no int64 copies: 5 GB on a 40-card subgame)
    _uniform_rows(tree.actor.astype(np.int64), tree.hs.astype(np.int64), tree.hs_off, tree.hs_hands.astype(np.int64),
                  played, hand_counts, tree.act_start, tree.label, solver.iset_off, solver.iset_start,
                  solver.slot_k, NATURE, sigma)
    return sigma


def root_state(rules: Rules, dealer: int, score, after_redeal: bool, vira: int = -1) -> State:
    """The public tree's root as an engine state: every card playable by both seats (Paulista: after
    ``vira`` is turned, every card but it)."""
    st = State(rules, episode="hand", dealer=dealer, score=list(score))
    deck = [c for c in rules.deck if c != vira]
    hs = rules.hand_size
    if after_redeal:
        deal_cards(st, [deck[:hs], deck[hs:2 * hs]])
        st.apply_action(st.L.REDEAL)
        st.apply_action(st.L.ACCEPT)
    deal_cards(st, [deck[-hs:], deck[-2 * hs:-hs]], vira)
    st.hands = [list(deck), list(deck)]
    st._legal = None
    return st


def renamed_for_vira(tree: PublicTree, vira: int) -> PublicTree:
    """``tree`` (built for one vira of a subgame, :func:`agents.cfr.tree.vira_subgames`) as the tree of
    another vira of it: the same arrays (the same game up to renaming cards), the cards named by that
    vira's abstraction."""
    from dataclasses import replace

    from agents.cfr.abstraction import make_abstraction

    if tree.vira < 0:
        raise TrucError("this public tree turns no vira")
    ab = make_abstraction(tree.rules, tree.abstraction.kind, vira)
    if ab.mult != tree.abstraction.mult:
        fam = tree.rules.family
        raise TrucError(f"vira {fam.format(vira)} is not in the subgame of vira {fam.format(tree.vira)} "
                        f"(class sizes {ab.mult} against {tree.abstraction.mult})")
    return replace(tree, abstraction=ab, vira=vira)


# ---------------------------------------------------------------------------------- best response
def best_response_values(solver: PublicTreeSolver, sigma: np.ndarray, redeal_br=(0.0, 0.0),
                         redeal_value: float = 0.0) -> dict:
    """Each seat's best-response value against ``sigma`` and ``sigma``'s own value (seat 0's points).

    An accepted redeal is worth ``redeal_br[s]`` to seat ``s`` when it best-responds (its value in
    the hand after the redeal), ``redeal_value`` (seat 0's points) when both follow ``sigma``.
    """
    solver.forward(0, sigma)
    solver.forward(1, sigma)
    solver.redeal_value = float(redeal_value)
    value = solver.backward(0, sigma)
    solver.redeal_value = float(redeal_br[0])
    br0 = solver.backward(0, sigma, best_response=True)
    solver.redeal_value = -float(redeal_br[1])  # the kernel reads seat 0's points
    br1 = solver.backward(1, sigma, best_response=True)
    return {"value_seat0": value, "br0": br0, "br1": br1, "nash_conv": br0 + br1, "exploitability": (br0 + br1) / 2}




# ---------------------------------------------------------------------------------- the real redeal
@njit(cache=True)
def _second_deal_weights(b_counts, post, hand_counts, mult, hand_size, seat, binom, W):
    """``W[h0, h1]`` of the deal after a redeal, for a best responder (``seat``) first dealt
    ``b_counts``: the opponent's first hand drawn from ``post`` (its index -> probability), both new
    hands dealt from the cards the two first hands left."""
    H, C = hand_counts.shape
    left = np.zeros(C, dtype=np.int64)
    W[:, :] = 0.0
    for o in range(H):
        if post[o] == 0.0:
            continue
        n = 0
        ok = True
        for c in range(C):
            left[c] = mult[c] - b_counts[c] - hand_counts[o, c]
            if left[c] < 0:
                ok = False
            n += left[c]
        if not ok:
            continue
        total = binom[n, hand_size] * binom[n - hand_size, hand_size]
        for i in range(H):
            for j in range(H):
                w = 1.0
                for c in range(C):
                    a, b = hand_counts[i, c], hand_counts[j, c]
                    if a + b > left[c]:
                        w = 0.0
                        break
                    w *= binom[left[c], a] * binom[left[c] - a, b]
                if w > 0.0:
                    if seat == 0:
                        W[i, j] += post[o] * w / total
                    else:
                        W[j, i] += post[o] * w / total


def _redeal_path(tree: PublicTree) -> tuple[int, int, int, int]:
    """(root slot label of the proposal, node where it is answered, its accepting edge, dealer): the
    one accepted-redeal leaf, reached by a proposal at the root and its acceptance."""
    from agents.cfr.tree import CHILD, REDEAL

    leaves = np.flatnonzero(tree.kind == REDEAL)
    ends = np.searchsorted(tree.act_start, leaves, side="right") - 1
    roots = [e for e in range(int(tree.act_start[0]), int(tree.act_start[1])) if tree.kind[e] == CHILD]
    propose = [e for e in roots if len(ends) == 1 and tree.child[e] == ends[0]]
    if len(leaves) != 1 or not propose:
        raise TrucError("the real game's redeal needs exactly one accepted-redeal leaf, answering a proposal "
                        f"made at the root (this tree has {len(leaves)} such leaves)")
    return int(tree.label[propose[0]]), int(ends[0]), int(leaves[0]), tree.dealer


def real_redeal_best_responses(main: PublicTreeSolver, sigma: np.ndarray, cont: PublicTreeSolver,
                               cont_sigma: np.ndarray) -> dict:
    """Each seat's best-response value in the real game with its redeal, against a policy that plays
    ``sigma`` in the hand (``main``'s tree) and ``cont_sigma`` in the hand after an accepted redeal
    (``cont``'s redeal-free tree, whatever the first hands were).

    The redeal comes before any card, so the best responder's information at the accepted-redeal
    leaf is its own first hand alone: for each first hand ``h`` its value after the redeal is a best
    response in ``cont``'s tree with the deal re-weighted (the opponent's first hand drawn from its
    deal odds given ``h`` times its probability of proposing or accepting with it, both new hands
    dealt from the cards left), and that value is the leaf's worth to hand ``h`` in ``main``'s tree.
    Exact in the real game (no card removal ignored), for a policy whose play after the redeal does
    not depend on its first hand.
    """
    from math import comb

    t, ct = main.tree, cont.tree
    ab = t.abstraction
    if ct.abstraction.mult != ab.mult or ct.abstraction.hands != ab.hands:
        raise TrucError("the hand after a redeal must be the same deck and classes as the hand itself")
    propose_label, answer, accept_edge, dealer = _redeal_path(t)
    mano = 1 - dealer
    hs = t.rules.hand_size
    hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
    mult = np.array(ab.mult, dtype=np.int64)
    n = int(mult.sum())
    binom = np.array([[comb(a, b) for b in range(hs + 1)] for a in range(n + 1)], dtype=np.float64)

    def step(node: int, label: int) -> np.ndarray:
        """Per hand index: the actor's probability of taking ``label`` at ``node`` under ``sigma``."""
        q = int(t.actor[node])
        out = np.zeros(ab.n_hands)
        for j, h in enumerate(t.hand_set(t.hs[node, q])):
            i = main.iset_off[node] + j
            a, b = int(main.iset_start[i]), int(main.iset_start[i + 1])
            labs = t.label[t.act_start[node] + main.slot_k[a:b].astype(np.int64)]
            out[int(h)] = sigma[a:b][labs == label].sum()
        return out

    opp_step = {dealer: step(answer, int(t.label[accept_edge])), mano: step(0, propose_label)}
    W0, Wc = t.W, ct.W.copy()
    W2 = np.zeros_like(Wc)
    out: dict = {}
    for seat in (0, 1):
        o = 1 - seat
        cont.forward(o, cont_sigma)
        after = np.zeros(ab.n_hands)  # the seat's best-response value after the redeal, per first hand
        for h in range(ab.n_hands):
            post = (W0[h] if seat == 0 else W0[:, h]) * opp_step[o]
            if post.sum() <= 0.0:
                continue  # the redeal is never accepted with this hand: its value never counts
            _second_deal_weights(hand_counts[h], post / post.sum(), hand_counts, mult, hs, seat, binom, W2)
            ct.W = W2
            cont.redeal_value = 0.0
            after[h] = cont.backward(seat, cont_sigma, best_response=True)
        ct.W = Wc
        main.forward(o, sigma)
        values = np.zeros(ab.n_hands)
        root = t.hand_set(t.hs[0, seat])
        for c in np.unique(after):  # one best-response pass per distinct worth of the leaf
            main.redeal_value = float(c) if seat == 0 else -float(c)  # the kernel reads seat 0's points
            main.backward(seat, sigma, best_response=True)
            v = main.values[main.voff[0, seat]:main.voff[0, seat] + len(root)]
            pick = after[root] == c
            values[root[pick]] = v[pick]
        out[f"br{seat}"] = float(values.sum())
        out[f"after_redeal_br{seat}"] = after
    out["nash_conv"] = out["br0"] + out["br1"]
    out["exploitability"] = out["nash_conv"] / 2
    return out
