"""The episode driver (truc_env.episode): one dealer, one win reward, one hand loop.

The pins below were taken before the driver replaced the arena's, the signals kit's, the demo's and
PPO's own loops and dealers: the same seeds must keep giving the same records, tables and losses.
"""

import hashlib
import io
import json

import numpy as np
import pytest
import torch

from train import ppo
from train.arena import ArenaConfig, run_arena
from train.demo import play_demo
from train.signals import play_hands
from truc_env.rules import make_rules

torch.set_num_threads(1)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


PAULISTA_4P = {"players": 4, "signals": {"mode": "free", "vocab": 2, "intercept": 0.5}}


@pytest.mark.parametrize("name,kw,pinned", [
    ("le_truc", {"variant": "le_truc", "episode": "game"}, "b99beecf97c696f0"),
    ("paulista_4p", {"variant": "truco_paulista", "options": PAULISTA_4P, "episode": "hand"}, "87ff22eef980f7f9"),
])
def test_arena_records_and_tables_are_those_of_before(tmp_path, name, kw, pinned):
    out = tmp_path / name
    cfg = ArenaConfig.from_dict({"agents": ["random", "heuristic:honest"], "deals": 4, "workers": 1,
                                 "out": str(out), **kw})
    run_arena(cfg, progress=False)
    assert _digest((out / "games.jsonl").read_bytes() + (out / "summary.json").read_bytes()) == pinned


def test_signals_kit_output_is_that_of_before():
    rules = make_rules("truco_paulista", signals={"mode": "free", "vocab": 2, "intercept": 0.5})
    res = play_hands(rules, "heuristic:honest", "heuristic:cautious", 6, 1)
    data = json.dumps([res.points.tolist(), res.events, res.tokens], sort_keys=True, default=str)
    assert _digest(data.encode()) == "f8466dcc3c618f25"


def test_demo_game_is_that_of_before():
    buf = io.StringIO()
    play_demo(seed=5, out=lambda s: buf.write(s + "\n"))
    assert _digest(buf.getvalue().encode()) == "db14d8ef9ebb4e47"


def _first_update(tmp_path, rollout: str, reward: str) -> dict:
    cfg = ppo.PPOConfig.from_dict(dict(
        name="t", out_dir=str(tmp_path), variant="le_truc", options={"ranks": 4, "hand_size": 2}, seed=3,
        device="cpu", deterministic=False, total_steps=256, steps_per_update=256, num_envs=16, hidden=[32, 32],
        snapshot_every=1, self_play_prob=0.4, fixed_opponents=["heuristic:honest"], fixed_prob=0.2, eval_every=2,
        eval_episodes=20, eval_opponent="random", progress=False, tensorboard=False, plot=False, rollout=rollout,
        reward=reward))
    ppo.train(cfg)
    return torch.load(tmp_path / "t" / "checkpoint.pt", weights_only=False)["history"][0]


PPO_PINS = {  # first update: policy loss, value loss, entropy, episodes, mean episode length
    ("engine", "points"): (-0.009455922991037369, 16.7120304107666, 1.422501564025879, 108, 2.490740740740741),
    ("engine", "win"): (-0.017036952078342438, 0.4779708981513977, 1.4223535060882568, 108, 2.490740740740741),
    ("vector", "win"): (-0.017440369352698326, 0.4316738247871399, 1.3361237049102783, 105, 2.6666666666666665),
}


@pytest.mark.parametrize("rollout,reward", [
    ("engine", "points"), ("engine", "win"), pytest.param("vector", "win", marks=pytest.mark.slow)])
def test_ppo_first_update_losses_are_those_of_before(tmp_path, rollout, reward):
    row = _first_update(tmp_path, rollout, reward)
    got = (row["policy_loss"], row["value_loss"], row["entropy"], row["episodes"], row["episode_length"])
    assert np.allclose(got, PPO_PINS[rollout, reward], rtol=1e-6, atol=1e-9), got
