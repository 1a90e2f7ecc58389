"""What a network that sees the observation, not the information state, gives up: the aliasing floor.

Two information sets alias when the network's input is the same at both (the same seat to act, the same
hand, and the same hand-free input: stake, raises, last raiser, cards on the table...), though their
histories differ. A network plays the same there. This script takes a strategy table (``cfr:PATH``),
replaces its play at each aliased group by the group's average (weighted by the seat's own reach under
the table times the hand's chance: the play a network that fitted it perfectly would show) and measures
the result exactly, both parts of the redeal, as ``truc exploitability`` measures a network's table.

    python scripts/aliasing_floor.py --teacher cfr:runs/mmd_le_truc/strategy.npz
    python scripts/aliasing_floor.py --teacher cfr:runs/mmd_le_truc/strategy.npz --features info_state

With ``info_state`` (the decision history appended) no two sets alias and the figure is the table's own
(the control). The group average is one aliased policy, not the least exploitable one: an upper bound on
the floor of a perfect fit, and what the distillation's cross-entropy aims at.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from agents.cfr.policy_tree import best_response_values  # noqa: E402
from agents.cfr.solver import PublicTreeSolver  # noqa: E402
from train.eval.aliasing import aliased_table, group_nodes  # noqa: E402
from train.eval.exploitability import cached_tree, default_cache_dir, node_inputs, stored_table  # noqa: E402
from truc_env.errors import TrucError  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teacher", default="cfr:runs/mmd_le_truc/strategy.npz", help="a cfr: strategy file")
    ap.add_argument("--variant", default="le_truc")
    ap.add_argument("--options", default="{}", help="the variant's options, JSON")
    ap.add_argument("--features", default="observation+strength", help="the network's input features")
    ap.add_argument("--out", default=None, help="write the result here (JSON)")
    args = ap.parse_args(argv)
    try:
        options = json.loads(args.options)
    except ValueError as e:
        raise TrucError(f"--options {args.options!r} is not JSON ({e})") from None
    if not isinstance(options, dict):
        raise TrucError(f"--options {args.options!r} must be a JSON object of option: value")
    rules = make_rules(args.variant, **options)
    if not args.teacher.startswith("cfr:"):
        raise TrucError(f"--teacher {args.teacher!r}: a strategy file, cfr:PATH")
    agent = make_agent(args.teacher, rules)
    cache = default_cache_dir()
    cpu = time.process_time()
    result: dict = {"teacher": args.teacher, "features": args.features, "variant": args.variant,
                    "options": options}
    br, value = (0.0, 0.0), 0.0
    abr, avalue = (0.0, 0.0), 0.0
    for name in (["cont"] if rules.redeal else []) + ["main"]:
        part_rules = make_rules(rules.variant, **{**rules.options, "redeal": False}) if name == "cont" else rules
        tree = cached_tree(part_rules, 0, (0, 0), "strength", cache)
        solver = PublicTreeSolver(tree, dtype="float32")
        sigma = stored_table(agent, name, tree, solver)
        if sigma is None:
            raise TrucError(f"{args.teacher!r} has no table written from the public tree of these Rules ({name})")
        inputs = node_inputs(tree, rules, args.features, name == "cont", cache, progress=True)
        group = group_nodes(tree, inputs)
        alias, stats = aliased_table(tree, solver, sigma, group)
        own = best_response_values(solver, sigma, br, value)
        al = best_response_values(solver, alias, abr, avalue)
        br, value = (own["br0"], own["br1"]), own["value_seat0"]
        abr, avalue = (al["br0"], al["br1"]), al["value_seat0"]
        result[name] = {**stats, "exploitability": own["exploitability"], "aliased_exploitability": al["exploitability"],
                        "aliased_br": [al["br0"], al["br1"]]}
        print(f"[{name}] {stats['acting_nodes']:,} acting nodes in {stats['groups_of_nodes']:,} input groups; "
              f"{stats['infosets']:,} information sets in {stats['groups']:,} groups; exploitability "
              f"{own['exploitability']:.4f} -> aliased {al['exploitability']:.4f}", flush=True)
    result["exploitability"] = result["main"]["exploitability"]
    result["aliased_exploitability"] = result["main"]["aliased_exploitability"]
    result["cpu_seconds"] = time.process_time() - cpu
    print(f"the table: {result['exploitability']:.4f}; averaged over what {args.features} aliases: "
          f"{result['aliased_exploitability']:.4f} points per hand ({result['cpu_seconds']:.0f} CPU s)")
    if args.out:
        from truc_env.io.atomic import atomic_write_text

        atomic_write_text(args.out, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    try:
        main()
    except TrucError as e:
        sys.exit(f"error: {e}")
