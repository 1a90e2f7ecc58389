"""The exact value of a given response to a policy (``truc exploitability --response``), on shrunk heads-up Le Truc."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cfr_helpers import solved_strategy

from agents import make_agent
from agents.cfr.strategy import save_table
from train.algos.psro import TableGame
from train.eval import approx_br
from train.eval import exploitability as ex
from train.eval.response_value import KINDS, cards_played, greedy_table, node_kinds, response_value
from truc_env import make_rules

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}
QUIET = {"log": lambda msg: None}


def exact_best_response_file(tmp_path, rules, agent_spec: str) -> str:
    """The agent's exact best response (both seats) written as a strategy file."""
    agent = make_agent(agent_spec, rules, seed=0)
    res = ex.policy_exploitability(agent, rules, keep=True, **QUIET)
    tree, solver, sigma, _ = res["parts"]["main"]
    both = TableGame(tree, solver).best_response(sigma)[0]
    path = str(tmp_path / "br.npz")
    save_table(path, tree, solver, both)
    return path


def test_the_exact_best_response_as_the_response_recovers_all_of_the_exploitability(tmp_path):
    rules = make_rules("le_truc", **SMALL)
    path = exact_best_response_file(tmp_path, rules, "random")
    out = response_value(make_agent("random", rules), make_agent(f"table:{path}", rules), rules, **QUIET)
    assert out["exploitability"] == pytest.approx(4.0478, abs=1e-4)
    assert out["response_value"] == pytest.approx(out["exploitability"], abs=1e-6)
    assert out["recovered"] == pytest.approx(1.0, abs=1e-6)
    for seat in out["seats"]:
        assert seat["gap"] == pytest.approx(0.0, abs=1e-6)
        assert all(v == pytest.approx(0.0, abs=1e-6) for v in seat["loss"].values())


def test_a_policy_answering_itself_is_worth_nothing_and_its_gap_is_where_it_plays_worse(tmp_path):
    rules = make_rules("le_truc", **SMALL)
    path, exact = solved_strategy(tmp_path, rules, 50)
    table = make_agent(f"table:{path}", rules)
    out = response_value(table, make_agent(f"table:{path}", rules), rules, **QUIET)
    assert out["exploitability"] == pytest.approx(exact, abs=1e-6)
    assert out["response_value"] == pytest.approx(0.0, abs=1e-6)
    assert out["response0"] == pytest.approx(-out["response1"], abs=1e-6)
    for q, seat in enumerate(out["seats"]):
        assert seat["best_response"] == pytest.approx(out[f"br{q}"], abs=1e-6)
        assert seat["gap"] == pytest.approx(seat["best_response"] - seat["response"], abs=1e-12)
        assert all(v >= -1e-6 for k, v in seat["loss"].items() if k in KINDS)  # a best response loses by any change


def test_with_the_redeal_each_seat_is_valued_with_its_own_hand_after_the_redeal():
    rules = make_rules("le_truc", **{**SMALL, "redeal": True})
    out = response_value(make_agent("random", rules), make_agent("random", rules), rules, **QUIET)
    plain = ex.policy_exploitability(make_agent("random", rules), rules, **QUIET)
    assert (out["br0"], out["br1"]) == pytest.approx((plain["br0"], plain["br1"]), abs=1e-6)
    assert out["response0"] == pytest.approx(plain["value_seat0"], abs=1e-6)
    assert out["response_value"] == pytest.approx(0.0, abs=1e-6)
    for q, seat in enumerate(out["seats"]):
        assert seat["best_response"] == pytest.approx(out[f"br{q}"], abs=1e-6)
        assert seat["loss"]["after the redeal"] > 0.05  # random plays the hand after a redeal at random
    dealer, first = (seat["loss"] for seat in out["seats"])  # seat 0 deals
    assert dealer["opening"] == 0.0 and first["redeal answer"] == 0.0  # decisions the seat never makes
    assert all(seat["loss"][k] > 0.05 for seat in out["seats"] for k in ("trick 1", "trick 2"))
    assert first["opening"] > 0.05 and dealer["redeal answer"] > 0.05


def test_the_arena_measures_a_suit_blind_response_at_its_exact_value(tmp_path):
    """Tables play a card class evenly over its cards, so the arena plays the policy the tree values."""
    rules = make_rules("le_truc", **SMALL)
    path, _ = solved_strategy(tmp_path, rules, 50)
    out = response_value(make_agent(f"table:{path}", rules), make_agent("random", rules), rules, **QUIET)
    played = approx_br.measure_value("random", f"table:{path}", rules, 3000, seed=1)
    assert played["lo"] <= out["response_value"] <= played["hi"]
    assert out["response_value"] < -1.0  # random gives most of a table's points away


def test_greedy_puts_each_information_set_on_its_first_most_probable_slot():
    class Sets:  # two information sets of 3 and 2 slots
        iset_start = np.array([0, 3, 5])

    got = greedy_table(Sets, np.array([0.2, 0.4, 0.4, 0.7, 0.3]))
    assert got.tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_the_cli_prints_and_writes_the_response_and_its_gap(tmp_path, capsys):
    from train.commands.cli import main

    out = tmp_path / "r.json"
    assert main(["exploitability", "--agent", "random", "--response", "random", "--options", json.dumps(SMALL),
                 "--quiet", "--no-cache", "--out", str(out)]) in (0, None)
    text = capsys.readouterr().out
    assert "random: +0.0" in text and "seat 0: gap" in text
    res = json.loads(out.read_text())
    assert res["response_value"] == pytest.approx(0.0, abs=1e-6) and res["response"] == "random"


def test_each_node_counts_the_cards_played_on_its_path_and_its_trick():
    from agents.cfr.policy_tree import node_path, parents_of
    from agents.cfr.tree import PLAY, build_tree

    tree = build_tree(make_rules("le_truc", **{**SMALL, "hand_size": 3}))
    parents = parents_of(tree)
    want = [sum(label >= PLAY for _, label in node_path(tree, n, parents)) for n in range(tree.n_nodes)]
    got = cards_played(tree)
    assert got.tolist() == want and got.max() == 5
    kinds = node_kinds(tree)
    decisions = np.isin(tree.actor, (0, 1))
    assert kinds[0] == 0 and set(kinds[decisions][1:].tolist()) == {1, 2, 3, 4}  # no redeal in these rules
    turns = decisions & (kinds >= 1) & (kinds <= 3)
    assert (kinds[turns] == 1 + np.minimum(got[turns] // 2, 2)).all()


@pytest.mark.parametrize("argv, match", [
    (["--response", "random", "--approx"], "--response: settings of the exact"),
    (["--response", "random", "--lbr"], "--response: not settings of --lbr"),
    (["--response", "random", "--as-played"], "--as-played: not settings of --response"),
    (["--response", "random", "--variant", "truco_paulista", "--options", '{"players": 2}'], "without a vira"),
    (["--response", "net:le_truc", "--variant", "put"], "trained for le_truc"),
    (["--response", "human"], "cannot give its action probabilities"),
    (["--response", "heuristic:honest", "--variant", "truco_argentino", "--options", '{"players": 2, "ranks": 3, "hand_size": 1}'],
     "heuristic:honest cannot give its action probabilities on truco_argentino"),
])
def test_bad_response_requests_are_refused_before_any_work_in_one_line(argv, match, capsys):
    from train.commands.cli import main

    assert main(["exploitability", "--agent", "random", *argv], run=False) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err
