"""A person at the terminal: the table from the seat's side, every move narrated in the game's words.

:class:`HumanAgent` shows the table and a numbered menu of the legal actions and reads a choice.
:class:`Narrator` tells that person, as they happen, the moves of every seat ("seat 1 plays 7♦",
"seat 1 calls truco! (for 3)", "seat 0 accepts"), the tricks, the envido, the hand results and the
score, revealing only what the person's seat may see (hidden signals and passed cards stay hidden).
"""

from __future__ import annotations

import sys

from agents.base import legal_ids
from truc_env.display.render import render
from truc_env.display.talk import card_name, raise_word, seat_label, words
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.view import is_signal, sees_action, sees_signal

__all__ = ["HumanAgent", "Narrator", "InputEndedError", "QuitGame", "card_name", "raise_word", "words"]
QUIT_WORDS = ("quit", "exit")

class InputEndedError(TrucError, EOFError):
    """The person's input ended (end of file) before an action was chosen."""


class QuitGame(Exception):
    """The person typed ``quit``: the game stops there (not an error)."""


class Narrator:
    """Tells ``viewer`` (a seat) what happens at the table, in the order it happens.

    ``on_decision(state, seat, action)`` is called with the state *before* each decision is applied
    (any seat's, the viewer's own included), after ``before_decision(state)`` was called before the
    seat was asked; the narration covers the decision, then what it caused:
    a trick won, the envido shown, the hand's points, the score, the end of the game.
    """

    def __init__(self, viewer: int, out=None):
        self.viewer = viewer
        self.out = out or sys.stdout
        self.hand = -1

    def say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def who(self, seat: int, rules=None) -> str:
        """``seat 0 (you)``, ``seat 2 (partner)`` (with ``rules`` of a partnership game), ``seat 1``."""
        if rules is None:
            return f"seat {seat} (you)" if seat == self.viewer else f"seat {seat}"
        return seat_label(rules, seat, self.viewer)

    def before_decision(self, state) -> None:
        """Announce a new hand (once) before anyone, the viewer included, decides in it."""
        if len(state.hand_log) - 1 != self.hand:
            self.hand = len(state.hand_log) - 1
            self.say(f"\n--- hand {self.hand + 1}: {self.who(state.dealer, state.rules)} deals; "
                     f"{self.score_line(state)} ---")

    def on_decision(self, state, seat: int, action: int) -> None:
        """Narrate ``seat`` taking ``action`` in ``state`` (not yet applied) and its consequences."""
        r = state.rules
        self.before_decision(state)
        after = state.clone()
        after.apply_action(action)
        self.say(f"  {self.who(seat, r)} {self.visible_words(state, after, seat, action)}")
        same_hand = len(after.hand_log) == len(state.hand_log)
        if same_hand:
            for k in range(len(state.trick_winners), len(after.trick_winners)):
                w = after.trick_winners[k]
                self.say(f"  trick {k + 1}: " + ("tied" if w < 0 else f"won by {self.who(w, r)}"))
        log = after.hand_log[len(state.hand_log) - 1]
        for _, holder, points in log.get("envido", [])[len(state.hand_log[-1].get("envido", [])):]:
            self.say(f"  envido: {self.who(holder, r)} has {points} points")
        if after.hands_completed > state.hands_completed:
            points = after.last_hand_points
            scored = [f"{self.side_name(r, s)} {p}" for s, p in enumerate(points) if p]
            self.say(f"== hand {self.hand + 1} over, points: " + (", ".join(scored) if scored else "none")
                     + f"; {self.score_line(after)}")
            if after.game_over:
                self.say(self.game_over_line(after))

    def game_over_line(self, state) -> str:
        r = state.rules
        won = state.winner == r.side(self.viewer)
        return "== game over: " + ("you win!" if won else f"you lose; {self.side_name(r, state.winner)} "
                                                          f"reached {r.target}.")

    def visible_words(self, before, after, seat: int, action: int) -> str:
        """The narration of a decision, with what the viewer may not see left out."""
        L = before.L
        v = self.viewer
        if is_signal(L, action):
            seen = sees_signal(after, v, after.signals[-1])
            if seen is False:
                return "signals to the partner (you did not see it)"
            if seen is None and seat != v:
                return "signals to the partner"
        # a pass is seen by the passer and the receiver, a discard by its owner alone (truc_env.game.view);
        # governor instructions are heard by everyone (docs/rules.md)
        elif not sees_action(before, v, seat, action):
            return {"give": "passes a card to the partner",
                    "discard": "discards a card face down"}[L.to_string(action).split(" ")[0]]
        return words(before, seat, action)[1]

    def side_name(self, rules, side: int) -> str:
        """The viewer's side as "you" / "your side", the others as "them" / "their side" / "seat k"."""
        if side == rules.side(self.viewer):
            return "your side" if rules.partnership else "you"
        if rules.n_sides > 2:
            return f"seat {side}"
        return "their side" if rules.partnership else "them"

    def score_line(self, state) -> str:
        r = state.rules
        order = sorted(range(r.n_sides), key=lambda s: s != r.side(self.viewer))  # the viewer's side first
        return "score: " + ", ".join(f"{self.side_name(r, s)} {state.score[s]}" for s in order) + f" (target {r.target})"


class HumanAgent:
    """Shows the table from the seat's side and a numbered menu; reads a number, a name or a card."""

    name = "human"

    def __init__(self, stdin=None, stdout=None):
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation, action_mask) -> int:
        """Print the table and the menu; ask until a legal action is chosen."""
        L = layout_of(observation["rules"])
        ids = [int(a) for a in legal_ids(action_mask)]
        seat = observation["seat"]
        if hasattr(observation, "apply"):
            labels = observation.apply(lambda state, s: [words(state, s, a)[0] for a in ids])
        else:
            labels = [L.to_string(a) for a in ids]
        out = self.stdout
        table = observation.apply(lambda state, s: render(state, s, spoken=True)) if hasattr(observation, "apply") \
            else observation["text"]
        out.write("\n" + table + "\n")
        for k, label in enumerate(labels, start=1):
            out.write(f"  [{k}] {label}\n")
        names = {}
        for a, label in zip(ids, labels):
            for key in (L.to_string(a), label, label.split(" (")[0]):
                names.setdefault(" ".join(key.lower().split()), a)
            if label.startswith("play ") and "slot" not in label:
                names.setdefault(label[5:].lower(), a)  # a card alone: "7♦"
                names.setdefault(L.to_string(a)[5:].lower(), a)  # or in notation: "7d"
        while True:
            out.write(f"seat {seat}, your action (1-{len(ids)}, or its name; 'quit' to leave): ")
            out.flush()
            line = self.stdin.readline()
            if not line:
                raise InputEndedError("input ended before an action was chosen; the game is abandoned")
            if not (hasattr(self.stdin, "isatty") and self.stdin.isatty()):
                out.write(line if line.endswith("\n") else line + "\n")  # scripted input: echo it, as a terminal does
            text = " ".join(line.lower().split())
            if text in QUIT_WORDS:
                raise QuitGame()
            if text.isdigit() and 1 <= int(text) <= len(ids):
                return ids[int(text) - 1]
            if text in names:
                return names[text]
            out.write(f"  '{text}' is not one of the legal actions above; type its number (1-{len(ids)}) "
                      f"or its name, e.g. '{L.to_string(ids[0])}'\n")
