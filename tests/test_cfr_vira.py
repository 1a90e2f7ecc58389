"""Heads-up Truco Paulista on the public tree: one subgame per vira, checked against the engine and OpenSpiel."""

import json

import numpy as np
import pytest
from cfr_helpers import walk_hand

from agents.cfr.solver import PublicTreeSolver
from agents.cfr.tree import CHILD, PLAY, STUCK, build_tree, unsupported_reason, vira_subgames
from truc_env import TrucError, make_rules
from truc_env.game.engine import State, sample_chance

TINY = {"players": 2, "ranks": 2, "hand_size": 1, "max_raises": 1}
SMALL = {"players": 2, "ranks": 4, "hand_size": 2, "max_raises": 2}


def _paulista(options):
    return make_rules("truco_paulista", **options)


def _subgame_solvers(rules, abstraction="strength", algorithm="cfr+"):
    return [(w, PublicTreeSolver(build_tree(rules, vira=v, abstraction=abstraction), algorithm))
            for v, w, _ in vira_subgames(rules)]


def _whole(subs, key="exploitability"):
    return sum(w * s.evaluate()[key] for w, s in subs)


def _train(tmp_path, options, iterations, abstraction="strength", name="out"):
    from train.algos.cfr import main

    cfg = tmp_path / f"{name}.yaml"
    cfg.write_text(f"variant: truco_paulista\noptions: {json.dumps(options)}\nalgorithm: cfr+\n"
                   f"abstraction: {abstraction}\niterations: {iterations}\neval_every: 10\ncheckpoint_every: 10\n"
                   f"dtype: float64\nout: {tmp_path / name}\n")
    return cfg, main


def test_the_vira_suit_does_not_matter_and_weights_sum_to_one():
    rules = _paulista({"players": 2})
    subs = vira_subgames(rules)
    fam = rules.family
    assert abs(sum(w for _, w, _ in subs) - 1.0) < 1e-12
    for _, _, members in subs:
        ranks = {fam.rank_of(v) for v in members}
        # every suit of a rank is in the same subgame
        assert all(sum(fam.rank_of(c) == r for c in members) == 4 for r in ranks)
    # a 2 and a 3 turned make the same game (the top plain rank keeps 3 cards, the 4 manilhas above)
    assert len(subs) == 9
    assert sorted(len(m) for _, _, m in subs) == [4] * 8 + [8]


def test_tree_root_turns_the_vira_and_manilhas_rank_by_suit():
    rules = _paulista(SMALL)
    for vira, _, _ in vira_subgames(rules):
        tree = build_tree(rules, vira=vira)
        ab = tree.abstraction
        assert tree.vira == vira and vira not in ab.card_class
        assert abs(tree.W.sum() - 1.0) < 1e-12 and np.allclose(tree.W, tree.W.T)
        manilha = rules.manilha_rank(vira)
        tops = [rules.family.format(c) for c in sorted(ab.card_class, key=ab.card_class.get)][-4:]
        assert tops == [f"{manilha}{s}" for s in "dshc"]  # ouros < espadilha < copas < zap


def test_public_tree_leaves_pay_what_the_engine_pays():
    """Random Paulista hands walked through the engine and through their vira's tree end at the same points."""
    rules = _paulista(SMALL)
    trees = {}
    for vira, _, members in vira_subgames(rules):
        tree = build_tree(rules, vira=vira)
        trees.update({v: tree for v in members})
    rng = np.random.default_rng(2)
    for _ in range(300):
        s = State(rules, episode="hand", dealer=0)
        while s.is_chance_node():
            s.apply_action(sample_chance(s, rng))
        from agents.cfr.abstraction import make_abstraction

        walk_hand(trees[s.vira], s, rng, make_abstraction(rules, vira=s.vira).card_class)


@pytest.mark.parametrize("abstraction", ["strength", "none"])
def test_ruled_out_hands_keep_an_action_and_best_response_is_finite(abstraction):
    """A hand whose manilha the opponent already played has no card to play: a 0 leaf keeps BR finite.

    (Mineiro's named manilhas are one-card classes too: its best response was -4e300 without it.)
    """
    rules = _paulista(TINY)
    subs = _subgame_solvers(rules, abstraction)
    mineiro = build_tree(make_rules("truco_mineiro", players=2, ranks=3, hand_size=1, max_raises=1),
                         abstraction=abstraction)
    subs.append((1.0, PublicTreeSolver(mineiro)))
    assert all((s.tree.label == STUCK).any() for _, s in subs)
    for _, s in subs:
        s.iterate(5)
        ev = s.evaluate()
        assert abs(ev["br0"]) < 12 and abs(ev["br1"]) < 12 and ev["exploitability"] >= -1e-12


@pytest.mark.slow  # about 20 s: OpenSpiel's Python CFR+ (the exported-strategy check stays in the fast suite)
def test_openspiel_cfr_plus_gives_the_same_exploitability():
    """OpenSpiel's CFR+ on the whole hand (the vira a chance node) = our subgames weighted by vira chance."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr, exploitability

    import truc_env.envs.openspiel_game  # noqa: F401

    game = pyspiel.load_game("python_truc", {"variant": "truco_paulista", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(TINY)})
    theirs = cfr.CFRPlusSolver(game)
    ours = _subgame_solvers(_paulista(TINY), "none")
    for _ in range(2):
        theirs.evaluate_and_update_policy()
        for _, s in ours:
            s.iterate(1)
        assert exploitability.exploitability(game, theirs.average_policy()) == pytest.approx(_whole(ours), abs=1e-6)


def test_openspiel_exploitability_of_our_strategy_equals_ours(tmp_path):
    """The trained strategy file, played by vira through the cfr agent, measured by OpenSpiel."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401
    from agents.cfr.openspiel_export import to_tabular_policy
    from agents.cfr.strategy import load_strategy

    cfg, main = _train(tmp_path, TINY, 30)
    summary = main(str(cfg))
    game = pyspiel.load_game("python_truc", {"variant": "truco_paulista", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(TINY)})
    pol = to_tabular_policy(game, load_strategy(str(tmp_path / "out" / "strategy.npz"), _paulista(TINY)))
    ours = summary["whole"]["exploitability"]
    assert 0 < ours < 0.2
    # the file stores float32 probabilities
    assert exploitability.exploitability(game, pol) == pytest.approx(ours, abs=1e-6)


def _lift(strength: PublicTreeSolver, concrete: PublicTreeSolver, sigma: np.ndarray) -> np.ndarray:
    """A strength-class strategy as a card strategy: a class play split evenly over the hand's cards of it."""
    tS, tN = strength.tree, concrete.tree
    abS, abN = tS.abstraction, tN.abstraction
    to_class = {k: abS.card_class[c] for c, k in abN.card_class.items()}
    out = np.zeros_like(concrete.sigma)

    def lab_s(lab):
        return PLAY + to_class[lab - PLAY] if lab >= PLAY else lab

    def walk(nn, ns):
        hands_s = list(tS.hand_set(tS.hs[ns, tS.actor[ns]]))
        labs_s = list(tS.label[tS.act_start[ns]:tS.act_start[ns + 1]])
        labs_n = tN.label[tN.act_start[nn]:tN.act_start[nn + 1]]
        for j, h in enumerate(tN.hand_set(tN.hs[nn, tN.actor[nn]])):
            i = concrete.iset_off[nn] + j
            a, b = concrete.iset_start[i], concrete.iset_start[i + 1]
            mine = [lab_s(labs_n[k]) for k in concrete.slot_k[a:b]]
            hs = abS.hand_index[tuple(sorted(to_class[c] for c in abN.hands[h]))]
            dist = {}
            if hs in hands_s:
                k = strength.iset_off[ns] + hands_s.index(hs)
                for s in range(strength.iset_start[k], strength.iset_start[k + 1]):
                    dist[labs_s[strength.slot_k[s]]] = sigma[s]
            for s, lab in zip(range(a, b), mine):
                out[s] = dist[lab] / mine.count(lab) if lab in dist else 1.0 / (b - a)
        for e in range(tN.act_start[nn], tN.act_start[nn + 1]):
            if tN.kind[e] == CHILD:
                walk(tN.child[e], tS.child[tS.act_start[ns] + labs_s.index(lab_s(tN.label[e]))])

    walk(0, 0)
    return out


@pytest.mark.parametrize("options", [TINY, {"players": 2, "ranks": 3, "hand_size": 2, "max_raises": 1}])
def test_per_vira_strength_abstraction_is_lossless(options):
    """A strategy of the per-vira class game, played on the cards, is exactly as exploitable.

    (Iterates themselves can part: regret matching breaks exact ties of the two games differently.)
    """
    rules = _paulista(options)
    for vira, _, _ in vira_subgames(rules):
        s = PublicTreeSolver(build_tree(rules, vira=vira))
        n = PublicTreeSolver(build_tree(rules, vira=vira, abstraction="none"))
        assert s.n_infosets < n.n_infosets
        for _ in range(3):
            avg = s.average_strategy()
            ours = s.evaluate(avg)
            theirs = n.evaluate(_lift(s, n, avg))
            for key in ("value", "br0", "br1"):
                assert theirs[key] == pytest.approx(ours[key], abs=1e-9)
            s.iterate(7)


def test_train_resumes_and_the_agent_plays_legal_actions_in_the_arena(tmp_path):
    from agents.cfr import load_agent
    from train.eval.match import play_game

    rules = _paulista(SMALL)
    cfg, main = _train(tmp_path, SMALL, 20)
    first = main(str(cfg))
    assert first["whole"]["iterations"] == 20
    cfg.write_text(cfg.read_text().replace("iterations: 20", "iterations: 30"))
    second = main(str(cfg), resume=True)
    assert second["whole"]["iterations"] == 30
    for f in ("strategy.npz", "curve.csv", "curve.png", "summary.json"):
        assert (tmp_path / "out" / f).exists()
    fresh = _subgame_solvers(rules)
    for _, s in fresh:
        s.iterate(30)
    assert second["whole"]["exploitability"] == pytest.approx(_whole(fresh), abs=1e-9)
    curve = (tmp_path / "out" / "curve.csv").read_text().splitlines()
    assert sum(line.startswith("whole,") for line in curve) == 3  # iterations 10, 20, 30
    # a finished run resumes without solving again
    assert main(str(cfg), resume=True)["whole"]["exploitability"] == second["whole"]["exploitability"]

    agent = load_agent(str(tmp_path / "out" / "strategy.npz"), rules, seed=1)
    other = load_agent(str(tmp_path / "out" / "strategy.npz"), rules, seed=2)
    for seed in range(30):
        play_game(rules, [agent, other], seed, episode="hand", record=False, dealer=seed % 2)
    assert agent.decisions > 30 and agent.misses == 0 and other.misses == 0
    play_game(rules, [agent, other], 0, episode="game", record=False)  # whole games (mão de onze: uniform)


def test_unsupported_rules_are_refused_clearly(tmp_path):
    rules = _paulista(TINY)
    assert unsupported_reason(rules) is None
    assert "11" in unsupported_reason(rules, (11, 3))
    with pytest.raises(TrucError, match="special hands at 11"):
        build_tree(rules, score=(11, 0), vira=rules.deck[0])
    with pytest.raises(TrucError, match="one tree per vira"):
        build_tree(rules)
    with pytest.raises(TrucError, match="more than two"):
        build_tree(make_rules("truco_paulista", ranks=4, hand_size=1))
    with pytest.raises(TrucError, match="turns no vira"):
        build_tree(make_rules("le_truc", ranks=3, hand_size=1), vira=0)
    cfg, main = _train(tmp_path, TINY, 10)
    cfg.write_text(cfg.read_text() + "score: [0, 11]\n")
    with pytest.raises(TrucError, match="special hands at 11"):
        main(str(cfg))
