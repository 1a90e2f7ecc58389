"""Atomic artifact writes: a temporary file beside the target, renamed over it once complete.

A reader (or a resumed run) sees either the old file or the whole new one, never a torn write.
Also :func:`read_text`, the one reader of the text files a user hands in (configs, records).
"""

from __future__ import annotations

import errno
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # a write that failed for lack of room: full, quota, size limit


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


MAX_TEXT_BYTES = 16 * 2**20  # a settings file or a game record is kilobytes; past 16 MiB it is not one


def read_text(path, what: str, error=None) -> str:
    """A user's text file as a str; a missing, unreadable, binary (non-UTF-8), special (a device, a pipe)
    or oversized (past :data:`MAX_TEXT_BYTES`) file raises ``error``, without reading more than the cap."""
    import stat

    from truc_env.errors import TrucError

    error = error or TrucError
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a pipe must not block the open
    except (OSError, ValueError) as e:
        raise error(f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"cannot read {what} {path}: it is a folder, not a file")
        if not stat.S_ISREG(mode):  # /dev/zero, /dev/urandom, a pipe: endless or never ending
            raise error(f"{what} {path} is not a regular file (a device or a pipe)")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_TEXT_BYTES + 1)
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_TEXT_BYTES:
        raise error(f"{what} {path} is larger than {MAX_TEXT_BYTES // 2**20} MiB: not a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not a text file (not UTF-8)") from None


MAX_INT_DIGITS = 30  # no count, seed or score in a record needs more (a seed is < 2**63, 19 digits)


def parse_json(text: str, what: str, error=None):
    """JSON as a user hands it in, strictly: a key given twice or an integer of more than
    :data:`MAX_INT_DIGITS` digits raises ``error`` (json would keep the last key silently, and spend
    quadratic time on a huge integer)."""
    import json

    from truc_env.errors import TrucError

    error = error or TrucError

    def unique(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise error(f"{what}: the key {key[:60]!r} is given twice")
            seen[key] = value
        return seen

    def integer(digits: str) -> int:
        if len(digits.lstrip("-")) > MAX_INT_DIGITS:
            raise error(f"{what}: an integer of {len(digits)} digits (at most {MAX_INT_DIGITS} in a {what})")
        return int(digits)

    try:
        return json.loads(text, object_pairs_hook=unique, parse_int=integer)
    except json.JSONDecodeError as e:
        raise error(f"{what}: not valid JSON ({e})") from None
    except RecursionError:
        raise error(f"{what}: the JSON nests too deeply") from None


LOCK_NAME = ".truc.lock"


@contextmanager
def run_lock(folder, force: bool = False, flag: str = "--force"):
    """Hold the run folder ``folder`` for one run: a second run on it is refused while this one lives.

    The lock is ``fcntl.flock`` on ``folder/.truc.lock``, so it dies with its process (kill -9 too). With
    ``force`` a held lock is taken over (for a run that hangs, or a folder on a file system where
    locks outlive processes): the old lock file is replaced. On exit the lock file is removed, and the
    folder too if this call made it and nothing else was written in it.
    """
    import fcntl
    import json
    import sys
    import time

    from truc_env.errors import TrucError

    folder = Path(folder)
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TrucError(f"cannot make the run folder {folder} ({e.strerror})") from None
    path = folder / LOCK_NAME
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise TrucError(f"cannot lock the run folder {folder} ({e.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            if not force:
                raise TrucError(f"another run is using {folder} (lock {path}: {holder[:200]}); wait for it to end, "
                                f"use another folder, or take the folder over with {flag} if that run is "
                                f"gone") from None
            print(f"truc: taking over the run folder {folder} from {holder[:200]}", file=sys.stderr)
            path.unlink(missing_ok=True)
            force = False  # once: the next lock file is ours to take
            continue
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a file another run removed between our open and our lock
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "since": time.strftime("%Y-%m-%d %H:%M:%S"),
                             "command": " ".join(sys.argv)[:300]}).encode())
    try:
        yield folder
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)
        if made:
            try:
                folder.rmdir()  # only when empty: a run refused before writing leaves no folder behind
            except OSError:
                pass
