"""Le Truc, 2 players (docs/rules.md §0 and §1). Dealer 0 unless said, so seat 1 leads trick 1.

Ranking 7 > 8 > A > K > Q > J > 10 > 9 (suits irrelevant); ladder 1 2 4 6 8 10 12; target 12.
"""

import pytest

from truc_env.errors import IllegalActionError, RulesError, TrucError
from truc_env.game.records import replay

from .conftest import (
    FRENCH32,
    assert_last_illegal,
    deck_rec,
    outcome,
    rec,
    result,
)

V = "le_truc"
# seat 0 wins tricks 1 and 2: A > Q, then K > J
WIN0 = [["Ac", "Kd", "9h"], ["Qc", "Jd", "Th"]]
WIN0_PLAYS = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]
# every trick tied: 7/7, 8/8, A/A
ALL_TIED = [["7c", "8c", "Ac"], ["7d", "8d", "Ad"]]
ALL_TIED_PLAYS = ["1 play 7d", "0 play 7c", "1 play 8d", "0 play 8c", "1 play Ad", "0 play Ac"]


# --- §9 worked example ----------------------------------------------------------------------

def test_worked_example():
    record = {
        "variant": "le_truc",
        "dealer": 1,
        "deal": {"hands": [["7c", "9d", "Ks"], ["8h", "7d", "As"]]},
        "actions": ["0 raise", "1 accept", "0 play 7c", "1 play 7d", "0 play Ks", "1 raise", "0 refuse"],
    }
    assert result(record) == outcome([0, 2], [0, 2])


# --- tricks ---------------------------------------------------------------------------------

def test_highest_card_wins_trick_two_tricks_win_hand():
    assert result(rec(V, WIN0, WIN0_PLAYS)) == outcome([1, 0], [1, 0])


def test_no_suit_following_any_card_may_be_played():
    # seat 1 leads a club, seat 0 answers with a diamond and wins with it
    hands = [["Ad", "Kd", "9h"], ["Qc", "Jc", "Th"]]
    r = result(rec(V, hands, ["1 play Qc", "0 play Ad", "0 play Kd", "1 play Jc"]))
    assert r == outcome([1, 0], [1, 0])


def test_hand_ends_when_decided_extra_play_illegal():
    assert_last_illegal(rec(V, WIN0, WIN0_PLAYS + ["0 play 9h"]))


def test_trick_winner_leads_next_trick():
    # seat 0 won trick 1, so seat 1 may not lead trick 2
    assert_last_illegal(rec(V, WIN0, ["1 play Qc", "0 play Ac", "1 play Jd"]))


def test_tied_trick_leader_leads_again():
    hands = [["7c", "Kd", "9h"], ["7d", "Qc", "Jh"]]
    assert_last_illegal(rec(V, hands, ["1 play 7d", "0 play 7c", "0 play Kd"]))
    replay(rec(V, hands, ["1 play 7d", "0 play 7c", "1 play Qc"]))


def test_trick1_tied_trick2_decides():
    hands = [["7c", "Kd", "9h"], ["7d", "Qc", "Jh"]]
    plays = ["1 play 7d", "0 play 7c", "1 play Qc", "0 play Kd"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])
    assert_last_illegal(rec(V, hands, plays + ["0 play 9h"]))


def test_trick2_tied_after_won_trick1_first_winner_wins():
    hands = [["Ac", "Kd", "9h"], ["Qc", "Ks", "Jh"]]
    plays = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Ks"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])
    assert_last_illegal(rec(V, hands, plays + ["0 play 9h"]))


def test_one_trick_each_and_tie_earlier_won_trick_wins():
    # trick 1: 8 > K (seat 1); trick 2: A > 9 (seat 0); trick 3: 7 = 7 tied -> seat 1
    hands = [["Kc", "Ad", "7d"], ["8c", "9d", "7h"]]
    plays = ["1 play 8c", "0 play Kc", "1 play 9d", "0 play Ad", "0 play 7d", "1 play 7h"]
    assert result(rec(V, hands, plays)) == outcome([0, 1], [0, 1])


def test_one_trick_each_trick3_decides():
    hands = [["Kc", "Ad", "8d"], ["8c", "9d", "Qh"]]
    plays = ["1 play 8c", "0 play Kc", "1 play 9d", "0 play Ad", "0 play 8d", "1 play Qh"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])


def test_first_two_tied_trick3_decides():
    hands = [["7c", "8c", "Ac"], ["7d", "8d", "Kc"]]
    plays = ["1 play 7d", "0 play 7c", "1 play 8d", "0 play 8c", "1 play Kc", "0 play Ac"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])


def test_all_three_tied_nobody_scores():
    assert result(rec(V, ALL_TIED, ALL_TIED_PLAYS, score=[3, 4])) == outcome([0, 0], [3, 4])


def test_all_tied_leader_option_side_that_led_trick1_wins():
    r = result(rec(V, ALL_TIED, ALL_TIED_PLAYS, options={"all_tied": "leader"}))
    assert r == outcome([0, 1], [0, 1])


def test_all_tied_leader_option_with_other_dealer():
    plays = ["0 play 7c", "1 play 7d", "0 play 8c", "1 play 8d", "0 play Ac", "1 play Ad"]
    r = result(rec(V, ALL_TIED, plays, dealer=1, options={"all_tied": "leader"}))
    assert r == outcome([1, 0], [1, 0])


# --- ranking --------------------------------------------------------------------------------

RANKING = "7 8 A K Q J T 9".split()
SEVEN_ACE = "7 A K Q J T 9 8".split()


def duel(hi, lo, hi_seat, ranking, options=None):
    """hi beats lo in trick 1; trick 2 is tied; so the holder of hi wins the hand."""
    spare = [r for r in ranking if r not in (hi, lo)]
    f, x = spare[-1], spare[-2]
    hi_hand = [hi + "c", f + "h", x + "h"]
    lo_hand = [lo + "d", f + "s", x + "s"]
    hands = [hi_hand, lo_hand] if hi_seat == 0 else [lo_hand, hi_hand]
    lo_seat = 1 - hi_seat
    plays = [f"1 play {hands[1][0]}", f"0 play {hands[0][0]}",
             f"{hi_seat} play {hands[hi_seat][1]}", f"{lo_seat} play {hands[lo_seat][1]}"]
    points = [0, 0]
    points[hi_seat] = 1
    return result(rec(V, hands, plays, options=options)), outcome(points, points)


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("hi,lo", list(zip(RANKING, RANKING[1:])))
def test_ranking_seven_eight_ace_king_queen_jack_ten_nine(hi, lo, hi_seat):
    got, want = duel(hi, lo, hi_seat, RANKING)
    assert got == want


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("hi,lo", list(zip(SEVEN_ACE, SEVEN_ACE[1:])))
def test_ranking_option_seven_ace(hi, lo, hi_seat):
    got, want = duel(hi, lo, hi_seat, SEVEN_ACE, options={"ranking": "seven_ace"})
    assert got == want


def test_equal_ranks_of_different_suits_tie():
    # K = K tied; then trick 2 decides
    hands = [["Kc", "Ac", "9c"], ["Kd", "Qd", "9d"]]
    plays = ["1 play Kd", "0 play Kc", "1 play Qd", "0 play Ac"]
    assert result(rec(V, hands, plays)) == outcome([1, 0], [1, 0])


# --- stake ladder ---------------------------------------------------------------------------

LADDER = [1, 2, 4, 6, 8, 10, 12]
DOUBLING = [1, 2, 4, 8, 16]
# seat 1 holds 7c 8c 9c, seat 0 holds 7d 8d Ad: tricks 1 and 2 tied, seat 0 wins trick 3.
# Turns alternate 1, 0, 1, 0, 1, 0, so each side can raise at each of its turns.
LADDER_HANDS = [["7d", "8d", "Ad"], ["7c", "8c", "9c"]]
LADDER_TURNS = [(1, "7c"), (0, "7d"), (1, "8c"), (0, "8d"), (1, "9c"), (0, "Ad")]


def raises(accepted, last="refuse"):
    """`accepted` raises accepted at the first turns, then a raise answered with `last`."""
    acts = []
    for i, (seat, card) in enumerate(LADDER_TURNS):
        if i < accepted:
            acts += [f"{seat} raise", f"{1 - seat} accept", f"{seat} play {card}"]
        elif i == accepted and last is not None:
            acts += [f"{seat} raise", f"{1 - seat} {last}"]
            break
        else:
            acts += [f"{seat} play {card}"]
    return acts


@pytest.mark.parametrize("k", range(6))
def test_ladder_refused_raise_scores_value_before_it(k):
    raiser = LADDER_TURNS[k][0]
    points = [0, 0]
    points[raiser] = LADDER[k]
    assert result(rec(V, LADDER_HANDS, raises(k))) == outcome(points, points)


def test_ladder_accepted_up_to_twelve():
    acts = raises(6, last=None)
    assert result(rec(V, LADDER_HANDS, acts)) == outcome([12, 0], [12, 0], game_over=True)


@pytest.mark.parametrize("k", range(4))
def test_ladder_doubling_refused_values(k):
    raiser = LADDER_TURNS[k][0]
    points = [0, 0]
    points[raiser] = DOUBLING[k]
    r = result(rec(V, LADDER_HANDS, raises(k), options={"ladder": "doubling"}))
    assert r == outcome(points, points)


def test_ladder_doubling_top_is_sixteen():
    acts = raises(4, last=None)[:-2]  # four accepted raises (2 4 8 16), trick 3 about to start
    assert acts[-1] == "0 play 8d"
    opts = {"ladder": "doubling"}
    assert_last_illegal(rec(V, LADDER_HANDS, acts + ["1 raise"], options=opts))
    # with the default ladder the same raise (to 10) is legal
    replay(rec(V, LADDER_HANDS, acts + ["1 raise"]))
    full = raises(4, last=None)
    assert result(rec(V, LADDER_HANDS, full, options=opts)) == outcome([16, 0], [16, 0], game_over=True)


def test_same_side_may_not_raise_twice_in_a_row():
    assert_last_illegal(rec(V, WIN0, ["1 raise", "0 accept", "1 raise"]))


def test_raise_alternation_holds_across_tricks():
    # seat 1 raised and won trick 1; leading trick 2 he still may not raise again
    hands = [["Kc", "Ad", "9h"], ["8c", "Jd", "Th"]]
    assert_last_illegal(rec(V, hands, ["1 raise", "0 accept", "1 play 8c", "0 play Kc", "1 raise"]))


def test_other_side_may_raise_after_accepted_raise():
    acts = ["1 raise", "0 accept", "1 play Qc", "0 raise", "1 accept", "0 play Ac", "0 play Kd", "1 play Jd"]
    assert result(rec(V, WIN0, acts)) == outcome([4, 0], [4, 0])


def test_raise_only_before_own_card():
    # seat 1 has played: it is seat 0's turn, seat 1 may not raise
    assert_last_illegal(rec(V, WIN0, ["1 play Qc", "1 raise"]))


def test_no_counter_raise_in_le_truc():
    assert_last_illegal(rec(V, WIN0, ["1 raise", "0 raise"]))


def test_refusing_a_raise_ends_the_hand():
    assert result(rec(V, WIN0, ["1 raise", "0 refuse"])) == outcome([0, 1], [0, 1])
    assert_last_illegal(rec(V, WIN0, ["1 raise", "0 refuse", "1 play Qc"]))


def test_max_raises_limits_accepted_raises():
    acts = ["1 raise", "0 accept", "1 play Qc", "0 raise"]
    replay(rec(V, WIN0, acts))
    assert_last_illegal(rec(V, WIN0, acts, options={"max_raises": 1}))
    assert_last_illegal(rec(V, WIN0, acts[:-1] + ["0 rest"], options={"max_raises": 1}))


def test_max_raises_zero_forbids_raise_and_mon_reste():
    assert_last_illegal(rec(V, WIN0, ["1 raise"], options={"max_raises": 0}))
    assert_last_illegal(rec(V, WIN0, ["1 rest"], options={"max_raises": 0}))


# --- mon reste ------------------------------------------------------------------------------

def test_mon_reste_refused_at_base_value():
    assert result(rec(V, WIN0, ["1 rest", "0 refuse"])) == outcome([0, 1], [0, 1])


def test_mon_reste_refused_caller_scores_accepted_value():
    acts = ["1 raise", "0 accept", "1 play Qc", "0 rest", "1 refuse"]
    assert result(rec(V, WIN0, acts)) == outcome([2, 0], [2, 0])


def test_mon_reste_accepted_winner_wins_game():
    # seat 0 (at 3) wins: he needs 9 to reach 12
    acts = ["1 rest", "0 accept"] + WIN0_PLAYS
    r = result(rec(V, WIN0, acts, score=[3, 5]))
    assert r == outcome([9, 0], [12, 5], game_over=True)


def test_mon_reste_accepted_caller_wins_game():
    # seat 1 (at 5) calls and wins: he needs 7
    hands = [["Qc", "Jd", "Th"], ["Ac", "Kd", "9h"]]
    acts = ["1 rest", "0 accept", "1 play 9h", "0 play Qc", "0 play Jd", "1 play Kd", "1 play Ac", "0 play Th"]
    r = result(rec(V, hands, acts, score=[3, 5]))
    assert r == outcome([0, 7], [3, 12], game_over=True)


def test_mon_reste_worth_hand_value_when_larger_than_needed():
    # value 4 accepted; seat 0 at 10 needs only 2, so the hand is worth 4
    acts = ["1 raise", "0 accept", "1 play Qc", "0 raise", "1 accept", "0 play Ac",
            "0 play Kd", "1 rest", "0 accept", "1 play Jd"]
    r = result(rec(V, WIN0, acts, score=[10, 0]))
    assert r == outcome([4, 0], [14, 0], game_over=True)


def test_mon_reste_accepted_hand_drawn_game_goes_on():
    acts = ["1 rest", "0 accept"] + ALL_TIED_PLAYS
    assert result(rec(V, ALL_TIED, acts, score=[3, 5])) == outcome([0, 0], [3, 5])


def test_no_raise_after_mon_reste():
    assert_last_illegal(rec(V, WIN0, ["1 rest", "0 accept", "1 play Qc", "0 raise"]))


def test_mon_reste_once_per_hand():
    assert_last_illegal(rec(V, WIN0, ["1 rest", "0 accept", "1 play Qc", "0 rest"]))


def test_mon_reste_under_raise_alternation():
    assert_last_illegal(rec(V, WIN0, ["1 raise", "0 accept", "1 rest"]))


def test_mon_reste_answer_is_accept_or_refuse_only():
    assert_last_illegal(rec(V, WIN0, ["1 rest", "0 raise"]))


# --- fold -----------------------------------------------------------------------------------

def test_fold_at_start_opponent_scores_one():
    assert result(rec(V, WIN0, ["1 fold"])) == outcome([1, 0], [1, 0])


def test_fold_opponent_scores_accepted_value():
    acts = ["1 raise", "0 accept", "1 play Qc", "0 fold"]
    assert result(rec(V, WIN0, acts)) == outcome([0, 2], [0, 2])


def test_fold_not_offered_when_answering_a_raise():
    assert_last_illegal(rec(V, WIN0, ["1 raise", "0 fold"]))


def test_fold_after_accepted_mon_reste_concedes_game():
    acts = ["1 rest", "0 accept", "1 play Qc", "0 fold"]
    r = result(rec(V, WIN0, acts, score=[3, 5]))
    assert r == outcome([0, 7], [3, 12], game_over=True)


def test_fold_option_off():
    assert_last_illegal(rec(V, WIN0, ["1 fold"], options={"fold": False}))


# --- redeal ---------------------------------------------------------------------------------

FIRST = [["9d", "Td", "Jd"], ["9c", "Tc", "Jc"]]
SECOND = [["9h", "Th", "Jh"], ["7c", "8c", "Ac"]]


def redeal_rec(actions, dealer=0, options=None):
    return deck_rec(V, FRENCH32, [FIRST, SECOND], actions, dealer=dealer, options=options)


def test_redeal_accepted_new_hands_from_deck():
    acts = ["1 redeal", "0 accept", "1 play 7c", "0 play 9h", "1 play 8c", "0 play Th"]
    assert result(redeal_rec(acts)) == outcome([0, 1], [0, 1])


def test_redeal_accepted_old_hands_gone():
    assert_last_illegal(redeal_rec(["1 redeal", "0 accept", "1 play 9c"]))


def test_redeal_refused_hands_stay():
    acts = ["1 redeal", "0 refuse", "1 play 9c", "0 play Td", "0 play Jd", "1 play Tc"]
    assert result(redeal_rec(acts)) == outcome([1, 0], [1, 0])


def test_deal_from_deck_without_redeal():
    acts = ["1 play 9c", "0 play Td", "0 play Jd", "1 play Tc"]
    assert result(redeal_rec(acts)) == outcome([1, 0], [1, 0])


def test_redeal_with_dealer_one_non_dealer_proposes():
    acts = ["0 redeal", "1 accept", "0 play 9h", "1 play 7c", "1 play 8c", "0 play Th"]
    assert result(redeal_rec(acts, dealer=1)) == outcome([0, 1], [0, 1])


def test_redeal_only_once_after_accept():
    assert_last_illegal(redeal_rec(["1 redeal", "0 accept", "1 redeal"]))


def test_redeal_only_once_after_refuse():
    assert_last_illegal(redeal_rec(["1 redeal", "0 refuse", "1 redeal"]))


def test_redeal_answered_by_dealer():
    assert_last_illegal(redeal_rec(["1 redeal", "1 accept"]))


def test_redeal_only_before_any_card():
    assert_last_illegal(redeal_rec(["1 play 9c", "0 redeal"]))


def test_redeal_option_false():
    assert_last_illegal(redeal_rec(["1 redeal"], options={"redeal": False}))


# --- game, target, several hands ------------------------------------------------------------

def test_game_over_at_target():
    assert result(rec(V, WIN0, WIN0_PLAYS, score=[11, 0])) == outcome([1, 0], [12, 0], game_over=True)


def test_target_option():
    r = result(rec(V, WIN0, WIN0_PLAYS, score=[4, 0], options={"target": 5}))
    assert r == outcome([1, 0], [5, 0], game_over=True)


def test_scores_not_capped():
    acts = ["1 raise", "0 accept", "1 play Qc", "0 raise", "1 accept", "0 play Ac", "0 play Kd", "1 play Jd"]
    assert result(rec(V, WIN0, acts, score=[11, 0])) == outcome([4, 0], [15, 0], game_over=True)


HAND2 = {"deal": {"hands": [["7c", "8c", "9c"], ["Tc", "Jc", "Qc"]]},
         "actions": ["0 raise", "1 accept", "0 play 8c", "1 play Tc", "0 play 9c", "1 play Jc",
                     "1 play Qc", "0 play 7c"]}


def test_several_hands_dealer_rotates_and_score_carries():
    record = {"variant": V, "hands": [{"deal": {"hands": WIN0}, "actions": WIN0_PLAYS}, HAND2]}
    assert result(record) == outcome([2, 0], [3, 0])


def test_several_hands_second_hand_led_by_seat0():
    bad = {"deal": HAND2["deal"], "actions": ["1 play Tc"]}
    record = {"variant": V, "hands": [{"deal": {"hands": WIN0}, "actions": WIN0_PLAYS}, bad]}
    with pytest.raises(IllegalActionError):
        replay(record)


def test_no_hand_after_game_over():
    record = {"variant": V, "score": [11, 0],
              "hands": [{"deal": {"hands": WIN0}, "actions": WIN0_PLAYS}, HAND2]}
    with pytest.raises(TrucError):
        replay(record)


# --- research options -----------------------------------------------------------------------

def test_ranks_option_keeps_highest_ranks():
    hands = [["7c", "8c", "Ac"], ["Kc", "Kd", "Kh"]]
    plays = ["1 play Kc", "0 play 7c", "0 play 8c", "1 play Kd"]
    assert result(rec(V, hands, plays, options={"ranks": 4})) == outcome([1, 0], [1, 0])


def test_ranks_option_drops_lower_ranks():
    hands = [["7c", "8c", "Ac"], ["Kc", "Kd", "9h"]]
    with pytest.raises(TrucError):
        replay(rec(V, hands, [], options={"ranks": 4}))


def test_deck_too_small_for_the_deal():
    with pytest.raises(RulesError):
        replay({"variant": V, "options": {"ranks": 1}, "seed": 1, "actions": []})


def test_hand_size_one_single_trick_decides():
    r = result(rec(V, [["Ac"], ["Kc"]], ["1 play Kc", "0 play Ac"], options={"hand_size": 1}))
    assert r == outcome([1, 0], [1, 0])


def test_hand_size_one_tied_trick_is_all_tied():
    r = result(rec(V, [["Ac"], ["Ad"]], ["1 play Ad", "0 play Ac"], options={"hand_size": 1}))
    assert r == outcome([0, 0], [0, 0])


def test_hand_size_two_first_trick_winner_wins_at_once():
    # after trick 1 nothing can change the winner (1-1 goes to the earlier won trick)
    hands = [["Kc", "Ac"], ["8c", "9c"]]
    opts = {"hand_size": 2}
    assert result(rec(V, hands, ["1 play 8c", "0 play Kc"], options=opts)) == outcome([0, 1], [0, 1])
    assert_last_illegal(rec(V, hands, ["1 play 8c", "0 play Kc", "1 play 9c"], options=opts))


def test_hand_size_two_tied_first_trick_second_decides():
    hands = [["Kc", "Ac"], ["Kd", "9c"]]
    plays = ["1 play Kd", "0 play Kc", "1 play 9c", "0 play Ac"]
    assert result(rec(V, hands, plays, options={"hand_size": 2})) == outcome([1, 0], [1, 0])


def test_hand_size_out_of_range():
    with pytest.raises(RulesError):
        replay({"variant": V, "options": {"hand_size": 4}, "seed": 1, "actions": []})


def test_fold_by_pending_seat_after_accepted_raise():
    # seat 1 raised, seat 0 accepted: seat 1 could now play a card, so he may fold
    assert result(rec(V, WIN0, ["1 raise", "0 accept", "1 fold"])) == outcome([2, 0], [2, 0])


def test_hand_ends_at_the_end_of_the_deciding_trick():
    # seat 0 won trick 1 and leads a 7 to trick 2: seat 1 cannot win the hand any more,
    # but the trick is still completed (the hand is judged trick by trick)
    hands = [["Ac", "7d", "9h"], ["Qc", "Jd", "Th"]]
    plays = ["1 play Qc", "0 play Ac", "0 play 7d"]
    assert result(rec(V, hands, plays)) == outcome([0, 0], [0, 0], hand_over=False)
    assert result(rec(V, hands, plays + ["1 play Jd"])) == outcome([1, 0], [1, 0])


def test_several_hands_deck_deal_follows_the_rotating_dealer():
    # hand 2 has dealer 1, so its deck's first card goes to seat 0
    h1 = {"deal": {"hands": WIN0}, "actions": WIN0_PLAYS}
    h2_deck = [c for pair in zip(["Ac", "Kd", "9h"], ["Qc", "Jd", "Th"]) for c in pair]
    h2_deck += [c for c in FRENCH32 if c not in h2_deck]
    h2 = {"deal": {"deck": h2_deck}, "actions": ["0 play Ac", "1 play Qc", "0 play Kd", "1 play Jd"]}
    assert result({"variant": V, "hands": [h1, h2]}) == outcome([1, 0], [2, 0])


def test_redeal_with_hands_only_draws_from_the_seeded_rest():
    record = rec(V, FIRST, ["1 redeal", "0 accept"])
    record["seed"] = 3
    assert result(record) == outcome([0, 0], [0, 0], hand_over=False)
    record["actions"].append("1 play 9c")  # the new hands come from the rest of the deck: 9c is gone
    with pytest.raises(IllegalActionError):
        replay(record)
