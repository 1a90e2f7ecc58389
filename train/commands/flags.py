"""The kinds of value a ``truc`` flag takes, each checked as argparse reads it, before any work starts.

Each is an argparse ``type=``: a bad value ends the command in one line naming the flag, what it got
and what is allowed (``train.commands.cli`` turns argparse's errors into a :class:`TrucError`). Paths are
checked for what they must be: an input file that exists, is a regular file and fits the size cap
(so ``/dev/zero`` is refused at once), an output file or folder whose nearest existing parent is a
writable folder (missing parents are made when the result is written).
"""

from __future__ import annotations

import argparse
import math
import os

from truc_env.io.atomic import MAX_TEXT_BYTES
from truc_env.io.checks import MAX_SEED


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None


def seed(text: str) -> int:
    """A seed: an integer in 0..2**63-1."""
    value = _int(text)
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text[:40]} is not a seed; a seed is an integer in 0..{MAX_SEED}")
    return value


def integer(lo: int, hi: int | None = None):
    """An integer in lo..hi (hi: no bound when None)."""
    def parse(text: str) -> int:
        value = _int(text)
        if value < lo or (hi is not None and value > hi):
            allowed = f"in {lo}..{hi}" if hi is not None else f">= {lo}"
            raise argparse.ArgumentTypeError(f"{text[:40]} is out of range; expected an integer {allowed}")
        return value
    parse.__name__ = "integer"
    return parse


def word_or_integer(word: str, lo: int, hi: int):
    """``word`` itself, or an integer in lo..hi."""
    whole = integer(lo, hi)

    def parse(text: str):
        if text == word:
            return word
        try:
            return whole(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: {word!r} or an integer in {lo}..{hi}") from None
    parse.__name__ = "word_or_integer"
    return parse


def number(lo: float, hi: float | None = None, above: bool = False):
    """A finite number >= lo (> lo when ``above``), and <= hi when given: never nan or inf."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number") from None
        if not math.isfinite(value) or value < lo or (above and value == lo) or (hi is not None and value > hi):
            allowed = f"{'>' if above else '>='} {lo}" + (f" and <= {hi}" if hi is not None else "")
            raise argparse.ArgumentTypeError(f"{text[:40]} is invalid; expected a finite number {allowed}")
        return value
    parse.__name__ = "number"
    return parse


def input_file(text: str) -> str:
    """A file to read: it exists, is a regular file (not a folder or a device) and fits the size cap."""
    try:
        st = os.stat(text)
    except (OSError, ValueError) as e:
        raise argparse.ArgumentTypeError(f"cannot read {text[:200]!r}: {getattr(e, 'strerror', None) or e}") from None
    import stat

    if stat.S_ISDIR(st.st_mode):
        raise argparse.ArgumentTypeError(f"{text[:200]} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise argparse.ArgumentTypeError(f"{text[:200]} is not a regular file (a device or a pipe)")
    if st.st_size > MAX_TEXT_BYTES:
        raise argparse.ArgumentTypeError(f"{text[:200]} has {st.st_size:,} bytes, more than a settings file or "
                                         f"record may ({MAX_TEXT_BYTES:,})")
    return text


def shipped_file(kind: str):
    """An input file given by path or by the name of a shipped one (configs ``cfr/small``, examples
    ``worked_example``: :mod:`truc_env.io.assets`), checked as :func:`input_file`."""
    def parse(text: str) -> str:
        from truc_env.errors import TrucError
        from truc_env.io.assets import resolve

        try:
            path = resolve(kind, text)
        except TrucError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return input_file(path)
    parse.__name__ = "file"
    return parse


def _writable_parent(text: str) -> None:
    """The nearest existing folder above ``text`` must be a folder this user may write in."""
    parent = os.path.dirname(os.path.abspath(text))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"{text[:200]}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text[:200]}: the folder {parent} is not writable")


def _path_text(text: str) -> None:
    if not text or "\x00" in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not a path")


def output_file(text: str) -> str:
    """A file to write: not a folder, and creatable (its nearest existing parent a writable folder)."""
    _path_text(text)
    if os.path.isdir(text) or text.endswith(("/", os.sep)):
        raise argparse.ArgumentTypeError(f"{text[:200]} is a folder; give a file name")
    if os.path.exists(text) and not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text[:200]} is not a regular file")
    _writable_parent(text)
    return text


def output_folder(text: str) -> str:
    """A folder to write in: an existing folder, or one that can be made."""
    _path_text(text)
    if os.path.exists(text):
        if not os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text[:200]} is a file, not a folder")
        if not os.access(text, os.W_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"the folder {text[:200]} is not writable")
        return text
    _writable_parent(text)
    return text


def output_prefix(text: str) -> str:
    """A file-name prefix (``docs/img/x`` for ``docs/img/x_<name>.png``): its folder must be makeable."""
    _path_text(text)
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text[:200]} is a folder; give a folder and a name prefix")
    _writable_parent(text)
    return text


COUNT = integer(1)  # how many of something: at least one
