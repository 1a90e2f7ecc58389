"""The regularized condition of the learned-conventions experiment (issue 17 item 4, docs/signals.md
"Regularized self-play: MMD"): the MMD config is the plain card-channel config with the tuned magnet of
the learning benchmark and nothing else changed, its figures get their own names, and MMD trains a
Le Truc 2 vs 2 team against fixed opponents (nothing refuses 4 players or a fixed-opponent mix)."""

from __future__ import annotations

import os

import pytest

from train.algos.signals_runs import config_label, experiment_family, load_experiment, opponent_suffix

torch = pytest.importorskip("torch")


def test_mmd_config_is_the_plain_config_with_the_tuned_magnet():
    from train.algos.ppo import PPOConfig

    plain = PPOConfig.from_yaml("configs/signals/conv_ppo_le_truc_4p.yaml")
    mmd = PPOConfig.from_yaml("configs/signals/mmd_ppo_le_truc_4p.yaml")
    tuned = PPOConfig.from_yaml("configs/ppo/small_mmd_tuned.yaml")
    differ = {k for k in vars(plain) if getattr(plain, k) != getattr(mmd, k)}
    assert differ == {"name", "algorithm", "magnet_coef", "magnet_coef_end"}
    assert mmd.algorithm == "mmd" and plain.algorithm == "ppo"
    for k in ("magnet", "magnet_coef", "magnet_coef_end"):
        assert getattr(mmd, k) == getattr(tuned, k)
    exp = load_experiment("configs/signals/mmd_le_truc_4p.yaml")
    assert sorted({r.seed for r in exp["runs"]}) == [1, 2, 3, 4, 5]
    assert exp["analysis"]["against"] == "random" and exp["analysis"]["deals"] >= 5000


def test_figures_of_each_experiment_keep_their_own_names():
    assert experiment_family("configs/signals/conv_le_truc_4p.yaml") == "signals_conv"
    assert experiment_family("configs/signals/mmd_le_truc_4p.yaml") == "signals_mmd"
    assert config_label("configs/signals/conv_ppo_le_truc_4p.yaml") == "le_truc_4p"
    assert config_label("configs/signals/mmd_ppo_le_truc_4p.yaml") == "le_truc_4p"
    assert config_label("configs/signals/conv_ppo_paulista_free_op.yaml") == "paulista_free_op"
    assert config_label("configs/signals/ppo_le_truc_4p_none.yaml") == "le_truc_4p_none"


def test_another_opponent_writes_its_figures_beside_the_files_own():
    path = "configs/signals/twin_truco_paulista_4p.yaml"
    own = load_experiment(path)["analysis"]
    assert own["against"] == "random"
    assert opponent_suffix(path, own) == ("", own["out"])
    honest = ["analysis.against=heuristic:honest"]
    assert opponent_suffix(path, load_experiment(path, honest)["analysis"], honest) == ("_honest", own["out"] + "_honest")
    named = honest + ["analysis.out=runs/elsewhere"]  # the results where the command says, the figures renamed
    assert opponent_suffix(path, load_experiment(path, named)["analysis"], named) == ("_honest", "runs/elsewhere")


def test_mmd_trains_a_partnership_team_against_fixed_opponents(tmp_path):
    from train.algos.ppo import PPOConfig, train

    cfg = PPOConfig.from_yaml("configs/signals/mmd_ppo_le_truc_4p.yaml", [
        f"out_dir={tmp_path}", "total_steps=1024", "steps_per_update=512", "num_envs=8", "rollout=engine",
        "hidden=[16]", "eval_every=1000000", "eval_episodes=4", "plot=false", "checkpoint_every=1000000"])
    train(cfg)
    rows = torch.load(os.path.join(str(tmp_path), cfg.name, "checkpoint.pt"), weights_only=False)["history"]
    assert len(rows) == 2 and all(r["magnet_kl"] >= 0 for r in rows)
    assert rows[0]["magnet_coef"] == pytest.approx(0.1)  # alpha starts at the tuned 0.1 and anneals
    assert rows[1]["magnet_coef"] < rows[0]["magnet_coef"]
