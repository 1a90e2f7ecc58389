"""The exact value of a given response to a policy, beside the exact best response (heads-up, public tree).

A learned best response (``truc exploitability --approx``) is judged on sampled deals, so its figure mixes two
errors: how far the response is from a best response, and the deals' noise. Where the public tree fits, this
module removes the second: it tabulates the response as :mod:`train.eval.exploitability` tabulates any policy
(the same projection: one canonical suit assignment on the strength abstraction; the hand after a redeal
played by each seat's table averaged over first hands drawn with that seat's own odds of reaching it) and
evaluates it exactly against the policy's table, at each seat.

**Where it falls short.** For each seat, the exact best response (a pure table) with the response's choices
put in at one kind of decision only, the rest still best play: what those choices alone cost. The kinds are
the hand's first decision (the first player's lead, or a call, or proposing the redeal), the later turns in each
trick (a card to play, or a call instead), the answers to a call (accept, raise, fold), the answer to a proposed redeal, and
the hand after an accepted redeal (played by the response's table instead of the best response's). The parts overlap (a worse choice at one kind changes what the others are
worth), so they need not add up to the whole gap; the remainder is reported as ``interaction``.

``greedy:SPEC`` is tabulated as SPEC made greedy on the table: at each information set all of the
probability on its most probable class of action (the first of equals). The agent ``greedy:`` plays the most
probable single card, so where two cards of one class together outweigh a card of another class the two
differ; for a response near a deterministic policy that is rare.
"""

from __future__ import annotations

import numpy as np

from agents.cfr.policy_tree import best_response_values
from agents.cfr.tree import CHILD, PLAY, REDEAL
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import Rules

KINDS = ("opening", "trick 1", "trick 2", "trick 3", "answer", "redeal answer", "after the redeal")


def greedy_table(solver, table: np.ndarray) -> np.ndarray:
    """``table`` with each information set's probability all on its most probable slot (the first of equals)."""
    starts = solver.iset_start[:-1]
    counts = np.diff(solver.iset_start)
    iset_of_slot = np.repeat(np.arange(len(starts)), counts)
    best = np.maximum.reduceat(table, starts)
    at_best = np.flatnonzero(table >= best[iset_of_slot])
    first = at_best[np.r_[True, iset_of_slot[at_best][1:] != iset_of_slot[at_best][:-1]]]
    out = np.zeros_like(table, dtype=np.float64)
    out[first] = 1.0
    return out


def cards_played(tree) -> np.ndarray:
    """The cards played before each public node (by pointer jumping: each node's sum of card plays on its path
    from the root, in log2(depth) vectorized passes)."""
    n_edges = int(tree.act_start[-1])
    parent = np.repeat(np.arange(tree.n_nodes), np.diff(tree.act_start))
    inner = tree.kind[:n_edges] == CHILD
    up = np.full(tree.n_nodes, -1, dtype=np.int64)
    step = np.zeros(tree.n_nodes, dtype=np.int64)
    up[tree.child[:n_edges][inner]] = parent[inner]
    step[tree.child[:n_edges][inner]] = tree.label[:n_edges][inner] >= PLAY
    while (up >= 0).any():
        has = np.flatnonzero(up >= 0)
        step[has] += step[up[has]]  # the right side is read whole before the write: one simultaneous jump
        up[has] = up[up[has]]
    return step


def node_kinds(tree) -> np.ndarray:
    """Each public node's kind of decision, an index into :data:`KINDS`: 0 the hand's first decision (the first
    player's lead, or a call, or the redeal); 1, 2, 3 a later turn (a card to play, or a call instead) in the
    first, second or third trick; 4 an answer to a call (no card to play); 5 an answer to a proposed redeal;
    -1 at chance nodes."""
    L = layout_of(tree.rules)
    node_of_edge = np.repeat(np.arange(tree.n_nodes), np.diff(tree.act_start))
    label = tree.label[:len(node_of_edge)]
    redeal = (tree.kind[:len(node_of_edge)] == REDEAL) | ((label == L.REDEAL) & (L.REDEAL >= 0))
    has_redeal = np.bincount(node_of_edge, weights=redeal, minlength=tree.n_nodes) > 0
    has_play = np.bincount(node_of_edge, weights=label >= PLAY, minlength=tree.n_nodes) > 0
    trick = np.minimum(cards_played(tree) // 2, 2)
    kinds = np.where(has_play, 1 + trick, np.where(has_redeal, 5, 4))
    kinds[0] = 0
    return np.where(np.isin(tree.actor, (0, 1)), kinds, -1)


def _seat_value(game, sigma: np.ndarray, seat: int, table: np.ndarray, redeal: float) -> float:
    """``seat``'s points when it plays ``table`` and the other seat ``sigma``; an accepted redeal is worth
    ``redeal`` to ``seat``."""
    sign = 1.0 if seat == 0 else -1.0  # TableGame.value reads and gives seat 0's points
    return sign * game.value(np.where(game.seat_of_slot == seat, table, sigma), sign * redeal)


def response_value(agent, response, rules: Rules, dealer: int = 0, abstraction: str = "strength",
                   first_hands: int = 4, seed: int = 0, cache_dir: str | None = None, log=None) -> dict:
    """The exact value of ``response`` against ``agent`` at each seat, beside ``agent``'s exact exploitability,
    and where the response falls short of the best response (module docstring). Points per hand."""
    from agents.players.greedy import GreedyAgent
    from train.algos.psro import TableGame
    from train.eval.exploitability import first_hand_samples, policy_exploitability, probability_function, tabulate_part

    if rules.vira:
        raise TrucError(f"{rules.variant}: --response takes rules without a vira (one public tree per hand)")
    greedy = isinstance(response, GreedyAgent)
    inner = response.inner if greedy else response
    fn = probability_function(inner, rules)
    found: dict = {}

    def tabulate(part, tree, solver, samples):
        table = tabulate_part(tree, solver, inner, fn, rules, samples, 1, seed, False, cache_dir, part)
        return greedy_table(solver, table) if greedy else table

    def on_table(part, tree, solver, sigma, step):
        game = TableGame(tree, solver)
        if part == "cont":
            samples = first_hand_samples(rules, tree.abstraction, probability_function(response, rules), dealer, (0, 0),
                                         first_hands, seed)[0]
            mine = tabulate(part, tree, solver, samples)
            ev = best_response_values(solver, sigma)
            found["cont"] = {"br": (ev["br0"], ev["br1"]),
                             "response": tuple(_seat_value(game, sigma, q, mine, 0.0) for q in (0, 1))}
            return
        mine = tabulate(part, tree, solver, None)
        cont = found.get("cont", {"br": (0.0, 0.0), "response": (0.0, 0.0)})
        kind_of_slot = node_kinds(tree)[game.node_of_slot]
        best = game.best_response(sigma, cont["br"])[0]
        seats = []
        for q in (0, 1):
            br_cont, my_cont = cont["br"][q], cont["response"][q]
            br = _seat_value(game, sigma, q, best, br_cont)
            got = _seat_value(game, sigma, q, mine, my_cont)
            loss = {name: br - _seat_value(game, sigma, q, np.where(kind_of_slot == k, mine, best), br_cont)
                    for k, name in enumerate(KINDS[:6])}
            loss["after the redeal"] = br - _seat_value(game, sigma, q, best, my_cont)
            loss["interaction"] = (br - got) - sum(loss.values())
            seats.append({"best_response": br, "response": got, "gap": br - got, "loss": loss})
        found["main"] = seats

    out = policy_exploitability(agent, rules, dealer=dealer, abstraction=abstraction, first_hands=first_hands,
                                seed=seed, log=log, cache_dir=cache_dir, on_table=on_table)
    seats = found["main"]
    value = (seats[0]["response"] + seats[1]["response"]) / 2
    return {"variant": rules.variant, "options": dict(rules.options), "dealer": dealer, "abstraction": abstraction,
            "exploitability": out["exploitability"], "br0": out["br0"], "br1": out["br1"],
            "response_value": value, "response0": seats[0]["response"], "response1": seats[1]["response"],
            "recovered": value / out["exploitability"] if out["exploitability"] > 0 else None,
            "seats": seats, "cpu_seconds": out["cpu_seconds"], "first_hands": first_hands, "seed": seed}
