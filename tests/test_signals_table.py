"""scripts/signals_table.py: the per-seed tables of docs/signals.md are the ones its results files give."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ["signals_warm_truco_paulista_4p", "signals_warm_truco_paulista_4p_honest",
           "signals_warm_truco_argentino_4p", "signals_warm_truco_argentino_4p_honest",
           "signals_warm_long_le_truc_4p", "signals_warm_long_le_truc_4p_honest",
           "signals_warm_long_truco_paulista_4p", "signals_warm_long_truco_paulista_4p_honest",
           "signals_warm_long4m_le_truc_4p", "signals_warm_long4m_le_truc_4p_honest",
           "signals_oracle_long_truco_paulista_4p", "signals_oracle_long4m_le_truc_4p",
           "signals_warm_mix4m_le_truc_4p", "signals_warm_mix4m_le_truc_4p_honest",
           "signals_warm_mix4m_le_truc_4p_bluffer", "signals_warm_mix4m_le_truc_4p_cautious",
           "signals_oracle_mix4m_le_truc_4p", "signals_warm_mix_truco_paulista_4p",
           "signals_warm_mix_truco_paulista_4p_honest"]


def load():
    spec = importlib.util.spec_from_file_location("signals_table", ROOT / "scripts" / "signals_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rows(text: str) -> list[str]:
    """The data rows of a table (not its header), whitespace collapsed."""
    out = [re.sub(r"\s+", " ", line) for line in text.splitlines() if line.startswith("| ")]
    return [r for r in out if not r.startswith("| seed ")]


def doc_rows() -> set[str]:
    return set(rows((ROOT / "docs" / "signals.md").read_text()))


@pytest.mark.parametrize("name", STUDIES)
def test_the_docs_table_is_the_results_file(name):
    study = json.loads((ROOT / "docs" / "results" / "data" / f"{name}.json").read_text())["study"]
    table = rows(load().table(study))
    assert len(table) == 7  # five seeds, pooled over deals, pooled over runs
    documented = doc_rows()
    missing = [r for r in table if r not in documented]
    assert missing == [], f"docs/signals.md disagrees with {name}.json: {missing}"


def test_a_changed_figure_is_caught():
    # the negative control of the test above: one seed's gap moved by 0.01 no longer matches the docs
    study = json.loads((ROOT / "docs" / "results" / "data" / f"{STUDIES[0]}.json").read_text())["study"]
    first = next(c for c in study["configs"].values() if c.get("channel"))
    run = first["runs"][0]
    first["per_seed"][run]["channel_minus_twin"]["mean"] += 0.01
    table = rows(load().table(study))
    documented = doc_rows()
    assert any(r not in documented for r in table)


def test_a_bound_that_decides_is_never_shown_as_zero():
    fmt = load().fmt
    assert fmt({"mean": 0.16, "lo": 0.0003, "hi": 0.33}) == "**+0.16 [+0.0003, +0.33]**"
    assert fmt({"mean": 0.16, "lo": -0.0003, "hi": 0.33}) == "+0.16 [−0.00, +0.33]"
    assert fmt({"mean": -0.2, "lo": -0.4, "hi": -0.1}, bold=False) == "−0.20 [−0.40, −0.10]"


def test_the_script_reads_a_committed_results_file_and_refuses_other_json(tmp_path):
    script = str(ROOT / "scripts" / "signals_table.py")
    out = subprocess.run([sys.executable, script, str(ROOT / "docs" / "results" / "data" / f"{STUDIES[0]}.json")],
                         capture_output=True, text=True, check=True).stdout
    documented = doc_rows()
    assert rows(out) and all(r in documented for r in rows(out))
    bad = tmp_path / "other.json"
    bad.write_text('{"note": "not a study"}')
    done = subprocess.run([sys.executable, script, str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "not a study's experiment.json" in done.stderr and "Traceback" not in done.stderr


def study(name: str) -> dict:
    return json.loads((ROOT / "docs" / "results" / "data" / f"{name}.json").read_text())["study"]


def documented_share(talking: str, oracle: str) -> str:
    """The share line of two committed studies, checked to be the one docs/signals.md shows."""
    line = load().share_line(study(talking), study(oracle))
    assert line in (ROOT / "docs" / "signals.md").read_text().replace("\n", " ")
    return line


def test_the_oracle_share_of_the_documented_study_is_the_one_the_docs_give():
    line = documented_share("signals_warm_long4m_le_truc_4p", "signals_oracle_long4m_le_truc_4p")
    assert line.startswith("share of the oracle captured over 5 runs: 47% [26%, 81%]")
    assert line.endswith("channel − oracle over runs −0.26 [−0.45, −0.07] (paired by seed)")
    with pytest.raises(SystemExit, match="different twins"):
        load().share_line(study("signals_warm_long4m_le_truc_4p"), study("signals_oracle_long_truco_paulista_4p"))


def test_a_share_whose_oracle_is_not_resolved_has_no_interval_and_says_what_the_channel_gains_beyond_it():
    line = documented_share("signals_warm_mix4m_le_truc_4p", "signals_oracle_mix4m_le_truc_4p")
    assert "[no finite interval: oracle − twin not resolved]" in line
    assert line.endswith("channel − oracle over runs +0.29 [+0.09, +0.50] (paired by seed)")
