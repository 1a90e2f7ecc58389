"""Helpers of the CFR tests: a random hand walked through the engine and a public tree; a solver saved."""

from __future__ import annotations

import numpy as np

from agents.cfr.strategy import save_table
from agents.cfr.tree import CHILD, NATURE, PLAY, branch_label
from truc_env.game.engine import sample_chance


def walk_hand(tree, state, rng, card_class=None, on_node=None) -> int:
    """Play ``state`` to the end of its hand with random legal actions, following the tree edge by edge.

    Checks that the tree's actor is the engine's at every decision and that the leaf pays what the
    engine pays. At an announcement the branch is the one the engine announced (or took). ``card_class``
    keys card plays (default: the tree's abstraction; Paulista: that of the vira turned);
    ``on_node(node, state)`` is called at every node reached. Returns the announcements crossed.
    """
    cls = tree.abstraction.card_class if card_class is None else card_class
    node, crossed = 0, 0
    while True:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if on_node is not None:
            on_node(node, state)
        if tree.actor[node] == NATURE:
            lab = branch_label(tree.label[tree.act_start[node]:tree.act_start[node + 1]], state, tree.dealer)
            crossed += 1
        else:
            assert tree.actor[node] == state.current_player()
            a = int(rng.choice(state.legal_actions()))
            L = state.L
            lab = PLAY + cls[L.deck[a - L.play]] if L.play <= a < L.play + len(L.deck) else a
            state.apply_action(a)
        lo, hi = tree.act_start[node], tree.act_start[node + 1]
        (e,) = np.nonzero(tree.label[lo:hi] == lab)[0] + lo
        if tree.kind[e] != CHILD:
            assert state.is_terminal()
            assert tree.util[e] == state.returns()[0]
            return crossed
        node = int(tree.child[e])


def save_solved(tmp_path, tree, solver, name="s.npz") -> str:
    """The solver's average strategy as a strategy file (one part, ``main``); returns its path."""
    path = str(tmp_path / name)
    save_table(path, tree, solver)
    return path


def solved_strategy(tmp_path, rules, iterations: int) -> tuple[str, float]:
    """A CFR+ strategy file of ``rules``' public tree after ``iterations`` and its exact exploitability
    (the negative control of the lower bounds)."""
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    tree = build_tree(rules)
    solver = PublicTreeSolver(tree)
    solver.iterate(iterations)
    path = str(tmp_path / "s.npz")
    return path, save_table(path, tree, solver)


def openspiel_policy(game, probs_of):
    """An OpenSpiel ``TabularPolicy`` of ``game`` that plays ``probs_of(state, player)`` (probabilities over
    the game's actions), asked once per information state, every state of the game visited."""
    from open_spiel.python import policy as os_policy

    pol = os_policy.TabularPolicy(game)
    seen = set()

    def visit(state):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for a, _ in state.chance_outcomes():
                visit(state.child(a))
            return
        p = state.current_player()
        key = state.information_state_string(p)
        if key not in seen:
            seen.add(key)
            pol.action_probability_array[pol.state_lookup[key]] = probs_of(state, p)
        for a in state.legal_actions():
            visit(state.child(a))

    visit(game.new_initial_state())
    assert len(seen) == len(pol.state_lookup)
    return pol
