"""What one seat may see: the single place that decides visibility.

``visible_hand`` says whose cards a seat sees (its own, unless the hand is played blind; its
partner's in a mão de onze). ``seat_view`` gathers everything the seat knows into a plain dict with
seats relative to the viewer (0 = itself, 1 = next in play order, ...): what heuristic agents read,
and what the observation encoders and the renderer are built from.
"""

from __future__ import annotations

from .engine import State


def hand_visibility(rules, special: str, eleven_seat: int, viewer: int) -> tuple[bool, bool]:
    """(sees own cards, sees partner's cards) in a hand with this special status.

    A blind iron hand hides everyone's own cards; in a mão de onze the side at 11 sees each other's
    hands from the decision on (RULES.md §4). Works for past hands from their ``hand_log`` entry.
    """
    own = not (special == "iron" and rules.blind)
    partner = (rules.partnership and eleven_seat is not None and eleven_seat >= 0
               and rules.side(eleven_seat) == rules.side(viewer))
    return own, partner


def sees_hand(state: State, viewer: int, seat: int) -> bool:
    """Does ``viewer`` see the unplayed cards of ``seat``?"""
    own, partner = hand_visibility(state.rules, state.special, state.eleven_seat, viewer)
    if seat == viewer:
        return own
    return partner and state.rules.side(seat) == state.rules.side(viewer)


def visible_hand(state: State, viewer: int | None, seat: int) -> list[int] | None:
    """The cards of ``seat`` as ``viewer`` sees them (slots, -1 = played), or None if hidden."""
    if viewer is None or sees_hand(state, viewer, seat):
        return list(state.hands[seat])
    return None


def signal_seen(state: State, viewer: int, entry) -> bool | None:
    """True/False: the viewer saw / did not see this signal; None: it is not an opponent's concern."""
    sender, _, _, seen = entry
    if seen >> viewer & 1:
        return True
    return False if state.rules.side(sender) != state.rules.side(viewer) else None


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
        seen = signal_seen(state, seat, entry)
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


class SeatObservation(dict):
    """What an agent is given at its decision: a dict whose costly entries are built on first use.

    Keys: ``seat``, ``rules``, ``action_mask``, ``view`` (:func:`seat_view`), ``observation`` (the flat
    vector of the environments), ``info_state`` (perfect-recall string), ``text`` (the rendered table
    from the seat's side). Valid only during the decision it was made for.
    """

    def __init__(self, state: State, seat: int, action_mask=None):
        super().__init__(seat=seat, rules=state.rules)
        self._state = state
        if action_mask is not None:
            self["action_mask"] = action_mask

    def apply(self, fn):
        """``fn(state, seat)``: for encoders and wrappers (of truc_env or agents) that compute other
        views of this seat's information from the state; they must read only what the seat sees."""
        return fn(self._state, self["seat"])

    def __missing__(self, key):
        state, seat = self._state, self["seat"]
        if key == "view":
            value = seat_view(state, seat)
        elif key == "observation":
            from .observe import encoder_of

            value = encoder_of(state.rules).encode(state, seat)
        elif key == "info_state":
            from .observe import info_state_string

            value = info_state_string(state, seat)
        elif key == "text":
            from .render import render

            value = render(state, seat)
        elif key == "action_mask":
            import numpy as np

            value = np.zeros(state.L.size, dtype=np.int8)
            value[state.legal_actions()] = 1
        else:
            raise KeyError(key)
        self[key] = value
        return value
