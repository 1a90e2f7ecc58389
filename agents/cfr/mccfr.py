"""Sampling MCCFR for the partnership games: external sampling (ES) and outcome sampling (OS).

One table is shared by all four seats: information sets are keyed relative to the acting seat
(role after the dealer, own hand as strength classes, ...; :mod:`agents.cfr.partnership_abstraction`),
so partners and opponents read and write the same entries. The game is played by the engine
(``truc_env.game.engine``, ``episode="hand"``, one hand from 0-0); utilities are its zero-sum hand points.

- **External sampling** (Lanctot et al. 2009): an iteration is one traversal per seat; the traverser
  enumerates its abstract actions, chance (the deal, interceptions) and the three other seats are
  sampled, the others' current strategies are added to the average strategy where they act.
- **Outcome sampling**: one sampled trajectory per seat and iteration, the traverser exploring with
  probability ``epsilon``; importance-weighted regrets, the average strategy updated at the
  traverser's own nodes (as OpenSpiel's ``OutcomeSamplingSolver``).

Both weight iteration ``t`` by ``t`` (linear MCCFR) unless ``weighting: uniform``. Regrets and sums
live in ``array('d')`` rows per information set (a dict in insertion order), so a checkpoint written
and resumed gives bit-identical tables: it stores the rows, the key order and the generator state.

Strategy files (``truc-mccfr-strategy``) hold the keys and the normalised average strategy
(float32), with a JSON header: format, Rules key and options, package version, abstraction,
iterations. They are written atomically and refuse other Rules clearly; :func:`load_agent` makes the
``table:PATH`` agent of one.
"""

from __future__ import annotations

import json
import os
import time
import zipfile
from array import array

import numpy as np

import truc_env
from agents.base import sample_policy
from agents.cfr.agent import legal_for
from agents.cfr.partnership_abstraction import NAME, PartnershipAbstraction, state_key, view_key
from truc_env.errors import TrucError
from truc_env.game.engine import CHANCE, TERMINAL, State, sample_chance
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_open

FORMAT = "truc-mccfr-strategy"
CHECKPOINT_FORMAT = "truc-mccfr-checkpoint"
FORMAT_VERSION = 1
ALGORITHMS = ("es_mccfr", "os_mccfr")


class MCCFR:
    """Regret and average-strategy tables of partnership MCCFR, and one iteration of ES or OS."""

    def __init__(self, rules, algorithm: str = "es_mccfr", seed: int = 0, weighting: str = "linear",
                 epsilon: float = 0.6, dealer: int = 0):
        if algorithm not in ALGORITHMS:
            raise TrucError(f"MCCFR algorithm {algorithm!r} is unknown; allowed: {', '.join(ALGORITHMS)}")
        if weighting not in ("linear", "uniform"):
            raise TrucError(f"MCCFR weighting {weighting!r} is unknown; allowed: linear, uniform")
        self.rules = rules
        self.ab = PartnershipAbstraction(rules)
        self.A = self.ab.n_actions
        self.algorithm = algorithm
        self.weighting = weighting
        self.epsilon = float(epsilon)
        self.dealer = dealer
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.table: dict[str, tuple[array, array]] = {}
        self.iteration = 0
        self.nodes = 0
        self.cpu_seconds = 0.0
        self._zero = array("d", bytes(8 * self.A))

    # ------------------------------------------------------------------ tables
    def _entry(self, key: str):
        e = self.table.get(key)
        if e is None:
            e = self.table[key] = (array("d", self._zero), array("d", self._zero))
        return e

    @staticmethod
    def _match(reg, ids) -> list[float]:
        pos = [reg[a] if reg[a] > 0.0 else 0.0 for a in ids]
        total = sum(pos)
        if total > 0.0:
            return [p / total for p in pos]
        return [1.0 / len(ids)] * len(ids)

    def _decision(self, state):
        """Skip chance nodes and forced moves; return (state, seat, key, abstract actions) or terminal."""
        ab = self.ab
        while True:
            cp = state.current_player()
            if cp == TERMINAL:
                return cp, None, None
            if cp == CHANCE:
                state.apply_action(sample_chance(state, self.rng))
                continue
            self.nodes += 1
            hand = state.hands[cp]
            own = [c for c in hand if c >= 0]
            acts = ab.abstract_actions(state.legal_actions(), own, state.strength, state.trick)
            if len(acts) == 1:
                state.apply_action(acts[0][1])
                continue
            return cp, state_key(ab, state, cp), acts

    # ------------------------------------------------------------------ external sampling
    def _es(self, state, p: int, w: float) -> float:
        cp, key, acts = self._decision(state)
        if cp == TERMINAL:
            return state.returns()[p]
        reg, avg = self._entry(key)
        ids = [a for a, _ in acts]
        sigma = self._match(reg, ids)
        if cp == p:
            values = []
            last = len(acts) - 1
            for i, (_, e) in enumerate(acts):
                child = state if i == last else state.clone()
                child.apply_action(e)
                values.append(self._es(child, p, w))
            v = sum(s * x for s, x in zip(sigma, values))
            for a, x in zip(ids, values):
                reg[a] += w * (x - v)
            return v
        for a, s in zip(ids, sigma):
            avg[a] += w * s
        i = sample_index(self.rng, sigma)
        state.apply_action(acts[i][1])
        return self._es(state, p, w)

    # ------------------------------------------------------------------ outcome sampling
    def _os(self, state, p: int, my_reach: float, opp_reach: float, sample_reach: float, w: float) -> float:
        cp, key, acts = self._decision(state)
        if cp == TERMINAL:
            return state.returns()[p]
        reg, avg = self._entry(key)
        ids = [a for a, _ in acts]
        sigma = self._match(reg, ids)
        n = len(ids)
        if cp == p:
            eps = self.epsilon
            sample = [eps / n + (1.0 - eps) * s for s in sigma]
        else:
            sample = sigma
        i = sample_index(self.rng, sample)
        state.apply_action(acts[i][1])
        if cp == p:
            child = self._os(state, p, my_reach * sigma[i], opp_reach, sample_reach * sample[i], w)
        else:
            child = self._os(state, p, my_reach, opp_reach * sigma[i], sample_reach * sample[i], w)
        value_i = child / sample[i]
        v = sigma[i] * value_i
        if cp == p:
            scale = opp_reach / sample_reach
            for j, a in enumerate(ids):
                reg[a] += w * ((value_i if j == i else 0.0) - v) * scale
            inc = my_reach / sample_reach
            for a, s in zip(ids, sigma):
                avg[a] += w * inc * s
        return v

    # ------------------------------------------------------------------ driving
    def iterate(self, n: int = 1) -> None:
        """Run ``n`` iterations (each: one traversal per seat, each on its own sampled deal)."""
        t0 = time.process_time()
        for _ in range(n):
            self.iteration += 1
            w = float(self.iteration) if self.weighting == "linear" else 1.0
            for p in range(self.rules.players):
                state = State(self.rules, episode="hand", dealer=self.dealer)
                if self.algorithm == "es_mccfr":
                    self._es(state, p, w)
                else:
                    self._os(state, p, 1.0, 1.0, 1.0, w)
        self.cpu_seconds += time.process_time() - t0

    def average_strategy(self) -> tuple[list[str], np.ndarray]:
        """Keys with a non-empty average strategy, and their normalised rows (float32)."""
        keys, rows = [], []
        for key, (_, avg) in self.table.items():
            s = np.frombuffer(avg, dtype=np.float64)
            total = s.sum()
            if total > 0:
                keys.append(key)
                rows.append(s / total)
        arr = np.array(rows, dtype=np.float32) if rows else np.zeros((0, self.A), np.float32)
        return keys, arr

    # ------------------------------------------------------------------ checkpoints
    def header(self) -> dict:
        r = self.rules
        return {"variant": r.variant, "options": dict(r.options), "rules_key": r.key, "abstraction": NAME,
                "algorithm": self.algorithm, "weighting": self.weighting, "epsilon": self.epsilon,
                "dealer": self.dealer, "score": [0, 0], "seed": self.seed, "iterations": self.iteration,
                "nodes": self.nodes, "cpu_seconds": self.cpu_seconds, "infosets": len(self.table),
                "actions": list(self.ab.action_names)}

    def state_dict(self) -> dict:
        n = len(self.table)
        reg = np.empty((n, self.A), np.float64)
        avg = np.empty((n, self.A), np.float64)
        for i, (r, s) in enumerate(self.table.values()):
            reg[i] = np.frombuffer(r, dtype=np.float64)
            avg[i] = np.frombuffer(s, dtype=np.float64)
        header = self.header()
        header["rng"] = self.rng.bit_generator.state
        return {"header": json_bytes({**header, "format": CHECKPOINT_FORMAT, "format_version": FORMAT_VERSION,
                                       "truc_env_version": truc_env.__version__}),
                "keys": keys_bytes(list(self.table)), "regret": reg, "avg": avg}

    def save_checkpoint(self, path: str) -> None:
        atomic_savez(path, compressed=False, **self.state_dict())

    @classmethod
    def from_checkpoint(cls, path: str) -> MCCFR:
        """A solver restored from a checkpoint file (its Rules and settings from the header)."""
        h = read_header(read_npz(path, "MCCFR checkpoint"), path, CHECKPOINT_FORMAT)
        solver = cls(make_rules(h["variant"], **h["options"]), h["algorithm"], seed=h["seed"],
                     weighting=h["weighting"], epsilon=h["epsilon"], dealer=h["dealer"])
        solver.load_checkpoint(path)
        return solver

    def load_checkpoint(self, path: str) -> None:
        """Restore tables, counters and generator state from a checkpoint of the same Rules and settings."""
        data, h = read_checkpoint(path, CHECKPOINT_FORMAT, self.rules, {
            "algorithm": self.algorithm, "weighting": self.weighting, "dealer": self.dealer, "abstraction": NAME})
        keys = keys_of(data["keys"])
        reg, avg = data["regret"], data["avg"]
        if reg.shape != (len(keys), self.A) or avg.shape != reg.shape:
            raise TrucError(f"{path}: corrupt checkpoint (table shapes {reg.shape}, {avg.shape} for {len(keys)} keys)")
        self.table = {k: (array("d", reg[i].tobytes()), array("d", avg[i].tobytes())) for i, k in enumerate(keys)}
        self.iteration = int(h["iterations"])
        self.nodes = int(h["nodes"])
        self.cpu_seconds = float(h["cpu_seconds"])
        self.rng.bit_generator.state = h["rng"]

    def save_strategy(self, path: str, extra: dict | None = None) -> None:
        """Write the average strategy; ``extra`` header fields (``threshold``, ``exclude``) tell the agent how to play it."""
        keys, policy = self.average_strategy()
        for name in (extra or {}).get("exclude", []):
            if name not in self.ab.action_names:
                raise TrucError(f"exclude: unknown abstract action {name!r}; actions: {', '.join(self.ab.action_names)}")
        header = {**self.header(), **(extra or {}), "format": FORMAT, "format_version": FORMAT_VERSION,
                  "truc_env_version": truc_env.__version__, "strategy_infosets": len(keys)}
        atomic_savez(path, compressed=True, header=json_bytes(header), keys=keys_bytes(keys), policy=policy)


# ---------------------------------------------------------------------- files
def json_bytes(obj) -> np.ndarray:
    return np.frombuffer(json.dumps(obj).encode(), dtype=np.uint8)


def keys_bytes(keys: list[str]) -> np.ndarray:
    return np.frombuffer("\n".join(keys).encode(), dtype=np.uint8)


def keys_of(arr) -> list[str]:
    text = bytes(arr).decode()
    return text.split("\n") if text else []


def atomic_savez(path: str, compressed: bool, **arrays) -> None:
    with atomic_open(path, "wb") as f:
        (np.savez_compressed if compressed else np.savez)(f, **arrays)


def read_npz(path: str, what: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise TrucError(f"no {what} {path!r}") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise TrucError(f"{path}: not a readable {what} ({e})") from None


def read_header(data: dict, path: str, fmt: str) -> dict:
    try:
        h = json.loads(bytes(data["header"]).decode())
    except (KeyError, ValueError, UnicodeDecodeError) as e:
        raise TrucError(f"{path}: not a {fmt} file or corrupt ({e})") from None
    if h.get("format") != fmt:
        raise TrucError(f"{path}: not a {fmt} file (format {h.get('format')!r})")
    if h.get("format_version") != FORMAT_VERSION:
        raise TrucError(f"{path}: {fmt} version {h.get('format_version')} is not supported "
                        f"(this code reads version {FORMAT_VERSION})")
    return h


def read_checkpoint(path: str, fmt: str, rules, settings: dict) -> tuple[dict, dict]:
    """A checkpoint's arrays and header, refused clearly if it is not a ``fmt`` file, was trained for other Rules, or
    differs from this run in one of ``settings`` (header name -> this run's value)."""
    data = read_npz(path, "MCCFR checkpoint")
    h = read_header(data, path, fmt)
    if h["rules_key"] != rules.key:
        raise TrucError(f"{path}: this checkpoint was trained for {h['rules_key']}, not {rules.key}")
    for name, mine in settings.items():
        if h.get(name) != mine:
            raise TrucError(f"{path}: checkpoint {name} is {h.get(name)!r}, this run's is {mine!r}")
    return data, h


def sample_index(rng, probs) -> int:
    """An index drawn from ``probs`` with one uniform draw of ``rng`` (the last one if rounding leaves a gap)."""
    x = rng.random()
    acc = 0.0
    for i, p in enumerate(probs):
        acc += p
        if x < acc:
            return i
    return len(probs) - 1


def is_mccfr_strategy(path: str) -> bool:
    """Is this file an MCCFR strategy file (as opposed to an exact solver's)?"""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "header" not in z.files:
                return False
            return json.loads(bytes(z["header"]).decode()).get("format") == FORMAT
    except Exception:
        return False


class MCCFRStrategy:
    """The average strategy of a partnership MCCFR run: key -> distribution over abstract actions."""

    def __init__(self, header: dict, keys: list[str], policy: np.ndarray):
        self.header = header
        self.rules = make_rules(header["variant"], **header["options"])
        self.ab = PartnershipAbstraction(self.rules)
        if header.get("abstraction") != NAME or policy.shape != (len(keys), self.ab.n_actions):
            raise TrucError(f"strategy abstraction {header.get('abstraction')!r} with {policy.shape} does not match "
                            f"this code's {NAME!r} with {self.ab.n_actions} actions")
        self.index = {k: i for i, k in enumerate(keys)}
        self.policy = policy


_LOADED: dict = {}


def load_strategy(path: str, rules=None) -> MCCFRStrategy:
    """Read an MCCFR strategy file; refuse a corrupt file or one made for other Rules.

    A file already read (same path, size and modification time) is shared, not read again: the arena
    builds a fresh agent per game when one spec holds two seats.
    """
    try:
        st = os.stat(path)
        stamp = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        stamp = None
    hit = _LOADED.get(stamp) if stamp else None
    if hit is not None:
        if rules is not None and rules.key != hit.header["rules_key"]:
            raise TrucError(f"{path}: this strategy was trained for {hit.header['rules_key']} and cannot play {rules.key}")
        return hit
    strategy = _load_strategy(path, rules)
    if stamp:
        _LOADED.clear()  # keep one: strategy tables are big
        _LOADED[stamp] = strategy
    return strategy


def _load_strategy(path: str, rules=None) -> MCCFRStrategy:
    data = read_npz(path, "MCCFR strategy file")
    h = read_header(data, path, FORMAT)
    if rules is not None and rules.key != h["rules_key"]:
        raise TrucError(f"{path}: this strategy was trained for {h['rules_key']} and cannot play {rules.key}")
    try:
        keys, policy = keys_of(data["keys"]), np.asarray(data["policy"], dtype=np.float32)
    except KeyError as e:
        raise TrucError(f"{path}: corrupt MCCFR strategy file (missing {e})") from None
    return MCCFRStrategy(h, keys, policy)


class MCCFRAgent:
    """The ``table:PATH`` agent of an MCCFR strategy: samples from the average strategy at its key.

    Reads ``observation["view"]``. A key the strategy never saw is played uniformly over the legal
    abstract actions and counted in ``misses``. With ``threshold`` t > 0 (from the file's header)
    actions whose probability is below t times the most likely action's are dropped and the rest
    renormalised (t = 1: purification, the most likely action only); abstract actions named in the
    header's ``exclude`` (e.g. ``allin``: never call mon reste) are not taken while another has mass.
    """

    def __init__(self, strategy: MCCFRStrategy, seed: int | None = None):
        self.strategy = strategy
        self.rules = strategy.rules
        self.ab = strategy.ab
        self.rng = np.random.default_rng(seed)
        self.misses = 0
        self.decisions = 0
        self.threshold = float(strategy.header.get("threshold", 0.0))
        names = self.ab.action_names
        self.exclude = {names.index(x) for x in strategy.header.get("exclude", []) if x in names}

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def policy(self, observation, action_mask=None) -> dict[int, float]:
        legal = legal_for(self.rules, observation, action_mask)
        view = observation["view"]
        acts = self.ab.abstract_actions(legal, list(view["own"]), view["strength"], list(view["trick"]))
        if len(acts) == 1:
            twins = self._twins(acts[0][1], legal, view["strength"])
            return {t: 1.0 / len(twins) for t in twins}
        self.decisions += 1
        row = self.strategy.index.get(view_key(self.ab, view))
        probs = None
        if row is not None:
            pol = self.strategy.policy[row]
            probs = np.array([float(pol[a]) for a, _ in acts])
            if probs.sum() <= 0:
                probs = None
        if probs is None:
            self.misses += 1
            probs = np.full(len(acts), 1.0)
        if self.exclude:  # actions the player never takes while another is legal
            keep = np.array([a not in self.exclude for a, _ in acts])
            if keep.any():
                probs = probs * keep if (probs * keep).sum() > 0 else keep.astype(float)
        if self.threshold > 0:  # thresholding: drop the rare actions of an unconverged average
            probs = np.where(probs >= self.threshold * probs.max(), probs, 0.0)
        probs = probs / probs.sum()
        out: dict[int, float] = {}
        for (_, e), p in zip(acts, probs):
            if p > 0:
                twins = self._twins(e, legal, view["strength"])
                for t in twins:  # cards of equal strength evenly: the one played must not tell which one is kept
                    out[t] = out.get(t, 0.0) + float(p) / len(twins)
        return out

    def _twins(self, action: int, legal, strength) -> list[int]:
        """The legal card plays of the same strength as ``action``'s card (``[action]`` for any other action).
        Equal cards win and lose the same tricks; always playing the lowest id of them (as before 2026-12-06)
        told an opponent which of them the seat still held (docs/approx_exploitability.md, the table leak)."""
        L = self.ab.L
        lo, hi = L.play, L.play + len(L.deck)
        if not lo <= action < hi:
            return [action]
        s = strength[L.deck[action - lo]]
        return [a for a in legal if lo <= a < hi and strength[L.deck[a - lo]] == s]

    def act(self, observation, action_mask=None) -> int:
        return sample_policy(self.policy(observation, action_mask), self.rng)


def load_agent(path: str, rules=None, seed: int | None = None) -> MCCFRAgent:
    return MCCFRAgent(load_strategy(path, rules), seed)
