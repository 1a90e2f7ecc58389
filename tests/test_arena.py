"""The arena: rankings with separation, reproducibility, resume, backends."""

import json

import pytest

from train.arena import ArenaConfig, run_arena
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


def test_outputs_are_written(tmp_path):
    run_arena(_cfg(tmp_path, deals=4), progress=False)
    out = tmp_path / "out"
    for name in ("summary.json", "summary.csv", "report.md", "ratings.png", "pairwise.png", "games.jsonl"):
        assert (out / name).stat().st_size > 0, name
    from truc_env.records import replay

    first = json.loads((out / "games.jsonl").read_text().splitlines()[0])
    assert replay(first["record"])["hand_over"]


def test_gauntlet_and_mixed_teams(tmp_path):
    cfg = _cfg(tmp_path, variant="le_truc_4p", agents=["heuristic:honest", "random", "heuristic:honest+random"],
               format="gauntlet", hero="heuristic:honest", deals=3)
    summary = run_arena(cfg, progress=False)
    assert [(p["a"], p["b"]) for p in summary["pairings"]] == [
        ("heuristic:honest", "random"), ("heuristic:honest", "heuristic:honest+random")]


def test_ray_backend_gives_the_same_summary(tmp_path):
    pytest.importorskip("ray")
    run_arena(_cfg(tmp_path / "mp", deals=4), progress=False)
    run_arena(_cfg(tmp_path / "ray", deals=4, backend="ray", workers=2), progress=False)
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
