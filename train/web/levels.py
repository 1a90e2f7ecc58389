"""The opponents a web player chooses from: a ladder of named levels, and the learned models by name.

The heuristic levels are ordered by how much the CFR strategy beats them (docs/results.md: +0.32
against the bluffer, +0.21 the cautious, +0.20 the honest player); the learned levels are the
models of a folder (the checkout's ``models/``) that were trained for the game's exact rules.
A page names agents by level or model name, never by a file path: the server loads only files of
its own models folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from agents import AgentSpecError
from agents.players.heuristic import STYLES

HEURISTIC_LEVELS = (
    ("random", "random", "plays any legal move"),
    ("bluffer", "heuristic:bluffer", "raises weak hands to bluff; the easiest heuristic to beat"),
    ("cautious", "heuristic:cautious", "raises and accepts only with strong hands"),
    ("honest", "heuristic:honest", "bets its hand's strength; the strongest heuristic"),
)


ALIASES = {"net": "ppo", "table": "cfr"}  # the 0.1 names of the two spec kinds


@dataclass(frozen=True)
class Model:
    name: str  # the file name without its extension
    kind: str  # "net" (a network checkpoint, .pt) or "table" (a strategy table, .npz)
    path: str
    rules_key: str | None  # the Rules it was trained for; None when it cannot be read here

    @property
    def spec(self) -> str:
        return f"{self.kind}:{self.path}"


def _rules_key(kind: str, path: str) -> str | None:
    try:
        if kind == "table":
            import numpy as np

            with np.load(path, allow_pickle=False) as z:  # the header alone, not the tables
                return json.loads(bytes(z["header"]).decode()).get("rules_key")
        from agents.network import load_policy  # torch: the ppo extra

        return load_policy(path)[1]["rules_key"]
    except (ImportError, OSError, ValueError, KeyError):
        return None


def find_models(folder: str | None) -> list[Model]:
    """The models of ``folder`` (``*.pt`` networks, ``*.npz`` strategies), sorted by name."""
    if not folder or not os.path.isdir(folder):
        return []
    out = []
    for entry in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(entry)
        kind = {".pt": "net", ".npz": "table"}.get(ext)
        if kind:
            path = os.path.join(folder, entry)
            out.append(Model(stem, kind, path, _rules_key(kind, path)))
    return out


def ladder(rules, models: list[Model]) -> list[dict]:
    """The levels for a game with these rules, weakest first: the heuristics, then its learned models."""
    levels = [{"name": name, "spec": spec, "kind": "heuristic" if ":" in spec else "random", "about": about}
              for name, spec, about in HEURISTIC_LEVELS]
    for m in models:
        if m.rules_key == rules.key:
            levels.append({"name": m.name, "spec": f"{m.kind}:{m.name}", "kind": m.kind,
                           "about": "a learned network" if m.kind == "net" else "a solved strategy table"})
    return levels


def resolve(name: str, rules, models: list[Model]) -> str:
    """The agent spec of a level name, a model name (``net:NAME``, ``table:NAME`` or ``NAME``; ``ppo:``/``cfr:`` as aliases) or a plain
    spec without a file; anything else raises AgentSpecError listing the choices."""
    if not isinstance(name, str) or not name:
        raise AgentSpecError(f"an opponent must be named by a string, got {name!r:.40}")
    for level, spec, _ in HEURISTIC_LEVELS:
        if name in (level, spec):
            return spec
    if name.startswith("heuristic:") and name.split(":", 1)[1] in STYLES:
        return name
    kind, _, stem = name.rpartition(":")
    for m in models:
        if stem == m.name and kind in ("", m.kind, ALIASES[m.kind]):
            if m.rules_key is not None and m.rules_key != rules.key:
                raise AgentSpecError(f"model {m.name!r} was trained for other rules than "
                                     f"{rules.variant} with these options")
            return m.spec
    choices = ", ".join(level["name"] for level in ladder(rules, models))
    raise AgentSpecError(f"unknown opponent {name!r:.60}; choose a level or a model by name: {choices}")
