"""Write configs/README.md, the index of the shipped configs: each one's first comment sentence and its budget."""

import pathlib
import re

import yaml

root = pathlib.Path("configs")
FOLDERS = [("arena", "tournaments: `truc arena --config`"), ("cfr", "tabular solvers (CFR+, DCFR, MCCFR, full-width MMD): `truc train cfr --config`; the strategy plays as `table:PATH`"),
           ("ppo", "sampled self-play (PPO, and MMD as a PPO loss): `truc train ppo --config`; the network plays as `net:PATH`"),
           ("distill", "a table fitted into a network, and exploitability descent: `truc train distill --config`"),
           ("psro", "PSRO with the exact best response: `truc train psro --config`"),
           ("signals", "the partner-signalling study: experiment files (`truc analyze signals --config`) and their PPO bases (`truc train ppo --config`)"),
           ("leaderboard", "the page docs/leaderboard.md, generated: `truc leaderboard --config` (or `python -m train.eval.leaderboard`)"),
           ("studies", "a study's commands, in order, one file each (run with `bash`, from the checkout)")]


def what(p):
    lines = []
    for line in p.read_text().splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("#!"):
            continue
        lines.append(line.lstrip("# ").rstrip())
    text = " ".join(lines)
    text = re.sub(r"\s*Run:.*$", "", text)
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0] if text else ""
    first = first.rstrip(":;, ")
    return (first[:200].rsplit(" ", 1)[0] + " …") if len(first) > 200 else first


def budget(p):
    if p.suffix == ".sh":
        return "see the file"
    raw = yaml.safe_load(p.read_text()) or {}
    parts = []
    for k, label in (("iterations", "iterations"), ("total_steps", "learner steps"), ("steps", "fit steps"), ("descent_rounds", "descent rounds"),
                     ("deals", "deals per pairing"), ("generations", "generations")):
        if k == "deals" and "variants" in raw:  # a leaderboard: each variant's arena
            continue
        if k in raw and raw[k] not in (None, 0):
            v = raw[k]
            parts.append(f"{v:,} {label}" if isinstance(v, int) else f"{v} {label}")
    if "variants" in raw:
        parts.append(f"{len(raw['variants'])} arenas of " + ", ".join(f"{v.get('arena', {}).get('deals', 200):,}" for v in raw["variants"])
                     + " deals per pairing")
    if "seeds" in raw:
        parts.append(f"{len(raw['seeds'])} seeds × {len(raw.get('runs', []))} runs")
    return ", ".join(parts) or "—"

out = ["# Configs", "",
       "Every config is addressable by its path here without `.yaml`, from any folder once the package is installed",
       "(`truc arena --config arena/paulista`); the checkout path (`--config configs/arena/paulista.yaml`) works too,",
       "and so, for one release, does the flat name of 0.1 (`configs/arena_paulista.yaml`: `truc_env/io/assets.py`).",
       "Budgets are in iterations or steps, never wall clock, so a result reproduces on any machine. The time each",
       "run took is in the doc page its comment cites. This page is generated: `python scripts/configs_index.py`.", "",
       "**Start here**: `demo.yaml` (`truc demo`), `arena/le_truc.yaml` (`make run`), `cfr/small.yaml` (a shrunk Le",
       "Truc solved in seconds), `ppo/small.yaml` (the smallest PPO run).", "",
       "| config | what it does | budget |", "|---|---|---|",
       f"| `demo.yaml` | {what(root/'demo.yaml')} | — |"]
for folder, desc in FOLDERS:
    out += ["", f"## {folder}/", "", desc[0].upper() + desc[1:] + ".", "", "| config | what it does | budget |", "|---|---|---|"]
    for p in sorted((root/folder).glob("*")):
        if p.suffix not in (".yaml", ".sh"):
            continue
        out.append(f"| `{folder}/{p.name}` | {what(p).replace('|', '/')} | {budget(p)} |")
out += ["", "## Renamed in 0.2", "", "`configs/` was one flat folder: `arena.yaml` → `arena/le_truc.yaml`, `arena_X` and `X_arena` → `arena/X`,",
        "`cfr_X` → `cfr/X` (`cfr_mmd_X` → `cfr/mmd_X`), `ppo_X` → `ppo/X`, `learn_X` → `ppo/X` (`learn_small_ppo` →",
        "`ppo/small`), `distill_X` → `distill/X`, `psro_X` → `psro/X`, `signals_X` → `signals/X`.", ""]
open("configs/README.md", "w").write("\n".join(out))
