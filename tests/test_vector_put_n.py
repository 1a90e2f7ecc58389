"""The put_n kernel (truc_env/batch/_vector_put_n.py) against engine.py: Put for 3 to 6 independent players,
with the put's resignations. Same differential test as tests/test_vector.py: the kernel's deals
replayed through ``engine.State``, seats, masks, observations, rewards and episode ends compared at
every step of random legal play; the games must go through every resignation case (some refuse,
all refuse, a card withdrawn from the trick under way, a lead passing to the next seat still in, a
resigned seat's tricks no longer counting), tied tricks, ties for most tricks and game ends. Planted
parameter and table bugs make the comparison fail."""

from __future__ import annotations

import numpy as np
import pytest
from test_vector import Reference, run_differential
from test_vector import _id as case_id

from truc_env.batch import vector
from truc_env.batch.vector import VectorEnv, kernel_supports
from truc_env.game.rules import make_rules

pytest.importorskip("numba")

from truc_env.batch import _vector_put_n as K  # noqa: E402  (needs numba)


class PutNReference(Reference):
    """The reference, also noting which put_n mechanisms the random games went through."""

    def step(self, b: int, action: int, reward, done, where: str) -> None:
        st = self.states[b]  # the same object after the step (a finished episode gets a new one)
        settling = st.phase == "answer" and len(st.call_queue) == 1
        leader, hands = st.leader, st.hands_completed
        super().step(b, action, reward, done, where)
        ev, n = self.events, self.r.players
        if st.call_kind == "put":
            ev.add("put")
        if settling:
            out = set(st.resigned)
            ev.add("all resign" if len(out) == n - 1 else ("some resign" if out else "all accept"))
            if st.withdrawn:
                ev.add("card withdrawn")
            if leader in out and len(out) < n - 1:
                ev.add("lead passes on")
            if out & set(st.trick_winners) and len(out) < n - 1:
                ev.add("resigned tricks dropped")
            if st.hands_completed > hands and len(out) < n - 1:
                ev.add("put settles the hand")
        if -1 in st.trick_winners:
            ev.add("tied trick")
        if st.hands_completed > hands:
            if not any(st.last_hand_points):
                ev.add("tie for most")
            elif st.all_in_accepted and max(st.last_hand_points) > 1:
                ev.add("points per opponent still in")
            if st.game_over:
                ev.add("game over")


EVERY_RESIGNATION = {"put", "all resign", "some resign", "all accept", "card withdrawn", "lead passes on",
                     "resigned tricks dropped", "tied trick", "tie for most", "points per opponent still in"}

# (variant, options, events the random games must reach)
CASES = [
    ("put_n", dict(players=3, dealer="random", random_start_score=0.5), EVERY_RESIGNATION),
    ("put_n", dict(players=4, episode="game"), EVERY_RESIGNATION | {"game over"}),
    ("put_n", dict(players=5, reward="win", random_start_score=0.3), EVERY_RESIGNATION),
    ("put_n", dict(players=6, episode="game", reward="win", first_dealer="random"), {"put", "game over"}),
]
# longer runs, more options: short hands, fewer ranks (more ties), no put, a cap that allows it
SLOW_CASES = CASES + [
    ("put_n", dict(players=6, episode="game"), EVERY_RESIGNATION | {"game over"}),
    ("put_n", dict(players=3, ranks=2, hand_size=2, episode="game", target=3), {"tied trick", "game over"}),
    ("put_n", dict(players=5, hand_size=3, max_raises=0, episode="game", target=3), {"tie for most", "game over"}),
    ("put_n", dict(players=4, max_raises=1, ranks=5, random_start_score=0.5), EVERY_RESIGNATION),
]


def test_put_n_runs_on_its_kernel():
    for players in (3, 4, 5, 6):
        r = make_rules("put_n", players=players)
        assert kernel_supports(r) is None
        for episode in ("hand", "game"):
            for reward in ("points", "win"):
                v = VectorEnv("put_n", 4, backend="numba", episode=episode, reward=reward, players=players, seed=1)
                assert v.backend == "numba" and v.fallback_reason is None
                v.reset()
                done = 0
                for _ in range(150):
                    st = v.step(v.random_actions())
                    assert (st.mask.sum(1) > 0).all() and np.allclose(st.reward.sum(1), 0.0, atol=1e-5)  # zero-sum
                    done += int(st.done.sum())
                assert done > 0
    assert VectorEnv("put_n", 2).backend == "numba"  # auto picks the kernel


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_put_n_kernel_matches_engine(case):
    variant, options, must_reach = case
    out = run_differential(variant, episodes=10**9, num_envs=16, seed=7, max_steps=800, reference=PutNReference,
                           **options)
    assert out["steps"] == 800 and out["episodes"] >= 10
    assert must_reach <= out["events"], f"random games never reached {must_reach - out['events']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", SLOW_CASES, ids=[case_id(c) for c in SLOW_CASES])
def test_put_n_kernel_matches_engine_thousands(case):
    variant, options, must_reach = case
    events = set()
    for seed in (1, 2):
        out = run_differential(variant, episodes=1500, num_envs=64, seed=seed, reference=PutNReference, **options)
        assert out["episodes"] >= 1500
        events |= out["events"]
    assert must_reach <= events, f"random games never reached {must_reach - events}"


def _planted(monkeypatch, index: int, value: int) -> None:
    real = vector.put_n_params

    def wrong(venv):
        p = real(venv)
        p[index] = value
        return p

    monkeypatch.setattr(vector, "put_n_params", wrong)


@pytest.mark.parametrize("index,value,why", [
    (K.P_STAKE, 2, "reward"),  # a hand worth 2 without a put
    (K.P_MAX_RAISES, 0, "mask"),  # the put never legal
    (K.P_DEC_ANSWER, 0, "observation differs"),  # an answer observed as a turn
], ids=["stake", "max_raises", "decision"])
def test_a_planted_parameter_bug_fails_the_comparison(monkeypatch, index, value, why):
    _planted(monkeypatch, index, value)
    with pytest.raises(AssertionError, match=why):
        run_differential("put_n", episodes=60, num_envs=16, seed=7, reference=PutNReference, players=4)


def test_a_planted_winners_table_bug_fails_the_comparison(monkeypatch):
    """A table that decides the hand only after its last trick: the engine ends hands sooner."""
    real = vector.put_n_tables

    def late(rules):
        strength, decided, wins = real(rules)
        hs = rules.hand_size
        late = np.where(np.arange(decided.size) % (hs + 1) == 0, decided, -2).astype(np.int8)
        return strength, late, wins

    monkeypatch.setattr(vector, "put_n_tables", late)
    with pytest.raises(AssertionError, match="done|mask|seat"):
        run_differential("put_n", episodes=60, num_envs=16, seed=7, reference=PutNReference, players=3)


def test_put_n_games_do_not_depend_on_threads_or_batch():
    runs = []
    for B, threads in ((8, 1), (8, 2), (16, 3)):
        v = VectorEnv("put_n", B, seed=5, threads=threads, players=5)
        v.reset()
        trace = []
        for _ in range(60):
            st = v.step(v.random_actions())
            trace.append((st.obs[:8].copy(), st.mask[:8].copy(), st.reward[:8].copy(), st.done[:8].copy()))
        runs.append(trace)
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            for x, y in zip(a, b):
                assert np.array_equal(x, y)
