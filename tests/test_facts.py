"""What every seat is shown stays bit-for-bit the same (issue 15: the engine keeps the facts).

Recorded before the engine kept plays per trick, the deal order and the signal log, and before
view.py became the only visibility module: for seeded random games across every variant and the
options that change visibility (signals with interception, blind iron hands, mão de onze, put_4p
passes, envido and flor, redeals, put_n resignations), the sha256 of each seat's observation vector,
info-state vector, info-state string, observation string, text table and seat view at every
decision, and of the drawn table's pixels at the first decision and at each hand's end.

Regenerate only when a change of what a seat sees is intended:
``python tests/test_facts.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from truc_env import State, make_rules
from truc_env.display.draw import hand_tricks
from truc_env.display.render import render
from truc_env.game.engine import CHANCE, DEAL_DRAW, sample_chance
from truc_env.game.observe import encoder_of, info_state_string, observation_string
from truc_env.game.view import seat_view

GOLDEN = Path(__file__).with_name("data") / "facts_golden.json"

SIG_INTERCEPT = {"mode": "senas", "intercept": 0.5, "timing": "every_trick"}
# (name, variant, options, start score, seed): the start scores put sides at 11 (mão de onze,
# iron hands) where the variant has them
CASES = [
    ("le_truc", "le_truc", {}, None, 1),
    ("le_truc_redeal", "le_truc", {"first_dealer": "random"}, None, 2),
    ("le_truc_4p", "le_truc_4p", {}, None, 3),
    ("le_truc_4p_intercept", "le_truc_4p", {"signals": {"mode": "card", "intercept": 0.5, "timing": "every_trick"}}, None, 4),
    ("le_truc_4p_seen", "le_truc_4p", {"signals": {"mode": "card", "intercept": 1.0}}, None, 5),
    ("put", "put", {}, None, 6),
    ("put_4p", "put_4p", {}, None, 7),
    ("put_4p_b", "put_4p", {"first_dealer": "random"}, None, 8),
    ("put_n", "put_n", {}, None, 9),
    ("put_n_5", "put_n", {"players": 5}, None, 10),
    ("put_n_3", "put_n", {"players": 3}, None, 11),
    ("paulista", "truco_paulista", {}, None, 12),
    ("paulista_iron", "truco_paulista", {}, [11, 11], 13),
    ("paulista_eleven", "truco_paulista", {}, [11, 7], 14),
    ("paulista_eleven_b", "truco_paulista", {}, [4, 11], 15),
    ("paulista_signals", "truco_paulista", {"signals": SIG_INTERCEPT}, None, 16),
    ("paulista_signals_eleven", "truco_paulista", {"signals": SIG_INTERCEPT}, [11, 9], 17),
    ("paulista_2p", "truco_paulista", {"players": 2}, [11, 11], 18),
    ("paulista_free", "truco_paulista", {"signals": {"mode": "free", "vocab": 4, "intercept": 0.3}}, None, 19),
    ("mineiro", "truco_mineiro", {}, None, 20),
    ("mineiro_iron", "truco_mineiro", {}, [10, 10], 21),
    ("mineiro_eleven", "truco_mineiro", {}, [10, 3], 22),
    ("mineiro_2p", "truco_mineiro", {"players": 2}, [10, 8], 23),
    ("mineiro_signals", "truco_mineiro", {"signals": {"mode": "senas", "intercept": 0.5}}, [10, 2], 24),
    ("argentino", "truco_argentino", {}, None, 25),
    ("argentino_flor", "truco_argentino", {"flor": True}, None, 26),
    ("argentino_2p_flor", "truco_argentino", {"players": 2, "flor": True}, None, 27),
    ("argentino_signals", "truco_argentino", {"flor": True, "signals": {"mode": "free", "vocab": 3, "intercept": 0.5}}, None, 28),
    ("argentino_late", "truco_argentino", {}, [20, 25], 29),
    ("le_truc_short", "le_truc", {"target": 3, "max_raises": 2}, None, 30),
]
MAX_DECISIONS = 400  # per case: enough for a few hands, keeps the test fast
MAX_PICTURES = 5  # drawing is the slow part


def _sha(data) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def _draw(state, viewer) -> str:
    from truc_env.display.draw import draw_table

    return _sha(draw_table(state, viewer, dpi=40).tobytes())


def digests(variant, options, score, seed, with_pictures=True) -> dict:
    """Per case: one running sha256 of every seat's views at every decision, and the pictures."""
    rules = make_rules(variant, **options)
    enc = encoder_of(rules)
    rng = np.random.default_rng(seed)
    s = State(rules, score=score)
    views = hashlib.sha256()
    pictures = []
    decisions = 0
    hands_seen = 0
    while decisions < MAX_DECISIONS:
        if s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
            continue
        decisions += 1
        for seat in range(rules.players):
            for part in (enc.encode(s, seat).tobytes(), enc.encode(s, seat, info_state=True).tobytes(),
                         info_state_string(s, seat), observation_string(s, seat), render(s, seat),
                         repr(sorted(seat_view(s, seat).items()))):
                views.update(_sha(part).encode())
        ended = s.hands_completed != hands_seen
        if with_pictures and len(pictures) < MAX_PICTURES and (decisions == 1 or ended or s.is_terminal()):
            viewer = decisions % rules.players
            pictures.append(_draw(s, viewer))
            pictures.append(_draw(s, None))
        hands_seen = s.hands_completed
        if s.is_terminal():
            break
        legal = s.legal_actions()
        a = legal[rng.integers(len(legal))]
        s.apply_action(a)
        if with_pictures and len(pictures) < MAX_PICTURES and s.hands_completed != hands_seen and not s.is_terminal():
            # the picture right after the hand ended, before the next deal: the finished hand
            pictures.append(_draw(s, None))
    return {"decisions": decisions, "views": views.hexdigest(), "pictures": _sha("".join(pictures)),
            "n_pictures": len(pictures)}


@pytest.mark.parametrize("name,variant,options,score,seed", CASES, ids=[c[0] for c in CASES])
def test_what_each_seat_sees_is_unchanged(name, variant, options, score, seed):
    golden = json.loads(GOLDEN.read_text())
    assert digests(variant, options, score, seed) == golden[name]


def test_cases_cover_the_visibility_rules():
    """The recorded games do reach the situations whose visibility the golden digests pin."""
    seen = set()
    for _, variant, options, score, seed in CASES:
        rules = make_rules(variant, **options)
        rng = np.random.default_rng(seed)
        s = State(rules, score=score)
        for _ in range(MAX_DECISIONS * 3):
            if s.is_terminal():
                break
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            if s.special:
                seen.add(s.special)
            if s.phase in ("give", "signal", "envido"):
                seen.add(s.phase)
            if any(x[3] != (1 << x[0]) | (1 << rules.partner(x[0])) for x in s.signals):
                seen.add("intercepted")
            if s.resigned:
                seen.add("resigned")
            if s.old_hands:
                seen.add("redeal")
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])
    assert {"eleven", "iron", "give", "signal", "envido", "intercepted", "resigned", "redeal"} <= seen, seen


def _random_game(variant, options, score, seed):
    """Yield each state of a seeded random game, chance nodes included."""
    rules = make_rules(variant, **options)
    rng = np.random.default_rng(seed)
    s = State(rules, score=score)
    for _ in range(MAX_DECISIONS * 3):
        yield s
        if s.is_terminal():
            return
        if s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
        else:
            legal = s.legal_actions()
            s.apply_action(legal[rng.integers(len(legal))])


def _facts_from_history(state, hand):
    """The deal order and the plays of one hand, read back from the history (the test's oracle)."""
    r, L = state.rules, state.L
    log = state.hand_log[hand]
    n, d = r.players, log["dealer"]
    deal, plays, count = [], [], [0] * n
    hand_cards = {}
    for actor, a, aux in state.history[log["start"]:log.get("end", len(state.history))]:
        if actor == CHANCE and aux == DEAL_DRAW:
            block = r.hand_size * n
            k = len(deal) if len(deal) < block + r.vira else (len(deal) - block - r.vira) % block
            if k == block:
                deal.append(-1)  # the vira, drawn after the first deal only
            else:
                seat = (d + 1 + k) % n
                deal.append(seat)
                if k < n:
                    hand_cards[seat] = []
                hand_cards[seat].append(a)
        elif actor >= 0 and L.play <= a < L.play + len(L.deck):
            plays.append((count[actor], actor, L.deck[a - L.play]))
            count[actor] += 1
        elif actor >= 0 and L.slot >= 0 and L.slot <= a < L.slot + r.hand_size:
            plays.append((count[actor], actor, hand_cards[actor][a - L.slot]))
            count[actor] += 1
    return deal, plays


@pytest.mark.parametrize("name,variant,options,score,seed", CASES[::3], ids=[c[0] for c in CASES[::3]])
def test_the_engine_keeps_the_deal_order_and_the_plays(name, variant, options, score, seed):
    for s in _random_game(variant, options, score, seed):
        for h in range(len(s.hand_log)):
            facts = s.hand_facts(h)
            deal, plays = _facts_from_history(s, h)
            assert list(facts["deal_order"]) == deal
            assert list(facts["played"]) == plays
            assert len(facts["trick_winners"]) <= s.rules.hand_size
        if s.hand_log:
            assert s.hand_facts() == s.hand_facts(len(s.hand_log) - 1)
            # the open trick is the plays of this trick by the seats still in the hand
            assert s.trick == [(seat, c) for t, seat, c in s.played if t == s.trick_no and seat in s.active]


def test_a_clone_keeps_its_own_facts():
    game = _random_game("truco_paulista", {"signals": SIG_INTERCEPT}, None, 3)
    s = next(st for st in game if st.played and st.signals and not st.is_chance_node())
    before = (list(s.played), list(s.deal_order), [list(x) for x in s.signals], s.trick_winners[:])
    c = s.clone()
    rng = np.random.default_rng(0)
    while not c.is_terminal():
        c.apply_action(sample_chance(c, rng) if c.is_chance_node() else c.legal_actions()[0])
    assert (s.played, s.deal_order, s.signals, s.trick_winners) == before
    assert pickle.loads(pickle.dumps(s)).hand_facts() == s.hand_facts()


def test_withdrawn_cards_leave_the_drawn_trick():
    """put_n: a resigned seat's card of the open trick is taken back when the hand goes on."""
    for seed in range(40):
        for s in _random_game("put_n", {}, None, seed):
            if s.withdrawn and s.hand_log:
                tricks = hand_tricks(s)[-1]
                shown = {(seat, c) for plays, _ in tricks for seat, c in plays}
                assert all((seat, c) not in shown for _, seat, c in s.withdrawn)
                assert all(t == s.trick_no and seat in s.resigned for t, seat, c in s.withdrawn)
                return
    pytest.fail("no put_n game withdrew a card")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/test_facts.py --write  (records the golden digests)")
    from truc_env.io.atomic import atomic_write_text

    out = {c[0]: digests(*c[1:]) for c in CASES}
    GOLDEN.parent.mkdir(exist_ok=True)
    atomic_write_text(GOLDEN, json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} ({len(out)} cases)")
