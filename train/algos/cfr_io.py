"""What the CFR-family runs share (``train.algos.cfr``, ``train.algos.hu_mccfr``): a checkpoint read with one clear
refusal for a file that is not this run's, and the exploitability curve's picture."""

from __future__ import annotations

from truc_env.errors import TrucError


def resume_from(path: str, load) -> None:
    """Run ``load``; a truncated, corrupt or foreign checkpoint becomes one clear TrucError."""
    try:
        load()
    except TrucError:
        raise
    except Exception as e:  # BadZipFile, EOFError, a missing array, a shape from another tree...
        raise TrucError(f"--resume: {path} is not a readable checkpoint of this solve ({type(e).__name__}: "
                        f"{str(e)[:120]}); delete it to start over, or use another 'out'") from None


def plot_curve(rows: list[dict], path: str, title: str) -> None:
    """Exploitability against iterations and seconds, log scale (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for part in sorted({r["part"] for r in rows}):
        rs = [r for r in rows if r["part"] == part]
        axes[0].loglog([r["iteration"] for r in rs], [r["exploitability"] for r in rs], marker=".", label=part)
        axes[1].semilogy([r.get("cpu_seconds", r["seconds"]) for r in rs], [r["exploitability"] for r in rs],
                         marker=".", label=part)
    for ax, xl in zip(axes, ("iterations", "solver CPU seconds")):
        ax.set_xlabel(xl)
        ax.set_ylabel("exploitability (points / hand)")
        ax.axhline(0.01, color="grey", lw=0.8, ls="--")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
