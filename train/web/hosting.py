"""Where ``truc serve`` may listen: checked before anything is imported or bound (no Starlette needed)."""

from __future__ import annotations

import ipaddress
import os

from truc_env.errors import TrucError


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_serve_settings(host: str, port: int, allow_remote: bool, models_dir: str | None) -> str | None:
    """Refuse a host others can reach (unless ``allow_remote``), a port out of range, a missing models
    folder; returns the models folder to offer (the shipped models when none is given)."""
    if not is_loopback(host) and not allow_remote:
        raise TrucError(f"--host {host} is not a loopback address: anyone who can reach it could play on this "
                        "server; pass --allow-remote as well to bind it anyway")
    if not 1 <= port <= 65535:
        raise TrucError(f"--port must be in 1..65535, got {port}")
    if models_dir is None:  # the shipped models (the checkout's models/, or the installed copy's)
        from truc_env.io.assets import shipped_dir

        found = shipped_dir("models")
        return str(found) if found.is_dir() else None
    if not os.path.isdir(models_dir):
        raise TrucError(f"--models {models_dir!r} is not a folder")
    return models_dir
