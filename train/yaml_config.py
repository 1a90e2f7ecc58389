"""Reading a YAML settings file: one mapping, with a clear error for a missing or malformed file."""

from __future__ import annotations

import yaml

from truc_env.errors import TrucError


def read_mapping(path: str, what: str = "config") -> dict:
    """The file's settings as a dict (an empty file is no settings)."""
    try:
        with open(path) as f:
            raw = yaml.safe_load(f) or {}
    except OSError as e:
        raise TrucError(f"cannot read {what} {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise TrucError(f"{what} {path} is not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise TrucError(f"{what} {path} must be a mapping of settings")
    return raw
