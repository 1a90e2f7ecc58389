"""The leak measurement (docs/signals.md "Leaks"): an opponent that reads intercepted signals against its
twin that does not, on the same duplicate deals. A scripted eavesdropper plants a known leak: against a
truthful heuristic team (it shows its best rank) it refuses a raise when an opponent showed a top card
it does not hold. Its deaf twin is the same player with the opponents' signals hidden."""

import numpy as np
import pytest

from agents import make_agent
from agents.players.heuristic import HeuristicAgent
from train.analysis.signals import leak, leak_text, play_hands, with_intercept
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

TEAM = "heuristic:honest"


class Eavesdropper(HeuristicAgent):
    """heuristic:honest, except that it refuses a raise when an opponent's intercepted signal shows a top
    card (a seven in Le Truc) and it holds none; ``deaf``: the opponents' signals are never read."""

    def __init__(self, seed=None, deaf: bool = False):
        super().__init__("honest", seed)
        self.deaf = deaf

    def _choose(self, view, names, rules):
        st = view["strength"]
        shown = [] if self.deaf else [sg["token"] for sg in view["signals"]
                                      if sg["sender"] % 2 == 1 and sg["token"] not in ("none", "unseen")]
        top = max(st)
        shows_top = any(st[c] == top and view["card_rank"](c) == t for t in shown for c in range(len(st)))
        if (view["phase"] == "answer" and view["call"] != "redeal" and "refuse" in names and shows_top
                and all(st[c] < top for c in view["own"])):
            return "refuse"
        return super()._choose(view, names, rules)


def factory(spec, rules, seed=None):
    if spec in ("eavesdropper", "deaf-eavesdropper"):
        return Eavesdropper(seed, deaf=spec.startswith("deaf"))
    return make_agent(spec, rules, seed)


@pytest.fixture(scope="module")
def planted():
    rules = make_rules("le_truc_4p")
    return leak(rules, TEAM, "eavesdropper", "deaf-eavesdropper", 400, seed=2, sweep=(0.5,), factory=factory,
                log=lambda m: None)


def test_planted_leak_costs_the_team(planted):
    pts = {k: np.array(v) for k, v in planted["_points"].items()}
    # without reading, both play exactly as the team: each seating mirrors the other, 0 on every deal
    for cell in ("twin@0", "twin@1", "eavesdropper@0"):
        assert np.all(pts[cell] == 0.0), cell
    # reading the team's shown sevens at intercept 1 wins points from it (seed 2: +0.115 [+0.061, +0.169])
    assert np.any(pts["eavesdropper@1"] != 0.0)
    cost = planted["cost"]
    assert cost["lo"] > 0.0 and 0.05 < cost["mean"] < 0.2
    assert planted["reading"]["mean"] == pytest.approx(cost["mean"])
    assert planted["twin_hears"]["mean"] == 0.0
    assert "cost = twin@0 - eavesdropper@1" in leak_text(planted)


def test_eavesdropper_only_hears_at_intercept_one():
    rules = make_rules("le_truc_4p")
    private = play_hands(with_intercept(rules, 0.0), TEAM, "eavesdropper", 60, seed=2, factory=factory).points
    open_ = play_hands(with_intercept(rules, 1.0), TEAM, "eavesdropper", 60, seed=2, factory=factory).points
    deaf = play_hands(with_intercept(rules, 1.0), TEAM, "deaf-eavesdropper", 60, seed=2, factory=factory).points
    assert np.all(private == 0.0) and np.all(deaf == 0.0)
    assert np.any(open_ != 0.0)


def test_leak_refuses_a_mirror_match_and_a_silent_game():
    rules = make_rules("le_truc_4p")
    with pytest.raises(TrucError, match="mirror match"):
        leak(rules, TEAM, TEAM, "deaf-eavesdropper", 2, factory=factory, log=lambda m: None)
    with pytest.raises(TrucError, match="mirror match"):
        leak(rules, TEAM, "eavesdropper", TEAM, 2, factory=factory, log=lambda m: None)
    silent = make_rules("le_truc_4p", signals={"mode": "none"})
    with pytest.raises(TrucError, match="no signal channel"):
        leak(silent, TEAM, "eavesdropper", "deaf-eavesdropper", 2, factory=factory, log=lambda m: None)


def test_frozen_team_is_built_for_its_own_options():
    """The eavesdropper trains at intercept 1 against a team trained at intercept 0: ``fixed_options``
    builds the team for its options (without it the checkpoint is refused)."""
    from agents.network.checkpoint import CheckpointError
    from train.algos.ppo import Collector, PPOConfig

    cfg = PPOConfig.from_yaml("configs/signals/leak_ppo_le_truc_4p.yaml")
    rules = make_rules(cfg.variant, **cfg.options)
    assert rules.signals.intercept == 1.0 and cfg.fixed_prob == 1.0
    team = Collector(cfg, rules, "cpu").agent(cfg.fixed_opponents[0])
    assert team.rules == make_rules("le_truc_4p")
    with pytest.raises(CheckpointError, match="intercept"):
        Collector(PPOConfig.from_yaml("configs/signals/leak_ppo_le_truc_4p.yaml", ["fixed_options=null"]), rules,
                  "cpu").agent(cfg.fixed_opponents[0])


def test_leak_experiment_file(tmp_path):
    from train.algos.signals_runs import load_experiment

    exp = load_experiment("configs/signals/leak_le_truc_4p.yaml")
    assert {r.config for r in exp["runs"]} == {exp["leak"]["eavesdropper"], exp["leak"]["twin"]}
    with pytest.raises(TrucError, match="leak.twin"):
        load_experiment("configs/signals/leak_le_truc_4p.yaml", ["leak.twin=configs/other.yaml"])


def test_leak_curve_grows_with_the_intercept(planted, tmp_path):
    """The leak curve: the planted reader takes nothing when it sees no signal, part at intercept 0.5 and
    the full cost at 1 (seed 2, 400 deals: 0, about half, +0.115)."""
    from train.algos.signals_runs import plot_leak_curve

    curve = {row["intercept"]: row["cost"] for row in planted["curve"]}
    assert sorted(curve) == [0.0, 0.5, 1.0]
    assert curve[0.0]["mean"] == 0.0 and curve[0.0]["hi"] == 0.0
    assert curve[1.0]["mean"] == pytest.approx(planted["cost"]["mean"])
    assert 0.0 < curve[0.5]["mean"] < curve[1.0]["mean"]
    assert "curve: intercept 0.50" in leak_text(planted)
    results = {"per_seed": {"2": planted},
               "pooled": {"curve": [{"intercept": q, "cost": {"over_deals": c}} for q, c in sorted(curve.items())]}}
    paths = [str(tmp_path / "a.png"), str(tmp_path / "b.png")]
    plot_leak_curve(results, paths)
    assert all((tmp_path / n).read_bytes()[:4] == b"\x89PNG" for n in ("a.png", "b.png"))
