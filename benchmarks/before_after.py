"""Two source trees of truc-env side by side: the same seeded games (digests) and their speed, in one run.

    python benchmarks/before_after.py --before /tmp/kbefore --after . [--rounds 15] [--seconds 0.3]

Each tree runs in a worker process of its own (``PYTHONPATH`` = the tree), started once and asked for one
measurement at a time; the two take short turns on each row (before, after, after, before, ...) so that
the load of a shared machine falls on both alike, and each row keeps its median over the turns. The
ratio is taken per pair of turns (after over the before next to it, so that slow swings of the load
cancel out): its median and quartiles are printed. Speeds are per CPU-second of the worker
(``time.process_time``), after a warm-up of the row (numba compilation or cache load, layout caches).

Rows: ``engine``, random single hands of ``engine.State`` (``train.bench.engine.truc_hand_loop``, the
loop of ``truc bench``'s engine row), hands per CPU-second; ``aec``, the PettingZoo ``raw_env`` driven by
``truc bench --peers``'s agent loop (``train.bench.envs.aec_chunk``), decisions per CPU-second; ``batched``, ``VectorEnv`` steps with random
legal actions (observations and masks included, one thread), steps per CPU-second.

Digests (sha256, the first 16 hex digits): ``vector``, every array a ``VectorEnv`` step returns over
``--steps`` steps of random play from a fixed seed; ``engine``, the history and scores of 300 random
whole games from fixed seeds; ``observation``, every seat's observation and info-state vector at every
node of 60 of those games. A tree that changed no behaviour prints the same digests as the other.
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
AEC_VARIANTS = ("le_truc", "truco_paulista")

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
from truc_env.game.engine import State, sample_chance
from truc_env.game.rules import make_rules
from truc_env.game.observe import encoder_of
from truc_env.batch.vector import VectorEnv
from train.bench.engine import truc_hand_loop

configs = json.loads(sys.argv[1])
units = {}

def unit_of(row):
    # one unit of work for a row, made (and warmed up: compilation, caches) on first use
    if row not in units:
        kind, name = row.split(" ", 1)
        if kind == "aec":
            from train.bench.envs import aec_chunk
            from truc_env.envs.pettingzoo_env import raw_env
            episode = aec_chunk(lambda: raw_env(variant=name), 0)
            def unit():
                return sum(episode() for _ in range(10))
        elif kind == "engine":
            play = truc_hand_loop(make_rules(name), np.random.default_rng(0))
            def unit():
                for _ in range(10):
                    play()
                return 10
        else:
            variant, options, B = configs[name]
            v = VectorEnv(variant, B, seed=0, threads=1, **options)
            v.reset()
            def unit():
                for _ in range(4):
                    v.step(v.random_actions())
                return 4 * B
        unit()
        units[row] = unit
    return units[row]

def rate(row, seconds):
    unit = unit_of(row)
    n, t0 = 0, time.process_time()
    while time.process_time() - t0 < seconds:
        n += unit()
    return n / (time.process_time() - t0)

def digests(steps, engines):
    out = {}
    for cname, (variant, options, B) in configs.items():
        if " B=" in cname:  # a batch-size row: the same games as its variant's digest
            continue
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
        rules, h, seen = make_rules(variant), hashlib.sha256(), hashlib.sha256()
        enc = encoder_of(rules)
        for seed in range(300):
            rng = np.random.default_rng(seed)
            st = State(rules, episode="game")
            while True:
                if seed < 60:  # every seat's observation and info-state at every node of the first 60 games
                    for seat in range(rules.players):
                        seen.update(enc.encode(st, seat, info_state=True).tobytes())
                if st.is_terminal():
                    break
                if st.is_chance_node():
                    st.apply_action(sample_chance(st, rng))
                else:
                    legal = st.legal_actions()
                    st.apply_action(legal[int(rng.integers(len(legal)))])
            h.update(repr((st.history, st.score, st.winner, [h.get("hand_points") for h in st.hand_log])).encode())
        out["engine " + variant] = h.hexdigest()[:16]
        out["observation " + variant] = seen.hexdigest()[:16]
    return out

for line in sys.stdin:  # one request per line, one JSON answer per line
    req = json.loads(line)
    if req["task"] == "digests":
        answer = digests(req["steps"], req["engines"])
    else:
        answer = rate(req["row"], req["seconds"])
    print(json.dumps(answer), flush=True)
"""


class Tree:
    """A worker process running one source tree: measurements on request, its rows warmed up once."""

    def __init__(self, path: str):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(path), OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(CONFIGS)], env=env,
                                     cwd=os.path.abspath(path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)

    def ask(self, **request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped (exit code {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="source tree before the change")
    ap.add_argument("--after", default=".", help="source tree after the change (default: this one)")
    ap.add_argument("--rounds", type=int, default=15, help="turns per row and tree (the median is kept)")
    ap.add_argument("--seconds", type=float, default=0.3, help="CPU-seconds per turn")
    ap.add_argument("--steps", type=int, default=10_000, help="VectorEnv steps per digest")
    ap.add_argument("--only", nargs="*", help="measure only the rows containing one of these words")
    ap.add_argument("--sizes", nargs="*", type=int, default=[],
                    help="also le_truc batched rows at these batch sizes (e.g. 64 1024 8192 65536)")
    ap.add_argument("--unobserved", action="store_true",
                    help="with --sizes: also each size with observe=False (no observation written: the state "
                         "update and the masks alone, to tell the kernel's work from the observation's memory traffic)")
    args = ap.parse_args(argv)
    for B in args.sizes:
        CONFIGS[f"le_truc B={B}"] = ("le_truc", {}, B)
        if args.unobserved:
            CONFIGS[f"le_truc B={B} unobserved"] = ("le_truc", {"observe": False}, B)
    trees = {"before": Tree(args.before), "after": Tree(args.after)}
    try:
        digests = {k: t.ask(task="digests", steps=args.steps, engines=ENGINE_VARIANTS) for k, t in trees.items()}
        print(f"{'digest':<34}{'before':<18}{'after':<18}")
        for key in digests["before"]:
            a, b = digests["before"][key], digests["after"].get(key)
            print(f"{key:<34}{a:<18}{b:<18}{'same' if a == b else 'DIFFERENT'}")
        print(f"\nspeed per CPU-second, median of {args.rounds} turns per tree, {args.seconds:g} CPU-s each; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'row':<46}{'before':>12}{'after':>12}{'after/before: paired median, 25-75%':>38}")
        rows = ([f"engine {v}" for v in ENGINE_VARIANTS] + [f"aec {v}" for v in AEC_VARIANTS]
                + [f"batched {c}" for c in CONFIGS])
        for row in [r for r in rows if not args.only or any(o in r for o in args.only)]:
            got: dict = {k: [] for k in trees}
            for i in range(args.rounds):  # short turns, the first tree alternating: both see the same load
                for k in (("before", "after") if i % 2 == 0 else ("after", "before")):
                    got[k].append(trees[k].ask(task="speed", row=row, seconds=args.seconds))
            b, a = statistics.median(got["before"]), statistics.median(got["after"])
            # the ratio of each turn's pair: slow swings of the machine's load cancel out
            q1, q2, q3 = statistics.quantiles([x / y for x, y in zip(got["after"], got["before"])], n=4)
            kind = row.split(" ", 1)[0]
            unit = {"engine": "hands", "aec": "decisions"}.get(kind) or f"steps, B={CONFIGS[row.split(' ', 1)[1]][2]}"
            print(f"{row + ' (' + unit + ')':<46}{b:>12,.0f}{a:>12,.0f}{q2:>26.3f}{q1:>7.3f}-{q3:.3f}", flush=True)
    finally:
        for t in trees.values():
            t.close()
    same = all(digests["before"][k] == digests["after"].get(k) for k in digests["before"])
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
