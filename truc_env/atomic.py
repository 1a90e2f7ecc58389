"""Atomic artifact writes: a temporary file beside the target, renamed over it once complete.

A reader (or a resumed run) sees either the old file or the whole new one, never a torn write.
Also :func:`read_text`, the one reader of the text files a user hands in (configs, records).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_open(path, mode: str = "w", **kwargs):
    """Open a temporary file for writing; on success it is synced and renamed over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; an artifact is as readable as any file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text: str) -> None:
    with atomic_open(path) as f:
        f.write(text)


def read_text(path, what: str, error=None) -> str:
    """A user's text file as a str; a missing, unreadable or binary (non-UTF-8) file raises ``error``."""
    from .errors import TrucError

    error = error or TrucError
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not a text file (not UTF-8)") from None
