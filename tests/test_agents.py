"""Agents: the factory, the human at the terminal, heuristics in every variant."""

import io

import numpy as np
import pytest

from agents import make_agent
from train.play import play_human
from truc_env.engine import State, sample_chance
from truc_env.observe import SeatObservation
from truc_env.rules import make_rules


def test_human_rejects_bad_input_and_asks_again():
    rules = make_rules("le_truc")
    state = State(rules)
    rng = np.random.default_rng(0)
    while state.is_chance_node():
        state.apply_action(sample_chance(state, rng))
    seat = state.current_player()
    mask = np.zeros(state.L.size, np.int8)
    mask[state.legal_actions()] = 1
    out = io.StringIO()
    human = make_agent("human")
    human.stdin, human.stdout = io.StringIO("fly away\n42\n\nraise\n"), out
    action = human.act(SeatObservation(state, seat, mask), mask)
    assert state.action_to_string(action) == "raise"
    text = out.getvalue()
    assert text.count("is not one of the legal actions") == 3
    assert "seat 1 (you)" in text and "??" in text  # the table from his side: the opponent's cards hidden


def test_human_accepts_numbers_and_plays_a_whole_game():
    script = io.StringIO("nonsense\n1\n" * 400)
    out = io.StringIO()
    returns = play_human("le_truc", {}, ["heuristic:honest"], seed=1, stdin=script, stdout=out)
    assert "Game over" in out.getvalue() and sum(returns) == 0


def test_human_input_ending_is_a_clear_error():
    with pytest.raises(EOFError, match="input ended"):
        play_human("le_truc", {}, ["random"], stdin=io.StringIO(""), stdout=io.StringIO())


@pytest.mark.parametrize("variant, options", [
    ("le_truc", {}), ("le_truc_4p", {}), ("put", {}), ("put_4p", {}), ("put_n", {"players": 5}),
    ("truco_paulista", {}), ("truco_paulista", {"signals": {"mode": "free"}}),
    ("truco_mineiro", {"players": 2}), ("truco_argentino", {"flor": True}),
    ("truco_argentino", {"signals": {"mode": "senas"}}),
])
@pytest.mark.parametrize("style", ["honest", "bluffer", "cautious"])
def test_heuristics_play_every_variant_legally(variant, options, style):
    rules = make_rules(variant, **options)
    rng = np.random.default_rng(7)
    for game in range(3):
        agents = [make_agent(f"heuristic:{style}", rules, seed=game * 10 + s) for s in range(rules.players)]
        state = State(rules, episode="hand", score=[11, 0] if variant.startswith("truco_p") and game == 1 else None)
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
                continue
            seat = state.current_player()
            mask = np.zeros(state.L.size, np.int8)
            mask[state.legal_actions()] = 1
            action = agents[seat].act(SeatObservation(state, seat, mask), mask)
            assert mask[action] == 1
            state.apply_action(action)


def test_heuristic_signals_truthfully_and_raises_strong_hands():
    from truc_env.records import replay_state

    state = replay_state({"variant": "le_truc_4p", "options": {"instructions": False},
                          "deal": {"hands": [["9c", "Tc", "Jc"], ["9d", "Td", "Jd"], ["7c", "7d", "8c"],
                                             ["9h", "Th", "Jh"]]}, "actions": []})
    agent = make_agent("heuristic:honest", state.rules, seed=0)
    mask = np.zeros(state.L.size, np.int8)
    mask[state.legal_actions()] = 1
    action = agent.act(SeatObservation(state, 2, mask), mask)
    assert state.action_to_string(action) == "signal 7"


@pytest.mark.parametrize("style", ["honest", "bluffer", "cautious"])
def test_heuristic_sings_flor_when_asked_an_envido(style):
    from truc_env.records import replay_state

    state = replay_state({"variant": "truco_argentino", "options": {"players": 2, "flor": True}, "dealer": 1,
                          "deal": {"hands": [["4o", "5c", "6b"], ["1o", "2o", "3o"]]}, "actions": ["0 envido"]})
    seat = state.current_player()
    assert seat == 1
    mask = np.zeros(state.L.size, np.int8)
    mask[state.legal_actions()] = 1
    action = make_agent(f"heuristic:{style}", state.rules, seed=0).act(SeatObservation(state, seat, mask), mask)
    assert state.action_to_string(action) == "flor"
