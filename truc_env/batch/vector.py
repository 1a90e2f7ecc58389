"""The batched engine: B games stepped at once, one decision per game per step (pgx-style).

    venv = VectorEnv("le_truc", num_envs=1024, seed=0)
    obs, mask, seat = venv.reset()
    while training:
        actions = policy(obs, mask)                 # (B,) ints; -1 = let that game wait
        obs, mask, reward, done, seat = venv.step(actions)

What a step returns (:class:`VecStep`), for every game ``b``:

- ``obs[b]``: the observation of the seat to act, float32, **the same vector** as
  ``observe.encoder_of(rules).encode(state, seat)`` (and the PettingZoo env) would give;
- ``mask[b]``: its legal actions (int8, ``A`` = the action layout's size);
- ``reward[b, s]``: what seat ``s`` received during this step: ``reward="points"``, the zero-sum
  points (own side minus the other) when scored (a hand's when it ends; Argentine envido and flor
  when settled); ``"win"``, :func:`truc_env.game.episode.win_rewards` when the episode ends;
- ``done[b]``: the episode ended at this step. The game was then reset at once (auto-reset):
  ``obs``/``mask``/``seat`` already belong to the next episode's first decision;
- ``seat[b]``: the seat to act (whose observation and mask these are).

The arrays are the environment's own buffers, overwritten by the next call: copy what you keep.

Chance (the first dealer when random, the shuffle, a random start score) is resolved inside the
step from a per-game random stream seeded from ``seed``: a game's deal does not depend on B or on
thread scheduling. ``deck`` (B, D) holds each game's shuffled deck of the current hand (deck
indices, top first; only the cards a hand can draw are shuffled, the rest are the undrawn cards in
no order), so the same deals can be replayed through ``engine.py`` (``tests/test_vector.py`` does
exactly that).

Threads: the kernels release the GIL; from ``PARALLEL_MIN_B`` games on (or with ``threads=k``)
slices of the batch are stepped (and ``random_actions`` drawn) on one thread per core, the calling
thread taking the first slice. Below that one thread is faster (and on a loaded machine a thread
barrier can cost a whole time slice).

Backends (the ``backend`` attribute says which one runs):

- ``"numba"``: an array kernel, for the rules that :func:`kernel_supports` accepts. The main
  kernel, :mod:`truc_env.batch._vector_kernels`, plays ``le_truc``, ``le_truc_4p`` (governors,
  instructions, governor-partner signals), ``put``, ``put_4p`` (the card pass), ``truco_paulista``,
  ``truco_mineiro`` and ``truco_argentino`` (envido, falta envido, flor, señas) — 2 players or
  2 vs 2, any options, signals with ``intercept`` 0 or 1. A smaller one of its own,
  :mod:`truc_env.batch._vector_put_n`, plays ``put_n`` (3 to 6 players, the put's resignations), every
  option, so that the main kernel's compile does not grow.
- ``"loop"``: a plain loop over ``engine.State`` objects (:class:`truc_env.game.episode.Episode`,
  dealing with ``Dealer.shuffled``), for everything else (signals with a fractional intercept, a
  chance event per opponent). Same interface, same observations, about 1000x slower.

Requires numba for the kernel; without it every variant uses the loop.
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import NamedTuple

import numpy as np

from truc_env.batch import gc_paused
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State, possible_winners
from truc_env.game.episode import Dealer, Episode, side_rewards
from truc_env.game.observe import (
    CALL_KINDS,
    ENVIDO_CHAIN,
    ENVIDO_KINDS,
    ENVIDO_MAX_POINTS,
    FLOR_MAX_POINTS,
    FLOR_MIN_POINTS,
    encoder_of,
)
from truc_env.game.rules import VARIANTS, Rules, make_rules
from truc_env.io.checks import check_actions, check_seed

EPISODES = ("hand", "game")
REWARDS = ("points", "win")
BACKENDS = ("auto", "numba", "loop")
PARALLEL_MIN_B = 4096  # below this the serial kernel is faster
CHUNK_MIN_B, CHUNKS_PER_THREAD = 1024, 2  # threads take chunks of the batch in turn (load balance)


class VecStep(NamedTuple):
    obs: np.ndarray  # (B, obs_size) float32: the acting seat's observation
    mask: np.ndarray  # (B, A) int8: its legal actions
    reward: np.ndarray  # (B, players) float32: what each seat received during the step
    done: np.ndarray  # (B,) bool: the episode ended (and the game was reset)
    seat: np.ndarray  # (B,) int32: the seat to act


class VecReset(NamedTuple):
    obs: np.ndarray
    mask: np.ndarray
    seat: np.ndarray


def _numba_available() -> bool:
    try:
        with gc_paused():
            import numba  # noqa: F401
    except ImportError:
        return False
    return True


def kernel_supports(rules: Rules) -> str | None:
    """None if the numba kernel covers these Rules, else the reason it does not."""
    if not rules.spec.kernel:
        covered = ", ".join(v.name for v in VARIANTS.values() if v.kernel)
        return f"{rules.variant} has no array kernel yet (kernel variants: {covered})"
    if rules.put_n:  # its own kernel (truc_env.batch._vector_put_n) plays every option it has
        return None
    if rules.players == 4 and not rules.partnership:
        return "4 players without partnership"
    if rules.players not in (2, 4):
        return f"{rules.players} players"
    sig = rules.signals
    if sig.mode != "none" and 0.0 < sig.intercept < 1.0:
        return "signal interception is a chance event (0 < intercept < 1)"
    if rules.instructions and rules.vira:
        return "instructions with a vira (the kernel ranks instructed cards without one)"
    return None


LOOP_GAME_BYTES = 20_000  # the loop backend's engine State, Episode and random Generator per game (measured: ~13 kB)


def batch_bytes(rules: Rules, num_envs: int, backend: str, obs_size: int | None = None) -> int:
    """The memory the per-game arrays of ``num_envs`` games take on a backend (``"numba"`` or ``"loop"``)."""
    n, hs, D = rules.players, rules.hand_size, len(rules.deck)
    enc = encoder_of(rules)
    obs = enc.size if obs_size is None else obs_size
    per = 4 * obs + layout_of(rules).size + 4 * n + 1 + 4  # the env's buffers: obs, mask, reward, done, seat
    if backend == "loop":
        return num_envs * (per + 4 * D + LOOP_GAME_BYTES)
    if rules.put_n:
        from truc_env.batch import _vector_put_n as K

        per += 4 * n + 4 * n * hs + 8 * n  # callq, hands, paid
    else:
        from truc_env.batch import _vector_kernels as K

        per += 8 + 4 * n + 16 * max(enc.signal_slots, 1) + 4 * n * (2 * hs + 1)  # callq, sigq, sigs, hands, old_hands
    # g, both random streams, deck, random_actions' output, the reset's games, played, the trick under way, its
    # winners and leaders
    return num_envs * (per + 4 * K.N_FIELDS + 16 + 4 * D + 8 + 4 * n * hs + 8 * n + 8 * hs)


def available_memory() -> int | None:
    """Bytes this process can still allocate: the system's available memory, within a container's limit
    (cgroup v2); None where neither can be read."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            avail = next((int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")), None)
    except OSError:
        pass
    if avail is None and hasattr(os, "sysconf"):
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            pass
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as f:
                room = int(limit) - int(f.read())
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return avail


def check_batch_memory(rules: Rules, num_envs: int, backend: str, obs_size: int) -> None:
    """Refuse a batch whose arrays do not fit in the memory left, saying how much they would need."""
    need, avail = batch_bytes(rules, num_envs, backend, obs_size), available_memory()
    if avail is not None and need > avail:
        raise TrucError(f"num_envs={num_envs:,} needs about {need / 2**30:,.1f} GiB for the {backend} backend's "
                        f"arrays ({need // num_envs:,} bytes a game), but only {avail / 2**30:,.1f} GiB of memory "
                        f"is available; lower num_envs")


class VectorEnv:
    """B games of one variant, stepped together; see the module docstring."""

    def __init__(self, variant: str | Rules = "le_truc", num_envs: int = 64, *, episode: str = "hand",
                 reward: str = "points", dealer: int | str | None = None, random_start_score: float = 0.0,
                 seed: int | None = None, backend: str = "auto", observe: bool = True,
                 threads: int | None = None, **options):
        for name, value, allowed in (("episode", episode, EPISODES), ("reward", reward, REWARDS),
                                     ("backend", backend, BACKENDS)):
            if value not in allowed:
                raise TrucError(f"{name}={value!r} is invalid; allowed: {', '.join(map(repr, allowed))}")
        self.rules = variant if isinstance(variant, Rules) else make_rules(variant, **options)
        r = self.rules
        if isinstance(num_envs, bool) or not (isinstance(num_envs, int) and num_envs >= 1):
            raise TrucError(f"num_envs must be a positive integer, got {num_envs!r}")
        seed = None if seed is None else check_seed(seed)
        if dealer is None:
            dealer = r.first_dealer
        if dealer != "random" and not (isinstance(dealer, int) and 0 <= dealer < r.players):
            raise TrucError(f"dealer must be a seat in 0..{r.players - 1} or 'random', got {dealer!r}")
        if not 0.0 <= random_start_score <= 1.0 or (random_start_score and episode != "hand"):
            raise TrucError("random_start_score is a probability, and only for episode='hand'")
        self.num_envs, self.episode, self.reward_kind = num_envs, episode, reward
        self.dealer, self.random_start_score = dealer, float(random_start_score)
        if threads is None:  # threads pay only for big batches (a thread barrier costs a time slice when loaded)
            threads = 1 if num_envs < PARALLEL_MIN_B else 0
        self.threads = threads
        """threads stepping slices of the batch: 1 = one, 0 = one per available core."""
        self.encoder = encoder_of(r)
        self.layout = layout_of(r)
        self.n_players = r.players
        self.n_actions = self.layout.size
        self.obs_size = self.encoder.size if observe else 0
        why = kernel_supports(r)
        if backend == "numba" and why:
            raise TrucError(f"backend='numba' cannot run these rules: {why}")
        if backend == "numba" and not _numba_available():
            raise TrucError("backend='numba' needs numba (pip install numba)")
        if backend == "auto":
            backend = "numba" if (why is None and _numba_available()) else "loop"
        self.backend = backend
        """``"numba"`` (the array kernel) or ``"loop"`` (engine.State objects): which one runs."""
        self.fallback_reason = why if backend == "loop" else None
        check_batch_memory(r, num_envs, backend, self.obs_size)
        B = num_envs
        self._obs = np.zeros((B, self.obs_size), np.float32)
        self._mask = np.zeros((B, self.n_actions), np.int8)
        self._rew = np.zeros((B, r.players), np.float32)
        self._done = np.zeros(B, np.bool_)
        self._seat = np.zeros(B, np.int32)
        self._seed = seed
        if backend == "numba":
            self._impl = _PutNImpl(self) if r.put_n else _KernelImpl(self)
        else:
            self._impl = _LoopImpl(self)

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> VecReset:
        """Start a new episode in every game (``seed`` re-seeds the chance streams)."""
        seed = None if seed is None else check_seed(seed)
        if seed is None:
            seed = self._seed
            self._seed = None if seed is None else seed + 1_000_003
        self._impl.reset(seed)
        return VecReset(self._obs, self._mask, self._seat)

    def step(self, actions) -> VecStep:
        """One decision per game: ``actions[b]`` for game b (must be legal), or -1 to let it wait."""
        actions = check_actions(actions, self.n_actions, self.num_envs)  # before the int32 cast: no wrap
        self._check(actions)
        self._impl.step(actions)
        return VecStep(self._obs, self._mask, self._rew, self._done, self._seat)

    def random_actions(self, mask: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every game (from a stream of its own)."""
        return self._impl.random_actions(self._mask if mask is None else mask)

    @property
    def deck(self) -> np.ndarray:
        """(B, D) the shuffled deck of each game's current hand, as deck indices, top first."""
        return self._impl.deck()

    @property
    def dealers(self) -> np.ndarray:
        """(B,) the dealer of each game's current hand."""
        return self._impl.dealers()

    @property
    def hands(self) -> np.ndarray:
        """(B, players, hand_size) each seat's unplayed cards of the current hand, as deck indices, -1
        where a card was played or not dealt yet (hidden information: for training targets, not inputs)."""
        return self._impl.hands_now()

    @property
    def scores(self) -> np.ndarray:
        """(B, sides) each game's score now (at an episode's first decision: its starting score)."""
        return self._impl.scores()

    def kernel_state(self) -> tuple:
        """The numba kernel's arrays in its step's order (``g, p, ladder, strength, decided, manilha, sigtrue,
        rng, callq, sigq, sigs, hands, old_hands, played, tcards, tseats, twin, tlead, deck``): a row per game,
        for code that walks single games on the kernel (:mod:`agents.cfr.hu_mccfr_numba`)."""
        if self.backend != "numba" or self.rules.put_n:
            raise TrucError("kernel_state is the main numba kernel's (backend='numba', not put_n)")
        return self._impl._state()

    def _check(self, actions: np.ndarray) -> None:
        bad = self._impl.first_illegal(actions)
        if bad >= 0:
            legal = np.flatnonzero(self._mask[bad])
            raise TrucError(
                f"game {bad}: seat {self._seat[bad]} cannot take action {actions[bad]}; legal: "
                + ", ".join(f"{x} {self.layout.to_string(int(x))}" for x in legal))


# ---------------------------------------------------------------------------- the numba kernel
def kernel_tables(rules: Rules):
    """The read-only tables of the kernel, all derived from the Rules and engine.py."""
    D = len(rules.deck)
    deck = rules.deck
    rows = [rules.base_strength] + ([rules.strength_with_vira(v) for v in deck] if rules.vira else [])
    strength = np.array([[row[c] for c in deck] for row in rows], np.int32)
    top = len(rules.ranking)
    manilha = (strength > top).astype(np.uint8) if rules.vira else np.zeros((1, D), np.uint8)
    hs = rules.hand_size
    tie = rules.tie_rule
    decided = np.full((hs + 1) * (hs + 1) * 3 * (hs + 1) * 3, -2, np.int8)
    for c0 in range(hs + 1):
        for c1 in range(hs + 1):
            for first in (-1, 0, 1):
                for remaining in range(hs + 1):
                    for tied in (-1, 0, 1):
                        pw = possible_winners((c0, c1), first, remaining, tie, tied)
                        k = (((c0 * (hs + 1) + c1) * 3 + first + 1) * (hs + 1) + remaining) * 3 + tied + 1
                        if len(pw) == 1:
                            decided[k] = next(iter(pw))
    L = layout_of(rules)
    ntok = len(L.signal_tokens)
    sigtrue = np.zeros((len(rows), D, max(ntok, 1)), np.uint8)
    if rules.signals.mode in ("card", "senas"):
        fam = rules.family
        for row in range(len(rows)):
            vira = deck[row - 1] if row > 0 else -1
            for i, c in enumerate(deck):
                names = rules.senas_of(c, vira) if rules.signals.mode == "senas" else (fam.rank_of(c),)
                for t in range(1, ntok):
                    sigtrue[row, i, t] = L.signal_tokens[t] in names
    return strength, manilha, decided, sigtrue


# the observation pieces each kernel writes (every other piece of its layouts stays zero)
MAIN_KERNEL_PIECES = ("to_act", "decision", "hand", "slots", "first_hand", "partner_hand", "played", "trick_winner",
                      "trick_leader", "active", "stake", "raises", "last_raiser", "all_in", "special", "call",
                      "call_caller", "call_level", "vira", "manilhas", "score", "hand_points", "dealer", "signals",
                      "governor", "instruction", "given", "discarded", "envido_calls", "envido_caller", "envido_done",
                      "envido_winner", "envido_points", "flor", "flor_winner", "flor_points")
PUT_N_KERNEL_PIECES = ("to_act", "decision", "hand", "slots", "played", "trick_winner", "trick_leader", "active",
                       "stake", "raises", "last_raiser", "all_in", "call", "call_caller", "score", "hand_points", "dealer")


def written_shapes(venv: VectorEnv) -> dict[str, tuple]:
    """The shape the kernels' observation writers give each piece they write (they stride by these):
    checked against ``observe.Encoder``'s pieces when the params are built, so the two cannot drift."""
    r, enc = venv.rules, venv.encoder
    n, hs, D, ns = r.players, r.hand_size, len(r.deck), r.n_sides
    ladder = len(r.ladder)
    shapes = {"to_act": (n,), "decision": (enc.n_decisions,), "hand": (D,), "slots": (hs,), "first_hand": (D,),
              "partner_hand": (D,), "given": (D,), "discarded": (D,), "played": (hs, n, D),
              "trick_winner": (hs, n + 1), "trick_leader": (hs, n), "active": (n,), "stake": (ladder,),
              "raises": (enc.raise_cap + 1,), "last_raiser": (ns + 1,), "all_in": (2,), "special": (2,),
              "call": (len(CALL_KINDS),), "call_caller": (n,), "call_level": (ladder,), "vira": (D,), "manilhas": (D,),
              "score": (ns,), "hand_points": (ns,), "dealer": (n,), "governor": (n,),
              "signals": (enc.signal_slots, 1 + n + len(venv.layout.signal_tokens) + 1 + hs),
              "instruction": (len(venv.layout.instruct_tokens) + 1,), "envido_calls": (ENVIDO_CHAIN, len(ENVIDO_KINDS)),
              "envido_caller": (n,), "envido_done": (1,), "envido_winner": (n,), "envido_points": (ENVIDO_MAX_POINTS + 1,),
              "flor": (n,), "flor_winner": (n,), "flor_points": (FLOR_MAX_POINTS - FLOR_MIN_POINTS + 1,)}
    return {name: shape for name, shape in shapes.items() if enc.has(name)}


def written_offsets(venv: VectorEnv, names) -> dict[str, int]:
    """The offsets of the pieces a kernel writes (-1: not in this layout), each checked to have the
    shape the kernel's writer strides by."""
    enc, want = venv.encoder, written_shapes(venv)
    for name in names:
        if enc.has(name):
            got = enc.piece(name).shape
            assert got == want[name], f"the kernel writes observation piece {name!r} as {want[name]}, the encoder has {got}"
    return {name: enc.offset_of(name) for name in names}


def kernel_params(venv: VectorEnv) -> np.ndarray:
    """The kernel's int parameters (``p[P_*]``): the options, action ids and observation offsets of this
    env's Rules, its partner table and its win rewards."""
    from truc_env.batch import _vector_kernels as K

    r, L, enc = venv.rules, venv.layout, venv.encoder
    p = np.full(K.N_PARAMS, -1, np.int32)
    sig = r.signals
    p[K.P_N], p[K.P_HS], p[K.P_D], p[K.P_A] = r.players, r.hand_size, len(r.deck), L.size
    p[K.P_OBS] = venv.obs_size
    p[K.P_EPISODE_HAND] = venv.episode == "hand"
    p[K.P_REWARD_WIN] = venv.reward_kind == "win"
    assert r.side_of == tuple(s % 2 for s in range(r.players)), "the kernel's seat s plays for side s % 2"
    won = side_rewards(r, 0)  # the kernel's two sides: seat s is on side s % 2
    assert won[0] == int(won[0]) and won[1] == int(won[1]), "the kernel stores whole win rewards"
    p[K.P_WIN_OWN], p[K.P_WIN_OTHER] = won[0], won[1]
    p[K.P_TARGET] = r.target
    p[K.P_LADDER_TOP] = r.ladder_top
    p[K.P_MAX_RAISES] = -1 if r.max_raises is None else r.max_raises
    p[K.P_COUNTER] = r.counter_raise
    p[K.P_ALL_IN] = r.all_in is not None
    p[K.P_FOLD] = r.fold
    p[K.P_REDEAL] = r.redeal
    p[K.P_VIRA] = r.vira
    p[K.P_ELEVEN] = r.eleven
    p[K.P_ELEVEN_SCORE] = r.eleven_score
    p[K.P_ELEVEN_VALUE] = r.eleven_value
    p[K.P_BLIND] = r.blind
    p[K.P_SIG_MODE] = {"none": 0, "free": 1}.get(sig.mode, 2 if sig.truthful else 3)
    p[K.P_SIG_PUBLIC] = sig.intercept >= 1.0
    p[K.P_SIG_EVERY_TRICK] = sig.timing == "every_trick"
    p[K.P_SIG_SLOTS] = enc.signal_slots
    p[K.P_NTOK] = len(L.signal_tokens)
    p[K.P_ALL_TIED] = {"none": 0, "leader": 1, "dealer": 2}[r.all_tied]
    p[K.P_DEALER] = -1 if venv.dealer == "random" else venv.dealer
    p[K.P_START_SCORE_PROB] = round(venv.random_start_score * 1000)
    p[K.P_LEN_RANKING] = len(r.ranking)
    p[K.P_PARTNER_HAND] = 2 if r.signals.open_hands else int(enc.has("partner_hand"))
    p[K.P_SHUFFLE] = r.hand_size * r.players * (2 if r.redeal else 1) + (1 if r.vira else 0)
    p[K.P_A_PLAY], p[K.P_A_SLOT], p[K.P_A_RAISE] = L.play, L.slot, L.RAISE
    p[K.P_A_ACCEPT], p[K.P_A_REFUSE], p[K.P_A_FOLD] = L.ACCEPT, L.REFUSE, L.FOLD
    p[K.P_A_ALL_IN], p[K.P_A_REDEAL], p[K.P_A_SIGNAL] = L.ALL_IN, L.REDEAL, L.signal
    for name, o in written_offsets(venv, MAIN_KERNEL_PIECES).items():
        p[getattr(K, "P_O_" + name.upper())] = o
    for seat in range(r.players):
        p[K.P_PARTNER + seat] = r.partner(seat)
    p[K.P_RAISE_CAP] = enc.raise_cap
    p[K.P_SIG_WIDTH] = enc.signal_width
    # Le Truc 2 vs 2: governors answer, instruct their partners; only their partners signal
    p[K.P_GOVERNORS] = r.governors and r.players == 4
    p[K.P_INSTRUCTIONS] = r.instructions
    p[K.P_A_INSTRUCT], p[K.P_N_INSTRUCT] = L.instruct, len(L.instruct_tokens)
    p[K.P_SIG_GOV_ONLY] = sig.mode != "none" and sig.governor_partners_only
    p[K.P_PUT_PASS] = r.put_pass
    p[K.P_A_GIVE], p[K.P_A_DISCARD] = L.give, L.discard
    p[K.P_ENVIDO] = r.envido
    if r.envido:
        p[K.P_A_ENVIDO] = L.ENVIDO["envido"]
        assert [L.ENVIDO[k] for k in ENVIDO_KINDS] == [L.ENVIDO["envido"] + i for i in range(3)], "envido ids in a row"
        p[K.P_ENVIDO_CHAIN], p[K.P_ENVIDO_MAX_POINTS] = ENVIDO_CHAIN, ENVIDO_MAX_POINTS
    D = len(r.deck)
    assert D <= K.MAX_DECK, "the kernel's per-card parameters hold at most MAX_DECK cards"
    p[K.P_RANK_OF:K.P_RANK_OF + D] = [L.deck_ranks.index(r.family.rank_of(c)) for c in r.deck]
    p[K.P_BASE_STRENGTH:K.P_BASE_STRENGTH + D] = [r.base_strength[c] for c in r.deck]
    p[K.P_FLOR] = r.flor
    if r.flor:
        p[K.P_A_FLOR] = L.FLOR
        p[K.P_FLOR_MIN] = FLOR_MIN_POINTS
    if r.envido or r.flor:  # the card numbers and suits hand_rules' envido and flor decisions read
        suits = sorted({r.family.suit_of(c) for c in r.deck})
        p[K.P_NUMBER_OF:K.P_NUMBER_OF + D] = [int(r.family.rank_of(c)) for c in r.deck]
        p[K.P_SUIT_OF:K.P_SUIT_OF + D] = [suits.index(r.family.suit_of(c)) for c in r.deck]
    return p


def put_n_tables(rules: Rules):
    """The read-only tables of the put_n kernel: card strengths, who has won with which trick counts
    (``decided``), and the ``"win"`` rewards (row ``w``: seat ``w`` won; the last row: nobody).

    ``decided[(top * (H + 1) + second) * (H + 1) + left]`` (H the hand size) is -2 while the
    remaining ``left`` tricks can still change the winner, -1 when nobody wins, 0 when the seat with
    the ``top`` count does; ``second`` is the highest count of the others. Only those two counts
    matter under put_n's rules (a tie for most: nobody; no trick won: nobody), and this builder checks
    that against ``engine.possible_winners`` on every count vector of 2..players seats still in.
    Built once per Rules (the tables are only read).
    """
    hit = _PUT_N_TABLES.get(rules.key)
    if hit is None:
        hit = _PUT_N_TABLES[rules.key] = _build_put_n_tables(rules)
    return hit


_PUT_N_TABLES: dict = {}


def _build_put_n_tables(rules: Rules):
    hs, n, tie = rules.hand_size, rules.players, rules.tie_rule
    tied = {"none": -1}[rules.all_tied]  # all tricks tied: nobody (put_n has no all_tied option)
    decided = np.full((hs + 1) ** 3, -2, np.int8)
    for top in range(hs + 1):
        for second in range(top + 1):
            for left in range(hs + 1):
                pw = possible_winners((top, second), -1, left, tie, tied)
                if len(pw) == 1:
                    decided[(top * (hs + 1) + second) * (hs + 1) + left] = next(iter(pw))
    for done in range(hs + 1):  # the reduction to the two highest counts, seat by seat
        for k in range(2, n + 1):
            for counts in itertools.combinations_with_replacement(range(done, -1, -1), k):
                if sum(counts) > done:
                    continue
                pw = possible_winners(counts, -1, hs - done, tie, tied)
                want = next(iter(pw)) if len(pw) == 1 else -2
                got = decided[(counts[0] * (hs + 1) + counts[1]) * (hs + 1) + hs - done]
                assert want == got, f"put_n winners table: counts {counts}, {hs - done} tricks left: {got} vs {want}"
    strength = np.array([rules.base_strength[c] for c in rules.deck], np.int32)
    wins = np.array([side_rewards(rules, w) for w in [*range(n), -1]], np.float64)
    return strength, decided, wins


def put_n_params(venv: VectorEnv) -> np.ndarray:
    """The put_n kernel's int parameters (``p[P_*]``): options, action ids and observation offsets."""
    from truc_env.batch import _vector_put_n as K

    r, L, enc = venv.rules, venv.layout, venv.encoder
    assert r.side_of == tuple(range(r.players)) and r.n_sides == r.players, "put_n: every seat is its own side"
    assert r.players <= K.MAX_PLAYERS and len(r.ladder) == 1 and not (r.fold or r.redeal or r.vira or r.eleven)
    p = np.full(K.N_PARAMS, -1, np.int32)
    p[K.P_N], p[K.P_HS], p[K.P_D] = r.players, r.hand_size, len(r.deck)
    p[K.P_EPISODE_HAND] = venv.episode == "hand"
    p[K.P_REWARD_WIN] = venv.reward_kind == "win"
    p[K.P_TARGET] = r.target
    p[K.P_MAX_RAISES] = -1 if r.max_raises is None else r.max_raises
    p[K.P_DEALER] = -1 if venv.dealer == "random" else venv.dealer
    p[K.P_START_SCORE_PROB] = round(venv.random_start_score * 1000)
    p[K.P_STAKE] = r.ladder[0]
    p[K.P_A_PLAY], p[K.P_A_ACCEPT], p[K.P_A_REFUSE], p[K.P_A_PUT] = L.play, L.ACCEPT, L.REFUSE, L.ALL_IN
    p[K.P_DEC_TURN], p[K.P_DEC_ANSWER] = enc.decisions.index("turn"), enc.decisions.index("answer")
    p[K.P_CALL_PUT] = CALL_KINDS.index("all_in")
    p[K.P_RAISE_CAP] = enc.raise_cap
    p[K.P_SHUFFLE_CARDS] = r.hand_size * r.players
    for name, o in written_offsets(venv, PUT_N_KERNEL_PIECES).items():
        assert o >= 0, f"put_n's kernel writes {name!r}, which its layout lacks"
        p[getattr(K, "P_O_" + name.upper())] = o
    return p


class _ArrayImpl:
    """What the two numba kernels share: per-game random streams, slices of the batch on threads,
    the one entry point of step and reset (``K.step_serial(reset, actions, *state, obs, mask, rew, done, seat)``).
    A subclass makes ``state`` (its ``_state()``)."""

    SHARED = ()  # indices into the step's arguments after the actions that every chunk shares (params, tables)

    def _start(self, K, venv: VectorEnv) -> None:
        self.K, self.v = K, venv
        r = venv.rules
        B, n, hs = venv.num_envs, r.players, r.hand_size
        self.g = np.zeros((B, K.N_FIELDS), np.int32)  # the scalar fields of each game (the kernel's F_*)
        self.rng = np.zeros(B, np.uint64)
        self.act_rng = np.zeros(B, np.uint64)
        self._deck = np.zeros((B, len(r.deck)), np.int32)
        self._rand_out = np.zeros(B, np.int32)
        # the tricks, laid out alike in both kernels: cards played per seat and trick, the trick under way
        # (cards and seats in order of play), each finished trick's winner (-2: not yet) and leader
        self.played = np.full((B, n, hs), -1, np.int32)
        self.tcards = np.full((B, n), -1, np.int32)
        self.tseats = np.full((B, n), -1, np.int32)
        self.twin = np.full((B, hs), -2, np.int32)
        self.tlead = np.full((B, hs), -1, np.int32)
        self._compiled = False  # _ready() has run
        self._which = np.ones(B, np.int32)  # the games a reset starts anew (all)

    def _threads(self) -> None:
        venv, B = self.v, self.v.num_envs
        threads = venv.threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        self.threads = threads
        self.pool = None
        self.slices = [(0, B)]
        if threads > 1:  # the kernels release the GIL: chunks of the batch run on threads
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(threads - 1)
            chunks = max(threads, min(B // CHUNK_MIN_B, CHUNKS_PER_THREAD * threads))
            edges = np.linspace(0, B, chunks + 1).astype(int)
            self.slices = list(zip(edges[:-1], edges[1:]))
        # the step's arguments after the actions: fixed buffers, so the per-chunk slices are made once
        self._args = (*self._state(), venv._obs, venv._mask, venv._rew, venv._done, venv._seat)
        shared = set(self.SHARED)
        self._parts = [tuple(x if i in shared else x[lo:hi] for i, x in enumerate(self._args))
                       for lo, hi in (self.slices if self.pool else ())]

    def _state(self) -> tuple:
        raise NotImplementedError

    def _ready(self) -> None:
        """The kernels' machine code, before their first call: loaded from the cache, or compiled (announced)."""
        if self._compiled:
            return
        from truc_env.batch._kernel_cache import ready

        K, v, B = self.K, self.v, self.v.num_envs
        ready([(K.seed_streams, (self.rng, 1)),
               (K.step_serial, (False, self._which, *self._args)),
               (K.random_legal, (v._mask, self.act_rng, self._rand_out, np.zeros(v.n_actions, np.int32))),
               (K.first_illegal, (np.zeros(B, np.int32), v._mask))], what=v.rules.variant)
        self._compiled = True

    def reset(self, seed):
        self._ready()
        v = self.v
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        self.K.seed_streams(self.rng, int(seed) & 0x7FFFFFFFFFFFFFFF)
        self.K.seed_streams(self.act_rng, (int(seed) + 0x5DEECE66D) & 0x7FFFFFFFFFFFFFFF)
        self.K.step_serial(True, self._which, *self._args)
        v._rew[:] = 0.0
        v._done[:] = False

    def _on_threads(self, kernel, parts):
        """``kernel(*part)`` for every part, taken in turn by the calling thread and the pool's.

        Chunks are handed out one at a time, and the call waits for the chunks, not for the threads: a
        pool thread that a loaded machine does not schedule in time finds nothing left to do, instead
        of holding the step back by a whole time slice.
        """
        todo, n = itertools.count(), len(parts)
        left, errors, lock, finished = [n], [], threading.Lock(), threading.Event()

        def work():
            while (i := next(todo)) < n:  # next() on a count is atomic under the GIL
                try:
                    kernel(*parts[i])
                except BaseException as exc:  # re-raised by the calling thread
                    errors.append(exc)
                with lock:
                    left[0] -= 1
                    if left[0] == 0:
                        finished.set()

        for _ in range(self.threads - 1):
            self.pool.submit(work)
        work()
        finished.wait()
        if errors:
            raise errors[0]

    def step(self, actions):
        self._ready()
        if self.pool is None:
            self.K.step_serial(False, actions, *self._args)
        else:
            self._on_threads(self.K.step_serial, [(False, actions[lo:hi], *part)
                                                  for (lo, hi), part in zip(self.slices, self._parts)])

    def first_illegal(self, actions):
        self._ready()
        return self.K.first_illegal(actions, self.v._mask)

    def random_actions(self, mask):
        self._ready()
        out, rng = self._rand_out, self.act_rng
        legal = np.empty((len(self.slices), mask.shape[1]), np.int32)  # scratch: one row per chunk
        if self.pool is None or mask.shape[0] != len(out):
            self.K.random_legal(mask, rng, out, legal[0])
        else:  # per-game streams: the same actions whatever the threads
            self._on_threads(self.K.random_legal, [(mask[lo:hi], rng[lo:hi], out[lo:hi], legal[i])
                                                   for i, (lo, hi) in enumerate(self.slices)])
        return out

    def deck(self):
        return self._deck

    def dealers(self):
        return self.g[:, self.K.F_DEALER].copy()

    def hands_now(self):
        return self.hands[:, :, :self.v.rules.hand_size].copy()

    def scores(self):
        return self.g[:, self.K.F_SCORE:self.K.F_SCORE + self.v.rules.n_sides].copy()


class _KernelImpl(_ArrayImpl):
    """The main kernel, :mod:`truc_env.batch._vector_kernels`: every variant with a kernel but put_n."""

    SHARED = (1, 2, 3, 4, 5, 6)  # p, ladder, strength, decided, manilha, sigtrue

    def __init__(self, venv: VectorEnv):
        from truc_env.batch import _vector_kernels as K

        self._start(K, venv)
        r = venv.rules
        B, n, hs = venv.num_envs, r.players, r.hand_size
        self.p = kernel_params(venv)
        self.ladder = np.array(r.ladder, np.int32)
        self.strength, self.manilha, self.decided, self.sigtrue = kernel_tables(r)
        self.callq = np.zeros((B, 2), np.int32)
        self.sigq = np.zeros((B, n), np.int32)
        self.sigs = np.zeros((B, max(venv.encoder.signal_slots, 1), 4), np.int32)
        self.hands = np.full((B, n, hs + 1), -1, np.int32)  # the last slot: a card passed to the seat (put_4p)
        self.old_hands = np.full((B, n, hs), -1, np.int32)
        self._threads()

    def _state(self):
        return (self.g, self.p, self.ladder, self.strength, self.decided, self.manilha, self.sigtrue, self.rng,
                self.callq, self.sigq, self.sigs, self.hands, self.old_hands, self.played, self.tcards,
                self.tseats, self.twin, self.tlead, self._deck)


class _PutNImpl(_ArrayImpl):
    """The put_n kernel, :mod:`truc_env.batch._vector_put_n`."""

    SHARED = (1, 2, 3, 4)  # p, strength, decided, wins

    def __init__(self, venv: VectorEnv):
        from truc_env.batch import _vector_put_n as K

        self._start(K, venv)
        r = venv.rules
        B, n, hs = venv.num_envs, r.players, r.hand_size
        self.p = put_n_params(venv)
        self.strength, self.decided, self.wins = put_n_tables(r)
        self.callq = np.zeros((B, n), np.int32)
        self.hands = np.full((B, n, hs), -1, np.int32)
        self.paid = np.zeros((B, n), np.float64)
        self._threads()

    def _state(self):
        return (self.g, self.p, self.strength, self.decided, self.wins, self.rng, self.callq, self.hands,
                self.played, self.tcards, self.tseats, self.twin, self.tlead, self._deck, self.paid)


# ---------------------------------------------------------------------------- the loop fallback
class _LoopImpl:
    """engine.State objects in a Python loop: every variant, same interface, slow."""

    def __init__(self, venv: VectorEnv):
        self.v = venv
        self.states: list[State] = []
        self.rngs: list[np.random.Generator] = []
        self.act_rng = np.random.default_rng()
        self.decks = np.zeros((venv.num_envs, len(venv.rules.deck)), np.int32)
        self.episodes: list[Episode] = []

    def reset(self, seed):
        v = self.v
        ss = np.random.SeedSequence(seed)
        children = ss.spawn(v.num_envs + 1)
        self.rngs = [np.random.default_rng(c) for c in children[:-1]]
        self.act_rng = np.random.default_rng(children[-1])
        self.states = [None] * v.num_envs
        self.episodes = [None] * v.num_envs
        for b in range(v.num_envs):
            self._new_episode(b)
            self._observe(b)
        v._rew[:] = 0.0
        v._done[:] = False

    def _new_episode(self, b):
        v, r, rng = self.v, self.v.rules, self.rngs[b]
        dealer = int(rng.integers(r.players)) if v.dealer == "random" else v.dealer
        score = None
        if v.random_start_score and rng.random() < v.random_start_score:
            score = [int(x) for x in rng.integers(0, r.target, size=r.n_sides)]
        st = State(r, episode=v.episode, dealer=dealer, score=score)
        self.states[b] = st
        # one deck order per hand, dealt down, as the kernel deals
        self.episodes[b] = Episode(st, Dealer.shuffled(r, rng), v.reward_kind)
        self._chance(b)

    def _chance(self, b):
        ep = self.episodes[b]
        ep.to_decision()
        if ep.dealer.perm is not None:
            self.decks[b] = ep.dealer.perm

    def _observe(self, b):
        v, st = self.v, self.states[b]
        seat = st.current_player()
        v._seat[b] = seat
        if v.obs_size:
            v._obs[b] = v.encoder.encode(st, seat)
        v._mask[b] = 0
        v._mask[b, st.legal_actions()] = 1

    def step(self, actions):
        v = self.v
        v._rew[:] = 0.0
        v._done[:] = False
        for b in np.flatnonzero(actions >= 0):
            st = self.states[b]
            self.episodes[b].play(int(actions[b]))
            self._chance(b)
            v._rew[b] = self.episodes[b].rewards()
            if st.is_terminal():
                v._done[b] = True
                self._new_episode(b)
            self._observe(b)

    def hands_now(self):
        r = self.v.rules
        out = np.full((self.v.num_envs, r.players, r.hand_size), -1, np.int32)
        index = {c: i for i, c in enumerate(r.deck)}
        for b, st in enumerate(self.states):
            for s in range(r.players):
                for k, c in enumerate(st.hands[s][:r.hand_size]):
                    if c >= 0:
                        out[b, s, k] = index[c]
        return out

    def first_illegal(self, actions):
        mask = self.v._mask
        live = np.flatnonzero(actions >= 0)
        a = actions[live]
        bad = (a >= mask.shape[1]) | (mask[live, np.minimum(a, mask.shape[1] - 1)] == 0)
        return int(live[bad][0]) if bad.any() else -1

    def random_actions(self, mask):
        out = np.full(mask.shape[0], -1, np.int32)
        for b in range(mask.shape[0]):
            legal = np.flatnonzero(mask[b])
            if len(legal):
                out[b] = legal[self.act_rng.integers(len(legal))]
        return out

    def deck(self):
        return self.decks

    def dealers(self):
        return np.array([st.dealer for st in self.states], np.int32)

    def scores(self):
        return np.array([st.score for st in self.states], np.int32)
