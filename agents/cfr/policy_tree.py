"""Any policy as a tabular strategy on the public tree, and its exact exploitability.

The public-tree solver (:mod:`agents.cfr.solver`) measures the exact best response to a strategy
given as one action distribution per information set (public node, own dealt hand). This module
fills that table from an agent that says its action probabilities (a PPO network, a ``cfr:`` agent,
the random agent) and best-responds to it.

**Projection.** With the strength abstraction an information set stands for every concrete way of
giving its classes suits, and a neural policy need not be suit-invariant. The policy is evaluated
at one *canonical* assignment: the cards played in the hand take the lowest free card of their class
in order of play, the seat's unplayed cards the next ones, and a hand dealt before an accepted redeal
the highest ones. The seat's dealt order (the observation's ``slots``) is canonical too: the cards it
played, in play order, then the rest. A card play's probability is that of every card of the class
in hand summed. ``suits=k`` instead averages ``k`` random relabellings of the suits (the same for
the whole tree): an estimate of the policy made suit-blind. :func:`projection_error` measures how far
the raw agent is from the table along its own play. With ``abstraction="none"`` every card is its
own class and only the dealt order is projected.

**Redeal** (``docs/cfr.md``): the hand after an accepted redeal is a fresh redeal-free hand (the
``cont`` tree; card removal between the deals ignored). A seat's play there is the policy's play
after a redeal, its first hand drawn ``first_hands`` times from the seat's own odds of having reached
the redeal with it (deal probability x its probability of proposing, or of accepting), and averaged.
Each seat's best-response value in that hand is the accepted-redeal leaf value when that seat
best-responds in the main tree, so exploitability is exact within the abstracted game.

Two ways to fill the table: :func:`tabulate_agent` builds a real engine state per information set
and asks the agent (any agent, small games); :func:`tabulate_ppo` builds one engine state per public
node, varies the hand in the network input directly and batches the forward passes (the full game).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from truc_env.engine import State
from truc_env.errors import TrucError
from truc_env.rules import Rules, make_rules
from truc_env.view import SeatObservation

from .solver import PublicTreeSolver
from .tree import CHILD, NATURE, PLAY, REDEAL, PublicTree, announcement, build_tree, is_reveal, unsupported_reason


# ---------------------------------------------------------------------------------- agents
def probability_function(agent):
    """``fn(observation, mask) -> probabilities over all action ids`` for an agent that can say them.

    PPO agents (``probabilities``), ``cfr:`` agents (``policy``) and the random agent are supported;
    an agent that only samples raises :class:`TrucError`.
    """
    from agents.random import RandomAgent

    if isinstance(agent, RandomAgent):
        def uniform(observation, mask):
            m = np.asarray(mask, dtype=np.float64)
            return m / m.sum()
        return uniform
    if hasattr(agent, "probabilities"):
        return lambda observation, mask: np.asarray(agent.probabilities(observation, mask), dtype=np.float64)
    if hasattr(agent, "policy"):
        def from_dict(observation, mask):
            p = np.zeros(len(mask))
            for a, q in agent.policy(observation, mask).items():
                p[a] = q
            return p
        return from_dict
    name = getattr(agent, "name", type(agent).__name__)
    raise TrucError(f"agent {name!r} cannot give its action probabilities (it only samples an action); "
                    "exploitability needs a policy: ppo:PATH, cfr:PATH or random")


def _ask(fn, st: State, seat: int) -> np.ndarray:
    """``fn``'s probabilities at ``seat``'s decision in engine state ``st``."""
    mask = np.zeros(st.L.size, dtype=np.int8)
    mask[st.legal_actions()] = 1
    return fn(SeatObservation(st, seat, mask), mask)


# ---------------------------------------------------------------------------------- cards
@dataclass(frozen=True)
class _Cards:
    """The cards of each class in canonical order, as card ids and deck indices."""

    members: tuple  # class -> tuple of card ids (ascending)
    index: np.ndarray  # [class, k] -> deck index of the k-th card of the class (-1 past the end)
    card_class: np.ndarray  # deck index -> class

    @classmethod
    def of(cls, tree_or_ab, rules: Rules) -> _Cards:
        ab = getattr(tree_or_ab, "abstraction", tree_or_ab)
        from truc_env.actions import layout_of

        L = layout_of(rules)
        members = tuple(tuple(sorted(c for c in rules.deck if ab.card_class[c] == k)) for k in range(ab.n_classes))
        index = np.full((ab.n_classes, max(ab.mult)), -1, dtype=np.int64)
        for k, ms in enumerate(members):
            index[k, :len(ms)] = [L.card_index[c] for c in ms]
        card_class = np.array([ab.card_class[c] for c in L.deck], dtype=np.int64)
        return cls(members, index, card_class)


def suit_permutations(ab, rules: Rules, k: int, seed: int = 0) -> list[np.ndarray]:
    """``k`` permutations of the deck indices, each within every class (a relabelling of suits that
    changes nothing in the game); ``k == 1``: the identity alone (the canonical assignment)."""
    cards = _Cards.of(ab, rules)
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


def _parents(tree: PublicTree) -> tuple[np.ndarray, np.ndarray]:
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    edge = np.full(tree.n_nodes, -1, dtype=np.int64)
    ok = tree.child >= 0
    parent[tree.child[ok]] = np.repeat(np.arange(tree.n_nodes), np.diff(tree.act_start))[ok]
    edge[tree.child[ok]] = np.flatnonzero(ok)
    return parent, edge


def node_path(tree: PublicTree, node: int, parents=None) -> list[tuple[int, int]]:
    """(actor, label) of each public action from the root to ``node``."""
    parent, edge = parents if parents is not None else _parents(tree)
    out = []
    while node > 0:
        up = int(parent[node])
        out.append((int(tree.actor[up]), int(tree.label[edge[node]])))
        node = up
    return out[::-1]


def _deal(state: State, hands: list[list[int]]) -> None:
    """Deal these cards (each seat's list in dealt order) by explicit chance outcomes."""
    taken = [0] * len(hands)
    while state.is_chance_node():
        seat = state.deal_seq[-1]
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
    """
    members = [list(m) for m in _Cards.of(ab, rules).members]
    if perm is not None:
        from truc_env.actions import layout_of

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
    taken = set(own) | set(played[1 - actor])
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
        _deal(st, first)
        st.apply_action(st.L.REDEAL)
        st.apply_action(st.L.ACCEPT)
    _deal(st, hands)
    it = iter(cards)
    for _, lab in path:
        if is_reveal(lab):  # the engine announces it from the dealt hands: check it agrees
            if st.env_result != announcement(lab, dealer):
                return None
            continue
        st.apply_action(st.L.play + st.L.card_index[next(it)] if lab >= PLAY else lab)
    return st


# ---------------------------------------------------------------------------------- tables
def _slot_probs(tree: PublicTree, solver: PublicTreeSolver, node: int, j: int, probs: np.ndarray, held: list[int],
                card_class: np.ndarray, play: int) -> tuple[int, np.ndarray]:
    """The agent's probabilities (over action ids) as the slots of information set (node, j-th hand)."""
    i = solver.iset_off[node] + j
    a, b = int(solver.iset_start[i]), int(solver.iset_start[i + 1])
    labs = tree.label[tree.act_start[node] + solver.slot_k[a:b].astype(np.int64)]
    out = np.zeros(b - a)
    for k, lab in enumerate(labs):
        if lab >= PLAY:
            out[k] = sum(probs[play + d] for d in held if card_class[d] == lab - PLAY)
        else:
            out[k] = probs[lab]
    tot = out.sum()
    return a, out / tot if tot > 0 else np.full(b - a, 1.0 / (b - a))


def tabulate_agent(tree: PublicTree, solver: PublicTreeSolver, fn, rules: Rules | None = None,
                   first_hands=None, perms=None, progress: bool = False) -> np.ndarray:
    """The table (one probability per solver slot) of ``fn`` (see :func:`probability_function`),
    asked at a real engine state per information set: any agent, small games.

    ``rules``: the Rules of the engine states (the tree's, or with a redeal for the hand after one);
    ``first_hands``: for that hand, a list of samples, each a class hand per seat; ``perms``: suit
    relabellings (:func:`suit_permutations`). Pass ``i`` uses sample ``i`` of each (cycling); the
    passes are averaged.
    """
    from tqdm import tqdm

    rules = rules or tree.rules
    ab = tree.abstraction
    cards = _Cards.of(ab, rules)
    L = State(rules, episode="hand").L
    parents = _parents(tree)
    sigma = np.zeros(solver.n_slots)
    samples = first_hands if first_hands is not None else [None]
    perms = perms if perms is not None else [None]
    passes = max(len(samples), len(perms))
    for node in tqdm(range(tree.n_nodes), desc="policy", unit="node", disable=not progress, mininterval=5):
        q = int(tree.actor[node])
        if q == NATURE:
            continue
        path = node_path(tree, node, parents)
        others = [ab.hands[int(x)] for x in tree.hand_set(tree.hs[node, 1 - q])] if rules.envido else None
        for j, h in enumerate(tree.hand_set(tree.hs[node, q])):
            hand = ab.hands[int(h)]
            for i in range(passes):
                first, perm = samples[i % len(samples)], perms[i % len(perms)]
                st = infoset_state(rules, ab, tree.dealer, tree.score, path, q, hand,
                                   None if first is None else first[q], perm, others)
                if st is None:  # unreachable: uniform
                    probs, held = np.zeros(L.size), []
                else:
                    probs = _ask(fn, st, q)
                    held = [L.card_index[c] for c in st.held(q)]
                a, p = _slot_probs(tree, solver, node, j, probs, held, cards.card_class, L.play)
                sigma[a:a + len(p)] += p / passes
    return sigma


@njit(cache=True)
def _fill_rows(base, node_set, used, own_played, hs_off, hs_hands, hand_counts, card_index, pct, nonplay, play,
               o_hand, o_strength, hand_size, X, mask, row_node, row_hand):
    """Network inputs and masks of every (node, hand) row of a chunk of public nodes."""
    r = 0
    n_classes = card_index.shape[0]
    vals = np.zeros(hand_size + 8, dtype=np.float32)
    for b in range(base.shape[0]):
        s = node_set[b]
        for j in range(hs_off[s + 1] - hs_off[s]):
            h = hs_hands[hs_off[s] + j]
            X[r, :] = base[b, :]
            mask[r, :] = nonplay[b, :]
            nv = 0
            for c in range(n_classes):
                k = hand_counts[h, c] - own_played[b, c]
                for t in range(k):
                    idx = used[b, c] + t
                    if idx >= card_index.shape[1] or card_index[c, idx] < 0:
                        idx = used[b, c] - 1 if used[b, c] > 0 else 0  # unreachable hand: any card
                    d = card_index[c, idx]
                    X[r, o_hand + d] = 1.0
                    mask[r, play + d] = True
                    if nv < vals.shape[0]:
                        vals[nv] = pct[d]
                        nv += 1
            if o_strength >= 0:
                srt = np.sort(vals[:nv])[::-1]
                for t in range(min(nv, hand_size)):
                    X[r, o_strength + t] = srt[t]
            row_node[r] = b
            row_hand[r] = j
            r += 1
    return r


@njit(cache=True)
def _scatter(P, row_node, row_hand, nodes, iset_off, iset_start, slot_k, act_start, label, act_class, n_classes,
             weight, sigma):
    """Add ``weight`` x the rows' action probabilities, summed per class for card plays, to their slots."""
    pc = np.zeros(n_classes)
    for r in range(P.shape[0]):
        n = nodes[row_node[r]]
        pc[:] = 0.0
        for a in range(P.shape[1]):
            if act_class[a] >= 0:
                pc[act_class[a]] += P[r, a]
        i = iset_off[n] + row_hand[r]
        a0, a1 = iset_start[i], iset_start[i + 1]
        tot = 0.0
        for s in range(a0, a1):
            lab = label[act_start[n] + slot_k[s]]
            tot += pc[lab - 65536] if lab >= 65536 else P[r, lab]
        for s in range(a0, a1):
            lab = label[act_start[n] + slot_k[s]]
            p = pc[lab - 65536] if lab >= 65536 else P[r, lab]
            sigma[s] += weight * (p / tot if tot > 0 else 1.0 / (a1 - a0))


def _root_state(rules: Rules, dealer: int, score, after_redeal: bool) -> State:
    """The public tree's root as an engine state: every card playable by both seats."""
    st = State(rules, episode="hand", dealer=dealer, score=list(score))
    deck = list(rules.deck)
    hs = rules.hand_size
    if after_redeal:
        _deal(st, [deck[:hs], deck[hs:2 * hs]])
        st.apply_action(st.L.REDEAL)
        st.apply_action(st.L.ACCEPT)
    _deal(st, [deck[-hs:], deck[-2 * hs:-hs]])
    st.hands = [list(deck), list(deck)]
    st._legal = None
    return st


def tabulate_ppo(tree: PublicTree, solver: PublicTreeSolver, net, features: str, rules: Rules | None = None,
                 first_hands=None, perms=None, chunk_nodes: int = 4096, progress: bool = False) -> np.ndarray:
    """The table of a PPO network (canonical projection), batched: one engine state per public node.

    The input of each (node, hand) row is the node's observation with the hand-dependent sections
    (own cards, dealt slots, own card strengths, first hand) written in directly; the test suite
    checks it against :func:`tabulate_agent`, which encodes real states. A suit relabelling
    (``perms``) permutes the card columns of the input (own, first-hand and played cards, the history's
    card plays) and of the mask: the same as encoding the relabelled state.
    """
    import torch
    from tqdm import tqdm

    from agents.ppo.network import _percentiles, encode_state
    from truc_env.observe import encoder_of

    rules = rules or tree.rules
    ab = tree.abstraction
    cards = _Cards.of(ab, rules)
    enc = encoder_of(rules)
    L = enc.L
    D, hs, C = enc.D, rules.hand_size, ab.n_classes
    F = int(net.actor[0].in_features)
    A = L.size
    after_redeal = first_hands is not None
    root = _root_state(rules, tree.dealer, tree.score, after_redeal)
    pct_of = _percentiles(tuple(root.strength))
    pct = np.array([pct_of.get(c, 0.0) for c in L.deck], dtype=np.float32)
    o_hand, o_slots = enc.offset["hand"], enc.offset["slots"]
    o_first = enc.offset.get("first_hand", -1) if rules.redeal else -1
    o_strength = enc.size if features == "observation+strength" else -1
    hand_counts = np.array([ab.counts(h) for h in ab.hands], dtype=np.int64)
    act_class = np.full(A, -1, dtype=np.int64)
    act_class[L.play:L.play + D] = cards.card_class
    samples = first_hands if after_redeal else [None]
    first_bits = []
    for first in samples:
        bits = np.zeros((2, D), dtype=np.float32)
        if first is not None:
            for q in range(2):
                for c, k in enumerate(ab.counts(first[q])):
                    for t in range(k):
                        bits[q, cards.index[c, len(cards.members[c]) - 1 - t]] = 1.0
        first_bits.append(bits)
    perms = perms if perms is not None else [np.arange(D)]
    blocks = [o_hand] + ([o_first] if o_first >= 0 else [])
    o_played = enc.offset["played"]
    blocks += [o_played + k * D for k in range(hs * rules.players)]
    if features == "info_state":
        width = enc.history_width
        blocks += [enc.size + i * width + rules.players + L.play for i in range(enc.history_len)]
    columns, mask_columns = [], []
    for perm in perms:
        src, msrc = np.arange(F), np.arange(A)
        for o in blocks:
            src[o + perm] = o + np.arange(D)
        msrc[L.play + perm] = L.play + np.arange(D)
        columns.append(None if np.array_equal(perm, np.arange(D)) else src)
        mask_columns.append(msrc)
    passes = max(len(first_bits), len(perms))
    set_size = np.diff(tree.hs_off)
    sigma = np.zeros(solver.n_slots)
    torch.set_num_threads(1)

    buf_base = np.zeros((chunk_nodes, F), dtype=np.float32)
    buf_nonplay = np.zeros((chunk_nodes, A), dtype=np.bool_)
    buf_used = np.zeros((chunk_nodes, C), dtype=np.int64)
    buf_own = np.zeros((chunk_nodes, C), dtype=np.int64)
    buf_node = np.zeros(chunk_nodes, dtype=np.int64)
    buf_set = np.zeros(chunk_nodes, dtype=np.int64)
    fill = 0

    def flush():
        nb = fill
        rows = int(set_size[buf_set[:nb]].sum())
        X = np.zeros((rows, F), dtype=np.float32)
        M = np.zeros((rows, A), dtype=np.bool_)
        row_node = np.zeros(rows, dtype=np.int64)
        row_hand = np.zeros(rows, dtype=np.int64)
        _fill_rows(buf_base[:nb], buf_set[:nb], buf_used[:nb], buf_own[:nb], tree.hs_off, tree.hs_hands, hand_counts,
                   cards.index, pct, buf_nonplay[:nb], L.play, o_hand, o_strength, hs, X, M, row_node, row_hand)
        seat = tree.actor[buf_node[:nb]][row_node].astype(np.int64)
        for i in range(passes):
            if o_first >= 0:
                X[:, o_first:o_first + D] = first_bits[i % len(first_bits)][seat]
            src = columns[i % len(perms)]
            Xi, Mi = (X, M) if src is None else (X[:, src], M[:, mask_columns[i % len(perms)]])
            with torch.no_grad():
                logits = net.actor(torch.from_numpy(Xi)).double()
                logits = logits.masked_fill(~torch.from_numpy(Mi), float("-inf"))
                P = torch.softmax(logits, -1).numpy()
            _scatter(P, row_node, row_hand, buf_node[:nb], solver.iset_off, solver.iset_start, solver.slot_k,
                     tree.act_start, tree.label, act_class, C, 1.0 / passes, sigma)

    bar = tqdm(total=tree.n_nodes, desc="policy", unit="node", disable=not progress, mininterval=5)
    zero = (0,) * C
    stack = [(0, root, zero, (zero, zero))]
    while stack:
        node, st, used, own = stack.pop()
        q = int(tree.actor[node])
        x = encode_state(st, q, features)
        x[o_hand:o_hand + D] = 0.0
        x[o_slots:o_slots + hs] = 0.0
        x[o_slots + sum(own[q]):o_slots + hs] = 1.0  # canonical dealt order: the played cards first
        if o_first >= 0:
            x[o_first:o_first + D] = 0.0
        if o_strength >= 0:
            x[o_strength:o_strength + hs] = 0.0
        buf_base[fill] = x
        a0, a1 = int(tree.act_start[node]), int(tree.act_start[node + 1])
        labs = tree.label[a0:a1]
        buf_nonplay[fill] = False
        buf_nonplay[fill, labs[labs < PLAY]] = True
        buf_used[fill] = used
        buf_own[fill] = own[q]
        buf_node[fill] = node
        buf_set[fill] = tree.hs[node, q]
        fill += 1
        if fill == chunk_nodes:
            flush()
            bar.update(fill)
            fill = 0
        for e in range(a0, a1):
            if tree.kind[e] != CHILD:
                continue
            lab = int(tree.label[e])
            nxt = st.clone()
            if lab >= PLAY:
                c = lab - PLAY
                nxt.apply_action(L.play + int(cards.index[c, used[c]]))
                used2 = used[:c] + (used[c] + 1,) + used[c + 1:]
                mine = own[q][:c] + (own[q][c] + 1,) + own[q][c + 1:]
                own2 = (mine, own[1]) if q == 0 else (own[0], mine)
            else:
                nxt.apply_action(lab)
                used2, own2 = used, own
            stack.append((int(tree.child[e]), nxt, used2, own2))
    if fill:
        flush()
        bar.update(fill)
    bar.close()
    return sigma


# ---------------------------------------------------------------------------------- best response
def best_response_values(solver: PublicTreeSolver, sigma: np.ndarray, redeal_br=(0.0, 0.0),
                         redeal_value: float = 0.0) -> dict:
    """Each seat's best-response value against ``sigma`` and ``sigma``'s own value (seat 0's points).

    An accepted redeal is worth ``redeal_br[s]`` to seat ``s`` when it best-responds (its value in
    the hand after the redeal), ``redeal_value`` (seat 0's points) when both follow ``sigma``.
    """
    solver._forward(0, sigma)
    solver._forward(1, sigma)
    solver.redeal_value = float(redeal_value)
    value = solver._backward(0, sigma)
    solver.redeal_value = float(redeal_br[0])
    br0 = solver._backward(0, sigma, best_response=True)
    solver.redeal_value = -float(redeal_br[1])  # the kernel reads seat 0's points
    br1 = solver._backward(1, sigma, best_response=True)
    return {"value_seat0": value, "br0": br0, "br1": br1, "nash_conv": br0 + br1, "exploitability": (br0 + br1) / 2}


def first_hand_samples(rules: Rules, ab, fn, dealer: int, score, k: int, seed: int = 0) -> tuple[list, dict]:
    """``k`` first hands per seat for the hand after a redeal, each drawn with the seat's odds of
    reaching an accepted redeal with it (deal probability x own probability of proposing / accepting).

    Returns the samples (each a class hand per seat) and the per-seat probability of taking its step.
    """
    mano = (dealer + 1) % 2
    L = State(rules, episode="hand").L
    prior = ab.deal_weights().sum(axis=1)
    weights = np.zeros((2, ab.n_hands))
    for h, hand in enumerate(ab.hands):
        for q, path, act in ((mano, [], L.REDEAL), (dealer, [(mano, L.REDEAL)], L.ACCEPT)):
            st = infoset_state(rules, ab, dealer, score, path, q, hand)
            weights[q, h] = prior[h] * _ask(fn, st, q)[act]
    rng = np.random.default_rng(seed)
    picks = []
    for q in range(2):
        w = weights[q] if weights[q].sum() > 0 else prior
        picks.append(rng.choice(ab.n_hands, size=k, p=w / w.sum()))
    samples = [tuple(ab.hands[int(picks[q][i])] for q in range(2)) for i in range(k)]
    step = {"propose": float(weights[mano].sum()), "accept": float(weights[dealer].sum())}
    return samples, step


def _tabulate(tree, solver, agent, fn, rules, first_hands, suits, seed, progress):
    perms = suit_permutations(tree.abstraction, rules, suits, seed)
    net = getattr(agent, "net", None)
    if net is not None and hasattr(agent, "features") and not rules.envido:  # envido: real states per infoset
        return tabulate_ppo(tree, solver, net, agent.features, rules, first_hands, perms, progress=progress)
    return tabulate_agent(tree, solver, fn, rules, first_hands, perms, progress)


def policy_exploitability(agent, rules: Rules, dealer: int = 0, score=(0, 0), abstraction: str = "strength",
                          first_hands: int = 4, suits: int = 1, seed: int = 0, progress: bool = False, log=None,
                          keep: bool = False) -> dict:
    """Exact exploitability (points per hand, OpenSpiel's definition) of an agent's policy on the
    public tree, with the redeal treated as in ``docs/cfr.md`` (module docstring).

    ``suits``: 1 = the canonical assignment of suits; k > 1 = the mean over k random relabellings of
    the suits (:func:`suit_permutations`, the same k for the whole tree), an estimate of the policy
    made suit-blind. ``keep``: also return the trees, solvers and tables under ``"parts"``.
    """
    why = unsupported_reason(rules, score)
    if rules.flor:  # the tree has flor branches (agents/cfr/tree.py); infoset_state does not replay them yet
        why = why or "flor branches are not replayed by the policy conversion"
    if why:
        raise TrucError(f"{rules.variant}: exploitability on the public tree does not apply: {why}")
    fn = probability_function(agent)
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    out: dict = {"variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key,
                 "dealer": dealer, "score": list(score), "abstraction": abstraction, "suits": suits,
                 "first_hand_samples": first_hands if rules.redeal else None, "seed": seed}
    parts = {}
    t_start, cpu_start = time.time(), time.process_time()
    redeal_br, redeal_value = (0.0, 0.0), 0.0
    if rules.redeal:
        cont_rules = make_rules(rules.variant, **{**rules.options, "redeal": False})
        t0 = time.time()
        tree = build_tree(cont_rules, dealer, score, abstraction)
        ab = tree.abstraction
        samples, step = first_hand_samples(rules, ab, fn, dealer, score, first_hands, seed)
        say(f"[cont] tree {tree.n_nodes:,} public nodes built in {time.time() - t0:.0f}s; first hands "
            + "; ".join(f"seat {q}: " + ", ".join(" ".join(ab.names[c] for c in s[q]) for s in samples) for q in range(2)))
        solver = PublicTreeSolver(tree, dtype="float32")
        t1 = time.time()
        sigma = _tabulate(tree, solver, agent, fn, rules, samples, suits, seed, progress)
        t2 = time.time()
        ev = best_response_values(solver, sigma)
        out["cont"] = {**ev, **tree.size(), "first_hands": [[list(s[0]), list(s[1])] for s in samples],
                       "first_hand_names": [[" ".join(ab.names[c] for c in s[q]) for q in range(2)] for s in samples],
                       "step_probability": step, "build_seconds": t1 - t0, "policy_seconds": t2 - t1,
                       "best_response_seconds": time.time() - t2}
        say(f"[cont] BR values {ev['br0']:+.4f} / {ev['br1']:+.4f}, policy value {ev['value_seat0']:+.4f} "
            f"(policy {t2 - t1:.0f}s)")
        redeal_br, redeal_value = (ev["br0"], ev["br1"]), ev["value_seat0"]
        if keep:
            parts["cont"] = (tree, solver, sigma, samples)
        del tree, solver, sigma
    t0 = time.time()
    tree = build_tree(rules, dealer, score, abstraction)
    say(f"[main] tree {tree.n_nodes:,} public nodes built in {time.time() - t0:.0f}s")
    solver = PublicTreeSolver(tree, dtype="float32")
    t1 = time.time()
    sigma = _tabulate(tree, solver, agent, fn, rules, None, suits, seed, progress)
    t2 = time.time()
    ev = best_response_values(solver, sigma, redeal_br, redeal_value)
    out["main"] = {**ev, **tree.size(), "build_seconds": t1 - t0, "policy_seconds": t2 - t1,
                   "best_response_seconds": time.time() - t2}
    out.update({k: ev[k] for k in ("exploitability", "nash_conv", "br0", "br1", "value_seat0")})
    out["seconds"] = time.time() - t_start
    out["cpu_seconds"] = time.process_time() - cpu_start
    if keep:
        parts["main"] = (tree, solver, sigma, None)
        out["parts"] = parts
    return out


def projection_error(agent, rules: Rules, parts: dict, hands: int = 300, seed: int = 0) -> dict:
    """How far the tabulated policy is from the raw agent along the agent's own play.

    Plays ``hands`` hands of self-play with the raw agent (real suits, real dealt order, the real first
    hand after a redeal) and, at each decision, takes the total-variation distance between the raw
    agent's distribution (card plays summed per class) and the table's. ``parts``: the ``"parts"`` of
    :func:`policy_exploitability` with ``keep=True``.
    """
    from truc_env.engine import sample_chance

    fn = probability_function(agent)
    rng = np.random.default_rng(seed)
    tv: dict = {"main": [], "cont": []}
    for _ in range(hands):
        part = "main"
        tree, solver, sigma, _ = parts[part]
        cards = _Cards.of(tree.abstraction, rules)
        st = State(rules, episode="hand", dealer=tree.dealer, score=list(tree.score))
        node = 0
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(sample_chance(st, rng))
                continue
            q = st.current_player()
            probs = _ask(fn, st, q)
            hand = tree.abstraction.hand_of_cards(st.dealt_hands[q])
            j = int(np.flatnonzero(tree.hand_set(tree.hs[node, q]) == hand)[0])
            held = [st.L.card_index[c] for c in st.held(q)]
            a, p = _slot_probs(tree, solver, node, j, probs, held, cards.card_class, st.L.play)
            tv[part].append(0.5 * float(np.abs(p - sigma[a:a + len(p)]).sum()))
            act = int(rng.choice(len(probs), p=probs / probs.sum()))
            lab = PLAY + int(cards.card_class[act - st.L.play]) if st.L.play <= act < st.L.play + len(st.L.deck) else act
            st.apply_action(act)
            if st.is_terminal():
                break
            e = int(tree.act_start[node]) + int(np.flatnonzero(tree.label[tree.act_start[node]:tree.act_start[node + 1]] == lab)[0])
            if tree.kind[e] == REDEAL:
                part = "cont"
                tree, solver, sigma, _ = parts[part]
                node = 0
            else:
                node = int(tree.child[e])

    def stats(x):
        x = np.asarray(x)
        if not len(x):
            return {"decisions": 0}
        return {"decisions": int(len(x)), "mean": float(x.mean()), "median": float(np.median(x)),
                "p90": float(np.quantile(x, 0.9)), "max": float(x.max())}

    return {"hands": hands, "seed": seed, "main": stats(tv["main"]), "cont": stats(tv["cont"])}
