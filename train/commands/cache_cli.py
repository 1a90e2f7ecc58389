"""``truc cache``: what the exact measurements keep on disk (built public trees, network inputs), and freeing it.

    truc cache [--cache-dir DIR]            list every file: size, kind, what it was built for
    truc cache --clear [--stale]            delete them (only those today's code cannot read with --stale)
"""

from __future__ import annotations

from train.commands import flags
from train.eval.tree_cache import (
    cache_bytes,
    cache_entries,
    cache_limit,
    clear_cache,
    clear_stale_locks,
    default_cache_dir,
)


def human_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def add_arguments(p) -> None:
    p.add_argument("--cache-dir", type=flags.output_folder, help="the cache folder (default: $TRUC_CACHE_DIR or ~/.cache/truc-env)")
    p.add_argument("--clear", action="store_true", help="delete the cache files (nothing else in the folder)")
    p.add_argument("--stale", action="store_true",
                   help="with --clear: only the files today's code would never read (built by other sources)")


def run_cli(args) -> None:
    from truc_env.errors import TrucError

    cache_dir = args.cache_dir or default_cache_dir()
    if args.stale and not args.clear:
        raise TrucError("--stale only goes with --clear (truc cache --clear --stale)")
    if args.clear:
        files, size = clear_cache(cache_dir, stale_only=args.stale)
        locks = 0 if args.stale else clear_stale_locks(cache_dir)
        print(f"deleted {files} {'stale ' if args.stale else ''}cache file{'s' * (files != 1)} "
              f"({human_bytes(size)}) from {cache_dir}" + (f", and {locks} left-over lock file{'s' * (locks != 1)}"
                                                            if locks else ""))
        return
    entries, limit = cache_entries(cache_dir), cache_limit()
    total = sum(e["bytes"] for e in entries)
    kept = "no limit" if limit is None else f"kept within {limit / 2**30:.1f} GiB"
    print(f"{cache_dir}: {len(entries)} file{'s' * (len(entries) != 1)}, {human_bytes(total)} "
          f"({kept}, $TRUC_CACHE_MAX_GB; the least recently used files go first)")
    for e in entries:
        print(f"  {human_bytes(e['bytes']):>9}  {e['kind']:<7} {e['about']}{'  (stale)' if e['stale'] else ''}  "
              f"{e['path']}")
    if entries:
        print("free it with: truc cache --clear (or --clear --stale for the files no longer read)")


def cache_start(cache_dir: str | None) -> int:
    """The cache's bytes before a command writes to it, its limit checked first (a bad $TRUC_CACHE_MAX_GB is refused
    before any work, not when the first tree is kept)."""
    if cache_dir is None:
        return 0
    cache_limit()
    return cache_bytes(cache_dir)


def announce_growth(cache_dir: str | None, before: int) -> None:
    """One line when a command has written to the cache: where, how much, and how to free it."""
    if cache_dir is None:
        return
    grown = cache_bytes(cache_dir) - before
    if grown > 0:
        print(f"  cache: {human_bytes(grown)} written to {cache_dir} (now {human_bytes(before + grown)}; "
              "list with `truc cache`, free with `truc cache --clear`)")
