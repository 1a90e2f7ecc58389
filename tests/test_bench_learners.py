"""train.bench.learners: our trainer and MaskablePPO measured in one run, on a tiny config."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("sb3_contrib")

from train.bench import learners  # noqa: E402

TINY = """
variant: le_truc
options: {ranks: 4, hand_size: 2}
seed: 2
num_envs: 32
steps_per_update: 256
num_minibatches: 2
update_epochs: 2
hidden: [16]
rollout: vector
self_play_prob: 1.0
"""


@pytest.mark.slow  # ~25 s alone, most of it torch's and sb3's first imports
def test_learners_bench_measures_both_trainers_per_cpu_second(tmp_path, monkeypatch):
    monkeypatch.setattr(learners, "pin_single_thread", lambda: None)  # leave the test process's cores alone
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(TINY)
    out = learners.main(["--config", str(cfg), "--base-config", "", "--updates", "2", "--sb3-updates", "1",
                         "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "learners.json").read_text())
    assert saved["rows"].keys() == {"ours", "MaskablePPO"} and saved["hidden"] == [16]
    ours, sb3 = (saved["rows"][k]["runs"][0] for k in ("ours", "MaskablePPO"))
    assert ours["learner_steps"] >= 2 * 256 and sb3["learner_steps"] == 256  # rollouts finish their episodes
    for run in (ours, sb3):
        assert run["steps_per_cpu_s"] == pytest.approx(run["learner_steps"] / run["cpu_s"])
    assert out["ours_over_maskable_ppo"] == pytest.approx(ours["steps_per_cpu_s"] / sb3["steps_per_cpu_s"])
