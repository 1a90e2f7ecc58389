"""Does a big batch step as fast per CPU-second as a small one? Two batch sizes of ``VectorEnv``, paired.

    python benchmarks/batch_scaling.py [--variant le_truc] [--sizes 1024 65536] [--turns 30] [--unobserved]

Both batches live in one process and take short turns (small, big, big, small, ...), so that the load of a
shared machine falls on both alike; each turn of the big batch is divided by the small batch's turn beside it,
and the median of those ratios is the figure (with its quartiles). Random legal actions, one thread, steps per
CPU-second of this process (``time.process_time``). A ratio of at least 1 means the big batch loses nothing.
"""

from __future__ import annotations

import argparse
import statistics
import time

from truc_env.batch.vector import VectorEnv


def rate(venv: VectorEnv, seconds: float, steps_per_turn: int) -> float:
    """Batched steps per CPU-second over about ``seconds`` of CPU."""
    reps = max(1, steps_per_turn // venv.num_envs)
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(reps):
            venv.step(venv.random_actions())
        n += reps * venv.num_envs
    return n / (time.process_time() - t0)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="le_truc")
    ap.add_argument("--sizes", type=int, nargs=2, default=[1024, 65536], metavar=("SMALL", "BIG"))
    ap.add_argument("--turns", type=int, default=30, help="pairs of turns (default 30)")
    ap.add_argument("--seconds", type=float, default=0.4, help="CPU-seconds per turn (default 0.4)")
    ap.add_argument("--unobserved", action="store_true", help="observe=False: the state update alone")
    args = ap.parse_args(argv)
    small, big = args.sizes
    if not 1 <= small < big:
        ap.error("--sizes wants SMALL BIG with 1 <= SMALL < BIG")
    envs = {}
    for B in (small, big):
        envs[B] = VectorEnv(args.variant, B, seed=0, threads=1, observe=not args.unobserved)
        envs[B].reset()
        rate(envs[B], 0.2, big)  # warm-up: the kernel loaded, the buffers touched
    rates: dict[int, list[float]] = {small: [], big: []}
    ratios = []
    for k in range(args.turns):
        turn = {B: rate(envs[B], args.seconds, big) for B in ((small, big) if k % 2 == 0 else (big, small))}
        for B, r in turn.items():
            rates[B].append(r)
        ratios.append(turn[big] / turn[small])
    q = statistics.quantiles(ratios, n=4)
    obs = "observe=False" if args.unobserved else "observations included"
    print(f"{args.variant}, {obs}, one thread, steps per CPU-second (median of {args.turns} turns): "
          f"B={small} {statistics.median(rates[small]) / 1e6:.3f} M, B={big} {statistics.median(rates[big]) / 1e6:.3f} M")
    print(f"B={big} / B={small}: {statistics.median(ratios):.3f} (25-75%: {q[0]:.3f}-{q[2]:.3f})")


if __name__ == "__main__":
    main()
