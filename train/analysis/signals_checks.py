"""The positive and negative controls of channel - shuffled (issue 33; ``truc analyze signals --controls``):
the truthful heuristic team against ``random`` must gain from its channel's information (the positive
control), the same team with listeners that ignore signals must not (the negative control). Asserted with
values in tests/test_signals_controls.py; docs/signals.md "Controls".
"""

from __future__ import annotations

import json

import numpy as np

from train.analysis.signals import play_hands
from train.analysis.signals_controls import CONTROL_AGAINST, NEGATIVE, POSITIVE, fmt_ci
from train.eval.stats import mean_ci
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules


def controls(variant: str = "le_truc_4p", options: dict | None = None, deals: int = 2000, seed: int = 0,
             factory=None) -> dict:
    """The positive and negative controls of channel - shuffled, on the same duplicate deals against
    ``random``: the truthful heuristic team (must be above 0) and its deaf copy (must contain 0).
    Each entry: the gap, and ``passed`` (lower end > 0 for the positive, the interval holding 0 for the
    negative)."""
    rules = make_rules(variant, **(options or {}))
    if not rules.partnership or rules.signals.mode == "none":
        raise TrucError(f"{variant} {json.dumps(options or {})}: the controls need a 2 vs 2 game with a signal "
                        "channel (le_truc_4p, or players 4 with a signals mode)")
    out = {"variant": variant, "options": options or {}, "against": CONTROL_AGAINST, "deals": deals, "seed": seed}
    for role, team in (("positive", POSITIVE), ("negative", NEGATIVE)):
        ch = play_hands(rules, team, CONTROL_AGAINST, deals, seed, factory=factory)
        sh = play_hands(rules, team, CONTROL_AGAINST, deals, seed, "shuffled", bank=ch.tokens or [0], factory=factory)
        gap = mean_ci(ch.points - sh.points)
        ok = gap["lo"] > 0 if role == "positive" else gap["lo"] <= 0 <= gap["hi"]
        out[role] = {"team": team, "channel_minus_shuffled": gap, "passed": bool(ok),
                     "hands_changed": int(np.sum(ch.points != sh.points))}
    return out


def controls_text(res: dict) -> str:
    lines = [f"controls of channel - shuffled: {res['variant']} {json.dumps(res['options'])} against "
             f"{res['against']}, {res['deals']} duplicate deals (seed {res['seed']})"]
    for role, rule in (("positive", "must be above 0"), ("negative", "must contain 0")):
        c = res[role]
        lines.append(f"  {role}: {c['team']}: {fmt_ci(c['channel_minus_shuffled'])} ({rule}: "
                     f"{'passed' if c['passed'] else 'FAILED'}; deals with any point changed: {c['hands_changed']})")
    return "\n".join(lines)
