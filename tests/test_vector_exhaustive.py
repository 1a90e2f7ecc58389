"""The batched engine against engine.py at every reachable decision of shrunk heads-up hands (issue 35).

OpenSpiel's ``test_consistent`` style, on top of the random differential of tests/test_vector.py: the
deals are fixed (the kernel's own, from its reset), and from each the whole tree of decisions is walked.
A kernel game is cloned by copying its rows of the kernel's state arrays into another row of the batch,
so every (node, legal action) pair is one row of one batched step, and the engine ``State`` beside it is
cloned alike. At every node the seat to act, the legal mask and the observation must be the engine's; at
every step the rewards and the episode's end. The walk counts the nodes it compared (a positive control:
the tree is as large as the engine's own walk of it) and a planted kernel bug is caught (a negative one).
"""

from __future__ import annotations

import numpy as np
import pytest

from truc_env.batch.vector import VectorEnv
from truc_env.game.engine import State
from truc_env.game.observe import encoder_of

pytest.importorskip("numba")

WIDTH = 256  # rows of the batch: (node, action) pairs expanded per step


class Walker:
    """Clones kernel games row by row; walks every decision of ``deals`` fixed deals."""

    def __init__(self, variant: str, seed: int, **options):
        self.v = v = VectorEnv(variant, WIDTH, seed=seed, backend="numba", threads=1, episode="hand", **options)
        self.r = v.rules
        self.enc = encoder_of(self.r)
        v.reset()
        impl = v._impl
        self.per_game = [x for i, x in enumerate(impl._state()) if i not in impl.SHARED]
        assert all(x.shape[0] == WIDTH for x in self.per_game)

    def snapshot(self, b: int) -> tuple:
        return tuple(x[b].copy() for x in self.per_game)

    def load(self, b: int, snap: tuple) -> None:
        for x, row in zip(self.per_game, snap):
            x[b] = row

    def force_deal(self, b: int, cards: list[list[str]]) -> None:
        """Give game ``b`` (at the root of its hand, before any card is known to differ) the hands
        ``cards`` (per seat) by renaming cards in its rows: the kernel's state stays consistent since
        nothing at a hand's root but the hands and the deck names a card (no vira)."""
        r, impl = self.r, self.v._impl
        assert not r.vira and not r.put_pass, "force_deal renames cards: variants without card-bearing fields"
        index = {r.family.format(c): i for i, c in enumerate(r.deck)}
        dealer = int(self.v.dealers[b])
        order = [(dealer + 1 + j) % r.players for j in range(r.players)]
        want = [index[cards[seat][i]] for i in range(r.hand_size) for seat in order]
        deck = impl._deck[b]
        assert len(set(want)) == len(want)
        perm = np.full(len(r.deck), -1, np.int64)
        perm[deck[:len(want)]] = want
        rest = [c for c in range(len(r.deck)) if c not in want]
        perm[perm < 0] = rest
        impl._deck[b] = perm[deck]
        hands = impl.hands[b]
        hands[hands >= 0] = perm[hands[hands >= 0]]

    def feed(self, st: State, deck, ptr: int) -> int:
        """The engine's chance nodes take the kernel's deck, as tests/test_vector.py's reference does."""
        while st.is_chance_node():
            assert st.phase == "deal", st.phase
            st.apply_action(self.r.deck[deck[ptr]])
            ptr += 1
        return ptr

    def check(self, st: State, b: int, where: str) -> None:
        v = self.v
        assert st.current_player() == v._seat[b], where
        legal = np.flatnonzero(v._mask[b]).tolist()
        assert legal == st.legal_actions(), f"{where}: mask {legal} vs engine {st.legal_actions()}"
        ref = self.enc.encode(st, int(v._seat[b]))
        diff = np.flatnonzero(v._obs[b] != ref)
        assert not len(diff), f"{where}: observation differs at {diff.tolist()}"

    def expected_reward(self, before: State, after: State) -> np.ndarray:
        if self.v.reward_kind == "points":  # as scored: envido and flor when settled, the hand when it ends
            return np.array(after.returns(), np.float32) - np.array(before.returns(), np.float32)
        if after.is_terminal():
            from truc_env.envs.pettingzoo_env import win_rewards

            return np.array(win_rewards(after), np.float32)
        return np.zeros(self.r.players, np.float32)

    def walk(self, deals: int, forced=(), max_nodes: int = 200_000) -> dict:
        """Every decision of the first ``deals`` games of the reset (the first of them dealt ``forced``
        hands), compared; returns counts and the events the walk went through."""
        v = self.v
        for b, cards in enumerate(forced):
            self.force_deal(b, cards)
        v._impl.step(np.full(WIDTH, -1, np.int32))  # every game waits: the seats, masks and observations afresh
        frontier = []  # (kernel snapshot, engine state, deck pointer)
        events: set[str] = set()
        roots = [(int(v.dealers[b]), [int(x) for x in v.scores[b]], v.deck[b].copy()) for b in range(deals)]
        for b, (dealer, score, _) in enumerate(roots):
            st = State(self.r, episode="hand", dealer=dealer, score=score)
            ptr = self.feed(st, v.deck[b], 0)
            self.check(st, b, f"deal {b} root")
            frontier.append((self.snapshot(b), st, ptr))
            events |= happened(st)
        nodes, leaves = len(frontier), 0
        while frontier:
            pairs = [(node, int(a)) for node in frontier for a in node[1].legal_actions()]
            frontier = []
            for lo in range(0, len(pairs), WIDTH):
                chunk = pairs[lo:lo + WIDTH]
                actions = np.full(WIDTH, -1, np.int32)
                for b, ((snap, _, _), a) in enumerate(chunk):
                    self.load(b, snap)
                    actions[b] = a
                v._impl.step(actions)
                for b, ((_, st, ptr), a) in enumerate(chunk):
                    nxt = st.clone()
                    nxt.apply_action(a)
                    where = f"{self.r.variant} {self.r.options} after {[h[1] for h in nxt.history if h[0] >= 0]}"
                    want = self.expected_reward(st, nxt)
                    assert np.array_equal(v._rew[b], want), f"{where}: reward {v._rew[b]} vs engine {want}"
                    assert bool(v._done[b]) == nxt.is_terminal(), where
                    events |= happened(nxt)
                    if nxt.is_terminal():
                        leaves += 1
                        continue
                    nptr = self.feed(nxt, v.deck[b], ptr)
                    self.check(nxt, b, where)
                    frontier.append((self.snapshot(b), nxt, nptr))
                    nodes += 1
            assert nodes <= max_nodes, f"the tree has more than {max_nodes} nodes: shrink the case"
        return {"nodes": nodes, "leaves": leaves, "events": events, "roots": roots}


def happened(st: State) -> set[str]:
    """What a state went through (the walk's coverage)."""
    out = set()
    if st.special:
        out.add(st.special)
    if st.old_hands:
        out.add("redeal")
    if st.all_in_accepted:
        out.add("all_in")
    if st.env_result is not None:
        out.add("envido accepted")
    if st.env_done and st.env_result is None and not st.flor_seats:
        out.add("envido refused")
    if st.flor_seats:
        out.add("flor")
    if st.phase == "flor":
        out.add("flor against flor")
    if st.flor_result is not None:
        out.add("con flor quiero")
    return out


def engine_tree_size(rules, dealer: int, score, deck_order) -> tuple[int, int]:
    """(decision nodes, terminal nodes) of the engine's own walk of one deal: the positive control."""
    root = State(rules, episode="hand", dealer=dealer, score=list(score))
    ptr = 0
    while root.is_chance_node():
        root.apply_action(rules.deck[deck_order[ptr]])
        ptr += 1
    stack, nodes, leaves = [(root, ptr)], 0, 0
    while stack:
        st, p = stack.pop()
        if st.is_terminal():
            leaves += 1
            continue
        while st.is_chance_node():
            st.apply_action(rules.deck[deck_order[p]])
            p += 1
        nodes += 1
        for a in st.legal_actions():
            nxt = st.clone()
            nxt.apply_action(a)
            stack.append((nxt, p))
    return nodes, leaves


FLORS = [[["1e", "2e", "3e"], ["2o", "3o", "7o"]],  # flor against flor
         [["1b", "2b", "3b"], ["2c", "3c", "7e"]],  # a flor against an envido of 25
         [["7o", "2c", "3e"], ["1e", "7e", "2b"]]]  # no flor: envido of 28 against 7

# (variant, options, deals, forced deals, events the walk must reach): shrunk heads-up hands
CASES = [
    ("le_truc", dict(ranks=3, hand_size=2, random_start_score=0.5), 3, (), {"redeal", "all_in"}),
    ("put", dict(ranks=3, hand_size=2, random_start_score=0.5), 3, (), {"all_in"}),
    ("truco_paulista", dict(players=2, ranks=3, hand_size=2, target=4, random_start_score=0.9), 4, (),
     {"eleven", "iron"}),
    ("truco_mineiro", dict(players=2, ranks=3, hand_size=2, target=4, random_start_score=0.9), 3, (), {"eleven"}),
    ("truco_argentino", dict(players=2, ranks=3, hand_size=2, max_raises=2, random_start_score=0.5), 3, (),
     {"envido accepted", "envido refused"}),
    ("truco_argentino", dict(players=2, ranks=2, flor=True, max_raises=1, target=15, random_start_score=0.5), 3, FLORS,
     {"flor", "flor against flor", "con flor quiero", "envido accepted", "envido refused"}),
    ("put_n", dict(players=3, ranks=3, hand_size=2), 2, (), set()),  # put_n's own kernel
]


def _id(case):
    return case[0] + "".join(f"-{k}={v}" for k, v in case[1].items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_every_decision_of_fixed_deals_matches_the_engine(case):
    variant, options, deals, forced, must_reach = case
    w = Walker(variant, seed=9, **options)
    out = w.walk(deals, forced)
    want = [engine_tree_size(w.r, dealer, score, deck) for dealer, score, deck in out["roots"]]
    assert out["nodes"] == sum(n for n, _ in want) and out["leaves"] == sum(k for _, k in want), (out, want)
    assert out["leaves"] > deals
    assert must_reach <= out["events"], f"the walk never reached {must_reach - out['events']}"


def test_a_planted_kernel_bug_is_caught():
    """Negative control: a kernel that capped the raises at two (le_truc has no cap) differs from the engine
    only deep in the tree, at a third raise: the walk finds it."""
    from truc_env.batch import _vector_kernels as K

    w = Walker("le_truc", seed=9, ranks=3, hand_size=2)
    assert w.v._impl.p[K.P_MAX_RAISES] == -1
    w.v._impl.p[K.P_MAX_RAISES] = 2
    with pytest.raises(AssertionError, match="mask"):
        w.walk(2)
