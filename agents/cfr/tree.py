"""The public game tree of a heads-up hand, built once from the engine, as flat numpy arrays.

Where every action is public and a hand's points depend only on the public actions (``le_truc``,
``put``, heads-up Mineiro without special hands), the game factors into a *public tree* (the
sequence of calls and of card plays, a card known by its strength class) times each seat's private
hand (a class multiset, :mod:`agents.cfr.abstraction`). A seat's information set is a pair
(public node, own dealt hand); a chance weight ``W[h0, h1]`` joins the two hands at the leaves.

The engine generates the tree, so no rule is written twice: each seat is given the whole deck
(``hands`` of a live engine state) so that every class is playable, a play is kept only while the
two seats together have not played more cards of a class than the deck holds, and the engine says
what is legal next and what each leaf pays. States that share their future (same phase, trick,
stakes, calls and class counts) are expanded once (a memo), then unfolded into the tree.

Heads-up Truco Paulista turns a public card, the vira, after the deal. Public chance splits the
game: one tree per vira (``build_tree(..., vira=card)``: the deck without it, strengths from
``rules.strength_with_vira``), and viras whose games are the same up to renaming cards (same class
sizes in strength order; in the full deck the four suits of a rank) share one subgame
(:func:`vira_subgames`). A best response conditions on the public vira, so the whole hand's
best-response values and exploitability are the subgames' weighted by the chance of their viras.

Heads-up Argentine truco has envido: when one is accepted the engine announces who holds the best
points and how many. That public announcement is a node of its own (actor ``NATURE``) whose branches
(labels ``reveal_label(role, points)``) narrow both seats' hand sets: the holder's to the hands with
those points, the other's to those with fewer (or as many, if the holder is the first player, who
wins ties). Every pair of hands takes exactly one branch. With envido no two cards are
interchangeable, so every card is its own class, and decks too big for that are refused.

Flor (an option, docs/rules.md §6) is compulsory, so it is public too. At a seat's decision in the first
trick, while its flor status is still unknown, a flor hand may only sing (or fold) and any other
hand may do anything but sing: ``flor`` narrows the actor's hand set to flor hands, and every other
action but fold to the hands without one (edge classes ``FLOR_ONLY``/``NO_FLOR``, and a play's class
plus ``NO_FLOR_PLAY``). After a flor is sung, whether the opponent (if his status is still unknown)
holds one too is a public branch (``flor_held_label``: he answers it, or the 3 points are scored),
and an accepted flor against flor announces the better flor's holder and points
(``flor_reveal_label``), like an envido. Flor decides suits, so with flor, too, every card is its
own class.

Arrays (``N`` nodes, ``E`` actions):

- ``actor[N]`` (0, 1, or ``NATURE`` at an announcement); ``hs[N, 2]``: the hand set of each seat
  (hands that contain what it has played, and agree with any announcement);
- ``act_start[N + 1]``: node ``n``'s actions are ``act_start[n]:act_start[n + 1]``;
- ``label[E]``: the engine action id, or ``PLAY + class`` for a card play, or ``STUCK``: where the
  only actions are card plays, a hand whose remaining cards the opponent has already played (so
  its chance weight is 0: with one-card classes, Paulista's manilhas) can take none of them; a
  leaf worth 0 open to those hands alone keeps every information set non-empty;
- ``kind[E]``: ``CHILD`` (``child[E]`` is a node), ``LEAF`` (``util[E]``: seat 0's points) or
  ``REDEAL`` (an accepted redeal: valued by the solver, see ``docs/cfr.md``);
- ``trans[E]`` (and ``trans1[E]``: seat 1's at an announcement, where ``trans`` is seat 0's; None
  without announcements): for a play, a transition: ``tr_pos[tr_off[t]:tr_off[t + 1]]`` gives, for each hand
  of the actor's set, its position in the child's set, or -1 if it cannot make that play;
- ``hs_off``/``hs_hands``: the hands (indices into ``abstraction.hands``) of each hand set.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from math import perm

import numpy as np

from agents.cfr.abstraction import CardAbstraction, make_abstraction
from agents.cfr.labels import (  # noqa: F401  (the label constants are part of the tree's public names)
    CHILD,
    FLOR_HELD,
    FLOR_ONLY,
    FLOR_REVEAL,
    LEAF,
    NATURE,
    NO_FLOR,
    NO_FLOR_PLAY,
    PLAY,
    REDEAL,
    REVEAL,
    STUCK,
)
from agents.cfr.unfold import memo_arrays, unfold_memo
from truc_env.errors import TrucError
from truc_env.game.engine import CHANCE, TERMINAL, State, envido_cards
from truc_env.game.hand_rules import envido_score, flor_score, has_flor, wins_announcement
from truc_env.game.rules import Rules

MAX_ENVIDO_SEQUENCES = 10 ** 5  # 20,160 (8 cards, 3 each) build 11 M public nodes in 7 GB


def reveal_label(role: int, points: int) -> int:
    return REVEAL + 64 * role + points


def is_reveal(label: int) -> bool:
    return REVEAL <= label < REVEAL + 128


def announcement(label: int, dealer: int) -> tuple[int, int]:
    """(holder seat, points) of an envido (or flor) announcement label, in a hand ``dealer`` deals."""
    role, points = divmod(label - (FLOR_REVEAL if is_flor_reveal(label) else REVEAL), 64)
    return (dealer if role == 0 else 1 - dealer), points


def flor_reveal_label(role: int, points: int) -> int:
    return FLOR_REVEAL + 64 * role + points


def is_flor_reveal(label: int) -> bool:
    return FLOR_REVEAL <= label < FLOR_REVEAL + 128


def flor_held_label(role: int, held: bool) -> int:
    return FLOR_HELD + 2 * role + int(held)


def is_flor_held(label: int) -> bool:
    return FLOR_HELD <= label < FLOR_HELD + 4


def branch_label(labels, state: State, dealer: int) -> int:
    """The branch of an announcement node (its ``labels``) that the engine ``state`` right after it took."""
    first = int(labels[0])
    if is_flor_held(first):
        answerer = 1 - state.flor_seats[-1]
        return flor_held_label(0 if answerer == dealer else 1, state.phase == "flor")
    holder, points = state.flor_result if is_flor_reveal(first) else state.env_result
    return (flor_reveal_label if is_flor_reveal(first) else reveal_label)(0 if holder == dealer else 1, points)


def nature_constraints(label: int, dealer: int) -> tuple:
    """What an announcement branch says of each seat's hand: a constraint per seat (None: nothing)."""
    if is_flor_held(label):
        role, held = divmod(label - FLOR_HELD, 2)
        seat = dealer if role == 0 else 1 - dealer
        out = [None, None]
        out[seat] = ("flor", int(held))
        return tuple(out)
    holder, points = announcement(label, dealer)
    kind = "flor_points" if is_flor_reveal(label) else "envido"
    return tuple(constraint(kind, holder, points, seat, dealer) for seat in (0, 1))


def unsupported_reason(rules: Rules, score=(0, 0)) -> str | None:
    """Why the public-tree solver cannot solve this game exactly (None if it can)."""
    if rules.players != 2:
        return "it has more than two players"
    if rules.eleven and any(s >= rules.eleven_score for s in score):
        return "special hands at 11 (hidden or partner-visible cards)"
    if rules.put_pass or rules.put_n or rules.signals.mode != "none":
        return "card passes and signals are not public"
    return None


@dataclass
class PublicTree:
    rules: Rules
    abstraction: CardAbstraction
    dealer: int
    score: tuple
    actor: np.ndarray
    hs: np.ndarray
    act_start: np.ndarray
    label: np.ndarray
    kind: np.ndarray
    child: np.ndarray
    util: np.ndarray
    trans: np.ndarray
    hs_off: np.ndarray
    hs_hands: np.ndarray
    hs_counts: list
    tr_off: np.ndarray
    tr_pos: np.ndarray
    W: np.ndarray
    build_seconds: float = 0.0
    situations: int = 0
    stats: dict = field(default_factory=dict)
    vira: int = -1  # the vira of this subgame (Paulista), -1 without one
    trans1: np.ndarray | None = None  # at an announcement (actor NATURE): seat 1's transition; trans is seat 0's
    # each node's situation (the memo entry it unfolds; nodes of one situation differ only in the cards
    # played before the current trick); None where the Python unfolding built the tree
    node_sit: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.actor)

    @property
    def n_actions(self) -> int:
        return len(self.label)

    def hand_set(self, s: int) -> np.ndarray:
        return self.hs_hands[self.hs_off[s]:self.hs_off[s + 1]]

    def size(self) -> dict:
        """Decision nodes, leaves, information sets and (information set, action) pairs."""
        sizes = np.diff(self.hs_off)
        nact = np.diff(self.act_start)
        seat = np.minimum(self.actor, 1)
        own = np.where(self.actor == NATURE, 0, sizes[self.hs[np.arange(self.n_nodes), seat]])
        leaves = int(np.sum(self.kind != CHILD))
        # histories: every (public node, hand pair) with positive chance weight
        return {"public_nodes": int(np.sum(self.actor != NATURE)), "announcement_nodes": int(np.sum(self.actor == NATURE)),
                "public_leaves": leaves,
                "infosets": int(own.sum()), "infoset_actions": int((own * nact).sum()),
                "hands": self.abstraction.n_hands}


def _situation_key(st: State, cls: dict, combined: tuple):
    return (st.phase, st.turn, st.leader, st.trick_no, tuple((s, cls[c]) for s, c in st.trick),
            tuple(st.trick_winners), tuple(st.trick_leaders), st.level, st.raises, st.last_raiser_side,
            st.all_in_called, st.all_in_accepted, st.special, st.call_kind, st.call_caller,
            tuple(st.call_queue), st.call_level, st.redeal_used, st.play_started, tuple(st.score),
            tuple(st.hand_points), st.game_over, st.active, tuple(st.env_calls), st.env_caller,
            tuple(st.env_queue), st.env_done, st.env_result, tuple(st.flor_seats), tuple(st.flor_sides),
            st.flor_answerer, st.flor_result, combined)


def vira_subgames(rules: Rules) -> list[tuple[int, float, tuple]]:
    """The distinct games after the vira: (representative vira, its chance weight, every vira in it).

    Two viras give the same game when their abstractions have the same class sizes in strength
    order (only strength matters, and equal strengths tie); the weight is the chance that the vira
    is one of them. In the full deck the vira's suit never matters: ten subgames, one per rank.
    """
    if not rules.vira:
        raise TrucError(f"{rules.variant} turns no vira")
    groups: dict = {}
    for v in rules.deck:
        groups.setdefault(make_abstraction(rules, "strength", v).mult, []).append(v)
    n = len(rules.deck)
    return [(members[0], len(members) / n, tuple(members)) for members in groups.values()]


def hand_envido(ab: CardAbstraction) -> list[int]:
    """Envido points of every hand (with envido every card is its own class, so a hand is its cards)."""
    card_of = {k: c for c, k in ab.card_class.items()}
    return [envido_score(*envido_cards([card_of[k] for k in hand], ab.rules.family)) for hand in ab.hands]


def hand_flor(ab: CardAbstraction) -> list[int]:
    """Flor points of every hand, 0 for a hand without flor (with flor every card is its own class)."""
    card_of = {k: c for c, k in ab.card_class.items()}
    out = []
    for hand in ab.hands:
        p0, s0, p1, s1, p2, s2 = envido_cards([card_of[k] for k in hand], ab.rules.family)
        out.append(flor_score(p0, p1, p2) if has_flor(s0, s1, s2) else 0)
    return out


def envido_outcomes(ab: CardAbstraction, dealer: int, values: list[int] | None = None) -> list[tuple]:
    """Every announcement a deal allows: (holder seat, points, a hand with them, a hand that loses to it).

    Ties go to the first player (*mano*), so the other seat holds the points only against less.
    ``values``: the points of each hand (default: envido; :func:`hand_flor` for a flor against
    flor, where hands without flor (0) take no part).
    """
    flor = values is not None
    values = hand_envido(ab) if values is None else values
    card_of = {k: c for c, k in ab.card_class.items()}
    mano = (dealer + 1) % 2
    out = []
    for holder in (0, 1):
        for v in sorted(set(values) - ({0} if flor else set())):
            lose = [h for h, x in enumerate(values) if wins_announcement(v, x, holder == mano) and (x or not flor)]
            if lose:
                win = values.index(v)
                out.append((holder, v, [card_of[k] for k in ab.hands[win]], [card_of[k] for k in ab.hands[lose[0]]]))
    return out


def constraint(kind: str, holder: int, points: int, seat: int, dealer: int) -> tuple:
    """``(kind, test, v)``: the holder has ``v`` points of ``kind`` (envido or flor_points); the other
    seat's points lose to them (``"beaten"``, with whether the holder is the mano, who wins ties)."""
    if seat == holder:
        return (kind, "eq", points)
    return (kind, "beaten", points, holder == (dealer + 1) % 2)


def holds_constraint(points: int, con: tuple) -> bool:
    """Does a hand with ``points`` (of the constraint's kind) meet an announcement's ``con``?"""
    if con[1] == "eq":
        return points == con[2]
    return wins_announcement(con[2], points, con[3])


def expand_situations(rules: Rules, dealer: int, score, abstraction: str, vira: int | None, verbose: bool = False):
    """Expand the hand's public situations once each (the memo): ``(ab, root, actor, edges)``.

    ``actor[sid]`` is the seat deciding in situation ``sid`` and ``edges[sid]`` its actions as
    ``(label, class or -1, kind, child situation or -1, seat 0's points at a leaf)``; with flor the
    class may also be ``FLOR_ONLY``, ``NO_FLOR`` or a play's class plus ``NO_FLOR_PLAY``.
    """
    t0 = time.time()
    ab = make_abstraction(rules, abstraction, vira)
    cls = ab.card_class
    mult = ab.mult
    root = State(rules, episode="hand", dealer=dealer, score=list(score))
    while root.is_chance_node():
        outcomes = [a for a, _ in root.chance_outcomes()]
        if vira is None:
            root.apply_action(outcomes[0])
        elif root.deal_seq[-1] < 0:  # the next card drawn is turned: the vira
            root.apply_action(vira)
        else:
            root.apply_action(next(a for a in outcomes if a != vira))
    if vira is not None and root.vira != vira:
        raise TrucError(f"the root of the tree did not turn the vira {vira}")
    root.hands = [[c for c in rules.deck if c in cls] for _ in range(2)]  # every class playable: the public tree
    root._legal = None
    L = root.L
    play0, play1 = L.play, L.play + len(L.deck)

    memo: dict = {}
    sit_actor: list = []
    sit_edges: list = []  # per situation: list of (label, class, kind, child situation, util)
    outcomes = envido_outcomes(ab, dealer) if rules.envido else []
    # flor: the engine reads a seat's flor from its dealt hand, so each seat is dealt a stand-in
    # hand with (FL) or without (NF) a flor, as far as the public actions tell ("u": unknown yet)
    card_of = {k: c for c, k in ab.card_class.items()}
    flor_values = hand_flor(ab) if rules.flor else []
    FL = next(([card_of[k] for k in h] for h, v in zip(ab.hands, flor_values) if v), None)
    NF = next(([card_of[k] for k in h] for h, v in zip(ab.hands, flor_values) if not v), None)
    flor_outcomes = envido_outcomes(ab, dealer, flor_values) if FL is not None else []
    fs0 = ("u", "u") if FL is not None else ("n", "n")
    if rules.flor:
        root.dealt_hands = [list(NF), list(NF)]

    def with_flor(st: State, seat: int, held: bool) -> State:
        nxt = st.clone()
        nxt.dealt_hands[seat] = list(FL if held else NF)
        nxt._legal = None
        return nxt

    def status(fs: tuple, seat: int, value: str) -> tuple:
        return fs[:seat] + (value,) + fs[seat + 1:]

    def key_of(st: State, combined: tuple, fs: tuple):
        return _situation_key(st, cls, combined), (fs if st.trick_no == 0 else None)

    def child_edge(nxt: State, label: int, c: int, more: tuple, fs: tuple) -> tuple:
        p = nxt.current_player()
        if p == TERMINAL:
            return (label, c, LEAF, -1, float(nxt.returns()[0]))
        if p == CHANCE:  # an accepted redeal
            return (label, c, REDEAL, -1, 0.0)
        return (label, c, CHILD, expand(nxt, more, fs), 0.0)

    def nature(key, edges) -> int:
        sid = len(sit_actor)
        memo[key] = sid
        sit_actor.append(NATURE)
        sit_edges.append(edges)
        return sid

    def settle(st: State, a: int, combined: tuple, fs: tuple, flor: bool = False) -> int:
        """The announcement node after an accepted envido (or flor against flor): one branch per
        (holder, points).

        The engine scores it from the dealt hands, so each branch gives it a pair of stand-in
        hands with that result; which real hands can be on a branch is the unfolding's job.
        """
        key = ("reveal", key_of(st, combined, fs))
        sid = memo.get(key)
        if sid is not None:
            return sid
        edges = []
        for holder, points, hand_w, hand_l in (flor_outcomes if flor else outcomes):
            nxt = st.clone()
            real = nxt.dealt_hands
            nxt.dealt_hands = [list(hand_w), list(hand_l)] if holder == 0 else [list(hand_l), list(hand_w)]
            nxt.apply_action(a)
            result = nxt.flor_result if flor else nxt.env_result
            if result != (holder, points):
                raise TrucError(f"stand-in hands gave {result}, expected {(holder, points)}")
            nxt.dealt_hands = real
            role = 0 if holder == dealer else 1
            lab = flor_reveal_label(role, points) if flor else reveal_label(role, points)
            edges.append(child_edge(nxt, lab, -1, combined, fs))
        return nature(key, edges)

    def sing(st: State, a: int, combined: tuple, fs: tuple) -> int:
        """After a flor: does the opponent, his flor status unknown, hold one (and answer it)?"""
        key = ("held", key_of(st, combined, fs))
        sid = memo.get(key)
        if sid is not None:
            return sid
        rival = 1 - st.current_player()
        edges = []
        for held in (False, True):
            nxt = with_flor(st, rival, held)
            nxt.apply_action(a)
            if (nxt.phase == "flor") != held:
                raise TrucError("a flor stand-in hand did not give the expected flor answer")
            lab = flor_held_label(0 if rival == dealer else 1, held)
            edges.append(child_edge(nxt, lab, -1, combined, status(fs, rival, "f" if held else "n")))
        return nature(key, edges)

    def expand(st: State, combined: tuple, fs: tuple) -> int:
        key = key_of(st, combined, fs)
        sid = memo.get(key)
        if sid is not None:
            return sid
        actor = st.current_player()
        groups = [(st, fs, -1)]
        if fs[actor] == "u":  # would a flor hand have to sing here? then the actions tell which hands
            flor_st = with_flor(st, actor, True)
            if flor_st._must_sing(actor):
                groups = [(flor_st, status(fs, actor, "f"), FLOR_ONLY), (st, status(fs, actor, "n"), NO_FLOR)]
        edges = []
        seen, seen_calls = set(), set()
        for g, gfs, tag in groups:
            for a in g.legal_actions():
                if play0 <= a < play1:
                    c = cls[L.deck[a - play0]]
                    if c in seen or combined[c] >= mult[c]:
                        continue
                    seen.add(c)
                    label, more = PLAY + c, combined[:c] + (combined[c] + 1,) + combined[c + 1:]
                    edge_c = c + (NO_FLOR_PLAY if tag == NO_FLOR else 0)
                else:
                    if a in seen_calls:  # fold, open to both: it says nothing of the hand
                        continue
                    seen_calls.add(a)
                    label, more = a, combined
                    edge_c = -1 if a == L.FOLD else tag
                    if a == L.ACCEPT and g.phase in ("envido", "flor"):
                        edges.append((label, edge_c, CHILD, settle(g, a, combined, gfs, g.phase == "flor"), 0.0))
                        continue
                    if a == L.FLOR and gfs[1 - actor] == "u":
                        edges.append((label, edge_c, CHILD, sing(g, a, combined, gfs), 0.0))
                        continue
                nxt = g.clone()
                nxt.apply_action(a)
                edges.append(child_edge(nxt, label, edge_c, more, gfs))
        sid = len(sit_actor)
        memo[key] = sid
        sit_actor.append(actor)
        sit_edges.append(edges)
        if verbose and sid % 100000 == 0:
            print(f"  {sid} situations, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
        return sid

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        root_sit = expand(root, (0,) * ab.n_classes, fs0)
    finally:
        sys.setrecursionlimit(old)

    return ab, root_sit, sit_actor, sit_edges


def unfold(ab: CardAbstraction, root_sit: int, sit_actor: list, sit_edges: list, dealer: int = 0) -> dict:
    """Unfold the memo into the tree's flat arrays, breadth first (parents before children).

    A hand set is keyed by what its seat has played and by what the public actions say of its
    envido and flor (announcements, and with flor whether it sang). An action no hand of the set
    can take is left out.
    """
    hs_index: dict = {}
    hs_lists: list = []
    hs_counts: list = []
    hs_cons: list = []
    hand_counts = [ab.counts(h) for h in ab.hands]
    announces = any(q == NATURE for q in sit_actor)
    points = {"envido": hand_envido(ab) if announces and ab.rules.envido else None,
              "flor_points": hand_flor(ab) if ab.rules.flor else None}

    def holds(h: int, con: tuple) -> bool:
        if con[0] == "flor":
            return bool(points["flor_points"][h]) == bool(con[1])
        return holds_constraint(points[con[0]][h], con)

    def hand_set(P: tuple, cons: tuple = ()) -> int:
        s = hs_index.get((P, cons))
        if s is None:
            s = hs_index[(P, cons)] = len(hs_lists)
            hands = [i for i, hc in enumerate(hand_counts) if all(a >= b for a, b in zip(hc, P))]
            hands = [i for i in hands if all(holds(i, con) for con in cons)]
            hs_lists.append(hands)
            hs_counts.append(P)
            hs_cons.append(cons)
        return s

    tr_index: dict = {}
    tr_lists: list = []
    stuck_index: dict = {}

    def stuck(s: int, plays: tuple) -> int:
        """Transition of the STUCK leaf at a plays-only node (-1 when every hand of set s can play)."""
        key = (s, plays)
        hit = stuck_index.get(key)
        if hit is None:
            P = hs_counts[s]
            rows = [0 if all(hand_counts[h][c] <= P[c] for c in plays) else -1 for h in hs_lists[s]]
            hit = -1
            if max(rows) == 0:
                tr_lists.append(rows)
                hit = len(tr_lists) - 1
            stuck_index[key] = hit
        return hit

    def transition(s: int, c: int, con=None) -> tuple:
        """(child hand set, transition) of an edge of class ``c`` (a play, FLOR_ONLY, NO_FLOR, a play
        plus NO_FLOR_PLAY) or, with ``c == -1``, of an announcement's constraint ``con`` (None: none)."""
        hit = tr_index.get((s, c, con))
        if hit is None:
            P, cons = hs_counts[s], hs_cons[s]
            if c >= 0:
                k = c % NO_FLOR_PLAY
                extra = (("flor", 0),) if c >= NO_FLOR_PLAY else ()
                child = hand_set(P[:k] + (P[k] + 1,) + P[k + 1:], tuple(sorted(set(cons + extra))))
            else:
                extra = {FLOR_ONLY: ("flor", 1), NO_FLOR: ("flor", 0)}.get(c, con)
                child = hand_set(P, tuple(sorted(set(cons + ((extra,) if extra else ())))))
            where = {h: j for j, h in enumerate(hs_lists[child])}
            tr_lists.append([where.get(h, -1) for h in hs_lists[s]])
            hit = tr_index[(s, c, con)] = (child, len(tr_lists) - 1)
        return hit

    empty = hand_set((0,) * ab.n_classes)
    node_sit = [root_sit]
    node_hs = [(empty, empty)]
    act_start = [0]
    label, kind, child, util, trans, trans1 = [], [], [], [], [], []
    n = 0
    while n < len(node_sit):
        sid = node_sit[n]
        q = sit_actor[sid]
        h0, h1 = node_hs[n]
        for lab, c, k, csid, u in sit_edges[sid]:
            t = t1 = -1
            if q == NATURE:  # an announcement: both hand sets narrow
                con0, con1 = nature_constraints(lab, dealer)
                n0, t = transition(h0, -1, con0)
                n1, t1 = transition(h1, -1, con1)
                if not hs_lists[n0] or not hs_lists[n1]:
                    continue
                pair = (n0, n1)
            else:
                hq = (h0, h1)[q]
                if c != -1:
                    hq, t = transition(hq, c)
                    if not hs_lists[hq]:
                        continue
                pair = (hq, h1) if q == 0 else (h0, hq)
            label.append(lab)
            kind.append(k)
            util.append(u)
            trans.append(t)
            trans1.append(t1)
            if k == CHILD:
                child.append(len(node_sit))
                node_sit.append(csid)
                node_hs.append(pair)
            else:
                child.append(-1)
        plays = tuple(c for _, c, _, _, _ in sit_edges[sid])
        if q != NATURE and min(plays) >= 0 and max(plays) < NO_FLOR_PLAY:
            t = stuck((h0, h1)[q], plays)
            if t >= 0:
                label.append(STUCK)
                kind.append(LEAF)
                util.append(0.0)
                trans.append(t)
                trans1.append(-1)
                child.append(-1)
        act_start.append(len(label))
        n += 1

    hs_off = np.zeros(len(hs_lists) + 1, dtype=np.int64)
    hs_off[1:] = np.cumsum([len(x) for x in hs_lists])
    tr_off = np.zeros(len(tr_lists) + 1, dtype=np.int64)
    tr_off[1:] = np.cumsum([len(x) for x in tr_lists])
    return dict(
        actor=np.array([sit_actor[s] for s in node_sit], dtype=np.int8),
        hs=np.array(node_hs, dtype=np.int32).reshape(-1, 2),
        act_start=np.array(act_start, dtype=np.int64),
        label=np.array(label, dtype=np.int32), kind=np.array(kind, dtype=np.int8),
        child=np.array(child, dtype=np.int64), util=np.array(util, dtype=np.float64),
        trans=np.array(trans, dtype=np.int64), trans1=np.array(trans1, dtype=np.int64),
        hs_off=hs_off, hs_hands=np.array([h for x in hs_lists for h in x], dtype=np.int32), hs_counts=hs_counts,
        tr_off=tr_off, tr_pos=np.array([j for x in tr_lists for j in x], dtype=np.int32))


def check_tree_fits(rules: Rules, memo) -> None:
    """Refuse, before the tree's arrays are allocated, a tree that would not fit in the memory left,
    naming what it needs (the memo of situations is small; the unfolded tree is not: 12.8 GB for the
    40-card Mineiro)."""
    from truc_env.batch.vector import available_memory
    from truc_env.io.checks import memory_size

    need, have = memo.tree_bytes(), available_memory()
    if have is not None and need > have:
        nodes, edges = memo.sizes()
        raise TrucError(f"{rules.variant}: the public tree of this hand ({nodes:,} public nodes, {edges:,} edges) "
                        f"needs about {memory_size(need, 2)} to build, and {memory_size(have, 2)} of memory is "
                        "available: it does not fit. Exact methods need the whole tree; the sampled ones do not "
                        "(truc exploitability --approx, truc train ppo)")


def build_tree(rules: Rules, dealer: int = 0, score=(0, 0), abstraction: str = "strength",
               verbose: bool = False, vira: int | None = None) -> PublicTree:
    """Generate the public tree of one hand (from ``score``, ``dealer`` dealing) with the engine.

    Paulista needs ``vira``: the tree is the game after that card is turned (see the module doc).
    """
    why = unsupported_reason(rules, score)
    if why:
        raise TrucError(f"{rules.variant}: the exact public-tree solver does not apply: {why}")
    if rules.vira and vira is None:
        raise TrucError(f"{rules.variant}: the vira is public chance after the deal; build one tree per vira "
                        "(build_tree(..., vira=card) for each of agents.cfr.tree.vira_subgames(rules))")
    if rules.envido or rules.flor:  # no card merges with another: the tree grows with the card-play sequences
        n, k = len(rules.deck), 2 * rules.hand_size
        seqs = perm(n, k)
        if seqs > MAX_ENVIDO_SEQUENCES:
            raise TrucError(f"{rules.variant}: with envido or flor every card is its own class, and {n} cards dealt "
                            f"{rules.hand_size} each give {seqs:,} card-play sequences (limit "
                            f"{MAX_ENVIDO_SEQUENCES:,}): the exact tree does not fit; shrink the game with the "
                            "options ranks and hand_size (docs/cfr.md, heads-up Argentine truco)")
    t0 = time.time()
    ab, root_sit, sit_actor, sit_edges = expand_situations(rules, dealer, score, abstraction, vira, verbose)
    situations = len(sit_actor)
    memo = None if rules.flor else memo_arrays(root_sit, sit_actor, sit_edges)
    if memo is None:  # envido announcements, flor: the Python unfolding
        arrays = unfold(ab, root_sit, sit_actor, sit_edges, dealer)
    else:  # numba, in about the arrays' own memory; the Python memo is let go first (1-2 GB on 40 cards)
        del sit_actor, sit_edges
        check_tree_fits(rules, memo)
        arrays = unfold_memo(ab, memo, trans1=False)  # no announcements: no seat-1 transitions to keep
    tree = PublicTree(rules=rules, abstraction=ab, dealer=dealer, score=tuple(score), W=ab.deal_weights(),
                      situations=situations, vira=-1 if vira is None else vira, **arrays)
    tree.build_seconds = time.time() - t0
    return tree


def label_text(tree: PublicTree, lab: int) -> str:
    """Readable action label: ``play 7`` for a class play, else the engine's notation."""
    if lab >= PLAY:
        return "play " + tree.abstraction.names[lab - PLAY]
    if lab == STUCK:
        return "no card (ruled out)"
    from truc_env.game.actions import layout_of

    return layout_of(tree.rules).to_string(int(lab))
