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

Arrays (``N`` decision nodes, ``E`` actions):

- ``actor[N]``; ``hs[N, 2]``: the hand set of each seat (hands that contain what it has played);
- ``act_start[N + 1]``: node ``n``'s actions are ``act_start[n]:act_start[n + 1]``;
- ``label[E]``: the engine action id, or ``PLAY + class`` for a card play, or ``STUCK``: where the
  only actions are card plays, a hand whose remaining cards the opponent has already played (so
  its chance weight is 0: with one-card classes, Paulista's manilhas) can take none of them; a
  leaf worth 0 open to those hands alone keeps every information set non-empty;
- ``kind[E]``: ``CHILD`` (``child[E]`` is a node), ``LEAF`` (``util[E]``: seat 0's points) or
  ``REDEAL`` (an accepted redeal: valued by the solver, see ``docs/cfr.md``);
- ``trans[E]``: for a play, a transition: ``tr_pos[tr_off[t]:tr_off[t + 1]]`` gives, for each hand
  of the actor's set, its position in the child's set, or -1 if it cannot make that play;
- ``hs_off``/``hs_hands``: the hands (indices into ``abstraction.hands``) of each hand set.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from truc_env.engine import CHANCE, TERMINAL, State
from truc_env.errors import TrucError
from truc_env.rules import Rules

from .abstraction import CardAbstraction, make_abstraction

PLAY = 1 << 16  # labels at and above: a card play of class (label - PLAY)
STUCK = PLAY - 1  # a hand the public plays rule out, with no card left to play (see build_tree)
CHILD, LEAF, REDEAL = 0, 1, 2


def unsupported_reason(rules: Rules, score=(0, 0)) -> str | None:
    """Why the public-tree solver cannot solve this game exactly (None if it can)."""
    if rules.players != 2:
        return "it has more than two players"
    if rules.envido or rules.flor:
        return "envido and flor score private hands"
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
        own = sizes[self.hs[np.arange(self.n_nodes), self.actor]]
        leaves = int(np.sum(self.kind != CHILD))
        # histories: every (public node, hand pair) with positive chance weight
        return {"public_nodes": self.n_nodes, "public_leaves": leaves,
                "infosets": int(own.sum()), "infoset_actions": int((own * nact).sum()),
                "hands": self.abstraction.n_hands}


def _situation_key(st: State, cls: dict, combined: tuple):
    return (st.phase, st.turn, st.leader, st.trick_no, tuple((s, cls[c]) for s, c in st.trick),
            tuple(st.trick_winners), tuple(st.trick_leaders), st.level, st.raises, st.last_raiser_side,
            st.all_in_called, st.all_in_accepted, st.special, st.call_kind, st.call_caller,
            tuple(st.call_queue), st.call_level, st.redeal_used, st.play_started, tuple(st.score),
            tuple(st.hand_points), st.game_over, st.active, combined)


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


def expand_situations(rules: Rules, dealer: int, score, abstraction: str, vira: int | None, verbose: bool = False):
    """Expand the hand's public situations once each (the memo): ``(ab, root, actor, edges)``.

    ``actor[sid]`` is the seat deciding in situation ``sid`` and ``edges[sid]`` its actions as
    ``(label, class or -1, kind, child situation or -1, seat 0's points at a leaf)``.
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

    def expand(st: State, combined: tuple) -> int:
        key = _situation_key(st, cls, combined)
        sid = memo.get(key)
        if sid is not None:
            return sid
        actor = st.current_player()
        edges = []
        seen = set()
        for a in st.legal_actions():
            if play0 <= a < play1:
                c = cls[L.deck[a - play0]]
                if c in seen or combined[c] >= mult[c]:
                    continue
                seen.add(c)
                label, more = PLAY + c, combined[:c] + (combined[c] + 1,) + combined[c + 1:]
            else:
                c, label, more = -1, a, combined
            nxt = st.clone()
            nxt.apply_action(a)
            p = nxt.current_player()
            if p == TERMINAL:
                edges.append((label, c, LEAF, -1, float(nxt.returns()[0])))
            elif p == CHANCE:  # an accepted redeal
                edges.append((label, c, REDEAL, -1, 0.0))
            else:
                edges.append((label, c, CHILD, expand(nxt, more), 0.0))
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
        root_sit = expand(root, (0,) * ab.n_classes)
    finally:
        sys.setrecursionlimit(old)

    return ab, root_sit, sit_actor, sit_edges


def unfold(ab: CardAbstraction, root_sit: int, sit_actor: list, sit_edges: list) -> dict:
    """Unfold the memo into the tree's flat arrays, breadth first (parents before children)."""
    # hand sets and transitions
    hs_index: dict = {}
    hs_lists: list = []
    hs_counts: list = []
    hand_counts = [ab.counts(h) for h in ab.hands]

    def hand_set(P: tuple) -> int:
        s = hs_index.get(P)
        if s is None:
            s = hs_index[P] = len(hs_lists)
            hs_lists.append([i for i, hc in enumerate(hand_counts) if all(a >= b for a, b in zip(hc, P))])
            hs_counts.append(P)
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

    def transition(s: int, c: int) -> tuple:
        hit = tr_index.get((s, c))
        if hit is None:
            P = hs_counts[s]
            child = hand_set(P[:c] + (P[c] + 1,) + P[c + 1:])
            where = {h: j for j, h in enumerate(hs_lists[child])}
            tr_lists.append([where.get(h, -1) for h in hs_lists[s]])
            hit = tr_index[(s, c)] = (child, len(tr_lists) - 1)
        return hit

    # unfold the memo into the tree, breadth first (parents before children)
    empty = hand_set((0,) * ab.n_classes)
    node_sit = [root_sit]
    node_hs = [(empty, empty)]
    act_start = [0]
    label, kind, child, util, trans = [], [], [], [], []
    n = 0
    while n < len(node_sit):
        sid = node_sit[n]
        q = sit_actor[sid]
        h0, h1 = node_hs[n]
        for lab, c, k, csid, u in sit_edges[sid]:
            label.append(lab)
            kind.append(k)
            util.append(u)
            t = -1
            hq = (h0, h1)[q]
            if c >= 0:
                hq, t = transition(hq, c)
            trans.append(t)
            if k == CHILD:
                child.append(len(node_sit))
                node_sit.append(csid)
                node_hs.append((hq, h1) if q == 0 else (h0, hq))
            else:
                child.append(-1)
        plays = tuple(c for _, c, _, _, _ in sit_edges[sid])
        if min(plays) >= 0:
            t = stuck((h0, h1)[q], plays)
            if t >= 0:
                label.append(STUCK)
                kind.append(LEAF)
                util.append(0.0)
                trans.append(t)
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
        trans=np.array(trans, dtype=np.int64),
        hs_off=hs_off, hs_hands=np.array([h for x in hs_lists for h in x], dtype=np.int32), hs_counts=hs_counts,
        tr_off=tr_off, tr_pos=np.array([j for x in tr_lists for j in x], dtype=np.int32))


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
    t0 = time.time()
    ab, root_sit, sit_actor, sit_edges = expand_situations(rules, dealer, score, abstraction, vira, verbose)
    arrays = unfold(ab, root_sit, sit_actor, sit_edges)
    tree = PublicTree(rules=rules, abstraction=ab, dealer=dealer, score=tuple(score), W=ab.deal_weights(),
                      situations=len(sit_actor), vira=-1 if vira is None else vira, **arrays)
    tree.build_seconds = time.time() - t0
    return tree


def label_text(tree: PublicTree, lab: int) -> str:
    """Readable action label: ``play 7`` for a class play, else the engine's notation."""
    if lab >= PLAY:
        return "play " + tree.abstraction.names[lab - PLAY]
    if lab == STUCK:
        return "no card (ruled out)"
    from truc_env.actions import layout_of

    return layout_of(tree.rules).to_string(int(lab))
