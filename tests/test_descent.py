"""Exploitability descent: the exact gradient of a table's value against a best response to it, and the
distilled network moved along it (``descent_rounds`` of ``truc train distill``).

On a shrunk heads-up Le Truc: the descent's best responses are the measurement's, stepping a table along
the direction lowers its exploitability and stepping against it raises it (the negative control), a
distilled student moved along it for a few rounds ends below the fit it started from, and a run killed
between rounds resumes to the same network.
"""

from __future__ import annotations

import numpy as np
import pytest

from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

torch = pytest.importorskip("torch")

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2}


@pytest.fixture(scope="module")
def small():
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    tree = build_tree(make_rules("le_truc", **{**SMALL, "redeal": False}))
    return PublicTreeSolver(tree, "cfr")


def tabular_descent(solver, sigma, lr: float, steps: int, temperature: float = 0.0):
    """``steps`` steps of exploitability descent on the table's logits (a softmax per information set)."""
    from agents.cfr.descent import descent_targets

    starts = solver.iset_start
    size = np.diff(starts)
    logit = np.log(np.maximum(sigma, 1e-12))
    for _ in range(steps):
        d = descent_targets(solver, sigma, temperature=temperature)
        g = d["target"] * np.repeat(d["weight"], size)
        logit = logit + lr * g / np.abs(g).max()
        e = np.exp(logit - np.repeat(np.maximum.reduceat(logit, starts[:-1]), size))
        sigma = e / np.repeat(np.add.reduceat(e, starts[:-1]), size)
    return sigma


def test_descent_best_responses_are_the_measurements(small):
    from agents.cfr.descent import best_response_table, descent_targets
    from agents.cfr.policy_tree import best_response_values, uniform_table

    sigma = uniform_table(small.tree, small).astype(np.float64)
    ev = best_response_values(small, sigma)
    d = descent_targets(small, sigma)
    assert d["br"] == pytest.approx([ev["br0"], ev["br1"]], abs=1e-9)
    # the pure best response, played, earns its value
    profile, value = best_response_table(small, sigma, 0)
    small.forward(0, profile)
    small.forward(1, profile)
    assert small.backward(0, profile) == pytest.approx(value, abs=1e-9)
    # per information set the targets are regrets over their total: absolute values sum to 1 (or 0)
    total = np.add.reduceat(np.abs(d["target"]).astype(np.float64), small.iset_start[:-1])
    assert np.all((np.abs(total - 1) < 1e-5) | (total == 0)) and (d["weight"] > 0).any()


def test_descent_smoothed_response_tends_to_the_best_response(small):
    """``temperature``: the response plays a softmax of its actions' values per set. Near 0 it is the pure
    best response (and earns its value); very hot it is near uniform and earns less; in between it is a
    distribution per set that puts most on the best action."""
    from agents.cfr.descent import best_response_table, descent_targets
    from agents.cfr.policy_tree import uniform_table

    sigma = uniform_table(small.tree, small).astype(np.float64)
    pure, value = best_response_table(small, sigma, 0)

    def earns(profile):
        small.forward(0, profile)
        small.forward(1, profile)
        return small.backward(0, profile)

    cold, cold_value = best_response_table(small, sigma, 0, temperature=1e-9)
    warm, _ = best_response_table(small, sigma, 0, temperature=0.05)
    hot, _ = best_response_table(small, sigma, 0, temperature=1e6)
    assert cold_value == value and earns(cold) == pytest.approx(value, abs=1e-9)
    total = np.add.reduceat(warm, small.iset_start[:-1])
    mine = np.add.reduceat(pure, small.iset_start[:-1]) == 1  # seat 0's sets (the others keep sigma)
    assert np.allclose(total[mine], 1.0) and 0.0 < np.count_nonzero((warm > 0) & (warm < 1))
    assert earns(hot) < earns(warm) < value + 1e-9
    assert earns(warm) > earns(hot) + 0.5 * (value - earns(hot))
    # the direction against a smoothed response is still a direction of descent
    d = descent_targets(small, sigma, temperature=0.05)
    total = np.add.reduceat(np.abs(d["target"]).astype(np.float64), small.iset_start[:-1])
    assert np.all((np.abs(total - 1) < 1e-5) | (total == 0)) and (d["weight"] > 0).any()
    from train.algos.distill import DistillConfig
    from train.config import build

    with pytest.raises(TrucError, match="descent_temperature"):
        build(DistillConfig, {"descent_temperature": -1.0})


def test_descent_smoothed_lowers_exploitability(small):
    from agents.cfr.policy_tree import best_response_values, uniform_table

    uniform = uniform_table(small.tree, small).astype(np.float64)
    start = best_response_values(small, uniform)["exploitability"]
    down = best_response_values(small, tabular_descent(small, uniform, 5.0, 40, temperature=0.05))["exploitability"]
    assert down < 0.1 * start


def test_descent_lowers_exploitability_and_ascent_raises_it(small):
    from agents.cfr.policy_tree import best_response_values, uniform_table

    uniform = uniform_table(small.tree, small).astype(np.float64)
    start = best_response_values(small, uniform)["exploitability"]  # 4.05
    down = best_response_values(small, tabular_descent(small, uniform, 5.0, 40))["exploitability"]
    up = best_response_values(small, tabular_descent(small, uniform, -5.0, 10))["exploitability"]
    assert start > 3.0 and down < 0.1 * start  # measured: 0.19 after 40 steps
    assert up > start + 1.0


def distill_config(tmp_path, teacher, **settings):
    from train.algos.distill import DistillConfig

    return DistillConfig(**{**dict(options={**SMALL, "redeal": False}, teacher=f"cfr:{teacher}", hidden=[32, 32],
                                   steps=600, batch=512, log_every=100, checkpoint_every=200, measure_start=False,
                                   cache_dir=str(tmp_path / "cache"), out=str(tmp_path / "d")), **settings})


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    from train.algos.cfr import CFRConfig, run

    out = tmp_path_factory.mktemp("teacher") / "cfr"
    run(CFRConfig(variant="le_truc", options={**SMALL, "redeal": False}, algorithm="dcfr", iterations=100,
                  eval_every=100, checkpoint_every=100, dtype="float64", out=str(out)), log=lambda m: None)
    return str(out / "strategy.npz")


def test_distill_descent_rounds_lower_the_students_exploitability(tmp_path, teacher):
    from train.algos.distill import run

    summary = run(distill_config(tmp_path, teacher, descent_rounds=30, descent_steps=5), log=lambda m: None)
    import csv

    with open(tmp_path / "d" / "curve.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["exploitability"]]
    fit = next(float(r["exploitability"]) for r in rows if int(r["step"]) == 600)
    assert len(rows) == 31 and rows[-1]["descent_gain"] != ""
    assert summary["exploitability"] < 0.8 * fit, (fit, summary["exploitability"])
    # the policy written is the measured network of lowest exploitability, and measures as that
    assert summary["exploitability"] == min(float(r["exploitability"]) for r in rows)
    assert summary["last_exploitability"] == float(rows[-1]["exploitability"])
    from agents import make_agent
    from train.eval.exploitability import policy_exploitability

    rules = make_rules("le_truc", **{**SMALL, "redeal": False})
    got = policy_exploitability(make_agent(f"ppo:{summary['policy']}", rules), rules, log=lambda m: None)
    assert got["exploitability"] == pytest.approx(summary["exploitability"], abs=1e-9)


@pytest.mark.parametrize("schedule", [{}, {"descent_momentum": 0.5, "descent_learning_rate_end": 2e-5}],
                         ids=["constant", "momentum"])
def test_distill_descent_resumes_between_rounds(tmp_path, teacher, monkeypatch, schedule):
    import agents.network.checkpoint as checkpoint
    from train.algos.distill import run

    settings = dict(steps=200, descent_rounds=4, descent_steps=5, **schedule)
    whole = run(distill_config(tmp_path, teacher, out=str(tmp_path / "whole"), **settings), log=lambda m: None)
    real = checkpoint.save_atomic

    def dies(obj, path):  # killed after the checkpoint at the end of the second round
        real(obj, path)
        if obj.get("step") == 210:
            raise RuntimeError("killed")

    monkeypatch.setattr(checkpoint, "save_atomic", dies)
    with pytest.raises(RuntimeError, match="killed"):
        run(distill_config(tmp_path, teacher, out=str(tmp_path / "cut"), **settings), log=lambda m: None)
    monkeypatch.setattr(checkpoint, "save_atomic", real)
    with pytest.raises(TrucError, match="descent_"):  # other descent settings than the run's
        run(distill_config(tmp_path, teacher, out=str(tmp_path / "cut"), **{**settings, "descent_weight": 2.0}),
            resume=True, log=lambda m: None)
    again = run(distill_config(tmp_path, teacher, out=str(tmp_path / "cut"), **settings), resume=True,
                log=lambda m: None)
    assert again["exploitability"] == whole["exploitability"]
    a = torch.load(whole["policy"], weights_only=True)["model"]
    b = torch.load(again["policy"], weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    if schedule:  # the averaged direction is kept beside the checkpoint, the last round's only
        assert [p.name for p in (tmp_path / "cut").glob("descent_direction_*")] == ["descent_direction_220.npz"]
    # bit for bit: policy.pt, the last checkpoint, the summary and the curve's steps and exact figures, but
    # for two things the resume does not carry: the losses' averages of the row after it cover only the steps
    # since it (the sums since the last row, at 200, are not in the checkpoints at the rounds' ends), and
    # torch's generator, which no step draws from, has moved on by the measurement the resume repeats
    from test_distill import assert_same_outputs

    assert_same_outputs(tmp_path / "whole", tmp_path / "cut", columns=("step", "exploitability"),
                        skip=("kl", "torch_rng"))


def test_distill_descent_from_an_initial_network(tmp_path, teacher):
    """``init`` with ``steps: 0``: the descent starts from a saved network (its measurement is the curve's
    first point) and lowers it, with the teacher beside it or alone; a network of another shape is refused."""
    import csv
    from dataclasses import replace

    from train.algos.distill import run

    fit = run(distill_config(tmp_path, teacher, out=str(tmp_path / "fit")), log=lambda m: None)
    summary = run(distill_config(tmp_path, teacher, steps=0, init=f"ppo:{fit['policy']}", descent_rounds=20,
                                 descent_steps=5, descent_weight=10.0, descent_learning_rate_end=2e-5),
                  log=lambda m: None)
    with open(tmp_path / "d" / "curve.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["exploitability"]]
    assert int(rows[0]["step"]) == 0 and float(rows[0]["exploitability"]) == pytest.approx(fit["exploitability"])
    assert len(rows) == 21 and summary["steps"] == 100
    assert summary["exploitability"] < 0.8 * fit["exploitability"], (fit["exploitability"], summary)
    alone = run(replace(distill_config(tmp_path, teacher, steps=0, init=f"ppo:{fit['policy']}", descent_rounds=20,
                                       descent_steps=5, descent_learning_rate_end=2e-5, out=str(tmp_path / "alone")),
                        teacher=None), log=lambda m: None)  # no teacher: descent alone
    assert alone["exploitability"] < 0.8 * fit["exploitability"] and alone["kl"] is None
    said = []  # a distill checkpoint also hands on Adam's moments
    run(distill_config(tmp_path, teacher, steps=0, init=f"ppo:{tmp_path / 'fit' / 'checkpoint.pt'}", descent_rounds=1,
                       out=str(tmp_path / "adam")), log=said.append)
    assert any("with its optimizer state" in m for m in said)
    with pytest.raises(TrucError, match="teacher: null is for exploitability descent alone"):
        replace(distill_config(tmp_path, teacher, init=f"ppo:{fit['policy']}"), teacher=None).validate()
    with pytest.raises(TrucError, match=r"layers \[32, 32\].*the student has \[16\]"):
        run(distill_config(tmp_path, teacher, hidden=[16], steps=0, init=f"ppo:{fit['policy']}", descent_rounds=1,
                           out=str(tmp_path / "other")), log=lambda m: None)
    with pytest.raises(TrucError, match="steps: 0 fits nothing"):
        distill_config(tmp_path, teacher, steps=0, descent_rounds=3).validate()
    with pytest.raises(TrucError, match="init 'models/x.pt'"):
        distill_config(tmp_path, teacher, init="models/x.pt").validate()


def test_descent_temperature_is_part_of_the_checkpoint_identity():
    """A run resumed with another temperature is refused (the identity differs); checkpoints written without
    one keep their identity (the key is added only when set)."""
    from train.algos.distill import DistillConfig, _descent_identity

    plain, warm = _descent_identity(DistillConfig()), _descent_identity(DistillConfig(descent_temperature=0.01))
    assert plain != warm and "descent_temperature" in warm and "descent_temperature" not in plain
