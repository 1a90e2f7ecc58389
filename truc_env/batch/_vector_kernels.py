"""Numba kernels of the batched engine (:mod:`truc_env.batch.vector`): one decision for each of B games.

A re-implementation of :mod:`truc_env.game.engine` over arrays, for the variants that
:func:`truc_env.batch.vector.kernel_supports` accepts (trick-taking with a stake ladder, mon reste / put,
fold, redeal, counter-raises, vira and manilhas, mão de onze / de ferro, signals with intercept 0 or
1, Le Truc governors and instructions, the put_4p card pass, Argentine envido and flor). It takes its
rules from two places it shares with the engine: the tables that
:func:`truc_env.batch.vector.kernel_tables` / ``kernel_params`` compute from ``rules.py`` / ``engine.py``
(card strengths, who wins with which trick counts, truthful signal tokens, envido pips, the ladder,
partners, win rewards), and the scalar decisions of :mod:`truc_env.game.hand_rules` (hand value, raise /
all-in / counter / redeal legality, mão de onze / de ferro, trick leader, signal audience, next seat,
game over), compiled here from the very functions the engine calls. What it restates is bound to its
array layout (queues, the trick in arrays, the index into the winners table); docs/architecture.md
lists every decision with its source, and ``tests/test_vector.py`` and
``tests/test_vector_partnership.py`` check the whole thing step by step against ``engine.py``.
``put_n`` (3 to 6 players, resignations) has a smaller kernel of its own, :mod:`truc_env.batch._vector_put_n`,
which takes this module's random streams, shuffle and batch helpers (``rand``, ``shuffle_deck``,
``seed_streams``, ``random_legal``, ``first_illegal``).

Layout of the per-game state: ``g[b, F_*]`` holds the scalar fields (int32); the other arrays hold
cards as deck indices (``0..D-1``, -1 = none). Parameters of the Rules are ``p[P_*]``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit
from numba.core import types
from numba.core.cpu import CPUTargetOptions
from numba.core.registry import CPUDispatcher

from truc_env.batch import _kernel_cache  # noqa: F401 (the cache's place, before any njit)
from truc_env.game import hand_rules
from truc_env.game.hand_rules import ELEVEN, ENVIDO, IRON, NO_SUIT

# ---------------------------------------------------------------------------- parameters (p[P_*])
P_N = 0  # players
P_HS = 1  # hand size
P_D = 2  # deck size
P_A = 3  # action space size
P_OBS = 4  # observation size
P_EPISODE_HAND = 5  # 1: one hand per episode, 0: a whole game
P_REWARD_WIN = 6  # 1: +-1 at the end of the episode, 0: hand points
P_TARGET = 7
P_LADDER_TOP = 8  # index of the top rung
P_MAX_RAISES = 9  # -1: unlimited
P_COUNTER = 10  # counter-raises (truco)
P_ALL_IN = 11  # mon reste / put exists
P_FOLD = 12
P_REDEAL = 13
P_VIRA = 14
P_ELEVEN = 15
P_ELEVEN_SCORE = 16
P_ELEVEN_VALUE = 17
P_BLIND = 18
P_SIG_MODE = 19  # 0 none, 1 free, 2 card / senas (truthful table), 3 card / senas lies allowed
P_SIG_PUBLIC = 20  # intercept == 1
P_SIG_EVERY_TRICK = 21
P_SIG_SLOTS = 22
P_NTOK = 23  # signal tokens, "none" included
P_ALL_TIED = 24  # 0 none, 1 leader, 2 dealer
P_DEALER = 25  # first dealer: a seat, or -1 = random
P_START_SCORE_PROB = 26  # per mille: a hand episode starts from a random score
P_LEN_RANKING = 27  # strength above this = manilha
P_PARTNER_HAND = 28  # the partner_hand section: 0 none, 1 shown in a mão de onze, 2 always (signals.open_hands)
P_SHUFFLE = 29  # cards a hand can draw (deal, vira, redeal): only these positions are shuffled
# action ids
P_A_PLAY = 30
P_A_SLOT = 31
P_A_RAISE = 32
P_A_ACCEPT = 33
P_A_REFUSE = 34
P_A_FOLD = 35
P_A_ALL_IN = 36
P_A_REDEAL = 37
P_A_SIGNAL = 38
# observation offsets (-1: the section does not exist)
P_O_TO_ACT = 40
P_O_DECISION = 41
P_O_HAND = 42
P_O_SLOTS = 43
P_O_FIRST_HAND = 44
P_O_PARTNER_HAND = 45
P_O_PLAYED = 46
P_O_TRICK_WINNER = 47
P_O_TRICK_LEADER = 48
P_O_ACTIVE = 49
P_O_STAKE = 50
P_O_RAISES = 51
P_O_LAST_RAISER = 52
P_O_ALL_IN = 53
P_O_SPECIAL = 54
P_O_CALL = 55
P_O_CALL_CALLER = 56
P_O_CALL_LEVEL = 57
P_O_VIRA = 58
P_O_MANILHAS = 59
P_O_SCORE = 60
P_O_HAND_POINTS = 61
P_O_DEALER = 62
P_O_SIGNALS = 63
P_RAISE_CAP = 64
P_SIG_WIDTH = 65
P_WIN_OWN = 66  # reward="win": the winning side's reward, from episode.side_rewards
P_WIN_OTHER = 67  # the other side's
# Le Truc 2 vs 2 (governors, instructions, governor-partner signals)
P_GOVERNORS = 68  # 4 players with governors: the opposing governor alone answers a call
P_INSTRUCTIONS = 69  # governors instruct their partner before each of his cards
P_A_INSTRUCT = 70
P_N_INSTRUCT = 71  # instruct tokens: none, high, low, then the deck's ranks
P_SIG_GOV_ONLY = 72  # only the governors' partners signal
P_O_GOVERNOR = 73
P_O_INSTRUCTION = 74
# put_4p (the card pass)
P_PUT_PASS = 75  # dealer and d+1 pass their highest card to their partners, who discard one and play heads-up
P_A_GIVE = 76
P_A_DISCARD = 77
P_O_GIVEN = 78
P_O_DISCARDED = 79
# Argentine envido (and falta envido)
P_ENVIDO = 80
P_A_ENVIDO = 81  # envido, real envido, falta envido: three ids in a row
P_O_ENVIDO_CALLS = 82
P_O_ENVIDO_CALLER = 83
P_O_ENVIDO_DONE = 84
P_O_ENVIDO_WINNER = 85
P_O_ENVIDO_POINTS = 86
P_ENVIDO_CHAIN = 87  # calls the observation shows
P_ENVIDO_MAX_POINTS = 88
# Argentine flor
P_FLOR = 89
P_A_FLOR = 90
P_O_FLOR = 91
P_O_FLOR_WINNER = 92
P_O_FLOR_POINTS = 93
P_FLOR_MIN = 94  # the lowest flor points (the flor_points section starts there)
MAX_DECK = 64
P_RANK_OF = 96  # .. + D: each deck card's rank, as an index into the deck's ranks (instruct <rank>)
P_BASE_STRENGTH = P_RANK_OF + MAX_DECK  # .. + D: each deck card's strength (instruct high / low; no vira)
P_NUMBER_OF = P_BASE_STRENGTH + MAX_DECK  # .. + D: each deck card's number (1-7, 10-12: the envido pips' source)
P_SUIT_OF = P_NUMBER_OF + MAX_DECK  # .. + D: each deck card's suit index
P_PARTNER = P_SUIT_OF + MAX_DECK  # .. + 4: Rules.partner of each seat
N_PARAMS = P_PARTNER + 4

# ---------------------------------------------------------------------------- fields (g[b, F_*])
F_PHASE = 0
F_DEALER = 1
F_TURN = 2
F_LEADER = 3
F_TRICKS = 4  # finished tricks (= trick number of the trick under way)
F_NTRICK = 5  # cards in the trick under way
F_PLAY_STARTED = 6
F_LEVEL = 7
F_RAISES = 8
F_LAST_RAISER = 9  # side, -1 none
F_ALL_IN_CALLED = 10
F_ALL_IN_ACCEPTED = 11
F_SPECIAL = 12  # hand_rules.NORMAL, ELEVEN (once accepted) or IRON
F_ELEVEN_SEAT = 13
F_CALL_KIND = 14  # 0 none, 1 raise, 2 all-in, 3 redeal
F_CALL_CALLER = 15
F_CALL_LEVEL = 16
F_CALLQ_POS = 17
F_CALLQ_LEN = 18
F_REDEAL_USED = 19
F_HAS_OLD = 20
F_DRAWN = 21
F_VIRA = 22
F_SCORE = 23  # two sides: 23, 24
F_START = 25  # 25, 26
F_HP = 27  # 27, 28
F_GAME_OVER = 29
F_WINNER = 30
F_NSIG = 31
F_SIGQ_POS = 32
F_SIGQ_LEN = 33
F_INSTR = 34  # the governor's instruction for the card about to be played + 1 (0: none given yet)
F_INSTRUCTOR = 35  # the governor who instructs, in PH_INSTRUCT
F_SITOUT = 36  # put_4p: the passers sit out (only the receivers d+2, d+3 play on)
F_PASSQ_POS = 37  # put_4p: passes (then discards) made so far
F_PASSER = 38  # put_4p: the seat to give or discard
F_GIVEN = 39  # 39..42: per seat, the card passed to it + 1 (0: none)
F_DISCARD = 43  # 43..46: per seat, its discard + 1 (0: none)
F_PAID = 47  # 47, 48: hand points already given as reward="points" (envido is paid when settled)
F_ENV_N = 49  # envido calls made this hand
F_ENV_CALLS = 50  # 50..53: the envido chain, 0 envido, 1 real envido, 2 falta envido
F_ENV_CALLER = 54  # the last envido caller + 1 (0: none)
F_ENV_QPOS = 55  # his opponents who refused so far
F_ENV_DONE = 56
F_ENV_HOLDER = 57  # the seat announced with the best envido + 1 (0: not played)
F_ENV_POINTS = 58
F_ENV_ACTOR = 59  # the opponent to answer the envido
F_FLOR_SEATS = 60  # bit per seat: sang flor
F_FLOR_SIDES = 61  # bit per side: its flor is settled (sung, or answered)
F_FLOR_LAST = 62  # the last seat that sang flor
F_FLOR_ANSWERER = 63  # the opposing flor holder who answers a flor, in PH_FLOR
F_FLOR_HOLDER = 64  # the seat announced with the better flor + 1 (0: none)
F_FLOR_POINTS = 65
N_FIELDS = 66

PH_TURN = 0
PH_ANSWER = 1
PH_ENVIDO = 2
PH_SIGNAL = 3
PH_INSTRUCT = 4
PH_ELEVEN = 5
PH_GIVE = 6
PH_DISCARD = 7
PH_FLOR = 8
PH_TERMINAL = 9  # never seen outside a step: finished games are reset at once

K_RAISE = 1
K_ALL_IN = 2
K_REDEAL = 3

# The kernels run without numba's reference counting (``_nrt=False``, a numba target option): they allocate
# nothing and only borrow the caller's arrays. With it, every array handed to a helper is an atomic
# incref/decref that numba's refcount pruning cannot remove from this control flow: 3/4 of a step's time went
# there (measured with perf, numba 0.68). A numba without the option gets the slow path. numpy's error model:
# no division in a kernel can be by zero, so none needs a check.
NO_REFCOUNT = {"_nrt": False, "error_model": "numpy"} if hasattr(CPUTargetOptions, "_nrt") else {"error_model": "numpy"}
# The helpers are numba functions of their own, typed one by one (numba's own inlining re-typed the growing
# entry kernel at every call site: 236 CPU-s and 7.2 GB cold). ``helper``: LLVM inlines it (forceinline), so
# that the step runs as one function. ``unit``: not inlined, for the branches only some variants take, so that
# LLVM's work on the hot function stays small. Called from numba only (no Python or C wrappers), and not
# cached on their own: the entry kernel's cache entry holds everything it links.
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True, **NO_REFCOUNT}


def _widened(t):
    """A call's argument type as the helper is compiled for: signed integers (literal constants included) as
    int64, literal booleans as bool."""
    if isinstance(t, types.Literal):
        t = types.unliteral(t)
    return types.int64 if isinstance(t, types.Integer) and t.signed else t


class _OneSignature(CPUDispatcher):
    """A helper compiled once: its call sites pass int32 fields, int64 indices and literal constants, and
    numba would compile (type, lower, optimize, emit) a copy for each mix of them: 25 of the 94 compiles.
    The call sites' arguments are cast to the int64 signature (same values, the kernels' ints are small)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_widened(a) for a in args), kws)


def _internal(**options):
    return lambda fn: _OneSignature(py_func=fn, locals={}, targetoptions={"nopython": True, **options, **INTERNAL})


helper = _internal(forceinline=True)
unit = _internal()

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
_STAR = np.uint64(2685821657736338717)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S32 = np.uint64(32)


# ---------------------------------------------------------------------------- the shared decisions
# hand_rules' plain functions compiled for the kernels: the engine calls the same functions
_shared = helper
_next_seat = _shared(hand_rules.next_seat)
_hand_value = _shared(hand_rules.hand_value)
_wins_game = _shared(hand_rules.wins_game)
_may_raise = _shared(hand_rules.may_raise)
_may_all_in = _shared(hand_rules.may_all_in)
_may_counter = _shared(hand_rules.may_counter)
_may_redeal = _shared(hand_rules.may_redeal)
_raise_budget = _shared(hand_rules.raise_budget)
_special_hand = _shared(hand_rules.special_hand)
_eleven_seat = _shared(hand_rules.eleven_seat)
_trick_lead = _shared(hand_rules.trick_lead)
_signal_audience = _shared(hand_rules.signal_audience)
_envido_pip = _shared(hand_rules.envido_pip)
_envido_score = _shared(hand_rules.envido_score)
_has_flor = _shared(hand_rules.has_flor)
_flor_score = _shared(hand_rules.flor_score)
_wins_announcement = _shared(hand_rules.wins_announcement)
_envido_open = _shared(hand_rules.envido_open)
_may_raise_envido = _shared(hand_rules.may_raise_envido)
_may_call_envido = _shared(hand_rules.may_call_envido)
_may_envido_on_truco = _shared(hand_rules.may_envido_on_truco)
_envido_stake = _shared(hand_rules.envido_stake)
_envido_refused_stake = _shared(hand_rules.envido_refused_stake)
_must_sing = _shared(hand_rules.must_sing)
_flor_stake = _shared(hand_rules.flor_stake)


@helper
def rand(rng, b, n):
    """Uniform int in [0, n) from game b's xorshift64* stream (its own, whatever the threads do)."""
    x = rng[b]
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    rng[b] = x
    return np.int64((((x * _STAR) >> _S32) * np.uint64(n)) >> _S32)  # multiply-shift: no division


@helper
def shuffle_deck(b, rng, deck, draws):
    """Game b's deck (``deck[b]``, deck indices) in a new order: Fisher-Yates from the top, as far as
    the hand can draw (``draws`` cards); the rest stays undrawn, in no order."""
    D = deck.shape[1]
    for i in range(D):
        deck[b, i] = i
    for i in range(min(draws, D - 1)):
        j = i + rand(rng, b, D - i)
        t = deck[b, i]
        deck[b, i] = deck[b, j]
        deck[b, j] = t


@njit(cache=True, **NO_REFCOUNT)
def seed_streams(rng, seed):
    """Distinct non-zero xorshift states for every game, from one seed (splitmix64)."""
    z = np.uint64(seed) * _M1 + np.uint64(0x632BE59BD9B4E019)
    for b in range(rng.shape[0]):
        z += _M1
        x = z
        x = (x ^ (x >> np.uint64(30))) * _M2
        x = (x ^ (x >> np.uint64(27))) * _M3
        x ^= x >> np.uint64(31)
        if x == np.uint64(0):
            x = _M1
        rng[b] = x


@helper
def _wrap(x, n):
    """x mod n for n = 2 or 4 players (a power of two: kernel_supports): a mask, not a division."""
    return x & (n - 1)


@helper
def _governor(b, g, p, seat):
    """The governor of a seat's side: the dealer for his side, seat d+1 for the other (engine.governor)."""
    d = g[b, F_DEALER]
    return d if seat % 2 == d % 2 else _wrap(d + 1, p[P_N])


# ---------------------------------------------------------------------------- hand set-up
@helper
def _deal(b, g, p, hands, deck, start):
    n, hs = p[P_N], p[P_HS]
    d = g[b, F_DEALER]
    for k in range(hs * n):
        hands[b, _wrap(d + 1 + k, n), k // n] = deck[b, start + k]
    g[b, F_DRAWN] = start + hs * n


@helper
def _to_turn(b, g, seat):
    g[b, F_TURN] = seat
    g[b, F_PHASE] = PH_TURN


@helper
def _in_play(b, g, n):
    """Seats playing this hand's tricks: all, or the two receivers once the put_4p passers sit out."""
    return 2 if g[b, F_SITOUT] else n


@helper
def _next_in_play(b, g, p, n, seat):
    """The next seat in play order that plays this hand (put_4p: the other receiver)."""
    if g[b, F_SITOUT]:
        d = g[b, F_DEALER]
        return p[P_PARTNER + d] + p[P_PARTNER + _next_seat(d, n)] - seat  # the two receivers
    return _wrap(seat + 1, n)


@unit
def _open_signal_round(b, g, p, sigq, first):
    n = p[P_N]
    for k in range(n):
        sigq[b, k] = _wrap(first + k, n)
    g[b, F_SIGQ_POS] = 0
    g[b, F_SIGQ_LEN] = n
    g[b, F_PHASE] = PH_SIGNAL
    if p[P_SIG_GOV_ONLY]:  # the governors' partners d+2 and d+3, in play order from the first
        m = 0
        for k in range(n):
            s = _wrap(first + k, n)
            if s != g[b, F_DEALER] and s != _wrap(g[b, F_DEALER] + 1, n):
                sigq[b, m] = s
                m += 1
        g[b, F_SIGQ_LEN] = m


@helper
def _begin_play(b, g, p, sigq):
    if p[P_SIG_MODE] != 0 and g[b, F_SPECIAL] != IRON:
        _open_signal_round(b, g, p, sigq, g[b, F_LEADER])
    else:
        _to_turn(b, g, g[b, F_LEADER])


@unit
def _after_deal(b, g, p, sigq):
    n = p[P_N]
    d = g[b, F_DEALER]
    mano = _next_seat(d, n)
    g[b, F_LEADER] = mano
    g[b, F_TURN] = mano
    if p[P_PUT_PASS]:  # d+1, then the dealer, pass a card to his partner
        g[b, F_PASSQ_POS] = 0
        g[b, F_PASSER] = mano
        g[b, F_PHASE] = PH_GIVE
        return
    special = _special_hand(p[P_ELEVEN], g[b, F_REDEAL_USED], g[b, F_SCORE], g[b, F_SCORE + 1], p[P_ELEVEN_SCORE])
    if special == IRON:
        g[b, F_SPECIAL] = IRON
    elif special == ELEVEN:
        g[b, F_ELEVEN_SEAT] = _eleven_seat(mano, n, g[b, F_SCORE], p[P_ELEVEN_SCORE])
        g[b, F_PHASE] = PH_ELEVEN
        return
    _begin_play(b, g, p, sigq)


@helper
def _begin_hand(b, g, p, rng, hands, old_hands, played, tcards, tseats, twin, tlead, deck, sigs, sigq):
    n, hs = p[P_N], p[P_HS]
    for f in range(F_PHASE, N_FIELDS):
        if f != F_DEALER and f != F_SCORE and f != F_SCORE + 1 and f != F_START and f != F_START + 1 \
                and f != F_GAME_OVER and f != F_WINNER:
            g[b, f] = 0
    g[b, F_LAST_RAISER] = -1
    g[b, F_ELEVEN_SEAT] = -1
    g[b, F_CALL_CALLER] = -1
    g[b, F_VIRA] = -1
    for s in range(n):
        for i in range(hs):
            hands[b, s, i] = -1
            old_hands[b, s, i] = -1
            played[b, s, i] = -1
        tcards[b, s] = -1
        tseats[b, s] = -1
        hands[b, s, hs] = -1  # the slot of a card passed to the seat (put_4p)
    for i in range(hs):
        twin[b, i] = -2
        tlead[b, i] = -1
    shuffle_deck(b, rng, deck, p[P_SHUFFLE])
    _deal(b, g, p, hands, deck, 0)
    if p[P_VIRA]:
        g[b, F_VIRA] = deck[b, g[b, F_DRAWN]]
        g[b, F_DRAWN] += 1
    _after_deal(b, g, p, sigq)


@helper
def _new_episode(b, g, p, rng):
    """A new episode's dealer and starting score (its first hand is dealt next: _begin_hand)."""
    n = p[P_N]
    dealer = p[P_DEALER]
    if dealer < 0:
        dealer = rand(rng, b, n)
    g[b, F_DEALER] = dealer
    g[b, F_GAME_OVER] = 0
    g[b, F_WINNER] = -1
    s0 = 0
    s1 = 0
    if p[P_EPISODE_HAND] and p[P_START_SCORE_PROB] > 0 and rand(rng, b, 1000) < p[P_START_SCORE_PROB]:
        s0 = rand(rng, b, p[P_TARGET])
        s1 = rand(rng, b, p[P_TARGET])
    g[b, F_SCORE] = s0
    g[b, F_SCORE + 1] = s1
    g[b, F_START] = s0
    g[b, F_START + 1] = s1


# ---------------------------------------------------------------------------- scoring
@helper
def add_points(b, g, f_score, f_hand_points, f_game_over, f_winner, side, points, target):
    """``points`` to ``side`` in game b (its fields ``g[b, f_score + side]``, ``g[b, f_hand_points + side]``);
    the first side to reach the target wins the game (engine State._score). Both kernels' scoring."""
    if points <= 0:
        return
    g[b, f_score + side] += points
    g[b, f_hand_points + side] += points
    if _wins_game(g[b, f_score + side], target) and not g[b, f_game_over]:
        g[b, f_game_over] = 1
        g[b, f_winner] = side


@helper
def _score(b, g, p, side, points):
    add_points(b, g, F_SCORE, F_HP, F_GAME_OVER, F_WINNER, side, points, p[P_TARGET])


@helper
def _value_for(b, g, p, ladder, side):
    """What the hand is worth to ``side`` now (hand_rules.hand_value on game b's fields)."""
    sp = g[b, F_SPECIAL]
    return _hand_value(ladder[g[b, F_LEVEL]], sp == ELEVEN, sp == IRON, p[P_ELEVEN_VALUE], ladder[0],
                       g[b, F_ALL_IN_ACCEPTED], p[P_TARGET] - g[b, F_SCORE + side])


@helper
def _decided(b, g, p, decided, twin, tlead, ntricks):
    """Winning side (-1 nobody) once no remaining trick can change it, else -2 (engine.possible_winners)."""
    hs = p[P_HS]
    c0 = 0
    c1 = 0
    first = -1
    for t in range(ntricks):
        w = twin[b, t]
        if w >= 0:
            sd = w % 2
            if sd == 0:
                c0 += 1
            else:
                c1 += 1
            if first < 0:
                first = sd
    at = p[P_ALL_TIED]
    if at == 1:
        tied = tlead[b, 0] % 2
    elif at == 2:
        tied = g[b, F_DEALER] % 2
    else:
        tied = -1
    k = (((c0 * (hs + 1) + c1) * 3 + first + 1) * (hs + 1) + hs - ntricks) * 3 + tied + 1
    return decided[k]


# ---------------------------------------------------------------------------- applying decisions
@helper
def _play(b, g, p, ladder, strength, decided, sigq, hands, played, tcards, tseats, twin, tlead, seat, slot):
    n = p[P_N]
    card = hands[b, seat, slot]
    hands[b, seat, slot] = -1
    g[b, F_INSTR] = 0  # an instruction is for one card
    k = g[b, F_NTRICK]
    tcards[b, k] = card
    tseats[b, k] = seat
    g[b, F_NTRICK] = k + 1
    t = g[b, F_TRICKS]
    played[b, seat, t] = card
    row = g[b, F_VIRA] + 1
    best = winner = winner_side = -1
    for i in range(k + 1):
        s = tseats[b, i]
        best, winner, winner_side = _trick_lead(best, winner, winner_side, strength[row, tcards[b, i]], s, s % 2)
    leader = g[b, F_LEADER]
    if k + 1 < _in_play(b, g, n):
        # the rest of the trick is the winner's partners: the trick is his whatever they play
        go_on = winner < 0
        if not go_on:
            for j in range(k + 1, n):
                if _wrap(leader + j, n) % 2 != winner % 2:
                    go_on = True
                    break
        if not go_on:
            twin[b, t] = winner
            tlead[b, t] = leader
            go_on = _decided(b, g, p, decided, twin, tlead, t + 1) == -2
            twin[b, t] = -2
            tlead[b, t] = -1
        if go_on:
            _to_turn(b, g, _next_in_play(b, g, p, n, seat))
            return False
    twin[b, t] = winner
    tlead[b, t] = leader
    w = _decided(b, g, p, decided, twin, tlead, t + 1)
    if w != -2:
        if w >= 0:
            _score(b, g, p, w, _value_for(b, g, p, ladder, w))
        return True
    g[b, F_TRICKS] = t + 1
    g[b, F_NTRICK] = 0
    for i in range(n):
        tcards[b, i] = -1
        tseats[b, i] = -1
    if winner >= 0:
        g[b, F_LEADER] = winner
    if p[P_SIG_MODE] != 0 and p[P_SIG_EVERY_TRICK] and g[b, F_SPECIAL] != IRON:
        _open_signal_round(b, g, p, sigq, g[b, F_LEADER])
    else:
        _to_turn(b, g, g[b, F_LEADER])
    return False


@helper
def _open_call(b, g, p, callq, kind, caller, level):
    n = p[P_N]
    g[b, F_CALL_KIND] = kind
    g[b, F_CALL_CALLER] = caller
    g[b, F_CALL_LEVEL] = level
    m = 0
    for k in range(1, n):  # the opponents, in play order after the caller
        s = _wrap(caller + k, n)
        if s % 2 != caller % 2:
            callq[b, m] = s
            m += 1
    if p[P_GOVERNORS]:  # the opposing governor alone answers
        callq[b, 0] = _governor(b, g, p, _wrap(caller + 1, n))
        m = 1
    if g[b, F_SITOUT]:  # put_4p: the opposing receiver
        callq[b, 0] = _next_in_play(b, g, p, n, caller)
        m = 1
    g[b, F_CALLQ_POS] = 0
    g[b, F_CALLQ_LEN] = m
    g[b, F_PHASE] = PH_ANSWER


@helper
def _close_call(b, g):
    g[b, F_CALL_KIND] = 0
    g[b, F_CALL_CALLER] = -1
    g[b, F_CALLQ_POS] = 0
    g[b, F_CALLQ_LEN] = 0
    g[b, F_PHASE] = PH_TURN


@helper
def _accept_call(b, g, kind, caller):
    if kind == K_RAISE:
        g[b, F_LEVEL] = g[b, F_CALL_LEVEL]
    else:
        g[b, F_ALL_IN_ACCEPTED] = 1
    g[b, F_RAISES] += 1
    g[b, F_LAST_RAISER] = caller % 2


@helper
def _envido_open_now(b, g, p):
    """Envido may still be called: first trick, no truco accepted, not settled (engine State._envido_open)."""
    return _envido_open(p[P_ENVIDO], g[b, F_ENV_DONE], g[b, F_TRICKS], g[b, F_LEVEL], g[b, F_FLOR_SEATS] != 0)


@unit
def _open_envido(b, g, p, seat, kind):
    """An envido call (or a raise of one): his opponents answer, in play order after him."""
    k = g[b, F_ENV_N]
    if k < 4:
        g[b, F_ENV_CALLS + k] = kind
    g[b, F_ENV_N] = k + 1
    g[b, F_ENV_CALLER] = seat + 1
    g[b, F_ENV_QPOS] = 0
    g[b, F_ENV_ACTOR] = _wrap(seat + 1, p[P_N])
    g[b, F_PHASE] = PH_ENVIDO


@helper
def _envido_value(b, g, p, calls):
    """Points of the first ``calls`` envido calls (hand_rules.envido_stake, call by call)."""
    v = 0
    top = max(g[b, F_SCORE], g[b, F_SCORE + 1])
    for i in range(calls):
        v = _envido_stake(v, g[b, F_ENV_CALLS + i], p[P_TARGET], top)
    return v


@helper
def _dealt_card(b, p, hands, played, seat, k):
    """The ``k``-th of the seat's dealt cards still known in the first trick (held, then the one he
    played in it), or -1: the cards envido and flor count."""
    hs = p[P_HS]
    for i in range(hs + 1):
        c = hands[b, seat, i] if i < hs else played[b, seat, 0]
        if c >= 0:
            if k == 0:
                return c
            k -= 1
    return -1


@helper
def _pip(p, c):
    return _envido_pip(p[P_NUMBER_OF + c]) if c >= 0 else 0


@helper
def _suit(p, c):
    return p[P_SUIT_OF + c] if c >= 0 else NO_SUIT


@helper
def _dealt_envido(b, p, hands, played, seat):
    """The seat's envido points (hand_rules.envido_score of his dealt cards)."""
    c0, c1, c2 = _dealt_card(b, p, hands, played, seat, 0), _dealt_card(b, p, hands, played, seat, 1), \
        _dealt_card(b, p, hands, played, seat, 2)
    return _envido_score(_pip(p, c0), _suit(p, c0), _pip(p, c1), _suit(p, c1), _pip(p, c2), _suit(p, c2))


@unit
def _answer_envido(b, g, p, hands, played, seat, a):
    """Accept, refuse or raise the envido; True when its points end the game (and so the hand)."""
    n = p[P_N]
    if a >= p[P_A_ENVIDO]:  # envido calls follow accept and refuse in the layout
        _open_envido(b, g, p, seat, a - p[P_A_ENVIDO])
        return False
    k = g[b, F_ENV_N]
    if a == p[P_A_REFUSE]:
        g[b, F_ENV_QPOS] += 1
        caller = g[b, F_ENV_CALLER] - 1
        if g[b, F_ENV_QPOS] < n // 2:
            g[b, F_ENV_ACTOR] = _wrap(caller + 1 + 2 * g[b, F_ENV_QPOS], n)
            return False
        _score(b, g, p, caller % 2, _envido_refused_stake(_envido_value(b, g, p, k - 1)))
    else:  # accepted: the best envido scores, ties to the seat nearer the mano
        d = g[b, F_DEALER]
        holder, best = -1, -1
        for j in range(n):
            s = _wrap(d + 1 + j, n)
            pts = _dealt_envido(b, p, hands, played, s)
            if holder < 0 or not _wins_announcement(best, pts, True):
                holder, best = s, pts
        g[b, F_ENV_HOLDER] = holder + 1
        g[b, F_ENV_POINTS] = best
        _score(b, g, p, holder % 2, _envido_value(b, g, p, k))
    g[b, F_ENV_DONE] = 1
    return _resume_calls(b, g)


@unit
def _sings_now(b, g, p, hands, seat):
    """A flor holder whose side's flor is unsettled, before his card of the first trick (engine State._must_sing).

    Before his first card he still holds all three dealt cards: a flor is three held cards of one suit.
    """
    if not p[P_FLOR] or p[P_HS] != 3:
        return False
    c0, c1, c2 = hands[b, seat, 0], hands[b, seat, 1], hands[b, seat, 2]
    played = c0 < 0 or c1 < 0 or c2 < 0
    flor = not played and _has_flor(_suit(p, c0), _suit(p, c1), _suit(p, c2))
    return _must_sing(p[P_FLOR], g[b, F_TRICKS], (g[b, F_FLOR_SIDES] >> (seat % 2)) & 1, played, flor)


@helper
def _dealt_flor(b, p, hands, played, seat):
    """The points of a flor dealt to the seat (hand_rules.has_flor, flor_score), or -1 without one."""
    if p[P_HS] != 3:
        return -1
    c0, c1, c2 = _dealt_card(b, p, hands, played, seat, 0), _dealt_card(b, p, hands, played, seat, 1), \
        _dealt_card(b, p, hands, played, seat, 2)
    if not _has_flor(_suit(p, c0), _suit(p, c1), _suit(p, c2)):
        return -1
    return _flor_score(_pip(p, c0), _pip(p, c1), _pip(p, c2))


@helper
def _resume_calls(b, g):
    """After envido or flor points: the game may be over (True), else the truco question or the turn resumes."""
    if g[b, F_GAME_OVER]:
        return True
    g[b, F_PHASE] = PH_ANSWER if g[b, F_CALL_KIND] else PH_TURN
    return False


@unit
def _announce_flor(b, g, p, hands, seat):
    """A flor sung: 3 points, unless an opposing flor holder (the first after him) answers it."""
    n = p[P_N]
    g[b, F_FLOR_SEATS] |= 1 << seat
    g[b, F_FLOR_SIDES] |= 1 << (seat % 2)
    g[b, F_FLOR_LAST] = seat
    g[b, F_ENV_DONE] = 1
    for k in range(1, n, 2):  # his opponents, in play order after him
        s = _wrap(seat + k, n)
        if _sings_now(b, g, p, hands, s):
            g[b, F_FLOR_ANSWERER] = s
            g[b, F_PHASE] = PH_FLOR
            return False
    _score(b, g, p, seat % 2, _flor_stake(False, False))
    return _resume_calls(b, g)


@unit
def _answer_flor(b, g, p, hands, played, seat, a):
    """Con flor quiero: 4 to the better flor (ties nearer the mano); me achico: 3 to the flor sung."""
    n = p[P_N]
    g[b, F_FLOR_SIDES] |= 1 << (seat % 2)
    if a == p[P_A_ACCEPT]:
        d = g[b, F_DEALER]
        holder, best = -1, -1
        for j in range(n):
            s = _wrap(d + 1 + j, n)
            pts = _dealt_flor(b, p, hands, played, s)
            if pts >= 0 and (holder < 0 or not _wins_announcement(best, pts, True)):
                holder, best = s, pts
        g[b, F_FLOR_HOLDER] = holder + 1
        g[b, F_FLOR_POINTS] = best
        _score(b, g, p, holder % 2, _flor_stake(True, True))
    else:
        _score(b, g, p, g[b, F_FLOR_LAST] % 2, _flor_stake(True, False))
    return _resume_calls(b, g)


@unit
def _pass_card(b, g, p, sigq, hands, seat, a):
    """put_4p: a give to the partner (d+1, then the dealer), then a discard (d+2, then d+3)."""
    n, hs, d = p[P_N], p[P_HS], g[b, F_DEALER]
    give = g[b, F_PHASE] == PH_GIVE
    card = a - (p[P_A_GIVE] if give else p[P_A_DISCARD])
    for i in range(hs + 1):
        if hands[b, seat, i] == card:
            hands[b, seat, i] = -1
    pos = g[b, F_PASSQ_POS] + 1
    if give:
        receiver = p[P_PARTNER + seat]
        hands[b, receiver, hs] = card
        g[b, F_GIVEN + receiver] = card + 1
        g[b, F_PASSER] = d
        if pos == 2:
            g[b, F_PHASE] = PH_DISCARD
            g[b, F_PASSER] = p[P_PARTNER + d]  # the receivers discard: the dealer's partner first
            pos = 0
    else:
        g[b, F_DISCARD + seat] = card + 1
        g[b, F_PASSER] = _wrap(d + 3, n)
        if pos == 2:
            g[b, F_SITOUT] = 1
            g[b, F_LEADER] = _wrap(d + 3, n)  # the non-dealing receiver leads
            _begin_play(b, g, p, sigq)
    g[b, F_PASSQ_POS] = pos


@helper
def actor_of(b, g, callq, sigq):
    ph = g[b, F_PHASE]
    if ph == PH_TURN:
        return g[b, F_TURN]
    if ph == PH_ANSWER:
        return callq[b, g[b, F_CALLQ_POS]]
    if ph == PH_SIGNAL:
        return sigq[b, g[b, F_SIGQ_POS]]
    if ph == PH_ELEVEN:
        return g[b, F_ELEVEN_SEAT]
    if ph == PH_INSTRUCT:
        return g[b, F_INSTRUCTOR]
    if ph == PH_GIVE or ph == PH_DISCARD:
        return g[b, F_PASSER]
    if ph == PH_ENVIDO:
        return g[b, F_ENV_ACTOR]
    if ph == PH_FLOR:
        return g[b, F_FLOR_ANSWERER]
    return -1


@helper
def _apply(b, a, g, p, ladder, strength, decided, callq, sigq, sigs, hands, old_hands, played,
           tcards, tseats, twin, tlead, deck):
    """Apply a legal decision; True when the hand ended."""
    n = p[P_N]
    ph = g[b, F_PHASE]
    seat = actor_of(b, g, callq, sigq)
    if ph == PH_TURN:
        is_card = p[P_A_PLAY] <= a < p[P_A_PLAY] + p[P_D]
        if is_card or (p[P_A_SLOT] >= 0 and p[P_A_SLOT] <= a < p[P_A_SLOT] + p[P_HS]):  # a card, or a blind slot
            g[b, F_PLAY_STARTED] = 1
            slot = a - p[P_A_SLOT]
            if is_card:  # the slot holding it; slot hs: the card passed to him (put_4p)
                slot = -1
                for i in range(p[P_HS] + 1):
                    if hands[b, seat, i] == a - p[P_A_PLAY]:
                        slot = i
                        break
                if slot < 0:
                    return False
            return _play(b, g, p, ladder, strength, decided, sigq, hands, played, tcards, tseats,
                         twin, tlead, seat, slot)  # one call site: inlined once
        if a == p[P_A_RAISE]:
            g[b, F_PLAY_STARTED] = 1
            _open_call(b, g, p, callq, K_RAISE, seat, g[b, F_LEVEL] + 1)
        elif a == p[P_A_ALL_IN]:
            g[b, F_PLAY_STARTED] = 1
            g[b, F_ALL_IN_CALLED] = 1
            _open_call(b, g, p, callq, K_ALL_IN, seat, g[b, F_LEVEL])
        elif a == p[P_A_FOLD]:
            other = 1 - seat % 2
            _score(b, g, p, other, _value_for(b, g, p, ladder, other))
            return True
        elif a == p[P_A_REDEAL]:
            g[b, F_REDEAL_USED] = 1
            g[b, F_CALL_KIND] = K_REDEAL
            g[b, F_CALL_CALLER] = seat
            g[b, F_CALL_LEVEL] = g[b, F_LEVEL]
            callq[b, 0] = g[b, F_DEALER]
            g[b, F_CALLQ_POS] = 0
            g[b, F_CALLQ_LEN] = 1
            g[b, F_PHASE] = PH_ANSWER
        elif p[P_ENVIDO] and p[P_A_ENVIDO] <= a < p[P_A_ENVIDO] + 3:
            g[b, F_PLAY_STARTED] = 1
            _open_envido(b, g, p, seat, a - p[P_A_ENVIDO])
        elif p[P_FLOR] and a == p[P_A_FLOR]:
            return _announce_flor(b, g, p, hands, seat)
        return False
    if ph == PH_ANSWER:
        if p[P_FLOR] and a == p[P_A_FLOR]:  # sung before answering; the truco question then resumes at him
            return _announce_flor(b, g, p, hands, seat)
        if p[P_ENVIDO] and p[P_A_ENVIDO] <= a < p[P_A_ENVIDO] + 3:  # envido goes first; the truco waits
            _open_envido(b, g, p, seat, a - p[P_A_ENVIDO])
            return False
        kind = g[b, F_CALL_KIND]
        caller = g[b, F_CALL_CALLER]
        if kind == K_REDEAL:
            _close_call(b, g)
            if a == p[P_A_ACCEPT]:
                if not g[b, F_HAS_OLD]:
                    g[b, F_HAS_OLD] = 1
                    for s in range(n):
                        for i in range(p[P_HS]):
                            old_hands[b, s, i] = hands[b, s, i]
                _deal(b, g, p, hands, deck, g[b, F_DRAWN])
                _after_deal(b, g, p, sigq)
            return False
        if a == p[P_A_ACCEPT]:
            _accept_call(b, g, kind, caller)
            _close_call(b, g)
        elif a == p[P_A_REFUSE]:
            g[b, F_CALLQ_POS] += 1
            if g[b, F_CALLQ_POS] >= g[b, F_CALLQ_LEN]:
                _score(b, g, p, caller % 2, ladder[g[b, F_LEVEL]])
                return True
        else:  # counter-raise: accepts the pending step and asks the counter-raiser's opponents
            _accept_call(b, g, kind, caller)
            _open_call(b, g, p, callq, K_RAISE, seat, g[b, F_LEVEL] + 1)
        return False
    if ph == PH_SIGNAL:
        k = g[b, F_NSIG]
        if k < sigs.shape[1]:
            sigs[b, k, 0] = seat
            sigs[b, k, 1] = a - p[P_A_SIGNAL]
            sigs[b, k, 2] = g[b, F_TRICKS]
            sigs[b, k, 3] = _signal_audience(seat, p[P_PARTNER + seat], n, p[P_SIG_PUBLIC])
        g[b, F_NSIG] = k + 1
        g[b, F_SIGQ_POS] += 1
        if g[b, F_SIGQ_POS] >= g[b, F_SIGQ_LEN]:
            _to_turn(b, g, g[b, F_LEADER])
        return False
    if ph == PH_INSTRUCT:
        g[b, F_INSTR] = a - p[P_A_INSTRUCT] + 1
        g[b, F_PHASE] = PH_TURN
        return False
    if ph == PH_GIVE or ph == PH_DISCARD:
        _pass_card(b, g, p, sigq, hands, seat, a)
        return False
    if ph == PH_ENVIDO:
        if p[P_FLOR] and a == p[P_A_FLOR]:  # the pending envido is cancelled and scores nothing
            g[b, F_ENV_N] = 0
            return _announce_flor(b, g, p, hands, seat)
        return _answer_envido(b, g, p, hands, played, seat, a)
    if ph == PH_FLOR:
        return _answer_flor(b, g, p, hands, played, seat, a)
    # eleven
    if a == p[P_A_ACCEPT]:
        g[b, F_SPECIAL] = ELEVEN
        _begin_play(b, g, p, sigq)
        return False
    _score(b, g, p, 1 - seat % 2, ladder[0])
    return True


# ---------------------------------------------------------------------------- legal actions
@unit
def _instructed_plays(b, g, p, hands, seat, mask):
    """Narrow the seat's plays to the instruction in force: high, low or a rank (engine State._playable)."""
    hs = p[P_HS]
    ins = g[b, F_INSTR] - 1
    held = 0
    best = -1
    low = 1 << 30
    has_rank = False
    for i in range(hs):
        c = hands[b, seat, i]
        if c >= 0:
            held += 1
            st = p[P_BASE_STRENGTH + c]
            best = max(best, st)
            low = min(low, st)
            has_rank = has_rank or p[P_RANK_OF + c] == ins - 3
    if held <= 1 or (ins >= 3 and not has_rank):  # a last card, or a rank not held: no effect
        return
    for i in range(hs):
        c = hands[b, seat, i]
        if c >= 0:
            st = p[P_BASE_STRENGTH + c]
            keep = st == best if ins == 1 else (st == low if ins == 2 else p[P_RANK_OF + c] == ins - 3)
            if not keep:
                mask[b, p[P_A_PLAY] + c] = 0


@helper
def _instruct_first(b, g, p, hands):
    """A governor's partner about to play with more than one card waits for his governor's instruction.

    Every way to a turn passes here (engine ``State._to_turn``): the seat at turn has had his
    instruction for this card unless it is a new card (``F_INSTR`` 0, reset by each play).
    """
    if p[P_INSTRUCTIONS] and g[b, F_PHASE] == PH_TURN and g[b, F_INSTR] == 0:
        seat = g[b, F_TURN]
        gov = _governor(b, g, p, seat)
        if seat != gov:
            held = 0
            for i in range(p[P_HS]):
                held += hands[b, seat, i] >= 0
            if held > 1:
                g[b, F_INSTRUCTOR] = gov
                g[b, F_PHASE] = PH_INSTRUCT


@helper
def write_mask(b, g, p, callq, sigq, hands, sigtrue, mask):
    mask[b, :] = 0
    seat = actor_of(b, g, callq, sigq)
    ph = g[b, F_PHASE]
    hs = p[P_HS]
    if ph == PH_TURN:
        if g[b, F_SPECIAL] == IRON and p[P_BLIND]:
            for i in range(hs):
                if hands[b, seat, i] >= 0:
                    mask[b, p[P_A_SLOT] + i] = 1
        else:
            for i in range(hs):
                c = hands[b, seat, i]
                if c >= 0:
                    mask[b, p[P_A_PLAY] + c] = 1
            if hands[b, seat, hs] >= 0:  # the card passed to him (put_4p)
                mask[b, p[P_A_PLAY] + hands[b, seat, hs]] = 1
            if g[b, F_INSTR] > 1:
                _instructed_plays(b, g, p, hands, seat, mask)
        special = g[b, F_SPECIAL] != 0
        budget = _raise_budget(g[b, F_RAISES], p[P_MAX_RAISES], 0)
        if _may_raise(g[b, F_LEVEL], p[P_LADDER_TOP], special, g[b, F_ALL_IN_ACCEPTED], g[b, F_LAST_RAISER],
                      seat % 2, budget):
            mask[b, p[P_A_RAISE]] = 1
        if _may_all_in(p[P_ALL_IN], g[b, F_ALL_IN_CALLED], special, g[b, F_LAST_RAISER], seat % 2, budget):
            mask[b, p[P_A_ALL_IN]] = 1
        if p[P_FOLD]:
            mask[b, p[P_A_FOLD]] = 1
        if _may_redeal(p[P_REDEAL], g[b, F_REDEAL_USED], g[b, F_PLAY_STARTED], seat, _next_seat(g[b, F_DEALER], p[P_N]),
                       p[P_N], p[P_D] - g[b, F_DRAWN], hs):
            mask[b, p[P_A_REDEAL]] = 1
        if p[P_ENVIDO]:  # before his own card of the first trick (all his cards still held)
            held = 0
            for i in range(hs):
                held += hands[b, seat, i] >= 0
            if _may_call_envido(_envido_open_now(b, g, p), held < hs):
                for k in range(3):
                    mask[b, p[P_A_ENVIDO] + k] = 1
        if p[P_FLOR] and _sings_now(b, g, p, hands, seat):  # flor is compulsory: sing it (or fold) before anything else
            mask[b, :] = 0
            mask[b, p[P_A_FLOR]] = 1
            if p[P_FOLD]:
                mask[b, p[P_A_FOLD]] = 1
    elif ph == PH_ANSWER:
        mask[b, p[P_A_ACCEPT]] = 1
        mask[b, p[P_A_REFUSE]] = 1
        if g[b, F_CALL_KIND] == K_RAISE and _may_counter(p[P_COUNTER], g[b, F_CALL_LEVEL], p[P_LADDER_TOP],
                                                         _raise_budget(g[b, F_RAISES], p[P_MAX_RAISES], 1)):
            mask[b, p[P_A_RAISE]] = 1
        if _may_envido_on_truco(_envido_open_now(b, g, p), g[b, F_CALL_KIND] == K_RAISE, g[b, F_CALL_LEVEL]):
            for k in range(3):  # envido goes first: the answer to the first truco may be an envido
                mask[b, p[P_A_ENVIDO] + k] = 1
        if p[P_FLOR] and _sings_now(b, g, p, hands, seat):  # flor is sung before answering a truco
            mask[b, :] = 0
            mask[b, p[P_A_FLOR]] = 1
    elif ph == PH_ENVIDO:
        mask[b, p[P_A_ACCEPT]] = 1
        mask[b, p[P_A_REFUSE]] = 1
        last = g[b, F_ENV_CALLS + min(g[b, F_ENV_N], 4) - 1]
        envidos = 0
        for i in range(min(g[b, F_ENV_N], 4)):
            envidos += g[b, F_ENV_CALLS + i] == ENVIDO
        for k in range(3):
            if _may_raise_envido(last, envidos, k):
                mask[b, p[P_A_ENVIDO] + k] = 1
        if p[P_FLOR] and _sings_now(b, g, p, hands, seat):  # a flor holder never answers an envido
            mask[b, :] = 0
            mask[b, p[P_A_FLOR]] = 1
    elif ph == PH_FLOR:
        mask[b, p[P_A_ACCEPT]] = 1
        mask[b, p[P_A_REFUSE]] = 1
    elif ph == PH_ELEVEN:
        mask[b, p[P_A_ACCEPT]] = 1
        mask[b, p[P_A_REFUSE]] = 1
    elif ph == PH_INSTRUCT:
        for t in range(p[P_N_INSTRUCT]):
            mask[b, p[P_A_INSTRUCT] + t] = 1
    elif ph == PH_GIVE:  # one of his highest cards
        best = -1
        for i in range(hs):
            c = hands[b, seat, i]
            if c >= 0:
                best = max(best, p[P_BASE_STRENGTH + c])
        for i in range(hs):
            c = hands[b, seat, i]
            if c >= 0 and p[P_BASE_STRENGTH + c] == best:
                mask[b, p[P_A_GIVE] + c] = 1
    elif ph == PH_DISCARD:
        for i in range(hs + 1):
            c = hands[b, seat, i]
            if c >= 0:
                mask[b, p[P_A_DISCARD] + c] = 1
    elif ph == PH_SIGNAL:
        base = p[P_A_SIGNAL]
        mask[b, base] = 1
        if p[P_SIG_MODE] == 2:
            row = g[b, F_VIRA] + 1
            for i in range(hs):
                c = hands[b, seat, i]
                if c >= 0:
                    for t in range(1, p[P_NTOK]):
                        if sigtrue[row, c, t]:
                            mask[b, base + t] = 1
        else:
            for t in range(1, p[P_NTOK]):
                mask[b, base + t] = 1


# ---------------------------------------------------------------------------- observation
@helper
def write_obs(b, g, p, callq, sigq, sigs, hands, old_hands, played, twin, tlead, manilha, obs):
    """The observation of the acting seat, exactly as ``observe.Encoder.encode`` writes it."""
    n, hs, D = p[P_N], p[P_HS], p[P_D]
    ns = 2
    o = obs[b]
    o[:] = 0.0
    seat = actor_of(b, g, callq, sigq)
    ph = g[b, F_PHASE]
    o[p[P_O_TO_ACT] + 0] = 1.0  # the observer is the actor: relative seat 0
    o[p[P_O_DECISION] + ph] = 1.0
    if not (g[b, F_SPECIAL] == IRON and p[P_BLIND]):
        for i in range(hs):
            c = hands[b, seat, i]
            if c >= 0:
                o[p[P_O_HAND] + c] = 1.0
        if hands[b, seat, hs] >= 0:  # the card passed to him (put_4p)
            o[p[P_O_HAND] + hands[b, seat, hs]] = 1.0
    for i in range(hs):
        if hands[b, seat, i] >= 0:
            o[p[P_O_SLOTS] + i] = 1.0
    if p[P_O_FIRST_HAND] >= 0 and g[b, F_HAS_OLD]:
        for i in range(hs):
            o[p[P_O_FIRST_HAND] + old_hands[b, seat, i]] = 1.0
    if p[P_PARTNER_HAND] == 2 or (p[P_PARTNER_HAND] and g[b, F_ELEVEN_SEAT] >= 0 and g[b, F_ELEVEN_SEAT] % 2 == seat % 2):
        partner = p[P_PARTNER + seat]
        for i in range(hs):
            c = hands[b, partner, i]
            if c >= 0:
                o[p[P_O_PARTNER_HAND] + c] = 1.0
    op = p[P_O_PLAYED]
    for s in range(n):
        r = _wrap(s - seat, n)
        for t in range(hs):
            c = played[b, s, t]
            if c >= 0:
                o[op + (t * n + r) * D + c] = 1.0
    tricks = g[b, F_TRICKS]
    for t in range(tricks):
        w = twin[b, t]
        o[p[P_O_TRICK_WINNER] + t * (n + 1) + (_wrap(w - seat, n) if w >= 0 else n)] = 1.0
        o[p[P_O_TRICK_LEADER] + t * n + _wrap(tlead[b, t] - seat, n)] = 1.0
    if tricks < hs:
        o[p[P_O_TRICK_LEADER] + tricks * n + _wrap(g[b, F_LEADER] - seat, n)] = 1.0
    for r in range(n):
        o[p[P_O_ACTIVE] + r] = 1.0
    if g[b, F_SITOUT]:  # put_4p: the passers are out of the hand
        o[p[P_O_ACTIVE] + _wrap(g[b, F_DEALER] - seat, n)] = 0.0
        o[p[P_O_ACTIVE] + _wrap(g[b, F_DEALER] + 1 - seat, n)] = 0.0
    if p[P_O_GIVEN] >= 0:
        if g[b, F_GIVEN + seat]:
            o[p[P_O_GIVEN] + g[b, F_GIVEN + seat] - 1] = 1.0
        if g[b, F_DISCARD + seat]:
            o[p[P_O_DISCARDED] + g[b, F_DISCARD + seat] - 1] = 1.0
    o[p[P_O_STAKE] + g[b, F_LEVEL]] = 1.0
    o[p[P_O_RAISES] + min(g[b, F_RAISES], p[P_RAISE_CAP])] = 1.0
    lr = g[b, F_LAST_RAISER]
    o[p[P_O_LAST_RAISER] + (0 if lr < 0 else 1 + (lr - seat % 2) % ns)] = 1.0
    if p[P_O_ALL_IN] >= 0:
        if g[b, F_ALL_IN_CALLED]:
            o[p[P_O_ALL_IN]] = 1.0
        if g[b, F_ALL_IN_ACCEPTED]:
            o[p[P_O_ALL_IN] + 1] = 1.0
    if p[P_O_SPECIAL] >= 0 and g[b, F_SPECIAL] > 0:
        o[p[P_O_SPECIAL] + g[b, F_SPECIAL] - 1] = 1.0
    kind = g[b, F_CALL_KIND]
    if kind > 0:
        o[p[P_O_CALL] + (0 if kind == K_RAISE else (1 if kind == K_ALL_IN else 2))] = 1.0
        o[p[P_O_CALL_CALLER] + _wrap(g[b, F_CALL_CALLER] - seat, n)] = 1.0
        if kind == K_RAISE:
            o[p[P_O_CALL_LEVEL] + g[b, F_CALL_LEVEL]] = 1.0
    v = g[b, F_VIRA]
    if p[P_O_VIRA] >= 0 and v >= 0:
        o[p[P_O_VIRA] + v] = 1.0
        for c in range(D):
            if manilha[v + 1, c]:
                o[p[P_O_MANILHAS] + c] = 1.0
    target = np.float32(p[P_TARGET])
    for sd in range(ns):
        r = (sd - seat % 2) % ns
        x = g[b, F_SCORE + sd]
        if x:
            o[p[P_O_SCORE] + r] = min(np.float32(x) / target, np.float32(1.0))
        x = g[b, F_HP + sd]
        if x:
            o[p[P_O_HAND_POINTS] + r] = min(np.float32(x) / target, np.float32(1.0))
    o[p[P_O_DEALER] + _wrap(g[b, F_DEALER] - seat, n)] = 1.0
    if p[P_O_SIGNALS] >= 0:
        w = p[P_SIG_WIDTH]
        ntok = p[P_NTOK]
        for i in range(min(g[b, F_NSIG], p[P_SIG_SLOTS])):
            base = p[P_O_SIGNALS] + i * w
            o[base] = 1.0
            o[base + 1 + _wrap(sigs[b, i, 0] - seat, n)] = 1.0
            tok = sigs[b, i, 1] if (sigs[b, i, 3] >> seat) & 1 else ntok
            o[base + 1 + n + tok] = 1.0
            o[base + 2 + n + ntok + min(sigs[b, i, 2], hs - 1)] = 1.0
    if p[P_O_ENVIDO_CALLS] >= 0:
        for i in range(min(g[b, F_ENV_N], p[P_ENVIDO_CHAIN])):
            o[p[P_O_ENVIDO_CALLS] + i * 3 + g[b, F_ENV_CALLS + i]] = 1.0
        if g[b, F_ENV_CALLER]:
            o[p[P_O_ENVIDO_CALLER] + _wrap(g[b, F_ENV_CALLER] - 1 - seat, n)] = 1.0
        if g[b, F_ENV_DONE]:
            o[p[P_O_ENVIDO_DONE]] = 1.0
        if g[b, F_ENV_HOLDER]:
            o[p[P_O_ENVIDO_WINNER] + _wrap(g[b, F_ENV_HOLDER] - 1 - seat, n)] = 1.0
            o[p[P_O_ENVIDO_POINTS] + min(g[b, F_ENV_POINTS], p[P_ENVIDO_MAX_POINTS])] = 1.0
    if p[P_O_FLOR] >= 0:
        for s in range(n):
            if (g[b, F_FLOR_SEATS] >> s) & 1:
                o[p[P_O_FLOR] + _wrap(s - seat, n)] = 1.0
        if g[b, F_FLOR_HOLDER]:
            o[p[P_O_FLOR_WINNER] + _wrap(g[b, F_FLOR_HOLDER] - 1 - seat, n)] = 1.0
            o[p[P_O_FLOR_POINTS] + g[b, F_FLOR_POINTS] - p[P_FLOR_MIN]] = 1.0
    if p[P_O_GOVERNOR] >= 0:
        o[p[P_O_GOVERNOR] + _wrap(g[b, F_DEALER] - seat, n)] = 1.0
        o[p[P_O_GOVERNOR] + _wrap(g[b, F_DEALER] + 1 - seat, n)] = 1.0
    if p[P_O_INSTRUCTION] >= 0:
        o[p[P_O_INSTRUCTION] + g[b, F_INSTR]] = 1.0


# ---------------------------------------------------------------------------- the batched step
@helper
def _finish(b, g, p, rew):
    """Rewards of a hand that just ended; True when the episode is over."""
    n = p[P_N]
    over = g[b, F_GAME_OVER] or p[P_EPISODE_HAND]
    if not p[P_REWARD_WIN]:  # what the hand scored beyond what was paid when scored (envido)
        d = np.float32(g[b, F_HP] - g[b, F_PAID] - g[b, F_HP + 1] + g[b, F_PAID + 1])
        for s in range(n):
            rew[b, s] += d if s % 2 == 0 else -d
    elif over:
        if g[b, F_GAME_OVER]:
            win = g[b, F_WINNER]
        else:
            g0 = g[b, F_SCORE] - g[b, F_START]
            g1 = g[b, F_SCORE + 1] - g[b, F_START + 1]
            win = 0 if g0 > g1 else (1 if g1 > g0 else -1)
        if win >= 0:
            for s in range(n):
                rew[b, s] = p[P_WIN_OWN] if s % 2 == win else p[P_WIN_OTHER]
    return over


def _entry_kernels(rules_digest: int):
    """The entry kernel, with ``rules_digest`` (of hand_rules.py, whose functions it compiles in) in its cache key.

    numba's cache checks only the stamp of the file that defines a cached function: an edit of
    hand_rules.py alone would leave the old decisions in the cached kernel. It also hashes a closure's
    cells into the cache key, so the kernel closes over a digest of hand_rules.py's source.

    One entry for the step and the reset: each entry links (and LLVM optimizes and emits) its own copy
    of everything it calls, so a second one would double the compile.
    """

    @njit(cache=True, nogil=True, **NO_REFCOUNT)
    def step_serial(reset, actions, g, p, ladder, strength, decided, manilha, sigtrue, rng, callq, sigq, sigs, hands,
                    old_hands, played, tcards, tseats, twin, tlead, deck, obs, mask, rew, done, seat_out):
        """One decision for every game with ``actions[b] >= 0`` (the others wait), scored, a finished hand
        dealing the next (auto-reset); ``reset``: a new episode instead for the games with ``actions[b]`` 1.
        Then every game's seat to act (a governor's instruction first), its observation and legal actions.

        Releases the GIL: :mod:`truc_env.batch.vector` runs slices of the batch on several threads.
        """
        if rules_digest < 0:  # never (the digest is positive): the digest is a cell of this closure
            return
        for b in range(g.shape[0]):
            a = actions[b]
            for s in range(rew.shape[1]):
                rew[b, s] = 0.0
            done[b] = False
            deal = False
            if reset:
                if a:
                    _new_episode(b, g, p, rng)
                    deal = True
            elif a < 0:
                pass
            elif _apply(b, a, g, p, ladder, strength, decided, callq, sigq, sigs, hands, old_hands, played,
                        tcards, tseats, twin, tlead, deck):
                if _finish(b, g, p, rew):
                    done[b] = True
                    _new_episode(b, g, p, rng)
                else:
                    g[b, F_DEALER] = _next_seat(g[b, F_DEALER], p[P_N])
                deal = True
            elif (p[P_ENVIDO] or p[P_FLOR]) and not p[P_REWARD_WIN]:  # reward="points": envido, flor when settled
                d = g[b, F_HP] - g[b, F_PAID] - g[b, F_HP + 1] + g[b, F_PAID + 1]
                for s in range(rew.shape[1]):
                    rew[b, s] = d if s % 2 == 0 else -d
                g[b, F_PAID] = g[b, F_HP]
                g[b, F_PAID + 1] = g[b, F_HP + 1]
            if deal:  # one call site: inlined once
                _begin_hand(b, g, p, rng, hands, old_hands, played, tcards, tseats, twin, tlead, deck, sigs, sigq)
            _instruct_first(b, g, p, hands)
            seat_out[b] = actor_of(b, g, callq, sigq)
            if obs.shape[1] > 0:
                write_obs(b, g, p, callq, sigq, sigs, hands, old_hands, played, twin, tlead, manilha, obs)
            write_mask(b, g, p, callq, sigq, hands, sigtrue, mask)

    return step_serial


SHARED_RULES_DIGEST = int(hashlib.sha256(Path(hand_rules.__file__).read_bytes()).hexdigest()[:15], 16)
step_serial = _entry_kernels(SHARED_RULES_DIGEST)


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def random_legal(mask, rng, out, legal):
    """A uniformly random legal action per row of ``mask`` (for benchmarks and random opponents).

    ``legal`` is scratch space for one row's legal actions: one pass without a branch collects them.
    """
    for b in range(mask.shape[0]):
        k = 0
        for a in range(mask.shape[1]):
            legal[k] = a
            k += mask[b, a] != 0
        out[b] = legal[rand(rng, b, k)] if k else -1


@njit(cache=True, **NO_REFCOUNT)
def first_illegal(actions, mask):
    """The first game whose action is neither negative (wait) nor legal in ``mask``, or -1."""
    A = mask.shape[1]
    for b in range(actions.shape[0]):
        a = actions[b]
        if a >= 0 and (a >= A or mask[b, a] == 0):
            return b
    return -1


# ---------------------------------------------------------------------------- one game's moves, for tree walkers
# agents.cfr.hu_mccfr_numba walks single games on these rows (a decision applied, a new hand dealt)
apply_decision = _apply
new_episode = _new_episode
begin_hand = _begin_hand
