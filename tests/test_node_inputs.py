"""The network inputs of the public nodes, one engine state per situation, equal the walk of one engine
state per node (train.eval.node_inputs), on every input kind and tree part they apply to."""

import numpy as np
import pytest

from agents.cfr.tree import build_tree
from train.eval import node_inputs as ni
from truc_env.game.rules import make_rules

KEYS = ("indptr", "indices", "data", "used", "own")


def _assert_same(a, b):
    for k in KEYS:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("variant, options, features", [
    ("le_truc", {"ranks": 4, "hand_size": 2}, "observation"), ("le_truc", {"ranks": 4, "hand_size": 2}, "observation+strength"),
    ("le_truc", {"ranks": 4}, "observation+strength"), ("put", {"ranks": 5}, "observation"),
    ("truco_mineiro", {"players": 2, "ranks": 4, "hand_size": 2}, "observation+strength")])
def test_inputs_by_situation_equal_the_walk_of_every_node(variant, options, features):
    rules = make_rules(variant, **options)
    tree = build_tree(rules, 0, (0, 0), "strength")
    assert tree.node_sit is not None and tree.situations < tree.n_nodes
    _assert_same(ni._rows_of(ni._by_situation(tree, rules, features, False, False), tree.actor), ni._walk_nodes(tree, rules, features, False, False))


def test_inputs_after_a_redeal_equal_the_walk():
    rules = make_rules("le_truc", ranks=4, hand_size=2)
    tree = build_tree(make_rules("le_truc", ranks=4, hand_size=2, redeal=False), 0, (0, 0), "strength")
    for features in ("observation", "observation+strength"):
        _assert_same(ni._rows_of(ni._by_situation(tree, rules, features, True, False), tree.actor), ni._walk_nodes(tree, rules, features, True, False))


def test_a_wrong_situation_changes_the_inputs():
    """Negative control: with one node's situation swapped for another's, the inputs differ."""
    rules = make_rules("le_truc", ranks=4, hand_size=2)
    tree = build_tree(rules, 0, (0, 0), "strength")
    good = ni.node_inputs(tree, rules, "observation", False)
    node_sit = tree.node_sit.copy()
    deep = int(np.flatnonzero(node_sit != node_sit[0])[-1])
    node_sit[deep] = node_sit[0]
    tree.node_sit = node_sit
    bad = ni.node_inputs(tree, rules, "observation", False)
    assert not all(np.array_equal(good[k], bad[k]) for k in KEYS)


def test_inputs_read_back_from_the_cache_equal_the_built_ones(tmp_path):
    from train.eval.tree_cache import cached_tree

    rules = make_rules("le_truc", ranks=4, hand_size=2)
    cached_tree(rules, cache_dir=str(tmp_path))
    tree = cached_tree(rules, cache_dir=str(tmp_path))  # read back: the situations with it
    assert tree.node_sit is not None and np.array_equal(tree.node_sit, build_tree(rules, 0, (0, 0), "strength").node_sit)
    built = ni.node_inputs(tree, rules, "observation+strength", False, str(tmp_path))
    assert len(list(tmp_path.glob("inputs-*.npz"))) == 1
    _assert_same(ni.node_inputs(tree, rules, "observation+strength", False, str(tmp_path)), built)
    _assert_same(built, ni._walk_nodes(tree, rules, "observation+strength", False, False))


def test_info_state_inputs_and_trees_without_situations_take_the_walk(monkeypatch):
    rules = make_rules("le_truc", ranks=4, hand_size=2)
    tree = build_tree(rules, 0, (0, 0), "strength")
    monkeypatch.setattr(ni, "_by_situation", lambda *a: pytest.fail("the walk was expected"))
    ni.node_inputs(tree, rules, "info_state", False)
    tree.node_sit = None
    ni.node_inputs(tree, rules, "observation", False)
