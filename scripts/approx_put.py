"""The learned best response against the exact figure on the shrunk heads-up Put (docs/approx_exploitability.md).

    python scripts/approx_put.py --out docs/results/data/approx_put_small.json

Policies of known exploitability on Put, 4 ranks, 2-card hands, at most 2 raises (Put has no redeal option):
``random``; ``heuristic:honest`` and ``heuristic:cautious``, which never bluff, so their play is a function of
what they see and their exact figure is that of the one-hot policy of their own ``act`` (asked at a real engine
state per information set; ``truc exploitability`` refuses heuristics, which in general only sample); and a
CFR+ table of 300 iterations (near 0). Each measured exactly and by ``approx_br.approx_exploitability`` with the
shrunk-game learner of ``tests/test_approx_exploitability.py`` (``QUICK``: 64-64, 1,024 steps per update,
step size 1e-3) for 40,000 learner steps, 1,500 evaluation deals, seed 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from approx_solved import solved_table  # noqa: E402

from agents import make_agent  # noqa: E402
from train.eval import approx_br  # noqa: E402
from train.eval import exploitability as ex  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402
from truc_env.io.atomic import atomic_write_text  # noqa: E402

OPTIONS = {"ranks": 4, "hand_size": 2, "max_raises": 2}
QUICK = {"steps_per_update": 1024, "hidden": [64, 64], "learning_rate": 1e-3, "num_envs": 32, "rollout": "engine",
         "anneal_lr": True}  # the step annealed to 0, as BR_SETTINGS had it when the figures were measured


class OneHot:
    """A heuristic that never bluffs, as the policy it plays: probability 1 on its own choice."""

    def __init__(self, agent):
        self.agent = agent

    def policy(self, observation, mask):
        return {int(self.agent.act(observation, mask)): 1.0}


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40_000)
    p.add_argument("--eval-deals", type=int, default=1500)
    p.add_argument("--out")
    args = p.parse_args()
    rules = make_rules("put", **OPTIONS)
    quiet = lambda msg: None  # noqa: E731
    path, _ = solved_table(rules, tempfile.mkdtemp(prefix="approx-put-"), 300)
    rows = []
    for spec in ("random", "heuristic:honest", "heuristic:cautious", f"cfr:{path}"):
        if spec.startswith("heuristic:"):
            exact = ex.policy_exploitability(OneHot(make_agent(spec, rules, seed=0)), rules, log=quiet)
        else:
            exact = ex.policy_exploitability(make_agent(spec, rules, seed=0), rules, log=quiet)
        c0 = cpu()
        r = approx_br.approx_exploitability(spec, rules, args.steps, seed=0, eval_deals=args.eval_deals,
                                            overrides=QUICK, log=quiet)
        name = "CFR+ table, 300 iterations" if spec.startswith("cfr:") else spec
        row = {"agent": name, "exact": exact["exploitability"], "exact_br": [exact["br0"], exact["br1"]],
               "bound": r["exploitability_lower_bound"], "ci95": r["ci95"], "recovered": float(
                   r["exploitability_lower_bound"] / exact["exploitability"]) if exact["exploitability"] > 0.1 else None,
               "br_sides": [r["br_side0"], r["br_side1"]], "steps": r["br_steps"], "cpu_seconds": cpu() - c0}
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = {"variant": "put", "options": OPTIONS, "learner": QUICK, "steps": args.steps, "eval_deals": args.eval_deals,
           "seed": 0, "rows": rows}
    if args.out:
        atomic_write_text(args.out, json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
