"""Two source trees of truc-env side by side: the same seeded games (digests) and their speed, in one run.

    python benchmarks/before_after.py --before /tmp/kbefore --after . [--rounds 5] [--seconds 1]

Each measurement runs in a fresh process whose ``sys.path`` starts with one tree; the trees take turns
(before, after, before, after, ...) so that the load of a shared machine falls on both alike, and each
row keeps its median over the rounds. Speeds are per CPU-second of that process (``time.process_time``),
after a warm-up (numba compilation or cache load, layout caches).

Rows: ``engine``, random single hands of ``engine.State`` (``train.bench.engine.truc_hand_loop``, the
loop of ``truc bench``'s engine row), hands per CPU-second; ``batched``, ``VectorEnv`` steps with random
legal actions (observations and masks included, one thread), steps per CPU-second.

Digests (sha256, the first 16 hex digits): ``vector``, every array a ``VectorEnv`` step returns over
``--steps`` steps of random play from a fixed seed; ``engine``, the history and scores of 300 random
whole games from fixed seeds. A tree that changed no behaviour prints the same digests as the other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CONFIGS = {  # name -> (variant, options, batch size)
    "le_truc": ("le_truc", {}, 1024),
    "truco_paulista": ("truco_paulista", {}, 1024),
    "truco_paulista+signals": ("truco_paulista", {"signals": {"mode": "card"}}, 1024),
    "truco_mineiro 2p eleven": ("truco_mineiro", {"players": 2, "deck": "clean"}, 1024),
}
ENGINE_VARIANTS = ("le_truc", "truco_paulista", "truco_mineiro", "put")

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
from truc_env.engine import State, sample_chance
from truc_env.rules import make_rules
from truc_env.vector import VectorEnv
from train.bench.engine import truc_hand_loop

task, seconds, steps = json.loads(sys.argv[1])
configs = json.loads(sys.argv[2])
engines = json.loads(sys.argv[3])

def per_cpu_second(unit, seconds):
    unit()  # warm-up: compilation or cache load
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        n += unit()
    return n / (time.process_time() - t0)

if task == "speed":  # every row, in this order
    out = {}
    for variant in engines:
        play = truc_hand_loop(make_rules(variant), np.random.default_rng(0))
        def hands():
            for _ in range(20):
                play()
            return 20
        out["engine " + variant] = per_cpu_second(hands, seconds)
    for cname, (variant, options, B) in configs.items():
        v = VectorEnv(variant, B, seed=0, threads=1, **options)
        v.reset()
        def unit():
            for _ in range(8):
                v.step(v.random_actions())
            return 8 * B
        out["batched " + cname] = per_cpu_second(unit, seconds)
    print(json.dumps(out))
else:  # digests
    out = {}
    for cname, (variant, options, B) in configs.items():
        h = hashlib.sha256()
        for reward, episode in (("points", "hand"), ("win", "game")):
            v = VectorEnv(variant, 64, seed=12345, threads=1, episode=episode, reward=reward,
                          dealer="random", **({"random_start_score": 0.5} if episode == "hand" else {}), **options)
            for x in v.reset():
                h.update(np.ascontiguousarray(x).tobytes())
            for _ in range(steps // 2):
                for x in v.step(v.random_actions()):
                    h.update(np.ascontiguousarray(x).tobytes())
                h.update(v.deck.tobytes())
        out["vector " + cname] = h.hexdigest()[:16]
    for variant in engines:
        rules, h = make_rules(variant), hashlib.sha256()
        for seed in range(300):
            rng = np.random.default_rng(seed)
            st = State(rules, episode="game")
            while not st.is_terminal():
                if st.is_chance_node():
                    st.apply_action(sample_chance(st, rng))
                else:
                    legal = st.legal_actions()
                    st.apply_action(legal[int(rng.integers(len(legal)))])
            h.update(repr((st.history, st.score, st.winner, [h.get("hand_points") for h in st.hand_log])).encode())
        out["engine " + variant] = h.hexdigest()[:16]
    print(json.dumps(out))
"""


def run(tree: str, task: str, seconds: float, steps: int):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps([task, seconds, steps]), json.dumps(CONFIGS),
                          json.dumps(ENGINE_VARIANTS)],
                         env=env, cwd=os.path.abspath(tree), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="source tree before the change")
    ap.add_argument("--after", default=".", help="source tree after the change (default: this one)")
    ap.add_argument("--rounds", type=int, default=5, help="measurements per row and tree, taken in turn")
    ap.add_argument("--seconds", type=float, default=1.0, help="CPU-seconds per measurement")
    ap.add_argument("--steps", type=int, default=10_000, help="VectorEnv steps per digest")
    args = ap.parse_args(argv)
    trees = {"before": args.before, "after": args.after}

    digests = {k: run(t, "digests", 0, args.steps) for k, t in trees.items()}
    print(f"{'digest':<34}{'before':<18}{'after':<18}")
    for key in digests["before"]:
        a, b = digests["before"][key], digests["after"].get(key)
        print(f"{key:<34}{a:<18}{b:<18}{'same' if a == b else 'DIFFERENT'}")
    print(f"\nspeed per CPU-second, median of {args.rounds} rounds taken in turn, {args.seconds:g} CPU-s each; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'row':<46}{'before':>14}{'after':>14}{'after/before':>14}")
    got: dict = {k: [] for k in trees}
    for i in range(args.rounds):  # in turn, the first tree alternating: neither always runs first
        for k in (("before", "after") if i % 2 == 0 else ("after", "before")):
            got[k].append(run(trees[k], "speed", args.seconds, 0))
    for row in got["before"][0]:
        b = statistics.median(x[row] for x in got["before"])
        a = statistics.median(x[row] for x in got["after"])
        unit = "hands" if row.startswith("engine") else f"steps, B={CONFIGS[row.split(' ', 1)[1]][2]}"
        print(f"{row + ' (' + unit + ')':<46}{b:>14,.0f}{a:>14,.0f}{a / b:>14.3f}")
    same = all(digests["before"][k] == digests["after"].get(k) for k in digests["before"])
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
