"""The observation encoder: fixed layout, values in [0, 1], only the seat's own information."""

import numpy as np
import pytest

from truc_env import VARIANTS, State, make_rules
from truc_env.display.render import render
from truc_env.game.engine import sample_chance
from truc_env.game.observe import encoder_of, info_state_string, observation_string
from truc_env.game.records import replay_state

CONFIGS = [(v, {}) for v in VARIANTS] + [
    ("truco_paulista", {"signals": {"mode": "senas", "intercept": 0.5, "timing": "every_trick"}}),
    ("truco_argentino", {"flor": True, "signals": {"mode": "free", "vocab": 3}}),
    ("truco_mineiro", {"players": 2}),
]


def random_states(rules, rng, games=3, score=None):
    """Yield every decision and terminal state of a few random games."""
    for _ in range(games):
        s = State(rules, score=score)
        while True:
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            yield s
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_layout_is_contiguous_and_values_in_unit_range(variant, options):
    rules = make_rules(variant, **options)
    enc = encoder_of(rules)
    table = enc.table(info_state=True)
    pos = 0
    for name, offset, size, doc in table:
        assert offset == pos and size > 0 and doc, name
        pos += size
    assert pos == enc.info_size and table[-1][0] == "history"
    rng = np.random.default_rng(0)
    for s in random_states(rules, rng, games=2):
        for seat in range(rules.players):
            x = enc.encode(s, seat)
            assert x.shape == (enc.size,) and x.dtype == np.float32
            assert x.min() >= 0.0 and x.max() <= 1.0
            y = enc.encode(s, seat, info_state=True)
            assert np.array_equal(y[:enc.size], x)
            pieces = enc.pieces(x)
            held = {rules.deck.index(c) for c in s.held(seat)}
            if s.special != "iron" or not rules.blind:
                assert set(np.flatnonzero(pieces["hand"])) == held


def test_pieces_are_views_and_seats_are_relative():
    rules = make_rules("le_truc")
    s = replay_state({"variant": "le_truc", "dealer": 1,
                      "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]},
                      "actions": ["0 play 7c"]})
    enc = encoder_of(rules)
    x1 = enc.pieces(enc.encode(s, 1))
    x0 = enc.pieces(enc.encode(s, 0))
    c7 = rules.deck.index(rules.family.parse("7c"))
    assert x1["played"][0, 1, c7] == 1  # seat 0 is one place after seat 1
    assert x0["played"][0, 0, c7] == 1  # ... and himself for seat 0
    assert x1["to_act"][0] == 1 and x0["to_act"][1] == 1
    assert x0["dealer"][1] == 1 and x1["dealer"][0] == 1


def test_observation_hides_the_opponents_cards():
    base = {"variant": "le_truc", "dealer": 1, "actions": ["0 play 7c", "1 play 7d"]}
    a = replay_state({**base, "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]}})
    b = replay_state({**base, "deal": {"hands": [["7c", "9d", "Ks"], ["Qh", "7d", "Jc"]]}})
    enc = encoder_of(a.rules)
    assert np.array_equal(enc.encode(a, 0), enc.encode(b, 0))
    assert np.array_equal(enc.encode(a, 0, info_state=True), enc.encode(b, 0, info_state=True))
    assert info_state_string(a, 0) == info_state_string(b, 0)
    assert observation_string(a, 0) == observation_string(b, 0)
    assert not np.array_equal(enc.encode(a, 1), enc.encode(b, 1))


def test_blind_iron_hand_shows_slots_not_cards():
    rules = make_rules("truco_paulista", players=2)
    s = State(rules, score=[11, 11])
    rng = np.random.default_rng(1)
    while s.is_chance_node():
        s.apply_action(sample_chance(s, rng))
    enc = encoder_of(rules)
    p = enc.pieces(enc.encode(s, s.current_player()))
    assert p["hand"].sum() == 0 and p["slots"].sum() == 3 and p["special"][1] == 1
    assert "blind" in observation_string(s, 0)


def test_mao_de_onze_side_sees_partner_hand():
    rules = make_rules("truco_paulista")
    s = State(rules, score=[11, 5])
    rng = np.random.default_rng(2)
    while s.is_chance_node():
        s.apply_action(sample_chance(s, rng))
    assert s.phase == "eleven"
    enc = encoder_of(rules)
    for seat in range(4):
        p = enc.pieces(enc.encode(s, seat))
        expected = {rules.deck.index(c) for c in s.held((seat + 2) % 4)} if seat % 2 == 0 else set()
        assert set(np.flatnonzero(p["partner_hand"])) == expected


def test_open_hands_shows_each_partner_the_others_unplayed_cards():
    """signals.open_hands (the oracle bound of docs/rules.md §8): from the deal on, a partner's unplayed
    cards are in the observation, the info state and the text views; an opponent's never are."""
    record = {"variant": "le_truc_4p", "options": {"signals": {"mode": "none", "open_hands": True}, "instructions": False},
              "dealer": 3, "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"], ["Qh", "Jc", "8c"], ["9s", "Kh", "Ad"]]},
              "actions": ["0 play 7c"]}
    s = replay_state(record)
    rules, enc = s.rules, encoder_of(s.rules)
    for seat in range(4):
        p = enc.pieces(enc.encode(s, seat))
        assert set(np.flatnonzero(p["partner_hand"])) == {rules.deck.index(c) for c in s.held((seat + 2) % 4)}
    assert "9D" in observation_string(s, 2).upper() and "8H" not in observation_string(s, 0).upper()
    # an opponent's cards change nothing a seat sees; its partner's do
    other = replay_state({**record, "deal": {"hands": [["7c", "9d", "Ks"], ["Ah", "7d", "8s"], ["Qh", "Jc", "8c"],
                                                       ["9s", "Kh", "Ad"]]}})
    assert np.array_equal(enc.encode(s, 0, info_state=True), enc.encode(other, 0, info_state=True))
    assert info_state_string(s, 0) == info_state_string(other, 0)
    assert not np.array_equal(enc.encode(s, 3), enc.encode(other, 3))
    plain = make_rules("le_truc_4p", signals={"mode": "none"}, instructions=False)
    assert not encoder_of(plain).has("partner_hand") and "open_hands" not in plain.key


def test_open_hands_is_refused_without_a_partner():
    from truc_env.errors import RulesError

    with pytest.raises(RulesError, match="only partnership games"):
        make_rules("truco_paulista", players=2, signals={"open_hands": True})
    with pytest.raises(RulesError, match="true or false"):
        make_rules("le_truc_4p", signals={"open_hands": "yes"})


@pytest.mark.parametrize("intercept", [0.0, 1.0])
def test_signals_seen_by_partner_unseen_by_opponents(intercept):
    rules = make_rules("le_truc_4p", signals={"mode": "card", "intercept": intercept})
    s = State(rules, dealer=0)
    rng = np.random.default_rng(3)
    while s.is_chance_node():
        s.apply_action(sample_chance(s, rng))
    assert s.phase == "signal" and s.current_player() == 2
    token = s.legal_actions()[-1]
    s.apply_action(token)
    enc = encoder_of(rules)
    w, n, ntok = enc.signal_width, 4, enc.n_tokens
    for seat in range(4):
        sig = enc.pieces(enc.encode(s, seat))["signals"][0]
        assert sig[0] == 1 and sig[1 + (2 - seat) % 4] == 1
        seen = seat in (0, 2) or intercept == 1.0
        assert sig[1 + n + token - s.L.signal] == (1 if seen else 0)
        assert sig[1 + n + ntok] == (0 if seen else 1)  # "unseen", never "none"
    assert sig.shape == (w,)


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_info_state_string_is_perfect_recall(variant, options):
    """Each seat's string only grows: what a seat knew stays a prefix of what it knows."""
    rules = make_rules(variant, **options)
    rng = np.random.default_rng(4)
    for _ in range(2):
        s = State(rules, episode="hand")
        prev = [""] * rules.players
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
            else:
                legal = s.legal_actions()
                s.apply_action(legal[rng.integers(len(legal))])
            for seat in range(rules.players):
                now = info_state_string(s, seat)
                assert now.startswith(prev[seat]), (seat, prev[seat], now)
                prev[seat] = now


def test_info_state_string_keeps_the_hand_before_a_redeal():
    top = ["7c", "8h", "9d", "7d", "Ks", "As", "Qh", "Qd", "Jc", "Js", "Tc", "Th"]
    deck = top + [r + s for r in "789TJQKA" for s in "cdhs" if r + s not in top]
    s = replay_state({"variant": "le_truc", "dealer": 1, "deal": {"deck": deck},
                      "actions": ["0 redeal", "1 accept"]})
    text = info_state_string(s, 0)
    assert "0:got 7c" in text and "0:got Qh" in text and "8h" not in text
    enc = encoder_of(s.rules)
    assert enc.pieces(enc.encode(s, 0))["first_hand"].sum() == 3


def test_render_spectator_and_seat_views():
    s = replay_state({"variant": "le_truc", "dealer": 1,
                      "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]}, "actions": []})
    full = render(s)
    assert "7c" in full and "8h" in full
    mine = render(s, viewer=0)
    assert "7c" in mine and "8h" not in mine and "??" in mine


def test_flor_against_flor_question_and_announced_result():
    # dealer 1: seat 0 (mano, 26) sings, seat 1 (38) answers; accepted, seat 1's 38 is announced
    rules = make_rules("truco_argentino", players=2, flor=True)
    enc = encoder_of(rules)
    rec = {"variant": "truco_argentino", "options": {"players": 2, "flor": True}, "dealer": 1,
           "deal": {"hands": [["1e", "2e", "3e"], ["7o", "6o", "5o"]]}, "actions": ["0 flor"]}
    asked = enc.pieces(enc.encode(replay_state(rec), 1))
    assert asked["decision"][enc.decisions.index("flor")] == 1 and asked["to_act"][0] == 1
    assert asked["flor"][1] == 1 and asked["flor_winner"].sum() == 0
    s = replay_state(dict(rec, actions=["0 flor", "1 accept"]))
    for seat in (0, 1):
        x = enc.pieces(enc.encode(s, seat))
        assert x["flor_winner"][(1 - seat) % 2] == 1 and x["flor_points"][38 - 20] == 1
        assert "flor 1:38" in info_state_string(s, seat)
    # layouts without flor keep their decision kinds
    assert encoder_of(make_rules("truco_argentino", players=2)).n_decisions == enc.n_decisions - 1


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_named_pieces_are_the_sections(variant, options):
    """``encoder.piece(name)``: the slice and shape of a section, ``at`` the flat position of an entry."""
    from truc_env import TrucError

    enc = encoder_of(make_rules(variant, **options))
    vec = np.arange(enc.info_size, dtype=np.float32)
    views = enc.pieces(vec)
    assert set(views) == {name for name, _, _, _ in enc.table(info_state=True)}
    for name, view in views.items():
        piece = enc.piece(name)
        assert enc.has(name) and enc.offset_of(name) == piece.offset
        assert np.array_equal(vec[piece.slice].reshape(piece.shape), view), name
        first = tuple(d - 1 for d in piece.shape)  # the last entry, by its full index
        assert vec[piece.at(*first)] == view[first], name
    assert not enc.has("no_such_piece") and enc.offset_of("no_such_piece") == -1
    with pytest.raises(TrucError, match="no observation piece"):
        enc.piece("no_such_piece")
    with pytest.raises(TrucError, match="outside"):
        enc.piece("hand").at(enc.D)


@pytest.mark.parametrize("variant,options", CONFIGS)
def test_card_blocks_are_the_card_columns(variant, options):
    """Each block is D columns in deck order that the encoder fills with one card: a relabelling permutes them."""
    rules = make_rules(variant, **options)
    enc = encoder_of(rules)
    for info_state in (False, True):
        blocks = enc.card_blocks(info_state)
        cols = [o + i for o in blocks for i in range(enc.D)]
        assert len(set(cols)) == len(cols) and max(cols) < (enc.info_size if info_state else enc.size)
        names = {"hand", "played"} | ({"first_hand"} if rules.redeal else set()) | ({"history"} if info_state else set())
        owner = {next(n for n, o, s, _ in enc.table(info_state=True) if o <= b < o + s) for b in blocks}
        assert owner == names
    rng = np.random.default_rng(1)
    for s in random_states(rules, rng, games=1):
        for seat in range(rules.players):
            x = enc.encode(s, seat, info_state=True)
            hands = 1 + rules.redeal  # the own hand (and first hand) blocks first, then one card per block
            for o in enc.card_blocks(True)[hands:]:
                assert x[o:o + enc.D].sum() <= 1.0


def test_no_module_outside_observe_computes_an_observation_offset():
    """Offsets and shapes come from the encoder's named pieces (piece, has, offset_of, card_blocks)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"\.offset\[|\.offset\.get\(|\.shape\[[\"']|\bhistory_width\b")
    found = []
    for folder in ("truc_env", "agents", "train", "scripts", "benchmarks"):
        for path in (root / folder).rglob("*.py"):
            if path.name == "observe.py":
                continue
            found += [f"{path.relative_to(root)}:{i}" for i, line in enumerate(path.read_text().splitlines(), 1)
                      if pattern.search(line)]
    assert not found, found


def test_an_encoder_pickles_and_copies_without_its_compiled_code():
    """The one-entries are code compiled per encoder on first use; a pickled or copied encoder makes its
    own again (with its own tables) and encodes the same vectors."""
    import copy
    import pickle

    rules = make_rules("truco_paulista", players=4)
    enc = encoder_of(rules)
    states = [s.clone() for s in random_states(rules, np.random.default_rng(5), games=2)]
    before = [enc.encode(s, seat, info_state=True) for s in states for seat in range(rules.players)]
    for other in (pickle.loads(pickle.dumps(enc)), copy.deepcopy(enc)):
        assert "_observe" not in other.__dict__ and other._bases is not enc._bases
        after = [other.encode(s, seat, info_state=True) for s in states for seat in range(rules.players)]
        assert all(np.array_equal(a, b) for a, b in zip(before, after))
