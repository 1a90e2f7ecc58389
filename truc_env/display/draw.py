"""Pictures of the table: the ``rgb_array`` and ``human`` render modes, and record animations.

A picture shows what one seat knows (or everything, for ``viewer=None``): the viewer's cards face
up and the others' face down unless the viewer sees them (docs/rules.md §4, mão de onze), the cards
played in each trick of the hand with its winner, the stake, the calls made so far, the signals the
viewer saw, the score. Drawn on matplotlib's Agg canvas, so it works without a display.

The tricks come from the facts the engine keeps per hand (``State.hand_facts``); what the viewer may
see is decided by :mod:`truc_env.game.view`.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from truc_env.display.render import render
from truc_env.errors import TrucError
from truc_env.game.engine import CHANCE, FIRST_DEALER, TERMINAL, State
from truc_env.game.view import sees_signal, visible_hand

FRENCH_SUITS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
FRENCH_COLOURS = {"c": "#111111", "s": "#111111", "d": "#c0392b", "h": "#c0392b"}
SPANISH_SUITS = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
SPANISH_COLOURS = {"o": "#b7950b", "c": "#c0392b", "e": "#1f4e9c", "b": "#1e7b34"}
FELT, CARD_FACE, CARD_BACK, INK = "#1d5c3a", "#fbfaf5", "#34495e", "#f4f1e8"

# calls that are public and worth listing; plays are shown as tricks, signals on their own lines,
# and passes/discards are hidden from all but their receiver
_HIDDEN_PREFIXES = ("play", "signal", "give", "discard")


def card_label(family, card: int) -> tuple[str, str, str]:
    """(rank, suit text, colour) of a card for the picture: ``('7', '♣', black)``, ``('1', 'espadas', blue)``."""
    rank, suit = family.rank_of(card), family.suit_of(card)
    if family.name == "spanish":
        return rank, SPANISH_SUITS[suit], SPANISH_COLOURS[suit]
    return ("10" if rank == "T" else rank), FRENCH_SUITS[suit], FRENCH_COLOURS[suit]


def card_text(family, card: int) -> str:
    """A card's name with its suit symbol: ``7♣``, ``10♥``, ``1 espadas``."""
    rank, suit, _ = card_label(family, card)
    return f"{rank} {suit}" if family.name == "spanish" else rank + suit


# ---------------------------------------------------------------------------- public history
def _fresh(state: State) -> State:
    """The state the history of ``state`` starts from."""
    h = state.history
    random_first = bool(h) and h[0][0] == CHANCE and h[0][2] == FIRST_DEALER
    dealer = None if random_first or not state.hand_log else state.hand_log[0]["dealer"]
    return State(state.rules, episode=state.episode, dealer=dealer, score=list(state.start_score))


def replay_history(state: State):
    """Replay the history of ``state`` on a fresh state, yielding ``(state, actor)`` after each entry.
    The yielded state is the same object, updated in place."""
    s = _fresh(state)
    for actor, action, _ in state.history:
        s.apply_action(action)
        yield s, actor


def hand_tricks(state: State) -> list[list[tuple[list, int | None]]]:
    """The tricks of every hand of ``state`` as ``[(plays, winner)]`` per hand: ``plays`` are the
    ``(seat, card)`` on the table in order (without the cards a resignation took back), ``winner``
    the seat that won the trick, -1 when tied, None while it is open (or when the hand ended in it)."""
    out = []
    for h in range(len(state.hand_log)):
        facts = state.hand_facts(h)
        winners, withdrawn = facts["trick_winners"], facts["withdrawn"]
        tricks: list[tuple[list, int | None]] = []
        for k in range(len(winners) + 1):
            plays = [(s, c) for t, s, c in facts["played"] if t == k and (t, s, c) not in withdrawn]
            if k < len(winners):
                tricks.append((plays, winners[k]))
            elif plays:
                tricks.append((plays, None))
        out.append(tricks)
    return out


# ---------------------------------------------------------------------------- the picture
def _shown_hand(state: State) -> int:
    """Index of the hand the picture is about: the last one, or the one just ended before a new deal."""
    if state.hand_over and not state.dealt and len(state.hand_log) >= 2 and state.phase != "terminal":
        return len(state.hand_log) - 2
    return len(state.hand_log) - 1


def _calls_made(state: State, hand: int) -> list[str]:
    if hand < 0:
        return []
    log = state.hand_log[hand]
    out = []
    for actor, action, _ in state.history[log["start"]:log.get("end", len(state.history))]:
        if actor < 0:
            continue
        name = state.L.to_string(action)
        if not name.startswith(_HIDDEN_PREFIXES):
            out.append(f"seat {actor} {name}")
    return out


def _seat_positions(n: int, viewer: int | None) -> dict[int, tuple[float, float]]:
    """Seat centres on the table, the viewer (or seat 0) at the bottom, play order counter-clockwise."""
    base = 0 if viewer is None else viewer
    pos = {}
    for s in range(n):
        k = (s - base) % n
        angle = -np.pi / 2 + 2 * np.pi * k / n
        pos[s] = (0.5 + 0.40 * np.cos(angle), 0.47 + 0.35 * np.sin(angle))
    return pos


def _draw_card(ax, x, y, w, h, label, face_up=True, highlight=False):
    from matplotlib.patches import FancyBboxPatch

    edge = "#f1c40f" if highlight else "#222222"
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.002,rounding_size=0.006",
                                facecolor=CARD_FACE if face_up else CARD_BACK, edgecolor=edge,
                                linewidth=2.0 if highlight else 0.8))
    if not face_up:
        ax.text(x + w / 2, y + h / 2, "?", ha="center", va="center", color="#bdc3c7", fontsize=10)
        return
    rank, suit, colour = label
    if len(suit) == 1:
        ax.text(x + w / 2, y + h * 0.62, rank, ha="center", va="center", color=colour, fontsize=11,
                fontweight="bold")
        ax.text(x + w / 2, y + h * 0.27, suit, ha="center", va="center", color=colour, fontsize=12)
    else:
        ax.text(x + w / 2, y + h * 0.62, rank, ha="center", va="center", color=colour, fontsize=11,
                fontweight="bold")
        ax.text(x + w / 2, y + h * 0.25, suit[:3], ha="center", va="center", color=colour, fontsize=7)


def draw_table(state: State, viewer: int | None = None, dpi: int = 100) -> np.ndarray:
    """The table as an ``(H, W, 3)`` uint8 picture, seen by ``viewer`` (``None``: every hand shown).

    Only what the viewer knows is drawn: a hidden hand is drawn as card backs, signals the viewer
    did not see as ``unseen``, and legal actions only when the viewer is the one to act.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    r = state.rules
    n = r.players
    if viewer is not None and not (isinstance(viewer, int) and 0 <= viewer < n):
        raise TrucError(f"viewer must be None (every hand) or a seat in 0..{n - 1}, got {viewer!r}")
    fam = r.family
    fig = Figure(figsize=(10, 6.4), dpi=dpi, facecolor=FELT)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1.45)
    ax.set_ylim(0, 1)
    ax.axis("off")

    def text(x, y, s, size=10, **kw):
        ax.text(x, y, s, color=kw.pop("color", INK), fontsize=size, **kw)

    who = "every hand shown" if viewer is None else f"seen by seat {viewer}"
    text(0.02, 0.965, f"{r.variant}  ({who})", 13, fontweight="bold", va="center")
    score = " - ".join(str(x) for x in state.score)
    sides = "sides" if r.n_sides < n else "seats"
    text(1.43, 0.965, f"score {score}  ({sides} 0-{r.n_sides - 1}, target {r.target})", 12, ha="right", va="center", fontweight="bold")

    hand = _shown_hand(state)
    tricks = hand_tricks(state)
    shown_tricks = tricks[hand] if 0 <= hand < len(tricks) else []
    current = state.current_player()
    hand_ended = state.phase == "terminal" or hand != len(state.hand_log) - 1
    dealer = state.hand_log[hand]["dealer"] if hand >= 0 else state.dealer

    # seats and their hands
    pos = _seat_positions(n, viewer)
    cw, ch = 0.045, 0.095
    for seat in range(n):
        cx, cy = pos[seat]
        tag = f"seat {seat}" + (" (you)" if seat == viewer else "")
        if r.n_sides == 2 and n > 2:
            tag += f"  side {r.side(seat)}"
        if dealer == seat:
            tag += "  dealer"
        if r.governors and n == 4 and state.dealer >= 0 and state.dealt and state.governor(seat) == seat:
            tag += "  governor"
        if state.dealt and seat not in state.active:
            tag += "  (out)"
        colour = "#f1c40f" if seat == current else INK
        text(cx, cy + ch / 2 + 0.03, tag, 9, ha="center", va="center", color=colour,
             fontweight="bold" if seat == current else "normal")
        cards = state.hands[seat] if state.dealt else []
        held = [c for c in cards if c >= 0]
        seen = visible_hand(state, viewer, seat)
        x0 = cx - (len(held) * (cw + 0.008)) / 2
        for i, c in enumerate(held):
            _draw_card(ax, x0 + i * (cw + 0.008), cy - ch / 2, cw, ch,
                       card_label(fam, c) if seen is not None else None, face_up=seen is not None)

    # the tricks of the hand, one row each, in the middle of the table
    tx, ty = 0.30, 0.66
    text(tx, ty + 0.045, "tricks", 10, fontweight="bold")
    sw, sh = 0.036, 0.075
    for k, (plays, winner) in enumerate(shown_tricks):
        y = ty - k * (sh + 0.025)
        if winner is None:
            result = "not finished" if hand_ended else "playing"
        else:
            result = "tied" if winner < 0 else f"won by seat {winner}"
        text(tx, y - sh / 2, f"{k + 1}", 10, va="center", fontweight="bold")
        for i, (seat, c) in enumerate(plays):
            x = tx + 0.03 + i * (sw + 0.03)
            _draw_card(ax, x, y - sh, sw, sh, card_label(fam, c), highlight=seat == winner)
            text(x + sw + 0.003, y - sh + 0.005, f"s{seat}", 7)
        text(tx + 0.03 + max(len(plays), 1) * (sw + 0.03), y - sh / 2, result, 9, va="center")

    # the side panel: stake, vira, calls, signals, what happens now
    px, py = 1.0, 0.9
    lines: list[tuple[str, str]] = []
    if state.dealt:
        stake = f"stake {r.ladder[state.level]}"
        if state.all_in_accepted:
            stake += f" + {r.all_in} accepted"
        lines.append((stake, "bold"))
        lines.append((f"trick {state.trick_no + 1} of {r.hand_size}", "normal"))
    if state.special:
        lines.append((f"{state.special} hand", "bold"))
    if state.vira >= 0:
        lines.append((f"vira {card_text(fam, state.vira)}", "bold"))
    calls = _calls_made(state, hand)
    if calls:
        lines.append(("calls:", "bold"))
        lines.extend((f"  {c}", "normal") for c in calls[-8:])
    sig = []
    for entry in state.signals:
        seen = True if viewer is None else sees_signal(state, viewer, entry)
        if seen is not None:
            token = state.L.signal_tokens[entry[1]] if seen else "unseen"
            sig.append(f"  seat {entry[0]} (trick {entry[2] + 1}): {token}")
    if sig:
        lines.append(("signals:", "bold"))
        lines.extend((s, "normal") for s in sig[-6:])
    if state.instruction >= 0:
        lines.append((f"instruction: {state.L.instruct_tokens[state.instruction]}", "normal"))
    if state.env_result is not None:
        lines.append((f"envido: seat {state.env_result[0]} wins with {state.env_result[1]}", "normal"))
    if state.call_kind:
        lines.append((f"pending: seat {state.call_caller} calls {state.call_kind}", "normal"))
    if state.phase == "terminal":
        result = f"side {state.winner} wins the game" if state.game_over else "hand over"
        lines.append((result, "bold"))
        lines.append((f"hand points {list(state.last_hand_points)}", "normal"))
    elif hand != len(state.hand_log) - 1:
        lines.append((f"hand over: points {list(state.last_hand_points)}", "bold"))
    elif current == CHANCE:
        lines.append(("dealing", "normal"))
    elif current != TERMINAL:
        lines.append((f"to act: seat {current}", "bold"))
        if viewer is None or viewer == current:
            legal = [state.action_to_string(a) for a in state.legal_actions()]
            shown = ", ".join(legal[:8]) + (", ..." if len(legal) > 8 else "")
            lines.append((f"legal: {shown}", "normal"))
    for i, (line, weight) in enumerate(lines):
        text(px, py - i * 0.042, line, 9, fontweight=weight, va="top", wrap=True)
    if fam.name == "spanish":
        text(1.43, 0.02, "suits: " + ", ".join(f"{s[:3]} = {s}" for s in SPANISH_SUITS.values()), 8,
             ha="right", va="bottom")

    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[:, :, :3].copy()


# ---------------------------------------------------------------------------- human mode
def display_available() -> bool:
    """Whether a window can be opened: a display on X11/Wayland, any desktop elsewhere."""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


class TableWindow:
    """The ``human`` render mode: the picture in a matplotlib window, redrawn at each call.

    Without a display (a server, CI) it prints the text table instead, so that a headless run with
    ``render_mode="human"`` still shows the game and never crashes.
    """

    def __init__(self):
        self._fig = None
        self._image = None
        self.windowed = display_available()

    def show(self, state: State, viewer: int | None = None, fps: float = 1.0) -> None:
        """Show ``state`` as ``viewer`` sees it; waits ``1 / fps`` seconds so a person can follow."""
        if self.windowed:
            try:
                self._show_window(draw_table(state, viewer), fps)
                return
            except Exception as e:  # no usable GUI backend after all: keep the game going as text
                self.windowed = False
                print(f"(no window: {e}; rendering as text)", file=sys.stderr)
        print(render(state, viewer))

    def _show_window(self, picture: np.ndarray, fps: float) -> None:
        import matplotlib.pyplot as plt

        if plt.get_backend().lower() in ("agg", "pdf", "ps", "svg", "template", "cairo"):
            raise TrucError(f"matplotlib backend {plt.get_backend()!r} cannot open a window")
        if self._fig is None or not plt.fignum_exists(self._fig.number):
            self._fig = plt.figure("truc", figsize=(picture.shape[1] / 100, picture.shape[0] / 100))
            ax = self._fig.add_axes((0, 0, 1, 1))
            ax.axis("off")
            self._image = ax.imshow(picture)
        else:
            self._image.set_data(picture)
        self._fig.canvas.draw_idle()
        plt.pause(1.0 / fps)

    def close(self) -> None:
        """Close the window, if one was opened."""
        if self._fig is not None:
            import matplotlib.pyplot as plt

            plt.close(self._fig)
            self._fig = None


# ---------------------------------------------------------------------------- animations
def record_frames(state: State, viewer: int | None = None, dpi: int = 80):
    """Pictures of a replayed game, one per decision (chance outcomes fold into the next picture),
    starting with the table after the first deal."""
    shown_deal = False
    for s, actor in replay_history(state):
        if actor == CHANCE:
            if s.is_chance_node() or shown_deal:
                continue
            shown_deal = True  # the first full deal, before anyone acts
        yield draw_table(s, viewer, dpi=dpi)


def write_gif(state: State, path, viewer: int | None = None, fps: float = 1.5, dpi: int = 80) -> int:
    """Write the game of ``state`` as an animated GIF (atomically); returns the number of frames."""
    from PIL import Image

    from truc_env.io.atomic import atomic_open

    if not fps > 0:
        raise TrucError(f"fps must be a positive number of frames per second, got {fps!r}")
    frames = [Image.fromarray(p).quantize(colors=128) for p in record_frames(state, viewer, dpi)]
    if not frames:
        raise TrucError("the record has no action to animate")
    with atomic_open(path, "wb") as f:
        frames[0].save(f, format="GIF", save_all=True, append_images=frames[1:],
                       duration=int(1000 / fps), loop=0)
    return len(frames)
