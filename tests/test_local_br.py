"""The local best response (``truc exploitability --lbr``) against the exact figure on a shrunk game."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cfr_helpers import solved_strategy  # noqa: E402

from agents.players.random import RandomAgent  # noqa: E402
from train.eval import exploitability as ex  # noqa: E402
from train.eval import local_br  # noqa: E402
from truc_env import TrucError, make_rules  # noqa: E402
from truc_env.game.engine import State  # noqa: E402
from truc_env.game.episode import Dealer  # noqa: E402

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}  # 16 cards, 2-card hands


def test_local_best_response_recovers_much_of_random_plays_exact_exploitability():
    """Positive control: against uniform play (exact 4.05 points per hand) the responder's bound is well above
    0 (measured: 2.07 (1.55 … 2.59) at 200 deals, 32 drawn deals, 8 playouts; here 1.79 (1.14 … 2.44)) and not
    significantly above the exact figure; the figure is the mean of the two sides, and reproducible."""
    rules = make_rules("le_truc", **SMALL)
    exact = ex.policy_exploitability(RandomAgent(), rules, log=lambda m: None)["exploitability"]
    r = local_br.local_best_response("random", rules, deals=120, seed=0, samples=16, rollouts=6)
    lo, hi = r["ci95"]
    assert lo > 0.9 and lo <= exact, (r, exact)
    assert r["exploitability_lower_bound"] == pytest.approx((r["lbr_dealer"] + r["lbr_first_player"]) / 2)
    again = local_br.local_best_response("random", rules, deals=120, seed=0, samples=16, rollouts=6)
    assert again["exploitability_lower_bound"] == r["exploitability_lower_bound"]


def test_local_best_response_finds_nothing_to_exploit_in_a_solved_strategy(tmp_path):
    """Negative control: against a CFR strategy within 0.02 of equilibrium the bound is near 0, its
    interval reaching down to the exact figure (measured: −0.043 (−0.323 … +0.236) at 300 deals)."""
    rules = make_rules("le_truc", **SMALL)
    path, exact = solved_strategy(tmp_path, rules, 200)
    assert exact < 0.02
    r = local_br.local_best_response(f"table:{path}", rules, deals=120, seed=0, samples=16, rollouts=6)
    lo, hi = r["ci95"]
    assert lo <= exact and abs(r["exploitability_lower_bound"]) < 0.4, (r, exact)


def test_the_responder_never_reads_the_opponents_unseen_cards():
    """Two hands that differ only in the opponent's cards, after the same public play: the responder, with the
    same generator, makes the same choice (its belief re-draws those cards; it never looks at them)."""
    rules = make_rules("le_truc", **SMALL)
    fn = ex.probability_function(RandomAgent())

    def at_decision(deal_seed):
        st = State(rules, episode="hand", dealer=0)
        d = Dealer.seeded(rules, deal_seed)
        while st.is_chance_node():
            st.apply_action(d.outcome(st))
        return st

    base = at_decision(3)
    own = sorted(base.hands[1])
    other = None
    for seed in range(4, 400):  # a deal giving seat 1 the same cards and seat 0 others
        st = at_decision(seed)
        if sorted(st.hands[1]) == own and sorted(st.hands[0]) != sorted(base.hands[0]):
            other = st
            break
    assert other is not None
    # the same cards in the same dealt positions for the responder: rebuild 'other' in base's dealt order
    twin = State(rules, episode="hand", dealer=0)
    opp = iter(c for c, t in zip(other.dealt, other.deal_order) if t == 0)
    for c, t in zip(base.dealt, base.deal_order):
        twin.apply_action(c if t == 1 else next(opp))
    choices = []
    for st in (base, twin):
        lbr = local_br.LocalBestResponse(rules, fn, samples=8, rollouts=4, seed=5)
        choices.append([lbr.choose(st.clone(), 1) for _ in range(3)])
    assert choices[0] == choices[1]
    assert sorted(base.hands[0]) != sorted(twin.hands[0]) and sorted(base.hands[1]) == sorted(twin.hands[1])


@pytest.mark.parametrize("variant, options, agent, match", [
    ("truco_paulista", {"players": 4}, "random", "heads-up games"),
    ("truco_argentino", {"players": 2}, "random", "envido or flor"),
    ("truco_argentino", {"players": 2, "ranks": 3, "hand_size": 1}, "heuristic:honest", "envido or flor"),
    ("le_truc", {}, "human", "not 'human'"),
    ("put", {}, "net:le_truc", "trained for le_truc"),
])
def test_bad_requests_are_refused_in_one_line(variant, options, agent, match):
    with pytest.raises(TrucError, match=match):
        local_br.check_request(agent, make_rules(variant, **options), 100, 8, 4)
    with pytest.raises(TrucError, match="at least 2"):
        local_br.check_request("random", make_rules("le_truc"), 1, 8, 4)


@pytest.mark.parametrize("argv, match", [
    (["--approx"], "drop --approx"),
    (["--suits", "2"], "--suits: not settings of --lbr"),
    (["--br-steps", "100", "--br-set", "hidden=[8]"], "--br-set: not settings of --lbr"),
    (["--lbr-samples", "0"], "lbr-samples"),
])
def test_cli_refuses_what_lbr_does_not_take(argv, match, capsys):
    from train.commands.cli import main

    assert main(["exploitability", "--agent", "random", "--lbr", *argv], run=False) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err


def test_cli_writes_the_bound_as_json(tmp_path, capsys):
    from train.commands.cli import main

    out = tmp_path / "lbr.json"
    assert main(["exploitability", "--agent", "random", "--lbr", "--options", json.dumps(SMALL), "--eval-deals", "6",
                 "--lbr-samples", "4", "--lbr-rollouts", "2", "--quiet", "--out", str(out)]) in (0, None)
    r = json.loads(out.read_text())
    assert r["kind"] == "lower bound (local best response)" and r["deals"] == 6 and np.isfinite(r["ci95"]).all()
    assert "local best response as the dealer" in capsys.readouterr().out


def test_a_continuation_that_plays_well_raises_the_bound(tmp_path):
    """With the responder's later decisions in its playouts played by a near-equilibrium table (greedily)
    instead of uniform play, against uniform play on the same deals, the bound rises (measured at 120 deals,
    16 drawn deals, 6 playouts: 2.39 -> 4.35 (3.56 … 5.13)) and stays a lower bound (its interval reaches the
    exact 4.05 or below); the result names its continuation."""
    rules = make_rules("le_truc", **SMALL)
    path, _ = solved_strategy(tmp_path, rules, 200)
    exact = ex.policy_exploitability(RandomAgent(), rules, log=lambda m: None)["exploitability"]
    plain = local_br.local_best_response("random", rules, deals=120, seed=0, samples=16, rollouts=6)
    cont = local_br.local_best_response("random", rules, deals=120, seed=0, samples=16, rollouts=6,
                                        continuation=f"table:{path}")
    assert cont["continuation"] == f"table:{path}" and plain["continuation"] == "the policy"
    assert cont["exploitability_lower_bound"] > plain["exploitability_lower_bound"] + 1.0, (plain, cont)
    assert cont["ci95"][0] <= exact


def test_a_continuation_that_only_samples_is_refused():
    local_br.check_request("heuristic:honest", make_rules("le_truc"), 100, 8, 4)  # its probabilities are exact
    with pytest.raises(TrucError, match="greedy: needs an agent that gives its action probabilities"):
        local_br.check_request("random", make_rules("le_truc"), 100, 8, 4, continuation="heuristic:honest")
    with pytest.raises(TrucError, match="not 'human'"):
        local_br.check_request("random", make_rules("le_truc"), 100, 8, 4, continuation="human")
