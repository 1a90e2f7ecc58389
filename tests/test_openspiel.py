"""The OpenSpiel game `python_truc`: API checks, parameters, and solvers on a shrunk game."""

import json

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import truc_env.envs.openspiel_game  # noqa: E402,F401  (registers python_truc)
from truc_env import VARIANTS  # noqa: E402
from truc_env.envs.openspiel_game import format_options, parse_options  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402

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


# One value other than the default for every option, valid on its own in every variant that has it.
FLAT_VALUES = {"ranks": 5, "hand_size": 2, "max_raises": 1, "target": 7, "first_dealer": "random"}


def non_default(variant, name, spec):
    """(option value, dict-form parameter, string-form text) for one option of a variant."""
    if name in FLAT_VALUES:
        value = FLAT_VALUES[name]
    else:
        value = next(a for a in spec.allowed if a != spec.default)
    param = value
    if name == "fold":
        param = "yes" if value else "no"
    text = str(param).lower() if isinstance(param, bool) else str(param)
    return value, param, text


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_option_is_a_flat_parameter_in_both_forms(variant):
    from truc_env.game.rules import make_rules, option_specs

    for name, spec in option_specs(variant).items():
        if name == "signals":
            continue
        value, param, text = non_default(variant, name, spec)
        expected = make_rules(variant, **{name: value})
        assert expected.options[name] != make_rules(variant).options[name]
        by_dict = pyspiel.load_game("python_truc", {"variant": variant, name: param})
        by_string = pyspiel.load_game(f"python_truc(variant={variant},{name}={text})")
        assert by_dict.new_initial_state().s.rules == expected, name
        assert by_string.new_initial_state().s.rules == expected, name
        assert pyspiel.load_game(str(by_string)).new_initial_state().s.rules == expected, name


def test_several_options_and_signals_in_one_game_string():
    from truc_env.game.rules import make_rules

    game = pyspiel.load_game("python_truc(variant=le_truc_4p,ranks=4,redeal=false,fold=yes,signals_mode=free,"
                             "signals_vocab=4,signals_truthful=false,signals_intercept=0.5,"
                             "signals_timing=every_trick,episode=hand)")
    expected = make_rules("le_truc_4p", ranks=4, redeal=False, fold=True, signals={
        "mode": "free", "vocab": 4, "truthful": False, "intercept": 0.5, "timing": "every_trick"})
    assert game.new_initial_state().s.rules == expected
    params = game.get_parameters()
    assert (params["ranks"], params["signals_vocab"], params["fold"], params["episode"]) == (4, 4, "yes", "hand")
    # a signal setting alone keeps the variant's other signal defaults (le_truc_4p: truthful card signals)
    alone = pyspiel.load_game("python_truc(variant=le_truc_4p,signals_intercept=0.25)").new_initial_state().s.rules
    assert alone.signals.mode == "card" and alone.signals.intercept == 0.25
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_players_of_a_fixed_size_variant_and_the_reported_game_strings():
    assert pyspiel.load_game("python_truc(variant=le_truc,players=2)").num_players() == 2
    assert pyspiel.load_game("python_truc(variant=le_truc,players=2,ranks=4)").new_initial_state().s.rules.ranking == \
        ("7", "8", "A", "K")
    assert pyspiel.load_game("python_truc(variant=put_n,players=6,hand_size=3)").num_players() == 6
    with pytest.raises(TrucError, match="le_truc is played by 2 players"):
        pyspiel.load_game("python_truc(variant=le_truc,players=4)")


def test_the_game_string_shows_the_resolved_players_in_either_form():
    for game in (pyspiel.load_game("python_truc", {"variant": "le_truc"}), pyspiel.load_game("python_truc"),
                 pyspiel.load_game("python_truc(variant=le_truc)")):
        assert "players=2," in str(game) and "players=-1" not in str(game)
        assert game.get_parameters()["players"] == 2
        again = pyspiel.load_game(str(game))
        assert str(again) == str(game) and again.new_initial_state().s.rules == game.new_initial_state().s.rules
    assert pyspiel.load_game("python_truc", {"variant": "truco_paulista"}).get_parameters()["players"] == 4


def test_bad_parameters_say_what_is_allowed():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'bogus'.*ranks"):
        pyspiel.load_game("python_truc(variant=le_truc,bogus=1)")
    with pytest.raises(TrucError, match="unknown option.*envido.*allowed"):
        load("le_truc", envido=False)  # an option of another variant
    with pytest.raises(TrucError, match="fold='maybe' is invalid; allowed: 'yes', 'no'"):
        load("le_truc", fold="maybe")
    with pytest.raises(TrucError, match="ranks is given twice"):
        load("le_truc", ranks=3, options='{"ranks": 4}')
    with pytest.raises(TrucError, match="unknown variant 'truco_uruguayo'"):
        load("truco_uruguayo")
    with pytest.raises(TrucError, match="integer in 1..13"):
        load("le_truc", ranks=20)
    assert load("le_truc", ranks=4, options='{"ranks": 4, "redeal": false}').new_initial_state().s.rules.options[
        "redeal"] is False  # the same value twice is fine


def test_every_parameter_is_documented():
    doc = truc_env.envs.openspiel_game.__doc__
    spec = pyspiel.load_game("python_truc").get_type().parameter_specification
    assert set(spec) >= {"variant", "players", "ranks", "hand_size", "max_raises", "target", "episode",
                         "signals_mode", "signals_vocab", "signals_intercept", "options"}
    for name in spec:
        assert f"`{name}`" in doc, name


def test_shimmy_wrapper_keeps_the_settings():
    import pickle

    shimmy = pytest.importorskip("shimmy")
    game = pyspiel.load_game("python_truc(variant=truco_paulista,players=2,deck=clean,ranks=4,episode=hand)")
    by_string = shimmy.OpenSpielCompatibilityV0(game_name=str(game))
    by_config = shimmy.OpenSpielCompatibilityV0(game_name="python_truc", config={
        "variant": "truco_paulista", "players": 2, "deck": "clean", "ranks": 4, "episode": "hand"})
    by_game = shimmy.OpenSpielCompatibilityV0(env=game)
    for env in (by_string, by_config, by_game, pickle.loads(pickle.dumps(by_game))):
        assert env._env.new_initial_state().s.rules == game.new_initial_state().s.rules
        assert env.possible_agents == ["player_0", "player_1"]
        env.reset(seed=0)
        for _ in env.agent_iter():
            _, _, termination, truncation, info = env.last()
            env.step(None if termination or truncation else int(np.flatnonzero(info["action_mask"])[0]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_game_string_shows_resolved_settings_and_no_placeholders(variant):
    """str(game) shows what the game is (the README's promise): its hand size, ranks and first dealer, none of
    another variant's options and no empty or -1 placeholder; loading it gives the same game."""
    import re

    from truc_env.game.rules import option_specs

    game = pyspiel.load_game("python_truc", {"variant": variant})
    text = str(game)
    rules = game.new_initial_state().s.rules
    assert not re.search(r"=(,|\)|-1\b)", text), text
    assert f"hand_size={rules.hand_size}," in text and f"ranks={len(rules.ranking)}," in text
    assert (f"dealer={rules.first_dealer}," in text) if rules.first_dealer != "random" else "first_dealer=random" in text
    others = {name for v in VARIANTS for name in option_specs(v)} - set(option_specs(variant)) - {"players", "signals"}
    assert not [name for name in others if f"{name}=" in text.replace("first_dealer=", "")], text
    again = pyspiel.load_game(text)
    assert str(again) == text and again.new_initial_state().s.rules == rules
    capped = pyspiel.load_game("python_truc", {"variant": variant, "max_raises": 2})
    assert "max_raises=2," in str(capped)


def test_open_hands_round_trips_through_the_game_string():
    game = pyspiel.load_game("python_truc(variant=le_truc_4p,signals_mode=none,signals_open_hands=True,instructions=False)")
    rules = game.new_initial_state().s.rules
    assert rules.signals.open_hands and "signals_open_hands=True" in str(game)
    assert pyspiel.load_game(str(game)).new_initial_state().s.rules == rules
    assert not pyspiel.load_game("python_truc(variant=le_truc_4p)").new_initial_state().s.rules.signals.open_hands
