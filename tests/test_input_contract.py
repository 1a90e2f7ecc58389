"""One input contract (truc_env/io/checks.py): every environment refuses the same seeds and actions alike.

The batched engine's tests here use its loop backend or fail before any kernel is built, so they
need no numba compile.
"""

from __future__ import annotations

from datetime import timedelta

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import truc_env  # noqa: F401  (registers the Gymnasium ids)
from truc_env.batch.vector import VectorEnv
from truc_env.envs.gym_env import SingleAgentEnv
from truc_env.envs.pettingzoo_env import raw_env
from truc_env.errors import IllegalActionError, RulesError, TrucError
from truc_env.game.engine import new_game
from truc_env.game.rules import make_rules
from truc_env.io.checks import MAX_SEED, check_action, check_seed

BAD_SEEDS = [-1, -2**63, 2**63, 2**64, 1.5, 2.0, True, False, np.bool_(True), "3", None.__class__, [1], np.float64(2)]
BAD_ACTIONS = [1.5, 2.0, "0", b"1", True, False, np.bool_(True), None, [1], np.float64(3.0), -1, -2, -100,
               2**32 + 8, 2**40, 10**30]


def _aec():
    e = raw_env(variant="le_truc")
    e.reset(seed=0)
    return e


def _single():
    e = SingleAgentEnv("le_truc")
    e.reset(seed=0)
    return e


def _vector():
    return VectorEnv("le_truc", num_envs=2, seed=0, backend="loop")


def _message(fn):
    with pytest.raises(TrucError) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_every_env_refuses_the_same_bad_seed_with_the_same_message(seed):
    expected = _message(lambda: check_seed(seed))
    assert expected[0] is RulesError
    assert _message(lambda: raw_env(variant="le_truc").reset(seed=seed)) == expected
    assert _message(lambda: SingleAgentEnv("le_truc").reset(seed=seed)) == expected
    assert _message(lambda: _vector().reset(seed=seed)) == expected
    assert _message(lambda: VectorEnv("le_truc", num_envs=2, seed=seed, backend="loop")) == expected


def test_vector_env_reset_seed_minus_one_two_to_the_64_and_one_point_five_are_refused():
    env = _vector()
    for seed in (-1, 2**64, 1.5):
        with pytest.raises(RulesError, match="a seed is an integer in 0.."):
            env.reset(seed=seed)
    env.reset(seed=MAX_SEED)  # the largest seed is a seed
    env.reset(seed=np.uint64(7))


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_every_env_refuses_the_same_bad_action_with_the_same_message(action):
    aec, single = _aec(), _single()
    size = aec.layout.size
    _, expected = _message(lambda: check_action(action, size))
    assert _message(lambda: aec.step(action)) == (IllegalActionError, f"{aec.agent_selection}: {expected}")
    assert _message(lambda: single.step(action)) == (IllegalActionError, expected)
    state = aec.state_
    if not (isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))):
        # the engine checks the kind (the range is its legality check, which names the legal actions)
        _, kind_only = _message(lambda: check_action(action))
        assert _message(lambda: state.apply_action(action)) == (IllegalActionError, kind_only)


def test_single_agent_env_step_one_point_five_or_a_string_is_a_type_error_not_an_illegal_move():
    env = _single()
    for bad in (1.5, "0"):
        with pytest.raises(IllegalActionError, match="an action is an integer index"):
            env.step(bad)
    legal = int(np.flatnonzero(env.action_masks())[0])
    _, reward, _, _, info = env.step(np.int64(legal))
    assert "illegal_action" not in info


@pytest.mark.parametrize("value", [-2, -100, -2**31, 2**32 + 8, 2**40, 2**63 - 1])
def test_vector_env_step_refuses_every_value_but_minus_one_outside_the_actions(value):
    env = _vector()
    env.reset(seed=0)
    legal = np.array([np.flatnonzero(m)[0] for m in env._mask])
    actions = np.array([legal[0], value], dtype=np.int64)
    with pytest.raises(IllegalActionError, match=rf"game 1: action {value} is invalid; .*or -1 to let the game wait"):
        env.step(actions)
    env.step(np.array([legal[0], -1]))  # -1 and only -1 waits


def test_vector_env_step_two_to_the_32_plus_8_is_not_played_as_action_8():
    env = _vector()
    env.reset(seed=0)
    before = env.deck.copy()
    with pytest.raises(IllegalActionError, match="action 4294967304 is invalid"):
        env.step(np.array([2**32 + 8, -1]))
    with pytest.raises(IllegalActionError, match="action 1099511627776 is invalid"):
        env.step(np.array([2**40, -1]))  # the error reports the action as given
    with pytest.raises(IllegalActionError, match="integer ids"):
        env.step(np.array([2**70, -1], dtype=object))
    assert (env.deck == before).all()  # nothing was played


def test_vector_env_num_envs_ten_to_the_twelve_is_refused_with_the_figure_and_the_option():
    with pytest.raises(TrucError, match=r"num_envs=1,000,000,000,000 needs about [\d,.]+ GiB.*lower num_envs"):
        VectorEnv("le_truc", num_envs=10**12)  # refused before any kernel is built or array allocated
    with pytest.raises(TrucError, match="num_envs must be a positive integer"):
        VectorEnv("le_truc", num_envs=True)


def test_openspiel_refuses_the_same_out_of_range_actions():
    pyspiel = pytest.importorskip("pyspiel")
    import truc_env.envs.openspiel_game  # noqa: F401

    state = pyspiel.load_game("python_truc").new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    size = len(state.legal_actions_mask())
    with pytest.raises(IllegalActionError, match="cannot"):
        state.apply_action(size + 5)  # out of the layout: the engine's legality check names the legal ones
    with pytest.raises(TypeError):
        state.apply_action(1.5)  # pyspiel's own binding refuses a float before Python sees it
    with pytest.raises(pyspiel.SpielError):
        state.apply_action(-1)  # and -1 (kInvalidAction)


def test_gymnasium_make_le_truc_with_variant_put_is_refused():
    with pytest.raises(TrucError, match="variant='put' contradicts the registered id"):
        gymnasium.make("truc/LeTruc-v0", variant="put")
    env = gymnasium.make("truc/LeTruc-v0", variant="le_truc")  # the id's own variant is fine
    assert env.unwrapped.aec.rules.variant == "le_truc"
    assert gymnasium.make("truc/Put-v0").unwrapped.aec.rules.variant == "put"
    assert gymnasium.make("truc/LeTruc-v0", render_mode="ansi").render_mode == "ansi"


# ---------------------------------------------------------------------- fuzzed: the three APIs agree
anything = st.one_of(st.integers(-10**20, 10**20), st.integers(-3, 60), st.floats(allow_nan=True), st.booleans(),
                     st.none(), st.text(max_size=4), st.integers(-3, 60).map(np.int64),
                     st.integers(0, 60).map(np.uint8), st.floats(0, 60).map(np.float32),
                     st.integers(0, 60).map(np.array))
FAST = dict(max_examples=80, deadline=timedelta(seconds=10), derandomize=True,
            suppress_health_check=[HealthCheck.too_slow])


def _agree(value):
    aec, single = _aec(), _single()
    outcomes = []
    for i, step in enumerate((aec.step, single.step)):
        try:
            step(value)
            outcomes.append("ok")
        except IllegalActionError as e:
            outcomes.append(str(e).split(": ", 1)[-1] if i == 0 else str(e))  # AEC: after the agent's name
    # a value outside the contract is refused by both with one message; a legal or merely illegal id is the
    # engine's question (the AEC env raises on an illegal one, the Gymnasium env penalises it)
    invalid = ["is invalid" in o for o in outcomes]
    assert invalid[0] == invalid[1] and (not invalid[0] or outcomes[0] == outcomes[1]), (value, outcomes)
    vec = _vector()
    vec.reset(seed=0)
    try:
        vec.step(np.array([value, -1]) if np.ndim(value) == 0 else value)
    except TrucError:
        pass


test_fuzz_the_env_apis_agree = settings(**FAST)(given(value=anything)(_agree))
test_fuzz_the_env_apis_agree_many = pytest.mark.slow(settings(**{**FAST, "max_examples": 2000})(
    given(value=anything)(_agree)))


def test_rules_check_seed_still_answers():
    from truc_env.game import rules

    assert rules.check_seed(5) == 5 and rules.MAX_SEED == MAX_SEED
    assert new_game(make_rules("le_truc")).is_chance_node()


def _seeds_agree(value):
    outcomes = []
    for reset in (lambda s: raw_env(variant="le_truc").reset(seed=s), lambda s: SingleAgentEnv("le_truc").reset(seed=s),
                  lambda s: _vector().reset(seed=s)):
        try:
            reset(value)
            outcomes.append("ok")
        except RulesError as e:
            outcomes.append(str(e))
    assert len(set(outcomes)) == 1, (value, outcomes)


test_fuzz_the_env_apis_agree_on_seeds = settings(**{**FAST, "max_examples": 40})(given(value=anything)(_seeds_agree))
test_fuzz_the_env_apis_agree_on_seeds_many = pytest.mark.slow(settings(**{**FAST, "max_examples": 1000})(
    given(value=anything)(_seeds_agree)))


def test_gymnasium_vector_env_step_refuses_floats_and_wrapping_ints():
    from truc_env.envs.gym_vector import TrucVectorEnv

    env = TrucVectorEnv("le_truc", num_envs=2, seed=0, backend="loop")
    _, info = env.reset(seed=0)
    legal = np.array([np.flatnonzero(m)[0] for m in info["action_mask"]])
    with pytest.raises(IllegalActionError, match="integer ids"):
        env.step(legal + 0.7)  # was cast to int32: 2.7 played as 2
    with pytest.raises(IllegalActionError, match="action 4294967304 is invalid"):
        env.step(np.array([2**32 + 8, legal[1]]))  # was wrapped to action 8
    env.step(legal)


def test_the_episode_driver_refuses_a_float_action_rather_than_truncating_it():
    """Episode.play hands the action to the engine's contract: 2.7 is refused, numpy integers are played."""
    import numpy as np

    from truc_env.errors import IllegalActionError
    from truc_env.game.episode import Dealer, Episode
    from truc_env.game.rules import make_rules

    rules = make_rules("le_truc")
    ep = Episode(__import__("truc_env").new_game(rules), Dealer(rules, np.random.default_rng(0)))
    ep.to_decision()
    legal = ep.state.legal_actions()
    with pytest.raises(IllegalActionError, match="invalid"):
        ep.play(legal[0] + 0.7)
    ep.play(np.int64(legal[0]))  # a numpy integer is an integer id
    assert ep.state.history[-1][1] == legal[0]
