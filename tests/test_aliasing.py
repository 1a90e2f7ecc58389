"""The aliasing floor (``train/eval/aliasing.py``, ``scripts/aliasing_floor.py``): a table averaged over the
information sets a network's input cannot tell apart, measured exactly.

Controls on a shrunk heads-up Le Truc: with the decision history in the input (``info_state``) nothing
aliases and the table is unchanged (its exploitability exactly the table's); with the flat observation
groups form and the averaged table is more exploitable than the table.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from truc_env.game.rules import make_rules

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2}


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    from train.algos.cfr import CFRConfig, run

    out = tmp_path_factory.mktemp("aliasing") / "cfr"
    run(CFRConfig(variant="le_truc", options=SMALL, algorithm="dcfr", iterations=200, eval_every=200,
                  checkpoint_every=200, dtype="float64", out=str(out)), log=lambda m: None)
    return str(out / "strategy.npz")


def floor(tmp_path, table, features, monkeypatch):
    monkeypatch.setenv("TRUC_CACHE_DIR", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("aliasing_floor", Path("scripts/aliasing_floor.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / f"{features}.json"
    got = script.main(["--teacher", f"cfr:{table}", "--options", json.dumps(SMALL), "--features", features,
                       "--out", str(out)])
    assert json.loads(out.read_text())["aliased_exploitability"] == got["aliased_exploitability"]
    return got


def test_aliasing_floor_info_state_aliases_nothing(tmp_path, table, monkeypatch):
    got = floor(tmp_path, table, "info_state", monkeypatch)
    for part in ("cont", "main"):  # both parts of the redeal
        assert got[part]["aliased_infosets"] == 0
        assert got[part]["aliased_exploitability"] == pytest.approx(got[part]["exploitability"], abs=1e-6)


def test_aliasing_floor_observation_costs_exploitability(tmp_path, table, monkeypatch):
    got = floor(tmp_path, table, "observation", monkeypatch)
    assert got["main"]["aliased_infosets"] > 0.1 * got["main"]["infosets"]
    assert got["exploitability"] < 0.01 and got["aliased_exploitability"] > got["exploitability"] + 0.005


def test_aliased_table_is_a_policy():
    """Even with every node of a seat in one group (different actions in one group), each information
    set's play still sums to 1."""
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import NATURE, build_tree
    from train.eval.aliasing import aliased_table

    tree = build_tree(make_rules("le_truc", **{**SMALL, "redeal": False}))
    solver = PublicTreeSolver(tree)
    sigma = np.random.default_rng(0).random(solver.n_slots)
    sigma /= np.repeat(np.add.reduceat(sigma, solver.iset_start[:-1]), np.diff(solver.iset_start))
    by_seat = np.where(tree.actor != NATURE, tree.actor, -1).astype(np.int64)
    out, stats = aliased_table(tree, solver, sigma, by_seat)
    np.testing.assert_allclose(np.add.reduceat(out, solver.iset_start[:-1]), 1.0, atol=1e-9)
    assert stats["groups"] < stats["infosets"] and not np.allclose(out, sigma)
