"""The files shipped with the package, found by name from any folder: configs, models, example records.

In a checkout they are the top-level ``configs/``, ``models/`` and ``examples/``; an installed copy
carries them as package data under ``truc_env/_shipped/`` (setup.py maps the folders there). A path
that exists is always taken as given, so checkout paths keep working; otherwise a short name is looked
up: ``arena/paulista`` is ``configs/arena/paulista.yaml``, ``le_truc`` is the default Le Truc network,
``distilled_mmd_le_truc`` a model by its file name. ``configs/...`` and ``models/...`` written from
the checkout root resolve inside the shipped copy too, so the README's commands run from any folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from truc_env.errors import TrucError
from truc_env.game.variants import DEFAULT_MODELS

KINDS = {"configs": (".yaml", ".sh"), "models": (".pt", ".npz"), "examples": (".json",)}

# Model files renamed in 0.2 to say how they were made (they were all called ppo_* after the network's
# checkpoint format); the old names resolve for one release.
OLD_MODEL_NAMES = {
    "ppo_le_truc": "distilled_mmd_le_truc",
    "ppo_le_truc_stage5": "distilled_mmd_le_truc_w256",
    "ppo_le_truc_descent12": "distilled_mmd_le_truc_descent12",
    "ppo_le_truc_fit": "distilled_mmd_le_truc_fit",
}
# configs/ was one flat folder until 0.2; its old file names resolve for one release (configs/README.md)
_OLD_CONFIGS = {"arena": "arena/le_truc", "arena_paulista": "arena/paulista", "learn_small_ppo": "ppo/small",
                "ppo_le_truc_vs_cfr": "arena/ppo_le_truc_vs_cfr"}
_OLD_PREFIXES = {"cfr_": "cfr/", "ppo_": "ppo/", "learn_": "ppo/", "psro_": "psro/", "distill_": "distill/",
                 "signals_": "signals/"}


def old_config_name(stem: str) -> str:
    """The 0.2 name of a config of the flat 0.1 folder (``cfr_le_truc`` -> ``cfr/le_truc``); other names as given."""
    if stem in _OLD_CONFIGS:
        return _OLD_CONFIGS[stem]
    if stem.endswith("_arena"):
        return "arena/" + stem[:-len("_arena")]
    for old, new in _OLD_PREFIXES.items():
        if stem.startswith(old):
            return new + stem[len(old):]
    return stem




def shipped_dir(kind: str) -> Path:
    """The folder of ``kind`` (configs, models, examples): the checkout's, else the installed copy's."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of shipped file {kind!r}")
    package = Path(__file__).resolve().parents[1]  # truc_env/
    checkout = package.parent / kind
    if checkout.is_dir() and (package.parent / "pyproject.toml").is_file():
        return checkout
    return package / "_shipped" / kind


def resolve(kind: str, name: str) -> str:
    """The path of ``name``: itself if it exists, else the shipped file of that name (see the module doc).

    A name that is neither raises :class:`TrucError` listing where it looked.
    """
    name = os.fspath(name)
    if os.path.exists(name):  # False (not an error) for a name too long or with a NUL
        return name
    found = _shipped(kind, name)
    if found is None:
        raise TrucError(f"no such file {name!r}, and no shipped {kind[:-1]} of that name "
                        f"(names are paths under {shipped_dir(kind)}, without {' or '.join(KINDS[kind])})")
    return str(found)


def shipped_path(kind: str, name) -> str:
    """:func:`resolve`, or ``name`` as given when nothing matches (the caller's own error then names it)."""
    try:
        return resolve(kind, name)
    except TrucError:
        return os.fspath(name)


def names(kind: str) -> list[str]:
    """Every shipped name of ``kind``, as :func:`resolve` takes it."""
    root = shipped_dir(kind)
    out = [str(p.relative_to(root).with_suffix("")) for ext in KINDS[kind] for p in root.rglob(f"*{ext}")]
    return sorted(out)


def _shipped(kind: str, name: str) -> Path | None:
    root = shipped_dir(kind)
    rel = name.replace("\\", "/")
    if rel.startswith(f"{kind}/"):
        rel = rel[len(kind) + 1:]
    stem, ext = os.path.splitext(rel)
    if ext not in KINDS[kind]:
        stem, ext = rel, ""
    if kind == "models":
        stem = DEFAULT_MODELS.get(stem, OLD_MODEL_NAMES.get(stem, stem))
    elif kind == "configs" and "/" not in stem:
        stem = old_config_name(stem)
    for suffix in ([ext] if ext else KINDS[kind]):
        path = root / (stem + suffix)
        try:
            if ".." not in Path(stem).parts and path.is_file():
                return path
        except (OSError, ValueError):  # a name too long for the file system, or with a NUL: no such file
            return None
    return None
