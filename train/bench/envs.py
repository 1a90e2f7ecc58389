"""Steps per second of the Truc environments beside PettingZoo's poker environments.

Run: ``python -m train.bench.envs [--seconds 2]``. Every environment is driven the same way: an
agent loop over ``agent_iter``/``last``/``step`` with a uniformly random legal action drawn from the
action mask, counting decision steps (the ``None`` steps of finished agents are not counted).
PettingZoo's ``texas_holdem_v4`` and ``leduc_holdem_v4`` need ``rlcard`` (the benchmark extra);
without it they are skipped and the ratios are not printed. The aim is ``raw_env`` of every variant
at least 3x ``texas_holdem_v4``'s ``raw_env``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from truc_env.game.rules import VARIANTS


def aec_chunk(make, seed: int):
    """A function playing one episode of random legal play in an AEC env; it returns the decisions."""
    e = make()
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)

    def chunk() -> int:
        steps = 0
        for _agent in e.agent_iter():
            obs, _reward, term, trunc, _info = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        e.reset()
        return steps

    return chunk


def steps_per_second(make, seconds: float, seed: int = 0) -> float:
    """Decision steps per second of random legal play in an AEC env, over whole episodes."""
    chunk = aec_chunk(make, seed)
    steps = 0
    start = time.perf_counter()
    while True:
        steps += chunk()
        if time.perf_counter() - start >= seconds:
            break
    return steps / (time.perf_counter() - start)


def peers() -> dict:
    """PettingZoo's classic poker envs, if rlcard (and pygame) are installed."""
    try:
        from pettingzoo.classic import leduc_holdem_v4, texas_holdem_v4
    except Exception as exc:  # ImportError, or a missing optional dependency inside
        print(f"PettingZoo poker peers unavailable ({exc}); install rlcard and pygame to compare")
        return {}
    return {"texas_holdem_v4": texas_holdem_v4, "leduc_holdem_v4": leduc_holdem_v4}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    from truc_env.envs.pettingzoo_env import env as truc_env_fn
    from truc_env.envs.pettingzoo_env import raw_env as truc_raw_env

    rows = []
    base = None
    for name, mod in peers().items():
        raw = steps_per_second(mod.raw_env, args.seconds)
        wrapped = steps_per_second(mod.env, args.seconds)
        rows.append((name, raw, wrapped))
        if name == "texas_holdem_v4":
            base = raw
    for v in args.variants:
        raw = steps_per_second(lambda v=v: truc_raw_env(variant=v), args.seconds)
        wrapped = steps_per_second(lambda v=v: truc_env_fn(variant=v), args.seconds)
        rows.append((v, raw, wrapped))

    print(f"{'environment':<18}{'raw_env steps/s':>17}{'env steps/s':>14}"
          + (f"{'raw / texas raw':>17}" if base else ""))
    for name, raw, wrapped in rows:
        ratio = f"{raw / base:>16.2f}x" if base else ""
        print(f"{name:<18}{raw:>17,.0f}{wrapped:>14,.0f}{ratio}")
    if base:
        worst = min(raw for name, raw, _ in rows if name in VARIANTS)
        print(f"\nslowest truc raw_env / texas_holdem_v4 raw_env = {worst / base:.2f}x (aim: >= 3x)")


if __name__ == "__main__":
    main()
