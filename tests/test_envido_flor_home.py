"""Envido and flor are decided once, in truc_env/game/hand_rules.py: the engine, the numba kernel and the CFR
public tree all call the same functions (issue 35).

For each envido / flor decision:

- the engine calls it: a spy in its place in ``truc_env.game.engine`` is called while Argentine hands are played
  (with deals that give both seats a flor, so flor against flor is reached);
- the public tree calls it: a spy in ``agents.cfr.tree`` (the hand points and ties the tree decides itself)
  or in the engine (the legality and settlement the tree takes from the engine states it expands) is
  called while the heads-up trees with envido and with flor are built;
- the kernel calls it: its compiled wrapper ``_name`` is the shared function itself, and the kernel's source
  calls the wrapper (numba's answers equal Python's on the function's whole domain:
  tests/test_hand_rules.py).

A tree that restates a decision leaves its spy silent (the negative control).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import agents.cfr.tree as tree_module
from truc_env import make_rules
from truc_env.game import calls, dealing, engine, hand_rules
from truc_env.game.engine import State

ROOT = Path(__file__).resolve().parents[1]
ENGINE = (engine, calls, dealing)  # the reference engine: State, its calls and its chance nodes
DECISIONS = ("envido_pip", "envido_score", "has_flor", "flor_score", "wins_announcement", "envido_open",
             "may_call_envido", "may_envido_on_truco", "may_raise_envido", "envido_stake", "envido_refused_stake",
             "must_sing", "flor_stake")
TWO_FLORS = (["1e", "7e", "3e"], ["4o", "5o", "6o"])


def _spy(monkeypatch, modules, name: str) -> list:
    """Calls of ``name`` from any of ``modules`` (a module or a tuple of them) that holds it."""
    seen: list = []
    for module in modules if isinstance(modules, tuple) else (modules,):
        if not hasattr(module, name):
            continue
        real = getattr(module, name)

        def spy(*args, real=real):
            seen.append(args)
            return real(*args)

        monkeypatch.setattr(module, name, spy)
    return seen


def _play_hands(rules, hands: int, seed: int) -> None:
    """Random legal play; every third hand deals both seats a flor (docs/rules.md §6)."""
    rng = np.random.default_rng(seed)
    fam = rules.family
    for k in range(hands):
        s = State(rules, episode="hand", dealer=k % 2)
        if k % 3 == 0:
            order = [(s.dealer + 1 + j) % 2 for j in range(2)]
            for i in range(3):
                for seat in order:
                    s.apply_action(fam.parse(TWO_FLORS[seat][i]))
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(engine.sample_chance(s, rng))
            else:
                legal = s.legal_actions()
                s.apply_action(int(legal[rng.integers(len(legal))]))


def test_the_decisions_are_the_shared_functions():
    assert all(callable(getattr(hand_rules, name)) for name in DECISIONS)
    held = set().union(*(vars(m) for m in ENGINE))
    assert set(DECISIONS) <= held, "the engine imports every envido and flor decision"


@pytest.mark.parametrize("name", DECISIONS)
def test_the_engine_calls_it(monkeypatch, name):
    calls = _spy(monkeypatch, ENGINE, name)
    _play_hands(make_rules("truco_argentino", players=2, flor=True), hands=120, seed=5)
    _play_hands(make_rules("truco_argentino", players=2), hands=60, seed=6)
    assert calls, f"engine.py never called hand_rules.{name}"


TREES = ({"players": 2, "ranks": 1, "hand_size": 1, "max_raises": 1},
         {"players": 2, "ranks": 1, "hand_size": 3, "flor": True, "envido": False, "max_raises": 0})


@pytest.mark.parametrize("name", DECISIONS)
def test_the_tree_calls_it(monkeypatch, name):
    calls = _spy(monkeypatch, (tree_module,) if hasattr(tree_module, name) else ENGINE, name)
    for options in TREES:
        tree_module.build_tree(make_rules("truco_argentino", **options))
    assert calls, f"agents/cfr/tree.py never called hand_rules.{name} (itself or through the engine)"


def test_a_tree_that_restated_envido_points_is_caught(monkeypatch):
    """Negative control: a tree that computed envido points itself leaves the spy silent."""
    calls = _spy(monkeypatch, tree_module, "envido_score")

    def restated(ab):
        card_of = {k: c for c, k in ab.card_class.items()}
        return [engine.envido_points([card_of[k] for k in hand], ab.rules.family) for hand in ab.hands]

    monkeypatch.setattr(tree_module, "hand_envido", restated)
    tree_module.build_tree(make_rules("truco_argentino", **TREES[0]))
    assert not calls


@pytest.mark.parametrize("name", DECISIONS)
def test_the_kernel_compiles_and_calls_it(name):
    pytest.importorskip("numba")
    from truc_env.batch import _vector_kernels as K

    wrapper = getattr(K, "_" + name)
    assert wrapper.py_func is getattr(hand_rules, name), f"the kernel compiles its own {name}"
    source = (ROOT / "truc_env/batch/_vector_kernels.py").read_text(encoding="utf-8")
    assert re.search(rf"\b_{name}\(", source.split(f"_{name} = _shared(", 1)[1]), f"the kernel never calls _{name}"


def test_envido_points_are_the_book_rule():
    """docs/rules.md §6 stated plainly, on every one to three cards of the Spanish deck."""
    import itertools

    r = make_rules("truco_argentino", players=2)
    fam = r.family

    def book(cards):
        pips: dict = {}
        for c in cards:
            n = int(fam.rank_of(c))
            pips.setdefault(fam.suit_of(c), []).append(n if n <= 7 else 0)
        return max(20 + sum(sorted(v)[-2:]) if len(v) >= 2 else v[0] for v in pips.values())

    for k in (1, 2, 3):
        for cards in itertools.combinations(r.deck, k):
            assert engine.envido_points(list(cards), fam) == book(cards), [fam.format(c) for c in cards]


def test_envido_values_are_the_docs_table():
    """docs/rules.md §6: accepted / refused values of each chain, falta the leader's lack."""
    E, R, F = hand_rules.ENVIDO, hand_rules.REAL_ENVIDO, hand_rules.FALTA_ENVIDO

    def value(chain, target=30, top=0):
        v = 0
        for kind in chain:
            v = hand_rules.envido_stake(v, kind, target, top)
        return v

    table = {(E,): (2, 1), (E, E): (4, 2), (R,): (3, 1), (E, R): (5, 2), (E, E, R): (7, 4)}
    for chain, (accepted, refused) in table.items():
        assert value(chain) == accepted
        assert hand_rules.envido_refused_stake(value(chain[:-1])) == refused
    assert value((E, R, F), target=30, top=22) == 8
    assert [hand_rules.flor_stake(c, a) for c, a in ((False, False), (True, True), (True, False))] == [3, 4, 3]
