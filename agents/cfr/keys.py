"""Information-set keys of the exact solver, read from what a seat knows.

The key of a seat's decision is (its role in the hand, its dealt hand as strength classes, the public
actions of the hand with each card play written as its class). It is computed from the perfect-recall
info-state string of :func:`truc_env.game.observe.info_state_string` (what the arena hands an agent), so
an agent never needs the engine state:

    p1 |h0 d0 s0,0 1:got 7c 1:got 9d 1:got As 1:raise 0:accept 1:play 9d ...

Only the current (last) hand of the string counts. Roles: ``0`` = the dealer, ``1`` = the first
player (*mano*), so a strategy solved with dealer 0 plays any hand by role. An envido announcement
(``envido HOLDER:POINTS``, after the accept) is a public label of its own (``tree.reveal_label``), and
so is a flor against flor's (``flor HOLDER:POINTS``, ``tree.flor_reveal_label``). The tree also
branches, after a flor, on whether an opponent who has not acted yet holds one; the string says it
by what follows (his ``accept``/``refuse``, or not), and the key writes it as ``tree.flor_held_label``.
After an accepted redeal
the hand is the new one and ``redealt`` is set (see ``docs/cfr.md`` for how the redeal is treated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.cfr.abstraction import CardAbstraction, make_abstraction
from agents.cfr.tree import PLAY, flor_held_label, flor_reveal_label, reveal_label
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.rules import Rules

_ENTRY = re.compile(r"^(\d+):(.*)$")
_ANNOUNCE = re.compile(r"^\d+:\d+$")  # after the token "envido": the envido holder and his points


@dataclass(frozen=True)
class InfoKey:
    role: int  # 0 dealer, 1 first player
    hand: tuple  # own dealt hand (of the current deal) as sorted class indices
    actions: tuple  # public action labels of the hand before the accepted redeal (or all, without one)
    redealt: bool
    after: tuple  # labels after an accepted redeal

    def text(self, ab: CardAbstraction) -> str:
        def fmt(labs):
            return " ".join(f"play:{ab.names[x - PLAY]}" if x >= PLAY else str(x) for x in labs)

        hand = ",".join(ab.names[c] for c in self.hand)
        tail = f" || {fmt(self.after)}" if self.redealt else ""
        return f"r{self.role} [{hand}] {fmt(self.actions)}{tail}"


def parse_info_state(text: str, rules: Rules, ab: CardAbstraction | None = None) -> InfoKey:
    """The solver's key for an info-state string (the last hand in it)."""
    ab = ab or make_abstraction(rules)
    L = layout_of(rules)
    fam = rules.family
    if not isinstance(text, str) or not text.startswith("p"):
        raise TrucError(f"not an info-state string: {text!r}")
    tokens = text.split()
    seat = int(tokens[0][1:])
    start = max((i for i, t in enumerate(tokens) if t.startswith("|h")), default=None)
    if start is None:
        raise TrucError(f"info-state string has no hand marker '|h': {text!r}")
    dealer = int(tokens[start + 1][1:])
    n = rules.players
    role = 0 if seat == dealer else (1 if seat == (dealer + 1) % n else -1)
    entries: list[list[str]] = []
    tail = tokens[start + 3:]
    skip = False
    for i, t in enumerate(tail):
        if skip:
            skip = False
            continue
        if t in ("envido", "flor") and i + 1 < len(tail) and _ANNOUNCE.match(tail[i + 1]):
            entries.append(["-1", "announce", *tail[i + 1].split(":"), t])  # "envido HOLDER:POINTS"
            skip = True
            continue
        m = _ENTRY.match(t)
        if m:
            entries.append([m.group(1), m.group(2)])
        elif entries:
            entries[-1].append(t)
    deals: list[list[int]] = [[]]
    before: list[int] = []
    after: list[int] = []
    redealt = False
    last_label = None
    acted: set[int] = set()
    for i, e in enumerate(entries):
        actor, words = int(e[0]), e[1:]
        if words[0] == "got":
            if actor == seat:
                if len(deals[-1]) == rules.hand_size:
                    deals.append([])
                deals[-1].append(fam.parse(words[1]))
            continue
        if words[0] == "announce":
            holder, points = int(words[1]), int(words[2])
            lab = (flor_reveal_label if words[3] == "flor" else reveal_label)(0 if holder == dealer else 1, points)
        elif words[0] == "play":
            card = fam.parse(words[1].split("=")[-1])
            lab = PLAY + ab.card_class[card]
        else:
            lab = L.from_string(" ".join(words))
        (after if redealt else before).append(lab)
        if actor >= 0:
            acted.add(actor)
        rival = 1 - actor
        if lab == L.FLOR and n == 2 and rival not in acted:  # does the rival hold a flor? (see above)
            nxt = entries[i + 1] if i + 1 < len(entries) else None
            held = seat == rival if nxt is None else (int(nxt[0]) == rival and nxt[1] in ("accept", "refuse"))
            (after if redealt else before).append(flor_held_label(0 if rival == dealer else 1, held))
        if last_label == L.REDEAL and lab == L.ACCEPT and not redealt:
            redealt = True
        last_label = lab
    hand = tuple(sorted(ab.card_class[c] for c in deals[-1]))
    return InfoKey(role, hand, tuple(before), redealt, tuple(after))


def infoset_key(state, seat: int) -> str:
    """Readable key of ``seat``'s information set in an engine state (from its info-state string)."""
    from truc_env.game.observe import info_state_string

    ab = make_abstraction(state.rules)
    return parse_info_state(info_state_string(state, seat), state.rules, ab).text(ab)
