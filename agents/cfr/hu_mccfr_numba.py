"""Heads-up external-sampling MCCFR walked on the batched engine's numba kernel: the algorithm and the
information sets of :class:`agents.cfr.hu_mccfr.HeadsUpMCCFR`, without the Python engine.

The Python solver clones and steps ``engine.State`` objects and writes each key as text; most of an iteration
is that. This one walks the same games on the kernel of :mod:`truc_env.batch.vector` (the array engine that
``tests/test_vector.py`` checks step by step against ``engine.py``), one row of its arrays per depth of the
traversal: a traverser's decision copies its row once per action, a sampled decision steps the row in place.
The key is the same information set (role, redeal, dealt hand as strength classes, public labels since the
deal) hashed to 64 bits as the walk goes, so the tables live in flat arrays: an open-addressing index from
key to row, the regrets and average-strategy sums of each row side by side. Two of the real heads-up Le Truc's
22 M keys collide in 64 bits with probability about 10⁻⁵; a collision between two decisions with different
actions stops the run with an error rather than mixing them.

Same algorithm, not the same random numbers: the deals come from the kernel's streams and the opponents'
samples from a stream of this solver's, so a run is reproducible from its seed (checkpoints resume it
bit-identically) but is not the Python solver's run. The export writes the exact solver's strategy format
on the public trees, as the Python solver's does (:meth:`NumbaHeadsUpMCCFR.sigma_on_tree`).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
from numba import njit

import truc_env
from agents.cfr.abstraction import make_abstraction
from agents.cfr.hu_mccfr import HeadsUpMCCFR, unsupported_reason
from agents.cfr.labels import NATURE, PLAY
from agents.cfr.mccfr import atomic_savez, json_bytes, read_checkpoint
from truc_env.batch import _vector_kernels as K
from truc_env.batch._kernel_cache import ready
from truc_env.batch.vector import VectorEnv
from truc_env.errors import TrucError
from truc_env.game import hand_rules
from truc_env.game.actions import layout_of

NAME = "exact-solver-keys-v1"  # the information sets of HeadsUpMCCFR
CHECKPOINT_FORMAT = "truc-hu-mccfr-numba-checkpoint"
FORMAT_VERSION = 1
ROWS = 96  # kernel rows: one per depth of the walk (a hand has at most ~40 decisions)
FREE_KEYS = 1 << 16  # a block of iterations stops to grow the tables below this much room (one
FREE_VALUES = 1 << 22  # iteration adds at most a few thousand information sets)

# stats[...]
S_NODES, S_SETS, S_USED, S_ERROR = 0, 1, 2, 3
_DESCEND, _DELIVER, _NEXT = 0, 1, 2  # the walk's modes

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_ROOT = np.uint64(0x243F6A8885A308D3)  # the public hash of a hand's first decision
_U53 = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def _mix(h, x):
    """The hash of a sequence extended by ``x`` (splitmix64's finaliser over the running hash)."""
    z = h + np.uint64(x) * _M1 + _M1
    z = (z ^ (z >> np.uint64(30))) * _M2
    z = (z ^ (z >> np.uint64(27))) * _M3
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _key(public, role, redealt, hand):
    """An information set's key: the public labels' hash, the role, the redeal and the hand's classes."""
    k = _mix(_mix(_mix(public, role + 1), redealt + 3), hand + 5)
    return k if k != np.uint64(0) else np.uint64(1)  # 0 marks an empty slot


@njit(cache=True, inline="always")
def _slot(index, k):
    """The index slot of key ``k``: where it is, or the empty slot where it goes (linear probing). A slot is
    (key, offset of its row in the values * 16 + its number of actions)."""
    mask = np.uint64(index.shape[0] - 1)
    i = np.int64(k & mask)
    while index[i, 0] != np.uint64(0) and index[i, 0] != k:
        i = np.int64((np.uint64(i) + np.uint64(1)) & mask)
    return i


@njit(cache=True)
def _rehash(keys, rows, index):
    """``keys`` and their ``rows`` (offset * 16 + actions) into an empty ``index``."""
    for i in range(keys.shape[0]):
        j = _slot(index, keys[i])
        index[j, 0] = keys[i]
        index[j, 1] = rows[i]


def _digest() -> int:
    """The kernel sources this module compiles in: numba's cache checks only this file's stamp."""
    h = hashlib.sha256()
    for path in (K.__file__, hand_rules.__file__):
        h.update(Path(path).read_bytes())
    return int(h.hexdigest()[:15], 16)


# The walk's functions are not cached on their own: the entry's cache entry holds everything it links (as the
# kernel's helpers), so that an edit of the kernel, which the entry's key sees, cannot leave a stale copy here.
@njit(**K.NO_REFCOUNT)
def _rand_unit(srng):
    x = srng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    srng[0] = x
    return np.float64((x * np.uint64(2685821657736338717)) >> np.uint64(11)) * _U53


@njit(**K.NO_REFCOUNT)
def _copy_row(st, r, q, public, redealt):
    g, p, ladder, strength, decided, manilha, sigtrue, rng, callq, sigq, sigs, hands, old_hands, played, \
        tcards, tseats, twin, tlead, deck = st
    rng[q] = rng[r]
    for x in (g, callq, sigq, tcards, tseats, twin, tlead, deck):  # loops: a slice copy needs numba's NRT
        for j in range(x.shape[1]):
            x[q, j] = x[r, j]
    for x in (sigs, hands, old_hands, played):
        for j in range(x.shape[1]):
            for m in range(x.shape[2]):
                x[q, j, m] = x[r, j, m]
    public[q] = public[r]
    redealt[q] = redealt[r]


@njit(**K.NO_REFCOUNT)
def _step(st, r, a, label, public, redealt):
    """Row ``r`` takes action ``a``; its public hash follows (an accepted redeal starts it anew).
    True when the hand ended."""
    g, p, ladder, strength, decided, manilha, sigtrue, rng, callq, sigq, sigs, hands, old_hands, played, \
        tcards, tseats, twin, tlead, deck = st
    redeal = g[r, K.F_PHASE] == K.PH_ANSWER and g[r, K.F_CALL_KIND] == K.K_REDEAL and a == p[K.P_A_ACCEPT]
    public[r] = _mix(public[r], label[a])
    if redeal:
        public[r] = _ROOT
        redealt[r] = 1
    return K.apply_decision(r, a, g, p, ladder, strength, decided, callq, sigq, sigs, hands, old_hands, played,
                            tcards, tseats, twin, tlead, deck)


@njit(**K.NO_REFCOUNT)
def _points(st, r, trav):
    g = st[0]
    d = np.float64(g[r, K.F_HP] - g[r, K.F_HP + 1])
    return d if trav % 2 == 0 else -d


@njit(**K.NO_REFCOUNT)
def _hand_code(st, r, seat, cls):
    """The seat's dealt hand (held, and played since the deal) as its classes, ascending, in base 64."""
    p, hands, played = st[1], st[11], st[13]
    held = 0
    code = np.int64(0)
    for lo in range(64):  # classes ascending: a counting pass over the hand (3 to 5 cards, < 64 classes)
        for i in range(p[K.P_HS]):
            if hands[r, seat, i] >= 0 and cls[hands[r, seat, i]] == lo:
                code = code * 64 + lo
                held += 1
            if played[r, seat, i] >= 0 and cls[played[r, seat, i]] == lo:
                code = code * 64 + lo
                held += 1
        if held == p[K.P_HS]:
            break
    return code


@njit(**K.NO_REFCOUNT)
def _walk(st, tb, ctx, trav, w):
    """One external-sampling traversal for seat ``trav`` from the hand dealt in row 0; its value to ``trav``.

    Written as a loop over a stack, not as recursion (numba cannot load a recursive function from its cache):
    row ``r`` is the game at depth ``r``; a traverser's decision in row ``f`` holds a frame (its row of
    regrets, its actions, the child ``frame[f, 2]`` being walked in row ``f + 1``); a value found goes to the
    frame below it."""
    g, p, ladder, strength, decided, manilha, sigtrue, rng, callq, sigq, sigs, hands, old_hands, played, \
        tcards, tseats, twin, tlead, deck = st
    index, vals, stats = tb
    label, cls, srng, public, redealt, mask, acts, labs, sig, vv, frame = ctx
    r = 0
    f = 0
    v = 0.0
    mode = _DESCEND
    while True:
        if mode == _DESCEND:  # row r on to the hand's end or the traverser's next decision
            seat = K.actor_of(r, g, callq, sigq)
            K.write_mask(r, g, p, callq, sigq, hands, sigtrue, mask)
            stats[S_NODES] += 1
            n = 0
            for a in range(mask.shape[1]):  # the abstract actions, by label (ascending), one engine action each
                if mask[r, a]:
                    x = label[a]
                    j = 0
                    while j < n and labs[r, j] < x:
                        j += 1
                    if j < n and labs[r, j] == x:
                        continue
                    for m in range(n, j, -1):
                        labs[r, m] = labs[r, m - 1]
                        acts[r, m] = acts[r, m - 1]
                    labs[r, j] = x
                    acts[r, j] = a
                    n += 1
            if n == 1:
                if _step(st, r, acts[r, 0], label, public, redealt):
                    v = _points(st, r, trav)
                    if r == 0:
                        return v
                    f = r - 1
                    mode = _DELIVER
                continue
            role = 0 if seat == g[r, K.F_DEALER] else 1
            k = _key(public[r], role, redealt[r], _hand_code(st, r, seat, cls))
            i = _slot(index, k)
            if index[i, 0] == np.uint64(0):  # a new information set: its row is [labels | regrets | sums]
                used = stats[S_USED]
                index[i, 0] = k
                index[i, 1] = np.uint64(used * 16 + n)
                for j in range(n):
                    vals[used + j] = labs[r, j]
                stats[S_USED] = used + 3 * n
                stats[S_SETS] += 1
            off = np.int64(index[i, 1] >> np.uint64(4))
            same = np.int64(index[i, 1] & np.uint64(15)) == n
            for j in range(n if same else 0):
                same = same and vals[off + j] == labs[r, j]
            if not same:
                stats[S_ERROR] = 1 + off  # two decisions with other actions under one key
                return 0.0
            off += n  # the regrets, then the sums
            total = 0.0
            for j in range(n):
                total += max(vals[off + j], 0.0)
            for j in range(n):
                sig[r, j] = max(vals[off + j], 0.0) / total if total > 0.0 else 1.0 / n
            if seat == trav:  # a frame: its children in row r + 1, one after the other
                if r + 1 >= g.shape[0]:
                    stats[S_ERROR] = -1  # deeper than the rows
                    return 0.0
                frame[r, 0] = off
                frame[r, 1] = n
                frame[r, 2] = -1
                f = r
                mode = _NEXT
                continue
            for j in range(n):
                vals[off + n + j] += w * sig[r, j]
            u = _rand_unit(srng)
            j = 0
            acc = sig[r, 0]
            while j < n - 1 and u >= acc:
                j += 1
                acc += sig[r, j]
            if _step(st, r, acts[r, j], label, public, redealt):
                v = _points(st, r, trav)
                if r == 0:
                    return v
                f = r - 1
                mode = _DELIVER
            continue
        if mode == _DELIVER:  # v: the value of frame f's child being walked
            vv[f, frame[f, 2]] = v
        j = frame[f, 2] + 1  # frame f's next child, or its value
        n = frame[f, 1]
        if j < n:
            frame[f, 2] = j
            _copy_row(st, f, f + 1, public, redealt)
            if _step(st, f + 1, acts[f, j], label, public, redealt):
                v = _points(st, f + 1, trav)
                mode = _DELIVER
            else:
                r = f + 1
                mode = _DESCEND
            continue
        off = frame[f, 0]
        v = 0.0
        for j in range(n):
            v += sig[f, j] * vv[f, j]
        for j in range(n):
            vals[off + j] += w * (vv[f, j] - v)
        if f == 0:
            return v
        f -= 1
        mode = _DELIVER


def _iterations(digest: int):
    """The compiled iterations, ``digest`` (of the kernel's sources) a cell of their cache key (the only one:
    a dispatcher in a closure would make a new key in every process)."""

    @njit(cache=True, **K.NO_REFCOUNT)
    def iterate(st, tb, ctx, first, count, linear, free_keys, free_values):
        """Iterations ``first`` .. ``first + count - 1``, each one traversal per seat on its own deal; stops
        early when the tables need room. Returns the iterations done."""
        if digest < 0:  # never: the digest is a cell of this closure
            return 0
        g, p, ladder, strength, decided, manilha, sigtrue, rng, callq, sigq, sigs, hands, old_hands, played, \
            tcards, tseats, twin, tlead, deck = st
        index, vals, stats = tb
        public, redealt = ctx[3], ctx[4]
        done = 0
        for t in range(first, first + count):
            if index.shape[0] // 2 - stats[S_SETS] < free_keys or vals.shape[0] - stats[S_USED] < free_values:
                break
            w = np.float64(t) if linear else 1.0
            for trav in range(2):
                K.new_episode(0, g, p, rng)
                K.begin_hand(0, g, p, rng, hands, old_hands, played, tcards, tseats, twin, tlead, deck, sigs, sigq)
                public[0] = _ROOT
                redealt[0] = 0
                _walk(st, tb, ctx, trav, w)
                if stats[S_ERROR] != 0:
                    return done
            done += 1
        return done

    return iterate


@njit(cache=True)
def _fill(actor, dealer, hs, hs_off, hs_hands, act_start, tree_label, parent, edge, iset_off, iset_start, slot_k,
         hand_code_of, redealt, index, vals, sigma):
    """The average strategy on a public tree's slots (nodes parents first); an information set training
    never reached is uniform. Returns the information sets with a row, and those with a positive sum."""
    nn = actor.shape[0]
    pre = np.empty(nn, np.uint64)
    found = 0
    matched = 0
    for node in range(nn):
        pre[node] = _ROOT if node == 0 else _mix(pre[parent[node]], tree_label[edge[node]])
        q = actor[node]
        if q == NATURE:
            continue
        role = 0 if q == dealer else 1
        start = act_start[node]
        s0 = hs[node, q]
        for j in range(hs_off[s0 + 1] - hs_off[s0]):
            i0 = iset_off[node] + j
            a, b = iset_start[i0], iset_start[i0 + 1]
            k = _key(pre[node], role, redealt, hand_code_of[hs_hands[hs_off[s0] + j]])
            i = _slot(index, k)
            total = 0.0
            off = 0
            n = 0
            if index[i, 0] == k:
                matched += 1
                off = np.int64(index[i, 1] >> np.uint64(4))
                n = np.int64(index[i, 1] & np.uint64(15))
                for m in range(n):
                    total += vals[off + 2 * n + m]
            if total <= 0.0:
                for x in range(a, b):
                    sigma[x] = 1.0 / (b - a)
                continue
            found += 1
            got = 0.0
            for x in range(a, b):
                want = tree_label[start + slot_k[x]]
                sigma[x] = 0.0
                for m in range(n):
                    if vals[off + m] == want:
                        sigma[x] = vals[off + 2 * n + m] / total
                got += sigma[x]
            for x in range(a, b):
                sigma[x] = sigma[x] / got if got > 0.0 else 1.0 / (b - a)
    return matched, found


_ITERATE = None


def _compiled():
    global _ITERATE
    if _ITERATE is None:
        _ITERATE = _iterations(_digest())
    return _ITERATE


class NumbaHeadsUpMCCFR:
    """:class:`agents.cfr.hu_mccfr.HeadsUpMCCFR`'s iterations and keys on the numba kernel (see the module)."""

    BACKEND = "numba"
    CHECKPOINT_FORMAT = CHECKPOINT_FORMAT

    def __init__(self, rules, seed: int = 0, weighting: str = "linear", dealer: int = 0, capacity: int = 1 << 20):
        why = unsupported_reason(rules)
        if why:
            raise TrucError(f"{rules.variant}: {why}")
        if weighting not in ("linear", "uniform"):
            raise TrucError(f"MCCFR weighting {weighting!r} is unknown; allowed: linear, uniform")
        self.rules, self.seed, self.weighting, self.dealer = rules, seed, weighting, dealer
        self.iteration = 0
        self.cpu_seconds = 0.0
        env = VectorEnv(rules, num_envs=ROWS, episode="hand", reward="points", dealer=dealer, observe=False,
                        backend="numba", threads=1, seed=seed)
        self.state = env.kernel_state()  # the kernel's tables and one row of game arrays per depth
        env.reset(seed)  # seeds the rows' deal streams (row 0 deals every traversal)
        L = layout_of(rules)
        cls = make_abstraction(rules, "strength").card_class
        self.card_class = np.array([cls[c] for c in rules.deck], np.int64)
        self.label = np.array([PLAY + self.card_class[a - L.play] if L.play <= a < L.play + len(rules.deck) else a
                               for a in range(L.size)], np.int64)
        self.srng = np.array([np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] | np.uint64(1)])
        A = L.size
        self.ctx = (self.label, self.card_class, self.srng, np.zeros(ROWS, np.uint64), np.zeros(ROWS, np.int64),
                    np.zeros((ROWS, A), np.int8), np.zeros((ROWS, A), np.int64), np.zeros((ROWS, A), np.int64),
                    np.zeros((ROWS, A), np.float64), np.zeros((ROWS, A), np.float64), np.zeros((ROWS, 3), np.int64))
        self._tables(capacity)
        self._ready = False

    def _tables(self, capacity: int, sets: int = 0, used: int = 0) -> None:
        cap = 1 << max(int(capacity) - 1, 1).bit_length()  # a power of two
        self.index = np.zeros((cap, 2), np.uint64)
        self.vals = np.zeros(max(6 * cap, used + FREE_VALUES), np.float64)
        self.stats = np.array([0, sets, used, 0], np.int64)

    @property
    def nodes(self) -> int:
        return int(self.stats[S_NODES])

    @property
    def infosets(self) -> int:
        return int(self.stats[S_SETS])

    def _live(self) -> tuple[np.ndarray, np.ndarray]:
        live = self.index[:, 0] != 0
        return self.index[live, 0], self.index[live, 1]

    def _grow(self) -> None:
        """Double whatever is short of room: the index (rehashed) or the values."""
        if self.index.shape[0] // 2 - self.infosets < FREE_KEYS:
            keys, rows = self._live()
            self.index = np.zeros((2 * self.index.shape[0], 2), np.uint64)
            _rehash(keys, rows, self.index)
        if self.vals.shape[0] - int(self.stats[S_USED]) < FREE_VALUES:
            self.vals = np.concatenate([self.vals, np.zeros_like(self.vals)])

    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (each: one traversal per seat, each on its own sampled deal)."""
        iterate = _compiled()
        args = [self.state, (self.index, self.vals, self.stats), self.ctx, self.iteration + 1, 0,
                self.weighting == "linear", FREE_KEYS, FREE_VALUES]
        if not self._ready:  # compiled (or loaded) before the clock starts: zero iterations
            ready([(iterate, args)], "heads-up MCCFR on the kernel")
            self._ready = True
        t0 = time.process_time()
        left = n
        while left > 0:
            args[1], args[3], args[4] = (self.index, self.vals, self.stats), self.iteration + 1, left
            done = iterate(*args)
            self.iteration += done
            left -= done
            err = int(self.stats[S_ERROR])
            if err:
                raise TrucError("heads-up MCCFR: " + ("a hand deeper than the kernel rows" if err < 0 else
                                "two decisions with other actions under one key (a 64-bit key collision)"))
            if left:
                self._grow()
        self.cpu_seconds += time.process_time() - t0

    def sigma_on_tree(self, tree, tree_solver, redealt: bool = False) -> tuple[np.ndarray, int]:
        """As :func:`agents.cfr.hu_mccfr.table_on_tree`: the average strategy on ``tree``'s slots, and how many
        information sets had a row (with a positive sum)."""
        sigma, _, found = self._on_tree(tree, tree_solver, redealt)
        return sigma, found

    def keys_on_tree(self, tree, tree_solver, redealt: bool = False) -> int:
        """How many of the table's keys are information sets of ``tree`` (all of them, over the trees of a
        game: the walk keys what the exact solver keys)."""
        return self._on_tree(tree, tree_solver, redealt)[1]

    def _on_tree(self, tree, tree_solver, redealt):
        from agents.cfr.policy_tree import parents_of

        parent, edge = parents_of(tree)
        codes = np.zeros(len(tree.abstraction.hands), np.int64)
        for h, classes in enumerate(tree.abstraction.hands):
            for c in sorted(classes):
                codes[h] = codes[h] * 64 + c
        sigma = np.zeros(tree_solver.n_slots)
        matched, found = _fill(tree.actor, tree.dealer, tree.hs, tree.hs_off, tree.hs_hands, tree.act_start,
                              tree.label, parent, edge, tree_solver.iset_off, tree_solver.iset_start,
                              tree_solver.slot_k, codes, int(redealt), self.index, self.vals, sigma)
        return sigma, int(matched), int(found)

    # ------------------------------------------------------------------ checkpoints
    def header(self) -> dict:
        r = self.rules
        return {"variant": r.variant, "options": dict(r.options), "rules_key": r.key, "abstraction": NAME,
                "algorithm": "es_mccfr", "backend": self.BACKEND, "weighting": self.weighting, "dealer": self.dealer,
                "score": [0, 0], "seed": self.seed, "iterations": self.iteration, "nodes": self.nodes,
                "cpu_seconds": self.cpu_seconds, "infosets": self.infosets}

    def save_checkpoint(self, path: str) -> None:
        keys, rows = self._live()
        header = {**self.header(), "format": CHECKPOINT_FORMAT, "format_version": FORMAT_VERSION,
                  "truc_env_version": truc_env.__version__}
        atomic_savez(path, compressed=False, header=json_bytes(header), keys=keys, rows=rows,
                     values=self.vals[:int(self.stats[S_USED])], deal_rng=self.state[7].copy(), srng=self.srng.copy())

    from_checkpoint = classmethod(HeadsUpMCCFR.from_checkpoint.__func__)  # the same restore, this class's format

    def load_checkpoint(self, path: str) -> None:
        """Restore tables, counters and generator states from a checkpoint of the same Rules and settings."""
        data, h = read_checkpoint(path, CHECKPOINT_FORMAT, self.rules,
                                  {"weighting": self.weighting, "dealer": self.dealer, "abstraction": NAME})
        try:
            keys, rows, values = data["keys"], data["rows"], data["values"]
            deal_rng, srng = data["deal_rng"], data["srng"]
        except KeyError as e:
            raise TrucError(f"{path}: corrupt checkpoint (missing {e})") from None
        n, used = len(keys), len(values)
        ends = (rows >> np.uint64(4)) + 3 * (rows & np.uint64(15)) if n else np.zeros(0, np.uint64)
        if (len(rows) != n or keys.dtype != np.uint64 or rows.dtype != np.uint64 or deal_rng.shape != self.state[7].shape
                or srng.shape != (1,) or (n and int(ends.max()) > used) or int(h.get("infosets", -1)) != n):
            raise TrucError(f"{path}: corrupt checkpoint ({n} keys, {len(rows)} rows, {used} values)")
        self._tables(4 * n, n, used)
        _rehash(keys, rows, self.index)
        self.vals[:used] = values
        self.state[7][:] = deal_rng
        self.srng[:] = srng
        self.iteration = int(h["iterations"])
        self.stats[S_NODES] = int(h["nodes"])
        self.cpu_seconds = float(h["cpu_seconds"])
