"""Other-play's token relabelling (train/signals_otherplay.py, PPO's ``other_play``): consistent
within a seat's frame, between the partners, and absent for the opponents and card signals."""

import numpy as np
import pytest

from agents.ppo.network import encode_state, encoder_of
from train.ppo import Collector, PPOConfig
from train.signals_otherplay import Relabelling, check_applies
from truc_env.actions import layout_of
from truc_env.engine import State
from truc_env.episode import Dealer, Episode
from truc_env.errors import TrucError
from truc_env.rules import make_rules

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


def test_other_play_rollout_runs_on_tables_and_records_frames():
    import torch

    from agents.ppo import PolicyNet
    from train.ppo import League, net_meta

    cfg = PPOConfig(variant="truco_paulista", options={"players": 4, "signals": {"mode": "free", "vocab": 8}},
                    other_play=True, num_envs=4, features="observation", hidden=[16], rollout="auto")
    col = Collector(cfg, RULES, torch.device("cpu"))
    assert col.path == "engine" and "other_play" in col.why
    meta = net_meta(cfg, RULES)
    net = PolicyNet(meta["obs_size"], meta["n_actions"], cfg.hidden)
    gen = torch.Generator().manual_seed(0)
    buf, episodes = col.rollout(net, League(cfg), np.random.default_rng(0), gen,
                                lambda r: ("self", -1, None), target_episodes=4)
    assert len(episodes) == 4 and len(buf) > 0
    # every recorded action is legal under the recorded (frame) mask
    for m, a in zip(buf.mask, buf.action):
        assert m[a]
