"""A person at the terminal: the table from the seat's side, every move narrated in the game's words.

:class:`HumanAgent` shows the table and a numbered menu of the legal actions and reads a choice.
:class:`Narrator` tells that person, as they happen, the moves of every seat ("seat 1 plays 7♦",
"seat 1 calls truco! (for 3)", "seat 0 accepts"), the tricks, the envido, the hand results and the
score, revealing only what the person's seat may see (hidden signals and passed cards stay hidden).
"""

from __future__ import annotations

import sys

from truc_env.actions import layout_of
from truc_env.errors import TrucError
from truc_env.view import sees_signal

from .base import legal_ids

FRENCH_SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
SPANISH_SUITS = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
PORTUGUESE_STAKES = {6: "seis", 9: "nove", 10: "dez", 12: "doze"}  # Brazilian raises are named by the stake
ARGENTINE_RAISES = {2: "retruco", 3: "vale cuatro"}  # by ladder rung
ENGLISH_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


class InputEndedError(TrucError, EOFError):
    """The person's input ended (end of file) before an action was chosen."""


def card_name(rules, card: int) -> str:
    """A card as a person reads it: ``7♦``, ``10♠`` (French deck), ``1 de espadas`` (Spanish deck)."""
    fam = rules.family
    rank, suit = fam.rank_of(card), fam.suit_of(card)
    if fam.name == "spanish":
        return f"{rank} de {SPANISH_SUITS[suit]}"
    return ("10" if rank == "T" else rank) + FRENCH_SUITS[suit]


def _school(rules) -> str:
    """Which table talk the variant uses: Le Truc, Put, Brazilian or Argentine truco."""
    return rules.spec.table_talk


def raise_word(rules, rung: int) -> str:
    """The call that takes the stake to ``rules.ladder[rung]``: truc!, two more?, truco!, seis!, retruco!..."""
    school = _school(rules)
    if rung == 1:
        return "truc!" if school == "french" else "truco!"
    if school == "brazil":
        return PORTUGUESE_STAKES.get(rules.ladder[rung], str(rules.ladder[rung])) + "!"
    if school == "argentino":
        return ARGENTINE_RAISES.get(rung, str(rules.ladder[rung])) + "!"
    step = rules.ladder[rung] - rules.ladder[rung - 1]
    return f"{ENGLISH_NUMBERS.get(step, step)} more?"


def words(state, seat: int, action: int) -> tuple[str, str]:
    """(menu entry, narration) of ``seat`` taking ``action`` in ``state`` (before it is applied).

    E.g. ``("play 7♦", "plays 7♦")``, ``("raise: truco! (for 3)", "calls truco! (for 3)")``.
    """
    r, L, phase = state.rules, state.L, state.phase
    school = _school(r)
    argentine = school == "argentino"
    name = L.to_string(action)
    if L.play <= action < L.play + len(L.deck):
        card = card_name(r, L.deck[action - L.play])
        return f"play {card}", f"plays {card}"
    if L.slot >= 0 and L.slot <= action < L.slot + r.hand_size:
        i = action - L.slot
        card = state.hands[seat][i]
        return f"play the card in slot {i + 1} (blind)", f"plays blind from slot {i + 1}: {card_name(r, card)}"
    if action == L.RAISE:
        rung = (state.call_level if phase == "answer" else state.level) + 1
        call = f"{raise_word(r, rung)} (for {r.ladder[rung]})"
        return f"raise: {call}", f"calls {call}"
    if action == L.ALL_IN:
        call = "mon reste" if r.all_in == "rest" else "put"
        return f"call {call}!", f"calls {call}!"
    if action == L.REDEAL:
        return "propose a redeal", "proposes a redeal"
    if action in L.ENVIDO.values():
        call = name.replace("_", " ")
        return f"call {call}!", f"calls {call}!"
    if action == L.FLOR:
        return "sing flor!", "sings flor!"
    if action == L.FOLD:
        if argentine:
            return "go to the deck (irse al mazo)", "goes to the deck (se va al mazo)"
        return ("throw in", "throws in") if school == "english" else ("fold", "folds")
    if action in (L.ACCEPT, L.REFUSE):
        return _answer_words(state, action == L.ACCEPT)
    if L.signal >= 0 and L.signal <= action < L.signal + len(L.signal_tokens):
        token = L.signal_tokens[action - L.signal]
        return ("give no signal", "gives no signal") if token == "none" else (f"signal {token}", f"signals {token}")
    if L.instruct >= 0 and L.instruct <= action < L.instruct + len(L.instruct_tokens):
        token = L.instruct_tokens[action - L.instruct]
        return f"instruct your partner: {token}", f"instructs the partner: {token}"
    if name.startswith(("give ", "discard ")):
        verb, card = name.split(" ", 1)
        shown = card_name(r, r.family.parse(card))
        return (f"give {shown} to your partner", f"gives {shown} to the partner") if verb == "give" else \
            (f"discard {shown}", f"discards {shown}")
    return name, name


def _answer_words(state, accept: bool) -> tuple[str, str]:
    r, phase, kind = state.rules, state.phase, state.call_kind
    argentine = _school(r) == "argentino"
    if phase == "eleven":
        special = "mão de onze"
        if accept:
            return f"play the {special} (for {r.eleven_value})", f"plays the {special}"
        return f"decline the {special} (they score {r.ladder[0]})", f"declines the {special}"
    if phase == "envido":
        what = " ".join(state.env_calls).replace("_", " ")
        if argentine:
            return (f'accept the {what}: "quiero"', f'says "quiero" to the {what}') if accept else \
                (f'refuse the {what}: "no quiero"', f'says "no quiero" to the {what}')
        return (f"accept the {what}", f"accepts the {what}") if accept else (f"refuse the {what}", f"refuses the {what}")
    if kind == "redeal":
        return ("accept the redeal", "accepts the redeal") if accept else ("refuse the redeal", "refuses the redeal")
    if kind == "raise":
        stake = r.ladder[state.call_level]
        if accept:
            quiero = ' ("quiero")' if argentine else ""
            return f"accept{quiero}: the hand is worth {stake}", f"accepts{quiero}: the hand is worth {stake}"
        no = ' ("no quiero")' if argentine else ""
        return f"refuse{no}: they score {r.ladder[state.level]}", f"refuses{no}"
    call = "mon reste" if kind == "rest" else kind
    if r.put_n and not accept:
        return "resign from the hand", "resigns from the hand"
    return (f"accept the {call}", f"accepts the {call}") if accept else (f"refuse the {call}", f"refuses the {call}")


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

    def who(self, seat: int) -> str:
        return f"seat {seat} (you)" if seat == self.viewer else f"seat {seat}"

    def before_decision(self, state) -> None:
        """Announce a new hand (once) before anyone, the viewer included, decides in it."""
        if len(state.hand_log) - 1 != self.hand:
            self.hand = len(state.hand_log) - 1
            self.say(f"\n--- hand {self.hand + 1}: {self.who(state.dealer)} deals; {self.score_line(state)} ---")

    def on_decision(self, state, seat: int, action: int) -> None:
        """Narrate ``seat`` taking ``action`` in ``state`` (not yet applied) and its consequences."""
        r = state.rules
        self.before_decision(state)
        after = state.clone()
        after.apply_action(action)
        self.say(f"  {self.who(seat)} {self.visible_words(state, after, seat, action)}")
        same_hand = len(after.hand_log) == len(state.hand_log)
        if same_hand:
            for k in range(len(state.trick_winners), len(after.trick_winners)):
                w = after.trick_winners[k]
                self.say(f"  trick {k + 1}: " + ("tied" if w < 0 else f"won by {self.who(w)}"))
        log = after.hand_log[len(state.hand_log) - 1]
        for _, holder, points in log.get("envido", [])[len(state.hand_log[-1].get("envido", [])):]:
            self.say(f"  envido: {self.who(holder)} has {points} points")
        if after.hands_completed > state.hands_completed:
            points = after.last_hand_points
            scored = [f"{self.side_name(r, s)} {p}" for s, p in enumerate(points) if p]
            self.say(f"== hand {self.hand + 1} over, points: " + (", ".join(scored) if scored else "none")
                     + f"; {self.score_line(after)}")
            if after.game_over:
                won = after.winner == r.side(self.viewer)
                self.say("== game over: " + ("you win!" if won else f"you lose; {self.side_name(r, after.winner)} "
                                                                    f"reached {r.target}."))

    def visible_words(self, before, after, seat: int, action: int) -> str:
        """The narration of a decision, with what the viewer may not see left out."""
        L, r = before.L, before.rules
        v = self.viewer
        if L.signal >= 0 and L.signal <= action < L.signal + len(L.signal_tokens):
            seen = sees_signal(after, v, after.signals[-1])
            if seen is False:
                return "signals to the partner (you did not see it)"
            if seen is None and seat != v:
                return "signals to the partner"
        private = (L.give >= 0 and L.give <= action < L.give + len(L.deck)
                   and v not in (seat, before.partner(seat)))
        private |= L.discard >= 0 and L.discard <= action < L.discard + len(L.deck) and v != seat
        private |= (L.instruct >= 0 and L.instruct <= action < L.instruct + len(L.instruct_tokens)
                    and r.side(v) != r.side(seat))
        if private:
            return {"give": "passes a card to the partner", "discard": "discards a card face down",
                    "instruct": "instructs the partner"}[L.to_string(action).split(" ")[0]]
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
        out.write("\n" + observation["text"] + "\n")
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
            out.write(f"seat {seat}, your action (1-{len(ids)}, or its name): ")
            out.flush()
            line = self.stdin.readline()
            if not line:
                raise InputEndedError("input ended before an action was chosen; the game is abandoned")
            if not (hasattr(self.stdin, "isatty") and self.stdin.isatty()):
                out.write(line if line.endswith("\n") else line + "\n")  # scripted input: echo it, as a terminal does
            text = " ".join(line.lower().split())
            if text.isdigit() and 1 <= int(text) <= len(ids):
                return ids[int(text) - 1]
            if text in names:
                return names[text]
            out.write(f"  '{text}' is not one of the legal actions above; type its number (1-{len(ids)}) "
                      f"or its name, e.g. '{L.to_string(ids[0])}'\n")
