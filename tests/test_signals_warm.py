"""Talking from the silent twin (issue 33 item 2, docs/signals.md): PPO's ``init_from`` widens a no-channel
Le Truc 2 vs 2 policy to the channel's Rules without changing what it computes, the run starts from it (and
trains differently than from random weights), bad settings are refused in one line, and the study trains
each run after the run it starts from."""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.network import PolicyNet, feature_size  # noqa: E402
from train.algos import ppo  # noqa: E402
from train.algos.signals_runs import Run, load_experiment, training_waves  # noqa: E402
from train.algos.warm_start import input_map, widen  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402
from truc_env.game.actions import layout_of  # noqa: E402
from truc_env.game.observe import encoder_of  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402

SILENT = {"signals": {"mode": "none"}, "instructions": False}
FEATURES = "observation+strength"
torch.set_num_threads(1)


def rules_pair():
    return make_rules("le_truc_4p", **SILENT), make_rules("le_truc_4p")


def tiny(tmp_path, name, **kw) -> ppo.PPOConfig:
    d = dict(name=name, out_dir=str(tmp_path), variant="le_truc_4p", options={}, seed=2, device="cpu",
             total_steps=512, steps_per_update=256, num_envs=8, hidden=[16], features=FEATURES,
             rollout="engine", fixed_opponents=["random"], fixed_prob=0.5, self_play_prob=0.3,
             eval_every=10**6, eval_episodes=4, eval_opponent="random", progress=False, tensorboard=False,
             plot=False, checkpoint_every=10**6)
    d.update(kw)
    return ppo.PPOConfig.from_dict(d)


def test_widened_network_computes_the_source_function_and_starts_silent():
    src_rules, dst_rules = rules_pair()
    torch.manual_seed(0)
    src = PolicyNet(feature_size(src_rules, FEATURES), layout_of(src_rules).size, [16, 8])
    for p in src.parameters():  # not the near-zero logits of a fresh init: every weight matters
        p.data.normal_(0, 0.5)
    dst = widen(src, src_rules, dst_rules, FEATURES, instruct_none=0.9)
    rng = np.random.default_rng(1)
    xs = torch.as_tensor(rng.random((32, feature_size(src_rules, FEATURES)), dtype=np.float32))
    xd = torch.as_tensor(rng.random((32, feature_size(dst_rules, FEATURES)), dtype=np.float32))  # new sections random
    for a, b, w in input_map(src_rules, dst_rules, FEATURES):
        xd[:, b:b + w] = xs[:, a:a + w]
    Ls, Ld = layout_of(src_rules), layout_of(dst_rules)
    assert Ld.size == Ls.size + len(Ld.signal_tokens) + len(Ld.instruct_tokens)  # the channel's own actions
    with torch.no_grad():
        ls, ld = src.actor(xs), dst.actor(xd)
        assert torch.allclose(ld[:, :Ls.size], ls, atol=1e-5)  # the shared actions: the same logits
        assert torch.allclose(src.value(xs), dst.value(xd), atol=1e-5)
        sig = ld[:, Ld.signal:Ld.signal + len(Ld.signal_tokens)]
        assert torch.all(sig == 0)  # every signal equally likely at the start
        ins = torch.softmax(ld[:, Ld.instruct:Ld.instruct + len(Ld.instruct_tokens)], -1)
        assert torch.allclose(ins[:, 0], torch.full((32,), 0.9), atol=1e-5)  # instruct none
        assert torch.allclose(ins[:, 1:], torch.full_like(ins[:, 1:], 0.1 / (len(Ld.instruct_tokens) - 1)), atol=1e-6)
    # and what is new can be learned: the gradient reaches the (zero) weights of the new inputs through the
    # copied actions, and those of the new actions directly
    dst.zero_grad()
    logits = dst.actor(xd)
    (logits[:, :Ls.size].sum() + logits[:, Ld.signal + 1].sum()).backward()
    sig = encoder_of(dst_rules).piece("signals")
    assert dst.actor[0].weight.grad[:, sig.slice].abs().sum() > 0
    assert dst.actor[-1].weight.grad[Ld.signal + 1].abs().sum() > 0


def test_run_starts_from_the_source_and_trains_otherwise_than_from_scratch(tmp_path):
    src_cfg = tiny(tmp_path, "silent", options=SILENT)
    ppo.train(src_cfg)
    src_path = os.path.join(str(tmp_path), "silent", "policy.pt")
    warm_cfg = tiny(tmp_path, "warm", init_from=os.path.join(str(tmp_path), "silent", "policy.pt"))
    run, _ = ppo.start_run(warm_cfg, resume=False)
    src_rules, dst_rules = rules_pair()
    ck = torch.load(src_path, weights_only=True)
    src = PolicyNet(ck["net"]["obs_size"], ck["net"]["n_actions"], ck["net"]["hidden"], init=False)
    src.load_state_dict(ck["model"])
    want = widen(src, src_rules, dst_rules, FEATURES, 0.9).state_dict()
    assert all(torch.equal(v, want[k]) for k, v in run.net.state_dict().items())
    cold_run, _ = ppo.start_run(tiny(tmp_path, "cold0"), resume=False)
    assert not all(torch.equal(v, want[k]) for k, v in cold_run.net.state_dict().items())
    warm = ppo.train(tiny(tmp_path, "warm2", init_from=src_path))["net"].state_dict()
    cold = ppo.train(tiny(tmp_path, "cold"))["net"].state_dict()
    assert any(not torch.allclose(warm[k], cold[k]) for k in warm)
    # the warm run moved away from its start: it trained
    assert any(not torch.allclose(warm[k], want[k]) for k in warm)


@pytest.mark.parametrize("kw, match", [
    (dict(init_from="nowhere/policy.pt"), "no PPO checkpoint at 'nowhere/policy.pt'"),
    (dict(init_from="runs/x_s{run}/policy.pt"), "the only placeholder it takes is {seed}"),
    (dict(init_instruct_none=1.0), "init_instruct_none must be above 0 and below 1"),
    (dict(init_instruct_none=0.0), "init_instruct_none must be above 0 and below 1"),
])
def test_bad_settings_are_refused_in_one_line(tmp_path, kw, match):
    with pytest.raises(TrucError, match=match) as e:
        ppo.start_run(tiny(tmp_path, "bad", **kw), resume=False)
    assert "\n" not in str(e.value)
    assert not os.path.exists(os.path.join(str(tmp_path), "bad"))  # refused before the run folder


def test_a_source_that_does_not_fit_is_refused_in_one_line(tmp_path):
    ppo.train(tiny(tmp_path, "silent", options=SILENT))
    src = os.path.join(str(tmp_path), "silent", "policy.pt")
    cases = [(dict(hidden=[8]), "hidden"), (dict(features="observation"), "features"),
             (dict(variant="truco_paulista", options={"players": 4}), "trained for le_truc_4p")]
    for kw, match in cases:
        with pytest.raises(TrucError, match=match) as e:
            ppo.start_run(tiny(tmp_path, "bad", init_from=src, **kw), resume=False)
        assert "\n" not in str(e.value)
    # the reverse (a channel policy into silent Rules) would drop what it learned to read: refused
    ppo.train(tiny(tmp_path, "talk"))
    with pytest.raises(TrucError, match="'signals' of le_truc_4p"):
        ppo.start_run(tiny(tmp_path, "bad", options=SILENT, init_from=os.path.join(str(tmp_path), "talk", "policy.pt")),
                      resume=False)


def test_the_study_trains_each_run_after_its_source():
    exp = load_experiment("configs/signals/warm_le_truc_4p.yaml")
    assert exp["seeds"] == [1, 2, 3, 4, 5] and exp["analysis"]["against"] == "random"
    assert exp["analysis"]["deals"] >= 5000
    by_name = {r.name: r for r in exp["runs"]}
    for s in exp["seeds"]:
        base = by_name[f"signals_conv_le_truc_4p_none_s{s}"]
        talk, twin = by_name[f"signals_warm_le_truc_4p_s{s}"], by_name[f"signals_warm_le_truc_4p_silent_s{s}"]
        assert base.init_from is None and talk.init_from == twin.init_from == base.policy
        assert talk.channel and not twin.channel and talk.twin == "configs/signals/warm_ppo_le_truc_4p_silent.yaml"
    waves = training_waves(exp["runs"])
    assert [len(w) for w in waves] == [5, 10]
    assert all(r.init_from is None for r in waves[0]) and all(r.init_from for r in waves[1])
    loop = [Run("a.yaml", 1, "a", "runs", "le_truc_4p", {}, False, init_from="runs/b/policy.pt"),
            Run("b.yaml", 1, "b", "runs", "le_truc_4p", {}, False, init_from="runs/a/policy.pt")]
    with pytest.raises(TrucError, match="form a cycle"):
        training_waves(loop)


def test_the_warm_configs_are_the_plain_ones_with_a_start():
    plain, talk = ppo.PPOConfig.from_yaml("configs/signals/conv_ppo_le_truc_4p.yaml"), \
        ppo.PPOConfig.from_yaml("configs/signals/warm_ppo_le_truc_4p.yaml")
    silent, twin = ppo.PPOConfig.from_yaml("configs/signals/conv_ppo_le_truc_4p_none.yaml"), \
        ppo.PPOConfig.from_yaml("configs/signals/warm_ppo_le_truc_4p_silent.yaml")
    for a, b in ((plain, talk), (silent, twin)):
        assert {k for k in vars(a) if getattr(a, k) != getattr(b, k)} == {"name", "init_from"}
    assert talk.init_from == twin.init_from == "runs/signals/signals_conv_le_truc_4p_none_s{seed}/policy.pt"


# ------------------------------------------------------------------ positive signalling and listening
def speaker_batch(rules, legal_sets):
    from train.algos.signals_biases import SignalBiases

    b, L = SignalBiases(rules), layout_of(rules)
    mask = torch.zeros((len(legal_sets), L.size), dtype=torch.bool)
    for i, legal in enumerate(legal_sets):
        mask[i, [L.signal + t for t in legal]] = True
    return b, L, mask


def test_positive_signalling_is_the_batch_mutual_information():
    rules = make_rules("le_truc_4p")
    b, L, mask = speaker_batch(rules, [[0, 1, 2]] * 4)  # the same legal tokens in every row
    logits = torch.zeros((4, L.size))
    mi, n = b.mutual_information(logits, mask)  # uniform whatever the hand: no information
    assert n == 4 and abs(mi.item()) < 1e-6
    for i, t in enumerate([0, 1, 2, 1]):  # (almost) deterministic, two rows alike: I = H(1/4, 1/2, 1/4)
        logits[i, L.signal + t] = 40.0
    mi, _ = b.mutual_information(logits, mask)
    assert mi.item() == pytest.approx(-(0.25 * np.log(0.25) * 2 + 0.5 * np.log(0.5)), abs=1e-5)
    # rows that are not a signal decision are left out; a batch without any gives 0 and no rows
    other = torch.zeros_like(mask)
    other[:, L.ACCEPT] = True
    mi, n = b.mutual_information(logits, other)
    assert n == 0 and mi.item() == 0.0


def test_positive_listening_reads_the_partners_token_as_none():
    rules = make_rules("le_truc_4p")
    from train.algos.signals_biases import SignalBiases

    b, enc, L = SignalBiases(rules), encoder_of(rules), layout_of(rules)
    sig = enc.piece("signals")
    F = feature_size(rules, FEATURES)
    obs = torch.zeros((3, F))
    for row, (sender, token) in enumerate([(2, 1), (0, 1), (2, 0)]):  # partner shows a 7; self shows a 7; partner none
        base = sig.at(0)
        obs[row, base] = 1.0
        obs[row, base + 1 + sender] = 1.0
        obs[row, base + 1 + rules.players + token] = 1.0
    rows, cf = b.listener_rows(obs)
    assert rows.tolist() == [True, False, False]
    changed = (cf[0] != obs[0]).nonzero().flatten().tolist()
    tok = sig.at(0) + 1 + rules.players
    assert changed == [tok, tok + 1] and cf[0, tok] == 1.0 and cf[0, tok + 1] == 0.0
    mask = torch.zeros((3, L.size), dtype=torch.bool)
    mask[:, L.play:L.play + 3] = True
    deaf = PolicyNet(F, L.size, [8])
    with torch.no_grad():
        deaf.actor[0].weight[:, sig.slice] = 0.0  # a listener that ignores the signals: no influence at all
    tv, n = b.listening(deaf, obs, mask, deaf.actor(obs))
    assert n == 1 and tv.item() == 0.0
    hearing = PolicyNet(F, L.size, [8])
    with torch.no_grad():
        hearing.actor[0].weight[:, sig.slice] = torch.randn(8, sig.size) * 3.0  # each token its own weights
        hearing.actor[-1].weight.normal_(0, 1.0)
    tv, n = b.listening(hearing, obs, mask, hearing.actor(obs))
    assert n == 1 and tv.item() > 1e-3


def test_the_biases_change_the_run_and_are_logged(tmp_path):
    plain = ppo.train(tiny(tmp_path, "plain"))["net"].state_dict()
    biased = ppo.train(tiny(tmp_path, "biased", signal_coef=0.05, listen_coef=0.05))["net"].state_dict()
    assert any(not torch.allclose(plain[k], biased[k]) for k in plain)
    rows = torch.load(os.path.join(str(tmp_path), "biased", "checkpoint.pt"), weights_only=False)["history"]
    assert all("signal_mi" in r and "listen_tv" in r and r["signal_mi"] > 0 for r in rows)
    rows = torch.load(os.path.join(str(tmp_path), "plain", "checkpoint.pt"), weights_only=False)["history"]
    assert all("signal_mi" not in r for r in rows)


@pytest.mark.parametrize("kw, match", [
    (dict(signal_coef=-0.1), "signal_coef"),
    (dict(listen_coef=0.05, options=SILENT), "need a 2 vs 2 game with a signal channel"),
    (dict(signal_coef=0.05, variant="le_truc", options={}), "need a 2 vs 2 game with a signal channel"),
])
def test_bad_bias_settings_are_refused_in_one_line(tmp_path, kw, match):
    with pytest.raises(TrucError, match=match) as e:
        ppo.start_run(tiny(tmp_path, "bad", **kw), resume=False)
    assert "\n" not in str(e.value)


# ------------------------------------------------------------------ the listener's belief head
def test_belief_targets_are_the_partners_unplayed_cards_in_both_rollout_paths():
    from agents.network import encode_state
    from train.algos.belief import targets_of_hands, targets_of_states
    from truc_env.batch.vector import VectorEnv
    from truc_env.game.engine import State, sample_chance

    rules = make_rules("le_truc_4p")
    enc = encoder_of(rules)
    hand = enc.piece("hand").slice
    rng = np.random.default_rng(0)
    checked = 0
    st = State(rules, episode="hand", dealer=1)
    while not st.is_terminal():  # engine tables: the target is what the partner's own observation shows as its hand
        if st.is_chance_node():
            st.apply_action(sample_chance(st, rng))
            continue
        seat = st.current_player()
        want = encode_state(st, (seat + 2) % 4, "observation")[hand]
        assert np.array_equal(targets_of_states([(st, seat)], rules)[0], want)
        checked += 1
        st.apply_action(int(rng.choice(st.legal_actions())))
    for backend in ("numba", "loop"):  # the batched engine: its hands are what each seat's observation shows
        venv = VectorEnv(rules, 8, episode="hand", reward="points", dealer="random", backend=backend)
        obs, mask, seat = venv.reset(seed=3)
        for _ in range(30):
            own = targets_of_hands(venv.hands, (venv._seat + 2) % 4, rules)  # the partner of the partner: the seat
            assert np.array_equal(own, venv._obs[:, hand])
            acts = venv.random_actions()
            venv.step(acts)
            checked += 1
    assert checked > 60


def test_the_belief_head_changes_the_run_is_saved_and_refused_without_partners(tmp_path):
    plain = ppo.train(tiny(tmp_path, "plain"))["net"].state_dict()
    held = ppo.train(tiny(tmp_path, "belief", belief_coef=0.5))["net"].state_dict()
    assert any(not torch.allclose(plain[k], held[k]) for k in plain)
    ck = torch.load(os.path.join(str(tmp_path), "belief", "checkpoint.pt"), weights_only=False)
    assert set(ck["belief"]) == {"out.weight", "out.bias"} and all(r["belief_loss"] > 0 for r in ck["history"])
    assert "belief" not in torch.load(os.path.join(str(tmp_path), "belief", "policy.pt"), weights_only=True)
    for kw, match in ((dict(belief_coef=0.5, variant="le_truc", options={}), "belief_coef needs a 2 vs 2 game"),
                      (dict(belief_coef=-1.0), "belief_coef")):
        with pytest.raises(TrucError, match=match) as e:
            ppo.start_run(tiny(tmp_path, "bad", **kw), resume=False)
        assert "\n" not in str(e.value)
