"""Other-play's token relabelling (train/algos/signals_otherplay.py, PPO's ``other_play``): consistent
within a seat's frame, between the partners, and absent for the opponents and card signals; the
batched engine's frames equal the engine tables' on the same deals."""

import numpy as np
import pytest

from agents.network.network import encode_batch, encode_state, encoder_of
from train.algos.ppo import Collector, PPOConfig
from train.algos.signals_otherplay import Relabelling, Relabellings, check_applies
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.rules import make_rules

RULES = make_rules("truco_paulista", players=4, signals={"mode": "free", "vocab": 8})


def shown_tokens(rules, x, seat):
    """(sender seat, token index shown) of each signal slot of an observation row."""
    enc = encoder_of(rules)
    n, ntok, w = rules.players, enc.n_tokens, enc.signal_width
    out = []
    for i in range(enc.signal_slots):
        b = enc.offset["signals"] + i * w
        if x[b]:
            rel = int(np.argmax(x[b + 1:b + 1 + n]))
            out.append(((seat + rel) % n, int(np.argmax(x[b + 1 + n:b + 2 + n + ntok]))))
    return out


def play_signal_round(relabel, frame_tokens, seed=3):
    """Play the deal's signal round: each seat chooses ``frame_tokens[seat]`` in its own frame, sent
    through ``relabel.act``; returns the state after the round and the tokens actually sent."""
    L = layout_of(RULES)
    state = State(RULES, episode="hand", dealer=0)
    hand = Episode(state, Dealer.seeded(RULES, seed))
    sent = {}
    for seat in hand.decisions():
        if state.phase != "signal":
            break
        frame_mask = relabel.mask(hand.mask(), seat)
        a = L.signal + frame_tokens[seat]
        assert frame_mask[a], "a free token is legal in every frame"
        real = relabel.act(a, seat)
        sent[seat] = real - L.signal
        hand.play(real)
    return state, sent


def test_relabelling_is_one_frame_per_seat_and_between_partners_only():
    relabel = Relabelling(RULES, np.random.default_rng(5))
    phi = relabel.phi
    for sd in range(RULES.n_sides):
        assert phi[sd][0] == 0, "none stays none"
        assert sorted(phi[sd]) == list(range(len(phi[sd]))), "a permutation"
    assert not all((phi[sd] == np.arange(len(phi[sd]))).all() for sd in range(RULES.n_sides))
    frame = {0: 1, 1: 2, 2: 3, 3: 4}
    state, sent = play_signal_round(relabel, frame)
    assert len(sent) == RULES.players
    for seat in range(RULES.players):
        side = RULES.side(seat)
        partner = state.partner(seat)
        moved = relabel.relabelled(seat)
        assert moved != relabel.relabelled(partner), "exactly one partner of each side plays in a frame"
        # the network input of the seat, before and after its frame is applied
        raw = encode_state(state, seat, "observation+strength")
        x = relabel.observe(raw, seat)
        assert x.shape == raw.shape and x[len(raw) - 1] == raw[-1]
        inv = np.argsort(phi[side])
        for sender, shown in shown_tokens(RULES, x, seat):
            actual = dict(shown_tokens(RULES, raw, seat))[sender]
            if RULES.side(sender) != side:
                assert shown == actual, "the opponents' tokens are not relabelled"
            elif moved:
                assert shown == inv[actual], "the seat sees its side's tokens through phi^-1"
            else:
                assert shown == actual, "the unrelabelled partner sees the tokens as sent"
        if moved:
            # its own signal reads back as it chose it; its partner's token goes through the same phi
            mine = dict(shown_tokens(RULES, x, seat))
            assert mine[seat] == frame[seat]
            assert sent[seat] == phi[side][frame[seat]]
            assert mine[partner] == inv[sent[partner]]
            seen = encode_state(state, partner, "observation")
            assert dict(shown_tokens(RULES, seen, partner))[seat] == sent[seat]
        else:
            assert sent[seat] == frame[seat]
            np.testing.assert_array_equal(x, raw)


def test_non_signal_actions_and_none_are_not_relabelled():
    L = layout_of(RULES)
    relabel = Relabelling(RULES, np.random.default_rng(1))
    seat = int(relabel.seat_of[0])
    assert relabel.act(L.signal, seat) == L.signal  # none
    for a in range(L.signal):
        assert relabel.act(a, seat) == a
    m = np.zeros(L.size, bool)
    m[[0, 1, L.signal + 2]] = True
    fm = relabel.mask(m, seat)
    assert fm[0] and fm[1] and fm.sum() == 3
    assert fm[L.signal + int(np.argsort(relabel.phi[0])[2])]


def test_card_signals_refuse_other_play():
    with pytest.raises(TrucError, match="free"):
        check_applies(make_rules("le_truc_4p"))
    with pytest.raises(TrucError, match="other_play"):
        PPOConfig(variant="le_truc_4p", other_play=True).validate()
    PPOConfig(variant="truco_paulista", options={"players": 4, "signals": {"mode": "free", "vocab": 8}},
              other_play=True).validate()


@pytest.mark.parametrize("rollout", ["engine", "vector"])
def test_other_play_rollout_records_frames(rollout):
    import torch

    from agents.network import PolicyNet
    from train.algos.ppo import League, net_meta

    if rollout == "vector":
        pytest.importorskip("numba")
    cfg = PPOConfig(variant="truco_paulista", options={"players": 4, "signals": {"mode": "free", "vocab": 8}},
                    other_play=True, num_envs=4, features="observation", hidden=[16], rollout=rollout)
    col = Collector(cfg, RULES, torch.device("cpu"))
    assert col.path == rollout, col.why
    meta = net_meta(cfg, RULES)
    net = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden)
    gen = torch.Generator().manual_seed(0)
    buf, episodes = col.rollout(net, League(cfg), np.random.default_rng(0), gen,
                                lambda r: ("self", -1, None), target_episodes=4)
    assert len(episodes) == 4 and len(buf) > 0
    # every recorded action is legal under the recorded (frame) mask
    for m, a in zip(buf.mask, buf.action):
        assert m[a]


def test_other_play_frames_on_the_batched_engine_equal_the_tables():
    """The batched path (kernel rows, one Relabellings over the games) and the table path (engine
    states, one Relabelling each) give the same frame observations, masks and sent actions on the same
    deals and frames; and the frame invariants hold on the batched rows."""
    pytest.importorskip("numba")
    from test_vector import Reference  # the engine replicas of a VectorEnv's games (tests/ is on sys.path)

    from truc_env.batch.vector import VectorEnv

    rules = make_rules("le_truc_4p", signals={"mode": "free", "vocab": 8})
    B, features, L = 12, "observation+strength", layout_of(rules)
    venv = VectorEnv(rules, B, seed=7, backend="numba")
    ref, batch = Reference(venv), Relabellings(rules, B)
    tables, chosen = [None] * B, [{} for _ in range(B)]  # per game: seat -> tokens chosen in its frame this hand
    frames = iter(range(10**6))

    def new_frame(b):  # one relabelling per game per episode: the same draws on both paths
        k = next(frames)
        batch.draw(b, np.random.default_rng(k))
        tables[b], chosen[b] = Relabelling(rules, np.random.default_rng(k)), {}
        np.testing.assert_array_equal(batch.phi[b], tables[b].phi)
        for sd in range(rules.n_sides):
            assert sum(batch.relabelled([b], [s])[0] for s in range(rules.players) if rules.side(s) == sd) == 1

    obs, mask, seat = venv.reset()
    for b in range(B):
        ref.new_episode(b)
        new_frame(b)
    rng, idx = np.random.default_rng(0), np.arange(B)
    episodes, reads, moved_signals = 0, 0, 0
    while episodes < 40:
        x = batch.observe(encode_batch(rules, obs, features), idx, seat)
        m = batch.mask(mask.astype(bool), idx, seat)
        frame = np.array([rng.choice(np.flatnonzero(row)) for row in m])
        sent = batch.act(frame, idx, seat)
        for b in range(B):
            s, st, t = int(seat[b]), ref.states[b], tables[b]
            np.testing.assert_array_equal(x[b], t.observe(encode_state(st, s, features), s))
            legal = np.zeros(L.size, bool)
            legal[st.legal_actions()] = True
            np.testing.assert_array_equal(m[b], t.mask(legal, s))
            assert sent[b] == t.act(int(frame[b]), s) and mask[b, sent[b]]
            side, moved = rules.side(s), bool(batch.relabelled([b], [s])[0])
            phi = batch.phi[b, side]
            if not st.signals:
                chosen[b] = {}  # a new hand: its signal slots start empty
            actual = shown_tokens(rules, obs[b], s)  # slot by slot: a seat may signal twice in a hand
            own = []
            for (sender, shown), (sent_by, token) in zip(shown_tokens(rules, x[b], s), actual, strict=True):
                mine = moved and rules.side(sender) == side
                assert sender == sent_by and shown == (np.argsort(phi)[token] if mine else token)
                own += [shown] if sender == s else []
            assert own == chosen[b].get(s, [])[:len(own)], "a seat reads its own signals back as it chose them"
            reads += moved * len(own)
            tok = int(frame[b]) - L.signal
            if 0 <= tok < len(L.signal_tokens):
                chosen[b].setdefault(s, []).append(tok)
                assert sent[b] - L.signal == (phi[tok] if moved else tok)
                moved_signals += moved and tok > 0
        obs, mask, reward, done, seat = venv.step(sent.astype(np.int32))
        for b in range(B):
            ref.step(b, int(sent[b]), reward, done, "other-play")
            ref.check(b, obs, mask, seat, "other-play")
            if done[b]:
                new_frame(b)
        episodes += int(done.sum())
    assert reads > 0 and moved_signals > 0, "the games went through relabelled signals"
