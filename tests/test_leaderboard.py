"""docs/leaderboard.md's generator (train/eval/leaderboard.py), on a tiny config: one arena, exact, approx and cited figures."""

import pytest

from train.eval import leaderboard as lbm
from truc_env import TrucError

SMALL = {"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": False}


def _config(tmp_path, agents):
    return {"out": str(tmp_path / "leaderboard.md"), "arena_dir": str(tmp_path / "arenas"),
            "variants": [{"variant": "le_truc", "options": SMALL, "title": "Shrunk Le Truc",
                          "arena": {"deals": 6, "seed": 3, "workers": 1}, "agents": agents}]}


def test_the_page_has_every_agent_its_figure_and_its_command(tmp_path, monkeypatch):
    agents = [{"agent": "random", "exploitability": {"kind": "exact", "measure": True}},
              {"agent": "heuristic:honest", "exploitability": {"kind": "approx", "value": 1.25, "ci95": [1.0, 1.5],
                                                               "command": "truc exploitability --approx --agent heuristic:honest",
                                                               "source": "a test"}},
              {"agent": "heuristic:bluffer", "exploitability": {"kind": "approx", "method": "lbr", "value": 0.5,
                                                                "ci95": [0.25, 0.75], "command": "truc exploitability --lbr"}},
              {"agent": "heuristic:cautious"}]
    lb = lbm.LeaderboardConfig.from_dict(_config(tmp_path, agents))
    text = lbm.generate(lb, "tiny.yaml", log=lambda m: None)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) == 4
    by = {r.split("`")[1]: r for r in rows}
    # random's exact figure on this shrunk game, measured by the generator: docs/approx_exploitability.md's 4.048
    assert "| exact |" in by["random"] and "truc exploitability --agent random --variant le_truc --options" in by["random"]
    value = float(by["random"].split("|")[2])
    assert value == pytest.approx(RANDOM_SMALL, abs=1e-4)
    assert "≥ 1.2500 (1.000 … 1.500) | approx" in by["heuristic:honest"] and "(a test)" in by["heuristic:honest"]
    assert "approx (learned best response" in by["heuristic:honest"]
    assert "≥ 0.5000 (0.250 … 0.750) | approx (local best response, a lower bound)" in by["heuristic:bluffer"]
    assert "none measured" in by["heuristic:cautious"]
    assert "python -m train.eval.leaderboard --config tiny.yaml" in text and "6 duplicate deals per pairing" in text
    # the same config gives the same page, its arena resumed and its measurements read back, not replayed
    assert len(list((tmp_path / "arenas" / "le_truc").glob("exploitability-*.json"))) == 1
    monkeypatch.setattr(lbm, "_measure", lambda *a: pytest.fail("measured again"))
    assert lbm.generate(lb, "tiny.yaml", log=lambda m: None) == text


def test_an_exact_figure_says_what_it_covers():
    ex = {"kind": "exact", "value": 0.66, "scope": "one vira per subgame", "command": "truc exploitability", "source": "x"}
    assert lbm._fmt_ex(ex) == ("0.6600", "exact (one vira per subgame)", "`truc exploitability` (x)")
    assert lbm._fmt_ex({**ex, "scope": None})[1] == "exact"


def test_main_writes_the_page(tmp_path):
    import yaml

    path = tmp_path / "lb.yaml"
    path.write_text(yaml.safe_dump(_config(tmp_path, [{"agent": "random"}, {"agent": "heuristic:honest"}])))
    assert lbm.main(["--config", str(path), "--quiet"]) == 0
    assert "## Shrunk Le Truc" in (tmp_path / "leaderboard.md").read_text()


def test_an_agent_added_starts_that_arena_afresh(tmp_path):
    lb = lbm.LeaderboardConfig.from_dict(_config(tmp_path, [{"agent": "random"}, {"agent": "heuristic:honest"}]))
    lbm.generate(lb, "tiny.yaml", log=lambda m: None)
    more = lbm.LeaderboardConfig.from_dict(_config(tmp_path, [{"agent": "random"}, {"agent": "heuristic:honest"},
                                                              {"agent": "heuristic:cautious"}]))
    text = lbm.generate(more, "tiny.yaml", log=lambda m: None)  # was: "--resume: ... another config"
    assert sum(line.startswith("| `") for line in text.splitlines()) == 3


@pytest.mark.parametrize("agents, match", [
    ([{"agent": "random", "exploitability": {"kind": "guess", "value": 1}}], "'exact' or 'approx'"),
    ([{"agent": "random", "exploitability": {"kind": "exact", "value": 1}}], "the 'command'"),
    ([{"agent": "random", "exploitability": {"kind": "approx", "method": "guess", "value": 1, "command": "x"}}],
     "'learned' .* or 'lbr'"),
    ([{"agent": "random", "exploitabilty": {"kind": "exact", "value": 1, "command": "x"}}], r"unknown keys \['exploitabilty'\]"),
    ([{"agent": "random", "exploitability": {"kind": "exact", "vlaue": 1, "value": 1, "command": "x"}}],
     r"exploitability: unknown keys \['vlaue'\]"),
    ([{"agent": "random", "exploitability": {"kind": "exact", "value": "1.2", "command": "x"}}], r"value='1.2' is invalid; expected a number"),
    ([{"agent": "random", "exploitability": {"kind": "exact", "value": -0.5, "command": "x"}}], r"value=-0.5 is invalid \(out of range\); expected a number >= 0"),
    ([{"agent": "random", "exploitability": {"kind": "approx", "value": 1.0, "ci95": [1.2, 1.4], "command": "x"}}],
     "ci95 must be"),
    ([{"agent": "random", "exploitability": {"kind": "approx", "measure": True, "br_steps": 0}}], r"br_steps=0 is invalid \(out of range\); expected an integer >= 1"),
    ([{"agent": "random"}, {"agent": "random"}], "listed twice"),
    (["random"], "a mapping with an 'agent' spec"),
])
def test_bad_configs_are_refused(tmp_path, agents, match):
    with pytest.raises(TrucError, match=match):
        lbm.LeaderboardConfig.from_dict(_config(tmp_path, agents))


def test_an_unknown_variant_key_is_refused(tmp_path):
    cfg = _config(tmp_path, [{"agent": "random"}])
    cfg["variants"][0]["arnea"] = {"deals": 10}
    with pytest.raises(TrucError, match=r"unknown keys \['arnea'\]"):
        lbm.LeaderboardConfig.from_dict(cfg)


RANDOM_SMALL = 4.0478


def test_every_committed_model_is_on_the_leaderboard():
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((root / "configs/leaderboard/all.yaml").read_text())
    lbm.LeaderboardConfig.from_dict(cfg)  # and the committed config passes its own checks
    listed = {a["agent"].split(":", 1)[1] for v in cfg["variants"] for a in v["agents"] if a["agent"].startswith("net:")}
    missing = [p.name for p in sorted((root / "models").glob("*.pt")) if f"models/{p.name}" not in listed]
    assert not missing, f"committed models missing from configs/leaderboard/all.yaml: {missing}"
    # every agent with its exact or approximate figure, each from a committed result file
    unmeasured = [f"{v['title']}: {a['agent']}" for v in cfg["variants"] for a in v["agents"] if "exploitability" not in a]
    assert not unmeasured, f"agents with no exploitability on the leaderboard: {unmeasured}"
    sources = {a["exploitability"].get("source") for v in cfg["variants"] for a in v["agents"]}
    absent = sorted(s for s in sources if s and s.startswith("docs/") and not (root / s).exists())
    assert not absent, f"result files named by the leaderboard but not committed: {absent}"
