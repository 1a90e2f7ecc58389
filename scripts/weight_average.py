"""The uniform average of the weights of a run's kept checkpoints, written as a policy file (``net:PATH``).

Stochastic weight averaging (Izmailov et al. 2018) applied after the fact: the kept checkpoints
(``checkpoint_<update>.pt``, every ``keep_every`` updates) of updates ``--first`` ... ``--last`` are read, their
policy networks' parameters (actor and critic) averaged entry by entry, and the result written atomically with
the last checkpoint's header, so ``truc exploitability --agent net:PATH`` and the arena take it like any policy.

    python scripts/weight_average.py runs/real_game_seeds/learn_le_truc_mmd_small_steps_swa_s0 --first 620 \
        --last 1200 --out runs/swa/le_truc_620_1200.pt
"""

from __future__ import annotations

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from truc_env.errors import TrucError  # noqa: E402


def kept_checkpoints(run: str, first: int, last: int) -> list[tuple[int, str]]:
    """(update, path) of the run's kept checkpoints with ``first <= update <= last``, in update order."""
    if not os.path.isdir(run):
        raise TrucError(f"{run}: no such run folder")
    found = []
    for name in os.listdir(run):
        m = re.fullmatch(r"checkpoint_(\d+)\.pt", name)
        if m and first <= int(m.group(1)) <= last:
            found.append((int(m.group(1)), os.path.join(run, name)))
    if not found:
        raise TrucError(f"{run}: no kept checkpoint between updates {first} and {last}")
    return sorted(found)


def average_policy(paths: list[str]) -> dict:
    """A policy file's dict whose ``model`` is the mean of the checkpoints' ``model`` parameters."""
    from agents.network.checkpoint import POLICY_KEYS, read_checkpoint

    total, head = None, None
    for path in paths:
        ck = read_checkpoint(path)  # a damaged file, another format or version: refused, saying which
        if head is not None and (ck["rules_key"], ck["net"]) != (head["rules_key"], head["net"]):
            raise TrucError(f"{path}: other rules or another network than {paths[0]}")
        model = {k: v.double() for k, v in ck["model"].items()}
        total = model if total is None else {k: total[k] + model[k] for k in total}
        head = ck
    out = {k: head[k] for k in POLICY_KEYS}
    out["model"] = {k: (v / len(paths)).to(head["model"][k].dtype) for k, v in total.items()}
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", help="the run folder (its checkpoint_<update>.pt files)")
    p.add_argument("--first", type=int, required=True, help="first update averaged")
    p.add_argument("--last", type=int, required=True, help="last update averaged")
    p.add_argument("--out", required=True, help="the policy file written")
    args = p.parse_args(argv)
    if args.first > args.last:
        p.error("--first is after --last")
    from agents.network.checkpoint import save_atomic

    kept = kept_checkpoints(args.run, args.first, args.last)
    policy = average_policy([path for _, path in kept])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    save_atomic(policy, args.out)
    print(f"{len(kept)} checkpoints averaged (updates {kept[0][0]} ... {kept[-1][0]}) -> {args.out}")


if __name__ == "__main__":
    try:
        main()
    except TrucError as e:
        sys.exit(f"error: {e}")
