"""Text rendering of a state from one seat's point of view, or omniscient for debugging."""

from __future__ import annotations

from truc_env.display.talk import card_name, pending_calls, seat_label, words
from truc_env.game.engine import CHANCE, TERMINAL, State
from truc_env.game.view import sees_signal, visible_hand


def render(state: State, viewer: int | None = None, spoken: bool = False) -> str:
    """A multi-line text picture of the table; ``viewer=None`` shows every hand.

    ``spoken=True`` is the table a person reads (``truc play``): cards as ``7♦``, calls as said
    ("truco! (for 3)"), the partner labelled, and no list of legal actions (the menu shows them in
    the same words). The default is the notation of records and observations (``7d``, ``raise``).
    """
    r = state.rules
    fam = r.family
    card = (lambda c: card_name(r, c)) if spoken else fam.format
    side = r.side
    lines = []
    who = "omniscient" if viewer is None else f"seat {viewer}"
    score = " - ".join(str(s) for s in state.score)
    lines.append(f"{r.variant} ({who}) | score {score} (target {r.target}) | dealer {state.dealer}"
                 + (f" | {state.special} hand" if state.special else ""))
    if state.is_terminal():
        result = f"side {state.winner} wins the game" if state.game_over else "hand over"
        lines.append(f"  {result}; last hand points {state.last_hand_points}")
        return "\n".join(lines)
    stake = r.ladder[state.level]
    extra = ""
    if state.all_in_accepted:
        extra = f" + {r.all_in} accepted"
    lines.append(f"  stake {stake}{extra} | trick {state.trick_no + 1} of {r.hand_size}"
                 + (f" | vira {card(state.vira)}" if state.vira >= 0 else ""))
    for seat in range(r.players):
        if seat not in state.active and state.dealt:
            status = " (out)"
        else:
            status = ""
        if spoken:
            tag = seat_label(r, seat, viewer) + (f" side {side(seat)}" if r.n_sides == 2 else "")
        else:
            tag = f"seat {seat}" + (" (you)" if seat == viewer else "") + (f" side {side(seat)}" if r.n_sides == 2 else "")
        if r.governors and r.players == 4 and state.dealer >= 0 and state.governor(seat) == seat:
            tag += " governor"
        hand = visible_hand(state, viewer, seat)
        if hand is None:
            shown = " ".join("??" for c in state.hands[seat] if c >= 0)
        else:
            shown = " ".join(card(c) for c in hand if c >= 0)
        lines.append(f"  {tag:<34}{shown}{status}")
    if spoken:
        played = ", ".join(f"{seat_label(r, s, viewer)} {card(c)}" for s, c in state.trick)
    else:
        played = " ".join(f"{s}:{card(c)}" for s, c in state.trick)
    if state.trick_winners:
        results = ", ".join("tie" if w < 0 else f"seat {w}" for w in state.trick_winners)
        lines.append(f"  tricks won: {results}")
    lines.append(f"  on the table: {played or '-'}")
    for entry in state.signals:
        sender, token, trick, _ = entry
        seen = True if viewer is None else sees_signal(state, viewer, entry)
        if seen is not None:
            shown = state.L.signal_tokens[token] if seen else "unseen"
            lines.append(f"  signal from seat {sender} (trick {trick + 1}): {shown}")
    if state.instruction >= 0:
        lines.append(f"  instruction to seat {state.turn}: {state.L.instruct_tokens[state.instruction]}")
    if state.env_result is not None:
        lines.append(f"  envido: seat {state.env_result[0]} wins with {state.env_result[1]}")
    if spoken:
        for caller, call in pending_calls(state):
            lines.append(f"  pending: {seat_label(r, caller, viewer)} calls {call}")
    else:
        if state.call_kind:
            lines.append(f"  pending: seat {state.call_caller} calls {state.call_kind}")
        if state.env_queue:
            lines.append(f"  pending envido: {' '.join(state.env_calls)} by seat {state.env_caller}")
    actor = state.current_player()
    if actor == CHANCE:
        lines.append("  (dealing)")
    elif actor != TERMINAL:
        lines.append(f"  to act: {seat_label(r, actor, viewer) if spoken else f'seat {actor}'}")
        if viewer is None or viewer == actor:
            legal = state.legal_actions()
            if not spoken:
                lines.append("  legal: " + ", ".join(state.action_to_string(a) for a in legal))
            elif viewer is None:
                lines.append("  legal: " + ", ".join(words(state, actor, a)[0] for a in legal))
    return "\n".join(lines)
