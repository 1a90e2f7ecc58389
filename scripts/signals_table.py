"""Print the per-seed table of a signalling study (``truc analyze signals --config ...`` with ``per_seed``) as
docs/signals.md shows it: each seed's points with the channel, its gaps paired by deal, its twin's points and
(where the study trained one) the silent start's; then the pooled rows. Bold: the 95% interval excludes 0.
For an oracle study (a team that sees its partner's hand, ``signals.open_hands``, against its silent twin) the
table has the oracle's points, oracle − twin and the twin's.

    python scripts/signals_table.py runs/signals/warm_truco_paulista_4p/experiment.json
    python scripts/signals_table.py docs/results/data/signals_warm_truco_paulista_4p.json   # its committed results file

With ``--oracle ORACLE_STUDY`` (the oracle study of the same twins) it also prints the share of the oracle's value
the talking teams capture, over runs paired by seed, with Fieller's 95% interval, and the talking teams' points
less the oracle teams' (both against the same twins), paired by seed.
"""

import json
import sys

from train.analysis.signals_controls import oracle_share, over_runs

GAPS = ("channel_minus_shuffled", "channel_minus_twin", "channel_minus_muted")


def fmt(ci: dict | None, bold: bool = True) -> str:
    if not ci:
        return ""
    resolved = ci["lo"] > 0 or ci["hi"] < 0

    def bound(x: float) -> str:  # a bound that decides "resolved" is never printed as +0.00
        return f"{x:+.4f}" if resolved and round(x, 2) == 0 else f"{x:+.2f}"

    text = f"{ci['mean']:+.2f} [{bound(ci['lo'])}, {bound(ci['hi'])}]".replace("-", "−")
    return f"**{text}**" if bold and resolved else text


def seed_of(name: str) -> int:
    return int(name.rsplit("_s", 1)[1])


def oracle_table(exp: dict) -> str:
    """Each seed's oracle team, oracle - twin paired by deal, the twin; pooled over deals and runs."""
    configs = exp["configs"]
    (c,) = [c for c in configs.values() if c.get("oracle_minus_twin")]
    gap = c["oracle_minus_twin"]
    twins = {seed_of(n): v for n, v in configs[gap["twin"]]["per_seed"].items()}
    rows = ["| seed | oracle (sees the partner's hand) | oracle − twin | twin |", "|---|---|---|---|"]
    for name in c["runs"]:
        s, r = seed_of(name), c["per_seed"][name]
        rows.append(f"| {s} | {fmt(r['points'], False)} | {fmt(r.get('oracle_minus_twin'))} | {fmt(twins[s]['points'], False)} |")
    rows.append(f"| pooled over deals | {fmt(c['points']['channel'], False)} | {fmt(gap['over_deals'])} | "
                f"{fmt(configs[gap['twin']]['points']['channel'], False)} |")
    rows.append(f"| pooled over runs | | {fmt(gap['paired_by_seed'])} paired by seed; {fmt(gap['welch_over_runs'])} Welch | |")
    return "\n".join(rows)


def table(exp: dict) -> str:
    configs = exp["configs"]
    if not any(c.get("channel") for c in configs.values()) and any(c.get("oracle_minus_twin") for c in configs.values()):
        return oracle_table(exp)
    talking = [c for c in configs.values() if c.get("channel")]
    if len(talking) != 1:
        raise SystemExit(f"expected one channel configuration, found {len(talking)}")
    c = talking[0]
    tw = c["channel_minus_twin"]
    twin = configs[tw["twin"]]
    starts = [v for k, v in configs.items() if not v.get("channel") and k != tw["twin"]]
    start = starts[0] if starts else None  # the silent start of a warm-start study

    def line(cells: list[str], start_cell: str) -> str:
        return "| " + " | ".join(cells + ([start_cell] if start else [])) + " |"

    def by_seed(config: dict) -> dict[int, dict]:
        return {seed_of(n): v for n, v in config["per_seed"].items()}

    twins, starts_by_seed = by_seed(twin), by_seed(start) if start else {}
    head = ["seed", "channel", "channel − shuffled", "channel − twin", "channel − muted", "twin"]
    rows = [line(head, "the start"), "|" + "---|" * (len(head) + bool(start))]
    for name in c["runs"]:
        s, r = seed_of(name), c["per_seed"][name]
        rows.append(line([str(s), fmt(r["points"], False)] + [fmt(r.get(g)) for g in GAPS] + [fmt(twins[s]["points"], False)],
                         fmt(starts_by_seed[s]["points"], False) if start else ""))
    rows.append(line(["pooled over deals", fmt(c["points"]["channel"], False)]
                     + [fmt(tw["over_deals"] if g == "channel_minus_twin" else c[g]["over_deals"]) for g in GAPS]
                     + [fmt(twin["points"]["channel"], False)],
                     fmt(start["points"]["channel"], False) if start else ""))
    rows.append(line(["pooled over runs", "",
                      fmt(c["channel_minus_shuffled"]["over_seeds"]) + " (t over runs)",
                      fmt(tw["paired_by_seed"]) + " paired by seed; " + fmt(tw["welch_over_runs"]) + " Welch",
                      fmt(c["channel_minus_muted"]["over_seeds"]), ""], ""))
    return "\n".join(rows)


def per_seed_gaps(exp: dict, gap: str) -> dict[int, float]:
    """Each seed's ``gap`` (channel_minus_twin or oracle_minus_twin) of the study's one config that has it."""
    configs = [c for c in exp["configs"].values() if c.get(gap)]
    if len(configs) != 1:
        raise SystemExit(f"expected one configuration with {gap}, found {len(configs)}")
    return {seed_of(n): r[gap]["mean"] for n, r in configs[0]["per_seed"].items()}


def share_line(exp: dict, oracle: dict) -> str:
    """The share of the oracle's value the talking teams capture (the same twins, paired by seed)."""
    talk, orc = per_seed_gaps(exp, "channel_minus_twin"), per_seed_gaps(oracle, "oracle_minus_twin")
    if sorted(talk) != sorted(orc):
        raise SystemExit(f"the two studies' seeds differ: {sorted(talk)} and {sorted(orc)}")
    twins = {c["channel_minus_twin"]["twin"] for c in exp["configs"].values() if c.get("channel_minus_twin")}
    if twins != {c["oracle_minus_twin"]["twin"] for c in oracle["configs"].values() if c.get("oracle_minus_twin")}:
        raise SystemExit("the two studies measure against different twins; the share needs the same twin runs")
    seeds = sorted(talk)
    a, b = [talk[s] for s in seeds], [orc[s] for s in seeds]
    r = oracle_share(a, b)
    ci = f"[{r['lo']:.0%}, {r['hi']:.0%}]" if r["lo"] is not None else "[no finite interval: oracle − twin not resolved]"
    per = ", ".join(f"{talk[s] / orc[s]:.0%}" if orc[s] else "n/a" for s in seeds)
    beyond = over_runs(a, b, paired=True, what="channel - oracle")
    return (f"share of the oracle captured over {r['runs']} runs: {r['share']:.0%} {ci} (Fieller, paired by seed); "
            f"per seed {per}; channel − oracle over runs {fmt(beyond, False)} (paired by seed)")


def load(path: str) -> dict:
    with open(path) as f:
        data = json.load(f)
    exp = data.get("study", data)  # a committed results file holds the study's experiment.json under "study"
    if not isinstance(exp, dict) or "configs" not in exp:
        raise SystemExit(f"{path}: not a study's experiment.json or its results file (no 'configs')")
    return exp


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--oracle"):
        raise SystemExit(__doc__)
    exp = load(args[0])
    print(table(exp))
    if len(args) == 3:
        print(share_line(exp, load(args[2])))
