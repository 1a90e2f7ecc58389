"""How a policy plays: its raise, give-up and redeal rates by the strength of its hand (``truc analyze style``).

Each agent plays single hands against itself (self-play, both seats pooled) on the same seeded deals. At every
decision the actor's dealt hand is put in a strength third (the mean of its cards' strength percentiles,
cut at the terciles of that mean over random hands of the deck, so the cuts are the same for every agent),
and the rates are counted per third, with 95% Wilson intervals:

- ``raise``: raises when it may on its own turn (no call pending); in the weak third, a bluff;
- ``fold``: folds on its own turn (gives the hand up uncalled);
- ``reraise``: answers a raise with a raise;
- ``give_up``: refuses a raise (runs; the raiser scores the stake before it);
- ``propose_redeal``: proposes a redeal when it may;
- ``accept_redeal``: accepts a proposed redeal.

Rates are frequencies of the agent's own choices where it faced them in self-play; how often each
situation arises depends on the agent too (``n`` says how many decisions each rate counts).
"""

from __future__ import annotations

import json
import os

import numpy as np

from agents import FILE_KINDS, spec_kind
from train.commands import flags
from train.eval.stats import wilson
from truc_env.errors import TrucError
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.observe import SeatObservation
from truc_env.game.rules import Rules
from truc_env.game.view import strength_percentile
from truc_env.io.atomic import atomic_write_text

RATES = ("raise", "fold", "reraise", "give_up", "propose_redeal", "accept_redeal")
THIRDS = ("weak", "middle", "strong")


def tercile_cuts(rules: Rules, samples: int = 20_000, seed: int = 0) -> tuple[float, float]:
    """The terciles of a dealt hand's mean card percentile over random hands of the deck."""
    state = State(rules, episode="hand")
    values = np.array([strength_percentile(state, c) for c in rules.deck])
    rng = np.random.default_rng(seed)
    idx = np.argsort(rng.random((samples, len(values))), axis=1)[:, :rules.hand_size]
    means = values[idx].mean(axis=1)
    lo, hi = np.quantile(means, [1 / 3, 2 / 3])
    return float(lo), float(hi)


def _third(mean: float, cuts) -> int:
    return 0 if mean < cuts[0] else (1 if mean < cuts[1] else 2)


def play_style(spec: str, rules: Rules, hands: int = 4000, seed: int = 0, cuts=None) -> dict:
    """Self-play ``hands`` single hands of ``spec`` (deals from ``seed``) and count its rates per third."""
    from agents import make_agent

    if rules.players != 2:
        raise TrucError(f"truc analyze style plays heads-up games; {rules.variant} has {rules.players} players")
    if hands < 1:
        raise TrucError(f"--hands must be at least 1, got {hands}")
    cuts = cuts or tercile_cuts(rules)
    agents = [make_agent(spec, rules, seed=seed), make_agent(spec, rules, seed=seed + 1)]
    counts = {r: np.zeros((3, 2), dtype=np.int64) for r in RATES}  # per third: (times chosen, times faced)
    points = 0.0
    for i in range(hands):
        dealer = i % 2
        state = State(rules, episode="hand", dealer=dealer)
        game = Episode(state, Dealer.seeded(rules, seed * 1_000_003 + i))
        name = state.action_to_string
        for seat in game.decisions():
            mask = game.mask()
            legal = {name(a) for a in np.flatnonzero(mask)}
            action = agents[seat].act(SeatObservation(state, seat, mask.copy()), mask)
            chose = name(action)
            third = _third(float(np.mean([strength_percentile(state, c) for c in state.dealt_hands[seat]])), cuts)
            facing = "accept" in legal
            faced = []
            if facing and state.call_kind == "redeal":
                faced.append(("accept_redeal", chose == "accept"))
            elif facing:
                faced.append(("give_up", chose == "refuse"))
                if "raise" in legal:
                    faced.append(("reraise", chose == "raise"))
            else:
                if "raise" in legal:
                    faced.append(("raise", chose == "raise"))
                if "fold" in legal:
                    faced.append(("fold", chose == "fold"))
                if "redeal" in legal:
                    faced.append(("propose_redeal", chose == "redeal"))
            for rate, yes in faced:
                counts[rate][third] += (int(yes), 1)
            game.play(action)
        points += state.returns()[0]
    rates = {r: {t: wilson(int(counts[r][k, 0]), int(counts[r][k, 1])) for k, t in enumerate(THIRDS)}
             for r in RATES}
    return {"agent": spec, "hands": hands, "seed": seed, "cuts": list(cuts), "rates": rates,
            "seat0_points_per_hand": points / hands}


def style_table(results: list[dict]) -> str:
    """A Markdown table: one row per agent, per rate the weak / middle / strong thirds' percentages."""
    head = "| agent | " + " | ".join(f"{r} (weak / mid / strong)" for r in RATES) + " |"
    lines = [head, "|---|" + "---:|" * len(RATES)]
    for res in results:
        cells = []
        for r in RATES:
            cell = [res["rates"][r][t] for t in THIRDS]
            cells.append(" / ".join("—" if c["n"] == 0 else f"{100 * c['rate']:.0f}" for c in cell))
        lines.append(f"| `{res['agent']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def style_plot(results: list[dict], path: str) -> str:
    """One panel per rate: each agent's rate in the three strength thirds, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from train.analysis.signals import save_figure

    shown = [r for r in RATES if any(res["rates"][r][t]["n"] for res in results for t in THIRDS)]
    fig, axes = plt.subplots(1, len(shown) + 1, figsize=(3.0 * len(shown) + 2.4, 3.4), squeeze=False,
                             gridspec_kw={"width_ratios": [1] * len(shown) + [0.8]})
    axes, key = axes[0][:-1], axes[0][-1]
    width = 0.8 / max(1, len(results))
    for ax, r in zip(axes, shown):
        for k, res in enumerate(results):
            cells = [res["rates"][r][t] for t in THIRDS]
            xs = [i + (k - (len(results) - 1) / 2) * width for i in range(3)]
            ys = [c["rate"] if c["n"] else np.nan for c in cells]
            err = [[max(0.0, y - c["lo"]) if c["n"] else 0 for y, c in zip(ys, cells)],
                   [max(0.0, c["hi"] - y) if c["n"] else 0 for y, c in zip(ys, cells)]]
            ax.bar(xs, ys, width, yerr=err, capsize=1.5, label=_short(res["agent"]))
        ax.set_xticks(range(3), THIRDS, fontsize=8)
        ax.set_title(r, fontsize=9)
        ax.set_ylim(0, 1)
        if ax is not axes[0]:
            ax.set_yticklabels([])
    axes[0].set_ylabel("rate where faced (95% CI)")
    handles, labels = axes[0].get_legend_handles_labels()
    key.axis("off")
    key.legend(handles, labels, fontsize=7, loc="center left")
    fig.suptitle("play style in self-play, by the strength third of the dealt hand", fontsize=10)
    path = save_figure(fig, path)
    plt.close(fig)
    return path


def _short(spec: str) -> str:
    if spec_kind(spec) in FILE_KINDS:
        kind, _, path = spec.partition(":")
        return f"{kind}:" + os.path.splitext(os.path.basename(path))[0].replace("strategy", os.path.basename(
            os.path.dirname(path)))
    return spec.replace("heuristic:", "h:")


def add_arguments(p) -> None:
    """The options of ``truc analyze style``."""
    p.add_argument("--variant", default="le_truc", help="a heads-up variant (default le_truc)")
    p.add_argument("--options", default=None, help="its Rules options as JSON")
    p.add_argument("--agent", action="append", required=True, help="an agent's spec; repeat")
    p.add_argument("--hands", type=flags.integer(1, 10**9), default=4000, help="self-play single hands per agent")
    p.add_argument("--seed", type=flags.seed, default=0, help="seeds the deals (the same for every agent) and the agents")
    p.add_argument("--out", type=flags.output_folder, default=None, help="folder for style.json, style.md and style.png")


def run_cli(args) -> None:
    """``truc analyze style``."""
    from tqdm import tqdm

    from train.config import parse_options
    from truc_env.game.rules import make_rules

    rules = make_rules(args.variant, **parse_options(args.options))
    cuts = tercile_cuts(rules)
    results = [play_style(spec, rules, args.hands, args.seed, cuts) for spec in tqdm(args.agent, desc="style",
                                                                                     unit="agent")]
    table = style_table(results)
    print(f"{args.variant}: self-play, {args.hands} hands per agent, seed {args.seed}; rates in % per strength third "
          f"(cuts at mean card percentile {cuts[0]:.3f} / {cuts[1]:.3f})")
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        atomic_write_text(os.path.join(args.out, "style.json"),
                          json.dumps({"variant": args.variant, "options": parse_options(args.options),
                                      "results": results}, indent=1) + "\n")
        atomic_write_text(os.path.join(args.out, "style.md"), table)
        image = style_plot(results, os.path.join(args.out, "style.png"))
        print(f"written: {args.out}/style.json, style.md, {os.path.basename(image)}")
