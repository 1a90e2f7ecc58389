"""Le Truc, 2 vs 2 (docs/rules.md §2). Dealer 0: governors 0 (dealer) and 1 (seat d+1); seat 2 is
seat 0's partner, seat 3 seat 1's; play order in trick 1 is 1 2 3 0; side 0 = seats 0 and 2.

Most tests switch the signal channel and the instructions off (QUIET); the default channel is
tested at the end of this file and in test_signals.py.
"""

import pytest

from truc_env.errors import IllegalActionError
from truc_env.game.records import replay

from .conftest import FRENCH32, QUIET, assert_last_illegal, deck_rec, outcome, rec, result

V = "le_truc_4p"

# side 0 wins trick 1 (7c of seat 2) and trick 2 (Ad of seat 2, beating Ks of seat 3 last)
HANDS = [["Jc", "Qc", "Kc"], ["9c", "9d", "Ac"], ["7c", "Ad", "Th"], ["9h", "Ks", "Ts"]]
T1 = ["1 play 9c", "2 play 7c", "3 play 9h", "0 play Jc"]
T2 = ["2 play Th", "3 play Ks", "0 play Qc", "1 play 9d"]  # Ks (side 1) wins: 1-1
T3 = ["3 play Ts", "0 play Kc", "1 play Ac", "2 play Ad"]  # Ac = Ad: tied, side 0 won trick 1
# a short win for side 0: tricks 1 and 2
WIN0_T2 = ["2 play Ad", "3 play Ts", "0 play Qc", "1 play 9d"]


def q(hands, actions, **kw):
    kw.setdefault("options", QUIET)
    return rec(V, hands, actions, **kw)


def test_partnership_side_scores_for_its_seats():
    assert result(q(HANDS, T1 + WIN0_T2)) == outcome([1, 0], [1, 0])


def test_one_trick_each_and_tie_earlier_won_trick_wins():
    assert result(q(HANDS, T1 + T2 + T3)) == outcome([1, 0], [1, 0])


def test_trick_winner_leads_next():
    assert_last_illegal(q(HANDS, T1 + ["0 play Qc"]))


def test_equal_highest_cards_same_side_that_side_wins_first_player_leads():
    # 7c (seat 1) and 7d (seat 3) are the highest, both side 1: seat 1 won the trick
    hands = [["8c", "Qd", "Ts"], ["7c", "Ac", "Jh"], ["9c", "9d", "Th"], ["7d", "Kd", "9h"]]
    t1 = ["1 play 7c", "2 play 9c", "3 play 7d", "0 play 8c"]
    assert_last_illegal(q(hands, t1 + ["3 play Kd"]))
    t2 = ["1 play Jh", "2 play 9d", "3 play 9h", "0 play Qd"]  # Qd (side 0) wins: 1-1
    # Ac wins trick 3 for side 1; seat 3 (Ac's partner) is the last to play and cannot change that,
    # so the hand ends before his card
    t3 = ["0 play Ts", "1 play Ac", "2 play Th"]
    assert result(q(hands, t1 + t2 + t3)) == outcome([0, 1], [0, 1])
    assert_last_illegal(q(hands, t1 + t2 + t3 + ["3 play Kd"]))


def test_equal_highest_cards_of_opposing_sides_tie_leader_leads_again():
    hands = [["9c", "Jd", "Ts"], ["7c", "Ac", "9h"], ["7d", "Kd", "Th"], ["8c", "Qd", "9s"]]
    t1 = ["1 play 7c", "2 play 7d", "3 play 8c", "0 play 9c"]
    assert_last_illegal(q(hands, t1 + ["2 play Kd"]))
    # Kd wins trick 2 for side 0, which decides the hand: seat 0, Kd's partner, does not play
    t2 = ["1 play 9h", "2 play Kd", "3 play Qd"]
    assert result(q(hands, t1 + t2)) == outcome([1, 0], [1, 0])
    assert_last_illegal(q(hands, t1 + t2 + ["0 play Jd"]))


ALL_TIED = [["9d", "Td", "Jd"], ["7c", "8c", "Ac"], ["7d", "8d", "Ad"], ["9c", "Tc", "Jc"]]
ALL_TIED_PLAYS = [
    "1 play 7c", "2 play 7d", "3 play 9c", "0 play 9d",
    "1 play 8c", "2 play 8d", "3 play Tc", "0 play Td",
    "1 play Ac", "2 play Ad", "3 play Jc", "0 play Jd",
]


def test_all_three_tied_side_that_led_trick1_wins():
    assert result(q(ALL_TIED, ALL_TIED_PLAYS)) == outcome([0, 1], [0, 1])


def test_all_tied_option_none():
    opts = dict(QUIET, all_tied="none")
    assert result(q(ALL_TIED, ALL_TIED_PLAYS, options=opts)) == outcome([0, 0], [0, 0])


def test_ladder_is_le_truc_ladder():
    # side 1 raises to 2 (accepted by governor 0), side 0 raises to 4, refused by governor 1
    acts = ["1 raise", "0 accept", "1 play 9c", "2 raise", "1 refuse"]
    assert result(q(HANDS, acts)) == outcome([2, 0], [2, 0])


def test_raise_answered_by_opposing_governor():
    acts = ["1 play 9c", "2 raise", "1 accept", "2 play 7c", "3 play 9h", "0 play Jc"] + WIN0_T2
    assert result(q(HANDS, acts)) == outcome([2, 0], [2, 0])


def test_non_governor_answer_illegal():
    assert_last_illegal(q(HANDS, ["1 play 9c", "2 raise", "3 accept"]))


def test_partner_governor_may_not_answer_for_opponents():
    assert_last_illegal(q(HANDS, ["1 play 9c", "2 raise", "0 accept"]))


def test_raise_by_seat3_answered_by_dealer_governor():
    assert result(q(HANDS, ["1 play 9c", "2 play 7c", "3 raise", "0 refuse"])) == outcome([0, 1], [0, 1])
    assert_last_illegal(q(HANDS, ["1 play 9c", "2 play 7c", "3 raise", "2 refuse"]))


def test_no_counter_raise():
    assert_last_illegal(q(HANDS, ["1 raise", "0 raise"]))


def test_partners_raise_alternation_by_side():
    # seat 1's raise was accepted; his partner seat 3 may not raise next
    assert_last_illegal(q(HANDS, ["1 raise", "0 accept", "1 play 9c", "2 play 7c", "3 raise"]))


def test_mon_reste_answered_by_opposing_governor_winner_wins_game():
    acts = ["1 rest", "0 accept"] + T1 + WIN0_T2
    assert result(q(HANDS, acts, score=[3, 5])) == outcome([9, 0], [12, 5], game_over=True)
    assert_last_illegal(q(HANDS, ["1 rest", "2 accept"]))


def test_fold_off_by_default():
    assert_last_illegal(q(HANDS, ["1 fold"]))


def test_fold_option_on():
    opts = dict(QUIET, fold=True)
    assert result(q(HANDS, ["1 fold"], options=opts)) == outcome([1, 0], [1, 0])


# --- redeal: proposed by the non-dealing governor, answered by the dealer ----------------------

FIRST = [["9c", "Tc", "Jc"], ["9d", "Td", "Jd"], ["9h", "Th", "Jh"], ["9s", "Ts", "Js"]]
SECOND = [["7c", "Ac", "Qc"], ["Kc", "8c", "Qd"], ["Kd", "Kh", "Qh"], ["Ks", "Qs", "Ad"]]
SECOND_PLAYS = [
    "1 play Kc", "2 play Kd", "3 play Ks", "0 play 7c",  # 7c: side 0
    "0 play Ac", "1 play 8c", "2 play Kh", "3 play Qs",  # 8c: side 1
    "1 play Qd", "2 play Qh", "3 play Ad", "0 play Qc",  # Ad: side 1
]


def redeal_rec(actions, options=QUIET):
    return deck_rec(V, FRENCH32, [FIRST, SECOND], actions, options=options)


def test_redeal_accepted_deals_new_hands():
    acts = ["1 redeal", "0 accept"] + SECOND_PLAYS
    assert result(redeal_rec(acts)) == outcome([0, 1], [0, 1])
    assert_last_illegal(redeal_rec(["1 redeal", "0 accept", "1 play 9d"]))


def test_redeal_answered_by_dealer_only():
    assert_last_illegal(redeal_rec(["1 redeal", "2 accept"]))
    assert_last_illegal(redeal_rec(["1 redeal", "3 accept"]))


def test_redeal_refused_keeps_hands():
    replay_ok = redeal_rec(["1 redeal", "0 refuse", "1 play 9d"])
    assert result(replay_ok)["hand_over"] is False


def test_redeal_only_once():
    assert_last_illegal(redeal_rec(["1 redeal", "0 accept", "1 redeal"]))


def test_all_seats_deal_order_from_deck():
    # dealer 0: the deck's first card goes to seat 1; FIRST hands then play out
    acts = ["1 play 9d", "2 play 9h", "3 play 9s", "0 play 9c"]  # all 9s: tied
    r = result(redeal_rec(acts))
    assert r == outcome([0, 0], [0, 0], hand_over=False)
    with pytest.raises(IllegalActionError):
        replay(redeal_rec(["1 play 9c"]))


def test_instructions_without_signals():
    acts = ["1 play 9c", "0 instruct low", "2 play Th"]
    replay(rec(V, HANDS, acts, options={"signals": {"mode": "none"}}))
    assert_last_illegal(rec(V, HANDS, ["1 play 9c", "0 instruct low", "2 play 7c"],
                            options={"signals": {"mode": "none"}}))


def test_redeal_runs_the_signal_round_again():
    # defaults: signals on. After an accepted redeal the partners signal again, on the new hands
    acts = ["2 signal 9", "3 signal J", "1 redeal", "0 accept", "2 signal K", "3 signal Q", "1 play Kc"]
    record = deck_rec(V, FRENCH32, [FIRST, SECOND], acts, options={"instructions": False})
    assert result(record) == outcome([0, 0], [0, 0], hand_over=False)
    bad = deck_rec(V, FRENCH32, [FIRST, SECOND], acts[:4] + ["2 signal 9"], options={"instructions": False})
    assert_last_illegal(bad)


def test_three_equal_highest_cards_across_sides_tie():
    hands = [["9c", "Jd", "Ts"], ["7c", "Ac", "9h"], ["7d", "Kd", "Th"], ["7h", "Qd", "9s"]]
    t1 = ["1 play 7c", "2 play 7d", "3 play 7h", "0 play 9c"]
    assert_last_illegal(q(hands, t1 + ["3 play Qd"]))
    replay(q(hands, t1 + ["1 play Ac"]))
