"""PPO checkpoints: plain dicts of tensors and primitive values, loadable with ``weights_only=True``.

A checkpoint carries the format name and version, the code version, the Rules it was trained for
(variant, options and canonical key), the network's shape, its parameters, and — for training
checkpoints — the optimiser, RNG states, league and metric history. Written atomically: a temporary
file in the same folder, flushed to disk, then renamed over the target.
"""

from __future__ import annotations

import json

import torch

from truc_env.errors import TrucError
from truc_env.io.atomic import atomic_open
from truc_env.io.checks import foreign_file

FORMAT = "truc-ppo"
VERSION = 1


# what every reader of a checkpoint uses, and its type
REQUIRED = {"rules_key": str, "net": dict, "model": dict}
# what a policy file holds (train.algos.ppo.policy_dict); a checkpoint adds the training state to these
POLICY_KEYS = ("format", "version", "code_version", "rules_key", "variant", "options", "net", "config", "model")


class CheckpointError(TrucError):
    """A file that is not a PPO checkpoint, has another version, or is for other Rules."""


def save_atomic(obj: dict, path: str) -> None:
    """``torch.save`` to a temporary file next to ``path``, fsync, then rename over ``path``."""
    with atomic_open(path, "wb") as f:
        torch.save(obj, f)


def _why(e: Exception) -> str:
    """torch's reason in one line: its weights-only refusal runs to a paragraph that suggests an unsafe load."""
    text = str(e).strip()
    if text.startswith("Weights only load failed"):
        return "not a torch file of tensors and plain values: a file of another kind, or pickled objects"
    first = text.splitlines()[0].split(". ")[0] if text else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


def read_checkpoint(path: str, rules=None) -> dict:
    """Load and check a checkpoint; with ``rules``, refuse one trained for other Rules."""
    try:
        kind = foreign_file(path, (b"PK", b"\x80"), "a zip archive or a pickle")
        if kind is not None:
            kind = kind if kind == "an empty file" else f"not a torch file: {kind}"
            raise CheckpointError(f"{path!r} is not a readable PPO checkpoint ({kind})")
        ck = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"no PPO checkpoint at {path!r}") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path!r} is a folder, not a PPO checkpoint") from None
    except CheckpointError:
        raise
    except Exception as e:  # truncated file, another format, pickled objects
        raise CheckpointError(f"{path!r} is not a readable PPO checkpoint ({_why(e)})") from None
    if not isinstance(ck, dict) or ck.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is not a PPO checkpoint (format {FORMAT!r} expected)")
    if ck.get("version") != VERSION:
        raise CheckpointError(f"{path!r} has checkpoint version {ck.get('version')!r}; this code reads version {VERSION}")
    missing = [k for k, kind in REQUIRED.items() if not isinstance(ck.get(k), kind)]
    if missing:
        raise CheckpointError(f"{path!r} is a damaged PPO checkpoint: {', '.join(missing)} missing or malformed")
    try:
        key = json.loads(ck["rules_key"])
        ok = isinstance(key, dict) and isinstance(key.get("variant"), str) and isinstance(key.get("options"), dict)
    except ValueError:
        ok = False
    if not ok:
        raise CheckpointError(f"{path!r} is a damaged PPO checkpoint: its rules_key is not a Rules key")
    check_rules(ck, path, rules)
    return ck


def check_rules(ck: dict, path: str, rules) -> None:
    """Refuse a checkpoint trained for other Rules than ``rules`` (None: no check)."""
    if rules is not None and ck["rules_key"] != rules.key:
        theirs, ours = json.loads(ck["rules_key"]), json.loads(rules.key)
        diff = {k: (theirs["options"].get(k), ours["options"].get(k))
                for k in sorted(set(theirs["options"]) | set(ours["options"]))
                if theirs["options"].get(k) != ours["options"].get(k)}
        what = f"variant {theirs['variant']}" if theirs["variant"] != ours["variant"] else f"options (trained, asked) {diff}"
        raise CheckpointError(
            f"{path!r} was trained for {theirs['variant']}, not for these Rules of {ours['variant']}: they differ in "
            f"{what}; a PPO policy only plays the Rules it was trained for")
