"""Writing observation rows at batch sizes in and out of the caches: plain stores, software prefetching,
non-temporal stores (numba, one thread). The experiment behind ``benchmarks/targets.md``'s B = 65536 row.

    python benchmarks/obs_rows.py [--sizes 1024 65536] [--seconds 0.3]

Each variant writes what the batched kernel's ``write_obs`` writes per game: a row of 325 float32 cleared,
then 25 ones at fixed positions; nanoseconds per row (CPU time, best of 3). ``prefetch k``: ``llvm.prefetch``
for writing of the row k games ahead; ``non-temporal``: the row built in a cached scratch row, then
stored with ``!nontemporal`` stores (which skip reading the destination's cache lines before writing them);
``sparse``: no clear, only the entries set by the previous call zeroed (kept per row) and the new ones set,
the ones moving between calls as a game's do (a third of a row's cache lines change per step in random le_truc
play, and about as many hold a one), so fewer bytes are written but the lines touched are scattered;
``nt blocks``: 16 rows (325 whole 64-byte lines) built in a cached scratch block, then streamed out with aligned
32-byte non-temporal vector stores, the buffer starting on a line: whole lines written, none read.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

ROW, ONES = 325, 25  # le_truc's observation size; about the entries one sets


@intrinsic
def _prefetch_write(typingctx, arr, i):
    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(a.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, i), codegen


@intrinsic
def _store_nontemporal(typingctx, arr, i, val):
    def codegen(context, builder, signature, args):
        a = context.make_array(signature.args[0])(context, builder, args[0])
        store = builder.store(args[2], builder.gep(a.data, [args[1]]))
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    return types.void(arr, i, arr.dtype), codegen


@intrinsic
def _copy8_nontemporal(typingctx, dst, i, src, j):
    """dst[i:i+8] = src[j:j+8] as one 32-byte vector load and one aligned non-temporal vector store."""
    def codegen(context, builder, signature, args):
        d = context.make_array(signature.args[0])(context, builder, args[0])
        s = context.make_array(signature.args[2])(context, builder, args[2])
        vec = ir.VectorType(ir.FloatType(), 8)
        src_ptr = builder.bitcast(builder.gep(s.data, [args[3]]), vec.as_pointer())
        dst_ptr = builder.bitcast(builder.gep(d.data, [args[1]]), vec.as_pointer())
        value = builder.load(src_ptr, align=32)
        store = builder.store(value, dst_ptr, align=32)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    return types.void(dst, i, src, j), codegen


@intrinsic
def _fence(typingctx):
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


@numba.njit
def plain(obs, idx, ahead):
    for b in range(obs.shape[0]):
        o = obs[b]
        o[:] = 0.0
        for k in range(idx.shape[1]):
            o[idx[b % idx.shape[0], k]] = 1.0


@numba.njit
def prefetched(obs, idx, ahead):
    flat, m, B = obs.reshape(-1), obs.shape[1], obs.shape[0]
    for b in range(B):
        if b + ahead < B:
            for j in range(0, m, 16):  # one per 64-byte line
                _prefetch_write(flat, (b + ahead) * m + j)
        o = obs[b]
        o[:] = 0.0
        for k in range(idx.shape[1]):
            o[idx[b % idx.shape[0], k]] = 1.0


@numba.njit
def nontemporal(obs, idx, ahead):
    flat, m = obs.reshape(-1), obs.shape[1]
    row = np.zeros(m, np.float32)
    for b in range(obs.shape[0]):
        row[:] = 0.0
        for k in range(idx.shape[1]):
            row[idx[b % idx.shape[0], k]] = 1.0
        for j in range(m):
            _store_nontemporal(flat, b * m + j, row[j])
    _fence()


@numba.njit
def sparse(obs, idx, kept):
    prev, calls = kept
    shift = calls[0]
    calls[0] += 1
    for b in range(obs.shape[0]):
        o = obs[b]
        for k in range(prev.shape[1]):
            if prev[b, k] >= 0:
                o[prev[b, k]] = 0.0
        row = idx[(b + shift) % idx.shape[0]]
        for k in range(row.shape[0]):
            o[row[k]] = 1.0
            prev[b, k] = row[k]


@numba.njit
def nontemporal_blocks(obs, idx, scratch):
    """16 rows of 325 float32 are 325 whole 64-byte lines: build 16 rows in a cached scratch block, then stream
    the block out with aligned 32-byte non-temporal stores (the destination's lines are never read)."""
    flat, m, B = obs.reshape(-1), obs.shape[1], obs.shape[0]
    block, whole = 16 * m, B - B % 16
    for b0 in range(0, whole, 16):
        scratch[:] = 0.0
        for r in range(16):
            row = idx[(b0 + r) % idx.shape[0]]
            for k in range(row.shape[0]):
                scratch[r * m + row[k]] = 1.0
        base = b0 * m
        for j in range(0, block, 8):
            _copy8_nontemporal(flat, base + j, scratch, j)
    _fence()
    for b in range(whole, B):  # the last B % 16 rows are not whole lines: plain stores
        o = obs[b]
        o[:] = 0.0
        for k in range(idx.shape[1]):
            o[idx[b % idx.shape[0], k]] = 1.0


def aligned(shape, dtype=np.float32):
    """A zeroed array whose data starts on a 64-byte boundary."""
    n = int(np.prod(shape))
    raw = np.zeros(n + 16, dtype)
    off = (-raw.ctypes.data % 64) // raw.itemsize
    return raw[off:off + n].reshape(shape)


def ns_per_row(fn, obs, idx, ahead, seconds):
    best = float("inf")
    for _ in range(3):
        n, t0 = 0, time.process_time()
        while time.process_time() - t0 < seconds:
            fn(obs, idx, ahead)
            n += obs.shape[0]
        best = min(best, (time.process_time() - t0) / n * 1e9)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1024, 65536])
    ap.add_argument("--seconds", type=float, default=0.3)
    args = ap.parse_args(argv)
    if min(args.sizes) < 1:
        ap.error(f"--sizes must be at least 1, got {min(args.sizes)}")
    idx = np.sort(np.random.default_rng(0).integers(0, ROW, (64, ONES)), axis=1).astype(np.int32)
    rows = [("plain", plain, 0), ("prefetch 2", prefetched, 2), ("prefetch 8", prefetched, 8),
            ("prefetch 32", prefetched, 32), ("non-temporal", nontemporal, 0), ("sparse", sparse, None),
            ("nt blocks", nontemporal_blocks, None)]
    print(f"{'B':>7}  " + "".join(f"{name:>14}" for name, _, _ in rows) + "   (ns per row)")
    for B in args.sizes:
        obs = aligned((B, ROW))
        want = {}  # shift -> the rows of the table rolled by that many games, as plain() writes them
        out = []
        for _, fn, ahead in rows:
            shift = 0
            if fn is sparse:  # call k writes the table rolled by k games; from a new buffer, measured from call 2
                ahead = (np.full((B, ONES), -1, np.int32), np.zeros(1, np.int64))
                obs[:] = 0.0
                fn(obs, idx, ahead)
                shift = 1
            elif fn is nontemporal_blocks:
                ahead = aligned(16 * ROW)
            fn(obs, idx, ahead)
            if shift not in want:
                want[shift] = np.zeros((B, ROW), np.float32)
                plain(want[shift], np.roll(idx, -shift, axis=0), 0)
            assert np.array_equal(obs, want[shift])  # every variant writes the same rows
            out.append(ns_per_row(fn, obs, idx, ahead, args.seconds))
        print(f"{B:>7}  " + "".join(f"{x:>14.1f}" for x in out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
