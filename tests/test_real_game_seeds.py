"""scripts/real_game_seeds.py: the per-seed curves of one learner, read from finished runs, and their median."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
ROOT = Path(__file__).resolve().parents[1]
CONFIG = "configs/ppo/small_mmd_small_steps.yaml"  # 240 updates, measured every 8


def load():
    spec = importlib.util.spec_from_file_location("real_game_seeds", ROOT / "scripts" / "real_game_seeds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_run(runs: Path, seed: int, ends: float, last_update: int = 240) -> None:
    folder = runs / f"learn_small_mmd_small_steps_s{seed}"
    folder.mkdir(parents=True)
    with open(folder / "exploitability.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["update", "global_step", "exploitability", "br0", "br1", "value_seat0", "cpu_seconds"])
        for u in range(8, last_update + 1, 8):
            w.writerow([u, u * 4096, 1.0 if u < last_update else ends, 1.5, 0.5, 0.2, 1.0])


def test_finished_runs_are_read_and_their_median_reported(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    mod = load()
    for seed, end in ((0, 0.30), (1, 0.10), (2, 0.20)):
        fake_run(tmp_path, seed, end)
    out_csv, out_png = tmp_path / "curve.csv", tmp_path / "curve.png"
    assert mod.main(["--config", CONFIG, "--runs", str(tmp_path), "--csv", str(out_csv), "--png", str(out_png)]) == 0
    text = capsys.readouterr().out
    assert "median 0.200 (range 0.100 ... 0.300)" in text
    assert "seed 1: 0.100" in text
    rows = list(csv.DictReader(open(out_csv)))
    assert len(rows) == 3 * 30 and rows[0]["seed"] == "0"
    assert out_png.read_bytes()[:4] == b"\x89PNG"


def test_an_unfinished_run_is_not_taken_as_finished(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    mod = load()
    from train.algos.ppo import PPOConfig

    fake_run(tmp_path, 0, 0.3, last_update=120)
    cfg = PPOConfig.from_yaml(CONFIG)
    assert not mod.finished(cfg, 0, str(tmp_path))
    name = "learn_small_mmd_small_steps_s0"
    assert "--resume" not in mod.command(CONFIG, 0, str(tmp_path), name)  # no checkpoint yet: a fresh run
    (tmp_path / name / "checkpoint.pt").write_bytes(b"")
    assert mod.command(CONFIG, 0, str(tmp_path), name)[-1] == "--resume"  # an interrupted one goes on


def test_repeated_seeds_are_refused(capsys):
    mod = load()
    with pytest.raises(SystemExit):
        mod.main(["--seeds", "0", "0"])
    assert "each seed once" in capsys.readouterr().err
