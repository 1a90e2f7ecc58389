"""Put, 2 vs 2 with a card pass (docs/rules.md §3). Dealer 0: seats 0 and 1 pass their highest card
to their partners (0 -> 2, 1 -> 3), seat 1 first; then seats 2 and 3 discard one card each,
seat 2 first; then seats 3 and 2 play Put heads-up, seat 3 (the non-dealing side) leading.
"""

import pytest

from truc_env.errors import RulesError
from truc_env.game.records import replay

from .conftest import assert_last_illegal, outcome, rec, result

V = "put_4p"
HANDS = [["3c", "5d", "9h"], ["2c", "8d", "4h"], ["Kc", "Qd", "Jh"], ["Ks", "Qh", "Js"]]
SETUP = ["1 give 2c", "0 give 3c", "2 discard Jh", "3 discard Js"]
# receivers hold: seat 2 Kc Qd 3c, seat 3 Ks Qh 2c
PLAYS = ["3 play 2c", "2 play 3c", "2 play Kc", "3 play Ks", "2 play Qd", "3 play Qh"]


def test_pass_discard_and_play_side_scores():
    # seat 2 wins trick 1 with the passed 3, then two ties: 1 trick and 2 ties -> 1 point
    assert result(rec(V, HANDS, SETUP + PLAYS)) == outcome([1, 0], [1, 0])


def test_only_the_highest_card_may_be_given():
    assert_last_illegal(rec(V, HANDS, ["1 give 8d"]))
    assert_last_illegal(rec(V, HANDS, ["1 give 2c", "0 give 5d"]))


def test_any_of_equal_highest_cards_may_be_given():
    hands = [["3c", "5d", "9h"], ["2c", "2d", "4h"], ["Kc", "Qd", "Jh"], ["Ks", "Qh", "Js"]]
    replay(rec(V, hands, ["1 give 2d", "0 give 3c"]))
    replay(rec(V, hands, ["1 give 2c", "0 give 3c"]))


def test_passes_in_play_order_from_seat_after_dealer():
    assert_last_illegal(rec(V, HANDS, ["0 give 3c"]))


def test_discards_after_passes_in_order():
    assert_last_illegal(rec(V, HANDS, ["1 give 2c", "0 give 3c", "3 discard Js"]))


def test_receiver_discards_a_card_he_holds():
    assert_last_illegal(rec(V, HANDS, ["1 give 2c", "0 give 3c", "2 discard Ks"]))


def test_receiver_may_discard_the_passed_card():
    acts = ["1 give 2c", "0 give 3c", "2 discard 3c", "3 discard Js", "3 play 2c", "2 play Kc"]
    r = result(rec(V, HANDS, acts))
    assert r == outcome([0, 0], [0, 0], hand_over=False)


def test_non_dealing_receiver_leads():
    assert_last_illegal(rec(V, HANDS, SETUP + ["2 play Kc"]))


def test_passers_take_no_further_part():
    assert_last_illegal(rec(V, HANDS, SETUP + ["3 play 2c", "0 play 5d"]))
    assert_last_illegal(rec(V, HANDS, SETUP + ["1 play 8d"]))


def test_put_answered_by_opposing_receiver():
    r = result(rec(V, HANDS, SETUP + ["3 put", "2 refuse"]))
    assert r == outcome([0, 1], [0, 1])
    assert_last_illegal(rec(V, HANDS, SETUP + ["3 put", "0 accept"]))


def test_put_accepted_winner_wins_game():
    acts = SETUP + ["3 put", "2 accept"] + PLAYS
    assert result(rec(V, HANDS, acts, score=[2, 1])) == outcome([3, 0], [5, 1], game_over=True)


def test_signals_rejected():
    record = rec(V, HANDS, [], options={"signals": {"mode": "free"}})
    with pytest.raises(RulesError):
        replay(record)


def test_dealer_one_roles_rotate():
    # dealer 1: passers 1 and 2 (seat 2 gives first), receivers 3 and 0, seat 0 (d+3) leads
    hands = [["Ks", "Qh", "Js"], ["3c", "5d", "9h"], ["2c", "8d", "4h"], ["Kc", "Qd", "Jh"]]
    acts = ["2 give 2c", "1 give 3c", "3 discard Jh", "0 discard Js",
            "0 play 2c", "3 play 3c", "3 play Kc", "0 play Ks", "3 play Qd", "0 play Qh"]
    assert result(rec(V, hands, acts, dealer=1)) == outcome([0, 1], [0, 1])
