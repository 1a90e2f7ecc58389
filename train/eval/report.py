"""The tournament report: a Markdown table and PNG plots beside summary.json."""

from __future__ import annotations

import math
from pathlib import Path

from truc_env.io.atomic import atomic_open, atomic_write_text


def ranking_table(summary: dict) -> str:
    """The entrants by rating, with their share of game results and their points per hand."""
    result = "hands" if summary.get("episode") == "hand" else "games"
    lines = [f"| rank | entrant | Elo (95% CI) | {result} won | points/hand (rank) | games | separated from next |",
             "|---:|---|---|---:|---:|---:|:---:|"]
    for row in summary["ranking"]:
        sep = {True: "yes", False: "no", None: "—"}[row["separated_from_next"]]
        lines.append(f"| {row['rank']} | `{row['entrant']}` | {row['elo']:.0f} ({row['elo_lo']:.0f} … "
                     f"{row['elo_hi']:.0f}) | {row['score_rate']:.3f} | {row['points_per_hand']:+.3f} "
                     f"({row['points_rank']}) | {row['games']} | {sep} |")
    return "\n".join(lines)


def ranking_note(summary: dict) -> str:
    """What the ranking measures, and where it disagrees with the points per hand."""
    result = "hand" if summary.get("episode") == "hand" else "game"
    text = (f"The ranking is a Bradley–Terry fit on {result} results (won, lost; a draw counts half), not on "
            "points: an entrant that wins many close games and loses a few heavily can rank above one that "
            "scores more points per hand. Mixed teams (`A+B`) are ranked as the entrants they are.")
    moved = summary.get("rank_disagreements") or []
    if not moved:
        return text + " Here the two orders agree."
    rows = {r["entrant"]: r for r in summary["ranking"]}
    parts = [f"`{e}` is {rows[e]['rank']}{_nth(rows[e]['rank'])} by results but "
             f"{rows[e]['points_rank']}{_nth(rows[e]['points_rank'])} by points per hand" for e in moved]
    return text + " Here the orders differ: " + "; ".join(parts) + "."


def _nth(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def opponent_table(summary: dict) -> str:
    """Points per hand of each entrant (row) against each opponent (column)."""
    names = summary["pairwise"]["entrants"]
    m = summary["pairwise"]["points_per_hand"]
    lines = ["| entrant | " + " | ".join(f"vs `{n}`" for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for name, row in zip(names, m):
        cells = ["—" if v is None else f"{v:+.3f}" for v in row]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def variance_sentence(vr: float | None, reduced: list | None = None) -> str | None:
    """Duplicate deals' effect on the variance, worded right whichever way it went; with ``reduced``
    (pairings cut, pairings), ``vr`` is the median over pairings and the sentence says so."""
    if vr is None or not math.isfinite(vr) or vr <= 0:
        return None
    if vr >= 1:
        text = f"duplicate deals cut the variance of the points-per-hand estimate by ×{vr:.2f}"
    else:
        text = f"duplicate deals raised the variance of the points-per-hand estimate by ×{1 / vr:.2f}"
    if reduced:
        text += f" (the median over pairings; cut in {reduced[0]} of {reduced[1]}, per pairing in the report)"
    return text


def summary_variance_sentence(summary: dict) -> str | None:
    """:func:`variance_sentence` of an arena summary: the median over its pairings, and how many were cut."""
    return variance_sentence(summary.get("variance_reduction"), summary.get("variance_reduced_pairings"))


def pairing_table(summary: dict) -> str:
    lines = ["| A | B | deals | A points/hand (95% CI) | A game win rate (95% CI) | variance plain ÷ duplicate |",
             "|---|---|---:|---|---|---:|"]
    for row in summary["pairings"]:
        p = row["points_per_hand"]
        w = row["win_rate"]
        wr = f"{w['rate']:.3f} ({w['lo']:.3f} … {w['hi']:.3f})" if w else "—"
        vr = f"×{row['variance_reduction']:.2f}" if row.get("variance_reduction") else "—"  # < 1: raised
        mark = " *" if row["separated"] else ""
        lines.append(f"| `{row['a']}` | `{row['b']}` | {row['deals']} | {p['mean']:+.3f} ({p['lo']:+.3f} … "
                     f"{p['hi']:+.3f}){mark} | {wr} | {vr} |")
    return "\n".join(lines)


def write_report(cfg, summary: dict, out: Path, hands_per_second: float | None = None) -> None:
    _plots(summary, out)
    text = [
        f"# Tournament: {cfg.variant} ({cfg.format}, {cfg.episode}s)",
        "",
        f"Options `{cfg.options}`; {cfg.deals} deals per pairing; duplicate deals: {cfg.duplicate}; seed {cfg.seed}.",
        "",
        "## Ranking (Bradley–Terry on game results)",
        "",
        ranking_table(summary),
        "",
        ranking_note(summary),
        "",
        "![ratings](ratings.png)",
        "",
        "## Points per hand against each opponent",
        "",
        opponent_table(summary),
        "",
        "## Pairings",
        "",
        "`*`: the 95% interval of A's mean points per hand excludes zero.",
        "",
        pairing_table(summary),
        "",
        "![pairwise](pairwise.png)",
        "",
    ]
    sentence = summary_variance_sentence(summary)
    if sentence:
        text += [sentence[0].upper() + sentence[1:] + " against plain deals (same number of games).", ""]
    if hands_per_second:
        text += [f"Speed of this run: {hands_per_second:.0f} hands per second.", ""]
    atomic_write_text(out / "report.md", "\n".join(text))


def _plots(summary: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rk = summary["ranking"]
    label = _label_inches([r["entrant"] for r in rk])  # a long agent spec needs room beside the axes
    fig, ax = plt.subplots(figsize=(4.5 + label, 0.5 * len(rk) + 1.5))
    y = np.arange(len(rk))[::-1]
    elo = np.array([r["elo"] for r in rk])
    err = np.array([[r["elo"] - r["elo_lo"] for r in rk], [r["elo_hi"] - r["elo"] for r in rk]])
    ax.errorbar(elo, y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, [r["entrant"] for r in rk])
    ax.set_xlabel("Elo (Bradley–Terry), 95% CI")
    ax.axvline(0, color="grey", lw=0.5)
    fig.tight_layout()
    _save(fig, out / "ratings.png")
    plt.close(fig)

    names = summary["pairwise"]["entrants"]
    m = np.array([[np.nan if v is None else v for v in row] for row in summary["pairwise"]["points_per_hand"]])
    label = _label_inches(names)  # the row labels beside, the column labels (at 30 degrees) below
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2.5 + label, 1.0 * len(names) + 1.5 + 0.5 * label))
    lim = np.nanmax(np.abs(m)) if np.isfinite(m).any() else 1.0
    im = ax.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if np.isfinite(m[i, j]):
                dark = abs(m[i, j]) > 0.6 * lim  # black figures vanish on the deepest reds and blues
                ax.text(j, i, f"{m[i, j]:+.2f}", ha="center", va="center", fontsize=8, color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label="row's points per hand against column")
    fig.tight_layout()
    _save(fig, out / "pairwise.png")
    plt.close(fig)


def _label_inches(names) -> float:
    """About how wide the longest tick label is at matplotlib's default 10-point font."""
    return 0.085 * max((len(str(n)) for n in names), default=0)


def _save(fig, path: Path) -> None:
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=100)
