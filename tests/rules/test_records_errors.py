"""Game records (docs/rules.md §9) and errors that say what was wrong and what is allowed."""

import re

import pytest

from truc_env.errors import CardError, IllegalActionError, RecordError, RulesError, TrucError
from truc_env.game.records import replay

from .conftest import FRENCH32, outcome, rec, result

HANDS = [["Ac", "Kd", "9h"], ["Qc", "Jd", "Th"]]


def test_error_hierarchy():
    for cls in (IllegalActionError, RecordError, CardError, RulesError):
        assert issubclass(cls, TrucError)
    assert issubclass(TrucError, ValueError)


def test_illegal_action_message_names_seat_action_and_legal_actions():
    with pytest.raises(IllegalActionError) as info:
        replay(rec("le_truc", HANDS, ["1 play Ac"]))
    msg = str(info.value)
    assert "play Ac" in msg
    assert re.search(r"\b1\b", msg)
    for legal in ("play Qc", "play Jd", "play Th", "raise"):
        assert legal in msg


def test_action_out_of_turn():
    with pytest.raises(IllegalActionError) as info:
        replay(rec("le_truc", HANDS, ["0 play Ac"]))
    assert "play Ac" in str(info.value)


def test_action_after_the_hand_is_over():
    plays = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd", "0 play 9h"]
    with pytest.raises(IllegalActionError):
        replay(rec("le_truc", HANDS, plays))


@pytest.mark.parametrize("action", ["1 dance", "1 play", "x play Qc", "1", "9 play Qc"])
def test_malformed_action(action):
    with pytest.raises(TrucError):
        replay(rec("le_truc", HANDS, [action]))


def test_chance_action_when_none_is_due():
    with pytest.raises(IllegalActionError):
        replay(rec("le_truc", HANDS, ["c seen 0"]))


def test_unknown_variant_lists_variants():
    with pytest.raises(RulesError) as info:
        replay({"variant": "le_trucc", "seed": 1, "actions": []})
    msg = str(info.value)
    for name in ("le_truc", "le_truc_4p", "put", "put_4p", "put_n", "truco_paulista", "truco_mineiro",
                 "truco_argentino"):
        assert name in msg


def test_unknown_option_lists_options():
    with pytest.raises(RulesError) as info:
        replay(rec("le_truc", HANDS, [], options={"colour": "red"}))
    msg = str(info.value)
    assert "colour" in msg
    for name in ("target", "redeal", "ladder", "all_tied"):
        assert name in msg


@pytest.mark.parametrize("variant,options", [
    ("le_truc", {"ladder": "tripling"}),
    ("le_truc", {"ranking": "ace_high"}),
    ("le_truc", {"all_tied": "maybe"}),
    ("le_truc", {"redeal": "sometimes"}),
    ("truco_paulista", {"players": 3}),
    ("truco_paulista", {"deck": "muddy"}),
    ("truco_argentino", {"players": 5}),
    ("le_truc_4p", {"signals": {"mode": "smoke"}}),
    ("put_n", {"players": 8}),
    ("le_truc", {"hand_size": 0}),
])
def test_bad_option_value(variant, options):
    with pytest.raises(RulesError):
        replay({"variant": variant, "options": options, "seed": 1, "actions": []})


@pytest.mark.parametrize("variant,hands,vira", [
    ("le_truc", [["2c", "Kd", "9h"], ["Qc", "Jd", "Th"]], None),          # no 2s in Le Truc
    ("le_truc", [["6c", "Kd", "9h"], ["Qc", "Jd", "Th"]], None),
    ("truco_paulista", [["8c", "Kd", "5h"], ["Qc", "Jd", "5s"]], "4h"),   # no 8 9 10
    ("truco_paulista", [["Tc", "Kd", "5h"], ["Qc", "Jd", "5s"]], "4h"),
    ("truco_argentino", [["8o", "2b", "3c"], ["7o", "5o", "1o"]], None),  # no 8 9
    ("truco_argentino", [["9e", "2b", "3c"], ["7o", "5o", "1o"]], None),
])
def test_card_not_in_the_variants_deck(variant, hands, vira):
    with pytest.raises((CardError, RecordError)):
        replay(rec(variant, hands, [], vira=vira, options={"players": 2} if "truco" in variant else None))


def test_duplicated_card():
    with pytest.raises(TrucError):
        replay(rec("le_truc", [["Ac", "Kd", "9h"], ["Ac", "Jd", "Th"]], []))


def test_vira_duplicates_a_dealt_card():
    with pytest.raises(TrucError):
        replay(rec("truco_paulista", [["3c", "2c", "Kc"], ["3d", "2d", "Kd"]], [], vira="Kc",
                   options={"players": 2}))


@pytest.mark.parametrize("card", ["Zz", "7x", "1c0", "", "AC"])
def test_bad_card_string(card):
    with pytest.raises(CardError):
        replay(rec("le_truc", [[card, "Kd", "9h"], ["Qc", "Jd", "Th"]], []))


@pytest.mark.parametrize("card", ["13o", "0e", "1x"])
def test_bad_spanish_card_string(card):
    with pytest.raises(CardError):
        replay(rec("truco_argentino", [[card, "2b", "3c"], ["7o", "5o", "1o"]], [], options={"players": 2}))


def test_wrong_hand_size():
    with pytest.raises(TrucError):
        replay(rec("le_truc", [["Ac", "Kd"], ["Qc", "Jd", "Th"]], []))


def test_wrong_number_of_hands():
    with pytest.raises(TrucError):
        replay(rec("le_truc", [["Ac", "Kd", "9h"]], []))


def test_deck_with_a_duplicated_card():
    with pytest.raises(TrucError):
        replay({"variant": "le_truc", "deal": {"deck": FRENCH32[:-1] + ["7c"]}, "actions": []})


def test_deck_must_be_the_whole_deck():
    # docs/rules.md §9: "deal.deck may instead give the whole deck, top first"
    with pytest.raises(TrucError):
        replay({"variant": "le_truc", "deal": {"deck": FRENCH32[:20]}, "actions": []})


def test_score_per_side():
    with pytest.raises(TrucError):
        replay(rec("le_truc", HANDS, [], score=[0, 0, 0]))


def test_missing_variant():
    with pytest.raises(TrucError):
        replay({"deal": {"hands": HANDS}, "actions": []})


def test_defaults_dealer_score_options():
    record = {"variant": "le_truc", "deal": {"hands": HANDS},
              "actions": ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]}
    assert result(record) == outcome([1, 0], [1, 0])


def test_record_stopped_mid_hand():
    assert result(rec("le_truc", HANDS, ["1 raise", "0 accept", "1 play Qc"])) == outcome(
        [0, 0], [0, 0], hand_over=False)


def test_record_with_no_actions():
    assert result(rec("le_truc", HANDS, [], score=[3, 4])) == outcome([0, 0], [3, 4], hand_over=False)


def test_seeded_deal_replays_identically():
    record = {"variant": "truco_paulista", "seed": 7, "actions": []}
    assert replay(record) == replay(record)
    assert result(record) == outcome([0, 0], [0, 0], hand_over=False)


def test_replay_reports_the_last_hand_of_several():
    h1 = {"deal": {"hands": HANDS}, "actions": ["1 raise", "0 refuse"]}
    h2 = {"deal": {"hands": HANDS}, "actions": ["0 play Ac", "1 play Qc", "0 play Kd", "1 play Jd"]}
    assert result({"variant": "le_truc", "hands": [h1, h2]}) == outcome([1, 0], [1, 1])


def test_several_hands_last_one_unfinished():
    h1 = {"deal": {"hands": HANDS}, "actions": ["1 raise", "0 refuse"]}
    h2 = {"deal": {"hands": HANDS}, "actions": ["0 play Ac"]}
    assert result({"variant": "le_truc", "hands": [h1, h2]}) == outcome([0, 0], [0, 1], hand_over=False)


# ---------------------------------------------------------------------- strict types and files (issue 13)
PLAYS = ["1 play Qc", "0 play Ac", "0 play Kd", "1 play Jd"]


@pytest.mark.parametrize("action", ["\u0661 play Qc", "1 play Q\u0663", "\uff11 play Qc"])
def test_seats_and_numbers_are_ascii(action):
    with pytest.raises(RecordError):
        replay(rec("le_truc", HANDS, [action]))


@pytest.mark.parametrize("field, value", [
    ("dealer", True), ("dealer", 0.0), ("dealer", "0"), ("score", 5), ("score", "00"), ("score", [True, 0]),
    ("score", {"a": 0}), ("seed", -1), ("seed", 1.5), ("seed", True), ("seed", "1"), ("variant", ["le_truc"]),
    ("variant", 5), ("options", [1]), ("actions", "1 play Qc"), ("hands", 3),
])
def test_wrong_types_are_refused(field, value):
    record = {"variant": "le_truc", "actions": []} if field in ("seed", "hands") else rec("le_truc", HANDS, [])
    record[field] = value
    if field == "hands":
        record.pop("actions")
    with pytest.raises(TrucError):
        replay(record)


def test_result_is_checked_against_the_replay():
    plays = rec("le_truc", HANDS, PLAYS)
    good = result(plays)
    assert replay({**plays, "result": good}) == replay(plays)
    assert replay({**plays, "result": {"hand_points": good["hand_points"]}}) == replay(plays)
    for key, value in (("hand_points", [0, 6]), ("score", [9, 9]), ("game_over", True), ("hand_over", False),
                       ("hand_over", 1)):
        with pytest.raises(RecordError, match=f"says {key}"):
            replay({**plays, "result": {**good, key: value}})
    for bad in ([0, 1], {"winner": 1}, "draw"):
        with pytest.raises(RecordError, match="'result' must be an object"):
            replay({**plays, "result": bad})


def test_result_of_each_hand_is_checked():
    from agents import make_agent
    from train.eval.match import play_game
    from truc_env.game.rules import make_rules

    rules = make_rules("le_truc")
    record = play_game(rules, [make_agent("heuristic:cautious", rules, s) for s in (1, 2)], 0).record
    assert replay(record)["game_over"] and len(record["hands"]) > 1
    record["hands"][0]["result"]["hand_points"] = [99, 99]
    with pytest.raises(RecordError, match="hand 0: 'result' says hand_points"):
        replay(record)


def test_absurd_nesting_is_refused():
    deep = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(RecordError, match="nests deeper"):
        replay({"variant": "le_truc", "options": {"signals": {"mode": deep}}})


def test_files_that_are_not_records(tmp_path):
    from truc_env.game.records import load

    cases = {"binary.json": b"\xff\xfe\x00{", "deep.json": b"[" * 100000 + b"]" * 100000,
             "half.json": b'{"variant": "le_truc", "actions": ["1 pl', "deep2.json": b"[" * 100 + b"]" * 100}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(RecordError):
            replay(load(tmp_path / name))
    with pytest.raises(RecordError, match="cannot read"):
        load(tmp_path)


def test_make_rules_and_new_game_refuse_wrong_types():
    from truc_env.game.engine import new_game
    from truc_env.game.rules import make_rules
    from truc_env.io.checks import check_seed

    with pytest.raises(RulesError, match="must be a string.*known variants"):
        make_rules(["le_truc"])
    with pytest.raises(RulesError, match="max_raises"):
        make_rules("le_truc", max_raises=[1])
    with pytest.raises(TrucError, match="score must be 2 non-negative integers"):
        new_game(make_rules("le_truc"), score=5)
    with pytest.raises(TrucError, match="score must be"):
        new_game(make_rules("le_truc"), score=[True, 0])
    for bad in (-1, 1.5, True, "3", 2**64, None):
        with pytest.raises(RulesError, match="a seed is an integer in 0.."):
            check_seed(bad)
    import numpy as np

    assert check_seed(np.int64(3)) == 3
