"""docs/leaderboard.md from one command: per variant, every committed agent's exploitability and its Elo.

``python -m train.eval.leaderboard --config configs/leaderboard/all.yaml`` (or ``truc leaderboard``) reads, per variant,
the agents and where each one's exploitability comes from:

- ``{kind: exact, value: X, command: ..., source: ...}`` or ``{kind: approx, value: X, ci95: [lo, hi], ...}``: a
  figure measured before by that command (models/README.md, docs JSON), taken as it is and cited (``method: lbr``:
  the approximate figure is a local best response's, ``truc exploitability --lbr``, not a learned one's; ``scope``:
  what an exact figure covers where it is not the whole game, printed beside "exact");
- ``{kind: exact, measure: true}``: measured here (:func:`train.eval.exploitability.policy_exploitability`, seed 0);
- ``{kind: approx, measure: true, br_steps: N, eval_deals: M}``: a learned best response measured here
  (:func:`train.eval.approx_br.approx_exploitability`, seed 0), a lower bound;
- nothing: the row says none was measured.

and runs **one arena per variant** (a round robin of all its agents, duplicate deals, single hands from 0-0;
:func:`train.eval.arena.run_arena`), whose Bradley-Terry Elo is the table's. Every figure is printed with its command;
the page is written atomically. The test runs it on a tiny config; the committed page is generated once.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from dataclasses import dataclass, field

from train import config
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_write_text

ARENA_KEYS = ("deals", "seed", "episode", "workers", "duplicate")


@dataclass
class LeaderboardConfig:
    KIND = "leaderboard"
    variants: list = field(default_factory=list)
    out: str = "docs/leaderboard.md"
    arena_dir: str = "results/leaderboard"  # each variant's arena folder under it (summary.json, report.md...)

    @classmethod
    def from_dict(cls, cfg: dict, source: str = "leaderboard config") -> LeaderboardConfig:
        return config.build(cls, cfg, source)

    def validate(self) -> None:
        if not self.variants:
            raise TrucError("leaderboard config: 'variants' is empty; list at least one")
        for v in self.variants:
            if not isinstance(v, dict) or "variant" not in v or not v.get("agents"):
                raise TrucError("leaderboard config: each variant is a mapping with 'variant' and a list 'agents'")
            _known(v, VARIANT_KEYS, f"leaderboard {v['variant']}")
            make_rules(v["variant"], **v.get("options", {}))
            bad = set(v.get("arena", {})) - set(ARENA_KEYS)
            if bad:
                raise TrucError(f"leaderboard {v['variant']}: arena settings {sorted(bad)}; allowed: {', '.join(ARENA_KEYS)}")
            seen = set()
            for a in v["agents"]:
                if not isinstance(a, dict) or not isinstance(a.get("agent"), str) or not a["agent"]:
                    raise TrucError(f"leaderboard {v['variant']}: each agent is a mapping with an 'agent' spec, got {a!r}")
                _known(a, AGENT_KEYS, f"leaderboard {a['agent']!r}")
                if a["agent"] in seen:  # the arena ranks entrants by spec: a second row would shadow the first
                    raise TrucError(f"leaderboard {v['variant']}: agent {a['agent']!r} listed twice")
                seen.add(a["agent"])
                _check_figure(a["agent"], a.get("exploitability") or {})


VARIANT_KEYS = ("variant", "title", "note", "options", "arena", "agents", "name_key")
AGENT_KEYS = ("agent", "exploitability")
FIGURE_KEYS = ("kind", "value", "ci95", "command", "source", "scope", "method", "measure", "br_steps", "eval_deals",
               "cache_dir")


def _known(entry: dict, allowed: tuple, where: str) -> None:
    bad = sorted(set(entry) - set(allowed))
    if bad:
        raise TrucError(f"{where}: unknown keys {bad}; allowed: {', '.join(allowed)}")


def _check_figure(agent: str, ex: dict) -> None:
    """One agent's exploitability entry: a figure measured before (cited with its command) or one to measure here."""
    if not ex:
        return
    where = f"leaderboard {agent!r}"
    if not isinstance(ex, dict):
        raise TrucError(f"{where}: 'exploitability' is a mapping, got {ex!r}")
    _known(ex, FIGURE_KEYS, f"{where} exploitability")
    if ex.get("kind") not in ("exact", "approx"):
        raise TrucError(f"{where}: exploitability kind {ex.get('kind')!r}: 'exact' or 'approx'")
    if ex.get("method", "learned") not in ("learned", "lbr"):
        raise TrucError(f"{where}: approximate method {ex.get('method')!r}: "
                        "'learned' (a learned best response) or 'lbr' (a local best response)")
    if ex.get("measure"):
        for k in ("br_steps", "eval_deals"):
            if k in ex:
                config.check(config.Int(1), ex[k], f"{where} {k}")
        return
    if "value" not in ex or "command" not in ex:
        raise TrucError(f"{where}: a recorded figure needs 'value' and the 'command' that measured it (or measure: true)")
    # an exact exploitability is never below 0; a learned lower bound may be
    value = ex["value"] = config.check(config.Float(0 if ex["kind"] == "exact" else None), ex["value"], f"{where} value")
    if "ci95" in ex:
        ci = ex["ci95"] = config.check(config.List(config.Float(), min_len=2), ex["ci95"], f"{where} ci95")
        if len(ci) != 2 or not ci[0] <= value <= ci[1]:
            raise TrucError(f"{where}: ci95 must be [low, high] around the value {value}, got {ci!r}")


LeaderboardConfig.SCHEMA = {"variants": config.List(config.DICT, min_len=1), "out": config.STR,
                            "arena_dir": config.STR}


def _options_flag(v: dict) -> str:
    opts = v.get("options") or {}
    return f" --options {shlex.quote(json.dumps(opts))}" if opts else ""


def _measured(agent: str, v: dict, ex: dict, folder: str, log) -> dict:
    """:func:`_measure`, kept in ``folder`` under a digest of what was asked: the same request reads it back."""
    import hashlib

    key = json.dumps({"agent": agent, "variant": v["variant"], "options": v.get("options", {}),
                      "exploitability": {k: ex[k] for k in sorted(ex) if k != "cache_dir"}}, sort_keys=True)
    path = os.path.join(folder, "exploitability-" + hashlib.sha256(key.encode()).hexdigest()[:16] + ".json")
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        if saved.get("key") == key:
            return saved["figure"]
    figure = _measure(agent, v, ex, log)
    os.makedirs(folder, exist_ok=True)
    atomic_write_text(path, json.dumps({"key": key, "figure": figure}, indent=1))
    return figure


def _measure(agent: str, v: dict, ex: dict, log) -> dict:
    """Measure one agent's exploitability as the config asks; the command that reproduces it."""
    rules = make_rules(v["variant"], **v.get("options", {}))
    base = f"truc exploitability --agent {agent} --variant {v['variant']}{_options_flag(v)}"
    if ex["kind"] == "exact":
        from agents import make_agent
        from train.eval.exploitability import default_cache_dir, policy_exploitability

        r = policy_exploitability(make_agent(agent, rules, seed=0), rules, seed=0, log=log,
                                  cache_dir=ex.get("cache_dir", default_cache_dir()))
        return {"kind": "exact", "value": r["exploitability"], "command": base, "source": "measured by this command"}
    from train.eval.approx_br import approx_exploitability

    steps, deals = int(ex.get("br_steps", 200_000)), int(ex.get("eval_deals", 2000))
    r = approx_exploitability(agent, rules, steps, seed=0, eval_deals=deals, log=log)
    return {"kind": "approx", "value": r["exploitability_lower_bound"], "ci95": r["ci95"],
            "command": f"{base} --approx --br-steps {steps} --eval-deals {deals}", "source": "measured by this command"}


def _arena(v: dict, lb: LeaderboardConfig, progress: bool) -> tuple[dict, str]:
    from train.eval.arena import ArenaConfig, run_arena

    settings = {"deals": 200, "seed": 0, "episode": "hand", "workers": 2, **v.get("arena", {})}
    name = v.get("name_key") or v["variant"]
    cfg = ArenaConfig.from_dict({"variant": v["variant"], "options": v.get("options", {}),
                                 "agents": [a["agent"] for a in v["agents"]], "format": "round_robin",
                                 "out": os.path.join(lb.arena_dir, name), **settings})
    # the same config resumes its own folder: a page regenerated after a change of wording replays nothing;
    # another one (an agent added, other deals) starts that variant's arena afresh: the folder is the page's own
    summary = run_arena(cfg, resume=_same_arena(cfg), progress=progress)
    return summary, cfg


def _same_arena(cfg) -> bool:
    """Does ``cfg.out`` hold (part of) the tournament of this very config?"""
    try:
        with open(os.path.join(cfg.out, "config.json")) as f:
            return json.load(f) == cfg.fingerprint()
    except (OSError, ValueError):
        return False


def _fmt_ex(ex: dict | None) -> tuple[str, str, str]:
    if not ex:
        return "—", "none measured", ""
    value = f"{ex['value']:.4f}" if abs(ex["value"]) < 10 else f"{ex['value']:.2f}"
    if ex["kind"] == "approx":
        lo, hi = ex.get("ci95", (None, None))
        value = f"≥ {value}" + (f" ({lo:.3f} … {hi:.3f})" if lo is not None else "")
        kind = f"approx ({'local' if ex.get('method') == 'lbr' else 'learned'} best response, a lower bound)"
        if hi is not None and hi < 0:  # the learner lost to the policy: a bound below 0 says no more than >= 0
            kind += "; below 0: empty"
    else:
        kind = "exact" + (f" ({ex['scope']})" if ex.get("scope") else "")
    return value, kind, f"`{ex['command']}`" + (f" ({ex['source']})" if ex.get("source") else "")


def generate(lb: LeaderboardConfig, config_path: str, progress: bool = False, log=None) -> str:
    """Measure what the config asks, run each variant's arena, and return the page's text."""
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    lines = ["# Leaderboard", "",
             f"Generated by `python -m train.eval.leaderboard --config {config_path}` (also `truc leaderboard`); do not edit "
             "by hand. Per variant: every committed agent's exploitability (points per hand, one hand from 0–0, "
             "seat 0 dealing; **exact** on the public tree, or **approx**: the value of a best response learned "
             "by PPO against the frozen agent, a lower bound, `docs/approx_exploitability.md`) and its Elo in one "
             "round-robin arena of all the variant's agents (Bradley–Terry, 95% interval, duplicate deals). "
             "Every figure has its command.", ""]
    for v in lb.variants:
        title = v.get("title", v["variant"])
        say(f"[leaderboard] {title}: arena of {len(v['agents'])} agents")
        summary, cfg = _arena(v, lb, progress)
        rank = {r["entrant"]: r for r in summary["ranking"]}
        figures = {}
        for a in v["agents"]:
            ex = a.get("exploitability")
            if ex and ex.get("measure"):
                say(f"[leaderboard] {title}: measuring {a['agent']} ({ex['kind']})")
                ex = _measured(a["agent"], v, ex, cfg.out, say)
            figures[a["agent"]] = ex
        arena_cmd = (f"The arena: `truc arena` as `python -m train.eval.leaderboard --config {config_path}` runs it, variant "
                     f"`{v['variant']}`" + (f", options `{json.dumps(v['options'])}`" if v.get("options") else "")
                     + f", a round robin of the agents below, {cfg.deals:,} "
                     + ("duplicate deals" if cfg.duplicate else "deals") + " per pairing, "
                     + ("single hands from 0–0" if cfg.episode == "hand" else "whole games")
                     + f", seed {cfg.seed} (its report: `{cfg.out}/report.md`)")
        note = v.get("note", "").strip()
        lines += [f"## {title}", "", *([note, ""] if note else []), arena_cmd + ".", "",
                  "| agent | exploitability | kind | its command | Elo (95% interval) | points per hand in the arena |",
                  "|---|---:|---|---|---:|---:|"]
        order = sorted(v["agents"], key=lambda a: rank[a["agent"]]["rank"])
        for a in order:
            r = rank[a["agent"]]
            value, kind, cmd = _fmt_ex(figures[a["agent"]])
            lines.append(f"| `{a['agent']}` | {value} | {kind} | {cmd} | {r['elo']:.0f} ({r['elo_lo']:.0f} … "
                         f"{r['elo_hi']:.0f}) | {r['points_per_hand']:+.3f} |")
        lines.append("")
    return "\n".join(line for line in lines) + "\n"


def write(lb: LeaderboardConfig, config_path: str, out: str | None = None, progress: bool = False) -> str:
    """Generate the page and write it (atomically) to ``out`` or the config's ``out``."""
    text = generate(lb, config_path, progress=progress)
    out = out or lb.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    atomic_write_text(out, text)
    print(f"written to {out}")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.eval.leaderboard", description=__doc__.splitlines()[0])
    p.add_argument("--config", default="configs/leaderboard/all.yaml")
    p.add_argument("--out", help="the page (default: the config's 'out')")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    try:
        lb = config.load(LeaderboardConfig, args.config, what="leaderboard config")
        write(lb, args.config, args.out, progress=not args.quiet)
    except TrucError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

