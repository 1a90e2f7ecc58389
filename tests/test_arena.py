"""The arena: rankings with separation, reproducibility, resume, backends."""

import json

import pytest

from train.eval.arena import ArenaConfig, run_arena
from truc_env.errors import TrucError


def _cfg(tmp_path, **kw):
    base = {"variant": "le_truc", "agents": ["random", "heuristic:honest"], "deals": 40, "episode": "hand",
            "workers": 1, "out": str(tmp_path / "out")}
    base.update(kw)
    return ArenaConfig.from_dict(base)


def _rank(summary):
    return [row["entrant"] for row in summary["ranking"]]


def test_arena_ranks_honest_above_random_le_truc(tmp_path):
    summary = run_arena(_cfg(tmp_path, deals=150), progress=False)
    assert _rank(summary) == ["heuristic:honest", "random"]
    assert summary["ranking"][0]["separated_from_next"] is True
    assert summary["pairings"][0]["separated"]


def test_arena_ranks_honest_above_random_truco_paulista_4p(tmp_path):
    summary = run_arena(_cfg(tmp_path, variant="truco_paulista", options={"players": 4}, deals=100), progress=False)
    assert _rank(summary) == ["heuristic:honest", "random"]
    assert summary["ranking"][0]["separated_from_next"] is True


def test_same_seed_gives_identical_summary(tmp_path):
    a = _cfg(tmp_path / "a", deals=8, workers=2)
    b = _cfg(tmp_path / "b", deals=8, workers=1)
    run_arena(a, progress=False)
    run_arena(b, progress=False)
    assert (tmp_path / "a/out/summary.json").read_text() == (tmp_path / "b/out/summary.json").read_text()


def test_interrupted_tournament_resumes_to_the_same_summary(tmp_path):
    full = _cfg(tmp_path / "full", deals=10, agents=["random", "heuristic:honest", "heuristic:cautious"])
    run_arena(full, progress=False)
    part = _cfg(tmp_path / "part", deals=10, agents=["random", "heuristic:honest", "heuristic:cautious"])
    partial = run_arena(part, progress=False, max_units=7)
    assert partial["complete"] is False
    units = tmp_path / "part/out/units.jsonl"
    with open(units, "a") as f:  # a line cut off by a kill
        f.write('{"id": "1:3", "pairing": 1, "gam')
    run_arena(part, resume=True, progress=False)
    lines = units.read_text().splitlines()
    assert len(lines) == 30 and len({json.loads(x)["id"] for x in lines}) == 30  # nothing replayed twice
    assert (tmp_path / "full/out/summary.json").read_text() == (tmp_path / "part/out/summary.json").read_text()


def test_resume_refuses_another_config(tmp_path):
    run_arena(_cfg(tmp_path, deals=2), progress=False)
    with pytest.raises(TrucError, match="another config"):
        run_arena(_cfg(tmp_path, deals=3), resume=True, progress=False)


def test_plots_make_room_for_a_long_agent_spec(tmp_path):
    """A table's spec holds its path; the labels must fit beside the axes (matplotlib warned and clipped them)."""
    import warnings

    from train.eval.report import _plots

    names = ["cfr:" + "/very/long/run/folder" * 5 + "/strategy.npz", "heuristic:honest"]
    summary = {"ranking": [{"entrant": n, "elo": e, "elo_lo": e - 5.0, "elo_hi": e + 5.0} for n, e in zip(names, (10.0, -10.0))],
               "pairwise": {"entrants": names, "points_per_hand": [[None, 0.1], [-0.1, None]]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _plots(summary, tmp_path)
    assert (tmp_path / "ratings.png").stat().st_size > 0 and (tmp_path / "pairwise.png").stat().st_size > 0


def test_outputs_are_written(tmp_path):
    run_arena(_cfg(tmp_path, deals=4), progress=False)
    out = tmp_path / "out"
    for name in ("summary.json", "summary.csv", "report.md", "ratings.png", "pairwise.png", "games.jsonl"):
        assert (out / name).stat().st_size > 0, name
    from truc_env.game.records import replay

    first = json.loads((out / "games.jsonl").read_text().splitlines()[0])
    assert replay(first["record"])["hand_over"]


def test_gauntlet_and_mixed_teams(tmp_path):
    cfg = _cfg(tmp_path, variant="le_truc_4p", agents=["heuristic:honest", "random", "heuristic:honest+random"],
               format="gauntlet", hero="heuristic:honest", deals=3)
    summary = run_arena(cfg, progress=False)
    assert [(p["a"], p["b"]) for p in summary["pairings"]] == [
        ("heuristic:honest", "random"), ("heuristic:honest", "heuristic:honest+random")]


def test_ray_backend_gives_the_same_summary(tmp_path):
    ray = pytest.importorskip("ray")
    run_arena(_cfg(tmp_path / "mp", deals=4), progress=False)
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:  # the arena joins the cluster it finds: this test's own, on the loopback address
        run_arena(_cfg(tmp_path / "ray", deals=4, backend="ray", workers=2), progress=False)
    finally:
        ray.shutdown()
    assert (tmp_path / "mp/out/summary.json").read_text() == (tmp_path / "ray/out/summary.json").read_text()


@pytest.mark.parametrize("bad, match", [
    ({"agents": ["random"]}, "at least 2 distinct"),
    ({"format": "swiss"}, "round_robin, gauntlet"),
    ({"variant": "poker"}, "known variants"),
    ({"colour": 1}, "unknown setting.*colour.*arena"),
    ({"format": "gauntlet", "hero": "nobody"}, "hero"),
])
def test_bad_configs_fail_clearly(tmp_path, bad, match):
    with pytest.raises(TrucError, match=match):
        _cfg(tmp_path, **bad)


def test_bad_agent_spec_fails_clearly(tmp_path):
    from agents import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="forms"):
        make_agent("alphazero")
    with pytest.raises(AgentSpecError, match="no such file"):
        make_agent("cfr:/nonexistent/strategy.npz")
    with pytest.raises(AgentSpecError, match="styles"):
        make_agent("heuristic:reckless")


def test_mixed_team_is_ranked_as_an_entrant(tmp_path):
    cfg = _cfg(tmp_path, variant="le_truc_4p", agents=["heuristic:honest", "random", "heuristic:honest+random"],
               deals=2)
    summary = run_arena(cfg, progress=False)
    assert sorted(_rank(summary)) == sorted(cfg.agents)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "`heuristic:honest+random`" in report.split("## Pairings")[0]
    with open(tmp_path / "out" / "summary.csv") as f:
        assert "heuristic:honest+random" in f.read()


def test_report_says_what_ranks_and_shows_points_per_opponent(tmp_path):
    run_arena(_cfg(tmp_path, agents=["random", "heuristic:honest", "heuristic:cautious"], deals=3), progress=False)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "not on points" in report
    assert "## Points per hand against each opponent" in report
    table = report.split("## Points per hand against each opponent")[1].split("##")[0]
    assert "vs `random`" in table and table.count("—") == 3  # the diagonal
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    m = summary["pairwise"]["points_per_hand"]
    assert m[0][1] == pytest.approx(-m[1][0])


def _summary(rows):
    ranking = [{"rank": i + 1, "entrant": e, "points_rank": p, "elo": 0.0, "elo_lo": 0.0, "elo_hi": 0.0,
                "score_rate": 0.5, "points_per_hand": 0.0, "games": 1, "separated_from_next": None}
               for i, (e, p) in enumerate(rows)]
    return {"ranking": ranking, "rank_disagreements": [e for i, (e, p) in enumerate(rows) if p != i + 1]}


def test_ranking_note_names_the_disagreements():
    from train.eval.report import ranking_note

    assert "agree" in ranking_note(_summary([("a", 1), ("b", 2)]))
    note = ranking_note(_summary([("a", 2), ("b", 1), ("c", 3)]))
    assert "`a` is 1st by results but 2nd by points per hand" in note
    assert "`b` is 2nd by results but 1st by points per hand" in note and "`c`" not in note.split("differ")[1]


def test_stats_rank_by_results_and_flag_points_disagreement():
    # A wins 3 close games of 4 against B (+1 each) and loses one heavily (-12): more wins, fewer points
    from train.eval.stats import summarize

    cfg = ArenaConfig.from_dict({"agents": ["A", "B"], "deals": 4, "duplicate": False, "episode": "game",
                                 "workers": 1, "out": "unused"})
    results = [{"id": f"0:{d}", "pairing": 0, "deal": d,
                "games": [{"seating": 0, "a_points": pts, "hands": 1, "a_won": int(pts > 0)}]}
               for d, pts in enumerate([1, 1, 1, -12])]
    s = summarize(cfg, results)
    assert _rank(s) == ["A", "B"]
    assert s["ranking"][0]["points_rank"] == 2 and s["rank_disagreements"] == ["A", "B"]
    assert s["ranking"][0]["score_rate"] == 0.75


@pytest.mark.parametrize("vr, text", [(3.1, "cut the variance of the points-per-hand estimate by ×3.10"),
                                      (1 / 1.05, "raised the variance of the points-per-hand estimate by ×1.05"),
                                      (None, None), (0.0, None)])
def test_variance_wording_is_right_either_way(vr, text):
    from train.eval.report import variance_sentence

    assert variance_sentence(vr) == (text and "duplicate deals " + text)


def test_duplicate_variance_is_reported_per_pairing_and_as_their_median():
    # three pairings: two where the seatings cancel (duplicate cuts the variance) and one of wild swings
    # that do not cancel (raised, and so large that a pooled ratio would say "raised")
    from train.eval.report import summary_variance_sentence
    from train.eval.stats import summarize

    cfg = ArenaConfig.from_dict({"agents": ["A", "B", "C"], "deals": 4, "duplicate": True, "episode": "hand",
                                 "workers": 1, "out": "unused"})
    seatings = {0: [(3, -2), (-1, 2), (2, -3), (-2, 1)], 1: [(2, -1), (-3, 2), (1, -2), (-1, 3)],
                2: [(40, 40), (-40, -40), (35, 35), (-35, -35)]}
    results = [{"id": f"{p}:{d}", "pairing": p, "deal": d,
                "games": [{"seating": s, "a_points": pts, "hands": 1, "a_won": int(pts > 0)} for s, pts in enumerate(g)]}
               for p, deals in seatings.items() for d, g in enumerate(deals)]
    s = summarize(cfg, results)
    ratios = [r["variance_reduction"] for r in s["pairings"]]
    assert ratios[0] > 1 and ratios[1] > 1 and ratios[2] < 1
    assert s["variance_reduction"] == sorted(ratios)[1] and s["variance_reduced_pairings"] == [2, 3]
    assert s["variance_reduction_pooled"] < 1  # what the headline said before: the wild pairing dominates
    assert summary_variance_sentence(s).startswith("duplicate deals cut the variance")
    assert "the median over pairings; cut in 2 of 3" in summary_variance_sentence(s)


def test_stats_and_arena_do_not_import_each_other():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "train" / "eval"
    for mod, other in (("stats", "arena"), ("report", "arena"), ("match", "arena"), ("match", "stats")):
        tree = ast.parse((root / f"{mod}.py").read_text())
        names = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any(x.endswith(other) for x in names), (mod, other)


def test_units_are_generated_lazily(tmp_path):
    cfg = _cfg(tmp_path, deals=10**9)
    out = run_arena(cfg, progress=False, max_units=2)
    assert out == {"complete": False, "units_done": 2, "units": 10**9}


def test_unwritable_output_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(TrucError, match="not writable"):
        run_arena(_cfg(tmp_path, out=str(blocker / "out"), deals=1), progress=False)


def test_resume_with_a_damaged_config_json_is_a_clear_error(tmp_path):
    cfg = _cfg(tmp_path, deals=1)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.json").write_bytes(b"\xff\xfe{")
    with pytest.raises(TrucError, match="not a tournament's config.json"):
        run_arena(cfg, resume=True, progress=False)
