"""Heads-up MCCFR: its keys are the exact solver's, its runs learn, resume bit-identically and are measured exactly."""

import json

import numpy as np
import pytest

from agents import make_agent
from agents.cfr.abstraction import make_abstraction
from agents.cfr.hu_mccfr import HeadsUpMCCFR
from agents.cfr.hu_mccfr_numba import NumbaHeadsUpMCCFR
from agents.cfr.keys import parse_info_state
from train.algos.cfr import CFRConfig, run
from train.algos.hu_mccfr import export_strategy
from train.eval import exploitability as ex
from truc_env import TrucError, make_rules
from truc_env.game.engine import State, sample_chance
from truc_env.game.observe import info_state_string

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}
SMALL_REDEAL = {"ranks": 3, "hand_size": 2, "max_raises": 1, "redeal": True}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("variant, options", [("le_truc", {}), ("put", {}), ("truco_mineiro", {"players": 2})])
def test_training_keys_are_the_exact_solvers_keys(variant, options):
    """The key built from the engine's history while training is the one the exact solver's table is read
    by (agents.cfr.keys, from the seat's info-state string), the redeal included."""
    rules = make_rules(variant, **options)
    ab, solver = make_abstraction(rules), HeadsUpMCCFR(rules)
    rng = np.random.default_rng(1)
    seen = redealt = 0
    for _ in range(150):
        s = State(rules, episode="hand", dealer=int(rng.integers(2)))
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            seat = s.current_player()
            k = parse_info_state(info_state_string(s, seat), rules, ab)
            labels = k.after if k.redealt else k.actions
            want = f"{k.role}{'R' if k.redealt else ''}|{','.join(map(str, k.hand))}|{' '.join(map(str, labels))}"
            assert solver.key(s, seat) == want
            seen += 1
            redealt += k.redealt
            s.apply_action(int(rng.choice(s.legal_actions())))
    assert seen > 300 and (redealt > 0) == rules.redeal


def test_unsupported_heads_up_games_are_refused():
    with pytest.raises(TrucError, match="two players"):
        HeadsUpMCCFR(make_rules("le_truc_4p"))
    with pytest.raises(TrucError, match="envido"):
        HeadsUpMCCFR(make_rules("truco_argentino", players=2))
    with pytest.raises(TrucError, match="vira"):
        HeadsUpMCCFR(make_rules("truco_paulista", players=2))
    cfg = CFRConfig(variant="le_truc", options=SMALL, algorithm="os_mccfr", iterations=10)
    with pytest.raises(TrucError, match="external sampling only"):
        run(cfg, log=lambda *a: None)


def test_untrained_tables_measure_as_the_uniform_policy():
    """Negative control: no iteration, every information set uniform over its abstract actions, the exact
    solver's first strategy (regrets all zero), 4.128 points a hand on this game."""
    from agents.cfr.solver import PublicTreeSolver

    rules = make_rules("le_truc", **SMALL)
    got = export_strategy(HeadsUpMCCFR(rules))
    start = PublicTreeSolver(ex.cached_tree(rules))
    assert got["infosets_found"] == 0 and got["exploitability"] == pytest.approx(start.exploitability(start.sigma))
    assert got["exploitability"] == pytest.approx(4.128, abs=1e-3)


def _cfg(tmp_path, name, iterations, options=SMALL, eval_every=1000, checkpoint_every=500, backend="loop"):
    return CFRConfig(variant="le_truc", options=options, algorithm="es_mccfr", iterations=iterations,
                     eval_every=eval_every, checkpoint_every=checkpoint_every, seed=3, time_limit=10**6,
                     out=str(tmp_path / name), backend=backend)


def _tables(path) -> dict:
    """A checkpoint's tables in one order whatever the backend (the numba index's slot order depends on its
    capacity, which a resumed run sizes anew)."""
    with np.load(path) as z:
        if "values" not in z.files:
            return {name: z[name] for name in ("keys", "sizes", "labels", "rows")}
        order = np.argsort(z["keys"])
        return {"keys": z["keys"][order], "rows": z["rows"][order], "values": z["values"]}


BACKENDS = pytest.mark.parametrize("backend", ["loop", "numba"])


@BACKENDS
def test_a_run_learns_and_its_strategy_file_is_measured_exactly_by_the_cli(tmp_path, capsys, backend):
    """Positive control: 6,000 iterations take the shrunk game from the uniform 4.13 to below 0.25 points a
    hand, the curve falls, and `truc exploitability` reads the written file to the same figure."""
    from train.commands.cli import main

    summary = run(_cfg(tmp_path, "run", 6000, eval_every=2000, backend=backend), log=lambda *a: None)
    assert summary["backend"] == backend
    rows = (tmp_path / "run" / "curve.csv").read_text().splitlines()
    assert rows[0] == "part,iteration,cpu_seconds,seconds,nodes,infosets,exploitability" and len(rows) == 4
    first, last = float(rows[1].split(",")[-1]), float(rows[-1].split(",")[-1])
    assert last < first and summary["exploitability"] == pytest.approx(last) and last < 0.25
    assert (tmp_path / "run" / "curve.png").stat().st_size > 0
    capsys.readouterr()
    assert main(["exploitability", "--agent", f"table:{summary['strategy']}", "--variant", "le_truc",
                 "--options", json.dumps(SMALL)]) == 0
    assert f"exploitability {last:.4f} points per hand" in capsys.readouterr().out


@BACKENDS
def test_checkpoint_and_resume_give_identical_tables(tmp_path, backend):
    straight = run(_cfg(tmp_path, "straight", 1500, backend=backend), log=lambda *a: None)
    run(_cfg(tmp_path, "split", 1000, backend=backend), log=lambda *a: None)
    resumed = run(_cfg(tmp_path, "split", 1500, backend=backend), resume=True, log=lambda *a: None)
    assert resumed["iterations"] == straight["iterations"] == 1500
    a, b = _tables(tmp_path / "straight" / "checkpoint.npz"), _tables(tmp_path / "split" / "checkpoint.npz")
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    assert resumed["exploitability"] == straight["exploitability"]


def test_the_redeal_is_measured_in_the_real_game(tmp_path):
    """With a redeal the strategy has the hand after an accepted redeal as a part of its own (the solver's
    ``cont``), and its figure is the real game's, the same as `truc exploitability --real-redeal` reads."""
    rules = make_rules("le_truc", **SMALL_REDEAL)
    solver = HeadsUpMCCFR(rules, seed=1)
    solver.iterate(3000)
    assert any("R|" in k for k in solver.table)
    got = export_strategy(solver, str(tmp_path / "s.npz"))
    assert got["infosets_found_cont"] > 0
    agent = make_agent(f"table:{tmp_path / 's.npz'}")
    want = ex.real_redeal_exploitability(agent, rules)["exploitability"]
    assert got["exploitability"] == pytest.approx(want, abs=1e-6) and got["exploitability"] < 1.0  # float32 in the file


def test_a_checkpoint_of_other_rules_is_refused(tmp_path):
    a = HeadsUpMCCFR(make_rules("le_truc", **SMALL))
    a.iterate(10)
    a.save_checkpoint(str(tmp_path / "c.npz"))
    b = HeadsUpMCCFR(make_rules("put"))
    with pytest.raises(TrucError, match="trained for"):
        b.load_checkpoint(str(tmp_path / "c.npz"))
    (tmp_path / "bad.npz").write_bytes(b"not a checkpoint")
    with pytest.raises(TrucError, match="not a readable MCCFR checkpoint"):
        a.load_checkpoint(str(tmp_path / "bad.npz"))


@BACKENDS
def test_an_interrupted_run_checkpoints_where_it_stopped_and_resumes_to_the_same_tables(tmp_path, backend):
    """SIGTERM (or Ctrl-C) stops the run at the end of a block of iterations with a checkpoint: nothing done is
    lost, and the resumed run ends with the tables of a run never interrupted."""
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"variant: le_truc\noptions: {json.dumps(SMALL)}\nalgorithm: es_mccfr\nbackend: {backend}\n"
                   f"iterations: 1000000000\n"
                   f"time_limit: 1000000\neval_every: 1000000\ncheckpoint_every: 1000\nseed: 3\n"
                   f"out: {tmp_path / 'cut'}\n")
    env = {**os.environ, "TRUC_CACHE_DIR": str(tmp_path / "cache")}
    p = subprocess.Popen([sys.executable, "-m", "train.commands.cli", "train", "cfr", "--config", str(cfg)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for _ in range(1800):  # the imports and compiles: the first checkpoint says the iterations run
        if (tmp_path / "cut" / "checkpoint.npz").exists():
            break
        time.sleep(0.1)
    time.sleep(1)  # some blocks of iterations
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    m = re.search(r"interrupted at iteration ([\d,]+): checkpoint .* written", out + err)
    assert p.returncode != 0 and m, (out + err)[-2000:]
    done = int(m.group(1).replace(",", ""))
    assert done % 1000 == 0
    resumed = run(_cfg(tmp_path, "cut", done + 500, eval_every=10**9, backend=backend), resume=True,
                  log=lambda *a: None)
    straight = run(_cfg(tmp_path, "straight", done + 500, eval_every=10**9, backend=backend), log=lambda *a: None)
    assert resumed["iterations"] == straight["iterations"] == done + 500
    a, b = _tables(tmp_path / "straight" / "checkpoint.npz"), _tables(tmp_path / "cut" / "checkpoint.npz")
    for name in a:
        assert np.array_equal(a[name], b[name]), name


def test_openspiel_measures_a_heads_up_mccfr_strategy_as_we_do(tmp_path):
    """OpenSpiel's own exploitability of the exported average strategy (on the python_truc binding) equals ours."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401
    from agents.cfr.openspiel_export import to_tabular_policy
    from agents.cfr.strategy import load_strategy

    tiny = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}
    solver = HeadsUpMCCFR(make_rules("le_truc", **tiny), seed=0)
    solver.iterate(300)
    ours = export_strategy(solver, str(tmp_path / "s.npz"))["exploitability"]
    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(tiny)})
    theirs = exploitability.exploitability(game, to_tabular_policy(game, load_strategy(str(tmp_path / "s.npz"))))
    assert theirs == pytest.approx(ours, abs=1e-5) and 0.01 < ours < 1.0  # float32 in the file


# ---------------------------------------------------------------------- the walk on the numba kernel

@pytest.mark.parametrize("variant, options", [("le_truc", SMALL_REDEAL), ("put", {"ranks": 4, "hand_size": 2}),
                                              ("truco_mineiro", {"players": 2, "deck": "clean", "ranks": 4,
                                                                 "hand_size": 2})])
def test_numba_walk_keys_are_the_exact_solvers_keys(variant, options):
    """Every key the walk on the kernel makes (hashed as it goes) is an information set of the exact solver's
    trees, the hand after an accepted redeal on the continuation's: the hashes are the keys."""
    from agents.cfr.solver import PublicTreeSolver

    rules = make_rules(variant, **options)
    solver = NumbaHeadsUpMCCFR(rules, seed=2)
    solver.iterate(3000)
    tree = ex.cached_tree(rules)
    matched = solver.keys_on_tree(tree, PublicTreeSolver(tree))
    if rules.redeal:
        cont = ex.cached_tree(make_rules(variant, **{**options, "redeal": False}))
        redealt = solver.keys_on_tree(cont, PublicTreeSolver(cont), redealt=True)
        assert redealt > 0
        matched += redealt
    assert solver.infosets > 100 and matched == solver.infosets


def test_numba_walk_learns_as_the_loop_does():
    """The same algorithm on the kernel: untrained, the uniform 4.128 of the Python solver (negative
    control); after 40,000 iterations, seeds 0-2, 0.046-0.054, where the loop's seeds reach 0.052-0.057."""
    rules = make_rules("le_truc", **SMALL)
    assert export_strategy(NumbaHeadsUpMCCFR(rules))["exploitability"] == pytest.approx(
        export_strategy(HeadsUpMCCFR(rules))["exploitability"], abs=1e-9)
    got = []
    for seed in range(3):
        solver = NumbaHeadsUpMCCFR(rules, seed=seed)
        solver.iterate(40000)
        got.append(export_strategy(solver)["exploitability"])
    assert max(got) < 0.07 and sorted(got)[1] == pytest.approx(0.0462, abs=2e-3), got


def test_a_checkpoint_of_the_other_backend_or_garbled_is_refused(tmp_path):
    rules = make_rules("le_truc", **SMALL)
    a = NumbaHeadsUpMCCFR(rules)
    a.iterate(10)
    a.save_checkpoint(str(tmp_path / "n.npz"))
    HeadsUpMCCFR(rules).save_checkpoint(str(tmp_path / "l.npz"))
    with pytest.raises(TrucError, match="not a truc-hu-mccfr-numba-checkpoint"):
        a.load_checkpoint(str(tmp_path / "l.npz"))
    with pytest.raises(TrucError, match="trained for"):
        NumbaHeadsUpMCCFR(make_rules("put")).load_checkpoint(str(tmp_path / "n.npz"))
    with np.load(tmp_path / "n.npz") as z:
        parts = {k: z[k] for k in z.files}
    np.savez(tmp_path / "cut.npz", **{**parts, "values": parts["values"][:-3]})
    with pytest.raises(TrucError, match="corrupt checkpoint"):
        a.load_checkpoint(str(tmp_path / "cut.npz"))
    run(_cfg(tmp_path, "run", 10, backend="loop"), log=lambda *a: None)
    with pytest.raises(TrucError, match="written with backend: loop"):
        run(_cfg(tmp_path, "run", 20, backend="numba"), resume=True, log=lambda *a: None)
    with pytest.raises(TrucError, match="backend: loop is for heads-up MCCFR"):
        CFRConfig(variant="le_truc_4p", algorithm="es_mccfr", backend="loop").validate()


def test_kernel_state_is_the_main_kernels_only():
    from truc_env.batch.vector import VectorEnv

    with pytest.raises(TrucError, match="kernel_state is the main numba kernel's"):
        VectorEnv("le_truc", 2, backend="loop").kernel_state()
    with pytest.raises(TrucError, match="kernel_state is the main numba kernel's"):
        VectorEnv("put_n", 2, backend="numba").kernel_state()
    g = VectorEnv("le_truc", 3, backend="numba", observe=False).kernel_state()[0]
    assert g.shape[0] == 3
