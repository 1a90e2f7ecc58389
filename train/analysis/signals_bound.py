"""The bound of what team information is worth: ``truc analyze bound`` (docs/signals.md, "The bound").

Per partnership variant with a signal channel and per opposing team, on the same duplicate deals
(:func:`train.analysis.signals.play_hands`: both seatings, deals fixed by the seed), the points per hand of:

- **oracle**: ``oracle:heuristic:<style>`` at both seats, each partner seeing the other's actual
  hand (:class:`agents.players.partner_info.OracleAgent`, a research bound, not a fair agent);
- **channel**: ``heuristic:<style>`` with its truthful signals;
- **muted**: the same team with its signals forced to ``none`` (the floor: no team information);
- **deaf**: ``deaf:heuristic:<style>``, listeners that ignore the signals (a control: equal to muted
  hand for hand whenever the heuristic's signals reach nobody else);
- **learned** (optional): a trained team, under the Rules it was trained for, on the same deals.

Opponents: ``random`` and ``heuristic:honest`` everywhere, plus, per variant, its committed learned team
where one plays that variant's channel Rules (Le Truc 2 vs 2: ``ppo:models/signals_conv_le_truc_4p_s3.pt``), so
the bounded team is also measured against the best learned team.

Gaps are paired by deal: ``oracle - muted`` is what perfect partner knowledge is worth to this way
of playing, ``channel - muted`` what the truthful channel delivers of it.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from agents import is_network, spec_kind
from agents.players.partner_info import ORACLE_PREFIX, make_oracle
from train.analysis.signals import fmt_ci, mirror_match, play_hands, save_figure, signal_agent
from train.commands import flags
from train.eval.stats import mean_ci
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_write_text

# The four partnership variants with a channel: their own signals, or the mode named.
# ``learned``: a committed team, played in the ``learned`` column; ``also_against``: opponents added to the
# default ones for that variant alone (a PPO team plays only the Rules it was trained for).
LE_TRUC_TEAM = "ppo:models/signals_conv_le_truc_4p_s3.pt"
MINEIRO_4P = {"players": 4, "signals": {"mode": "card"}}
MINEIRO_TEAM = "ppo:models/signals_truco_mineiro_4p.pt"  # configs/signals/conv_ppo_truco_mineiro_4p.yaml
ARGENTINO_4P = {"players": 4, "signals": {"mode": "senas"}}
ARGENTINO_TEAM = "ppo:models/signals_truco_argentino_4p.pt"  # configs/signals/conv_ppo_truco_argentino_4p.yaml
DEFAULT_VARIANTS = (
    {"variant": "le_truc_4p", "options": {}, "learned": {"spec": LE_TRUC_TEAM, "options": {}},
     "also_against": (LE_TRUC_TEAM,)},
    {"variant": "truco_paulista", "options": {"players": 4, "signals": {"mode": "free", "vocab": 8}},
     "learned": {"spec": "ppo:models/ppo_paulista.pt", "options": {"players": 4}}},
    {"variant": "truco_mineiro", "options": MINEIRO_4P, "learned": {"spec": MINEIRO_TEAM, "options": MINEIRO_4P},
     "also_against": (MINEIRO_TEAM,)},
    {"variant": "truco_argentino", "options": ARGENTINO_4P, "learned": {"spec": ARGENTINO_TEAM, "options": ARGENTINO_4P},
     "also_against": (ARGENTINO_TEAM,)},
)
DEFAULT_AGAINST = ("random", "heuristic:honest")
TEAMS = ("oracle", "channel", "muted", "deaf")


CHECKOUT = Path(__file__).resolve().parents[2]  # where the committed models/ of the default teams are


def committed(spec: str) -> str:
    """``spec`` with each ``models/...`` file not found from the current folder taken from the checkout, so
    that the default teams load from any folder (their labels stay ``ppo:models/...``)."""
    return re.sub(r"\b(ppo|cfr):(models/[^+]+)", lambda m: m.group(0) if os.path.exists(m.group(2))
                  else f"{m.group(1)}:{CHECKOUT / m.group(2)}", spec)


def bound_factory(spec: str, rules, seed: int | None = None):
    """The agents of the bound: :func:`train.analysis.signals.signal_agent`, plus the oracle (only here)."""
    spec = committed(spec)
    if spec.startswith(ORACLE_PREFIX):
        return make_oracle(spec, rules, seed)
    return signal_agent(spec, rules, seed)


def _channel_rules(variant: str, options: dict):
    rules = make_rules(variant, **(options or {}))
    if not rules.partnership:
        raise TrucError(f"{variant} {json.dumps(options or {})}: the bound needs a partnership game (2 vs 2); "
                        "pass players=4 for the Brazilian and Argentine variants, or use le_truc_4p")
    if rules.signals.mode == "none":
        raise TrucError(f"{variant} {json.dumps(options or {})}: signals mode 'none', so there is no channel to "
                        "bound; pass a mode in the options, e.g. '{\"players\": 4, \"signals\": {\"mode\": \"free\"}}'")
    return rules


def bound_row(variant: str, options: dict, against: str, deals: int, seed: int = 0, style: str = "honest",
              learned: dict | None = None) -> dict:
    """One variant against one opposing team: points of each team and the paired gaps."""
    rules = _channel_rules(variant, options)
    if against.startswith(ORACLE_PREFIX):
        raise TrucError(f"--against {against!r}: the oracle is the team being bounded, never the opponent")
    if learned:  # checked before any hand is played
        lrules = make_rules(variant, **learned.get("options", {}))
        if lrules.deck != rules.deck or lrules.players != rules.players:
            raise TrucError(f"learned team {learned['spec']!r}: its Rules deal other cards than {variant} "
                            f"{json.dumps(options)}; the comparison needs the same deals")
    base = f"heuristic:{style}"
    played = {
        "oracle": play_hands(rules, f"{ORACLE_PREFIX}{base}", against, deals, seed, factory=bound_factory),
        "channel": play_hands(rules, base, against, deals, seed, factory=bound_factory),
        "muted": play_hands(rules, base, against, deals, seed, "muted", factory=bound_factory),
        "deaf": play_hands(rules, f"deaf:{base}", against, deals, seed, factory=bound_factory),
    }
    pts = {k: v.points for k, v in played.items()}
    row = {"variant": variant, "options": options, "signal_mode": rules.signals.mode, "against": against,
           "deals": deals, "seed": seed, "team": base}
    if learned:
        row["learned"] = {"spec": learned["spec"], "options": learned.get("options", {})}
        if mirror_match(learned["spec"], against):
            row["learned"]["not_played"] = "the learned team against itself: 0 by construction"
        else:
            pts["learned"] = play_hands(lrules, learned["spec"], against, deals, seed).points
    row["points"] = {k: mean_ci(v) for k, v in pts.items()}
    row["gap"] = {f"{k}_minus_muted": mean_ci(v - pts["muted"]) for k, v in pts.items() if k != "muted"}
    # a share of the bound means something only where the bound itself is resolved above 0
    bnd = row["gap"]["oracle_minus_muted"]
    row["channel_share_of_bound"] = (row["gap"]["channel_minus_muted"]["mean"] / bnd["mean"]
                                     if bnd["lo"] > 0 else None)
    if mirror_match(base, against):
        row["zero_by_construction"] = f"channel: {base} against itself, 0 by construction (the gaps still measure)"
    return row


def bound(variants=DEFAULT_VARIANTS, against=None, deals: int = 500, seed: int = 0,
          style: str = "honest", out: str | None = None, img_prefix: str | None = None, log=print) -> dict:
    """Every (variant, opponent) row; writes ``bound.json``, ``bound.md`` and ``bound.png`` to ``out``.

    ``against``: the opposing teams of every variant; None: :data:`DEFAULT_AGAINST` plus each variant's
    ``also_against`` (its committed learned team)."""
    if deals < 2:
        raise TrucError(f"--deals {deals}: the intervals need at least 2 duplicate deals")
    for v in variants:  # every bad option is refused before any hand is played
        _channel_rules(v["variant"], v.get("options", {}))
    report = {"deals": deals, "seed": seed, "style": style, "rows": []}
    for v in variants:
        for a in against or (*DEFAULT_AGAINST, *v.get("also_against", ())):
            log(f"bound: {v['variant']} {json.dumps(v.get('options', {}))} against {a}, {deals} duplicate deals")
            report["rows"].append(bound_row(v["variant"], v.get("options", {}), a, deals, seed, style,
                                            v.get("learned")))
    if out:
        write_bound(report, out, img_prefix)
    return report


# ---------------------------------------------------------------------------------------------- output
def _label(row: dict) -> str:
    return f"{row['variant']} ({row['signal_mode']})"


def bound_text(report: dict) -> str:
    """The bound as a plain-text table (what the CLI prints)."""
    lines = [f"team information bound: heuristic:{report['style']}, {report['deals']} duplicate deals, seed "
             f"{report['seed']}; points per hand, 95% CI; gaps paired by deal"]
    for r in report["rows"]:
        p, g = r["points"], r["gap"]
        lines.append(f"\n{_label(r)} against {r['against']}")
        for k in p:
            gap = f"   minus muted {fmt_ci(g[k + '_minus_muted'])}" if k != "muted" else ""
            lines.append(f"  {k:8s} {fmt_ci(p[k])}{gap}")
        share = r["channel_share_of_bound"]
        lines.append("  channel's share of the bound: " + (f"{share:.2f}" if share is not None else "n/a (oracle - muted not above 0 at 95%)"))
        if share is not None and share > 1:
            lines.append("  NOTE: the channel beats the oracle: this player gains from the signal more than from "
                         "the truth (see docs/signals.md, the bound), so the oracle is no upper bound here")
        if r.get("zero_by_construction"):
            lines.append(f"  NOTE: {r['zero_by_construction']}")
        if (r.get("learned") or {}).get("not_played"):
            lines.append(f"  learned: not played ({r['learned']['not_played']})")
    return "\n".join(lines)


def bound_markdown(report: dict, image: str | None) -> str:
    """The bound as a Markdown table."""
    md = [f"# Team-information bound (heuristic:{report['style']}, {report['deals']} duplicate deals, "
          f"seed {report['seed']})", "",
          "| variant | against | oracle | channel | muted | deaf | oracle − muted | channel − muted | learned |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        p, g = r["points"], r["gap"]
        learned = (f"{fmt_ci(p['learned'], 2)} ({r['learned']['spec']})" if "learned" in p
                   else "0 (itself)" if (r.get("learned") or {}).get("not_played") else "—")
        md.append(f"| {_label(r)} | {r['against']} | " + " | ".join(fmt_ci(p[k], 2) for k in TEAMS)
                  + f" | {fmt_ci(g['oracle_minus_muted'], 2)} | {fmt_ci(g['channel_minus_muted'], 2)} | {learned} |")
    md.append("")
    if image:
        md += [f"![bound]({os.path.basename(image)})", ""]
    return "\n".join(md)


def write_bound(report: dict, out: str, img_prefix: str | None = None) -> str:
    """bound.json, bound.md, bound.png (atomically); the PNG also as ``{img_prefix}.png`` when given."""
    os.makedirs(out, exist_ok=True)
    image = bound_plot(report, os.path.join(out, "bound.png"))
    if img_prefix:
        import shutil

        os.makedirs(os.path.dirname(img_prefix) or ".", exist_ok=True)
        tmp = f"{img_prefix}.png.tmp"
        shutil.copyfile(image, tmp)
        os.replace(tmp, f"{img_prefix}.png")
    clean = json.loads(json.dumps(report, default=float))
    atomic_write_text(os.path.join(out, "bound.json"), json.dumps(clean, indent=1))
    atomic_write_text(os.path.join(out, "bound.md"), bound_markdown(report, image))
    return image


def _short(spec: str) -> str:
    """An opponent's spec for an axis label: ``heuristic:honest`` -> ``h:honest``, ``ppo:DIR/NAME.pt`` -> ``ppo:NAME``."""
    if spec_kind(spec) == "net":
        kind, _, path = spec.partition(":")
        return f"{kind}:" + os.path.splitext(os.path.basename(path))[0]
    return spec.replace("heuristic:", "h:")


def bound_plot(report: dict, path: str) -> str:
    """Grouped bars: each team's points per hand, per (variant, opponent), with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    teams = [k for k in (*TEAMS, "learned") if any(k in r["points"] for r in rows)]
    width = 0.8 / len(teams)
    fig, ax = plt.subplots(figsize=(2.0 + 1.5 * len(rows), 3.8))
    for k, team in enumerate(teams):
        xs, ys, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            c = r["points"].get(team)
            if c is None or not math.isfinite(c["mean"]):
                continue
            xs.append(i + (k - (len(teams) - 1) / 2) * width)
            ys.append(c["mean"])
            lo.append(c["mean"] - c["lo"])
            hi.append(c["hi"] - c["mean"])
        ax.bar(xs, ys, width, yerr=[lo, hi], label=team, capsize=2)
    ax.set_xticks(range(len(rows)), [f"{r['variant']}\nvs {_short(r['against'])}" for r in rows], fontsize=7)
    ax.axhline(0, color="grey", lw=0.7)
    ax.set_ylabel("points per hand (95% CI)")
    ax.legend(fontsize=7, ncol=len(teams))
    ax.set_title(f"what team information is worth: oracle vs channel vs muted ({report['deals']} duplicate deals)",
                 fontsize=9)
    path = save_figure(fig, path)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------- CLI
def add_arguments(p) -> None:
    """The options of ``truc analyze bound``."""
    p.add_argument("--variant", default=None,
                   help="one partnership variant (default: le_truc_4p, truco_paulista, truco_mineiro, "
                   "truco_argentino, 4 players, each with a channel); without --options and --learned, one of "
                   "these four takes its rows of the default set (its options, learned team and opponents)")
    p.add_argument("--options", default=None, help="with --variant: its options as JSON (must leave a channel on)")
    p.add_argument("--against", action="append", default=[],
                   help="an opposing team's spec; repeat (default: random, heuristic:honest and, in le_truc_4p, "
                   "truco_mineiro and truco_argentino, the variant's committed learned team)")
    p.add_argument("--style", default="honest", help="the heuristic style of the bounded team")
    p.add_argument("--learned", default=None, help="with --variant: a trained team's spec, played on the same deals")
    p.add_argument("--learned-options", default=None, help="the Rules options the learned team was trained for (JSON)")
    p.add_argument("--deals", type=flags.integer(1, 10**9), default=500, help="duplicate deals per team (2 hands each)")
    p.add_argument("--seed", type=flags.seed, default=0)
    p.add_argument("--out", type=flags.output_folder, default=None, help="folder for bound.json, bound.md and bound.png")
    p.add_argument("--img-prefix", type=flags.output_prefix, default=None, help="also copy the PNG to PREFIX.png (e.g. docs/results/img/signals_bound)")


def run_cli(args) -> None:
    """``truc analyze bound``."""
    from agents.players.heuristic import STYLES
    from train.config import parse_options

    if args.style not in STYLES:
        raise TrucError(f"--style {args.style!r}: the bounded team is a heuristic; styles: {', '.join(STYLES)}")
    default = next((v for v in DEFAULT_VARIANTS if v["variant"] == args.variant), None)  # the experiment's set
    if default is not None and not (args.options or args.learned or args.learned_options):
        variants = (default,)
    elif args.variant:
        v = {"variant": args.variant, "options": parse_options(args.options)}
        if args.learned:
            v["learned"] = {"spec": args.learned, "options": parse_options(args.learned_options)}
        variants = (v,)
    elif args.options or args.learned:
        raise TrucError("--options and --learned go with --variant (the default set has its own)")
    else:
        variants = DEFAULT_VARIANTS
    specs = [(v.get("learned") or {}).get("spec", "") for v in variants] + list(args.against)
    specs += [a for v in variants for a in (() if args.against else v.get("also_against", ()))]
    if any(is_network(s) for s in specs):
        import torch  # small networks, one decision at a time: extra threads only contend

        torch.set_num_threads(1)
    report = bound(variants, tuple(args.against) or None, args.deals, args.seed, args.style, args.out,
                   args.img_prefix, log=lambda m: print(m, flush=True))
    print(bound_text(report))
    if args.out:
        print(f"\nresults in {args.out}/ (bound.json, bound.md, bound.png)")
