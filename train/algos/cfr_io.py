"""What the CFR-family runs share (``train.algos.cfr``, ``train.algos.hu_mccfr``): a checkpoint read with one clear
refusal for a file that is not this run's, the curve's rows written and read back on resume, and its picture."""

from __future__ import annotations

import csv
import math
import os

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


def write_rows(path: str, fields: list[str], rows: list[dict]) -> None:
    """The curve's rows as CSV, replacing the file whole (a temporary file, then a rename)."""
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    os.replace(path + ".tmp", path)


def read_rows(path: str, fields: list[str], ints=("iteration",)) -> list[dict]:
    """The curve rows a resumed run keeps (``part`` as text, ``ints`` as integers, the rest as floats). A foreign
    file is refused; a damaged row (bad bytes, a torn line) ends the rows kept there: those past the checkpoint
    are measured again."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is not None and reader.fieldnames != fields:
            raise TrucError(f"--resume: {path} is not this solve's curve (columns {reader.fieldnames[:12]}); "
                            "delete it or use another 'out'")
        rows = []
        for r in reader:
            try:
                row = {k: (r[k] if k == "part" else float(r[k])) for k in fields}
                for k in ints:
                    row[k] = int(r[k])
            except (ValueError, TypeError, KeyError):
                break
            if None in r or not all(math.isfinite(row[k]) for k in fields if k != "part"):
                break
            rows.append(row)
    return rows
