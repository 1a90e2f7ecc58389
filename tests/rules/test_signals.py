"""The partner-signal channel (docs/rules.md §8) and Le Truc 4p's governor instructions (§2)."""

import pytest

from truc_env.errors import RulesError
from truc_env.game.records import replay

from .conftest import assert_last_illegal, outcome, rec, result

# --- Le Truc 4p defaults: card mode, truthful, partners signal (d+2 then d+3), instructions on ----

LT = "le_truc_4p"
# dealer 0: governors 0 and 1; seat 2 is seat 0's partner, seat 3 seat 1's
H = [["Jc", "Qc", "Kc"], ["9c", "9d", "Ac"], ["7c", "8d", "Th"], ["9h", "Ks", "Ts"]]
SIGNALS = ["2 signal 7", "3 signal K"]
DEFAULT_HAND = SIGNALS + [
    "1 play 9c", "0 instruct high", "2 play 7c", "1 instruct none", "3 play 9h", "0 play Jc",
    "0 instruct low", "2 play Th", "1 instruct K", "3 play Ks", "0 play Qc", "1 play 9d",
    "3 play Ts", "0 play Kc", "1 play Ac", "2 play 8d",
]
P = SIGNALS + ["1 play 9c"]  # seat 2's turn is next: his governor (seat 0) instructs first


def lt(actions, **kw):
    return rec(LT, H, actions, **kw)


def test_le_truc_4p_default_hand_with_signals_and_instructions():
    assert result(lt(DEFAULT_HAND)) == outcome([1, 0], [1, 0])


def test_signal_round_by_governors_partners_in_order():
    assert_last_illegal(lt(["3 signal K"]))
    assert_last_illegal(lt(["0 signal Q"]))
    assert_last_illegal(lt(["1 play 9c"]))
    replay(lt(["2 signal none", "3 signal none", "1 play 9c"]))


def test_signals_truthful_in_le_truc_4p():
    assert_last_illegal(lt(["2 signal K"]))
    replay(lt(["2 signal T", "3 signal 9"]))


def test_one_signal_round_after_the_deal():
    acts = SIGNALS + ["1 play 9c", "2 play 7c", "3 play 9h", "0 play Jc", "2 signal 8"]
    assert_last_illegal(lt(acts, options={"instructions": False}))


def test_instruction_comes_before_partners_turn():
    assert_last_illegal(lt(P + ["2 play 7c"]))


def test_instruction_given_by_the_partners_governor():
    assert_last_illegal(lt(P + ["1 instruct high"]))


def test_instruct_high():
    assert_last_illegal(lt(P + ["0 instruct high", "2 play 8d"]))
    replay(lt(P + ["0 instruct high", "2 play 7c"]))


def test_instruct_low():
    assert_last_illegal(lt(P + ["0 instruct low", "2 play 7c"]))
    replay(lt(P + ["0 instruct low", "2 play Th"]))


def test_instruct_rank():
    assert_last_illegal(lt(P + ["0 instruct 8", "2 play 7c"]))
    replay(lt(P + ["0 instruct 8", "2 play 8d"]))


def test_instruct_rank_not_held_is_a_no_op():
    replay(lt(P + ["0 instruct A", "2 play 8d"]))
    replay(lt(P + ["0 instruct none", "2 play Th"]))


def test_instruction_leaves_raise_options():
    replay(lt(P + ["0 instruct high", "2 raise"]))


def test_no_instruction_for_the_last_card():
    through_t2 = DEFAULT_HAND[:DEFAULT_HAND.index("3 play Ts")]
    assert_last_illegal(lt(through_t2 + ["1 instruct none"]))


def test_channel_and_instructions_can_be_switched_off():
    acts = ["1 play 9c", "2 play 7c", "3 play 9h", "0 play Jc"]
    r = result(lt(acts, options={"signals": {"mode": "none"}, "instructions": False}))
    assert r == outcome([0, 0], [0, 0], hand_over=False)


# interception: dealer 1, so the signalling partners are seats 3 then 0. Seat 3's opponents are
# seats 0 and 2, seat 0's are 1 and 3; listed in play order (for dealer 1 both natural readings,
# ascending seats and "starting after the sender", give the same order).
H1 = [["7c", "8d", "Th"], ["Jc", "Qc", "Kc"], ["9c", "9d", "Ac"], ["9h", "Ks", "Ts"]]


def intercept(p):
    return {"signals": {"mode": "card", "truthful": True, "intercept": p, "timing": "deal"},
            "instructions": False}


def test_interception_chance_events_after_each_signal():
    acts = ["3 signal K", "c seen 0", "c unseen 2", "0 signal 7", "c unseen 1", "c seen 3", "2 play 9c"]
    r = result(rec(LT, H1, acts, dealer=1, options=intercept(0.5)))
    assert r == outcome([0, 0], [0, 0], hand_over=False)


def test_interception_events_required_when_probability_between_0_and_1():
    assert_last_illegal(rec(LT, H1, ["3 signal K", "0 signal 7"], dealer=1, options=intercept(0.5)))


def test_interception_event_after_no_signal_too():
    acts = ["3 signal none", "c unseen 0", "c unseen 2", "0 signal none", "c seen 1", "c seen 3"]
    replay(rec(LT, H1, acts, dealer=1, options=intercept(0.25)))


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_no_interception_events_when_probability_0_or_1(p):
    assert_last_illegal(rec(LT, H1, ["3 signal K", "c seen 0"], dealer=1, options=intercept(p)))
    replay(rec(LT, H1, ["3 signal K", "0 signal 7", "2 play 9c"], dealer=1, options=intercept(p)))


# --- other partnership variants: all four seats, from the mano ----------------------------------

TP = "truco_paulista"
# vira 6d; trick 1 tied, side 0 wins trick 2
A = [["4d", "Ah", "5s"], ["3c", "Kc", "5c"], ["3d", "Jd", "5d"], ["4c", "Qc", "5h"]]
A_PLAYS = ["1 play 3c", "2 play 3d", "3 play 4c", "0 play 4d",
           "1 play Kc", "2 play Jd", "3 play Qc", "0 play Ah"]
FREE = {"signals": {"mode": "free"}}


def tp(actions, hands=A, vira="6d", **kw):
    return rec(TP, hands, actions, vira=vira, **kw)


def test_paulista_default_has_no_signals():
    assert_last_illegal(tp(["1 signal 0"]))


def test_free_mode_round_of_four_from_the_mano():
    acts = ["1 signal 3", "2 signal 0", "3 signal none", "0 signal 7"] + A_PLAYS
    assert result(tp(acts, options=FREE)) == outcome([1, 0], [1, 0])
    assert_last_illegal(tp(["2 signal 0"], options=FREE))


def test_free_mode_tokens_up_to_vocab_minus_one():
    assert_last_illegal(tp(["1 signal 8"], options=FREE))
    opts = {"signals": {"mode": "free", "vocab": 4}}
    replay(tp(["1 signal 3"], options=opts))
    assert_last_illegal(tp(["1 signal 4"], options=opts))


def test_free_mode_tokens_are_integers():
    assert_last_illegal(tp(["1 signal K"], options=FREE))


def test_card_mode_truthful():
    opts = {"signals": {"mode": "card", "truthful": True}}
    replay(tp(["1 signal K", "2 signal J", "3 signal 4", "0 signal A", "1 play 3c"], options=opts))
    assert_last_illegal(tp(["1 signal A"], options=opts))


def test_card_mode_lies_allowed_when_not_truthful():
    opts = {"signals": {"mode": "card", "truthful": False}}
    replay(tp(["1 signal A", "2 signal 7"], options=opts))


SENAS = {"signals": {"mode": "senas", "truthful": True}}


def test_paulista_senas_name_this_hands_manilhas():
    hands = [["4d", "Ah", "5s"], ["7c", "3c", "4h"], ["7h", "Kd", "5d"], ["3s", "Qc", "5h"]]
    replay(tp(["1 signal zap", "2 signal copas", "3 signal three", "0 signal none"], hands=hands, options=SENAS))
    assert_last_illegal(tp(["1 signal copas"], hands=hands, options=SENAS))
    assert_last_illegal(tp(["1 signal zap", "2 signal copas", "3 signal zap"], hands=hands, options=SENAS))


def test_paulista_senas_three_is_a_non_manilha_three():
    # vira 2: the 3s are manilhas, so seat 1's 3c is the zap and not a "three"
    hands = [["4d", "Ah", "5s"], ["3c", "Kc", "5c"], ["7d", "Jd", "5d"], ["4c", "Qc", "5h"]]
    replay(tp(["1 signal zap"], hands=hands, vira="2d", options=SENAS))
    assert_last_illegal(tp(["1 signal three"], hands=hands, vira="2d", options=SENAS))


def test_mineiro_senas():
    hands = [["4d", "Ah", "5s"], ["4c", "3c", "Kc"], ["7h", "Jd", "5d"], ["7d", "Qc", "5h"]]
    opts = SENAS
    replay(rec("truco_mineiro", hands, ["1 signal zap", "2 signal copas", "3 signal picafumo", "0 signal none"],
               options=opts))
    replay(rec("truco_mineiro", hands, ["1 signal three"], options=opts))
    assert_last_illegal(rec("truco_mineiro", hands, ["1 signal espadilha"], options=opts))


ARG = [["5e", "12b", "10c"], ["1e", "3o", "4c"], ["1c", "2o", "5o"], ["7o", "6c", "4o"]]


def test_argentine_senas():
    v = "truco_argentino"
    replay(rec(v, ARG, ["1 signal 1e", "2 signal ancho_falso", "3 signal 7o", "0 signal none"], options=SENAS))
    replay(rec(v, ARG, ["1 signal three", "2 signal two"], options=SENAS))
    assert_last_illegal(rec(v, ARG, ["1 signal 7e"], options=SENAS))


def test_argentine_card_mode_spanish_ranks():
    v = "truco_argentino"
    opts = {"signals": {"mode": "card", "truthful": True}}
    replay(rec(v, ARG, ["1 signal 1", "2 signal 2", "3 signal 7", "0 signal 12"], options=opts))
    assert_last_illegal(rec(v, ARG, ["1 signal 12"], options=opts))


# every_trick: a round opens each trick, from its leader; truthful means "still holds"
C = [["4d", "4s", "6s"], ["Kc", "Jh", "5d"], ["Ad", "Jd", "6c"], ["Qc", "5c", "6h"]]
EVERY = {"signals": {"mode": "card", "truthful": True, "timing": "every_trick"}}
C_T1 = ["1 signal K", "2 signal A", "3 signal Q", "0 signal 4",
        "1 play Kc", "2 play Ad", "3 play Qc", "0 play 4d"]  # seat 2 wins trick 1


def test_every_trick_round_from_the_tricks_leader():
    acts = C_T1 + ["2 signal J", "3 signal 5", "0 signal 4", "1 signal J",
                   "2 play Jd", "3 play 5c", "0 play 4s", "1 play Jh"]
    assert result(tp(acts, hands=C, options=EVERY)) == outcome([1, 0], [1, 0])
    assert_last_illegal(tp(C_T1 + ["1 signal J"], hands=C, options=EVERY))


def test_every_trick_truthful_only_cards_still_held():
    assert_last_illegal(tp(C_T1 + ["2 signal A"], hands=C, options=EVERY))


def test_deal_timing_has_no_later_rounds():
    opts = {"signals": {"mode": "card", "truthful": True, "timing": "deal"}}
    assert_last_illegal(tp(C_T1 + ["2 signal J"], hands=C, options=opts))


def test_decision_at_eleven_comes_before_the_signal_round():
    acts = ["2 accept", "1 signal 0", "2 signal 1", "3 signal none", "0 signal 2", "1 play 3c"]
    replay(tp(acts, score=[11, 4], options=FREE))
    assert_last_illegal(tp(["1 signal 0"], score=[11, 4], options=FREE))


def test_no_signals_in_the_iron_hand():
    assert_last_illegal(tp(["1 signal 0"], score=[11, 11], options=FREE))
    replay(tp(["1 play slot 0"], score=[11, 11], options=FREE))


# --- where signals are rejected ---------------------------------------------------------------

@pytest.mark.parametrize("variant,options,hands,vira", [
    ("le_truc", {}, [["7c", "8c", "9c"], ["7d", "8d", "9d"]], None),
    ("truco_paulista", {"players": 2}, [["3c", "2c", "Kc"], ["3d", "2d", "Kd"]], "4h"),
    ("truco_mineiro", {"players": 2}, [["3c", "2c", "Kc"], ["3d", "2d", "Kd"]], None),
    ("truco_argentino", {"players": 2}, [["3c", "2c", "12c"], ["3o", "2o", "12o"]], None),
    ("put", {}, [["3c", "2c", "Kc"], ["3d", "2d", "Kd"]], None),
    ("put_4p", {}, [["3c", "5d", "9h"], ["2c", "8d", "4h"], ["Kc", "Qd", "Jh"], ["Ks", "Qh", "Js"]], None),
    ("put_n", {"players": 3}, [["3c", "2c", "Kc", "Qc"], ["3d", "2d", "Kd", "Qd"], ["3h", "2h", "Kh", "Qh"]], None),
])
@pytest.mark.parametrize("mode", ["free", "card"])
def test_signals_rejected_in_heads_up_put_4p_and_put_n(variant, options, hands, vira, mode):
    opts = dict(options, signals={"mode": mode})
    with pytest.raises(RulesError):
        replay(rec(variant, hands, [], options=opts, vira=vira))
