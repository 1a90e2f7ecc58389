"""The numba unfolding of the memo gives exactly the arrays of the Python one (agents.cfr.unfold)."""

from dataclasses import fields

import numpy as np
import pytest

from agents.cfr.solver import PublicTreeSolver
from agents.cfr.tree import CHILD, LEAF, PLAY, REDEAL, STUCK, PublicTree, expand_situations, unfold, vira_subgames
from agents.cfr.unfold import REVEAL, memo_arrays, unfold_fast
from truc_env.game.rules import make_rules


def _memo(rules, vira=None, abstraction="strength"):
    return expand_situations(rules, 0, (0, 0), abstraction, vira)


def _assert_same(memo):
    slow = unfold(*memo)
    fast = unfold_fast(*memo)
    assert fast is not None
    assert set(fast) - set(slow) <= {"trans1", "node_sit"}
    # each node unfolds one situation: its actor and its number of (non-STUCK) edges are the situation's
    ab, root, sit_actor, sit_edges = memo
    node_sit = fast["node_sit"]
    assert node_sit[0] == root
    assert np.array_equal(fast["actor"], np.asarray(sit_actor, dtype=np.int8)[node_sit])
    assert np.all(np.diff(fast["act_start"]) >= np.array([len(e) for e in sit_edges])[node_sit])
    for key, want in slow.items():
        got = fast[key]
        if key == "hs_counts":
            assert got == want
        else:
            assert got.dtype == want.dtype and got.shape == want.shape, key
            assert np.array_equal(got, want), key
    return fast


def _tree(rules, memo, arrays, vira=None):
    ab = memo[0]
    names = {f.name for f in fields(PublicTree)}
    arrays = {k: v for k, v in arrays.items() if k in names}
    return PublicTree(rules=rules, abstraction=ab, dealer=0, score=(0, 0), W=ab.deal_weights(),
                      situations=len(memo[2]), vira=-1 if vira is None else vira, **arrays)


def test_le_truc_same_arrays_with_redeal_and_without():
    arrays = _assert_same(_memo(make_rules("le_truc", redeal=False, hand_size=2, max_raises=3)))
    assert set(np.unique(arrays["kind"])) == {CHILD, LEAF}
    arrays = _assert_same(_memo(make_rules("le_truc", ranks=3, max_raises=2)))
    assert REDEAL in set(arrays["kind"].tolist())


def test_le_truc_concrete_cards_same_arrays():
    _assert_same(_memo(make_rules("le_truc", ranks=2, hand_size=2, redeal=False, max_raises=1), abstraction="none"))


def test_heads_up_paulista_every_vira_same_arrays():
    rules = make_rules("truco_paulista", players=2, ranks=4, hand_size=2, max_raises=2)
    for vira, _, _ in vira_subgames(rules):
        arrays = _assert_same(_memo(rules, vira))
        assert np.any(arrays["label"] == STUCK)  # one-card manilha classes: ruled-out hands


@pytest.mark.slow  # about 12 s: the heads-up Mineiro tree (the other unfoldings stay in the fast suite)
def test_heads_up_mineiro_stuck_leaves_same_arrays():
    memo = _memo(make_rules("truco_mineiro", players=2, ranks=3))
    arrays = _assert_same(memo)
    stuck = arrays["label"] == STUCK
    # the sizes counted on the memo, before unfolding: every node, every edge but the STUCK leaves
    assert memo_arrays(*memo[1:]).sizes() == (len(arrays["actor"]), int((~stuck).sum()))
    assert stuck.any() and np.all(arrays["kind"][stuck] == LEAF) and np.all(arrays["trans"][stuck] >= 0)


def test_put_same_arrays():
    arrays = _assert_same(_memo(make_rules("put", ranks=3)))
    assert np.any(arrays["label"] >= PLAY)


def test_solver_on_the_fast_tree_matches_build_tree():
    from agents.cfr.tree import build_tree

    rules = make_rules("truco_mineiro", players=2, ranks=2, hand_size=2, max_raises=1)
    memo = _memo(rules)
    a = PublicTreeSolver(build_tree(rules), "dcfr")
    b = PublicTreeSolver(_tree(rules, memo, unfold_fast(*memo)), "dcfr")
    assert a.tree.size() == b.tree.size()
    for _ in range(3):
        a.iterate(1)
        b.iterate(1)
        assert a.exploitability() == b.exploitability()


def test_announcements_fall_back_to_the_python_unfold():
    ab, root, actor, edges = _memo(make_rules("le_truc", ranks=2, hand_size=1, redeal=False, max_raises=1))
    edges = [list(e) for e in edges]
    lab, c, k, child, u = edges[root][0]
    edges[root][0] = (REVEAL + 3, -1, k, child, u)
    assert unfold_fast(ab, root, actor, edges) is None


@pytest.mark.parametrize("bad", [REVEAL - 1, STUCK])
def test_labels_outside_the_announcements_are_unfolded(bad):
    ab, root, actor, edges = _memo(make_rules("le_truc", ranks=2, hand_size=1, redeal=False, max_raises=1))
    edges = [list(e) for e in edges]
    lab, c, k, child, u = edges[root][0]
    edges[root][0] = (bad, -1, k, child, u)
    assert _assert_same((ab, root, actor, edges))["label"][0] == bad


def test_envido_announcements_are_left_to_the_python_unfold():
    rules = make_rules("truco_argentino", players=2, ranks=1, hand_size=1, max_raises=1)
    assert unfold_fast(*_memo(rules)) is None
    # without envido the same deck unfolds here, identically
    _assert_same(_memo(make_rules("truco_argentino", players=2, ranks=2, hand_size=1, max_raises=1, envido=False)))
