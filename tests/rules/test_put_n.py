"""Put for 3 to 6 independent players (docs/rules.md §3 put_n). Each seat is its own side; each gets
players + 1 cards and that many tricks are played. Dealer 0, so seat 1 leads.
Most tests use players: 3 (4 cards, 4 tricks; order 1 2 0).
"""

import pytest

from truc_env.errors import RulesError
from truc_env.game.records import replay

from .conftest import assert_last_illegal, outcome, rec, result

V = "put_n"
P3 = {"players": 3}

# seat 1 wins tricks 1-3
SWEEP = [["7c", "7d", "7h", "8c"], ["3c", "3d", "2c", "4c"], ["5c", "5d", "5h", "6c"]]
SWEEP_PLAYS = ["1 play 3c", "2 play 5c", "0 play 7c",
               "1 play 3d", "2 play 5d", "0 play 7d",
               "1 play 2c", "2 play 5h", "0 play 7h"]


def test_most_tricks_scores_one():
    assert result(rec(V, SWEEP, SWEEP_PLAYS, options=P3)) == outcome([0, 1, 0], [0, 1, 0])


def test_hand_ends_when_no_one_can_catch_up():
    assert_last_illegal(rec(V, SWEEP, SWEEP_PLAYS + ["1 play 4c"], options=P3))


def test_default_four_players_five_cards_five_tricks():
    hands = [["9c", "9d", "9h", "9s", "Tc"], ["3c", "3d", "2c", "2d", "4c"],
             ["5c", "5d", "5h", "5s", "6c"], ["7c", "7d", "7h", "7s", "8c"]]
    plays = ["1 play 3c", "2 play 5c", "3 play 7c", "0 play 9c",
             "1 play 3d", "2 play 5d", "3 play 7d", "0 play 9d",
             "1 play 2c", "2 play 5h", "3 play 7h", "0 play 9h"]
    assert result(rec(V, hands, plays)) == outcome([0, 1, 0, 0], [0, 1, 0, 0])


def test_tie_among_top_cards_nobody_wins_leader_leads_again():
    hands = [["7d", "Ac", "Kc", "Qc"], ["5c", "4c", "4d", "4h"], ["7c", "Ad", "Kd", "Qd"]]
    t1 = ["1 play 5c", "2 play 7c", "0 play 7d"]
    assert_last_illegal(rec(V, hands, t1 + ["2 play Ad"], options=P3))
    r = result(rec(V, hands, t1 + ["1 play 4c"], options=P3))
    assert r == outcome([0, 0, 0], [0, 0, 0], hand_over=False)


def test_tie_for_most_tricks_nobody_scores():
    hands = [["6c", "6d", "7c", "7d"], ["3c", "3d", "4c", "4d"], ["5c", "5d", "2c", "2d"]]
    plays = ["1 play 3c", "2 play 5c", "0 play 6c",   # seat 1
             "1 play 3d", "2 play 5d", "0 play 6d",   # seat 1
             "1 play 4c", "2 play 2c", "0 play 7c",   # seat 2
             "2 play 2d", "0 play 7d", "1 play 4d"]   # seat 2: 2-2
    assert result(rec(V, hands, plays, options=P3)) == outcome([0, 0, 0], [0, 0, 0])


def test_all_resign_caller_scores_one():
    acts = ["1 put", "2 refuse", "0 refuse"]
    assert result(rec(V, SWEEP, acts, options=P3)) == outcome([0, 1, 0], [0, 1, 0])


def test_resignations_answered_in_order_after_caller():
    assert_last_illegal(rec(V, SWEEP, ["1 put", "0 refuse"], options=P3))


def test_winner_scores_one_per_opponent_still_in():
    hands = [["9c", "9d", "9h", "9s", "Tc"], ["3c", "3d", "2c", "2d", "4c"],
             ["5c", "5d", "5h", "5s", "6c"], ["7c", "7d", "7h", "7s", "8c"]]
    acts = ["1 put", "2 refuse", "3 accept", "0 accept",
            "1 play 3c", "3 play 7c", "0 play 9c",
            "1 play 3d", "3 play 7d", "0 play 9d",
            "1 play 2c", "3 play 7h", "0 play 9h"]
    assert result(rec(V, hands, acts)) == outcome([0, 2, 0, 0], [0, 2, 0, 0])


def test_resigned_player_is_skipped():
    hands = [["9c", "9d", "9h", "9s", "Tc"], ["3c", "3d", "2c", "2d", "4c"],
             ["5c", "5d", "5h", "5s", "6c"], ["7c", "7d", "7h", "7s", "8c"]]
    acts = ["1 put", "2 refuse", "3 accept", "0 accept", "1 play 3c", "2 play 5c"]
    assert_last_illegal(rec(V, hands, acts))


def test_resigned_players_card_is_withdrawn():
    # seat 1's 3c would win trick 1; he resigns, so seat 0's 5c beats seat 2's 4c and seat 0 leads
    hands = [["5c", "5d", "7c", "7d"], ["3c", "3d", "3h", "3s"], ["4c", "4d", "6c", "6d"]]
    acts = ["1 play 3c", "2 play 4c", "0 put", "1 refuse", "2 accept", "0 play 5c",
            "0 play 5d", "2 play 4d",
            "0 play 7c", "2 play 6c"]
    assert result(rec(V, hands, acts, options=P3)) == outcome([1, 0, 0], [1, 0, 0])


def test_lead_owed_to_resigned_player_passes_to_next_seat_still_in():
    # trick 1 tied between seats 2 and 0 after seat 1 (its leader) resigned: seat 2 leads
    hands = [["3h", "5d", "7c", "7d"], ["3c", "4h", "4s", "5h"], ["3d", "4d", "6c", "6d"]]
    head = ["1 play 3c", "2 play 3d", "0 put", "1 refuse", "2 accept", "0 play 3h"]
    assert_last_illegal(rec(V, hands, head + ["0 play 5d"], options=P3))
    replay(rec(V, hands, head + ["2 play 4d"], options=P3))


def test_resigned_players_tricks_stop_counting():
    # seat 1 wins tricks 1 and 2, then resigns to seat 2's put; seat 2 wins trick 3 and ties 4
    hands = [["6c", "6d", "Qc", "Kd"], ["3c", "3d", "4c", "4d"], ["5c", "5d", "2c", "Kc"]]
    acts = ["1 play 3c", "2 play 5c", "0 play 6c",
            "1 play 3d", "2 play 5d", "0 play 6d",
            "1 play 4c", "2 put", "0 accept", "1 refuse", "2 play 2c", "0 play Qc",
            "2 play Kc", "0 play Kd"]
    assert result(rec(V, hands, acts, options=P3)) == outcome([0, 0, 1], [0, 0, 1])


def test_put_once_per_hand():
    acts = ["1 put", "2 accept", "0 accept", "1 play 3c", "2 put"]
    assert_last_illegal(rec(V, SWEEP, acts, options=P3))


def test_put_accepted_by_all_winner_scores_per_opponent():
    acts = ["1 put", "2 accept", "0 accept"] + SWEEP_PLAYS
    r = result(rec(V, SWEEP, acts, score=[0, 3, 0], options=P3))
    assert r == outcome([0, 2, 0], [0, 5, 0], game_over=True)


def test_no_fold():
    assert_last_illegal(rec(V, SWEEP, ["1 fold"], options=P3))


def test_no_raise():
    assert_last_illegal(rec(V, SWEEP, ["1 raise"], options=P3))


def test_target_five():
    r = result(rec(V, SWEEP, SWEEP_PLAYS, score=[1, 4, 2], options=P3))
    assert r == outcome([0, 1, 0], [1, 5, 2], game_over=True)


def test_six_players_seven_cards_all_resign():
    ranks = "23456789TJQKA"
    cards = [r + s for s in "cdhs" for r in ranks]
    hands = [cards[7 * i: 7 * i + 7] for i in range(6)]
    acts = ["1 put", "2 refuse", "3 refuse", "4 refuse", "5 refuse", "0 refuse"]
    r = result(rec(V, hands, acts, options={"players": 6}))
    assert r == outcome([0, 1, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0])


@pytest.mark.parametrize("players", [2, 7])
def test_players_three_to_six(players):
    with pytest.raises(RulesError):
        replay({"variant": V, "options": {"players": players}, "seed": 1, "actions": []})


def test_signals_rejected():
    with pytest.raises(RulesError):
        replay(rec(V, SWEEP, [], options={"players": 3, "signals": {"mode": "free"}}))


def test_put_accepted_tie_for_most_nobody_scores():
    hands = [["6c", "6d", "7c", "7d"], ["3c", "3d", "4c", "4d"], ["5c", "5d", "2c", "2d"]]
    acts = ["1 put", "2 accept", "0 accept",
            "1 play 3c", "2 play 5c", "0 play 6c",
            "1 play 3d", "2 play 5d", "0 play 6d",
            "1 play 4c", "2 play 2c", "0 play 7c",
            "2 play 2d", "0 play 7d", "1 play 4d"]
    assert result(rec(V, hands, acts, options=P3)) == outcome([0, 0, 0], [0, 0, 0])
