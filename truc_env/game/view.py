"""What one seat may see: the single place that decides visibility.

The engine keeps the facts (the cards dealt and played, who saw each signal); this module says which
of them a seat is shown, and every encoder, string, picture and adapter asks it. ``sees_hand`` /
``visible_hand``: whose cards a seat sees (its own, unless the hand is played blind; its partner's in
a mão de onze). ``sees_action``: which decisions of the others it sees (not the put_4p passes meant
for someone else, not the signals it did not see). ``sees_signal``: a signal's token or only that
one was made. ``seat_view`` gathers everything the seat knows into a plain dict with seats relative
to the viewer (0 = itself, 1 = next in play order, ...), what heuristic agents read.
"""

from __future__ import annotations

from truc_env.game.engine import State


def hand_visibility(rules, special: str, eleven_seat: int, viewer: int) -> tuple[bool, bool]:
    """(sees own cards, sees partner's cards) in a hand with this special status.

    A blind iron hand hides everyone's own cards; in a mão de onze the side at 11 sees each other's
    hands from the decision on (docs/rules.md §4); with ``signals.open_hands`` (the oracle bound of
    §8) partners always see each other's. Works for past hands from their ``hand_log`` entry.
    """
    own = not (special == "iron" and rules.blind)
    partner = rules.partnership and (rules.signals.open_hands or (eleven_seat is not None and eleven_seat >= 0
                                                                   and rules.side(eleven_seat) == rules.side(viewer)))
    return own, partner


def sees_cards(rules, special: str, eleven_seat: int, viewer: int, seat: int) -> bool:
    """Does ``viewer`` see the cards dealt to ``seat`` in a hand with this special status?"""
    own, partner = hand_visibility(rules, special, eleven_seat, viewer)
    if seat == viewer:
        return own
    return partner and rules.side(seat) == rules.side(viewer)


def sees_hand(state: State, viewer: int, seat: int) -> bool:
    """Does ``viewer`` see the unplayed cards of ``seat``?"""
    return sees_cards(state.rules, state.special, state.eleven_seat, viewer, seat)


def visible_hand(state: State, viewer: int | None, seat: int) -> list[int] | None:
    """The cards of ``seat`` as ``viewer`` sees them (slots, -1 = played), or None if hidden."""
    if viewer is None or sees_hand(state, viewer, seat):
        return list(state.hands[seat])
    return None


def sees_signal(state: State, viewer: int, entry) -> bool | None:
    """True/False: the viewer saw / did not see this signal (an entry of ``state.signals``, whose
    seen-mask the engine keeps); None: it is not an opponent's concern."""
    sender, _, _, seen = entry
    if seen >> viewer & 1:
        return True
    return False if state.rules.side(sender) != state.rules.side(viewer) else None


def sees_signal_made(rules, viewer: int, sender: int) -> bool:
    """Does ``viewer`` see a signal as it is made, before any interception is drawn?"""
    return rules.side(viewer) == rules.side(sender) or rules.signals.intercept >= 1.0


def is_signal(L, action: int) -> bool:
    """Is ``action`` a signal of the layout ``L``?"""
    return L.signal >= 0 and L.signal <= action < L.signal + len(L.signal_tokens)


def sees_action(state: State, viewer: int, actor: int, action: int, signal=None) -> bool:
    """Does ``viewer`` see which decision ``actor`` took? Everything is public but put_4p passes
    (the receiver sees the given card, nobody the discard) and signals (``signal``: the entry of
    ``state.signals`` that the action made, read by :func:`sees_signal`)."""
    if actor == viewer:
        return True
    L = state.L
    if L.give >= 0 and L.give <= action < L.give + len(L.deck):
        return viewer == state.rules.partner(actor)  # only the receiver sees the passed card
    if L.discard >= 0 and L.discard <= action < L.discard + len(L.deck):
        return False
    if is_signal(L, action):
        return sees_signal(state, viewer, signal) is True
    return True


def strength_percentile(state: State, card: int) -> float:
    """A card's strength as the fraction of the deck it beats (0 = weakest, 1 = beats every other)."""
    strength = state.strength
    mine = strength[card]
    deck = state.rules.deck
    return sum(1 for c in deck if strength[c] < mine) / (len(deck) - 1)


def seat_view(state: State, seat: int) -> dict:
    """Everything ``seat`` knows, seats relative to it (0 = itself, k = k seats later in play order)."""
    r, n = state.rules, state.rules.players
    rel = lambda s: (s - seat) % n  # noqa: E731
    hands = {}
    for s in range(n):
        h = visible_hand(state, seat, s)
        if h is not None:
            hands[rel(s)] = [c for c in h if c >= 0]
    own = hands.get(0, [])
    signals = []
    for entry in state.signals:
        seen = sees_signal(state, seat, entry)
        if seen is not None:
            token = state.L.signal_tokens[entry[1]] if seen else "unseen"
            signals.append({"sender": rel(entry[0]), "token": token, "trick": entry[2]})
    return {
        "seat": seat,
        "players": n,
        "side": r.side(seat),
        "dealer": rel(state.dealer) if state.dealer >= 0 else -1,
        "phase": state.phase,
        "hands": hands,
        "own": own,
        "own_strength": [strength_percentile(state, c) for c in own],
        "unseen_slots": [i for i, c in enumerate(state.hands[seat]) if c >= 0] if 0 not in hands else [],
        "given": state.given[seat],
        "vira": state.vira,
        "strength": state.strength,  # public: the ranking of this hand (manilhas follow the vira)
        "trick_no": state.trick_no,
        "trick": [(rel(s), c) for s, c in state.trick],
        "trick_winners": [rel(w) if w >= 0 else -1 for w in state.trick_winners],
        "leader": rel(state.leader),
        "stake": r.ladder[state.level],
        "level": state.level,
        "raise_side_last": state.last_raiser_side,
        "all_in_accepted": state.all_in_accepted,
        "special": state.special,
        "call": state.call_kind,
        "caller": rel(state.call_caller) if state.call_caller >= 0 else -1,
        "envido_calls": list(state.env_calls),
        "envido_result": (rel(state.env_result[0]), state.env_result[1]) if state.env_result else None,
        "flor_seats": [rel(s) for s in state.flor_seats],
        "flor_result": (rel(state.flor_result[0]), state.flor_result[1]) if state.flor_result else None,
        "signals": signals,
        "instruction": state.L.instruct_tokens[state.instruction] if state.instruction >= 0 else None,
        "score": [state.score[(r.side(seat) + k) % r.n_sides] for k in range(r.n_sides)],
        "target": r.target,
        "active": sorted(rel(s) for s in state.active),
    }
