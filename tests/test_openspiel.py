"""The OpenSpiel game `python_truc`: API checks, parameters, and solvers on a shrunk game."""

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import truc_env.openspiel_game  # noqa: E402,F401  (registers python_truc)
from truc_env import VARIANTS  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402
from truc_env.openspiel_game import format_options, parse_options  # noqa: E402

TINY = {"ranks": 2, "hand_size": 1, "max_raises": 1, "redeal": False}  # 8 cards, 1 trick
SMALL = {"ranks": 3, "hand_size": 1, "max_raises": 2, "redeal": False}  # 5161 nodes; ranks=4, hand_size=2 is millions


def load(variant="le_truc", episode="hand", **params):
    return pyspiel.load_game("python_truc", {"variant": variant, "episode": episode, **params})


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_sim_one_hand(variant):
    pyspiel.random_sim_test(load(variant), num_sims=2, serialize=False, verbose=False)


@pytest.mark.parametrize("variant,options", [
    ("le_truc", {}),
    ("truco_paulista", {"signals": {"mode": "senas", "intercept": 0.5}}),
    ("truco_argentino", {"players": 2, "target": 15}),
])
def test_random_sim_whole_game_with_serialization(variant, options):
    game = load(variant, episode="game", options=json.dumps(options))
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_game_type_and_info():
    game = load("truco_paulista")
    gt = game.get_type()
    assert gt.short_name == "python_truc"
    assert gt.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert gt.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert gt.provides_information_state_string and gt.provides_information_state_tensor
    assert gt.provides_observation_string and gt.provides_observation_tensor
    assert game.num_players() == 4
    assert game.max_chance_outcomes() == 52  # French family ids (the 40-card deck is a subset)
    assert load("truco_argentino").max_chance_outcomes() == 40
    assert game.num_distinct_actions() == game.new_initial_state().s.L.size


def test_options_json_and_compact_forms_are_the_same_game():
    opts = {"players": 4, "signals": {"mode": "free", "vocab": 3}, "fold": True}
    assert parse_options(format_options(opts)) == opts
    a = load("truco_mineiro", options=json.dumps(opts))
    b = load("truco_mineiro", options=format_options(opts))
    assert str(a) == str(b)
    c = pyspiel.load_game(str(a))  # the game string round-trips
    assert c.new_initial_state().s.rules == a.new_initial_state().s.rules


def test_score_and_dealer_parameters():
    game = load("truco_paulista", score="11,10", dealer=1, options='{"players": 2}')
    state = game.new_initial_state()
    assert state.s.score == [11, 10] and state.s.dealer == 1
    assert game.get_parameters()["score"] == "11:10"
    assert load("truco_paulista", score="11:3", dealer=3).new_initial_state().s.dealer == 3
    with pytest.raises(TrucError, match="dealer"):
        load("truco_paulista", dealer=2, options='{"players": 2}')
    with pytest.raises(TrucError):
        load("le_truc", score="12,0")
    with pytest.raises(TrucError, match="options"):
        load("le_truc", options="ranks=4")


def test_clone_is_independent_and_keeps_history():
    state = load().new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    state.apply_action(state.legal_actions()[0])  # a card
    clone = state.clone()
    assert clone.history() == state.history() and str(clone) == str(state)
    clone.apply_action(clone.legal_actions()[0])
    assert len(state.history()) == len(clone.history()) - 1


def test_cfr_plus_and_external_sampling_reduce_exploitability():
    from open_spiel.python.algorithms import cfr, exploitability, external_sampling_mccfr

    game = load(options=json.dumps(TINY))
    solver = cfr.CFRPlusSolver(game)
    solver.evaluate_and_update_policy()
    first = exploitability.exploitability(game, solver.average_policy())
    for _ in range(3):
        solver.evaluate_and_update_policy()
    later = exploitability.exploitability(game, solver.average_policy())
    assert later < 0.6 * first

    es = external_sampling_mccfr.ExternalSamplingSolver(game, external_sampling_mccfr.AverageType.SIMPLE)
    np.random.seed(0)
    es.iteration()
    start = exploitability.nash_conv(game, es.average_policy())
    for _ in range(150):
        es.iteration()
    assert exploitability.nash_conv(game, es.average_policy()) < start


@pytest.mark.slow
def test_cfr_plus_on_the_small_heads_up_game():
    from open_spiel.python.algorithms import cfr, exploitability

    game = load(options=json.dumps(SMALL))
    solver = cfr.CFRPlusSolver(game)
    values = []
    for i in range(1, 5):
        solver.evaluate_and_update_policy()
        if i in (1, 4):
            values.append(exploitability.exploitability(game, solver.average_policy()))
    assert values[1] < values[0]
