"""Argentine Truco (docs/rules.md §6). Spanish 40-card deck; 4 players unless said; dealer 0, so the
mano is seat 1 (order 1 2 3 0); side 0 = seats 0 and 2. Envido on, flor off, target 30.
The compulsory-flor tests use dealer 1 (heads-up mano seat 0).
"""

import pytest

from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.records import replay

from .conftest import assert_last_illegal, outcome, rec, result

V = "truco_argentino"
HU = {"players": 2}


def a(hands, actions, **kw):
    return rec(V, hands, actions, **kw)


# --- ranking ----------------------------------------------------------------------------------

PAIRS = [
    ("1e", "1b"), ("1b", "7e"), ("7e", "7o"), ("7o", "3c"), ("3o", "2e"), ("2o", "1c"),
    ("1o", "12e"), ("12c", "11o"), ("11c", "10o"), ("10c", "7c"), ("7b", "6o"), ("6c", "5o"),
    ("5c", "4o"), ("7e", "7c"), ("7o", "7b"), ("1b", "1o"), ("1e", "1c"),
]


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("hi,lo", PAIRS)
def test_ranking(hi, lo, hi_seat):
    spare = [r for r in ["4", "5", "6", "10", "11", "12"] if r not in (hi[:-1], lo[:-1])]
    f, x = spare[0], spare[1]
    hi_hand = [hi, f + "e", x + "e"]
    lo_hand = [lo, f + "b", x + "b"]
    hands = [hi_hand, lo_hand] if hi_seat == 0 else [lo_hand, hi_hand]
    lo_seat = 1 - hi_seat
    plays = [f"1 play {hands[1][0]}", f"0 play {hands[0][0]}",
             f"{hi_seat} play {hands[hi_seat][1]}", f"{lo_seat} play {hands[lo_seat][1]}"]
    points = [0, 0]
    points[hi_seat] = 1
    assert result(a(hands, plays, options=HU)) == outcome(points, points)


@pytest.mark.parametrize("c0,c1", [("1o", "1c"), ("7b", "7c")])
def test_equal_cards_make_a_parda(c0, c1):
    # trick 1 parda, trick 2 decides
    hands = [[c0, "5e", "4b"], [c1, "6e", "4e"]]
    plays = [f"1 play {c1}", f"0 play {c0}", "1 play 4e", "0 play 5e"]
    assert result(a(hands, plays, options=HU)) == outcome([1, 0], [1, 0])


# --- pardas (4 players) -------------------------------------------------------------------------

def test_one_each_and_parda_first_tricks_winner_wins():
    hands = [["5o", "6o", "4e"], ["3o", "4c", "11c"], ["12o", "2o", "11o"], ["4o", "5c", "6c"]]
    plays = ["1 play 3o", "2 play 12o", "3 play 4o", "0 play 5o",     # side 1
             "1 play 4c", "2 play 2o", "3 play 5c", "0 play 6o",      # side 0
             "2 play 11o", "3 play 6c", "0 play 4e", "1 play 11c"]    # parda
    assert result(a(hands, plays)) == outcome([0, 1], [0, 1])


B = [["4c", "2e", "7b"], ["3o", "12c", "5e"], ["3c", "5o", "6e"], ["4o", "6c", "7c"]]
B_PLAYS = ["1 play 3o", "2 play 3c", "3 play 4o", "0 play 4c",      # parda
           "1 play 12c", "2 play 5o", "3 play 6c", "0 play 2e"]     # side 0


def test_trick1_parda_trick2_decides():
    assert result(a(B, B_PLAYS)) == outcome([1, 0], [1, 0])
    assert_last_illegal(a(B, B_PLAYS + ["0 play 7b"]))


def test_trick1_and_trick2_parda_trick3_decides():
    hands = [["4c", "5c", "1c"], ["3o", "2o", "12c"], ["3c", "2c", "4e"], ["4o", "5o", "6c"]]
    plays = ["1 play 3o", "2 play 3c", "3 play 4o", "0 play 4c",
             "1 play 2o", "2 play 2c", "3 play 5o", "0 play 5c",
             "1 play 12c", "2 play 4e", "3 play 6c", "0 play 1c"]
    assert result(a(hands, plays)) == outcome([1, 0], [1, 0])


def test_all_three_parda_manos_side_wins():
    hands = [["4c", "5c", "12o"], ["3o", "2o", "12c"], ["3c", "2c", "4e"], ["4o", "5o", "6c"]]
    plays = ["1 play 3o", "2 play 3c", "3 play 4o", "0 play 4c",
             "1 play 2o", "2 play 2c", "3 play 5o", "0 play 5c",
             "1 play 12c", "2 play 4e", "3 play 6c", "0 play 12o"]
    assert result(a(hands, plays)) == outcome([0, 1], [0, 1])


def test_trick2_parda_after_won_trick1():
    hands = [["3o", "5e", "4b"], ["12o", "5b", "4e"]]
    plays = ["1 play 12o", "0 play 3o", "0 play 5e", "1 play 5b"]
    assert result(a(hands, plays, options=HU)) == outcome([1, 0], [1, 0])


# --- ladder -------------------------------------------------------------------------------------

@pytest.mark.parametrize("actions,points", [
    (["1 raise", "2 refuse", "0 refuse"], [0, 1]),
    (["1 raise", "2 raise", "3 refuse", "1 refuse"], [2, 0]),
    (["1 raise", "2 raise", "3 raise", "0 refuse", "2 refuse"], [0, 3]),
])
def test_ladder_refusals_1_2_3(actions, points):
    assert result(a(B, actions)) == outcome(points, points)


def test_truco_accepted_worth_two():
    assert result(a(B, ["1 raise", "2 refuse", "0 accept"] + B_PLAYS)) == outcome([2, 0], [2, 0])


def test_vale_cuatro_worth_four_and_the_top():
    acts = ["1 raise", "2 raise", "3 raise", "0 accept"]
    assert_last_illegal(a(B, acts + ["1 raise"]))
    assert result(a(B, acts + B_PLAYS)) == outcome([4, 0], [4, 0])


def test_same_side_may_not_raise_twice():
    assert_last_illegal(a(B, ["1 raise", "2 accept", "1 play 3o", "2 play 3c", "3 raise"]))


def test_fold_opponents_score_current_value():
    assert result(a(B, ["1 fold"])) == outcome([1, 0], [1, 0])
    acts = ["1 raise", "2 accept", "1 play 3o", "2 fold"]
    assert result(a(B, acts)) == outcome([0, 2], [0, 2])


def test_fold_not_offered_when_answering():
    assert_last_illegal(a(B, ["1 raise", "2 fold"]))


def test_target_thirty():
    hands = [["3o", "2c", "4b"], ["12o", "11c", "5b"]]
    plays = ["1 play 12o", "0 play 3o", "0 play 2c", "1 play 11c"]
    assert result(a(hands, plays, score=[11, 0], options=HU)) == outcome([1, 0], [12, 0])
    assert result(a(hands, plays, score=[29, 0], options=HU)) == outcome([1, 0], [30, 0], game_over=True)


# --- envido: values (heads-up, seat 1 = mano holds 33, seat 0 holds 3) ---------------------------

ENV = [["1e", "2b", "3c"], ["7o", "6o", "4c"]]


@pytest.mark.parametrize("actions,points", [
    (["1 envido", "0 accept"], [0, 2]),
    (["1 envido", "0 refuse"], [0, 1]),
    (["1 envido", "0 envido", "1 accept"], [0, 4]),
    (["1 envido", "0 envido", "1 refuse"], [2, 0]),
    (["1 real_envido", "0 accept"], [0, 3]),
    (["1 real_envido", "0 refuse"], [0, 1]),
    (["1 envido", "0 real_envido", "1 accept"], [0, 5]),
    (["1 envido", "0 real_envido", "1 refuse"], [2, 0]),
    (["1 envido", "0 envido", "1 real_envido", "0 accept"], [0, 7]),
    (["1 envido", "0 envido", "1 real_envido", "0 refuse"], [0, 4]),
    (["1 falta_envido", "0 refuse"], [0, 1]),
    (["1 envido", "0 falta_envido", "1 refuse"], [2, 0]),
    (["1 envido", "0 envido", "1 falta_envido", "0 refuse"], [0, 4]),
    (["1 real_envido", "0 falta_envido", "1 refuse"], [3, 0]),
    (["1 envido", "0 real_envido", "1 falta_envido", "0 refuse"], [0, 5]),
    (["1 envido", "0 envido", "1 real_envido", "0 falta_envido", "1 refuse"], [7, 0]),
])
def test_envido_chain_values(actions, points):
    # points are scored at once; the hand goes on
    assert result(a(ENV, actions, options=HU)) == outcome(points, points, hand_over=False)


def test_falta_envido_worth_what_the_leading_side_needs():
    r = result(a(ENV, ["1 falta_envido", "0 accept"], score=[20, 12], options=HU))
    assert r == outcome([0, 10], [20, 22], hand_over=False)


def test_falta_envido_after_envido_replaces_the_sum():
    r = result(a(ENV, ["1 envido", "0 falta_envido", "1 accept"], score=[20, 12], options=HU))
    assert r == outcome([0, 10], [20, 22], hand_over=False)


def test_falta_envido_can_win_the_game():
    r = result(a(ENV, ["1 falta_envido", "0 accept"], score=[12, 20], options=HU))
    assert r == outcome([0, 10], [12, 30], game_over=True)


@pytest.mark.parametrize("actions", [
    ["1 envido", "0 envido", "1 envido"],
    ["1 real_envido", "0 envido"],
    ["1 real_envido", "0 real_envido"],
    ["1 envido", "0 real_envido", "1 real_envido"],
    ["1 falta_envido", "0 real_envido"],
    ["1 falta_envido", "0 falta_envido"],
    ["1 envido", "0 envido", "1 real_envido", "0 real_envido"],
])
def test_envido_chain_only_goes_up(actions):
    assert_last_illegal(a(ENV, actions, options=HU))


# --- envido: points ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seat0,seat1,points", [
    (["1c", "2c", "3e"], ["12o", "2o", "5c"], [2, 0]),   # 23 > 22: figures count 0
    (["12b", "11c", "4o"], ["7o", "6c", "5e"], [0, 2]),  # no two of a suit: 4 < 7
    (["6c", "7c", "2e"], ["7o", "5o", "1o"], [2, 0]),    # three of a suit: two highest, 33 > 32
    (["12o", "11o", "4c"], ["7e", "6b", "5c"], [2, 0]),  # two figures of a suit: 20 > 7
    (["4o", "1o", "7c"], ["7e", "6b", "5c"], [2, 0]),    # 25 > 7
])
def test_envido_points(seat0, seat1, points):
    r = result(a([seat0, seat1], ["1 envido", "0 accept"], options=HU))
    assert r == outcome(points, points, hand_over=False)


def test_envido_tie_goes_to_the_mano():
    hands = [["7c", "6c", "1e"], ["7o", "6o", "4c"]]  # 33 each
    assert result(a(hands, ["1 envido", "0 accept"], options=HU)) == outcome([0, 2], [0, 2], hand_over=False)
    r = result(a(hands, ["1 play 4c", "0 envido", "1 accept"], options=HU))
    assert r == outcome([0, 2], [0, 2], hand_over=False)
    r = result(a(hands, ["0 envido", "1 accept"], dealer=1, options=HU))
    assert r == outcome([2, 0], [2, 0], hand_over=False)


def test_envido_tie_goes_to_the_seat_nearer_the_mano_4p():
    # seat 2 (side 0) and seat 3 (side 1) both hold 33; seat 2 is nearer the mano (seat 1)
    hands = [["5e", "12b", "10c"], ["1e", "2b", "3c"], ["7o", "6o", "4c"], ["7c", "6c", "4o"]]
    assert result(a(hands, ["1 envido", "2 accept"])) == outcome([2, 0], [2, 0], hand_over=False)


ENV4 = [["5e", "12b", "10c"], ["1e", "2b", "3c"], ["7o", "5o", "4c"], ["7c", "6c", "4o"]]


def test_envido_sides_points_are_its_best_players():
    # seat 3's 33 beats seat 2's 32 although seat 1 holds only 3
    assert result(a(ENV4, ["1 envido", "2 accept"])) == outcome([0, 2], [0, 2], hand_over=False)


def test_envido_two_opponent_protocol():
    r = result(a(ENV4, ["1 envido", "2 refuse", "0 accept"]))
    assert r == outcome([0, 2], [0, 2], hand_over=False)
    assert result(a(ENV4, ["1 envido", "2 refuse", "0 refuse"])) == outcome([0, 1], [0, 1], hand_over=False)
    assert_last_illegal(a(ENV4, ["1 envido", "3 accept"]))


# --- envido: when -----------------------------------------------------------------------------------

def test_after_envido_turn_returns_to_pending_seat():
    replay(a(ENV, ["1 envido", "0 accept", "1 play 4c"], options=HU))
    assert_last_illegal(a(ENV, ["1 envido", "0 accept", "0 play 1e"], options=HU))


def test_envido_by_second_player_before_his_first_card():
    r = result(a(ENV, ["1 play 4c", "0 envido", "1 accept", "0 play 3c"], options=HU))
    assert r == outcome([0, 2], [0, 2], hand_over=False)


def test_envido_goes_first():
    # truco asked; seat 0 answers envido; after it, seat 0 answers the truco
    acts = ["1 raise", "0 envido", "1 accept", "0 accept",
            "1 play 4c", "0 play 3c", "0 play 2b", "1 play 6o"]
    assert result(a(ENV, acts, options=HU)) == outcome([2, 2], [2, 2])
    assert_last_illegal(a(ENV, ["1 raise", "0 envido", "1 accept", "1 play 4c"], options=HU))


def test_envido_goes_first_4p_resumes_at_same_answerer():
    acts = ["1 raise", "2 envido", "3 accept", "2 accept", "1 play 3c"]
    assert result(a(ENV4, acts)) == outcome([0, 2], [0, 2], hand_over=False)


def test_envido_not_after_accepted_truco():
    assert_last_illegal(a(ENV, ["1 raise", "0 accept", "1 envido"], options=HU))


def test_envido_only_in_the_first_trick():
    assert_last_illegal(a(ENV, ["1 play 4c", "0 play 3c", "0 envido"], options=HU))


def test_envido_once_per_hand():
    assert_last_illegal(a(ENV, ["1 envido", "0 accept", "1 play 4c", "0 envido"], options=HU))
    assert_last_illegal(a(ENV, ["1 envido", "0 refuse", "1 play 4c", "0 envido"], options=HU))


def test_envido_option_off():
    assert_last_illegal(a(ENV, ["1 envido"], options=dict(HU, envido=False)))


def test_envido_ends_the_game_mid_hand():
    opts = dict(HU, target=15)
    r = result(a(ENV, ["1 envido", "0 accept"], score=[0, 13], options=opts))
    assert r == outcome([0, 2], [0, 15], game_over=True)
    assert_last_illegal(a(ENV, ["1 envido", "0 accept", "1 play 4c"], score=[0, 13], options=opts))


# --- flor ---------------------------------------------------------------------------------------------

FLOR = [["1e", "2b", "3c"], ["7o", "5o", "1o"]]
FLOR_OPTS = dict(HU, flor=True)


def test_flor_worth_three():
    acts = ["1 flor", "1 play 1o", "0 play 3c", "0 play 2b", "1 play 7o", "1 play 5o", "0 play 1e"]
    assert result(a(FLOR, acts, options=FLOR_OPTS)) == outcome([1, 3], [1, 3])


def test_flor_cancels_envido():
    assert_last_illegal(a(FLOR, ["1 flor", "1 play 1o", "0 envido"], options=FLOR_OPTS))


def test_flor_needs_three_cards_of_one_suit():
    assert_last_illegal(a(ENV, ["1 flor"], options=FLOR_OPTS))


def test_flor_off_by_default():
    assert_last_illegal(a(FLOR, ["1 flor"], options=HU))


def test_spanish_deck_has_no_eights_and_nines():
    with pytest.raises(TrucError):
        replay(a([["8o", "2b", "3c"], ["7o", "5o", "1o"]], [], options=HU))


def test_envido_counter_call_by_second_opponent():
    # seat 2 refuses, seat 0 raises to envido envido, answered by seat 1 (then seat 3)
    r = result(a(ENV4, ["1 envido", "2 refuse", "0 envido", "1 accept"]))
    assert r == outcome([0, 4], [0, 4], hand_over=False)
    r = result(a(ENV4, ["1 envido", "2 refuse", "0 envido", "1 refuse", "3 refuse"]))
    assert r == outcome([2, 0], [2, 0], hand_over=False)


def test_falta_envido_with_equal_scores():
    r = result(a(ENV, ["1 falta_envido", "0 accept"], score=[5, 5], options=HU))
    assert r == outcome([0, 25], [5, 30], game_over=True)


def test_envido_goes_first_answered_by_second_opponent_truco_resumes_with_him():
    acts = ["1 raise", "2 refuse", "0 envido", "1 accept", "0 accept", "1 play 3c"]
    assert result(a(ENV4, acts)) == outcome([0, 2], [0, 2], hand_over=False)
    assert_last_illegal(a(ENV4, ["1 raise", "2 refuse", "0 envido", "1 accept", "2 accept"]))


def test_no_envido_in_answer_to_a_counter_raise():
    # the retruco accepted the truco, and envido is not allowed once a truco has been accepted
    assert_last_illegal(a(ENV, ["1 raise", "0 raise", "1 envido"], options=HU))


def test_max_raises_does_not_count_envido():
    opts = dict(HU, max_raises=1)
    replay(a(ENV, ["1 envido", "0 accept", "1 raise", "0 accept"], options=opts))
    assert_last_illegal(a(ENV, ["1 envido", "0 accept", "1 raise", "0 accept", "1 play 4c", "0 raise"],
                          options=opts))


# --- flor is compulsory and replaces envido (docs/rules.md §6) ---------------------------------------
# dealer 1 in these records, so seat 0 is the mano; seat 1 holds the flor 1o 2o 3o (26 points)

NO_FLOR = ["1e", "2b", "3c"]
FLOR26 = ["1o", "2o", "3o"]


def f(hands, actions, **kw):
    return a(hands, actions, dealer=1, options=FLOR_OPTS, **kw)


def test_flor_is_compulsory_holder_may_only_sing_or_fold():
    hands = [FLOR26, NO_FLOR]
    for first in ("0 play 1o", "0 raise", "0 envido", "0 real_envido", "0 falta_envido"):
        with pytest.raises(IllegalActionError, match="legal: fold, flor$"):
            replay(f(hands, [first]))
    assert result(f(hands, ["0 fold"])) == outcome([0, 1], [0, 1])
    assert result(f(hands, ["0 flor", "0 play 1o"])) == outcome([3, 0], [3, 0], hand_over=False)


def test_flor_holder_asked_a_truco_sings_flor_first_and_the_truco_resumes_with_him():
    # the record: "0 raise, 1 envido, 0 accept" is no longer an envido
    hands = [NO_FLOR, FLOR26]
    with pytest.raises(IllegalActionError, match="legal: flor$"):
        replay(f(hands, ["0 raise", "1 envido", "0 accept"]))
    assert_last_illegal(f(hands, ["0 raise", "1 accept"]))
    assert_last_illegal(f(hands, ["0 raise", "1 flor", "1 envido"]))
    acts = ["0 raise", "1 flor", "1 accept", "0 play 1e", "1 play 1o", "0 play 3c", "1 play 3o"]
    # flor 3 to side 1; the truco (2) to seat 0: trick 1 won, trick 2 parda
    assert result(f(hands, acts)) == outcome([2, 3], [2, 3])
    assert result(f(hands, ["0 raise", "1 flor", "1 refuse"])) == outcome([1, 3], [1, 3])


def test_flor_holder_asked_an_envido_sings_flor_and_the_envido_scores_nothing():
    hands = [NO_FLOR, FLOR26]
    for answer in ("1 accept", "1 refuse", "1 envido", "1 real_envido", "1 falta_envido"):
        assert_last_illegal(f(hands, ["0 envido", answer]))
    # the turn goes back to the seat whose card was pending
    acts = ["0 real_envido", "1 flor", "0 play 1e"]
    assert result(f(hands, acts)) == outcome([0, 3], [0, 3], hand_over=False)
    assert_last_illegal(f(hands, acts + ["1 envido"]))


def test_flor_holder_never_calls_an_envido():
    with pytest.raises(IllegalActionError, match="cannot 'envido'.*legal: fold, flor"):
        replay(f([FLOR26, NO_FLOR], ["0 envido"]))


def test_flor_by_a_seat_without_flor_is_illegal():
    with pytest.raises(IllegalActionError, match="cannot 'flor'.*legal: play 1e, .*, fold, envido"):
        replay(f([NO_FLOR, FLOR26], ["0 flor"]))


def test_flor_answer_when_no_flor_was_sung_is_illegal():
    with pytest.raises(IllegalActionError, match="cannot 'accept'.*legal:"):
        replay(f([NO_FLOR, FLOR26], ["0 accept"]))
    # seat 0 sang without an opposing flor: nobody answers it
    assert_last_illegal(f([FLOR26, NO_FLOR], ["0 flor", "1 accept"]))


# --- two flors in one hand (docs/rules.md §6) --------------------------------------------------------

@pytest.mark.parametrize("hands,answer,points", [
    ([["1e", "2e", "3e"], ["7o", "6o", "5o"]], "accept", [0, 4]),  # 26 < 38: 4 to the better flor
    ([["7o", "6o", "5o"], ["1e", "2e", "3e"]], "accept", [4, 0]),
    ([["4e", "5e", "12e"], ["4o", "5o", "10o"]], "accept", [4, 0]),  # 29 = 29: the mano's side
    ([["1e", "2e", "3e"], ["7o", "6o", "5o"]], "refuse", [3, 0]),  # 3 to the first flor
])
def test_two_flors_second_holder_accepts_four_to_the_better_or_refuses_three_to_the_first(hands, answer, points):
    acts = ["0 flor", f"1 {answer}"]
    assert result(f(hands, acts)) == outcome(points, points, hand_over=False)
    assert_last_illegal(f(hands, ["0 flor", "1 flor"]))  # he answers instead of singing his own
    assert_last_illegal(f(hands, acts + ["1 flor"]))
    assert_last_illegal(f(hands, acts + ["0 envido"]))
    replay(f(hands, acts + ["0 play " + hands[0][0], "1 play " + hands[1][0]]))


FLORS4 = [["7e", "6e", "5e"], ["1o", "2o", "3o"], ["1c", "2c", "3c"], ["4b", "5b", "6b"]]


def test_two_flors_partners_flors_count_once_per_side():
    # dealer 0: seat 1 sings (26; partner seat 3 holds 35); seat 2 answers for side 0 (seat 0 holds 38)
    opts = {"flor": True}
    acts = ["1 flor", "2 accept", "1 play 1o", "2 play 1c", "3 play 4b", "0 play 5e"]
    assert result(a(FLORS4, acts, options=opts)) == outcome([4, 0], [4, 0], hand_over=False)
    assert_last_illegal(a(FLORS4, ["1 flor", "2 accept", "1 play 1o", "2 play 1c", "3 flor"], options=opts))
    assert_last_illegal(a(FLORS4, ["1 flor", "0 accept"], options=opts))
    assert result(a(FLORS4, ["1 flor", "2 refuse"], options=opts)) == outcome([0, 3], [0, 3], hand_over=False)
    # only one side with flor: seat 3's flor is counted with seat 1's, 3 points once
    hands = [["7e", "7b", "5e"], FLORS4[1], ["1c", "2b", "3c"], FLORS4[3]]
    acts = ["1 flor", "1 play 1o", "2 play 1c", "3 play 4b"]
    assert result(a(hands, acts, options=opts)) == outcome([0, 3], [0, 3], hand_over=False)
