"""Put, 2 players (docs/rules.md §3). Dealer 0, so seat 1 (the non-dealer) leads.

52 cards, 3 > 2 > A > K > Q > J > 10 > ... > 4; 2 tricks, or 1 trick and 2 ties: 1 point;
trick and tie, or 3 ties: nobody; put; fold; target 5.
"""

import pytest

from truc_env.game.records import replay

from .conftest import assert_last_illegal, outcome, rec, result

V = "put"
# seat 1 wins tricks 1 and 2
WIN1 = [["Kc", "Qc", "Jc"], ["3c", "2c", "4c"]]
WIN1_PLAYS = ["1 play 3c", "0 play Kc", "1 play 2c", "0 play Qc"]
# seat 0 wins tricks 1 and 2
WIN0 = [["3c", "2c", "4c"], ["Kc", "Qc", "Jc"]]
WIN0_PLAYS = ["1 play Kc", "0 play 3c", "0 play 2c", "1 play Qc"]
# trick and tie: seat 1 wins trick 1, seat 0 trick 2, trick 3 tied
TRICK_AND_TIE = [["5c", "2c", "Kd"], ["3c", "4c", "Kc"]]
TRICK_AND_TIE_PLAYS = ["1 play 3c", "0 play 5c", "1 play 4c", "0 play 2c", "0 play Kd", "1 play Kc"]


def test_two_tricks_score_one():
    assert result(rec(V, WIN1, WIN1_PLAYS)) == outcome([0, 1], [0, 1])


def test_hand_over_after_two_tricks():
    assert_last_illegal(rec(V, WIN1, WIN1_PLAYS + ["1 play 4c"]))


def test_non_dealer_leads():
    assert_last_illegal(rec(V, WIN1, ["0 play Kc"]))
    replay(rec(V, WIN1, ["0 play Kc", "1 play 3c"], dealer=1))


def test_trick_and_tie_nobody_scores():
    r = result(rec(V, TRICK_AND_TIE, TRICK_AND_TIE_PLAYS, score=[2, 3]))
    assert r == outcome([0, 0], [2, 3])


def test_one_trick_then_two_ties_scores_one():
    hands = [["4c", "2d", "Kd"], ["3c", "2c", "Kc"]]
    plays = ["1 play 3c", "0 play 4c", "1 play 2c", "0 play 2d", "1 play Kc", "0 play Kd"]
    assert result(rec(V, hands, plays)) == outcome([0, 1], [0, 1])


def test_two_ties_then_one_trick_scores_one():
    hands = [["3d", "2d", "Ac"], ["3c", "2c", "Kc"]]
    plays = ["1 play 3c", "0 play 3d", "1 play 2c", "0 play 2d", "1 play Kc", "0 play Ac"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])


def test_tie_trick_tie_scores_one():
    hands = [["3d", "Ac", "Kd"], ["3c", "Kc", "Ks"]]
    plays = ["1 play 3c", "0 play 3d", "1 play Kc", "0 play Ac", "0 play Kd", "1 play Ks"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])


def test_won_trick_then_tie_hand_goes_on():
    # unlike Truc, 1 trick + 1 tie is not decided: trick 3 can still make it "trick and tie"
    hands = [["4c", "2d", "Kd"], ["3c", "2c", "Kc"]]
    plays = ["1 play 3c", "0 play 4c", "1 play 2c", "0 play 2d"]
    assert result(rec(V, hands, plays)) == outcome([0, 0], [0, 0], hand_over=False)


def test_three_ties_nobody_scores():
    hands = [["3d", "2d", "Kd"], ["3c", "2c", "Kc"]]
    plays = ["1 play 3c", "0 play 3d", "1 play 2c", "0 play 2d", "1 play Kc", "0 play Kd"]
    assert result(rec(V, hands, plays)) == outcome([0, 0], [0, 0])


def test_tied_trick_leader_leads_again():
    hands = [["3d", "2d", "Kd"], ["3c", "2c", "Kc"]]
    assert_last_illegal(rec(V, hands, ["1 play 3c", "0 play 3d", "0 play 2d"]))


RANKING = "3 2 A K Q J T 9 8 7 6 5 4".split()


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("hi,lo", list(zip(RANKING, RANKING[1:])))
def test_ranking_three_two_ace_down_to_four(hi, lo, hi_seat):
    # hi beats lo in trick 1, then tricks 2 and 3 are tied: 1 trick and 2 ties
    spare = [r for r in RANKING if r not in (hi, lo)]
    f, x = spare[-1], spare[-2]
    hi_hand = [hi + "c", f + "h", x + "h"]
    lo_hand = [lo + "d", f + "s", x + "s"]
    hands = [hi_hand, lo_hand] if hi_seat == 0 else [lo_hand, hi_hand]
    lo_seat = 1 - hi_seat
    plays = [f"1 play {hands[1][0]}", f"0 play {hands[0][0]}",
             f"{hi_seat} play {hands[hi_seat][1]}", f"{lo_seat} play {hands[lo_seat][1]}",
             f"{hi_seat} play {hands[hi_seat][2]}", f"{lo_seat} play {hands[lo_seat][2]}"]
    points = [0, 0]
    points[hi_seat] = 1
    assert result(rec(V, hands, plays)) == outcome(points, points)


# --- put ------------------------------------------------------------------------------------

def test_put_refused_caller_scores_one():
    assert result(rec(V, WIN1, ["1 put", "0 refuse"])) == outcome([0, 1], [0, 1])
    assert_last_illegal(rec(V, WIN1, ["1 put", "0 refuse", "1 play 3c"]))


def test_put_accepted_winner_wins_game():
    r = result(rec(V, WIN1, ["1 put", "0 accept"] + WIN1_PLAYS, score=[1, 2]))
    assert r == outcome([0, 3], [1, 5], game_over=True)


def test_put_accepted_opponent_wins_game():
    r = result(rec(V, WIN0, ["1 put", "0 accept"] + WIN0_PLAYS, score=[1, 2]))
    assert r == outcome([4, 0], [5, 2], game_over=True)


def test_put_accepted_drawn_hand_scores_nothing():
    acts = ["1 put", "0 accept"] + TRICK_AND_TIE_PLAYS
    assert result(rec(V, TRICK_AND_TIE, acts, score=[1, 2])) == outcome([0, 0], [1, 2])


def test_put_by_second_player_before_his_card():
    acts = ["1 play 3c", "0 put", "1 refuse"]
    assert result(rec(V, WIN1, acts)) == outcome([1, 0], [1, 0])


def test_put_only_before_own_card():
    assert_last_illegal(rec(V, WIN1, ["1 play 3c", "1 put"]))


def test_put_once_per_hand():
    assert_last_illegal(rec(V, WIN1, ["1 put", "0 accept", "1 play 3c", "0 put"]))


def test_no_raise_besides_put():
    assert_last_illegal(rec(V, WIN1, ["1 raise"]))


def test_put_answer_is_accept_or_refuse():
    assert_last_illegal(rec(V, WIN1, ["1 put", "0 put"]))


def test_put_max_raises_zero():
    assert_last_illegal(rec(V, WIN1, ["1 put"], options={"max_raises": 0}))


# --- fold -----------------------------------------------------------------------------------

def test_fold_opponent_scores_one():
    assert result(rec(V, WIN1, ["1 fold"])) == outcome([1, 0], [1, 0])
    assert result(rec(V, WIN1, ["1 play 3c", "0 fold"])) == outcome([0, 1], [0, 1])


def test_fold_after_accepted_put_concedes_game():
    r = result(rec(V, WIN1, ["1 put", "0 accept", "1 play 3c", "0 fold"], score=[1, 2]))
    assert r == outcome([0, 3], [1, 5], game_over=True)


def test_fold_not_offered_when_answering_put():
    assert_last_illegal(rec(V, WIN1, ["1 put", "0 fold"]))


# --- game -----------------------------------------------------------------------------------

def test_target_five():
    assert result(rec(V, WIN1, WIN1_PLAYS, score=[0, 4])) == outcome([0, 1], [0, 5], game_over=True)
    assert result(rec(V, WIN1, WIN1_PLAYS, score=[0, 3])) == outcome([0, 1], [0, 4])


def test_fifty_two_card_deck_low_cards():
    hands = [["4c", "5c", "6c"], ["2c", "2d", "4d"]]
    plays = ["1 play 2c", "0 play 4c", "1 play 2d", "0 play 5c"]
    assert result(rec(V, hands, plays)) == outcome([0, 1], [0, 1])


def test_hand_size_two_one_trick_each_nobody_scores():
    hands = [["Kc", "3d"], ["3c", "Qc"]]
    plays = ["1 play 3c", "0 play Kc", "1 play Qc", "0 play 3d"]
    assert result(rec(V, hands, plays, options={"hand_size": 2})) == outcome([0, 0], [0, 0])


def test_hand_size_two_trick_and_tie_scores_one():
    hands = [["Kc", "Qd"], ["3c", "Qc"]]
    plays = ["1 play 3c", "0 play Kc", "1 play Qc", "0 play Qd"]
    assert result(rec(V, hands, plays, options={"hand_size": 2})) == outcome([0, 1], [0, 1])


def test_refused_put_can_end_the_game():
    assert result(rec(V, WIN1, ["1 put", "0 refuse"], score=[2, 4])) == outcome([0, 1], [2, 5], game_over=True)
