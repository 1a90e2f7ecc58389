"""The controls that separate what a channel carries from what muting it disturbs (issue 33).

- **shuffled** (:func:`train.analysis.signals.play_hands`): the team's signals sent as chosen, but each read by
  the partner as a token drawn from the team's own tokens. The marginal is kept, the information
  destroyed; a listener trained with signals still sees signals, so channel - shuffled is what the
  convention *carries*, where channel - muted also holds the listener's shock at never seeing one.
- **no-channel twin**: a team trained with the channel off (signals ``none``, and no governor
  instructions where the rules have them), same budget and seed, played on the same deck orders under
  its own Rules. channel - twin says whether training with the channel was worth it at all.
- **controls of the controls** (:func:`train.analysis.signals_checks.controls`): the truthful heuristic team against ``random``
  (its channel - shuffled must be above 0: the positive control) and the same team with listeners
  that ignore signals (``deaf:``: channel - shuffled must contain 0, and is exactly 0 hand for hand).
- **pooling over runs** (:func:`over_runs`): independent training runs are the units, never the
  products of their pairs: a t interval over the runs' own figures, Welch's for two groups of runs,
  or a paired one when the two groups share their seeds.
"""

from __future__ import annotations

import json
import math

import numpy as np

from agents import is_network, spec_path
from train.eval.stats import mean_ci, t_quantile_975
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules

POSITIVE = "heuristic:honest"  # the truthful heuristic team: its listeners act on the partner's card
NEGATIVE = "deaf:heuristic:honest"  # the same team whose listeners never see the partner's signals
CONTROL_AGAINST = "random"  # where the truthful channel pays (docs/signals.md "The bound")
TWIN_EXAMPLE = "configs/signals/conv_ppo_le_truc_4p_none.yaml"


# ---------------------------------------------------------------------------------------------- twin
def silent_rules(rules):
    """The same Rules with the channel off: signals ``none`` and, where the variant has them, no
    governor instructions (a public channel of their own)."""
    options = {k: v for k, v in dict(rules.options).items() if k != "signals"}
    if "instructions" in options:
        options["instructions"] = False
    return make_rules(rules.variant, **options, signals={"mode": "none"})


def _trained_for(spec: str):
    """The Rules key (variant, options) a network spec was trained for; None for agents built for any Rules."""
    if not is_network(spec):
        return None
    path = spec_path(spec.split(":", 1)[1] if spec.startswith(("deaf:", "mirror:")) else spec)
    if path is None:
        return None
    from agents.network.checkpoint import read_checkpoint

    return json.loads(read_checkpoint(path)["rules_key"])


def check_twin(rules, twin: str):
    """The Rules the no-channel twin plays under, after checking it was trained for them: the team's
    variant and options with the channel off. A clear one-line error otherwise."""
    if rules.signals.mode == "none":
        raise TrucError(f"{rules.variant}: these rules have no signal channel (signals mode 'none'), so a team "
                        "here has no no-channel twin; give the team's channel in --options (free, card, senas)")
    silent = silent_rules(rules)
    key = _trained_for(twin)
    if key is None:
        return silent
    want = json.loads(silent.key)
    theirs = key["options"]
    mode = (theirs.get("signals") or {}).get("mode", "none")
    allowed = (f"a twin of this team is trained for {rules.variant} with the team's options, signals mode 'none'"
               + (" and instructions off" if "instructions" in want["options"] else "") + f" (e.g. {TWIN_EXAMPLE})")
    if key["variant"] != rules.variant:
        raise TrucError(f"twin {twin!r} was trained for {key['variant']}, not {rules.variant}; {allowed}")
    if mode != "none" or theirs.get("instructions", False):
        what = f"signals mode {mode!r}" if mode != "none" else "governor instructions on"
        raise TrucError(f"twin {twin!r} was trained with a channel ({what}); {allowed}")
    other = {k: (theirs.get(k), v) for k, v in want["options"].items()
             if k not in ("signals", "instructions") and theirs.get(k) != v}
    if other:
        raise TrucError(f"twin {twin!r} was trained for other rules (options, trained vs the team's: {other}); {allowed}")
    return silent


def check_twins(rules, teams: list[str], twins: list[str]) -> list:
    """One twin per team, each checked (:func:`check_twin`); returns their Rules."""
    if twins and len(twins) != len(teams):
        raise TrucError(f"{len(twins)} --silent-twin for {len(teams)} --team: give one no-channel twin per team, "
                        "in the same order, or none")
    return [check_twin(rules, t) for t in twins]


# ---------------------------------------------------------------------------------------------- pooling
def over_runs(a, b=None, paired: bool = False, what: str = "a pooled figure") -> dict:
    """A difference over independent training runs, the runs as the units.

    ``a`` alone: the mean of the runs' figures (e.g. each run's channel - muted) with a t interval over
    runs. With ``b`` (the other group's runs): ``paired`` (the two groups share their seeds, in the same
    order): the per-seed differences with a t interval; else the difference of the group means with
    Welch's interval (degrees of freedom from Welch–Satterthwaite, rounded down: conservative).
    Fewer than 2 runs in a group gives no interval over runs: an error naming what is needed."""
    a = np.asarray(a, dtype=float)
    for name, x in (("runs", a), ("twin runs", None if b is None else np.asarray(b, dtype=float))):
        if x is not None and x.size < 2:
            raise TrucError(f"{what} over runs needs at least 2 seeds per group; {name}: {x.size}. Train more seeds "
                            "(an experiment file's seeds: [1, 2, 3, 4, 5]) or report the run alone")
    if b is None:
        return {**mean_ci(a), "method": "t over runs", "runs": int(a.size)}
    b = np.asarray(b, dtype=float)
    if paired:
        if a.size != b.size:
            raise TrucError(f"{what}: a paired comparison needs the same seeds in both groups ({a.size} and {b.size} runs)")
        return {**mean_ci(a - b), "method": "paired by seed", "runs": int(a.size)}
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    m = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1)) if se > 0 else float(a.size + b.size - 2)
    half = t_quantile_975(max(1, int(math.floor(df)))) * se
    return {"mean": m, "lo": m - half, "hi": m + half, "n": int(a.size + b.size), "sd": float("nan"),
            "method": "Welch over runs", "df": float(df), "runs": [int(a.size), int(b.size)]}


def oracle_share(talk, oracle) -> dict:
    """The share of the oracle's value a talking procedure captures, over runs paired by seed:
    mean(channel - twin) / mean(oracle - twin), each run's gaps against the same seed's twin.

    The 95% interval is Fieller's for a ratio of means (t with runs - 1 degrees of freedom, the two
    gaps' covariance kept: they share the twin). ``lo``/``hi`` are None when the oracle's own gap is not
    resolved from 0 over the runs, where no finite interval exists."""
    a, b = np.asarray(talk, dtype=float), np.asarray(oracle, dtype=float)
    if a.size != b.size or a.size < 2:
        raise TrucError(f"the oracle share needs the same seeds (at least 2) in both studies; got {a.size} and {b.size}")
    n = a.size
    ma, mb = float(a.mean()), float(b.mean())
    cov = np.cov(a, b, ddof=1) / n  # the covariance of the two means
    t2 = t_quantile_975(n - 1) ** 2
    qa, qb, qab = mb**2 - t2 * cov[1, 1], ma * mb - t2 * cov[0, 1], ma**2 - t2 * cov[0, 0]
    out = {"share": ma / mb if mb else float("nan"), "lo": None, "hi": None, "runs": int(n),
           "method": "Fieller, paired by seed"}
    disc = qb**2 - qa * qab
    if qa > 0 and disc >= 0:
        root = math.sqrt(disc)
        out["lo"], out["hi"] = (qb - root) / qa, (qb + root) / qa
    return out


def fmt_ci(c: dict, digits: int = 3) -> str:
    """A mean with its 95% interval, ``+0.123 [+0.010, +0.236]`` (``n/a`` when there is none)."""
    if c is None or c.get("n", 0) == 0 or not math.isfinite(c.get("mean", float("nan"))):
        return "n/a"
    return f"{c['mean']:+.{digits}f} [{c['lo']:+.{digits}f}, {c['hi']:+.{digits}f}]"


def pooled_text(pooled: dict) -> str:
    """The figures pooled over the teams of one analysis (``--pool``)."""
    lines = [f"\npooled over {pooled['runs']} runs (the runs are the units):"]
    for name, c in pooled["gaps"].items():
        lines.append(f"  {name}: {fmt_ci(c)} ({c['method']})")
    return "\n".join(lines)


def pool_teams(teams: list[dict], paired: bool = True) -> dict:
    """Each gap averaged over the analysed teams (independent runs), with an interval over runs; the
    channel teams against their twins both paired by seed (the twins given in the teams' order) and as
    two groups (Welch)."""
    gaps: dict = {}
    for name in ("channel_minus_muted", "channel_minus_shuffled"):
        vals = [t["gap"][name]["mean"] for t in teams if name in t.get("gap", {})]
        if vals:
            gaps[name] = over_runs(vals, what=name)
    if all("twin" in t["points"] for t in teams):
        ch = [t["points"]["channel"]["mean"] for t in teams]
        tw = [t["points"]["twin"]["mean"] for t in teams]
        if paired:
            gaps["channel_minus_twin (paired by seed)"] = over_runs(ch, tw, paired=True, what="channel - twin")
        gaps["channel_minus_twin (two groups)"] = over_runs(ch, tw, what="channel - twin")
    return {"runs": len(teams), "gaps": gaps}
