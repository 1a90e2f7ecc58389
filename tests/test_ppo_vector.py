"""PPO rollouts on the batched engine (issue 7): the same credit as engine tables, only legal actions,
strength features bit-identical to the engine's, and learning."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

from test_ppo import SMALL, assert_tiny_run_improves_against_random, tiny_config  # noqa: E402
from test_vector import Reference  # noqa: E402

from agents.network import PolicyNet  # noqa: E402
from agents.network.network import (  # noqa: E402  # noqa: E402
    encode_state,
    stack_actors,
    stacked_actor_logits,
    strength_features,
    strength_features_batch,
)
from train.algos import ppo  # noqa: E402
from train.algos.buffer import Buffer  # noqa: E402
from train.algos.rollout import VectorGames  # noqa: E402
from truc_env.batch.vector import VectorEnv  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402
from truc_env.game.engine import State, sample_chance  # noqa: E402
from truc_env.game.observe import encoder_of  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

torch.set_num_threads(1)

KERNEL_RULES = [("le_truc", {}), ("le_truc", SMALL), ("truco_paulista", {}), ("truco_paulista", {"players": 4}),
                ("truco_mineiro", {"players": 4}), ("put", {}), ("put_n", {"players": 4}), ("put_n", {"players": 6}),
                ("truco_paulista", {"players": 4, "signals": {"mode": "free", "vocab": 8}})]


# ------------------------------------------------------------------------------------------- features
@pytest.mark.parametrize("variant,options", KERNEL_RULES, ids=lambda x: str(x))
def test_strength_features_from_observations_equal_the_engine_ones(variant, options):
    rules = make_rules(variant, **options)
    enc = encoder_of(rules)
    rng = np.random.default_rng(0)
    obs, ref = [], []
    while len(obs) < 1500:  # random games from random scores (mão de onze, mão de ferro played blind)
        score = [int(x) for x in rng.integers(0, rules.target, size=rules.n_sides)] if rng.random() < 0.4 else None
        st = State(rules, episode="game" if rng.random() < 0.3 else "hand", dealer=int(rng.integers(rules.players)),
                   score=score)
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(sample_chance(st, rng))
                continue
            seat = st.current_player()
            obs.append(enc.encode(st, seat))
            ref.append(strength_features(st, seat))
            legal = st.legal_actions()
            st.apply_action(legal[int(rng.integers(len(legal)))])
    got = strength_features_batch(rules, np.stack(obs))
    assert got.dtype == np.float32
    assert np.array_equal(got, np.stack(ref))


# ------------------------------------------------------------------------------------------- credit
def _credit_run(variant, options, episode, reward, random_start_score, labels, ticks=400, seed=0,
                features="observation+strength"):
    """Drive VectorGames with random legal actions next to engine replicas of every game (fed the
    same deals); check the buffer against the credit computed from the engine's returns."""
    rules = make_rules(variant, **options)
    # put_n's zero-sum points are fractions (own minus the mean): the batched engine's float32 rewards
    # add up to the engine's float64 returns only to float32 rounding; two-sided points are exact
    close = (lambda x: x) if rules.n_sides == 2 else (lambda x: pytest.approx(x, abs=1e-5))
    cfg = tiny_config("/nonexistent", variant=variant, options=options, episode=episode, reward=reward,
                      reward_scale=0.25, random_start_score=random_start_score, features=features,
                      num_envs=len(labels))
    venv = VectorEnv(rules, len(labels), episode=episode, reward="points", dealer="random",
                     random_start_score=random_start_score)
    vg = VectorGames(cfg, rules, venv)
    rng = np.random.default_rng(seed)
    vg.begin()
    for b, label in enumerate(labels):
        vg.start(b, rng, label, 0 if label.startswith("pool") else -1)
    ref = Reference(venv)
    for b in range(len(labels)):
        ref.new_episode(b)
    buf = Buffer()
    expect = {}  # transition -> (reward, done, nxt)
    open_ = [dict() for _ in labels]  # per game: seat -> (transition, seat's return at that decision)
    decisions = [0] * len(labels)
    finished = []
    for _ in range(ticks):
        groups = vg.groups()
        acted = {}
        for k, idx in groups.items():
            obs, masks = vg.inputs(idx)
            seats = vg.seat[idx].copy()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            j0 = len(buf)
            vg.record(idx, obs, masks, actions, np.zeros(len(idx), np.float32), np.zeros(len(idx), np.float32),
                      buf if k < 0 else None)
            for row, (b, s) in enumerate(zip(idx.tolist(), seats.tolist())):
                st = ref.states[b]
                assert np.array_equal(obs[row], encode_state(st, s, cfg.features))  # features on real kernel states
                learner = vg.side[b] < 0 or rules.side(s) == vg.side[b]
                assert learner == (k < 0)
                decisions[b] += 1
                acted[b] = int(actions[row])
                if k < 0:
                    now = st.returns()[s]
                    if s in open_[b]:
                        j, before = open_[b][s]
                        gained = (now - before) * 0.25 if reward == "points" else 0.0
                        expect[j] = (gained, False, j0 + row)
                    open_[b][s] = (j0 + row, now)
        states = list(ref.states)
        out = {e[0]: e for e in vg.step(buf)}
        for b, a in acted.items():
            st = states[b]
            st.apply_action(a)
            if not st.is_terminal():
                ref.feed(b)
                assert b not in out
                continue
            ret = st.returns()
            for s, (j, before) in open_[b].items():
                gained = (ret[s] - before) * 0.25 if reward == "points" else float(np.sign(ret[s])) * 0.25
                expect[j] = (gained, True, -1)
            open_[b] = {}
            first = 0 if vg.side[b] < 0 else min(s for s in range(rules.players) if rules.side(s) == vg.side[b])
            assert out.pop(b) == (b, labels[b], close(ret[first]), decisions[b])
            finished.append(b)
            decisions[b] = 0
            ref.new_episode(b)  # the batched engine has dealt game b's next episode: the slot plays it
            vg.start(b, rng, labels[b], 0 if labels[b].startswith("pool") else -1)
        assert not out
    assert finished, "no episode finished"
    for j in range(len(buf)):
        r, d, nxt = expect.get(j, (0.0, False, -1))
        assert (buf.reward[j], buf.done[j], buf.nxt[j]) == (close(r), d, nxt), j
    return buf, finished


@pytest.mark.parametrize("variant,options,episode,reward,rss", [
    ("le_truc", SMALL, "game", "points", 0.0),
    ("le_truc", {}, "hand", "win", 0.5),
    ("truco_paulista", {"players": 4}, "hand", "points", 0.3),
    ("put_n", {"players": 3}, "game", "points", 0.0),
], ids=["le_truc-small-game-points", "le_truc-hand-win", "paulista4-hand-points", "put_n3-game-points"])
def test_vector_credit_matches_the_engine_returns_of_the_same_deals(variant, options, episode, reward, rss):
    labels = ["self", "pool:0"] * 4
    buf, finished = _credit_run(variant, options, episode, reward, rss, labels)
    assert len(finished) >= 10 and len(buf) > 100 and sum(buf.done) >= 10
    assert any(r != 0 for r, d in zip(buf.reward, buf.done) if not d) == (episode == "game" and reward == "points")


@pytest.mark.parametrize("variant,options", [("le_truc", {}), ("truco_paulista", {"players": 4}), ("put", {})],
                         ids=["le_truc", "paulista4", "put"])
def test_history_features_on_the_batched_engine_equal_the_engine_ones(variant, options):
    """``info_state+strength`` on the batched engine: the rollout's own record of each hand's decisions
    gives the engine's info-state input bit for bit (checked at every decision by ``_credit_run``)."""
    buf, finished = _credit_run(variant, options, "hand", "points", 0.3, ["self", "pool:0"] * 4,
                                features="info_state+strength")
    enc = encoder_of(make_rules(variant, **options))
    history = np.asarray(buf.obs)[:, enc.size:enc.info_size]
    assert len(finished) >= 10 and history.sum(1).max() >= 8  # hands of four decisions and more were seen


def test_history_features_fall_back_to_tables_where_the_batched_engine_cannot_keep_them():
    rules = make_rules("le_truc", **SMALL)
    hand = ppo.Collector(tiny_config("/nonexistent", features="info_state+strength"), rules, torch.device("cpu"))
    assert hand.path == "vector" and hand.vector.history
    game = ppo.Collector(tiny_config("/nonexistent", features="info_state+strength", episode="game"), rules,
                         torch.device("cpu"))
    assert game.path == "engine" and "episode: hand" in game.why
    signals = {"mode": "free", "vocab": 8}
    cfg = tiny_config("/nonexistent", variant="truco_paulista", options={"players": 4, "signals": signals},
                      features="info_state+strength")
    col = ppo.Collector(cfg, make_rules("truco_paulista", players=4, signals=signals), torch.device("cpu"))
    assert col.path == "engine" and "every decision public" in col.why


# ------------------------------------------------------------------------------------------- rollouts
def test_auto_uses_the_batched_engine_where_it_can_and_says_why_not():
    cfg = tiny_config("/nonexistent")
    rules = make_rules("le_truc", **SMALL)
    assert ppo.Collector(cfg, rules, torch.device("cpu")).path == "vector"
    info = tiny_config("/nonexistent", features="info_state")
    col = ppo.Collector(info, rules, torch.device("cpu"))
    assert col.path == "engine" and "info_state" in col.why and col.vector is None
    with pytest.raises(TrucError, match="rollout: vector cannot run"):
        ppo.Collector(tiny_config("/nonexistent", features="info_state", rollout="vector"), rules, torch.device("cpu"))
    four = tiny_config("/nonexistent", variant="le_truc_4p", options={})
    assert ppo.Collector(four, make_rules("le_truc_4p"), torch.device("cpu")).path == "vector"
    put_n = tiny_config("/nonexistent", variant="put_n", options={})  # on its own kernel
    assert ppo.Collector(put_n, make_rules("put_n"), torch.device("cpu")).path == "vector"
    paulista = tiny_config("/nonexistent", variant="truco_paulista", options={"signals": SIGNAL_HALF})
    col = ppo.Collector(paulista, make_rules("truco_paulista", signals=SIGNAL_HALF), torch.device("cpu"))
    assert col.path == "engine" and "intercept" in col.why
    assert ppo.Collector(tiny_config("/nonexistent", rollout="engine"), rules, torch.device("cpu")).vector is None


SIGNAL_HALF = {"mode": "free", "intercept": 0.5}  # interception as a chance event: the engine loop only


def _biased_net(rules, features="observation", seed=0):
    """A network that prefers the highest action ids: masking alone keeps it legal."""
    torch.manual_seed(seed)
    net = PolicyNet(ppo.feature_size(rules, features), ppo.layout_of(rules).size, [16])
    with torch.no_grad():
        net.actor[-1].bias.copy_(torch.linspace(-200, 200, net.actor[-1].bias.numel()))
    return net


@pytest.mark.parametrize("variant,options", [("le_truc", SMALL), ("truco_paulista", {"players": 4}), ("le_truc_4p", {}),
                                             ("truco_argentino", {})])
def test_mixed_rollout_plays_only_legal_actions_and_fills_one_buffer(variant, options):
    rules = make_rules(variant, **options)
    cfg = tiny_config("/nonexistent", variant=variant, options=options, features="observation+strength",
                      random_start_score=0.2, fixed_prob=0.4, self_play_prob=0.3)
    col = ppo.Collector(cfg, rules, torch.device("cpu"))
    assert col.path == "vector"
    net = _biased_net(rules, cfg.features)
    league = ppo.League(cfg)
    for k in range(3):  # several snapshots acting in one tick share one stacked forward
        league.add(k, _biased_net(rules, cfg.features, seed=k))
    rng, gen = np.random.default_rng(1), torch.Generator().manual_seed(1)
    agent = col.agent("heuristic:honest")

    def pick(r):
        u = r.random()
        if u < 0.7:
            return ("heuristic:honest", -1, agent) if u < 0.4 else ("self", -1, None)
        k = int(r.integers(3))
        return f"pool:{k}", k, None

    buf, episodes = col.rollout(net, league, rng, gen, pick, target_steps=600)
    labels = {label for label, _, _ in episodes}
    assert labels == {"heuristic:honest", "self", "pool:0", "pool:1", "pool:2"}  # both paths, one buffer
    masks, actions = np.stack(buf.mask), np.array(buf.action)
    assert masks[np.arange(len(actions)), actions].all()
    assert (actions == masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)).mean() > 0.9  # the bias was real
    adv, _ = buf.advantages(cfg.gamma, cfg.gae_lambda)  # complete episodes: every chain is closed
    assert np.isfinite(adv).all() and not col.vector.live.any()


def test_tiny_vector_run_improves_against_random(tmp_path):
    """Self-play and the league only: every episode on the batched engine."""
    assert_tiny_run_improves_against_random(tmp_path, self_play_prob=0.5, fixed_opponents=[], fixed_prob=0.0,
                                            rollout="vector")


def test_stacked_snapshots_give_each_snapshot_its_own_policy():
    rules = make_rules("le_truc", **SMALL)
    nets = [_biased_net(rules, seed=k) for k in range(3)]
    for net in nets[1:]:  # different policies
        with torch.no_grad():
            net.actor[-1].bias.normal_()
    layers = stack_actors([net.state_dict() for net in nets])
    x = torch.randn(3, 5, ppo.feature_size(rules, "observation"))
    got = stacked_actor_logits(layers, x)
    with torch.no_grad():
        for k, net in enumerate(nets):
            assert torch.allclose(got[k], net.actor(x[k]), atol=1e-4)


def test_heuristic_opponents_play_on_the_batched_engine_and_reproduce(monkeypatch):
    """Heads-up episodes against heuristic:* need no engine table: the batched heuristic plays them."""
    specs = ["heuristic:honest", "heuristic:bluffer", "heuristic:cautious"]
    cfg = tiny_config("/nonexistent", options={}, fixed_opponents=specs, fixed_prob=0.8, self_play_prob=0.2,
                      features="observation+strength", random_start_score=0.3)
    rules = make_rules("le_truc")

    def no_table(*a, **k):
        raise AssertionError("an episode went to an engine table")

    def run():
        col = ppo.Collector(cfg, rules, torch.device("cpu"))
        monkeypatch.setattr(col, "new_table", no_table)
        agents = {s: col.agent(s) for s in specs}
        net = _biased_net(rules, cfg.features)
        rng, gen = np.random.default_rng(4), torch.Generator().manual_seed(4)

        def pick(r):
            if r.random() < 0.2:
                return "self", -1, None
            spec = specs[int(r.integers(3))]
            return spec, -1, agents[spec]

        return col.rollout(net, ppo.League(cfg), rng, gen, pick, target_steps=1500)

    buf, episodes = run()
    labels = [label for label, _, _ in episodes]
    assert set(labels) == {"self", *specs}
    decisions = sum(d for label, _, d in episodes if label != "self")
    learner = len(buf) - sum(d for label, _, d in episodes if label == "self")
    assert 0.3 * decisions < learner < 0.7 * decisions  # the heuristics' decisions are not recorded
    masks, actions = buf.mask, np.array(buf.action)
    assert masks[np.arange(len(actions)), actions].all()
    again, episodes2 = run()  # the batched heuristics' draws are seeded from the rollout's generator
    assert episodes2 == episodes and again.action == buf.action


# ------------------------------------------------------------------------------------------- envido features
ENVIDO_RULES = [("truco_argentino", {"players": 4, "flor": True, "signals": {"mode": "senas"}}),
                ("truco_argentino", {"players": 2})]


def _argentine_decisions(rules, count, seed=0):
    """(state copy, seat) at random decisions of random hands."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        st = State(rules, episode="hand", dealer=int(rng.integers(rules.players)))
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(sample_chance(st, rng))
                continue
            out.append((st.clone(), st.current_player()))
            legal = st.legal_actions()
            st.apply_action(legal[int(rng.integers(len(legal)))])
    return out


@pytest.mark.parametrize("variant,options", ENVIDO_RULES, ids=lambda x: str(x))
def test_envido_features_from_observations_equal_the_engine_ones(variant, options):
    from agents.network.network import ENVIDO_MAX, encode_batch, envido_features, envido_features_batch, feature_size

    rules = make_rules(variant, **options)
    enc = encoder_of(rules)
    decisions = _argentine_decisions(rules, 1200)
    obs = np.stack([enc.encode(st, s) for st, s in decisions])
    ref = np.stack([envido_features(st, s) for st, s in decisions])
    got = envido_features_batch(rules, obs)
    assert got.dtype == np.float32 and np.array_equal(got, ref)
    full = np.stack([encode_state(st, s, "observation+strength+envido") for st, s in decisions])
    assert np.array_equal(encode_batch(rules, obs, "observation+strength+envido"), full)
    assert full.shape[1] == feature_size(rules, "observation+strength+envido")
    # the figures are the engine's own envido points and flor, from the dealt cards the seat has seen
    from truc_env.game.calls import envido_points, holds_flor

    for (st, s), row in zip(decisions[:300], ref):
        cards = list(st.dealt_hands[s])
        assert row[0] == np.float32(envido_points(cards, rules.family) / ENVIDO_MAX)
        assert row[1] == float(holds_flor(cards, rules.family))
    assert ref[:, 0].max() == 1.0 and 0.0 < ref[:, 1].mean() < 0.2  # 33 points and some flores were seen


def test_envido_features_need_a_variant_with_envido(tmp_path):
    with pytest.raises(TrucError, match="need a variant with envido"):
        tiny_config(tmp_path, features="observation+strength+envido").validate()
