"""PPO self-play: masking, credit assignment in turn-based play, checkpoints and resume, learning."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.network import CheckpointError, PolicyNet, load_agent, read_checkpoint  # noqa: E402
from train.algos import ppo  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402
from truc_env.game.engine import State, sample_chance  # noqa: E402
from truc_env.game.episode import Dealer  # noqa: E402
from truc_env.game.observe import SeatObservation  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

SMALL = {"ranks": 4, "hand_size": 2}
torch.set_num_threads(1)  # as training does: tiny batches, and a shared CPU makes thread pools crawl


def tiny_config(tmp_path, **kw) -> ppo.PPOConfig:
    d = dict(name="t", out_dir=str(tmp_path), variant="le_truc", options=dict(SMALL), seed=3, device="cpu",
             deterministic=False, total_steps=4 * 256, steps_per_update=256, num_envs=16, hidden=[32, 32],
             snapshot_every=1, self_play_prob=0.4, fixed_opponents=["heuristic:honest"], fixed_prob=0.2,
             eval_every=2, eval_episodes=20, eval_opponent="random", progress=False, tensorboard=False, plot=False)
    d.update(kw)
    return ppo.PPOConfig.from_dict(d)


# ------------------------------------------------------------------------------------------- masking
def test_masked_sampling_never_picks_an_illegal_action():
    torch.manual_seed(0)
    net = PolicyNet(10, 12, [16])
    with torch.no_grad():  # make illegal actions attractive: masking alone must stop them
        net.actor[-1].bias.copy_(torch.linspace(10, -10, 12))
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        mask = torch.as_tensor(rng.random((64, 12)) < 0.3)
        mask[torch.arange(64), torch.as_tensor(rng.integers(12, size=64))] = True
        x = torch.randn(64, 10)
        action, logp, ent, _ = net(x, mask, generator=gen)
        assert mask[torch.arange(64), action].all()
        assert torch.isfinite(logp).all() and torch.isfinite(ent).all()
        # the update recomputes the same log-probabilities from the stored masks
        _, logp2, _, _ = net(x, mask, action)
        assert torch.allclose(logp, logp2)
        p = torch.softmax(net.masked_logits(x, mask), -1)
        assert (p[~mask] == 0).all()


def test_ppo_agent_plays_only_legal_actions_in_real_games():
    rules = make_rules("le_truc")
    enc_size = ppo.feature_size(rules, "observation")
    from truc_env.game.actions import layout_of

    net = PolicyNet(enc_size, layout_of(rules).size, [32])
    from agents.network import PPOAgent

    agent = PPOAgent(net, rules, "observation", seed=0)
    rng = np.random.default_rng(1)
    for _ in range(30):
        st = State(rules, episode="hand", dealer=int(rng.integers(2)))
        while not st.is_terminal():
            if st.is_chance_node():
                st.apply_action(sample_chance(st, rng))
                continue
            seat = st.current_player()
            mask = np.zeros(layout_of(rules).size, np.int8)
            mask[st.legal_actions()] = 1
            a = agent.act(SeatObservation(st, seat, mask), mask)
            assert a in st.legal_actions()
            st.apply_action(a)


# ------------------------------------------------------------------------------------------- credit
class ScriptedCollector(ppo.Collector):
    """Deals fixed hands, seats dealer 1, and plays a scripted action list instead of sampling."""

    def __init__(self, cfg, rules, deal, script, opponent_agent=None):
        super().__init__(cfg, rules, torch.device("cpu"))
        self.deal = [rules.family.parse(c) for c in deal]
        self.script = list(script)

    def new_table(self, rng, opponent, pool_k=-1, agent=None):
        t = super().new_table(rng, opponent, pool_k, agent)
        t.state = State(self.rules, episode="hand", dealer=1)
        if opponent != "self":
            t.control = ["learner", agent]
            t.learner_seats = [0]
        return t

    def dealer(self, rng):  # the deck order starts with the scripted deal
        deck = list(self.rules.deck)
        order = [deck.index(c) for c in self.deal] + [i for i, c in enumerate(deck) if c not in self.deal]
        return Dealer(self.rules, rng, decks=lambda hand: order)

    def decide(self, net, league, k, x, m, gen, states):
        actions = []
        for st in states:
            seat, text = self.script.pop(0).split(" ", 1)
            assert int(seat) == st.current_player()
            actions.append(st.string_to_action(text))
        n = len(actions)
        return np.array(actions), np.zeros(n, np.float32), np.zeros(n, np.float32)


# docs/rules.md §9 worked example: dealer 1, seat 0 leads; seat 1 wins 2 points when seat 0 refuses.
DEAL = ["7c", "8h", "9d", "7d", "Ks", "As"]  # drawn one at a time from seat d+1 = 0
SCRIPT = ["0 raise", "1 accept", "0 play 7c", "1 play 7d", "0 play Ks", "1 raise", "0 refuse"]


def _scripted_rollout(tmp_path, opponent: str, agent=None, script=SCRIPT):
    cfg = tiny_config(tmp_path, options={}, num_envs=1, reward_scale=1.0, rollout="engine")
    rules = make_rules("le_truc")
    col = ScriptedCollector(cfg, rules, DEAL, script)
    rng = np.random.default_rng(0)
    buf, episodes = col.rollout(None, ppo.League(cfg), rng, None, lambda r: (opponent, -1, agent), target_episodes=1)
    return buf, episodes


def test_credit_each_seat_gets_its_own_reward_in_self_play(tmp_path):
    buf, episodes = _scripted_rollout(tmp_path, "self")
    # transitions in the order taken: seat 0 at 0, 2, 4, 6; seat 1 at 1, 3, 5
    assert len(buf) == 7
    assert buf.reward == [0.0, 0.0, 0.0, 0.0, 0.0, 2.0, -2.0]
    # seat 1's raise is its last step: the points won on seat 0's refusal are credited to it
    assert buf.done == [False, False, False, False, False, True, True]
    assert buf.nxt[:5] == [2, 3, 4, 5, 6]
    adv, ret = buf.advantages(gamma=1.0, lam=1.0)
    assert list(ret) == [-2.0, 2.0, -2.0, 2.0, -2.0, 2.0, -2.0]  # no seat learns from the other's reward
    assert episodes == [("self", -2.0, 7)]


def test_credit_against_a_fixed_opponent_records_only_the_learner(tmp_path):
    class Scripted:
        name = "scripted"

        def __init__(self, moves):
            self.moves = list(moves)

        def reset(self, seed=None):
            pass

        def act(self, observation, mask):
            move = self.moves.pop(0)
            return observation.apply(lambda state, _seat: state.string_to_action(move))

    opp = Scripted(["accept", "play 7d", "raise"])
    learner_script = [s for s in SCRIPT if s.startswith("0 ")]
    buf, episodes = _scripted_rollout(tmp_path, "fixed", opp, learner_script)
    assert len(buf) == 4  # seat 0's four decisions only
    assert buf.reward == [0.0, 0.0, 0.0, -2.0]
    assert buf.done == [False, False, False, True]
    assert buf.nxt[:3] == [1, 2, 3]
    assert episodes[0][1] == -2.0


def test_reward_after_the_last_action_goes_to_that_last_step(tmp_path):
    # seat 1 wins trick 3 with the hand's last card: seat 0's loss arrives on seat 1's move
    script = ["0 play 9d", "1 play As", "1 play 8h", "0 play 7c", "0 play Ks", "1 play 7d"]
    buf, episodes = _scripted_rollout(tmp_path, "self", script=script)
    assert episodes[0][2] == len(script)
    assert buf.reward == [0.0, 0.0, 0.0, 0.0, -1.0, 1.0]
    assert buf.done == [False, False, False, False, True, True]
    assert buf.nxt[:4] == [3, 2, 5, 4]


# ------------------------------------------------------------------------------------------- config, checkpoints
def test_unknown_setting_is_a_clear_error(tmp_path):
    with pytest.raises(TrucError, match="unknown setting.*learning_rat.*PPO config"):
        ppo.PPOConfig.from_dict({"learning_rat": 0.1})
    with pytest.raises(TrucError, match="pool_scheme"):
        ppo.PPOConfig.from_dict({"pool_scheme": "best"})


def test_bad_opponent_spec_is_refused_before_training(tmp_path):
    # a typo in an opponent drawn only now and then, or in the evaluation opponent, used to stop the run
    # at the first episode or evaluation that drew it, minutes in, with an out folder already made
    for kw, match in [({"fixed_opponents": ["cfr:nope.npz"]}, "no such file 'nope.npz'"),
                      ({"eval_opponent": "heuristic:honset"}, "unknown heuristic style 'honset'")]:
        with pytest.raises(TrucError, match=match):
            ppo.train(tiny_config(tmp_path / "o", **kw))
        assert not (tmp_path / "o").exists()


def _params(net):
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def test_checkpoint_loads_weights_only_and_refuses_other_rules(tmp_path):
    cfg = tiny_config(tmp_path, total_steps=256)
    summary = ppo.train(cfg)
    path = os.path.join(summary["run_dir"], "checkpoint.pt")
    ck = torch.load(path, weights_only=True)
    assert ck["rules_key"] == make_rules("le_truc", **SMALL).key and ck["update"] == 1
    policy = os.path.join(summary["run_dir"], "policy.pt")
    agent = make_agent(f"ppo:{policy}", make_rules("le_truc", **SMALL), seed=0)
    assert agent.features == "observation"
    with pytest.raises(CheckpointError, match="trained for le_truc"):
        load_agent(policy, make_rules("le_truc"))
    with pytest.raises(CheckpointError, match="not a readable PPO checkpoint"):
        bad = tmp_path / "bad.pt"
        bad.write_bytes(b"not a checkpoint")
        read_checkpoint(str(bad))
    with pytest.raises(TrucError, match="--resume"):
        ppo.train(cfg)  # the run exists: refuse to overwrite it


def die_at_third_checkpoint(monkeypatch):
    """The trainer's process dies during update 3, before its checkpoint (KeyboardInterrupt); returns
    the function that undoes it."""
    real_save = ppo.save_atomic
    calls = {"n": 0}

    def dying_save(obj, path):
        if path.endswith("checkpoint.pt"):
            calls["n"] += 1
            if calls["n"] == 3:
                raise KeyboardInterrupt("killed")
        real_save(obj, path)

    monkeypatch.setattr(ppo, "save_atomic", dying_save)
    return lambda: monkeypatch.setattr(ppo, "save_atomic", real_save)


def test_resume_reproduces_the_uninterrupted_run(tmp_path, monkeypatch):
    full = ppo.train(tiny_config(tmp_path / "a", deterministic=True))
    revive = die_at_third_checkpoint(monkeypatch)
    cfg = tiny_config(tmp_path / "b", deterministic=True)
    with pytest.raises(KeyboardInterrupt):
        ppo.train(cfg)
    revive()
    assert torch.load(os.path.join(cfg.out_dir, "t", "checkpoint.pt"), weights_only=True)["update"] == 2
    resumed = ppo.train(cfg, resume=True)
    a, b = _params(full["net"]), _params(resumed["net"])
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert resumed["global_step"] == full["global_step"]


@pytest.mark.slow
def test_resume_after_kill_9_reproduces_the_uninterrupted_run(tmp_path):
    kw = dict(total_steps=30 * 256, deterministic=True)
    full = ppo.train(tiny_config(tmp_path / "a", **kw))
    cfg = tiny_config(tmp_path / "b", **kw)
    code = ("import sys; from train import ppo; import tests.test_ppo as t; import pathlib;"
            f"ppo.train(t.tiny_config(pathlib.Path({str(tmp_path / 'b')!r}), total_steps={30 * 256}, deterministic=True))")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=os.path.dirname(os.path.dirname(__file__)))
    ck = os.path.join(cfg.out_dir, "t", "checkpoint.pt")
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if os.path.exists(ck) and torch.load(ck, weights_only=True)["update"] >= 5:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = ppo.train(cfg, resume=True)
    a, b = _params(full["net"]), _params(resumed["net"])
    assert all(torch.equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------------------------------------- learning
def assert_tiny_run_improves_against_random(tmp_path, **kw):
    rules = make_rules("le_truc", **SMALL)
    cfg = tiny_config(tmp_path, **{**dict(total_steps=12 * 512, steps_per_update=512, num_envs=32, hidden=[64, 64],
                                          learning_rate=1e-3, self_play_prob=0.3, fixed_opponents=["random"],
                                          fixed_prob=0.5, eval_every=1000), **kw})
    col = ppo.Collector(cfg, rules, torch.device("cpu"))
    torch.manual_seed(cfg.seed)
    untrained = PolicyNet(ppo.feature_size(rules, "observation"), col.n_actions, cfg.hidden)
    eval_cfg = tiny_config(tmp_path, eval_episodes=2000, num_envs=64)
    col_eval = ppo.Collector(eval_cfg, rules, torch.device("cpu"))
    before = ppo.evaluate(untrained, eval_cfg, rules, torch.device("cpu"), col_eval, ppo.League(eval_cfg), 99)
    summary = ppo.train(cfg)
    after = ppo.evaluate(summary["net"], eval_cfg, rules, torch.device("cpu"), col_eval, ppo.League(eval_cfg), 99)
    assert after["return"] - after["return_ci95"] > before["return"] + before["return_ci95"], (before, after)
    assert after["return"] > 0.3


@pytest.mark.parametrize("rollout", ["engine", "auto"])  # auto: self-play and league on the batched engine
def test_tiny_run_improves_against_random(tmp_path, rollout):
    assert_tiny_run_improves_against_random(tmp_path, rollout=rollout)


def test_strength_features_show_only_what_the_seat_sees():
    from agents.network.network import feature_size, strength_features

    rules = make_rules("truco_paulista", players=4)
    rng = np.random.default_rng(0)
    for score in (None, [11, 11]):  # 11-11: mão de ferro, played blind
        st = State(rules, episode="hand", dealer=0, score=score)
        while st.is_chance_node():
            st.apply_action(sample_chance(st, rng))
        if st.phase == "eleven":
            st.apply_action(st.legal_actions()[0])
        seat = st.current_player()
        f = strength_features(st, seat)
        assert f.shape == (feature_size(rules, "observation+strength") - feature_size(rules, "observation"),)
        assert ((0 <= f) & (f <= 1)).all()
        own = f[:rules.hand_size]
        assert (own == 0).all() if score else (own > 0).all() and list(own) == sorted(own, reverse=True)


def test_plots_name_the_algorithm_and_write_a_lone_point_as_text(tmp_path, monkeypatch):
    from train.algos import ppo_plots

    figs = []
    monkeypatch.setattr(ppo_plots, "save_figure", lambda fig, path: figs.append(fig) or path)
    cfg = tiny_config(tmp_path, algorithm="mmd")
    assert ppo.run_title(cfg, make_rules("le_truc", **SMALL)).startswith("MMD t ")
    one = [{"global_step": 256, "entropy": 1.0, "approx_kl": 0.01, "explained_variance": 0.5, "sps": 900.0,
            "eval": {"opponent": "random", "win_rate": 0.6, "return": 0.2, "return_ci95": 0.1},
            "exploitability": {"exploitability": 1.5}}]
    ppo.plot_curves(one, str(tmp_path / "c.png"), title="MMD t")
    ppo.plot_exploitability(one, str(tmp_path / "e.png"), title="MMD t")
    assert figs[0]._suptitle.get_text() == "MMD t"
    for ax in (a for fig in figs for a in fig.axes):  # no panel holds a single point on a degenerate axis
        assert not ax.lines and not ax.collections and "one measurement" in ax.texts[0].get_text()
    figs.clear()
    ppo.plot_curves(one * 3, str(tmp_path / "c.png"), title="PPO t")  # three at one step: still no curve
    assert not any(ax.lines for ax in figs[0].axes)
    figs.clear()
    three = [{**one[0], "global_step": 256 * k} for k in (1, 2, 3)]
    ppo.plot_curves(three, str(tmp_path / "c.png"), title="PPO t")  # three steps: curves
    assert all(ax.lines for ax in figs[0].axes)
