"""The module paths of 0.1, kept importing for one release after the layout of 0.2 moved them.

``import truc_env.engine`` (0.1) gives the very module ``truc_env.game.engine`` (0.2) with a
DeprecationWarning naming the new path, so pickles, ``monkeypatch`` strings and user code written
against 0.1 keep working. Each package registers its own moves (:func:`keep_old_paths`). The
finder goes first on ``sys.meta_path``: a moved package's old name shares the new one's ``__path__``,
so the normal finder would load ``agents.ppo.network`` a second time as a module of its own; no
file is left at an old path for it to shadow (``tests/test_layout.py``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module that now lives at its new path."""

    def __init__(self) -> None:
        self.moves: dict[str, str] = {}
        self._longest_first: list[str] = []  # the old paths, a package's submodules before the package
        self._roots: set[str] = set()  # their top-level packages: every import asks, most of them for others

    def add(self, moves: dict[str, str]) -> None:
        self.moves.update(moves)
        self._longest_first = sorted(self.moves, key=len, reverse=True)
        self._roots = {old.partition(".")[0] for old in self.moves}

    def new_path(self, name: str) -> str | None:
        """The 0.2 path of the 0.1 module ``name`` (a moved package carries its submodules), or None."""
        if name.partition(".")[0] not in self._roots:
            return None
        for old in self._longest_first:
            if name == old or name.startswith(old + "."):
                return self.moves[old] + name[len(old):]
        return None

    def find_spec(self, name, path=None, target=None):
        if self.new_path(name) is None:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        return None  # a placeholder: exec_module puts the real module in its place

    def exec_module(self, module) -> None:
        name = module.__spec__.name
        new = self.new_path(name)
        warnings.warn(f"{name} moved to {new} in truc-env 0.2; the old path goes in 0.3",
                      DeprecationWarning, stacklevel=2)
        # the import system returns what sys.modules holds under the name once this returns
        sys.modules[name] = importlib.import_module(new)


FINDER = _OldPaths()


def keep_old_paths(moves: dict[str, str]) -> None:
    """Make each old module path of ``moves`` (old -> new, absolute names) import its new module."""
    FINDER.add(moves)
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
