"""Small tests of the engine's public API: clone, pickle, chance, terminal states, errors, layouts."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from truc_env.errors import IllegalActionError, RulesError, TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import CHANCE, TERMINAL, State, new_game, sample_chance
from truc_env.game.rules import VARIANTS, make_rules, option_specs

# one configuration per variant with every action section switched on somewhere
LAYOUT_CONFIGS = [
    ("le_truc", {}),
    ("le_truc", {"fold": False, "redeal": False, "ladder": "doubling"}),
    ("le_truc_4p", {}),
    ("le_truc_4p", {"signals": {"mode": "free", "vocab": 5}, "fold": True}),
    ("put", {}),
    ("put_4p", {}),
    ("put_n", {"players": 6}),
    ("truco_paulista", {}),
    ("truco_paulista", {"players": 2, "deck": "clean", "blind": False}),
    ("truco_paulista", {"signals": {"mode": "senas"}}),
    ("truco_mineiro", {"ladder": "mineiro", "deck": "clean", "signals": {"mode": "card"}}),
    ("truco_argentino", {"flor": True, "signals": {"mode": "senas"}}),
    ("truco_argentino", {"players": 2, "envido": False}),
]


def _step(state: State, rng) -> None:
    if state.is_chance_node():
        state.apply_action(sample_chance(state, rng))
    else:
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])


def _advance(state: State, rng, decisions: int) -> State:
    """Play until `decisions` decisions have been taken (or the game ends)."""
    while decisions > 0 and not state.is_terminal():
        if not state.is_chance_node():
            decisions -= 1
        _step(state, rng)
    while state.is_chance_node():
        _step(state, rng)
    return state


def _play_out(state: State, rng) -> State:
    while not state.is_terminal():
        _step(state, rng)
    return state


def _snapshot(state: State):
    return (list(state.history), list(state.score), [list(h) for h in state.hands], state.phase,
            state.current_player(), list(state.legal_actions()), sorted(state.drawn), state.dealer)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_clone_is_independent(variant):
    rng = np.random.default_rng(1)
    state = _advance(new_game(make_rules(variant)), rng, 3)
    before = _snapshot(state)
    copy = state.clone()
    assert _snapshot(copy) == before
    _play_out(copy, np.random.default_rng(2))
    assert copy.is_terminal()
    assert _snapshot(state) == before, "playing a clone changed the original"
    # and the other way round: the original moves on, a fresh clone does not follow
    copy = state.clone()
    _play_out(state, np.random.default_rng(3))
    assert _snapshot(copy) == before


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_clone_replays_identically(variant):
    rng = np.random.default_rng(4)
    state = _advance(new_game(make_rules(variant)), rng, 2)
    a, b = state.clone(), state.clone()
    _play_out(a, np.random.default_rng(9))
    _play_out(b, np.random.default_rng(9))
    assert a.history == b.history and a.score == b.score


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_state_pickles(variant):
    rng = np.random.default_rng(5)
    state = _advance(new_game(make_rules(variant)), rng, 4)
    loaded = pickle.loads(pickle.dumps(state))
    assert _snapshot(loaded) == _snapshot(state)
    assert loaded.rules == state.rules
    _play_out(loaded, np.random.default_rng(6))
    _play_out(state, np.random.default_rng(6))
    assert loaded.history == state.history and loaded.score == state.score


def test_chance_outcomes_sum_to_one():
    rng = np.random.default_rng(7)
    kinds = set()
    for variant, options in [("le_truc", {"first_dealer": "random"}),
                             ("truco_paulista", {"signals": {"mode": "free", "intercept": 0.25}}),
                             ("put_n", {"players": 6})]:
        state = new_game(make_rules(variant, **options))
        for _ in range(3000):
            if state.is_terminal():
                break
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                kinds.add(state.phase)
                assert outcomes
                assert abs(sum(p for _, p in outcomes) - 1.0) < 1e-12
                assert all(p > 0 for _, p in outcomes)
                assert len({o for o, _ in outcomes}) == len(outcomes)
            else:
                with pytest.raises(TrucError):
                    state.chance_outcomes()
            _step(state, rng)
    assert kinds == {"dealer", "deal", "intercept"}


def test_deal_outcomes_are_the_undrawn_cards():
    rules = make_rules("le_truc")
    state = new_game(rules)
    assert [c for c, _ in state.chance_outcomes()] == list(rules.deck)
    state.apply_action(rules.deck[5])
    assert [c for c, _ in state.chance_outcomes()] == [c for c in rules.deck if c != rules.deck[5]]
    with pytest.raises(IllegalActionError):
        state.apply_action(rules.deck[5])  # already drawn


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_terminal_has_no_legal_actions(variant, episode):
    state = _play_out(new_game(make_rules(variant), episode=episode), np.random.default_rng(8))
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert state.legal_actions() == []
    assert not state.is_chance_node()
    for action in (0, state.L.ACCEPT, state.L.size - 1):
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    if episode == "game":
        assert state.game_over and max(state.score) >= state.rules.target


def test_first_dealer_random_is_a_chance_node():
    for variant in VARIANTS:
        rules = make_rules(variant, first_dealer="random")
        state = new_game(rules)
        assert state.is_chance_node() and state.current_player() == CHANCE
        assert state.legal_actions() == []
        outcomes = state.chance_outcomes()
        assert [s for s, _ in outcomes] == list(range(rules.players))
        assert all(abs(p - 1.0 / rules.players) < 1e-12 for _, p in outcomes)
        state.apply_action(rules.players - 1)
        assert state.dealer == rules.players - 1
        assert state.phase == "deal" and state.is_chance_node()
        with pytest.raises(IllegalActionError):
            new_game(rules).apply_action(rules.players)  # not a seat


def test_sampled_first_dealer_covers_every_seat():
    rules = make_rules("put_n", players=5, first_dealer="random")
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        state = new_game(rules)
        state.apply_action(sample_chance(state, rng))
        seen.add(state.dealer)
    assert seen == set(range(5))


def test_unknown_variant_lists_the_variants():
    with pytest.raises(RulesError) as e:
        make_rules("belote")
    for name in VARIANTS:
        assert name in str(e.value)
    assert "belote" in str(e.value)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_unknown_option_lists_the_options(variant):
    with pytest.raises(RulesError) as e:
        make_rules(variant, colour="red")
    assert "colour" in str(e.value)
    for name in option_specs(variant):
        assert name in str(e.value)


def test_bad_option_values_say_what_is_allowed():
    with pytest.raises(RulesError, match="seven_ace"):
        make_rules("le_truc", ranking="eight_high")
    with pytest.raises(RulesError, match="1..1000"):
        make_rules("le_truc", target=0)
    with pytest.raises(RulesError, match="3"):
        make_rules("put_n", players=7)
    with pytest.raises(RulesError, match="senas"):
        make_rules("truco_paulista", signals={"mode": "smoke"})
    with pytest.raises(RulesError, match="partnership"):
        make_rules("truco_paulista", players=2, signals={"mode": "free"})
    with pytest.raises(RulesError, match="deck"):
        make_rules("le_truc", ranks=1)  # 4 cards cannot deal two hands of 3


def test_illegal_action_error_names_the_seat_and_the_legal_actions():
    rng = np.random.default_rng(3)
    state = _advance(new_game(make_rules("le_truc")), rng, 0)
    seat = state.current_player()
    illegal = next(a for a in range(state.L.size) if a not in state.legal_actions())
    with pytest.raises(IllegalActionError) as e:
        state.apply_action(illegal)
    msg = str(e.value)
    assert f"seat {seat}" in msg
    for a in state.legal_actions():
        assert state.action_to_string(a) in msg


def test_bad_episode_score_and_dealer_are_rejected():
    rules = make_rules("le_truc")
    with pytest.raises(TrucError, match="episode"):
        State(rules, episode="match")
    with pytest.raises(TrucError, match="target"):
        State(rules, score=[12, 0])
    with pytest.raises(TrucError, match="score"):
        State(rules, score=[1, 2, 3])
    with pytest.raises(TrucError, match="dealer"):
        State(rules, dealer=2)


@pytest.mark.parametrize("config", LAYOUT_CONFIGS, ids=lambda c: c[0] + str(sorted(c[1])))
def test_action_layout_round_trips(config):
    variant, options = config
    rules = make_rules(variant, **options)
    layout = layout_of(rules)
    names = layout.names()
    assert len(names) == layout.size == len(set(names)), "action names must be unique"
    for a in range(layout.size):
        text = layout.to_string(a)
        assert layout.from_string(text) == a
        assert layout.from_string("  " + text.replace(" ", "   ") + " ") == a  # whitespace is free
    state = new_game(rules)
    assert all(state.string_to_action(state.action_to_string(a)) == a for a in range(layout.size))
    with pytest.raises(IllegalActionError):
        layout.to_string(layout.size)
    with pytest.raises(IllegalActionError):
        layout.to_string(-1)
    with pytest.raises(IllegalActionError) as e:
        layout.from_string("dance")
    assert "play" in str(e.value)
    assert layout_of(make_rules(variant, **options)) is layout  # cached per Rules


def test_layout_sections_follow_the_rules():
    names = set(layout_of(make_rules("le_truc")).names())
    assert {"raise", "accept", "refuse", "fold", "rest", "redeal", "play 7c", "play As"} <= names
    assert not any(n.startswith(("envido", "put", "signal", "slot", "give")) for n in names)
    names = set(layout_of(make_rules("truco_argentino", flor=True)).names())
    assert {"envido", "real_envido", "falta_envido", "flor", "play 1e", "play 12b"} <= names
    names = set(layout_of(make_rules("truco_paulista")).names())
    assert {"play slot 0", "play slot 2"} <= names
    names = set(layout_of(make_rules("put_4p")).names())
    assert {"put", "give 3c", "discard 4d"} <= names
    names = set(layout_of(make_rules("le_truc_4p")).names())
    assert {"signal none", "signal 7", "instruct none", "instruct high", "instruct low", "instruct A"} <= names


def _dealt(variant="le_truc", seed=0):
    s = new_game(make_rules(variant), episode="hand", dealer=0)
    rng = np.random.default_rng(seed)
    while s.is_chance_node():
        s.apply_action(sample_chance(s, rng))
    return s


@pytest.mark.parametrize("bad", [2.7, 2.0, "1", b"1", True, False, np.bool_(True), None, [1], np.float64(3.0)])
def test_apply_action_takes_integers_only(bad):
    s = _dealt()
    before = (list(s.history), s.legal_actions())
    with pytest.raises(IllegalActionError, match="an action is an integer index"):
        s.apply_action(bad)
    assert (s.history, s.legal_actions()) == before  # nothing was played
    chance = new_game(make_rules("le_truc"), episode="hand", dealer=0)
    with pytest.raises(IllegalActionError, match="an action is an integer index"):
        chance.apply_action(bad)


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8])
def test_apply_action_takes_python_and_numpy_integers(kind):
    s = _dealt()
    a = s.legal_actions()[0]
    s.apply_action(kind(a))
    assert s.history[-1][1] == a and type(s.history[-1][1]) is int


@pytest.mark.parametrize("dtype", [np.float64, np.bool_])
def test_vector_env_step_takes_integer_actions_only(dtype):
    from truc_env.batch.vector import VectorEnv

    env = VectorEnv("le_truc", num_envs=2, seed=0, backend="loop")
    first = env.reset(seed=0)
    actions = np.array([np.flatnonzero(m)[0] for m in first.mask])
    with pytest.raises(IllegalActionError, match="integer ids"):
        env.step(actions.astype(dtype))
    env.step(actions)


def test_truc_rules_lists_the_actions():
    text = layout_of(make_rules("truco_argentino", players=2, flor=True)).describe()
    assert "flor            47       sing flor: compulsory" in text and "con flor quiero" in text
    text = layout_of(make_rules("truco_mineiro", ladder="mineiro")).describe()
    assert "decline the hand at 10 (opponents score 2)" in text and "flor" not in text
