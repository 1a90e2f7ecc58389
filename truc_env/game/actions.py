"""The integer action layout of a Rules and the text notation of docs/rules.md §9.

The layout is a fixed sequence of sections; which sections exist depends only on the Rules, so the
action space is ``Discrete(layout.size)`` for the whole game. Chance outcomes are separate: a card
id for a deal draw, a seat for the first dealer, 0/1 (unseen/seen) for a signal interception.
"""

from __future__ import annotations

from truc_env.errors import IllegalActionError
from truc_env.game.rules import Rules

CALLS = ("raise", "accept", "refuse", "fold", "rest", "put", "redeal", "envido", "real_envido", "falta_envido", "flor")
INSTRUCT_BASE = ("none", "high", "low")
CALL_MEANINGS = {
    "raise": "propose the next stake (also a counter-raise when answering)",
    "accept": "accept the pending call",
    "refuse": "refuse the pending call",
    "fold": "concede the hand at one's turn",
    "rest": "mon reste: the hand decides the game",
    "put": "put: the hand decides the game",
    "redeal": "propose a redeal before any card",
    "envido": "call (or raise to) envido", "real_envido": "call real envido", "falta_envido": "call falta envido",
    "flor": "sing flor: compulsory for a flor holder in the first trick, before his card or his answer",
}


class ActionLayout:
    """Sections of the action space, each a contiguous block of ids.

    ``play`` (one per deck card), ``slot`` (blind play by position), the single calls, ``give`` and
    ``discard`` (put_4p), ``signal`` (none + tokens), ``instruct`` (none/high/low + ranks).
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        fam = rules.family
        self.deck = rules.deck
        self.card_index = {c: i for i, c in enumerate(rules.deck)}
        self.deck_set = frozenset(rules.deck)  # a set to test a deal's cards against (set <= set: no view walk)
        self.deck_ranks = tuple(r for r in fam.ranks if any(fam.rank_of(c) == r for c in rules.deck))
        self.sections: list[tuple[str, int, int]] = []  # (name, start, length)
        n = 0

        def add(name, length):
            nonlocal n
            self.sections.append((name, n, length))
            n += length
            return n - length

        self.play = add("play", len(rules.deck))
        self.play_of = {c: self.play + i for i, c in enumerate(rules.deck)}  # card -> its play action
        self.card_of_play = {a: c for c, a in self.play_of.items()}  # play action -> its card (the engine's hot path)
        self.slot = add("slot", rules.hand_size) if (rules.eleven and rules.blind) else -1
        self.call = {}
        for name in self._calls(rules):
            self.call[name] = add(name, 1)
        self.give = add("give", len(rules.deck)) if rules.put_pass else -1
        self.discard = add("discard", len(rules.deck)) if rules.put_pass else -1
        self.signal_tokens = self._signal_tokens(rules)
        self.signal = add("signal", len(self.signal_tokens)) if self.signal_tokens else -1
        self.instruct_tokens = INSTRUCT_BASE + self.deck_ranks if rules.instructions else ()
        self.instruct = add("instruct", len(self.instruct_tokens)) if rules.instructions else -1
        self.size = n
        self.RAISE = self.call.get("raise", -1)
        self.ACCEPT = self.call["accept"]
        self.REFUSE = self.call["refuse"]
        self.FOLD = self.call.get("fold", -1)
        self.ALL_IN = self.call.get(rules.all_in, -1) if rules.all_in else -1
        self.REDEAL = self.call.get("redeal", -1)
        self.ENVIDO = {k: self.call[k] for k in ("envido", "real_envido", "falta_envido") if k in self.call}
        self.FLOR = self.call.get("flor", -1)
        self._names = [self._name(a) for a in range(n)]
        self._by_name = {name: a for a, name in enumerate(self._names)}

    @staticmethod
    def _calls(rules: Rules) -> list[str]:
        calls = []
        if len(rules.ladder) > 1:
            calls.append("raise")
        calls += ["accept", "refuse"]
        if rules.fold:
            calls.append("fold")
        if rules.all_in:
            calls.append(rules.all_in)
        if rules.redeal:
            calls.append("redeal")
        if rules.envido:
            calls += ["envido", "real_envido", "falta_envido"]
        if rules.flor:
            calls.append("flor")
        return calls

    def _signal_tokens(self, rules: Rules) -> tuple:
        mode = rules.signals.mode
        if mode == "none":
            return ()
        if mode == "free":
            tokens = tuple(str(i) for i in range(rules.signals.vocab))
        elif mode == "card":
            tokens = self.deck_ranks
        else:
            tokens = rules.spec.senas.tokens
        return ("none",) + tokens

    def _name(self, a: int) -> str:
        fam = self.rules.family
        for name, start, length in self.sections:
            if start <= a < start + length:
                i = a - start
                if name == "play":
                    return "play " + fam.format(self.deck[i])
                if name == "slot":
                    return f"play slot {i}"
                if name in ("give", "discard"):
                    return f"{name} {fam.format(self.deck[i])}"
                if name == "signal":
                    return "signal " + self.signal_tokens[i]
                if name == "instruct":
                    return "instruct " + self.instruct_tokens[i]
                return name
        raise IllegalActionError(f"action id {a} is outside 0..{self.size - 1}")

    def to_string(self, action: int) -> str:
        """The text of an action id, e.g. ``'play 7c'``, ``'raise'``, ``'signal K'``."""
        if not 0 <= action < self.size:
            raise IllegalActionError(f"action id {action} is outside 0..{self.size - 1}")
        return self._names[action]

    def from_string(self, text: str) -> int:
        """The id of an action text; raises IllegalActionError listing the known forms if unknown."""
        key = " ".join(str(text).split())
        a = self._by_name.get(key)
        if a is None:
            raise IllegalActionError(
                f"unknown action {text!r} for {self.rules.variant}; actions look like "
                f"{', '.join(sorted({n.split(' ')[0] for n in self._names}))}")
        return a

    def names(self) -> list[str]:
        return list(self._names)

    def describe(self) -> str:
        """The action sections as text (``truc rules``): ids, notation and what each call means."""
        fam = self.rules.family
        extra = {"accept": [], "refuse": []}
        if self.rules.eleven:
            extra["accept"].append(f"play the hand at {self.rules.eleven_score}")
            extra["refuse"].append(f"decline the hand at {self.rules.eleven_score} (opponents score {self.rules.ladder[0]})")
        if self.rules.flor:
            extra["accept"].append("'con flor quiero' against a flor: 4 to the better flor")
            extra["refuse"].append("'con flor me achico': 3 to the first flor")
        lines = [f"{'action':<15} {'ids':<8} meaning"]
        for name, start, length in self.sections:
            ids = f"{start}" if length == 1 else f"{start}-{start + length - 1}"
            if name == "play":
                text, meaning = "play <card>", f"play a card ({fam.format(self.deck[0])} .. {fam.format(self.deck[-1])})"
            elif name == "slot":
                text, meaning = "play slot <i>", "blind play by dealt position"
            elif name in ("give", "discard"):
                text, meaning = f"{name} <card>", "put_4p card pass" if name == "give" else "put_4p discard"
            elif name == "signal":
                text, meaning = "signal <token>", ", ".join(self.signal_tokens)
            elif name == "instruct":
                text, meaning = "instruct <t>", ", ".join(self.instruct_tokens)
            else:
                text, meaning = name, "; ".join([CALL_MEANINGS.get(name, "")] + extra.get(name, []))
            lines.append(f"{text:<15} {ids:<8} {meaning}")
        return "\n".join(lines)


_LAYOUTS: dict = {}


def layout_of(rules: Rules) -> ActionLayout:
    """The (cached) action layout of a Rules."""
    lay = _LAYOUTS.get(rules.key)
    if lay is None:
        lay = _LAYOUTS[rules.key] = ActionLayout(rules)
    return lay
