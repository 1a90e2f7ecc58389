"""The pictures of a PPO / MMD run: its curves and its exact exploitability, titled by the algorithm that ran."""

from __future__ import annotations

import os

import numpy as np

from train.algos.ppo_config import PPOConfig


def run_title(cfg: PPOConfig, rules) -> str:
    """A plot's title: the algorithm that ran (an MMD run says MMD), the run and the variant."""
    return f"{cfg.algorithm.upper()} {cfg.name} ({rules.variant})"


def _single_point(ax, xs: list, ys: list, what: str) -> bool:
    """Write a series of one measurement (or several at one step, as a resumed run can log) as text, not
    as markers on a degenerate axis; True if it did."""
    if len(set(xs)) > 1:
        return False
    ax.text(0.5, 0.5, f"{what}: one measurement\n{ys[-1]:.4g} at step {xs[-1]:,}" if xs else f"{what}: none",
            ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return True


def plot_exploitability(history: list[dict], path: str, title: str = "PPO") -> str | None:
    """The exploitability curve (points per hand against learner steps, log scale) as a PNG; the
    average policy's too when it is kept."""
    rows = [(h["global_step"], h["exploitability"]) for h in history if h.get("exploitability")]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.set_title(f"{title}: exact exploitability")
    if _single_point(ax, [x for x, _ in rows], [e["exploitability"] for _, e in rows], "exploitability"):
        fig.tight_layout()
        return save_figure(fig, path)
    ax.plot([x for x, _ in rows], [e["exploitability"] for _, e in rows], marker="o", label="last iterate")
    if "avg_exploitability" in rows[0][1]:
        ax.plot([x for x, _ in rows], [e["avg_exploitability"] for _, e in rows], marker=".", label="average policy")
        ax.legend()
    ax.set_yscale("log")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("exploitability (points per hand)")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return save_figure(fig, path)


def save_figure(fig, path: str) -> str:
    """Write a matplotlib figure as PNG atomically (a temporary file renamed over ``path``) and close it."""
    import matplotlib.pyplot as plt

    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, path)
    return path


def plot_curves(history: list[dict], path: str, title: str = "PPO") -> str | None:
    """Learning curves (evaluation, entropy, KL, explained variance, SPS) as one PNG."""
    if not history:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["global_step"] for h in history]
    evals = [(h["global_step"], h["eval"]) for h in history if h.get("eval")]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    ax = axes[0, 0]
    xs = [s for s, _ in evals]
    if evals:
        ax.set_title(f"win rate vs {evals[0][1]['opponent']}")
    if not _single_point(ax, xs, [e["win_rate"] for _, e in evals], "win rate"):
        ax.plot(xs, [e["win_rate"] for _, e in evals], marker="o")
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax = axes[0, 1]
    if evals:
        ax.set_title(f"points per episode vs {evals[0][1]['opponent']} (95% CI)")
    if not _single_point(ax, xs, [e["return"] for _, e in evals], "points per episode"):
        ys = np.array([e["return"] for _, e in evals])
        ci = np.array([e["return_ci95"] for _, e in evals])
        ax.plot(xs, ys, marker="o")
        ax.fill_between(xs, ys - ci, ys + ci, alpha=0.25)
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    for ax, key, name in ((axes[0, 2], "entropy", "policy entropy"), (axes[1, 0], "approx_kl", "approx KL"),
                          (axes[1, 1], "explained_variance", "explained variance"), (axes[1, 2], "sps", "learner steps / s")):
        ax.set_title(name)
        if not _single_point(ax, steps, [h[key] for h in history], name):
            ax.plot(steps, [h[key] for h in history])
    for ax in axes.flat:
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)
