"""Partnership MCCFR: abstraction keys, training runs, checkpoints and resume, strategy files, the agent."""

import json

import numpy as np
import pytest

from agents import make_agent
from agents.cfr.mccfr import MCCFR, MCCFRAgent, load_strategy
from agents.cfr.partnership_abstraction import PartnershipAbstraction, state_key, view_key
from train.algos.cfr import CFRConfig, run
from train.eval.arena import ArenaConfig, run_arena
from truc_env import TrucError, make_rules
from truc_env.game.engine import State, sample_chance
from truc_env.game.observe import SeatObservation
from truc_env.game.view import seat_view

SHRUNK = {
    "le_truc_4p": {"ranks": 3, "hand_size": 2, "max_raises": 1},
    "truco_paulista": {"players": 4, "ranks": 3, "hand_size": 2, "max_raises": 1},
}


def _random_states(rules, hands, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(hands):
        s = State(rules, episode="hand", dealer=int(rng.integers(4)))
        while not s.is_terminal():
            if s.is_chance_node():
                s.apply_action(sample_chance(s, rng))
                continue
            yield s
            s.apply_action(int(rng.choice(s.legal_actions())))


@pytest.mark.parametrize("variant, options", [
    ("le_truc_4p", {}),
    ("truco_paulista", {"players": 4}),
    ("truco_paulista", {"players": 4, "signals": {"mode": "senas", "intercept": 0.5}}),
])
def test_training_and_playing_keys_agree(variant, options):
    """The key built from the engine state (training) equals the one built from the seat's view (play)."""
    rules = make_rules(variant, **options)
    ab = PartnershipAbstraction(rules)
    for s in _random_states(rules, 60):
        seat = s.current_player()
        view = seat_view(s, seat)
        assert state_key(ab, s, seat) == view_key(ab, view)
        legal = s.legal_actions()
        acts = ab.abstract_actions(legal, list(view["own"]), view["strength"], list(view["trick"]))
        assert acts and all(e in legal for _, e in acts)
        assert len({a for a, _ in acts}) == len(acts)


def test_paulista_classes_follow_the_manilhas():
    rules = make_rules("truco_paulista", players=4)
    ab = PartnershipAbstraction(rules)
    fam = rules.family
    vira = fam.parse("7c")  # manilhas are the queens
    cls = ab.classes(rules.strength_with_vira(vira))
    assert cls[fam.parse("Qc")] == 0 and cls[fam.parse("Qh")] == 0  # zap, copas
    assert cls[fam.parse("Qs")] == 1 and cls[fam.parse("Qd")] == 1
    assert cls[fam.parse("3d")] == 2 and cls[fam.parse("2s")] == 3
    assert cls[fam.parse("Ah")] == 4 and cls[fam.parse("Kh")] == 4
    assert cls[fam.parse("Jh")] == 5 and cls[fam.parse("4c")] == 5


def test_unsupported_games_are_refused():
    with pytest.raises(TrucError, match="partnership"):
        MCCFR(make_rules("le_truc"))
    with pytest.raises(TrucError, match="envido"):
        MCCFR(make_rules("truco_argentino"))


def _cfg(tmp_path, variant, iterations, name="run", algorithm="es_mccfr"):
    return CFRConfig(variant=variant, options=SHRUNK[variant], algorithm=algorithm, iterations=iterations,
                     checkpoint_every=10, seed=3, out=str(tmp_path / name))


def _tables(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("variant", ["le_truc_4p", "truco_paulista"])
def test_checkpoint_and_resume_give_identical_tables(tmp_path, variant):
    straight = run(_cfg(tmp_path, variant, 40, "straight"), log=lambda *a: None)
    assert straight["iterations"] == 40 and straight["infosets"] > 0
    run(_cfg(tmp_path, variant, 20, "split"), log=lambda *a: None)
    resumed = run(_cfg(tmp_path, variant, 40, "split"), resume=True, log=lambda *a: None)
    assert resumed["iterations"] == 40
    a, b = _tables(tmp_path / "straight" / "checkpoint.npz"), _tables(tmp_path / "split" / "checkpoint.npz")
    assert bytes(a["keys"]) == bytes(b["keys"])
    assert np.array_equal(a["regret"], b["regret"]) and np.array_equal(a["avg"], b["avg"])
    sa, sb = _tables(tmp_path / "straight" / "strategy.npz"), _tables(tmp_path / "split" / "strategy.npz")
    assert np.array_equal(sa["policy"], sb["policy"])
    rows = (tmp_path / "split" / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("iteration") and rows[-1].startswith("40,")


def test_outcome_sampling_runs_and_learns_a_strategy(tmp_path):
    summary = run(_cfg(tmp_path, "truco_paulista", 200, algorithm="os_mccfr"), log=lambda *a: None)
    strat = load_strategy(summary["strategy"])
    assert strat.policy.shape[0] > 0
    assert np.allclose(strat.policy.sum(axis=1), 1.0, atol=1e-5)
    assert strat.header["algorithm"] == "os_mccfr"


@pytest.mark.parametrize("variant", ["le_truc_4p", "truco_paulista"])
def test_cfr_agent_plays_legal_actions_in_the_arena(tmp_path, variant):
    summary = run(_cfg(tmp_path, variant, 30), log=lambda *a: None)
    spec = f"cfr:{summary['strategy']}"
    rules = make_rules(variant, **SHRUNK[variant])
    agent = make_agent(spec, rules, seed=0)
    assert isinstance(agent, MCCFRAgent)
    for s in _random_states(rules, 20, seed=5):
        seat = s.current_player()
        mask = np.zeros(s.L.size, dtype=np.int8)
        mask[s.legal_actions()] = 1
        pol = agent.policy(SeatObservation(s, seat, mask), mask)
        assert abs(sum(pol.values()) - 1.0) < 1e-6 and all(mask[a] for a in pol)
    assert agent.decisions > 0 and agent.misses < agent.decisions
    cfg = ArenaConfig.from_dict({"variant": variant, "options": SHRUNK[variant], "agents": [spec, "heuristic:honest"],
                                 "deals": 4, "episode": "hand", "workers": 1, "out": str(tmp_path / "arena")})
    result = run_arena(cfg, progress=False)  # the engine raises on any illegal action
    assert result["pairings"][0]["games"] == 8


@pytest.mark.parametrize("variant", ["le_truc_4p", "truco_paulista"])
def test_a_partnership_table_plays_cards_of_equal_strength_evenly(tmp_path, variant):
    """Equal cards win and lose the same tricks; which of them the table plays must say nothing (the lowest id
    did: the suit of the card played told an opponent which twin the seat kept)."""
    summary = run(_cfg(tmp_path, variant, 30), log=lambda *a: None)
    rules = make_rules(variant, **SHRUNK[variant])
    agent = make_agent(f"cfr:{summary['strategy']}", rules, seed=0)
    checked = 0
    for s in _random_states(rules, 300, seed=3):
        seat = s.current_player()
        mask = np.zeros(s.L.size, dtype=np.int8)
        mask[s.legal_actions()] = 1
        obs = SeatObservation(s, seat, mask)
        strength = obs["view"]["strength"]
        plays = [a for a in s.legal_actions() if s.L.play <= a < s.L.play + len(s.L.deck)]
        by_strength = {}
        for a in plays:
            by_strength.setdefault(strength[s.L.deck[a - s.L.play]], []).append(a)
        twins = [g for g in by_strength.values() if len(g) > 1]
        if not twins:
            continue
        pol = agent.policy(obs, mask)
        for g in twins:
            assert len({round(pol.get(a, 0.0), 12) for a in g}) == 1, (g, pol)
        checked += 1
    assert checked >= 5


def test_strategy_file_refuses_other_rules_and_corrupt_files(tmp_path):
    summary = run(_cfg(tmp_path, "truco_paulista", 5), log=lambda *a: None)
    path = summary["strategy"]
    other = make_rules("truco_paulista", players=4)
    with pytest.raises(TrucError, match="cannot play"):
        load_strategy(path, other)
    with pytest.raises(TrucError, match="cannot play"):
        make_agent(f"cfr:{path}", other)
    header = json.loads(bytes(_tables(path)["header"]).decode())
    assert header["rules_key"] == make_rules("truco_paulista", **SHRUNK["truco_paulista"]).key
    assert header["format"] == "truc-mccfr-strategy" and "truc_env_version" in header
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(TrucError, match="not a readable"):
        load_strategy(str(bad))
    # a checkpoint of other Rules is refused on resume
    with pytest.raises(TrucError, match="trained for"):
        MCCFR(other).load_checkpoint(str(tmp_path / "run" / "checkpoint.npz"))


def test_threshold_and_exclude_shape_the_played_strategy(tmp_path):
    cfg = _cfg(tmp_path, "le_truc_4p", 30)
    cfg.threshold, cfg.exclude = 1.0, ["allin", "raise"]
    summary = run(cfg, log=lambda *a: None)
    rules = make_rules("le_truc_4p", **SHRUNK["le_truc_4p"])
    agent = make_agent(f"cfr:{summary['strategy']}", rules, seed=0)
    assert agent.threshold == 1.0
    L = agent.ab.L
    for s in _random_states(rules, 30, seed=7):
        seat = s.current_player()
        mask = np.zeros(s.L.size, dtype=np.int8)
        mask[s.legal_actions()] = 1
        pol = agent.policy(SeatObservation(s, seat, mask), mask)
        if any(a not in (L.RAISE, L.ALL_IN) for a in s.legal_actions()):
            assert L.RAISE not in pol and L.ALL_IN not in pol
    cfg.exclude = ["no such action"]
    with pytest.raises(TrucError, match="unknown abstract action"):
        run(cfg, resume=True, log=lambda *a: None)
