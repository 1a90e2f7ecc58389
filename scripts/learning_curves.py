"""The side-by-side figure and table of docs/results.md ("Learning algorithms side by side").

Reads the runs of ``configs/learn_small_*.yaml`` (seeds 0, 1, 2: ``runs/learn_small_<alg>[_s<seed>]``),
``configs/psro_small.yaml`` (``runs/psro_small``), OpenSpiel's NFSP (``runs/nfsp_small[_s<seed>]``)
and ``configs/cfr_small.yaml`` (``runs/cfr_small``), draws exploitability against learner steps (PPO,
MMD, NFSP) and against oracle calls (PSRO, with CFR+ iterations for scale) as one PNG, and prints the
table rows (mean and range over the seeds found).

    python scripts/learning_curves.py --png docs/img/learning_small.png
"""

from __future__ import annotations

import argparse
import csv
import os

import numpy as np

LEARNERS = (("ppo", "PPO self-play"), ("mmd", "MMD, uniform magnet"), ("mmd_moving", "MMD, moving magnet"))
UNIFORM = 4.1276  # the uniform policy's exploitability on this game (PSRO's row 0)


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def read_csv(path: str) -> list[dict]:
    with open(path) as f:
        return [{k: _number(v) for k, v in r.items()} for r in csv.DictReader(f)]


def seed_dirs(base: str) -> list[tuple[int, str]]:
    out = [(0, base)] + [(s, f"{base}_s{s}") for s in (1, 2)]
    return [(s, d) for s, d in out if os.path.isdir(d)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default="runs")
    p.add_argument("--png", default="docs/img/learning_small.png")
    args = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.5))
    curves = [(key, name, os.path.join(args.runs, f"learn_small_{key}"), "exploitability.csv") for key, name in LEARNERS]
    curves.append(("nfsp", "OpenSpiel NFSP (average policy)", os.path.join(args.runs, "nfsp_small"), "curve.csv"))
    for key, name, base, file in curves:
        finals = []
        for i, (seed, d) in enumerate(seed_dirs(base)):
            path = os.path.join(d, file)
            if not os.path.exists(path):
                continue
            rows = read_csv(path)
            xs = [r["global_step"] for r in rows]
            ys = [r["exploitability"] for r in rows]
            ax.plot(xs, ys, marker=".", label=name if i == 0 else None,
                    color=f"C{[c[0] for c in curves].index(key)}", alpha=0.9 if seed == 0 else 0.5)
            finals.append((seed, rows[-1]["global_step"], rows[-1]["exploitability"]))
        if finals:
            ex = np.array([f[2] for f in finals])
            print(f"| {name} | {len(finals)} ({', '.join(str(f[0]) for f in finals)}) | {ex.mean():.3f} "
                  f"({ex.min():.3f} … {ex.max():.3f}) | {', '.join(f'{f[2]:.3f}' for f in finals)} |")
    ax.axhline(UNIFORM, color="grey", ls="--", lw=0.8, label="uniform policy")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("exploitability (points per hand)")
    ax.set_yscale("log")
    ax.set_title("same network, same step budget")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    psro = os.path.join(args.runs, "psro_small", "curve.csv")
    if os.path.exists(psro):
        rows = read_csv(psro)
        bx.plot([r["iteration"] for r in rows], [r["exploitability"] for r in rows], marker=".", color="C4",
                label="PSRO meta-Nash mixture")
        bx.plot([r["iteration"] for r in rows[1:]], [r["last_response_exploitability"] for r in rows[1:]], ls=":",
                color="C4", alpha=0.6, label="PSRO last best response")
        print(f"| PSRO (exact best-response oracle) | 1 (deterministic) | {rows[-1]['exploitability']:.3f} | "
              f"after {int(rows[-1]['iteration'])} oracle calls |")
    cfr = os.path.join(args.runs, "cfr_small", "curve.csv")
    if os.path.exists(cfr):
        rows = read_csv(cfr)
        bx.plot([r["iteration"] for r in rows], [r["exploitability"] for r in rows], color="black", lw=0.8,
                label="CFR+ iterations (for scale)")
    bx.axhline(UNIFORM, color="grey", ls="--", lw=0.8)
    bx.set_xlabel("PSRO oracle calls / CFR+ iterations")
    bx.set_yscale("log")
    bx.set_title("tabular methods on the public tree")
    bx.legend(fontsize=8)
    bx.grid(alpha=0.3, which="both")
    fig.suptitle("Exact exploitability, shrunk heads-up Le Truc (4 ranks, 2-card hands, 2 raises, no redeal)")
    fig.tight_layout()
    from truc_env.atomic import atomic_open

    with atomic_open(args.png, "wb") as f:
        fig.savefig(f, format="png", dpi=90)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
