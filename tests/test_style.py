"""``truc analyze style``: raise, give-up and redeal rates by hand strength, in self-play.

Controls with asserted values: the bluffer raises with weak hands where the honest style never does (the
positive control), the random agent's rates do not depend on its hand (the negative control), and the honest
style raises more the stronger its hand.
"""

from __future__ import annotations

import json

import pytest

from train.analysis.style import THIRDS, play_style, tercile_cuts
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

RULES = make_rules("le_truc")


@pytest.fixture(scope="module")
def styles():
    cuts = tercile_cuts(RULES)
    return {s: play_style(s, RULES, hands=800, seed=3, cuts=cuts)
            for s in ("heuristic:honest", "heuristic:bluffer", "random")}


def rate(res, name, third):
    return res["rates"][name][third]["rate"]


def test_style_bluffer_raises_weak_hands_and_honest_does_not(styles):
    honest, bluffer = styles["heuristic:honest"], styles["heuristic:bluffer"]
    assert rate(honest, "raise", "weak") < 0.02  # measured 0.00
    assert rate(bluffer, "raise", "weak") > 0.10  # measured 0.18
    assert bluffer["rates"]["raise"]["weak"]["lo"] > honest["rates"]["raise"]["weak"]["hi"]
    assert rate(honest, "raise", "strong") > rate(honest, "raise", "weak") + 0.3  # measured 0.50 against 0.00
    assert rate(honest, "give_up", "weak") > rate(honest, "give_up", "strong") + 0.5  # measured 0.95 / 0.11


def test_style_random_does_not_depend_on_its_hand(styles):
    res = styles["random"]
    for name in ("raise", "give_up"):
        cells = [res["rates"][name][t] for t in THIRDS]
        assert max(c["rate"] for c in cells) - min(c["rate"] for c in cells) < 0.08, (name, cells)
        assert max(c["lo"] for c in cells) < min(c["hi"] for c in cells)  # the intervals overlap
    assert abs(rate(res, "give_up", "middle") - 0.5) < 0.08  # accept or refuse, evenly


def test_style_is_reproducible_and_refuses_bad_input(styles):
    again = play_style("heuristic:bluffer", RULES, hands=800, seed=3)
    assert json.dumps(again, sort_keys=True) == json.dumps(styles["heuristic:bluffer"], sort_keys=True)
    with pytest.raises(TrucError, match="heads-up"):
        play_style("random", make_rules("le_truc_4p"), hands=10)
    with pytest.raises(TrucError, match="--hands must be at least 1"):
        play_style("random", RULES, hands=0)


def test_style_cli_writes_json_table_and_png(tmp_path, capsys):
    from train.commands.cli import main

    out = tmp_path / "style"
    assert main(["analyze", "style", "--agent", "random", "--agent", "heuristic:honest", "--hands", "50",
                 "--out", str(out)]) == 0
    got = json.loads((out / "style.json").read_text())
    assert [r["agent"] for r in got["results"]] == ["random", "heuristic:honest"]
    assert (out / "style.png").stat().st_size > 0 and "| `random` |" in (out / "style.md").read_text()
    assert main(["analyze", "style", "--agent", "nobody:x", "--hands", "5"]) == 2
    assert "nobody" in capsys.readouterr().err
