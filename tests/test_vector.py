"""The batched engine against engine.py: same deals, same actions -> same masks, observations,
rewards and episode ends, step by step (issue 7). The kernel deals from ``VectorEnv.deck``; the
reference ``State`` of each game is fed the same cards as explicit chance outcomes."""

from __future__ import annotations

import numpy as np
import pytest

from truc_env.batch.vector import VectorEnv, kernel_supports
from truc_env.errors import TrucError
from truc_env.game.engine import State
from truc_env.game.observe import encoder_of

pytest.importorskip("numba")


class Reference:
    """engine.State replicas of every game of a VectorEnv, fed the kernel's deals."""

    def __init__(self, venv: VectorEnv):
        self.v = venv
        self.r = venv.rules
        self.enc = encoder_of(self.r)
        B = venv.num_envs
        self.states: list[State] = [None] * B
        self.ptr = [0] * B
        self.hands = [0] * B
        self.paid = [None] * B
        self.events: set[str] = set()  # what the random games went through (coverage of the comparison)

    def new_episode(self, b: int) -> None:
        v = self.v
        score = [int(x) for x in v.scores[b][: self.r.n_sides]]
        self.states[b] = State(self.r, episode=v.episode, dealer=int(v.dealers[b]), score=score)
        self.paid[b] = [0.0] * self.r.players
        self.hands[b] = -1
        self.feed(b)

    def feed(self, b: int) -> None:
        st = self.states[b]
        if len(st.hand_log) != self.hands[b]:
            self.hands[b] = len(st.hand_log)
            self.ptr[b] = 0
        deck = self.v.deck[b]
        while st.is_chance_node():
            assert st.phase == "deal", st.phase
            st.apply_action(self.r.deck[deck[self.ptr[b]]])
            self.ptr[b] += 1

    def check(self, b: int, obs, mask, seat, where: str) -> None:
        st = self.states[b]
        assert st.current_player() == seat[b], f"{where}: game {b}: seat {seat[b]} vs engine {st.current_player()}"
        legal = np.flatnonzero(mask[b]).tolist()
        assert legal == st.legal_actions(), f"{where}: game {b}: mask {legal} vs engine {st.legal_actions()}"
        if obs.shape[1]:
            ref = self.enc.encode(st, int(seat[b]))
            if not np.array_equal(obs[b], ref):
                diff = np.flatnonzero(obs[b] != ref)
                names = [next(n for n, o, s, _ in self.enc.table() if o <= i < o + s) for i in diff]
                raise AssertionError(f"{where}: game {b}: observation differs at {list(zip(diff, names))}: "
                                     f"kernel {obs[b][diff]} engine {ref[diff]}")

    def step(self, b: int, action: int, reward, done, where: str) -> None:
        st = self.states[b]
        st.apply_action(int(action))
        ev = self.events
        if st.special:
            ev.add(st.special)
        if st.old_hands:
            ev.add("redeal")
        if st.all_in_accepted:
            ev.add("all_in")
        if st.level >= 2:
            ev.add("raised twice")
        if st.phase == "signal" or st.signals:
            ev.add("signals")
        expect = np.zeros(self.r.players, np.float32)
        if self.v.reward_kind == "points":  # as scored: a hand's points when it ends, envido's when settled
            ret = st.returns()
            expect[:] = [x - y for x, y in zip(ret, self.paid[b])]
            self.paid[b] = ret
        elif st.is_terminal():
            from truc_env.envs.pettingzoo_env import win_rewards

            expect[:] = win_rewards(st)
        assert bool(done[b]) == st.is_terminal(), f"{where}: game {b}: done {done[b]} vs engine {st.is_terminal()}"
        assert np.array_equal(reward[b], expect), f"{where}: game {b}: reward {reward[b]} vs engine {expect}"
        if st.is_terminal():
            self.new_episode(b)
        else:
            self.feed(b)


def run_differential(variant: str, episodes: int, num_envs: int = 32, seed: int = 0, max_steps: int = 100_000,
                     reference=Reference, **kwargs) -> dict:
    """Play random games in the kernel and in engine.py side by side; returns counts."""
    venv = VectorEnv(variant, num_envs, seed=seed, backend="numba", **kwargs)
    ref = reference(venv)
    obs, mask, seat = venv.reset()
    for b in range(num_envs):
        ref.new_episode(b)
        ref.check(b, obs, mask, seat, "reset")
    done_count = steps = 0
    rng = np.random.default_rng(seed)
    while done_count < episodes and steps < max_steps:
        actions = venv.random_actions().copy()
        actions[rng.random(num_envs) < 0.1] = -1  # some games wait
        obs, mask, reward, done, seat = venv.step(actions)
        steps += 1
        for b in range(num_envs):
            where = f"{variant} {kwargs} step {steps}"
            if actions[b] >= 0:
                ref.step(b, actions[b], reward, done, where)
            else:
                assert not done[b] and not reward[b].any()
            ref.check(b, obs, mask, seat, where)
        done_count += int(done.sum())
    return {"episodes": done_count, "steps": steps, "events": ref.events}


# (variant, options, events the random games must reach)
CASES = [
    ("le_truc", dict(dealer="random", random_start_score=0.5), {"redeal", "all_in"}),
    ("le_truc", dict(episode="game"), {"redeal", "all_in"}),
    ("le_truc", dict(ranking="seven_ace", ladder="doubling", all_tied="leader", fold=False, max_raises=2,
                     reward="win"), {"redeal"}),
    ("le_truc", dict(ranks=4, hand_size=2, redeal=False, episode="game"), set()),
    ("put", dict(dealer="random", random_start_score=0.5), {"all_in"}),
    ("truco_paulista", dict(dealer="random", random_start_score=0.5), {"eleven", "raised twice"}),
    ("truco_paulista", dict(target=4, random_start_score=0.8), {"eleven", "iron"}),
    ("truco_paulista", dict(episode="game", reward="win"), {"raised twice"}),
    ("truco_paulista", dict(players=2, deck="clean", blind=False, fold=True, random_start_score=0.5), {"eleven"}),
    ("truco_paulista", dict(signals={"mode": "card"}, random_start_score=0.3), {"signals", "eleven"}),
    ("truco_paulista", dict(signals={"mode": "free", "timing": "every_trick"}), {"signals"}),
    ("truco_paulista", dict(signals={"mode": "senas", "truthful": False, "intercept": 1.0, "timing": "every_trick"},
                            random_start_score=0.3), {"signals"}),
    ("truco_paulista", dict(signals={"mode": "none", "open_hands": True}, random_start_score=0.3), {"eleven"}),
    ("truco_mineiro", dict(target=4, random_start_score=0.8), {"eleven", "iron"}),
    ("truco_mineiro", dict(players=2, ladder="mineiro", deck="clean", random_start_score=0.5, all_tied="leader"),
     {"eleven"}),
]


def _id(case):
    variant, options, _ = case
    return variant + "".join(f"-{k}={v}" for k, v in options.items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_kernel_matches_engine(case):
    variant, options, must_reach = case
    out = run_differential(variant, episodes=100, num_envs=24, seed=7, **options)
    assert out["episodes"] >= 100
    assert must_reach <= out["events"], f"random games never reached {must_reach - out['events']}"


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_kernel_matches_engine_thousands(case):
    variant, options, _ = case
    for seed in (1, 2):
        assert run_differential(variant, episodes=1500, num_envs=64, seed=seed, **options)["episodes"] >= 1500


def test_senas_truthful_signals_match_engine():
    out = run_differential("truco_paulista", episodes=60, num_envs=16, seed=3, signals={"mode": "senas"})
    assert "signals" in out["events"]


@pytest.mark.parametrize("num_envs", [64, 4096])  # 4096: more chunks than threads
def test_threads_give_the_same_games(num_envs):
    """Chunks of the batch on threads: each game has its own random stream, so nothing changes."""
    envs = [VectorEnv("le_truc", num_envs, seed=5, threads=threads) for threads in (1, 2, 3)]  # 3: uneven chunks
    first = [v.reset() for v in envs]
    for other in first[1:]:
        assert np.array_equal(first[0].obs, other.obs) and np.array_equal(first[0].mask, other.mask)
    for _ in range(40):  # in lockstep, compared step by step (no trace of 4096 observations kept)
        steps = [v.step(v.random_actions()) for v in envs]
        for st in steps[1:]:
            for x, y in zip((steps[0].obs, steps[0].mask, steps[0].reward, steps[0].done),
                            (st.obs, st.mask, st.reward, st.done)):
                assert np.array_equal(x, y)


def test_same_seed_same_games_and_batch_size_independent():
    a = VectorEnv("truco_paulista", 8, seed=11)
    b = VectorEnv("truco_paulista", 16, seed=11)
    a.reset()
    b.reset()
    assert np.array_equal(a.deck, b.deck[:8])


def test_backend_is_explicit():
    assert VectorEnv("le_truc", 2).backend == "numba"
    assert kernel_supports(VectorEnv("put_n", 2, backend="loop").rules) is None  # its own kernel: test_vector_put_n.py
    v = VectorEnv("truco_paulista", 2, signals={"mode": "free", "intercept": 0.5})
    assert v.backend == "loop" and "intercept" in v.fallback_reason
    assert kernel_supports(v.rules)
    with pytest.raises(TrucError, match="cannot run"):
        VectorEnv("truco_paulista", 2, backend="numba", signals={"mode": "free", "intercept": 0.5})


@pytest.mark.parametrize("variant", ["le_truc_4p", "truco_argentino", "put_4p", "put_n"])
def test_loop_backend_plays_whole_episodes(variant):
    v = VectorEnv(variant, 4, seed=0, backend="loop")
    obs, mask, seat = v.reset()
    enc = encoder_of(v.rules)
    assert obs.shape == (4, enc.size) and mask.shape == (4, v.n_actions)
    done = 0
    for _ in range(400):
        st = v.step(v.random_actions())
        assert (st.mask.sum(1) > 0).all()
        if v.rules.n_sides == 2:
            assert np.allclose(st.reward[:, 0], -st.reward[:, 1])
        done += int(st.done.sum())
    assert done > 0


def test_loop_backend_matches_kernel_interface():
    """Both backends give the same shapes, dtypes and reward conventions."""
    for backend in ("numba", "loop"):
        v = VectorEnv("le_truc", 3, seed=0, backend=backend)
        obs, mask, seat = v.reset()
        assert obs.dtype == np.float32 and mask.dtype == np.int8 and seat.shape == (3,)
        total = np.zeros(2)
        for _ in range(300):
            st = v.step(v.random_actions())
            total += st.reward.sum(0)
        assert total[0] == -total[1]


def test_illegal_action_is_refused_with_the_legal_ones():
    v = VectorEnv("le_truc", 2, seed=0)
    _, mask, _ = v.reset()
    bad = int(np.flatnonzero(mask[0] == 0)[0])
    with pytest.raises(TrucError, match="legal"):
        v.step(np.array([bad, -1]))


def test_waiting_games_do_not_move():
    v = VectorEnv("le_truc", 2, seed=0)
    obs, _, _ = v.reset()
    before = obs.copy()
    st = v.step(np.array([-1, -1]))
    assert np.array_equal(st.obs, before) and not st.done.any() and not st.reward.any()


def test_gymnasium_vector_env():
    gymnasium = pytest.importorskip("gymnasium")
    from truc_env.envs.gym_vector import TrucVectorEnv

    envs = TrucVectorEnv("le_truc", num_envs=8, seed=0)
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (8, envs.single_observation_space.shape[0])
    rng = np.random.default_rng(0)
    episodes, total = 0, 0.0
    for _ in range(300):
        mask = info["action_mask"]
        assert (mask.sum(1) > 0).all()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, reward, term, trunc, info = envs.step(acts)
        assert envs.observation_space.contains(obs)
        episodes += int(term.sum())
        total += float(reward.sum())
    assert episodes > 50
    # random against random: the learner's mean hand result is near zero
    assert abs(total / episodes) < 1.5
