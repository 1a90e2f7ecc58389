"""The game's words: cards as players name them (``7♦``, ``1 de espadas``) and calls as they are said.

"truc!", "truco!", "seis!", "retruco!", "two more?", "mon reste!", "quiero": the table talk of each
variant comes from its record (``rules.spec.table_talk``). The terminal game (``agents/players/human.py``),
the text table in its spoken form (``render(..., spoken=True)``) and the web table (``train/web``)
all name things through this module, so that one notation is used everywhere a person reads.
"""

from __future__ import annotations

FRENCH_SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
SPANISH_SUITS = {"o": "oros", "c": "copas", "e": "espadas", "b": "bastos"}
PORTUGUESE_STAKES = {6: "seis", 9: "nove", 10: "dez", 12: "doze"}  # Brazilian raises are named by the stake
ARGENTINE_RAISES = {2: "retruco", 3: "vale cuatro"}  # by ladder rung
ENGLISH_NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six", 8: "eight"}


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




def pending_calls(state) -> list[tuple[int, str]]:
    """The calls waiting for an answer, each (caller, the call as it was said): ``truco! (for 3)``,
    ``envido real envido!``, ``mon reste!``, ``a redeal``."""
    r, out = state.rules, []
    kind = state.call_kind
    if kind == "raise":
        out.append((state.call_caller, f"{raise_word(r, state.call_level)} (for {r.ladder[state.call_level]})"))
    elif kind == "redeal":
        out.append((state.call_caller, "a redeal"))
    elif kind:
        out.append((state.call_caller, "mon reste!" if kind == "rest" else f"{kind}!"))
    if state.env_queue:
        out.append((state.env_caller, " ".join(state.env_calls).replace("_", " ") + "!"))
    return out


def seat_label(rules, seat: int, viewer: int | None) -> str:
    """``seat 2 (partner)``, ``seat 0 (you)``: a seat as the viewer reads it."""
    if viewer is None:
        return f"seat {seat}"
    if seat == viewer:
        return f"seat {seat} (you)"
    if rules.partnership and rules.side(seat) == rules.side(viewer):
        return f"seat {seat} (partner)"
    return f"seat {seat}"
