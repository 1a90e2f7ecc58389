"""Where the batched engine's compiled kernels are kept, and their first compile in a process.

numba caches a compiled function beside its source (``__pycache__``) by default, which a read-only or
container install cannot write: such an install would compile in every process. Importing this module
(``_vector_kernels`` does, before its first ``njit(cache=True)``) puts the cache of every numba function
of the ``truc_env`` package in the user's cache instead: ``$TRUC_CACHE_DIR/numba``, else
``~/.cache/truc-env/numba``, the directory the public-tree cache uses. ``NUMBA_CACHE_DIR``, when set,
still wins; a directory that cannot be written leaves numba's own choice.

:func:`ready` gives the kernels their machine code before their first call: from the cache when it holds
an entry for these argument types, else compiled, announced first by one line on stderr. A cache entry
that cannot be read (a corrupted or truncated file) is dropped with a message and rebuilt. A stale one (an
edited source, another numba) is not used: numba keys its index by the source's hash and its version.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from numba.core import caching, config

from truc_env.batch import gc_paused

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # truc_env/
_CacheImpl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.61


def cache_dir() -> str:
    """The directory of the kernels' numba cache: ``$TRUC_CACHE_DIR/numba`` or ``~/.cache/truc-env/numba``."""
    base = os.environ.get("TRUC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "truc-env")
    return os.path.join(base, "numba")


class UserCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache of the functions defined under ``roots`` (this package), kept in :func:`cache_dir`."""

    roots = [PACKAGE]

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        path = os.path.abspath(py_file)
        if config.CACHE_DIR or not any(path.startswith(root + os.sep) for root in cls.roots):
            return None  # NUMBA_CACHE_DIR, or not ours: numba's own locators decide
        return super().from_function(py_func, py_file)  # None when the directory cannot be written


if UserCacheLocator not in _CacheImpl._locator_classes:
    _CacheImpl._locator_classes.insert(0, UserCacheLocator)


def _say(message: str) -> None:
    print(f"truc-env: {message}", file=sys.stderr, flush=True)


def _where(kernel) -> str:
    cache = getattr(kernel, "_cache", None)
    path = getattr(cache, "_cache_path", None)
    return path or "nowhere (numba caching is off)"


def _cached(kernel, sig) -> bool:
    """The cache index holds an entry for ``sig`` (raises when the index cannot be read)."""
    cache = kernel._cache
    if not hasattr(cache, "_cache_file"):  # caching disabled (NullCache)
        return False
    return cache._index_key(sig, kernel.targetctx.codegen()) in cache._cache_file._load_index()


def ready(calls, what: str) -> None:
    """Machine code for each ``(kernel, args)`` of ``calls`` (numba dispatchers and example arguments).

    Cache entries are loaded; a missing one is compiled after one line saying so, once per process and
    argument types. An entry that cannot be read is dropped and rebuilt, with a message.
    """
    todo = []
    for kernel, args in calls:
        sig = tuple(kernel.typeof_pyval(a) for a in args)
        if sig not in kernel.overloads:
            todo.append((kernel, sig))
    if not todo:
        return
    missing = []
    for kernel, sig in todo:
        try:
            if not _cached(kernel, sig):
                missing.append(kernel)
        except Exception as exc:  # a truncated or garbled index: numba would raise on every call
            _drop(kernel, exc)
            missing.append(kernel)
    t0 = time.process_time()
    if missing:
        _say(f"compiling the batched engine's numba kernels for {what} (once: later processes load them "
             f"from {os.path.dirname(_where(missing[0]))}) ...")
    for kernel, sig in todo:
        try:
            with contextlib.nullcontext() if kernel in missing else gc_paused():  # loads only: see gc_paused
                kernel.compile(sig)
        except Exception as exc:
            if kernel in missing:  # a compile error, not the cache's
                raise
            _drop(kernel, exc)  # the index was fine but its data file is not
            kernel.compile(sig)
    if missing:
        _say(f"compiled in {time.process_time() - t0:.1f} CPU-s")


def _drop(kernel, exc: Exception) -> None:
    """Empty a kernel's cache index after it failed to load, so that the next compile rebuilds the entry."""
    _say(f"the compiled-kernel cache of {kernel.py_func.__name__} in {_where(kernel)} cannot be read "
         f"({type(exc).__name__}: {exc}); rebuilding it")
    kernel._cache.flush()
