"""Built public trees kept on disk, keyed by what they depend on: rules, dealer, score, abstraction, vira
and a digest of the sources that build them (a change in any makes every cached tree stale)."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import numpy as np

from agents.cfr.tree import PublicTree, build_tree
from truc_env.errors import TrucError
from truc_env.game.rules import Rules

CACHE_FORMAT = "truc-public-tree-cache"
# the sources a built tree depends on: a change in any of them makes every cached tree stale
TREE_SOURCES = ("agents/cfr/tree.py", "agents/cfr/labels.py", "agents/cfr/unfold.py", "agents/cfr/abstraction.py",
                 "truc_env/game/engine.py", "truc_env/game/rules.py", "truc_env/game/variants.py", "truc_env/game/actions.py",
                 "truc_env/game/cards.py")
# and what a node's network input depends on besides
ENCODER_SOURCES = TREE_SOURCES + ("truc_env/game/observe.py", "truc_env/game/view.py", "agents/network/network.py",
                                    "agents/cfr/policy_tree.py", "train/eval/node_inputs.py")
# and what an agent's exact figure depends on besides (the tables it is written into, the heuristics' code)
POLICY_SOURCES = ("train/eval/exploitability.py", "train/eval/net_tables.py", "train/eval/heuristic_tables.py",
                  "agents/players/heuristic.py", "agents/players/heuristic_batch.py", "agents/cfr/policy_tree.py")
_TREE_ARRAYS = ("actor", "hs", "act_start", "label", "kind", "child", "util", "trans", "hs_off", "hs_hands", "tr_off",
                "tr_pos", "W")


def default_cache_dir() -> str:
    """``$TRUC_CACHE_DIR`` or ``~/.cache/truc-env``: where built public trees are kept."""
    import os

    return os.environ.get("TRUC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "truc-env")


def code_version(paths=TREE_SOURCES) -> str:
    """A digest of the source files a cached artifact depends on (relative to the repository root)."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for p in paths:
        h.update(p.encode())
        h.update((root / p).read_bytes())
    return h.hexdigest()[:16]


def tree_cache_key(rules: Rules, dealer: int, score, abstraction: str, vira: int | None = None) -> dict:
    """What a cached tree is valid for: the Rules, the hand's dealer and score, the abstraction, the code,
    and in Paulista the vira turned (its card id)."""
    key = {"format": CACHE_FORMAT, "rules_key": rules.key, "dealer": int(dealer), "score": [int(x) for x in score],
           "abstraction": abstraction, "code": code_version()}
    if vira is not None:
        key["vira"] = int(vira)
    return key


def vira_of(tree: PublicTree) -> int | None:
    return None if tree.vira < 0 else int(tree.vira)


def cached_tree(rules: Rules, dealer: int = 0, score=(0, 0), abstraction: str = "strength", cache_dir: str | None = None,
                log=None, vira: int | None = None) -> PublicTree:
    """:func:`agents.cfr.tree.build_tree`, kept on disk under ``cache_dir`` (None: build, keep nothing);
    ``vira``: Paulista's tree after that card is turned.

    The file's name is a digest of :func:`tree_cache_key`; its header repeats the key, so a file that
    was built for something else, or that does not read back, is refused with :class:`TrucError`.
    A kept tree's arrays are mapped from its file (:func:`mapped_arrays`), also right after it is built
    and written: its memory is the page cache's, which the solver beside it can take back.
    """

    if cache_dir is None:
        return build_tree(rules, dealer, score, abstraction, vira=vira)
    key = tree_cache_key(rules, dealer, score, abstraction, vira)
    with read_or_lock(cache_dir, "tree", key, "public-tree cache file", mmap=True) as (path, arrays):
        if arrays is None:
            tree = _build_and_keep(rules, dealer, score, abstraction, vira, key, path, log)
            if tree is not None:  # not kept (no room on the disk): measured from memory
                return tree
            path, arrays = cache_read(cache_dir, "tree", key, "public-tree cache file", mmap=True)
    return _tree_of(rules, dealer, score, abstraction, vira, path, arrays)


def _tree_of(rules: Rules, dealer: int, score, abstraction: str, vira: int | None, path: str,
             arrays: dict) -> PublicTree:
    from agents.cfr.abstraction import make_abstraction

    header = arrays.pop("header")
    missing = [k for k in (*_TREE_ARRAYS, "hs_counts") if k not in arrays]
    if missing:
        raise TrucError(f"{path}: public-tree cache file lacks {', '.join(missing)}; delete it to rebuild the tree")
    trans1, node_sit = arrays.get("trans1"), arrays.get("node_sit")
    return PublicTree(rules=rules, abstraction=make_abstraction(rules, abstraction, vira), dealer=int(dealer),
                      score=tuple(score), hs_counts=[tuple(int(x) for x in r) for r in arrays["hs_counts"]],
                      situations=int(header["situations"]), stats=header["stats"], trans1=trans1, node_sit=node_sit,
                      vira=-1 if vira is None else int(vira), **{k: arrays[k] for k in _TREE_ARRAYS})


def _build_and_keep(rules: Rules, dealer: int, score, abstraction: str, vira: int | None, key: dict, path: str,
                    log=None) -> PublicTree | None:
    """Build the tree and write its cache file; the tree itself where the file could not be written for lack
    of room (None: it was written, read it back mapped)."""
    t0 = time.time()
    tree = build_tree(rules, dealer, score, abstraction, vira=vira)
    if log:
        log(f"tree {tree.n_nodes:,} public nodes built in {time.time() - t0:.0f}s; kept in {path}")
    header = {"key": key, "situations": tree.situations, "stats": tree.stats}
    arrays = {k: getattr(tree, k) for k in _TREE_ARRAYS}
    arrays["hs_counts"] = np.array(tree.hs_counts, dtype=np.int64).reshape(len(tree.hs_counts), -1)
    for k in ("trans1", "node_sit"):
        if getattr(tree, k) is not None:
            arrays[k] = getattr(tree, k)
    return None if cache_write(path, header, arrays, "public tree") else tree


@contextlib.contextmanager
def build_lock(path: str | None):
    """Held while this process builds the cache file ``path``, so that another process asking for the same
    file waits and then reads it instead of building it too (the xdist workers, seeds trained side by side).
    An advisory lock on ``<path>.lock``, removed on release; none without a cache, where the folder cannot
    be written, or where the platform has no ``fcntl`` (then two processes may both build: the atomic
    write keeps the file whole either way)."""
    try:
        import fcntl
    except ImportError:
        fcntl = None
    if path is None or fcntl is None:
        yield
        return
    lock = path + ".lock"
    try:
        os.makedirs(os.path.dirname(lock) or ".", exist_ok=True)
        f = _locked(lock, fcntl)
    except OSError:
        yield
        return
    with f:
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.unlink(lock)
            fcntl.flock(f, fcntl.LOCK_UN)


def _locked(lock: str, fcntl):
    """``lock`` opened and flocked, the file the path names when the lock is granted: the holder before us
    unlinks it on release, so a lock granted on an unlinked file guards nothing (a third process would lock
    a new file of the same name) and is taken again on the new one."""
    while True:
        f = open(lock, "a")
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            if os.stat(lock).st_ino == os.fstat(f.fileno()).st_ino:
                return f
        except FileNotFoundError:
            pass
        f.close()


@contextlib.contextmanager
def read_or_lock(cache_dir: str | None, prefix: str, key: dict, what: str, mmap: bool = False):
    """``(path, arrays)`` as :func:`cache_read` gives them; where there is no file yet, with this process
    holding its :func:`build_lock` for the block, read again once the lock is held (another process may
    have written the file meanwhile): the block builds and writes it only where ``arrays`` is still None."""
    path, arrays = cache_read(cache_dir, prefix, key, what, mmap)
    if arrays is not None or path is None:
        yield path, arrays
        return
    with build_lock(path):
        yield cache_read(cache_dir, prefix, key, what, mmap)


def mapped_arrays(path: str) -> dict:
    """The arrays of an uncompressed ``.npz`` file mapped from the file, not read into memory: each member's
    bytes lie in the file as they are, after a zip entry header and an ``.npy`` header. Copy-on-write
    (``mode="c"``): numba sees plain writable arrays, and a write stays private to the process. The pages
    are the page cache's: the kernel drops them under memory pressure and reads them again on use, so a
    tree bigger than the memory left beside its solver can still be measured (the 40-card Mineiro's)."""
    import zipfile

    out = {}
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                raise ValueError(f"member {info.filename} is compressed or not an array")
            f.seek(info.header_offset)
            local = f.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError(f"member {info.filename}: no zip entry header")
            f.seek(info.header_offset + 30 + int.from_bytes(local[26:28], "little")
                   + int.from_bytes(local[28:30], "little"))
            version = np.lib.format.read_magic(f)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(f)
            name = info.filename[:-4]
            if dtype.hasobject:
                raise ValueError(f"member {name}: an object array")
            if dtype.kind == "U" or 0 in shape or not shape:  # the header and empty arrays: read as they are
                with z.open(info.filename) as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            out[name] = np.memmap(path, dtype=dtype, mode="c", offset=f.tell(), shape=shape,
                                  order="F" if fortran else "C")
    return out


def cache_read(cache_dir: str | None, prefix: str, key: dict, what: str,
               mmap: bool = False) -> tuple[str | None, dict | None]:
    """(path, arrays) of the cache file for ``key`` (arrays None when there is none yet; path None
    without a cache). The header is under ``"header"``; a file that does not read back, or whose
    header was written for another key, is refused with :class:`TrucError`. ``mmap``: the arrays mapped
    from the file (:func:`mapped_arrays`) instead of read."""
    import hashlib
    import json
    import os
    import zipfile

    if cache_dir is None:
        return None, None
    text = json.dumps(key, sort_keys=True)
    path = os.path.join(cache_dir, f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:20]}.npz")
    if not os.path.exists(path):
        return path, None
    with contextlib.suppress(OSError):  # used now: the last to go when the cache makes room (a read-only cache stays as it is)
        os.utime(path)
    try:
        if mmap:
            arrays = mapped_arrays(path)
        else:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        header = json.loads(str(arrays["header"]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise TrucError(f"{path}: not a readable {what} ({e}); delete it to rebuild it") from e
    if header.get("key") != key:
        raise TrucError(f"{path}: a {what} built for something else ({header.get('key')}), not for {key}; "
                        "delete it to rebuild it")
    arrays["header"] = header
    return path, arrays


CACHE_PREFIXES = ("tree", "inputs")  # the files this module writes: <prefix>-<key digest>.npz


def is_cache_file(name: str) -> bool:
    """Is the file named ``name`` one this module writes (nothing else in a cache folder is its to delete)?"""
    return name.split("-", 1)[0] in CACHE_PREFIXES and name.endswith(".npz")


KEEP_FREE = 256 << 20  # a cache file is not written where it would leave less than this free on its disk
CACHE_MAX_GB = 20.0  # the default limit of a cache folder: a few trees, not the nine 7.7 GB trees of a 40-card measurement


def cache_limit() -> int | None:
    """The most bytes a cache folder may hold: ``$TRUC_CACHE_MAX_GB`` (GiB, default 20; 0 for no limit). Past it
    the least recently used cache files make room for a new one (:func:`cache_write`)."""
    text = os.environ.get("TRUC_CACHE_MAX_GB", "").strip()
    if not text:
        return int(CACHE_MAX_GB * 2**30)
    try:
        gb = float(text)
    except ValueError:
        gb = math.nan
    if not (math.isfinite(gb) and gb >= 0):
        raise TrucError(f"TRUC_CACHE_MAX_GB={text!r}: the cache's limit in GiB, a number >= 0 (0: no limit)")
    return int(gb * 2**30) if gb else None


def _make_room(folder: str, size: int, limit: int, keep: str) -> tuple[int, int]:
    """Delete the least recently used cache files of ``folder`` (by modification time: a read touches its file)
    until ``size`` more bytes fit within ``limit``; (files, bytes) deleted."""
    files = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if is_cache_file(name) and path != keep:
            with contextlib.suppress(OSError):
                st = os.stat(path)
                files.append((st.st_mtime, st.st_size, path))
    total, gone, freed = sum(f[1] for f in files), 0, 0
    for _, bytes_, path in sorted(files):
        if total + size <= limit:
            break
        with contextlib.suppress(OSError):  # another process took it first, or it cannot go: the write still fits the disk
            os.unlink(path)
            total, gone, freed = total - bytes_, gone + 1, freed + bytes_
    return gone, freed


def cache_write(path: str, header: dict, arrays: dict, what: str = "cache file") -> bool:
    """Write a cache file atomically: a JSON header and the arrays, uncompressed (read back fast).

    A cache only saves time, so where the disk has no room for it (full, a quota, a file-size limit) the
    partial file is removed, one line on stderr says what was not kept and how large it is, and False is
    returned: the caller goes on from memory (a 40-card Paulista measurement filled a disk with its nine
    7.7 GB trees and lost an hour of work before this)."""
    import json
    import shutil

    from truc_env.io.atomic import NO_ROOM, atomic_open

    size = sum(np.asarray(a).nbytes for a in arrays.values())
    folder = os.path.dirname(path) or "."
    why, limit = None, cache_limit()
    try:
        os.makedirs(folder, exist_ok=True)
        if limit is not None:
            if size > limit:
                return _not_kept(what, size, folder, f"the cache's limit is {limit / 2**30:.1f} GiB, $TRUC_CACHE_MAX_GB")
            gone, freed = _make_room(folder, size, limit, keep=path)
            if gone:
                print(f"truc: the cache in {folder} keeps within {limit / 2**30:.1f} GiB ($TRUC_CACHE_MAX_GB): "
                      f"{gone} least recently used file{'s' * (gone != 1)} ({freed / 2**30:.1f} GiB) deleted",
                      file=sys.stderr, flush=True)
        free = shutil.disk_usage(folder).free
        if free < size + KEEP_FREE:  # not filled to the last byte: others write there too
            why = f"{free / 2**30:.1f} GiB free"
        else:
            with atomic_open(path, "wb") as f:
                np.savez(f, header=np.array(json.dumps(header)), **arrays)
    except OSError as e:
        if e.errno not in NO_ROOM:
            raise
        why = os.strerror(e.errno).lower()
    return True if why is None else _not_kept(what, size, folder, why)


def _not_kept(what: str, size: int, folder: str, why: str) -> bool:
    print(f"truc: no room to keep the {what} ({size / 2**30:.1f} GiB) in {folder} ({why}): going on from memory; "
          "`truc cache` lists and clears the cache", file=sys.stderr, flush=True)
    return False


def cache_entries(cache_dir: str) -> list[dict]:
    """Every cache file under ``cache_dir``: path, bytes, kind, what it was built for (from its header)
    and ``stale`` when today's sources would never read it again (its code digest is another)."""
    import json
    import os
    import zipfile

    if not os.path.isdir(cache_dir):
        return []
    current = {"code": code_version(), "encoder": code_version(ENCODER_SOURCES)}
    out = []
    for name in sorted(os.listdir(cache_dir)):
        path = os.path.join(cache_dir, name)
        kind = name.split("-", 1)[0]
        leftover = name.startswith(".") and name.endswith(".tmp")  # an interrupted atomic write
        if not (leftover or is_cache_file(name)) or not os.path.isfile(path):
            continue
        entry = {"path": path, "bytes": os.path.getsize(path), "kind": "partial write" if leftover else kind,
                 "about": "", "stale": leftover}
        if not leftover:
            try:
                with np.load(path, allow_pickle=False) as z:
                    key = json.loads(str(z["header"]))["key"]
                if not isinstance(key, dict):
                    raise ValueError("a key is a mapping")
            except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
                entry.update(about="unreadable", stale=True)
            else:
                entry["about"] = _describe_key(key)
                entry["stale"] = any(key.get(k, v) != v for k, v in current.items())
        out.append(entry)
    return out


def _describe_key(key: dict) -> str:
    import json

    rules = json.loads(key.get("rules_key", "{}"))
    options = ",".join(f"{k}={v}" for k, v in sorted(rules.get("options", {}).items()))
    text = f"{rules.get('variant', '?')}{'(' + options + ')' if options else ''} dealer {key.get('dealer')}"
    text += f" score {'-'.join(map(str, key.get('score', [])))} {key.get('abstraction')}"
    if "vira" in key:
        text += f" vira {key['vira']}"
    if "inputs" in key:
        text += f" {key['inputs']}{' after redeal' if key.get('after_redeal') else ''}"
    return text


def cache_bytes(cache_dir: str) -> int:
    """The bytes of the cache files under ``cache_dir`` (0 when there is none)."""
    import os

    if not os.path.isdir(cache_dir):
        return 0
    return sum(os.path.getsize(os.path.join(cache_dir, f)) for f in os.listdir(cache_dir)
               if is_cache_file(f))


def clear_cache(cache_dir: str, stale_only: bool = False) -> tuple[int, int]:
    """Delete the cache files under ``cache_dir`` (only the stale ones with ``stale_only``); nothing
    else in the folder is touched. Returns (files, bytes) deleted."""
    import os

    files = size = 0
    for entry in cache_entries(cache_dir):
        if stale_only and not entry["stale"]:
            continue
        os.unlink(entry["path"])
        files += 1
        size += entry["bytes"]
    return files, size


def clear_stale_locks(cache_dir: str) -> int:
    """Delete the :func:`build_lock` files no process holds (a build killed before it released its lock leaves
    one behind; it blocks nothing, as the lock is the process's, but it clutters the folder). A held lock stays."""
    try:
        import fcntl
    except ImportError:
        return 0
    if not os.path.isdir(cache_dir):
        return 0
    gone = 0
    for name in os.listdir(cache_dir):
        if not (name.endswith(".lock") and is_cache_file(name[:-len(".lock")])):
            continue
        path = os.path.join(cache_dir, name)
        try:
            with open(path, "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held elsewhere: BlockingIOError, left alone
                os.unlink(path)
                gone += 1
        except OSError:
            continue
    return gone
