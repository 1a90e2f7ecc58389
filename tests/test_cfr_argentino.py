"""Heads-up Argentine truco on the public tree: the envido announcement as a public branch, and flor.

The envido result (who holds the best points, and how many) is announced; on the public tree it is
a node whose branches narrow both seats' hands. Flor is compulsory, so singing it (or not) is
public too: it narrows the actor's hands, and whether the other seat holds a flor is a branch. Checks: hands walked through the engine and through
the tree pay the same and stay in the hand sets; our CFR+ gives OpenSpiel's exploitability; the
``cfr:`` agent plays Argentine hands from its strategy file.
"""

import json

import numpy as np
import pytest
from cfr_helpers import save_solved, walk_hand

from agents.cfr.solver import PublicTreeSolver
from agents.cfr.strategy import load_strategy
from agents.cfr.tree import CHILD, NATURE, build_tree, hand_envido, is_reveal
from truc_env import TrucError, make_rules
from truc_env.game.engine import State, sample_chance

TINY = {"players": 2, "ranks": 1, "hand_size": 1, "max_raises": 1}
TWO = {"players": 2, "ranks": 1, "hand_size": 2}


def _walk(tree, rules, rng, hands=300):
    """Random hands through the engine and the tree, the dealt hands checked to stay in the hand sets
    and the announced holder to hold the announced points; returns how many crossed an announcement."""
    ab = tree.abstraction
    values = hand_envido(ab)
    crossed = 0
    for _ in range(hands):
        s = State(rules, episode="hand", dealer=tree.dealer, score=list(tree.score))
        while s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
        dealt = [ab.hand_of_cards(s.dealt_hands[q]) for q in range(2)]

        def check(node, state, dealt=dealt):
            for q in range(2):  # the dealt hands are among the hands the public actions allow
                assert dealt[q] in tree.hand_set(tree.hs[node, q])
            if tree.actor[node] == NATURE:
                holder, points = state.env_result
                assert values[dealt[holder]] == points

        crossed += walk_hand(tree, s, rng, on_node=check)
    return crossed


@pytest.fixture(scope="module")
def two_tree():
    """The public tree of 2-card hands with two truco raises, built once (about 10 CPU-s): the two tests
    that read it share it (neither changes it)."""
    rules = make_rules("truco_argentino", **TWO, max_raises=2)
    return rules, build_tree(rules)


def test_envido_announcement_narrows_hands_and_leaves_pay_what_the_engine_pays(two_tree):
    rules, tree = two_tree
    assert tree.size()["announcement_nodes"] > 0
    assert _walk(tree, rules, np.random.default_rng(3), 400) > 20


def test_announcements_from_another_score_and_dealer():
    """At 27-25 an accepted envido can end the game: leaves under the announcement; seat 1 deals."""
    rules = make_rules("truco_argentino", **TINY)
    tree = build_tree(rules, dealer=1, score=(27, 25))
    nature = np.flatnonzero(tree.actor == NATURE)
    leaves = [e for n in nature for e in range(tree.act_start[n], tree.act_start[n + 1]) if tree.kind[e] != CHILD]
    assert leaves
    assert _walk(tree, rules, np.random.default_rng(4), 400) > 20
    solver = PublicTreeSolver(tree, "dcfr")
    solver.iterate(30)
    assert solver.exploitability() < 0.1


def test_envido_points_of_hands():
    """20 + the two highest pips of a suit pair (figures count 0), else the highest pip."""
    rules = make_rules("truco_argentino", players=2, ranks=4, hand_size=2)
    tree_ab = build_tree(make_rules("truco_argentino", **TINY)).abstraction
    assert sorted(set(hand_envido(tree_ab))) == [1, 3, 7]
    from agents.cfr.abstraction import make_abstraction

    ab = make_abstraction(rules)
    fam = rules.family
    values = hand_envido(ab)
    for cards, expected in ((("7e", "1e"), 28), (("12e", "3e"), 23), (("12o", "3c"), 3), (("12o", "12c"), 0)):
        assert values[ab.hand_of_cards([fam.parse(c) for c in cards])] == expected


@pytest.mark.slow  # about a minute: OpenSpiel's Python CFR+ and best response
@pytest.mark.parametrize("iterations", [3])
def test_openspiel_cfr_plus_gives_the_same_exploitability_with_envido(iterations):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr, exploitability

    import truc_env.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_truc", {"variant": "truco_argentino", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(TINY)})
    theirs = cfr.CFRPlusSolver(game)
    ours = PublicTreeSolver(build_tree(make_rules("truco_argentino", **TINY)), "cfr+")
    for _ in range(iterations):
        theirs.evaluate_and_update_policy()
        ours.iterate(1)
        assert exploitability.exploitability(game, theirs.average_policy()) == pytest.approx(
            ours.exploitability(), abs=1e-6)


@pytest.mark.slow  # about a minute: OpenSpiel's Python best response over every deal (the envido walks stay in the fast suite)
def test_openspiel_exploitability_of_our_argentine_strategy_equals_ours(tmp_path):
    _openspiel_agrees(tmp_path, build_tree(make_rules("truco_argentino", **TINY)), TINY, 40)


def _openspiel_agrees(tmp_path, tree, options, iterations):
    """OpenSpiel's exploitability of our exported strategy is the solver's own."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401
    from agents.cfr.openspiel_export import to_tabular_policy

    solver = PublicTreeSolver(tree, "dcfr")
    solver.iterate(iterations)
    path = save_solved(tmp_path, tree, solver, "arg.npz")
    game = pyspiel.load_game("python_truc", {"variant": "truco_argentino", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(options)})
    pol = to_tabular_policy(game, load_strategy(path))
    assert exploitability.exploitability(game, pol) == pytest.approx(solver.exploitability(), abs=1e-5)


def test_cfr_agent_reads_envido_announcements(tmp_path, two_tree):
    """Every decision of whole Argentine hands is found in the strategy, after announcements too."""
    from agents.cfr import load_agent

    rules, tree = two_tree
    solver = PublicTreeSolver(tree, "cfr+")
    solver.iterate(3)
    agent = load_agent(save_solved(tmp_path, tree, solver, "arg.npz"), rules, seed=0)
    rng = np.random.default_rng(5)
    announced = []
    for _ in range(200):
        _agent_plays(agent, State(rules, episode="hand", dealer=int(rng.integers(2))), rng, lambda text: announced.append(
            "envido " in text and any(is_reveal(x) for x in agent.strategy.key_of(text).actions)))
    announced = sum(announced)
    assert agent.misses == 0 and agent.decisions > 500
    assert announced > 0


def test_full_deck_is_refused_as_too_large():
    with pytest.raises(TrucError, match="does not fit.*ranks and hand_size"):
        build_tree(make_rules("truco_argentino", players=2))


def test_random_agent_is_the_uniform_strategy_with_envido():
    """``truc exploitability`` on Argentine: engine states per information set reproduce the announcements."""
    from agents.players.random import RandomAgent
    from train.eval import exploitability as pt

    rules = make_rules("truco_argentino", **TINY)
    solver = PublicTreeSolver(build_tree(rules))
    uniform = solver.sigma.copy()
    result = pt.policy_exploitability(RandomAgent(), rules, log=lambda m: None)
    assert result["exploitability"] == pytest.approx(solver.exploitability(uniform), abs=1e-9)
    assert result["exploitability"] > 1.0


def test_cfr_agent_converts_back_to_its_own_exploitability_with_envido(tmp_path):
    from agents.cfr import load_agent
    from train.eval import exploitability as pt

    rules = make_rules("truco_argentino", **TINY)
    tree = build_tree(rules)
    solver = PublicTreeSolver(tree, "dcfr")
    solver.iterate(30)
    agent = load_agent(save_solved(tmp_path, tree, solver, "arg.npz"), rules)
    result = pt.policy_exploitability(agent, rules, log=lambda m: None)
    assert result["exploitability"] == pytest.approx(solver.exploitability(), abs=1e-5)
    assert agent.misses == 0


# --- flor: 3-card hands, so the 8-card deck of the highest rank (one flor: 1e 7e 3e) -------------------

FLOR = {"players": 2, "ranks": 1, "hand_size": 3, "flor": True, "envido": False, "max_raises": 0}
FLOR_HAND = ["1e", "7e", "3e"]


def _deal(state, hands):
    """Deal these hands (card texts per seat) one card at a time, from seat dealer + 1."""
    fam = state.rules.family
    order = [(state.dealer + 1 + k) % 2 for k in range(2)]
    for i in range(3):
        for seat in order:
            state.apply_action(fam.parse(hands[seat][i]))
    return state


@pytest.fixture(scope="module")
def flor_tree():
    return build_tree(make_rules("truco_argentino", **FLOR))


def test_flor_is_public_hands_narrow_and_leaves_pay_what_the_engine_pays(flor_tree):
    from agents.cfr.tree import FLOR_HELD, hand_flor, is_flor_held

    tree, rules = flor_tree, flor_tree.rules
    ab = tree.abstraction
    flor = hand_flor(ab)
    assert sum(1 for v in flor if v) == 1 and max(flor) == 20 + 1 + 7 + 3
    L = State(rules).L
    assert np.any(tree.label == L.FLOR) and np.any((tree.label >= FLOR_HELD) & (tree.label < FLOR_HELD + 4))
    rng = np.random.default_rng(7)
    sung = held = 0
    for k in range(240):
        s = State(rules, episode="hand", dealer=0)
        if k % 3 == 0:  # a flor for one seat, the rest of the deck at random for the other
            q = int(rng.integers(2))
            rest = [rules.family.format(c) for c in rng.permutation(
                [c for c in rules.deck if rules.family.format(c) not in FLOR_HAND])[:3]]
            _deal(s, [FLOR_HAND, rest] if q == 0 else [rest, FLOR_HAND])
        while s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
        dealt = [ab.hand_of_cards(s.dealt_hands[q]) for q in range(2)]
        path = []

        def check(node, state, dealt=dealt, path=path):
            for q in range(2):  # the dealt hands are among the hands the public actions allow
                assert dealt[q] in tree.hand_set(tree.hs[node, q])
            path.append(node)

        walk_hand(tree, s, rng, on_node=check)
        sung += bool(s.flor_seats)
        held += any(is_flor_held(x) for n in path for x in tree.label[tree.act_start[n]:tree.act_start[n + 1]])
        if any(flor[h] for h in dealt):
            assert s.flor_seats or s.hand_points == [0, 1] or s.hand_points == [1, 0]  # sang, or folded first
    assert sung >= 40 and held >= 20


def test_flor_holder_information_sets_offer_only_flor_and_fold(flor_tree):
    from agents.cfr.tree import hand_flor

    tree = flor_tree
    solver = PublicTreeSolver(tree, "cfr+")
    L = State(tree.rules).L
    flor = hand_flor(tree.abstraction)
    root_hands = tree.hand_set(tree.hs[0, tree.actor[0]])
    for j, h in enumerate(root_hands):
        i = solver.iset_off[0] + j
        labels = set(tree.label[tree.act_start[0] + solver.slot_k[solver.iset_start[i]:solver.iset_start[i + 1]]])
        assert (labels == {L.FLOR, L.FOLD}) if flor[h] else (L.FLOR not in labels and L.FOLD in labels)


def _agent_plays(agent, s, rng, on_text=None):
    """Play the hand of ``s`` to its end, the agent choosing from its info-state string."""
    from truc_env.game.observe import info_state_string

    while not s.is_terminal():
        if s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
            continue
        mask = np.zeros(s.L.size, dtype=bool)
        mask[s.legal_actions()] = True
        text = info_state_string(s, s.current_player())
        if on_text is not None:
            on_text(text)
        s.apply_action(agent.act({"info_state": text, "action_mask": mask}, mask))
    return s


@pytest.mark.slow  # OpenSpiel's Python best response over the 560 deals of 3-card hands: many minutes
def test_openspiel_exploitability_of_our_flor_strategy_equals_ours(tmp_path, flor_tree):
    _openspiel_agrees(tmp_path, flor_tree, FLOR, 20)


def test_cfr_agent_plays_flor_hands_from_its_strategy(tmp_path, flor_tree):
    from agents.cfr import load_agent

    rules = flor_tree.rules
    solver = PublicTreeSolver(flor_tree, "cfr+")
    solver.iterate(3)
    agent = load_agent(save_solved(tmp_path, flor_tree, solver, "flor.npz"), rules, seed=0)
    rng = np.random.default_rng(8)
    sung = 0
    for k in range(150):
        s = State(rules, episode="hand", dealer=int(rng.integers(2)))
        if k % 2 == 0:
            rest = ["3o", "3c", "3b"] if k % 4 else ["1b", "7o", "3o"]
            _deal(s, [FLOR_HAND, rest] if k % 3 else [rest, FLOR_HAND])
        sung += bool(_agent_plays(agent, s, rng).flor_seats)
    assert agent.misses == 0 and sung > 30
