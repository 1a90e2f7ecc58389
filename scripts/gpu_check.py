"""A few PPO updates per device and variant; prints steps per second (see scripts/gpu_check.sh)."""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

from train.algos import ppo  # noqa: E402

CASES = [
    ("le_truc", {}, 2),
    ("truco_paulista", {"players": 4}, 2),
]


def run(variant: str, options: dict, device: str, updates: int, out: str) -> dict:
    steps = 4096
    cfg = ppo.PPOConfig.from_dict(dict(
        name=f"{variant}_{device}", out_dir=out, variant=variant, options=options, device=device,
        total_steps=updates * steps, steps_per_update=steps, num_envs=128, hidden=[256, 256],
        self_play_prob=0.5, snapshot_every=1, eval_every=10_000, eval_episodes=50,
        progress=False, tensorboard=False, plot=False, anneal_lr=False))
    t = time.time()
    summary = ppo.train(cfg)
    wall = time.time() - t
    ck = torch.load(os.path.join(summary["run_dir"], "checkpoint.pt"), weights_only=True)
    rows = ck["history"]
    return {"steps": summary["global_step"], "wall": wall, "sps": summary["global_step"] / wall,
            "rollout_sps": sum(r["rollout_sps"] for r in rows) / len(rows)}


def net_throughput(device: str, obs: int = 722, actions: int = 46, batch: int = 8192) -> float:
    """Forward+backward samples per second of the PPO network alone (the update's cost)."""
    net = ppo.PolicyNet(obs, actions, [256, 256]).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    x = torch.randn(batch, obs, device=device)
    m = torch.ones(batch, actions, dtype=torch.bool, device=device)
    a = torch.zeros(batch, dtype=torch.long, device=device)
    for i in range(12):
        if i == 2:
            if device == "cuda":
                torch.cuda.synchronize()
            t = time.time()
        _, logp, ent, v = net(x, m, a)
        loss = -(logp.mean() + ent.mean()) + v.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if device == "cuda":
        torch.cuda.synchronize()
    return 10 * batch / (time.time() - t)


def main() -> None:
    print(f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}", flush=True)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if torch.cuda.is_available():
        print(f"GPU: {torch.cuda.get_device_name(0)}", flush=True)
    with tempfile.TemporaryDirectory() as out:
        for device in devices:
            print(f"[{device}] network fwd+bwd: {net_throughput(device):,.0f} samples/s", flush=True)
            for variant, options, updates in CASES:
                r = run(variant, options, device, updates, out)
                print(f"[{device}] {variant}: {r['steps']} learner steps in {r['wall']:.1f} s -> "
                      f"{r['sps']:,.0f} steps/s overall, {r['rollout_sps']:,.0f} steps/s in rollouts", flush=True)
    if not torch.cuda.is_available():
        print("no CUDA device: only the CPU figures above", flush=True)


if __name__ == "__main__":
    main()
