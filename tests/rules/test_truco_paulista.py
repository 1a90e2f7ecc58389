"""Truco Paulista (docs/rules.md §4). 4 players unless said; dealer 0, so seat 1 is the mão and play
order in trick 1 is 1 2 3 0; side 0 = seats 0 and 2. Vira 6d makes the 7s manilhas unless said.
"""

import pytest

from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.records import replay

from .conftest import PAULISTA40, assert_last_illegal, deck_rec, outcome, rec, result

V = "truco_paulista"
VIRA = "6d"
HU = {"players": 2}

# trick 1 tied (3c = 3d), trick 2 won by side 0 (Ah, played last, beats Kc)
A = [["4d", "Ah", "5s"], ["3c", "Kc", "5c"], ["3d", "Jd", "5d"], ["4c", "Qc", "5h"]]
A_PLAYS = ["1 play 3c", "2 play 3d", "3 play 4c", "0 play 4d",
           "1 play Kc", "2 play Jd", "3 play Qc", "0 play Ah"]
# all three tricks tied; trick 3's tie (Kc = Kd) is made by the dealer's last card
E = [["4d", "4s", "Kd"], ["3c", "2c", "Kc"], ["3d", "2d", "5d"], ["4c", "4h", "5c"]]
E_PLAYS = ["1 play 3c", "2 play 3d", "3 play 4c", "0 play 4d",
           "1 play 2c", "2 play 2d", "3 play 4h", "0 play 4s",
           "1 play Kc", "2 play 5d", "3 play 5c", "0 play Kd"]


def p(hands, actions, vira=VIRA, **kw):
    return rec(V, hands, actions, vira=vira, **kw)


def test_record_example_of_rules_section_9():
    record = {"variant": "truco_paulista", "options": {"players": 4},
              "dealer": 3, "score": [0, 0],
              "deal": {"hands": [["3c", "2h", "Kd"], ["4c", "7h", "Qs"], ["Ad", "Jc", "5s"], ["6h", "6d", "7c"]],
                       "vira": "3s"},
              "actions": ["0 raise", "1 accept", "0 play 3c", "1 play 4c", "2 play Ad", "3 play 6h"]}
    # the record stops after trick 1 (won by the zap 4c of seat 1): nothing scored yet
    assert result(record) == outcome([0, 0], [0, 0], hand_over=False)
    # seat 1 won trick 1 with the zap and leads trick 2
    nxt = dict(record, actions=record["actions"] + ["2 play Jc"])
    with pytest.raises(TrucError):
        replay(nxt)


# --- ties -----------------------------------------------------------------------------------

def test_trick1_tied_trick2_decides():
    assert result(p(A, A_PLAYS)) == outcome([1, 0], [1, 0])
    assert_last_illegal(p(A, A_PLAYS + ["0 play 5s"]))


def test_trick1_and_trick2_tied_trick3_decides():
    hands = [["4d", "4s", "Ah"], ["3c", "2c", "Kc"], ["3d", "2d", "Jd"], ["4c", "4h", "Qc"]]
    plays = ["1 play 3c", "2 play 3d", "3 play 4c", "0 play 4d",
             "1 play 2c", "2 play 2d", "3 play 4h", "0 play 4s",
             "1 play Kc", "2 play Jd", "3 play Qc", "0 play Ah"]
    assert result(p(hands, plays)) == outcome([1, 0], [1, 0])


def test_trick2_tied_winner_of_trick1_wins():
    hands = [["4d", "4s", "6s"], ["Kc", "Jh", "5d"], ["Ad", "Jd", "6c"], ["Qc", "5c", "6h"]]
    plays = ["1 play Kc", "2 play Ad", "3 play Qc", "0 play 4d",
             "2 play Jd", "3 play 5c", "0 play 4s", "1 play Jh"]
    assert result(p(hands, plays)) == outcome([1, 0], [1, 0])
    assert_last_illegal(p(hands, plays + ["2 play 6c"]))


def test_trick3_tied_winner_of_trick1_wins():
    hands = [["Qd", "4s", "6s"], ["Ac", "4h", "Jc"], ["Kd", "2d", "Jd"], ["4c", "5c", "5h"]]
    plays = ["1 play Ac", "2 play Kd", "3 play 4c", "0 play Qd",   # side 1
             "1 play 4h", "2 play 2d", "3 play 5c", "0 play 4s",   # side 0
             "2 play Jd", "3 play 5h", "0 play 6s", "1 play Jc"]   # tied
    assert result(p(hands, plays)) == outcome([0, 1], [0, 1])


def test_all_three_tied_dealing_side_wins():
    assert result(p(E, E_PLAYS)) == outcome([1, 0], [1, 0])


def test_all_tied_option_none():
    assert result(p(E, E_PLAYS, options={"all_tied": "none"})) == outcome([0, 0], [0, 0])


def test_equal_highest_same_side_first_player_wins_trick():
    hands = [["Kd", "Qd", "Jh"], ["3c", "Ac", "5c"], ["2d", "Jd", "5d"], ["3h", "Qc", "5h"]]
    t1 = ["1 play 3c", "2 play 2d", "3 play 3h", "0 play Kd"]
    assert_last_illegal(p(hands, t1 + ["3 play Qc"]))
    replay(p(hands, t1 + ["1 play Ac"]))


# --- vira and manilhas (heads-up duels) --------------------------------------------------------

DIRTY_CYCLE = "4567QJKA23"
CLEAN_CYCLE = "QJKA23"


def duel(hi, lo, vira, hi_seat, options):
    """hi beats lo in trick 1 and trick 2 is tied: hi's holder wins 1 point."""
    clean = options.get("deck") == "clean"
    cycle = CLEAN_CYCLE if clean else DIRTY_CYCLE
    ranks = options.get("ranks")
    if ranks:
        cycle = [r for r in cycle if r in "32AK"[:ranks]]
    manilha = cycle[(cycle.index(vira[0]) + 1) % len(cycle)]
    spare = [r for r in cycle if r not in (manilha, hi[0], lo[0], vira[0])]
    f, x = spare[0], spare[1]
    hi_hand = [hi, f + "h", x + "h"]
    lo_hand = [lo, f + "s", x + "s"]
    hands = [hi_hand, lo_hand] if hi_seat == 0 else [lo_hand, hi_hand]
    lo_seat = 1 - hi_seat
    plays = [f"1 play {hands[1][0]}", f"0 play {hands[0][0]}",
             f"{hi_seat} play {hands[hi_seat][1]}", f"{lo_seat} play {hands[lo_seat][1]}"]
    points = [0, 0]
    points[hi_seat] = 1
    return result(p(hands, plays, vira=vira, options=options)), outcome(points, points)


MANILHA_NEXT_RANK = [
    ("3s", "4d", "3c"),  # vira 3: the cycle wraps to 4
    ("4s", "5d", "3c"),
    ("5s", "6d", "3c"),
    ("6s", "7d", "3c"),
    ("7s", "Qd", "3c"),  # 7 -> Q
    ("Qs", "Jd", "3c"),  # Q -> J
    ("Js", "Kd", "3c"),
    ("Ks", "Ad", "3c"),
    ("As", "2d", "3c"),
    ("2s", "3d", "2c"),  # 2 -> 3: the 3s are manilhas
]


@pytest.mark.parametrize("hi_seat", [0, 1])
@pytest.mark.parametrize("vira,hi,lo", MANILHA_NEXT_RANK)
def test_manilhas_are_the_rank_after_the_vira_and_beat_all(vira, hi, lo, hi_seat):
    got, want = duel(hi, lo, vira, hi_seat, dict(HU))
    assert got == want


@pytest.mark.parametrize("hi,lo", [("5c", "5h"), ("5h", "5s"), ("5s", "5d")])
def test_manilha_suit_order_clubs_hearts_spades_diamonds(hi, lo):
    got, want = duel(hi, lo, "4h" if "h" not in (hi[1], lo[1]) else "4c", 0, dict(HU))
    assert got == want


BASE = "3 2 A K J Q 7 6 4".split()  # vira 4h: the 5s are manilhas and leave the ranking


@pytest.mark.parametrize("hi,lo", list(zip(BASE, BASE[1:])))
def test_base_ranking_with_queen_below_jack(hi, lo):
    got, want = duel(hi + "c", lo + "d", "4h", 0, dict(HU))
    assert got == want


def test_manilha_rank_leaves_its_place_in_the_base_ranking():
    # vira 7h: the queens are manilhas, so a plain 7 still only beats 6 and lower
    got, want = duel("Qd", "3c", "7h", 1, dict(HU))
    assert got == want
    got, want = duel("7c", "6c", "Kh", 0, dict(HU))
    assert got == want


def test_equal_plain_cards_tie():
    hands = [["Kc", "Ac", "4h"], ["Kd", "Jd", "4s"]]
    plays = ["1 play Kd", "0 play Kc", "1 play Jd", "0 play Ac"]
    assert result(p(hands, plays, vira="5h", options=HU)) == outcome([1, 0], [1, 0])


@pytest.mark.parametrize("vira,hi,lo", [("3s", "Qd", "3c"), ("Ks", "Ad", "3c"), ("Qs", "Jd", "3c")])
def test_clean_deck_manilha_cycle(vira, hi, lo):
    got, want = duel(hi, lo, vira, 0, dict(HU, deck="clean"))
    assert got == want


def test_clean_deck_has_no_low_cards():
    hands = [["4c", "Ac", "Jh"], ["Kd", "Jd", "Js"]]
    with pytest.raises(TrucError):
        replay(p(hands, [], vira="Qh", options=dict(HU, deck="clean")))


def test_ranks_option_manilha_cycle_over_kept_ranks():
    # ranks 4 keeps 3 2 A K; the cycle K A 2 3 wraps: vira 3 -> manilha K
    got, want = duel("Kd", "3c", "3s", 0, dict(HU, ranks=4))
    assert got == want


def test_ranks_option_removes_other_cards():
    hands = [["Qc", "Ac", "2h"], ["Kd", "Ad", "2s"]]
    with pytest.raises(TrucError):
        replay(p(hands, [], vira="3s", options=dict(HU, ranks=4)))


@pytest.mark.parametrize("vira,plays,points", [
    ("3d", ["1 play 4c", "0 play 3c", "1 play 6h", "0 play 6s"], [0, 1]),  # 4c is the zap
    ("2d", ["1 play 4c", "0 play 3c", "0 play 6s", "1 play 6h"], [1, 0]),  # 3c is the zap
])
def test_vira_is_the_card_after_the_deal(vira, plays, points):
    hands = [["3c", "Jd", "6s"], ["4c", "Kd", "6h"]]
    record = deck_rec(V, PAULISTA40, [hands], plays, options=HU, turned=[vira])
    assert result(record) == outcome(points, points)


# --- ladder and answers -----------------------------------------------------------------------

@pytest.mark.parametrize("actions,points", [
    (["1 raise", "2 refuse", "0 refuse"], [0, 1]),
    (["1 raise", "2 raise", "3 refuse", "1 refuse"], [3, 0]),
    (["1 raise", "2 raise", "3 raise", "0 refuse", "2 refuse"], [0, 6]),
    (["1 raise", "2 raise", "3 raise", "0 raise", "1 refuse", "3 refuse"], [9, 0]),
])
def test_ladder_refusals_score_1_3_6_9(actions, points):
    assert result(p(A, actions)) == outcome(points, points)


def test_ladder_doze_is_twelve_and_the_top():
    acts = ["1 raise", "2 raise", "3 raise", "0 raise", "1 accept"]
    assert_last_illegal(p(A, acts + ["1 raise"]))
    assert result(p(A, acts + A_PLAYS)) == outcome([12, 0], [12, 0], game_over=True)


def test_truco_accepted_hand_worth_three():
    assert result(p(A, ["1 raise", "2 accept"] + A_PLAYS)) == outcome([3, 0], [3, 0])


def test_first_opponent_refuses_partner_accepts():
    assert result(p(A, ["1 raise", "2 refuse", "0 accept"] + A_PLAYS)) == outcome([3, 0], [3, 0])


def test_both_opponents_refuse():
    assert result(p(A, ["1 raise", "2 refuse", "0 refuse"])) == outcome([0, 1], [0, 1])


def test_answers_in_play_order_after_caller():
    assert_last_illegal(p(A, ["1 raise", "0 accept"]))


def test_one_acceptance_settles_the_call():
    assert_last_illegal(p(A, ["1 raise", "2 accept", "0 accept"]))


def test_counter_raise_refused_counter_caller_scores_accepted_value():
    assert result(p(A, ["1 raise", "2 raise", "3 refuse", "1 refuse"])) == outcome([3, 0], [3, 0])


def test_counter_raise_by_second_opponent_after_refusal():
    acts = ["1 raise", "2 refuse", "0 raise", "1 refuse", "3 refuse"]
    assert result(p(A, acts)) == outcome([3, 0], [3, 0])


def test_counter_raise_answered_by_counter_raisers_opponents_in_order():
    assert_last_illegal(p(A, ["1 raise", "2 raise", "1 accept"]))


def test_after_accept_turn_returns_to_pending_seat():
    assert_last_illegal(p(A, ["1 raise", "2 accept", "2 play 3d"]))


def test_pending_seat_may_raise_again_after_accepted_counter_raise():
    acts = ["1 raise", "2 raise", "3 accept", "1 raise", "2 accept"] + A_PLAYS
    assert result(p(A, acts)) == outcome([9, 0], [9, 0])


def test_pending_seat_may_not_raise_after_own_accepted_raise():
    assert_last_illegal(p(A, ["1 raise", "2 accept", "1 raise"]))


def test_same_side_may_not_raise_twice_in_a_row():
    assert_last_illegal(p(A, ["1 raise", "2 accept", "1 play 3c", "2 play 3d", "3 raise"]))


def test_other_side_raises_next():
    acts = ["1 raise", "2 accept", "1 play 3c", "2 raise", "3 accept"] + A_PLAYS[1:]
    assert result(p(A, acts)) == outcome([6, 0], [6, 0])


def test_max_raises():
    acts = ["1 raise", "2 accept", "1 play 3c", "2 raise"]
    replay(p(A, acts))
    assert_last_illegal(p(A, acts, options={"max_raises": 1}))


def test_fold_off_by_default():
    assert_last_illegal(p(A, ["1 fold"]))


def test_fold_option():
    assert result(p(A, ["1 fold"], options={"fold": True})) == outcome([1, 0], [1, 0])


def test_heads_up_raise_answered_by_the_opponent():
    hands = [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]]
    plays = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]
    r = result(p(hands, ["1 raise", "0 raise", "1 accept"] + plays, options=HU))
    assert r == outcome([6, 0], [6, 0])


# --- mão de onze ------------------------------------------------------------------------------

def test_mao_de_onze_accepted_worth_three():
    # side 0 at 11: its first seat counted from the mão (seat 1) is seat 2
    r = result(p(A, ["2 accept"] + A_PLAYS, score=[11, 4]))
    assert r == outcome([3, 0], [14, 4], game_over=True)


def test_mao_de_onze_lost_opponents_score_three():
    r = result(p(A, ["1 accept"] + A_PLAYS, score=[4, 11]))
    assert r == outcome([3, 0], [7, 11])


def test_mao_de_onze_refused_opponents_score_one():
    assert result(p(A, ["2 refuse"], score=[11, 4])) == outcome([0, 1], [11, 5])


def test_mao_de_onze_decided_by_sides_first_seat_from_the_mao():
    assert_last_illegal(p(A, ["0 accept"], score=[11, 4]))
    assert_last_illegal(p(A, ["1 accept"], score=[11, 4]))


def test_mao_de_onze_decision_comes_first():
    assert_last_illegal(p(A, ["1 play 3c"], score=[11, 4]))


def test_mao_de_onze_no_raises():
    assert_last_illegal(p(A, ["2 accept", "1 raise"], score=[11, 4]))
    assert_last_illegal(p(A, ["2 accept", "1 play 3c", "2 raise"], score=[11, 4]))


def test_mao_de_onze_heads_up_player_decides():
    hands = [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]]
    plays = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]
    r = result(p(hands, ["0 accept"] + plays, score=[11, 7], options=HU))
    assert r == outcome([3, 0], [14, 7], game_over=True)
    r = result(p(hands, ["1 refuse"], score=[3, 11], options=HU))
    assert r == outcome([1, 0], [4, 11])


def test_no_decision_below_eleven():
    assert_last_illegal(p(A, ["2 accept"], score=[10, 4]))


# --- mão de ferro -----------------------------------------------------------------------------

A_SLOTS = ["1 play slot 0", "2 play slot 0", "3 play slot 0", "0 play slot 0",
           "1 play slot 1", "2 play slot 1", "3 play slot 1", "0 play slot 1"]
E_SLOTS = A_SLOTS + ["1 play slot 2", "2 play slot 2", "3 play slot 2", "0 play slot 2"]


def test_mao_de_ferro_blind_plays_by_slot_worth_one_wins_game():
    assert result(p(A, A_SLOTS, score=[11, 11])) == outcome([1, 0], [12, 11], game_over=True)


def test_mao_de_ferro_cards_not_played_by_name():
    assert_last_illegal(p(A, ["1 play 3c"], score=[11, 11]))


def test_mao_de_ferro_played_slot_is_gone():
    assert_last_illegal(p(A, A_SLOTS[:4] + ["1 play slot 0"], score=[11, 11]))


def test_mao_de_ferro_no_raises():
    assert_last_illegal(p(A, ["1 raise"], score=[11, 11]))


def test_mao_de_ferro_has_no_decision_at_eleven():
    assert_last_illegal(p(A, ["2 accept"], score=[11, 11]))


def test_mao_de_ferro_all_tied_follows_all_tied():
    assert result(p(E, E_SLOTS, score=[11, 11])) == outcome([1, 0], [12, 11], game_over=True)
    r = result(p(E, E_SLOTS, score=[11, 11], options={"all_tied": "none"}))
    assert r == outcome([0, 0], [11, 11])


def test_mao_de_ferro_blind_false_plays_cards():
    r = result(p(A, A_PLAYS, score=[11, 11], options={"blind": False}))
    assert r == outcome([1, 0], [12, 11], game_over=True)


# --- game -------------------------------------------------------------------------------------

def test_target_twelve():
    assert result(p(A, A_PLAYS, score=[10, 3])) == outcome([1, 0], [11, 3])
    assert result(p(A, ["1 raise", "2 accept"] + A_PLAYS, score=[10, 3])) == outcome([3, 0], [13, 3], game_over=True)


def test_several_hands_reach_mao_de_onze():
    # heads-up: hand 1 (dealer 0) takes seat 0 to 11; hand 2 (dealer 1, mão seat 0) is his mão de onze
    h1 = {"deal": {"hands": [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]], "vira": "6d"},
          "actions": ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]}
    h2 = {"deal": {"hands": [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]], "vira": "6d"},
          "actions": ["0 accept", "0 play Kd", "1 play Qc", "0 play Ac", "1 play Jd"]}
    record = {"variant": V, "options": HU, "score": [10, 2], "hands": [h1, h2]}
    assert result(record) == outcome([3, 0], [14, 2], game_over=True)


def test_counter_raise_by_second_opponent_accepted_pending_seat_may_raise_again():
    # seat 2 refuses, seat 0 counters with seis, seat 1 accepts (6); seat 1 (pending) asks nove
    acts = ["1 raise", "2 refuse", "0 raise", "1 accept", "1 raise", "2 refuse", "0 refuse"]
    assert result(p(A, acts)) == outcome([0, 6], [0, 6])


def test_heads_up_mao_de_ferro():
    hands = [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]]
    slots = ["1 play slot 0", "0 play slot 0", "0 play slot 1", "1 play slot 1"]
    r = result(p(hands, slots, score=[11, 11], options=HU))
    assert r == outcome([1, 0], [12, 11], game_over=True)


def test_several_hands_keep_dealer_rotation_four_players():
    # hand 1 dealer 0 (mão seat 1); hand 2 dealer 1 (mão seat 2 leads)
    h1 = {"deal": {"hands": A, "vira": VIRA}, "actions": A_PLAYS}
    h2_hands = [["4d", "Ah", "5s"], ["4c", "Qc", "5h"], ["3c", "Kc", "5c"], ["3d", "Jd", "5d"]]
    h2_plays = ["2 play 3c", "3 play 3d", "0 play 4d", "1 play 4c",
                "2 play Kc", "3 play Jd", "0 play 5s", "1 play Qc"]  # Kc (side 0) wins trick 2
    h2 = {"deal": {"hands": h2_hands, "vira": VIRA}, "actions": h2_plays}
    assert result({"variant": V, "hands": [h1, h2]}) == outcome([1, 0], [2, 0])


def test_mao_de_ferro_slot_indices_never_shift():
    hands = [["Ac", "Kd", "5h"], ["Qc", "Jd", "5s"]]
    slots = ["1 play slot 0", "0 play slot 0", "0 play slot 2", "1 play slot 2"]  # Ac wins, 5h = 5s
    r = result(p(hands, slots, score=[11, 11], options=HU))
    assert r == outcome([1, 0], [12, 11], game_over=True)


@pytest.mark.parametrize("dealer,score,decider,other", [
    (2, [11, 4], 0, 2),   # mão seat 3; side 0's first seat from it is seat 0
    (2, [4, 11], 3, 1),   # the mão himself
    (1, [11, 4], 2, 0),   # mão seat 2
    (3, [4, 11], 1, 3),   # mão seat 0; side 1's first seat is seat 1
])
def test_mao_de_onze_decider_by_dealer(dealer, score, decider, other):
    replay(p(A, [f"{decider} accept"], dealer=dealer, score=score))
    assert_last_illegal(p(A, [f"{other} accept"], dealer=dealer, score=score))


def test_hand_ends_mid_trick_when_only_the_winners_partner_is_left_to_play():
    # trick 1 tied (3c v 3d), so trick 2 decides; seat 2's 2c leads trick 2 after seat 3 has played,
    # and only seat 0, his partner, is left: no remaining play can change the winner (docs/rules.md §0)
    record = {"variant": "truco_paulista", "dealer": 0,
              "deal": {"hands": [["Ac", "7d", "6s"], ["3c", "4c", "6c"], ["3d", "2c", "6d"], ["Kc", "6h", "4s"]],
                       "vira": "4h"},
              "actions": ["1 play 3c", "2 play 3d", "3 play Kc", "0 play Ac",
                          "1 play 4c", "2 play 2c", "3 play 6h"]}
    assert replay(record) == {"hand_points": [1, 0], "score": [1, 0], "game_over": False, "hand_over": True}
    record["actions"].append("0 play 7d")
    with pytest.raises(IllegalActionError):
        replay(record)
