"""The layout of 0.2 (docs/architecture.md, "The tree"): every module path of 0.1 still imports its
module, the very same object, with a DeprecationWarning naming the new path; and no module is left
at an old path."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import agents
import train
import truc_env
from truc_env.moved import FINDER

ROOT = Path(__file__).resolve().parents[1]
# the 0.1 paths, written out (not read from the finder) so that a move dropped from the finder fails here
OLD_0_1 = {
    "truc_env": ["cards", "variants", "rules", "actions", "hand_rules", "engine", "view", "episode", "records",
                 "observe", "pettingzoo_env", "gym_env", "gym_vector", "openspiel_game", "vector", "render", "draw",
                 "talk", "assets", "atomic", "checks"],
    "agents": ["random", "heuristic", "heuristic_batch", "human", "partner_info", "ppo", "ppo.network",
               "ppo.checkpoint"],
    "train": ["ppo", "cfr", "psro", "distill", "signals_otherplay", "signals_runs", "exploitability",
              "node_inputs", "tree_cache", "aliasing", "arena", "match", "stats", "report", "approx_br", "signals",
              "signals_bound", "info_theory", "style", "cli", "signals_cli", "demo", "play", "cache_cli", "flags"],
}
OLD = [f"{pkg}.{m}" for pkg, mods in OLD_0_1.items() for m in mods]
assert {truc_env, agents, train}  # the packages register their moves on import


@pytest.mark.parametrize("old", OLD)
def test_an_old_path_imports_the_new_module(old):
    new = FINDER.new_path(old)
    assert new is not None and new != old, f"{old} is not kept"
    assert importlib.import_module(new) is importlib.import_module(old)
    assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), f"{old} still has a file at its old path"


def test_an_old_path_warns_with_the_new_one():
    code = ("import warnings\nwarnings.simplefilter('error')\nimport truc_env\n"
            "try:\n    import truc_env.engine\nexcept DeprecationWarning as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "truc_env.engine moved to truc_env.game.engine" in out.stdout, out.stderr


def test_names_imported_from_an_old_path_are_the_new_ones():
    from truc_env.engine import State as old_state  # noqa: F401 (the 0.1 spelling under test)

    from truc_env.game.engine import State

    assert old_state is State
    state = truc_env.new_game(truc_env.make_rules("le_truc"))
    assert type(pickle.loads(pickle.dumps(state))) is State  # a pickle names the new path and loads


def test_an_unknown_module_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("truc_env.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("train.ppo.no_such_module")


def test_every_folder_has_one_job_written_down():
    """Each sub-package says its job in its docstring, and docs/architecture.md's tree names it."""
    tree = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for pkg in ("truc_env", "agents", "train"):
        for init in sorted((ROOT / pkg).glob("*/__init__.py")):
            folder = init.parent.name
            if folder.startswith("_"):
                continue
            doc = importlib.import_module(f"{pkg}.{folder}").__doc__
            assert doc and doc.strip(), f"{pkg}/{folder} has no docstring"
            assert f"  {folder}/" in tree, f"docs/architecture.md's tree does not name {pkg}/{folder}/"
