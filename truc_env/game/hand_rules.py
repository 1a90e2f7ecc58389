"""The hand's rule decisions that are one scalar function: plain Python on ints and bools.

Both implementations of the hand call these: :mod:`truc_env.game.engine` directly, the numba kernel of
the batched engine (:mod:`truc_env.batch._vector_kernels`) through ``njit`` wrappers of the same
functions (inlined by LLVM). So a rule decided here is decided once; what the kernel still restates is listed
in docs/architecture.md (the batched engine's kernel) with the differential test that covers it.

Constraints, so that numba compiles them as they are: arguments and results are ints or bools (no
``None``, no numpy objects, no State), no imports, no closures, and no calls to one another (numba
compiles each function with this module's globals, where the others are plain Python): a caller
composes them, e.g. passes ``raise_budget(...)`` to ``may_raise``. A count that has no limit is -1
(``max_raises``), a seat that does not exist is -1.
"""

from __future__ import annotations

# what the deal makes of a hand (docs/rules.md §4, mão de onze / de ferro)
NORMAL = 0
ELEVEN = 1  # one side is at the eleven mark: its first seat after the dealer decides whether to play
IRON = 2  # both are: the hand is played blind (where the variant says so), for the first stake


def next_seat(seat: int, players: int) -> int:
    """The seat after ``seat`` round the table: the next dealer, and the dealer's mano (first to play)."""
    return (seat + 1) % players


def hand_value(stake: int, eleven: bool, iron: bool, eleven_value: int, first_stake: int,
               all_in_accepted: bool, to_target: int) -> int:
    """Points a side wins with the hand (docs/rules.md §0 stakes, §1 mon reste, §4 mão de onze / de ferro).

    ``stake``: the ladder's value at the hand's level; ``first_stake``: the ladder's first rung;
    ``to_target``: the points this side still needs to reach the target. A mão de onze is worth the
    variant's eleven value, a mão de ferro the first stake; an accepted mon reste / all-in is worth
    what the side needs to win the game, or the stake when that is more.
    """
    if eleven:
        return eleven_value
    if iron:
        return first_stake
    if all_in_accepted and to_target > stake:
        return to_target
    return stake


def put_n_value(still_in: int) -> int:
    """Points the winner of a put_n hand scores once a put is accepted (docs/rules.md §3 put_n): one
    for each opponent still in the hand (``still_in`` counts the winner too)."""
    return still_in - 1


def wins_game(score: int, target: int) -> bool:
    """A side whose score reaches the target wins the game (docs/rules.md §0)."""
    return score >= target


def raise_budget(raises: int, max_raises: int, extra: int) -> bool:
    """Is there room for ``extra`` more accepted raises under the variant's cap (-1: no cap)?"""
    return max_raises < 0 or raises + extra < max_raises


def may_raise(level: int, ladder_top: int, special: bool, all_in_accepted: bool, last_raiser_side: int,
              side: int, budget: bool) -> bool:
    """May a seat of ``side`` raise the stake on its turn (docs/rules.md §0, stakes)?

    Not at the ladder's top, not in a mão de onze / de ferro, not once an all-in is accepted, not
    twice in a row by one side (``last_raiser_side``: the side whose raise was accepted last, -1
    none), and not past the raise cap (``budget``: :func:`raise_budget` with ``extra=0``).
    """
    return level < ladder_top and not special and not all_in_accepted and last_raiser_side != side and budget


def may_all_in(has_all_in: bool, all_in_called: bool, special: bool, last_raiser_side: int, side: int,
               budget: bool) -> bool:
    """May a seat of ``side`` call mon reste / put on its turn: once a hand, where the variant has it,
    outside special hands, not right after its own side's accepted raise, within the raise cap
    (``budget``: :func:`raise_budget` with ``extra=0``)."""
    return has_all_in and not all_in_called and not special and last_raiser_side != side and budget


def may_counter(counter_raise: bool, call_level: int, ladder_top: int, budget: bool) -> bool:
    """May the answerer of a raise to ``call_level`` raise back (accepting that step, asking the next)?
    ``budget``: :func:`raise_budget` with ``extra=1``, the pending raise counted."""
    return counter_raise and call_level < ladder_top and budget


def may_redeal(redeal: bool, redeal_used: bool, play_started: bool, seat: int, mano: int, players: int,
               cards_left: int, hand_size: int) -> bool:
    """May ``seat`` ask for a redeal (docs/rules.md §1): once a hand, the seat after the dealer
    (``mano``: :func:`next_seat` of the dealer), before anything is played or raised, while the deck
    still holds a whole new deal."""
    return (redeal and not redeal_used and not play_started and seat == mano
            and cards_left >= hand_size * players)


def special_hand(eleven_rule: bool, redeal_used: bool, score0: int, score1: int, eleven_score: int) -> int:
    """What the deal makes of the hand: :data:`NORMAL`, :data:`ELEVEN` (one side at the mark) or
    :data:`IRON` (both). Decided once, on the first deal: a redeal keeps the hand as it was."""
    if not eleven_rule or redeal_used:
        return NORMAL
    at0 = score0 >= eleven_score
    at1 = score1 >= eleven_score
    if at0 and at1:
        return IRON
    if at0 or at1:
        return ELEVEN
    return NORMAL


def eleven_seat(mano: int, players: int, score0: int, eleven_score: int) -> int:
    """The seat that decides a mão de onze: the first, in play order from the mano (the seat after the
    dealer), of the side at the mark (side 0 when its score reached it, else side 1; sides alternate
    round the table, seat s plays for side s % 2, so it is the mano or the seat after him)."""
    side = 0 if score0 >= eleven_score else 1
    return mano if mano % 2 == side else (mano + 1) % players


def trick_lead(best: int, holder: int, holder_side: int, strength: int, seat: int, side: int):
    """Fold one card into the trick so far: ``(best, holder, holder_side)`` after ``seat`` (of ``side``)
    plays a card of ``strength`` (docs/rules.md §0, tricks).

    ``best`` is the strongest card so far (-1 before the first), ``holder`` the seat that leads the
    trick with it, or -1 when seats of different sides share the best strength (the trick is tied
    unless someone beats it); the first of several equal cards of one side holds it.
    """
    if strength > best:
        return strength, seat, side
    if strength == best and holder >= 0 and side != holder_side:
        return best, -1, -1
    return best, holder, holder_side


def signal_audience(seat: int, partner: int, players: int, public: bool) -> int:
    """Bitmask of the seats that see a signal as it is made (docs/rules.md §8): the sender and his
    partner, everyone when interception is certain (``intercept`` = 1). A fractional interception is a
    chance event per opponent, added to this mask afterwards."""
    if public:
        return (1 << players) - 1
    return (1 << seat) | (1 << partner)


# ---------------------------------------------------------------------------- envido and flor (docs/rules.md §6)
# the envido calls, as the kernel stores a chain and as the action layout orders them
ENVIDO = 0
REAL_ENVIDO = 1
FALTA_ENVIDO = 2
NO_SUIT = -1  # the suit argument of a card that is not there (a hand of fewer than three cards)


def envido_pip(number: int) -> int:
    """A card's envido value from its number: 1-7 count their number, the figures (10-12) count 0."""
    return number if number <= 7 else 0


def envido_score(pip0: int, suit0: int, pip1: int, suit1: int, pip2: int, suit2: int) -> int:
    """A seat's envido points from its dealt cards (up to three; a missing card has suit :data:`NO_SUIT`):
    20 + the two highest pips of two cards of one suit, else his highest pip."""
    best = 0
    if suit0 >= 0:
        best = max(best, pip0)
    if suit1 >= 0:
        best = max(best, pip1)
    if suit2 >= 0:
        best = max(best, pip2)
    if suit0 >= 0 and suit0 == suit1:
        best = max(best, 20 + pip0 + pip1)
    if suit0 >= 0 and suit0 == suit2:
        best = max(best, 20 + pip0 + pip2)
    if suit1 >= 0 and suit1 == suit2:
        best = max(best, 20 + pip1 + pip2)
    return best


def has_flor(suit0: int, suit1: int, suit2: int) -> bool:
    """Three dealt cards of one suit."""
    return suit0 >= 0 and suit0 == suit1 and suit1 == suit2


def flor_score(pip0: int, pip1: int, pip2: int) -> int:
    """The points of a flor (three cards of one suit): 20 + the three pips."""
    return 20 + pip0 + pip1 + pip2


def wins_announcement(points: int, rival: int, first: bool) -> bool:
    """Does a seat with ``points`` beat a rival with ``rival`` points at envido (or flor against flor)?
    Ties go to the seat nearer the mano: ``first`` says this seat comes before the rival in play order
    from the mano."""
    return points > rival or (first and points == rival)


def envido_open(envido: bool, settled: bool, trick: int, level: int, flor_sung: bool) -> bool:
    """May envido still be called this hand: where the variant has it, not settled yet (or cancelled
    by a flor), in the first trick, before any truco is accepted, while no flor is sung. A seat calls
    it before his own card of the first trick; the answer to the first truco may be one."""
    return envido and not settled and trick == 0 and level == 0 and not flor_sung


def may_call_envido(envido_open: bool, played: bool) -> bool:
    """May a seat call envido at his turn: while it is open (:func:`envido_open`), before his own card."""
    return envido_open and not played


def may_envido_on_truco(envido_open: bool, raise_pending: bool, call_level: int) -> bool:
    """"Envido goes first": may the answerer of the first truco (a raise to rung 1) call envido instead?"""
    return envido_open and raise_pending and call_level == 1


def may_raise_envido(last: int, envidos: int, kind: int) -> bool:
    """May the answerer of an envido chain whose last call is ``last`` (``envidos``: the plain envidos
    in it) raise it with ``kind``? After envido: envido (twice at most), real or falta; after real:
    falta; after falta: nothing."""
    if last == ENVIDO:
        return kind != ENVIDO or envidos < 2
    if last == REAL_ENVIDO:
        return kind == FALTA_ENVIDO
    return False


def envido_stake(so_far: int, kind: int, target: int, top_score: int) -> int:
    """An envido chain's value once ``kind`` is called on calls worth ``so_far``: 2 per envido, 3 per
    real envido; a falta envido (always the last) is worth what the leading side (``top_score``)
    still needs to reach the ``target``."""
    if kind == FALTA_ENVIDO:
        return target - top_score
    return so_far + (2 if kind == ENVIDO else 3)


def envido_refused_stake(before: int) -> int:
    """A refused envido gives its caller's side the chain's value before the refused call
    (``before``: 0 for a single call), and 1 at least."""
    return max(1, before)


def must_sing(flor: bool, trick: int, side_settled: bool, played: bool, holds_flor: bool) -> bool:
    """A flor is compulsory: a holder must sing it (or fold) in the first trick, before his own card,
    unless his side's flor is settled (sung, or answered)."""
    return flor and trick == 0 and not side_settled and not played and holds_flor


def flor_stake(contested: bool, accepted: bool) -> int:
    """Points of a flor: 3 to a flor sung alone, and to the first flor when the opposing flor backs
    down (*con flor me achico*); 4 to the better flor when he accepts (*con flor quiero*)."""
    return 4 if contested and accepted else 3
