"""Numba kernels of the batched engine for ``put_n``: Put for 3 to 6 independent players.

A second, smaller array re-implementation of :mod:`truc_env.game.engine`, for the one variant the main
kernel (:mod:`truc_env.batch._vector_kernels`) does not play: every seat its own side, ``players + 1``
cards and tricks, a put answered by every other player still in, each of whom accepts or resigns.
There is no ladder, no raise, no fold, no redeal, no vira, no special hand and no signal, so none
of that is here, and the main kernel's compile time (paid by every cold cache) does not grow.
:class:`truc_env.batch.vector.VectorEnv` plugs it in beside the main kernel with the same interface and
the same observations (``observe.Encoder``'s layout, byte for byte).

Rules come from the same places as the main kernel's: tables that
:func:`truc_env.batch.vector.put_n_tables` / ``put_n_params`` compute from ``rules.py`` / ``engine.py``
(card strengths, who has won with which trick counts, win rewards, the options, action ids and
observation offsets), and the scalar decisions of :mod:`truc_env.game.hand_rules` (trick leader, put
legality, raise cap, hand value, put value, next seat), compiled here from the functions the engine
calls. The per-game random streams, the shuffle, the scoring (``add_points``, with
``hand_rules.wins_game``) and the batch helpers (``seed_streams``, ``random_legal``,
``first_illegal``) are the main kernel's. What this module
restates is bound to its arrays: the seats still in as a bitmask, the answer queue, the trick with
a resigned seat's card withdrawn, the index into the winners table and the observation writes;
docs/architecture.md lists each decision with its source, and ``tests/test_vector_put_n.py``
checks the whole thing step by step against ``engine.py``.

Layout of the per-game state: ``g[b, F_*]`` (int32 scalars), cards as deck indices (-1 = none),
parameters ``p[P_*]``; ``paid[b, s]`` (float64) is the zero-sum return already paid to seat ``s``
this episode (``reward="points"``), so that a step's reward is the engine's ``returns()`` difference
to the last bit.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from truc_env.batch import _vector_kernels
from truc_env.batch._vector_kernels import (
    NO_REFCOUNT,
    add_points,
    first_illegal,
    helper,
    rand,
    random_legal,
    seed_streams,
    shuffle_deck,
    unit,
)
from truc_env.game import hand_rules

__all__ = ["first_illegal", "random_legal", "seed_streams", "step_serial"]

MAX_PLAYERS = 6

# ---------------------------------------------------------------------------- parameters (p[P_*])
P_N = 0  # players
P_HS = 1  # hand size (= tricks)
P_D = 2  # deck size
P_EPISODE_HAND = 3  # 1: one hand per episode, 0: a whole game
P_REWARD_WIN = 4  # 1: win rewards at the end of the episode, 0: zero-sum points as scored
P_TARGET = 5
P_MAX_RAISES = 6  # -1: no cap (a put counts as a raise)
P_DEALER = 7  # first dealer: a seat, or -1 = random
P_START_SCORE_PROB = 8  # per mille: a hand episode starts from a random score
P_STAKE = 9  # the ladder's first rung: a hand's value without a put, and an all-refused put's
P_A_PLAY = 10
P_A_ACCEPT = 11
P_A_REFUSE = 12
P_A_PUT = 13
P_DEC_TURN = 14  # index of the decision kinds in the observation's `decision` section
P_DEC_ANSWER = 15
P_CALL_PUT = 16  # index of the put in the `call` section
P_RAISE_CAP = 17
P_SHUFFLE_CARDS = 18  # cards a hand draws (players x hand size): only these deck positions are shuffled
# observation offsets
P_O_TO_ACT = 20
P_O_DECISION = 21
P_O_HAND = 22
P_O_SLOTS = 23
P_O_PLAYED = 24
P_O_TRICK_WINNER = 25
P_O_TRICK_LEADER = 26
P_O_ACTIVE = 27
P_O_STAKE = 28
P_O_RAISES = 29
P_O_LAST_RAISER = 30
P_O_ALL_IN = 31
P_O_CALL = 32
P_O_CALL_CALLER = 33
P_O_SCORE = 34
P_O_HAND_POINTS = 35
P_O_DEALER = 36
N_PARAMS = 40

# ---------------------------------------------------------------------------- fields (g[b, F_*])
F_PHASE = 0  # PH_TURN or PH_ANSWER
F_DEALER = 1
F_TURN = 2
F_LEADER = 3
F_TRICKS = 4  # finished tricks (= trick number of the trick under way)
F_NTRICK = 5  # cards in the trick under way (of seats still in)
F_ACTIVE = 6  # bit per seat still in the hand
F_NACTIVE = 7
F_CALLED = 8  # the put was called this hand
F_ACCEPTED = 9  # ... and not refused by everyone
F_RAISES = 10
F_LAST_RAISER = 11  # the caller of the accepted put (his own side), -1 none
F_CALLER = 12  # the caller of the pending put, -1 none
F_CALLQ_POS = 13
F_CALLQ_LEN = 14
F_RESIGNED = 15  # bit per seat that refused the pending put
F_GAME_OVER = 16
F_WINNER = 17
F_SCORE = 18  # .. + MAX_PLAYERS
F_START = F_SCORE + MAX_PLAYERS
F_HP = F_START + MAX_PLAYERS
N_FIELDS = F_HP + MAX_PLAYERS

PH_TURN = 0
PH_ANSWER = 1

# ---------------------------------------------------------------------------- the shared decisions
_shared = njit(**NO_REFCOUNT)
_next_seat = _shared(hand_rules.next_seat)
_hand_value = _shared(hand_rules.hand_value)
_put_n_value = _shared(hand_rules.put_n_value)
_may_all_in = _shared(hand_rules.may_all_in)
_raise_budget = _shared(hand_rules.raise_budget)
_trick_lead = _shared(hand_rules.trick_lead)


@helper
def _next_active(b, g, p, seat):
    """The next seat after ``seat`` in play order still in the hand (engine State.next_active)."""
    n = p[P_N]
    active = g[b, F_ACTIVE]
    for k in range(1, n + 1):
        s = (seat + k) % n
        if (active >> s) & 1:
            return s
    return -1


@helper
def _to_turn(b, g, seat):
    g[b, F_TURN] = seat
    g[b, F_PHASE] = PH_TURN


# ---------------------------------------------------------------------------- hand set-up
@unit
def _begin_hand(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck):
    n, hs = p[P_N], p[P_HS]
    for f in range(F_PHASE, F_SCORE):
        if f != F_DEALER and f != F_GAME_OVER and f != F_WINNER:
            g[b, f] = 0
    for s in range(n):
        g[b, F_HP + s] = 0
        for i in range(hs):
            played[b, s, i] = -1
        tcards[b, s] = -1
        tseats[b, s] = -1
    for i in range(hs):
        twin[b, i] = -2
        tlead[b, i] = -1
    g[b, F_ACTIVE] = (1 << n) - 1
    g[b, F_NACTIVE] = n
    g[b, F_LAST_RAISER] = -1
    g[b, F_CALLER] = -1
    shuffle_deck(b, rng, deck, p[P_SHUFFLE_CARDS])
    d = g[b, F_DEALER]
    for k in range(hs * n):  # one card at a time, from the seat after the dealer round the table
        hands[b, (d + 1 + k) % n, k // n] = deck[b, k]
    mano = _next_seat(d, n)
    g[b, F_LEADER] = mano
    _to_turn(b, g, mano)


@unit
def _new_episode(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck, paid):
    n = p[P_N]
    dealer = p[P_DEALER]
    if dealer < 0:
        dealer = rand(rng, b, n)
    g[b, F_DEALER] = dealer
    g[b, F_GAME_OVER] = 0
    g[b, F_WINNER] = -1
    random_score = p[P_EPISODE_HAND] and p[P_START_SCORE_PROB] > 0 and rand(rng, b, 1000) < p[P_START_SCORE_PROB]
    for s in range(n):
        x = rand(rng, b, p[P_TARGET]) if random_score else 0
        g[b, F_SCORE + s] = x
        g[b, F_START + s] = x
        paid[b, s] = 0.0
    _begin_hand(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck)


# ---------------------------------------------------------------------------- scoring
@helper
def _score(b, g, p, seat, points):
    add_points(b, g, F_SCORE, F_HP, F_GAME_OVER, F_WINNER, seat, points, p[P_TARGET])


@helper
def _value(b, g, p, seat):
    """What the hand is worth to its winner now (engine State._hand_value)."""
    if g[b, F_ACCEPTED]:
        return _put_n_value(g[b, F_NACTIVE])
    return _hand_value(p[P_STAKE], False, False, 0, p[P_STAKE], False, p[P_TARGET] - g[b, F_SCORE + seat])


@helper
def _decided(b, g, p, decided, twin, ntricks):
    """The winning seat (-1 nobody) once no remaining trick can change it, else -2.

    Only the tricks of seats still in count. The winners table is indexed by the highest count, the
    next highest and the tricks left (``put_n_tables`` checks that reduction against
    ``engine.possible_winners`` on every count vector these Rules can reach).
    """
    n, hs = p[P_N], p[P_HS]
    active = g[b, F_ACTIVE]
    top = -1
    second = -1
    holder = -1
    for s in range(n):
        if not (active >> s) & 1:
            continue
        c = 0
        for t in range(ntricks):
            c += twin[b, t] == s
        if c > top:
            second = top
            top = c
            holder = s
        elif c > second:
            second = c
    w = decided[(top * (hs + 1) + second) * (hs + 1) + hs - ntricks]
    return holder if w == 0 else w


@helper
def _end_if_decided(b, g, p, decided, twin, ntricks):
    """Score the hand if no remaining trick can change its winner; True when it is over."""
    w = _decided(b, g, p, decided, twin, ntricks)
    if w == -2:
        return False
    if w >= 0:
        _score(b, g, p, w, _value(b, g, p, w))
    return True


# ---------------------------------------------------------------------------- applying decisions
@helper
def _play(b, g, p, strength, decided, hands, played, tcards, tseats, twin, tlead, seat, card):
    for i in range(p[P_HS]):
        if hands[b, seat, i] == card:
            hands[b, seat, i] = -1
    k = g[b, F_NTRICK]
    tcards[b, k] = card
    tseats[b, k] = seat
    g[b, F_NTRICK] = k + 1
    t = g[b, F_TRICKS]
    played[b, seat, t] = card
    if k + 1 < g[b, F_NACTIVE]:  # every seat is its own side: the trick goes on to the last seat still in
        _to_turn(b, g, _next_active(b, g, p, seat))
        return False
    best = winner = winner_side = -1
    for i in range(k + 1):
        s = tseats[b, i]
        best, winner, winner_side = _trick_lead(best, winner, winner_side, strength[tcards[b, i]], s, s)
    leader = g[b, F_LEADER]
    twin[b, t] = winner
    tlead[b, t] = leader
    if _end_if_decided(b, g, p, decided, twin, t + 1):
        return True
    g[b, F_TRICKS] = t + 1
    g[b, F_NTRICK] = 0
    if winner >= 0:  # a tied trick: its leader leads again
        leader = winner
    if not (g[b, F_ACTIVE] >> leader) & 1:
        leader = _next_active(b, g, p, leader)
    g[b, F_LEADER] = leader
    _to_turn(b, g, leader)
    return False


@helper
def _settle(b, g, p, decided, tcards, tseats, twin):
    """Every other player has answered the put: the resigned are out (engine State._settle_put_n)."""
    caller = g[b, F_CALLER]
    out = g[b, F_RESIGNED]
    active = g[b, F_ACTIVE] & ~out
    g[b, F_ACTIVE] = active
    m = 0
    for s in range(p[P_N]):
        m += (active >> s) & 1
    g[b, F_NACTIVE] = m
    k = 0
    for i in range(g[b, F_NTRICK]):  # a resigned seat's card of the trick under way is withdrawn
        if not (out >> tseats[b, i]) & 1:
            tcards[b, k] = tcards[b, i]
            tseats[b, k] = tseats[b, i]
            k += 1
    for i in range(k, g[b, F_NTRICK]):
        tcards[b, i] = -1
        tseats[b, i] = -1
    g[b, F_NTRICK] = k
    if (out >> g[b, F_LEADER]) & 1:  # a lead owed to a resigned seat passes to the next seat still in
        g[b, F_LEADER] = _next_active(b, g, p, g[b, F_LEADER])
    g[b, F_CALLER] = -1
    g[b, F_CALLQ_POS] = 0
    g[b, F_CALLQ_LEN] = 0
    g[b, F_PHASE] = PH_TURN  # the caller's turn, his card still to play
    if m == 1:  # all resigned
        _score(b, g, p, caller, p[P_STAKE])
        return True
    g[b, F_ACCEPTED] = 1
    g[b, F_RAISES] += 1
    g[b, F_LAST_RAISER] = caller
    if g[b, F_TRICKS] > 0:  # resignations can decide the hand at once
        return _end_if_decided(b, g, p, decided, twin, g[b, F_TRICKS])
    return False


@helper
def actor_of(b, g, callq):
    if g[b, F_PHASE] == PH_ANSWER:
        return callq[b, g[b, F_CALLQ_POS]]
    return g[b, F_TURN]


@helper
def _apply(b, a, g, p, strength, decided, callq, hands, played, tcards, tseats, twin, tlead):
    """Apply a legal decision; True when the hand ended."""
    seat = actor_of(b, g, callq)
    if g[b, F_PHASE] == PH_TURN:
        if a == p[P_A_PUT]:  # every other player still in answers, in order after the caller
            g[b, F_CALLED] = 1
            g[b, F_CALLER] = seat
            m = 0
            s = _next_active(b, g, p, seat)
            while s != seat:
                callq[b, m] = s
                m += 1
                s = _next_active(b, g, p, s)
            g[b, F_CALLQ_POS] = 0
            g[b, F_CALLQ_LEN] = m
            g[b, F_RESIGNED] = 0
            g[b, F_PHASE] = PH_ANSWER
            return False
        return _play(b, g, p, strength, decided, hands, played, tcards, tseats, twin, tlead, seat, a - p[P_A_PLAY])
    if a == p[P_A_REFUSE]:
        g[b, F_RESIGNED] |= 1 << seat
    g[b, F_CALLQ_POS] += 1
    if g[b, F_CALLQ_POS] < g[b, F_CALLQ_LEN]:
        return False
    return _settle(b, g, p, decided, tcards, tseats, twin)


# ---------------------------------------------------------------------------- mask and observation
@helper
def write_mask(b, g, p, callq, hands, mask):
    mask[b, :] = 0
    if g[b, F_PHASE] == PH_ANSWER:
        mask[b, p[P_A_ACCEPT]] = 1
        mask[b, p[P_A_REFUSE]] = 1
        return
    seat = g[b, F_TURN]
    for i in range(p[P_HS]):
        c = hands[b, seat, i]
        if c >= 0:
            mask[b, p[P_A_PLAY] + c] = 1
    budget = _raise_budget(g[b, F_RAISES], p[P_MAX_RAISES], 0)
    if _may_all_in(True, g[b, F_CALLED], False, g[b, F_LAST_RAISER], seat, budget):
        mask[b, p[P_A_PUT]] = 1


@helper
def write_obs(b, g, p, callq, hands, played, twin, tlead, obs):
    """The observation of the acting seat, exactly as ``observe.Encoder.encode`` writes it."""
    n, hs, D = p[P_N], p[P_HS], p[P_D]
    o = obs[b]
    o[:] = 0.0
    seat = actor_of(b, g, callq)
    answer = g[b, F_PHASE] == PH_ANSWER
    o[p[P_O_TO_ACT]] = 1.0  # the observer is the actor: relative seat 0
    o[p[P_O_DECISION] + (p[P_DEC_ANSWER] if answer else p[P_DEC_TURN])] = 1.0
    for i in range(hs):
        c = hands[b, seat, i]
        if c >= 0:
            o[p[P_O_HAND] + c] = 1.0
            o[p[P_O_SLOTS] + i] = 1.0
    for s in range(n):  # withdrawn cards included: every seat saw them played
        r = (s - seat) % n
        for t in range(hs):
            c = played[b, s, t]
            if c >= 0:
                o[p[P_O_PLAYED] + (t * n + r) * D + c] = 1.0
    tricks = g[b, F_TRICKS]
    for t in range(tricks):
        w = twin[b, t]
        o[p[P_O_TRICK_WINNER] + t * (n + 1) + ((w - seat) % n if w >= 0 else n)] = 1.0
        o[p[P_O_TRICK_LEADER] + t * n + (tlead[b, t] - seat) % n] = 1.0
    if tricks < hs:
        o[p[P_O_TRICK_LEADER] + tricks * n + (g[b, F_LEADER] - seat) % n] = 1.0
    active = g[b, F_ACTIVE]
    for s in range(n):
        if (active >> s) & 1:
            o[p[P_O_ACTIVE] + (s - seat) % n] = 1.0
    o[p[P_O_STAKE]] = 1.0
    o[p[P_O_RAISES] + min(g[b, F_RAISES], p[P_RAISE_CAP])] = 1.0
    lr = g[b, F_LAST_RAISER]
    o[p[P_O_LAST_RAISER] + (0 if lr < 0 else 1 + (lr - seat) % n)] = 1.0
    if g[b, F_CALLED]:
        o[p[P_O_ALL_IN]] = 1.0
    if g[b, F_ACCEPTED]:
        o[p[P_O_ALL_IN] + 1] = 1.0
    if answer:
        o[p[P_O_CALL] + p[P_CALL_PUT]] = 1.0
        o[p[P_O_CALL_CALLER] + (g[b, F_CALLER] - seat) % n] = 1.0
    target = np.float64(p[P_TARGET])
    for s in range(n):  # as the encoder: a float64 quotient, stored as float32
        r = (s - seat) % n
        x = g[b, F_SCORE + s]
        if x:
            o[p[P_O_SCORE] + r] = min(x / target, 1.0)
        x = g[b, F_HP + s]
        if x:
            o[p[P_O_HAND_POINTS] + r] = min(x / target, 1.0)
    o[p[P_O_DEALER] + (g[b, F_DEALER] - seat) % n] = 1.0


# ---------------------------------------------------------------------------- the batched step
@helper
def _finish(b, g, p, wins, paid, rew):
    """Rewards of a hand that just ended; True when the episode is over (engine.zero_sum, episode.win_rewards)."""
    n = p[P_N]
    over = g[b, F_GAME_OVER] or p[P_EPISODE_HAND]
    if not p[P_REWARD_WIN]:  # State.returns(): each seat's points gained minus the mean, in float64
        total = 0
        for s in range(n):
            total += g[b, F_SCORE + s] - g[b, F_START + s]
        mean = total / n
        for s in range(n):
            now = (g[b, F_SCORE + s] - g[b, F_START + s]) - mean
            rew[b, s] = now - paid[b, s]
            paid[b, s] = now
    elif over:
        win = g[b, F_WINNER]
        if not g[b, F_GAME_OVER]:  # the seat strictly ahead in the points gained, else a draw (row n)
            best = -1
            win = n
            for s in range(n):
                x = g[b, F_SCORE + s] - g[b, F_START + s]
                if x > best:
                    best = x
                    win = s
                elif x == best:
                    win = n
        for s in range(n):
            rew[b, s] = wins[win, s]
    return over


@helper
def _observe(b, g, p, callq, hands, played, twin, tlead, obs, mask, seat_out):
    seat_out[b] = actor_of(b, g, callq)
    if obs.shape[1] > 0:
        write_obs(b, g, p, callq, hands, played, twin, tlead, obs)
    write_mask(b, g, p, callq, hands, mask)


def _entry_kernels(rules_digest: int):
    """The entry kernel, with ``rules_digest`` (of hand_rules.py and of the main kernel module, whose random
    stream and shuffle are compiled in here) in its cache key; one entry for step and reset, as in the main
    kernel."""

    @njit(cache=True, nogil=True, **NO_REFCOUNT)
    def step_serial(reset, actions, g, p, strength, decided, wins, rng, callq, hands, played, tcards, tseats, twin,
                    tlead, deck, paid, obs, mask, rew, done, seat_out):
        """One decision for every game with ``actions[b] >= 0`` (the others wait); auto-reset. ``reset``: a
        new episode instead for the games with ``actions[b]`` 1. Then every game is observed."""
        if rules_digest < 0:  # never (the digest is positive): the digest is a cell of this closure
            return
        for b in range(g.shape[0]):
            a = actions[b]
            for s in range(rew.shape[1]):
                rew[b, s] = 0.0
            done[b] = False
            if reset:
                if a:
                    _new_episode(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck, paid)
            elif a >= 0 and _apply(b, a, g, p, strength, decided, callq, hands, played, tcards, tseats, twin, tlead):
                if _finish(b, g, p, wins, paid, rew):
                    done[b] = True
                    _new_episode(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck, paid)
                else:
                    g[b, F_DEALER] = _next_seat(g[b, F_DEALER], p[P_N])
                    _begin_hand(b, g, p, rng, hands, played, tcards, tseats, twin, tlead, deck)
            _observe(b, g, p, callq, hands, played, twin, tlead, obs, mask, seat_out)

    return step_serial


SHARED_RULES_DIGEST = int(hashlib.sha256(Path(hand_rules.__file__).read_bytes()
                                         + Path(_vector_kernels.__file__).read_bytes()).hexdigest()[:15], 16)
step_serial = _entry_kernels(SHARED_RULES_DIGEST)
