"""Truco Mineiro (docs/rules.md §5): as Paulista but fixed manilhas 4c > 7h > As > 7d, no vira,
a 27-card clean deck, all three tied scores nothing, the special hands at 11, ladder: mineiro.
4 players, dealer 0 (mão seat 1, order 1 2 3 0) unless said.
"""

import pytest

from truc_env.errors import CardError, RecordError, TrucError
from truc_env.game.records import replay

from .conftest import MINEIRO27, assert_last_illegal, deck_rec, outcome, rec, result

V = "truco_mineiro"
HU = {"players": 2}

# trick 1 tied (3c = 3d), side 0 wins trick 2 with Ah played last
MA = [["4d", "Ah", "5s"], ["3c", "Kc", "5c"], ["3d", "Jd", "5d"], ["4h", "Qc", "5h"]]
MA_PLAYS = ["1 play 3c", "2 play 3d", "3 play 4h", "0 play 4d",
            "1 play Kc", "2 play Jd", "3 play Qc", "0 play Ah"]
# three ties
ME = [["4d", "6s", "Kd"], ["3c", "2c", "Kc"], ["3d", "2d", "5d"], ["4h", "4s", "5c"]]
ME_PLAYS = ["1 play 3c", "2 play 3d", "3 play 4h", "0 play 4d",
            "1 play 2c", "2 play 2d", "3 play 4s", "0 play 6s",
            "1 play Kc", "2 play 5d", "3 play 5c", "0 play Kd"]
SLOTS = [f"{s} play slot {i}" for i in range(3) for s in (1, 2, 3, 0)]


def m(hands, actions, **kw):
    return rec(V, hands, actions, **kw)


# --- ranking ----------------------------------------------------------------------------------

PAIRS = [
    ("4c", "7h"), ("7h", "As"), ("As", "7d"), ("7d", "3c"),   # the four manilhas, then the 3s
    ("7d", "7c"), ("As", "Ac"), ("4c", "4d"),                 # a manilha above its plain rank
    ("3c", "2d"), ("2c", "Ad"), ("Ac", "Kd"), ("Kc", "Jd"), ("Jc", "Qd"),
    ("Qc", "7s"), ("7c", "6d"), ("6c", "5d"), ("5c", "4d"),
]


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("hi,lo", PAIRS)
def test_fixed_manilhas_and_ranking(hi, lo, hi_seat):
    spare = [r for r in "65QJK23" if r not in (hi[0], lo[0])]
    f, x = spare[0], spare[1]
    hi_hand = [hi, f + "h", x + "h"]
    lo_hand = [lo, f + "s", x + "s"]
    hands = [hi_hand, lo_hand] if hi_seat == 0 else [lo_hand, hi_hand]
    lo_seat = 1 - hi_seat
    plays = [f"1 play {hands[1][0]}", f"0 play {hands[0][0]}",
             f"{hi_seat} play {hands[hi_seat][1]}", f"{lo_seat} play {hands[lo_seat][1]}"]
    points = [0, 0]
    points[hi_seat] = 1
    assert result(m(hands, plays, options=HU)) == outcome(points, points)


def test_no_vira_needed():
    assert result(m(MA, MA_PLAYS)) == outcome([1, 0], [1, 0])


# --- clean deck -------------------------------------------------------------------------------

def test_clean_deck_27_cards():
    assert len(MINEIRO27) == 27
    hands = [["4c", "7h", "Ac"], ["As", "7d", "Kc"]]
    plays = ["1 play 7d", "0 play 7h", "0 play Ac", "1 play As", "1 play Kc", "0 play 4c"]
    record = deck_rec(V, MINEIRO27, [hands], plays, options=dict(HU, deck="clean"))
    assert result(record) == outcome([1, 0], [1, 0])


@pytest.mark.parametrize("removed", ["7c", "7s", "6h", "5c", "4h", "4s", "4d"])
def test_clean_deck_removed_cards(removed):
    hands = [["4c", "7h", removed], ["As", "7d", "Kc"]]
    with pytest.raises((CardError, RecordError)):
        replay(m(hands, [], options=dict(HU, deck="clean")))


# --- ties -------------------------------------------------------------------------------------

def test_all_three_tied_nobody_scores():
    assert result(m(ME, ME_PLAYS)) == outcome([0, 0], [0, 0])


def test_trick1_tied_trick2_decides():
    assert_last_illegal(m(MA, MA_PLAYS + ["0 play 5s"]))


# --- ladders ----------------------------------------------------------------------------------

@pytest.mark.parametrize("actions,points", [
    (["1 raise", "2 refuse", "0 refuse"], [0, 1]),
    (["1 raise", "2 raise", "3 refuse", "1 refuse"], [3, 0]),
    (["1 raise", "2 raise", "3 raise", "0 refuse", "2 refuse"], [0, 6]),
    (["1 raise", "2 raise", "3 raise", "0 raise", "1 refuse", "3 refuse"], [9, 0]),
])
def test_default_ladder_as_paulista(actions, points):
    assert result(m(MA, actions)) == outcome(points, points)


LM = {"ladder": "mineiro"}


def test_ladder_mineiro_base_value_two():
    assert result(m(MA, MA_PLAYS, options=LM)) == outcome([2, 0], [2, 0])


@pytest.mark.parametrize("actions,points", [
    (["1 raise", "2 refuse", "0 refuse"], [0, 2]),
    (["1 raise", "2 raise", "3 refuse", "1 refuse"], [4, 0]),
    (["1 raise", "2 raise", "3 raise", "0 refuse", "2 refuse"], [0, 6]),
    (["1 raise", "2 raise", "3 raise", "0 raise", "1 refuse", "3 refuse"], [10, 0]),
])
def test_ladder_mineiro_refusals_2_4_6_10(actions, points):
    assert result(m(MA, actions, options=LM)) == outcome(points, points)


def test_ladder_mineiro_accepted_values():
    assert result(m(MA, ["1 raise", "2 accept"] + MA_PLAYS, options=LM)) == outcome([4, 0], [4, 0])
    acts = ["1 raise", "2 raise", "3 raise", "0 raise", "1 accept"]
    assert_last_illegal(m(MA, acts + ["1 raise"], options=LM))
    assert result(m(MA, acts + MA_PLAYS, options=LM)) == outcome([12, 0], [12, 0], game_over=True)


def test_ladder_mineiro_special_hand_at_ten_worth_four():
    r = result(m(MA, ["2 accept"] + MA_PLAYS, score=[10, 4], options=LM))
    assert r == outcome([4, 0], [14, 4], game_over=True)


def test_ladder_mineiro_iron_hand_at_ten_ten():
    assert_last_illegal(m(MA, ["1 play 3c"], score=[10, 10], options=LM))
    r = result(m(MA, SLOTS[:8], score=[10, 10], options=LM))
    assert r["game_over"] and r["hand_over"] and r["score"][0] >= 12 and r["score"][1] == 10


def test_fold_off_by_default():
    assert_last_illegal(m(MA, ["1 fold"]))


# --- at 11 --------------------------------------------------------------------------------------

def test_at_eleven_side_plays_for_three_and_wins_game():
    r = result(m(MA, ["2 accept"] + MA_PLAYS, score=[11, 6]))
    assert r == outcome([3, 0], [14, 6], game_over=True)


def test_at_eleven_side_loses_opponents_score_three():
    assert result(m(MA, ["1 accept"] + MA_PLAYS, score=[6, 11])) == outcome([3, 0], [9, 11])


def test_at_eleven_tie_scores_nothing():
    assert result(m(ME, ["2 accept"] + ME_PLAYS, score=[11, 6])) == outcome([0, 0], [11, 6])


def test_at_eleven_decline_opponents_score_one():
    assert result(m(MA, ["2 refuse"], score=[11, 6])) == outcome([0, 1], [11, 7])


def test_at_eleven_no_raises():
    assert_last_illegal(m(MA, ["2 accept", "1 raise"], score=[11, 6]))


def test_both_at_eleven_blind_winner_wins_game():
    r = result(m(MA, SLOTS[:8], score=[11, 11]))
    assert r == outcome([1, 0], [12, 11], game_over=True)
    assert_last_illegal(m(MA, ["1 raise"], score=[11, 11]))
    assert_last_illegal(m(MA, ["1 play 3c"], score=[11, 11]))


def test_both_at_eleven_tie_scores_nothing_game_goes_on():
    assert result(m(ME, SLOTS, score=[11, 11])) == outcome([0, 0], [11, 11])


def test_tied_iron_hand_is_followed_by_another_iron_hand():
    h1 = {"deal": {"hands": ME}, "actions": SLOTS}
    # dealer 1 now: mão seat 2, order 2 3 0 1; still 11-11, so blind again
    h2_hands = [ME[3], ME[0], ME[1], ME[2]]
    h2 = {"deal": {"hands": h2_hands}, "actions": ["2 play slot 0"]}
    r = result({"variant": V, "score": [11, 11], "hands": [h1, h2]})
    assert r == outcome([0, 0], [11, 11], hand_over=False)
    h2_bad = {"deal": {"hands": h2_hands}, "actions": ["2 play 3c"]}
    with pytest.raises(TrucError):
        replay({"variant": V, "score": [11, 11], "hands": [h1, h2_bad]})


def test_ladder_mineiro_declining_the_special_hand_at_ten_gives_the_opponents_two():
    assert result(m(MA, ["2 refuse"], score=[10, 4], options=LM)) == outcome([0, 2], [10, 6])
    assert result(m(MA, ["1 refuse"], score=[4, 10], options=LM)) == outcome([2, 0], [6, 10])
