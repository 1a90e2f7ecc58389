"""CFR: the public tree against the engine, the solver against OpenSpiel, strategy files and the agent."""

import json
import os

import numpy as np
import pytest
from cfr_helpers import save_solved, walk_hand

from agents.cfr.abstraction import make_abstraction
from agents.cfr.solver import PublicTreeSolver
from agents.cfr.strategy import load_strategy
from agents.cfr.tree import PLAY, build_tree
from truc_env import TrucError, make_rules
from truc_env.game.engine import State, sample_chance
from truc_env.game.observe import info_state_string

TINY = {"ranks": 3, "hand_size": 1, "max_raises": 1, "redeal": False}
SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}


def _solve(options, iterations=50, algorithm="cfr+", abstraction="strength"):
    tree = build_tree(make_rules("le_truc", **options), abstraction=abstraction)
    solver = PublicTreeSolver(tree, algorithm)
    solver.iterate(iterations)
    return tree, solver


def test_public_tree_leaves_pay_what_the_engine_pays():
    """Random hands walked through the engine and through the public tree end at the same points."""
    rules = make_rules("le_truc", redeal=False, hand_size=2, max_raises=3)
    tree = build_tree(rules)
    rng = np.random.default_rng(1)
    for _ in range(300):
        walk_hand(tree, State(rules, episode="hand", dealer=0), rng)


def test_deal_weights_are_a_distribution():
    ab = make_abstraction(make_rules("le_truc"))
    assert ab.n_hands == 120
    W = ab.deal_weights()
    assert abs(W.sum() - 1.0) < 1e-12
    assert np.allclose(W, W.T)


def test_strength_abstraction_is_lossless_with_one_card_hands():
    """One-card hands have no duplicate plays: merged suits give the very same CFR+ iterates."""
    opts = {"hand_size": 1, "redeal": False, "max_raises": 2}
    a = PublicTreeSolver(build_tree(make_rules("le_truc", **opts), abstraction="none"))
    b = PublicTreeSolver(build_tree(make_rules("le_truc", **opts), abstraction="strength"))
    assert b.n_infosets < a.n_infosets / 3
    for _ in range(4):
        a.iterate(3)
        b.iterate(3)
        assert abs(a.exploitability() - b.exploitability()) < 1e-9


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr", "lcfr", "cfr"])
def test_exploitability_falls(algorithm):
    tree, solver = _solve(SMALL, 5, algorithm)
    first = solver.exploitability()
    solver.iterate(100)
    ev = solver.evaluate()
    assert ev["exploitability"] < first / 4
    assert ev["br0"] >= ev["value"] - 1e-9 and ev["br1"] >= -ev["value"] - 1e-9


def test_best_response_to_a_pure_strategy_is_exact():
    """Everyone folds (or refuses) at once: the values are known by hand."""
    rules = make_rules("le_truc", **TINY)
    tree = build_tree(rules)
    solver = PublicTreeSolver(tree)
    L = State(rules, episode="hand").L
    sigma = np.zeros_like(solver.sigma)
    for n in range(tree.n_nodes):
        for h in range(solver.iset_off[n + 1] - solver.iset_off[n]):
            i = solver.iset_off[n] + h
            a, b = solver.iset_start[i], solver.iset_start[i + 1]
            labs = tree.label[tree.act_start[n] + solver.slot_k[a:b]]
            give_up = L.FOLD if L.FOLD in labs else L.REFUSE
            sigma[a + int(np.nonzero(labs == give_up)[0][0])] = 1.0
    ev = solver.evaluate(sigma)
    # seat 1 leads and folds at once: seat 0 wins 1 point; a best responder gets exactly that
    assert ev["value"] == pytest.approx(1.0)
    assert ev["br0"] == pytest.approx(1.0)
    # seat 1 against a dealer who gives up at once: whatever it does first wins the 1 point accepted
    assert ev["br1"] == pytest.approx(1.0)
    assert ev["nash_conv"] == pytest.approx(2.0)


def test_openspiel_cfr_plus_gives_the_same_exploitability():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr, exploitability

    import truc_env.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(TINY)})
    theirs = cfr.CFRPlusSolver(game)
    ours = PublicTreeSolver(build_tree(make_rules("le_truc", **TINY)), "cfr+")
    for _ in range(2):
        theirs.evaluate_and_update_policy()
        ours.iterate(1)
        assert exploitability.exploitability(game, theirs.average_policy()) == pytest.approx(
            ours.exploitability(), abs=1e-6)


def test_openspiel_exploitability_of_our_strategy_equals_ours(tmp_path):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401
    from agents.cfr.openspiel_export import to_tabular_policy

    tree, solver = _solve(TINY, 30)
    path = save_solved(tmp_path, tree, solver)
    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(TINY)})
    pol = to_tabular_policy(game, load_strategy(path))
    # the file stores float32 probabilities
    assert exploitability.exploitability(game, pol) == pytest.approx(solver.exploitability(), abs=1e-5)


@pytest.mark.slow
def test_openspiel_cfr_plus_two_card_hands_without_abstraction():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr, exploitability

    import truc_env.envs.openspiel_game  # noqa: F401

    opts = {"ranks": 2, "hand_size": 2, "max_raises": 1, "redeal": False}
    game = pyspiel.load_game("python_truc", {"variant": "le_truc", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(opts)})
    theirs = cfr.CFRPlusSolver(game)
    ours = PublicTreeSolver(build_tree(make_rules("le_truc", **opts), abstraction="none"), "cfr+")
    for _ in range(2):
        theirs.evaluate_and_update_policy()
        ours.iterate(1)
        assert exploitability.exploitability(game, theirs.average_policy()) == pytest.approx(
            ours.exploitability(), abs=1e-6)


def test_strategy_file_refuses_other_rules_and_corrupt_files(tmp_path):
    tree, solver = _solve(TINY, 5)
    path = save_solved(tmp_path, tree, solver)
    s = load_strategy(path, make_rules("le_truc", **TINY))
    assert s.header["rules_key"] == make_rules("le_truc", **TINY).key
    assert s.header["truc_env_version"]
    with pytest.raises(TrucError, match="solved for"):
        load_strategy(path, make_rules("le_truc", **{**TINY, "max_raises": 2}))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip at all")
    with pytest.raises(TrucError, match=r"not a CFR strategy file \(it starts with b'not a zi'") as e:
        load_strategy(str(bad))
    assert "allow_pickle" not in str(e.value)  # not numpy's advice to unpickle it
    bad.write_bytes(b"")
    with pytest.raises(TrucError, match=r"\(an empty file\)"):
        load_strategy(str(bad))
    with pytest.raises(TrucError, match="a folder, not a CFR strategy file"):
        load_strategy(str(tmp_path))
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(TrucError, match="not a CFR strategy file"):
        load_strategy(str(other))
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]


def test_cfr_agent_plays_every_decision_from_the_strategy(tmp_path):
    from agents.cfr import load_agent

    rules = make_rules("le_truc", **SMALL)
    tree, solver = _solve(SMALL, 30)
    agent = load_agent(save_solved(tmp_path, tree, solver), rules, seed=3)
    rng = np.random.default_rng(0)
    for dealer in (0, 1):
        for _ in range(40):
            s = State(rules, episode="hand", dealer=dealer)
            while not s.is_terminal():
                if s.is_chance_node():
                    s.apply_action(sample_chance(s, rng))
                    continue
                seat = s.current_player()
                mask = np.zeros(s.L.size, dtype=np.int8)
                mask[s.legal_actions()] = 1
                obs = {"info_state": info_state_string(s, seat), "action_mask": mask, "seat": seat, "rules": rules}
                s.apply_action(agent.act(obs, mask))
    assert agent.decisions > 100 and agent.misses == 0


def test_agent_probabilities_match_the_average_strategy(tmp_path):
    from agents.cfr import load_agent

    rules = make_rules("le_truc", **TINY)
    tree, solver = _solve(TINY, 20)
    agent = load_agent(save_solved(tmp_path, tree, solver), rules)
    avg = solver.average_strategy()
    # the first player's first decision, holding the top card
    s = State(rules, episode="hand", dealer=0)
    top = max(rules.deck, key=lambda c: rules.base_strength[c])
    low = [c for c in rules.deck if rules.base_strength[c] < rules.base_strength[top]]
    s.apply_action(top)  # seat 1 is dealt first
    s.apply_action(low[0])
    mask = np.zeros(s.L.size, dtype=np.int8)
    mask[s.legal_actions()] = 1
    pol = agent.policy({"info_state": info_state_string(s, 1)}, mask)
    hand = tree.abstraction.hand_of_cards([top])
    hands = list(tree.hand_set(tree.hs[0, 1]))
    i = solver.iset_off[0] + hands.index(hand)
    a, b = solver.iset_start[i], solver.iset_start[i + 1]
    labs = tree.label[tree.act_start[0] + solver.slot_k[a:b]]
    for lab, p in zip(labs, avg[a:b]):
        act = s.L.play + s.L.card_index[top] if lab >= PLAY else int(lab)
        assert pol.get(act, 0.0) == pytest.approx(p, abs=1e-6)


def test_train_cfr_runs_checkpoints_and_resumes(tmp_path):
    from train.algos.cfr import main

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"variant: le_truc\noptions: {json.dumps(TINY)}\nalgorithm: cfr+\niterations: 20\n"
                   f"eval_every: 10\ncheckpoint_every: 10\ndtype: float64\nout: {tmp_path / 'out'}\n")
    first = main(str(cfg))
    assert first["main"]["iterations"] == 20
    cfg.write_text(cfg.read_text().replace("iterations: 20", "iterations: 30"))
    second = main(str(cfg), resume=True)
    assert second["main"]["iterations"] == 30
    for f in ("strategy.npz", "checkpoint_main.npz", "curve.csv", "curve.png", "summary.json"):
        assert (tmp_path / "out" / f).exists()
    fresh = PublicTreeSolver(build_tree(make_rules("le_truc", **TINY)), "cfr+")
    fresh.iterate(30)
    assert second["main"]["exploitability"] == pytest.approx(fresh.exploitability(), abs=1e-9)


def test_train_cfr_refuses_bad_configs_clearly(tmp_path):
    from train.algos.cfr import main

    cfg = tmp_path / "cfg.yaml"
    with pytest.raises(TrucError, match="cannot read config"):
        main(str(tmp_path / "missing.yaml"))
    cfg.write_text("variant: [le_truc\n")
    with pytest.raises(TrucError, match="not valid YAML"):
        main(str(cfg))
    cfg.write_text("- le_truc\n")
    with pytest.raises(TrucError, match="mapping of settings"):
        main(str(cfg))
    cfg.write_text("variant: le_truc\niteratoins: 5\n")
    with pytest.raises(TrucError, match="unknown setting.*iteratoins"):
        main(str(cfg))
    # a missing continuation is refused before the out folder is made
    cfg.write_text(f"variant: le_truc\ncontinuation: {tmp_path / 'nope.npz'}\nout: {tmp_path / 'out'}\n")
    with pytest.raises(TrucError, match="continuation: no strategy file"):
        main(str(cfg))
    assert not (tmp_path / "out").exists()


def test_redeal_is_solved_in_two_parts(tmp_path):
    from agents.cfr import load_agent
    from train.algos.cfr import main

    opts = {"ranks": 4, "hand_size": 1, "max_raises": 1}
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"variant: le_truc\noptions: {json.dumps(opts)}\nalgorithm: cfr+\niterations: 30\n"
                   f"dtype: float64\nout: {tmp_path / 'out'}\n")
    summary = main(str(cfg))
    assert "cont" in summary and summary["main"]["exploitability"] < 0.5
    rules = make_rules("le_truc", **opts)
    agent = load_agent(str(tmp_path / "out" / "strategy.npz"), rules, seed=0)
    rng = np.random.default_rng(0)
    redeals = 0
    for _ in range(60):
        s = State(rules, episode="hand", dealer=0)
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            seat = s.current_player()
            mask = np.zeros(s.L.size, dtype=np.int8)
            mask[s.legal_actions()] = 1
            a = agent.act({"info_state": info_state_string(s, seat)}, mask)
            redeals += a == s.L.REDEAL
            s.apply_action(a)
    assert agent.misses == 0
    # the same hand, reusing the redeal-free part from another run
    free = tmp_path / "free.yaml"
    free.write_text(cfg.read_text().replace("options: {", 'options: {"redeal": false, ').replace("/out", "/free"))
    main(str(free))
    cfg.write_text(cfg.read_text().replace("/out", "/again") + f"continuation: {tmp_path / 'free' / 'strategy.npz'}\n")
    again = main(str(cfg))
    assert again["cont"]["value_seat0"] == pytest.approx(summary["cont"]["value_seat0"])
    assert again["main"]["exploitability"] == pytest.approx(summary["main"]["exploitability"])


def test_unsupported_variants_are_refused_clearly():
    with pytest.raises(TrucError, match="flor"):
        build_tree(make_rules("truco_argentino", players=2, flor=True))
    with pytest.raises(TrucError, match="more than two"):
        build_tree(make_rules("le_truc_4p"))


def test_a_tree_that_does_not_fit_is_refused_before_it_is_built(monkeypatch):
    import truc_env.batch.vector as vector

    tree = build_tree(make_rules("le_truc", **SMALL))
    monkeypatch.setattr(vector, "available_memory", lambda: 1000)
    with pytest.raises(TrucError, match=r"public tree of this hand \(.* public nodes.*needs about [\d,]+ bytes to build, and 1,000 bytes.*--approx"):
        build_tree(make_rules("le_truc", **SMALL))
    monkeypatch.setattr(vector, "available_memory", lambda: 100 * 2**30)
    assert build_tree(make_rules("le_truc", **SMALL)).n_nodes == tree.n_nodes


def test_the_solver_keeps_no_seat_1_transitions_without_announcements():
    tree = build_tree(make_rules("le_truc", **SMALL))
    solver = PublicTreeSolver(tree, "cfr+")
    assert tree.trans1 is None and solver.trans1.size == 0  # read at announcements only
    full = PublicTreeSolver(tree, "cfr+")
    full.trans1 = np.full(len(tree.trans), -1, dtype=np.int64)
    solver.iterate(20)
    full.iterate(20)
    assert solver.exploitability() == full.exploitability()


def test_solver_counts_are_the_same_counted_in_chunks_and_match_the_solver():
    from train.algos.cfr import solver_counts

    tree = build_tree(make_rules("le_truc", **SMALL))
    whole = solver_counts(tree, chunk=tree.n_nodes)
    assert solver_counts(tree, chunk=7) == whole
    solver = PublicTreeSolver(tree, "cfr+", dtype="float32")
    assert whole["slots"] == solver.n_slots and whole["isets"] == solver.n_infosets
    assert whole["reach"] == len(solver.reach) and whole["values"] == len(solver.values)
