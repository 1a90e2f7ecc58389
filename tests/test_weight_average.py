"""scripts/weight_average.py: the mean of kept checkpoints' weights, written as a policy the agents load."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from agents.network import PolicyNet, load_agent  # noqa: E402
from agents.network.checkpoint import FORMAT, VERSION  # noqa: E402
from agents.network.network import feature_size  # noqa: E402
from truc_env import TrucError, make_rules  # noqa: E402
from truc_env.game.actions import layout_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RULES = make_rules("le_truc", ranks=4, hand_size=2, max_raises=2, redeal=False)


def load():
    spec = importlib.util.spec_from_file_location("weight_average", ROOT / "scripts" / "weight_average.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def checkpoint(path: Path, seed: int, update: int, rules=RULES) -> dict:
    torch.manual_seed(seed)
    net = PolicyNet(feature_size(rules, "observation"), layout_of(rules).size, hidden=(8,))
    ck = {"format": FORMAT, "version": VERSION, "code_version": "x", "rules_key": rules.key, "variant": rules.variant,
          "options": dict(rules.options), "net": {"obs_size": feature_size(rules, "observation"),
                                                  "n_actions": layout_of(rules).size, "hidden": [8],
                                                  "features": "observation"},
          "config": {"variant": rules.variant, "options": dict(rules.options)}, "model": net.state_dict(),
          "update": update, "optimizer": {}}
    torch.save(ck, path / f"checkpoint_{update}.pt")
    return ck


def test_the_kept_checkpoints_in_range_are_averaged_into_a_policy(tmp_path, capsys):
    mod = load()
    cks = [checkpoint(tmp_path, seed, update) for seed, update in ((0, 20), (1, 40), (2, 60), (3, 80))]
    out = tmp_path / "avg" / "policy.pt"
    mod.main([str(tmp_path), "--first", "40", "--last", "70", "--out", str(out)])
    assert "2 checkpoints averaged (updates 40 ... 60)" in capsys.readouterr().out
    got = torch.load(out, weights_only=True)
    assert "optimizer" not in got and got["rules_key"] == RULES.key
    for k, v in got["model"].items():
        torch.testing.assert_close(v, (cks[1]["model"][k] + cks[2]["model"][k]) / 2)
    agent = load_agent(str(out), RULES)  # an ordinary net:PATH policy
    torch.testing.assert_close(agent.net.actor[0].weight, got["model"]["actor.0.weight"])


def test_bad_runs_and_checkpoints_are_refused(tmp_path):
    mod = load()
    with pytest.raises(TrucError, match="no such run folder"):
        mod.kept_checkpoints(str(tmp_path / "missing"), 0, 10)
    with pytest.raises(TrucError, match="no kept checkpoint between updates 0 and 10"):
        mod.kept_checkpoints(str(tmp_path), 0, 10)
    checkpoint(tmp_path, 0, 20)
    checkpoint(tmp_path, 1, 40, rules=make_rules("le_truc", ranks=3, hand_size=2, max_raises=2, redeal=False))
    with pytest.raises(TrucError, match="other rules or another network"):
        mod.average_policy([p for _, p in mod.kept_checkpoints(str(tmp_path), 0, 100)])
    (tmp_path / "checkpoint_60.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(TrucError, match="not a readable PPO checkpoint"):
        mod.average_policy([str(tmp_path / "checkpoint_60.pt")])
    torch.save({"format": "other"}, tmp_path / "checkpoint_80.pt")
    with pytest.raises(TrucError, match="is not a PPO checkpoint"):
        mod.average_policy([str(tmp_path / "checkpoint_80.pt")])


def test_the_policy_keys_are_what_training_writes():
    """agents.network.checkpoint.POLICY_KEYS (what the loader and the weight average keep) are the keys of the
    policy file PPO writes (train.algos.ppo.policy_dict): a key added to one must reach the other."""
    from agents.network.checkpoint import POLICY_KEYS
    from train.algos import ppo

    cfg = ppo.PPOConfig.from_dict({"variant": "le_truc", "options": dict(RULES.options), "hidden": [8]})
    net = PolicyNet(feature_size(RULES, cfg.features), layout_of(RULES).size, hidden=(8,))
    assert tuple(ppo.policy_dict(cfg, RULES, net)) == POLICY_KEYS
