"""The card and action abstraction of partnership MCCFR (``le_truc_4p``, 4-player Truco Paulista/Mineiro).

A decision is keyed by what the seat knows, reduced to a short string (docs/rules.md §2, §4, §8):

- **card classes** by strength *in this hand* (so relative to Paulista's manilhas): the distinct
  strength levels of the hand's ranking, strongest first, grouped into six classes (the
  ``card_classes`` of the variant's record in :mod:`truc_env.game.variants`). Le Truc: ``7 | 8 | A | K |
  Q J | T 9``. Paulista / Mineiro: ``zap copas | espadilha ouros | 3 | 2 | A K | the rest`` (the
  non-manilha ranks counted *below* this hand's manilhas, so the manilha rank leaves its usual place);
- the seat's **role**: its position after the dealer (1 = first player / non-dealing governor in
  Le Truc, 0 = dealer);
- the **phase** (turn, answer, signal, instruct, decision at 11) and the **own hand** as a sorted
  string of classes (blind slots as ``?``);
- each **finished trick** as won / lost / tied by the seat's side; the **trick on the table** as
  (cards played, class of the best card, who holds it: partner, opponent, or tied between sides);
- the **stake**: ladder level (levels 3 and above merged), which side raised last, an accepted mon reste; a **pending call**
  (raise, mon reste, redeal) and the caller's seat relative to the viewer (in Truco this also says
  whether the partner already refused);
- the **partner's last signal** (in ``card`` mode as the class of the rank it names; in ``free`` and
  ``senas`` modes the token itself) and the **governor's instruction in force** (none, high, low or
  the class of the named rank).

Not in the key (documented approximations): the classes of cards played in finished tricks, the
seat's own earlier signals and calls, a redealt hand's first hand, the score (solved for one hand at
0-0), the partner's hand shown at 11.

Actions are abstracted the same way: ``play <class>`` (the weakest card of that class that beats
the table, else the weakest of the class), the calls, ``signal <class or token>``, and the
instructions ``none`` / ``high`` / ``low`` (instructions naming a rank are left out of the abstract
game; the governor never gives them).

The key is built from the engine state while training (:func:`state_key`) and from the seat's
``view`` while playing (:func:`view_key`); ``tests/test_mccfr.py`` checks that they agree.
"""

from __future__ import annotations

from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.variants import VARIANTS

NAME = "partnership-classes-v1"
K = 6  # card classes
# the card classes of each variant (strength level -> class, and their names) are the
# ``card_classes`` of its record in truc_env.game.variants
LEVEL_CAP = 3  # ladder levels 3 and above share keys
CALLS = ("raise", "accept", "refuse", "fold", "allin", "redeal")
INSTRUCTIONS = ("none", "high", "low")
PHASES = {"turn": "T", "answer": "A", "signal": "S", "instruct": "I", "eleven": "E"}
CALL_CODES = {"raise": "r", "rest": "m", "put": "p", "redeal": "d"}


def unsupported_reason(rules) -> str:
    """Why the partnership abstraction cannot key this Rules ('' if it can)."""
    if not rules.partnership or rules.players != 4:
        return "partnership MCCFR is for the 2 vs 2 games (4 players)"
    if rules.spec.card_classes is None:
        supported = ", ".join(v.name for v in VARIANTS.values() if v.card_classes is not None)
        return (f"no card abstraction for {rules.variant} (supported: {supported}; "
                "Argentine envido and Put's card pass are not modelled)")
    if rules.envido or rules.flor or rules.put_pass:
        return "envido, flor and card passes are not modelled by the abstraction"
    return ""


class PartnershipAbstraction:
    """Card classes, abstract action ids and information-set keys for one partnership Rules."""

    def __init__(self, rules):
        why = unsupported_reason(rules)
        if why:
            raise TrucError(f"{rules.variant}: {why}")
        self.rules = rules
        self.L = L = layout_of(rules)
        self.groups = rules.spec.card_classes.groups
        self.class_names = rules.spec.card_classes.names
        self.mode = rules.signals.mode
        tokens = L.signal_tokens
        self.n_sig = (K if self.mode == "card" else max(0, len(tokens) - 1)) if tokens else 0
        # abstract action ids: plays, calls, signals (none + tokens), instructions
        self.PLAY = 0
        self.CALL = K
        self.SIG = K + len(CALLS)
        self.INS = self.SIG + (1 + self.n_sig if tokens else 0)
        self.n_actions = self.INS + (len(INSTRUCTIONS) if rules.instructions else 0)
        names = [f"play {c}" for c in self.class_names] + list(CALLS)
        if tokens:
            names += ["signal none"] + [f"signal {self.class_names[i]}" if self.mode == "card" else f"signal {tokens[i + 1]}"
                                        for i in range(self.n_sig)]
        if rules.instructions:
            names += [f"instruct {x}" for x in INSTRUCTIONS]
        self.action_names = tuple(names)
        # engine call ids -> abstract ids
        self.call_abs = {}
        for i, name in enumerate(CALLS):
            eid = {"raise": L.RAISE, "accept": L.ACCEPT, "refuse": L.REFUSE, "fold": L.FOLD, "allin": L.ALL_IN,
                   "redeal": L.REDEAL}[name]
            if eid >= 0:
                self.call_abs[eid] = self.CALL + i
        self._cls_cache: dict = {}
        self.instruct_base = INSTRUCTIONS

    # ------------------------------------------------------------------ card classes
    def classes(self, strength: tuple) -> tuple:
        """Card id -> class (0 = strongest) under this hand's ranking; -1 for cards not in the deck."""
        hit = self._cls_cache.get(strength)
        if hit is None:
            levels = sorted({s for s in strength if s >= 0}, reverse=True)
            pos = {s: i for i, s in enumerate(levels)}
            g = self.groups
            hit = tuple(g[min(pos[s], len(g) - 1)] if s >= 0 else -1 for s in strength)
            self._cls_cache[strength] = hit
        return hit

    def rank_class(self, strength: tuple, rank: str) -> int:
        """The class of the strongest card of a rank under this ranking."""
        fam, cls = self.rules.family, self.classes(strength)
        best = max((c for c in self.rules.deck if fam.rank_of(c) == rank), key=lambda c: strength[c])
        return cls[best]

    def _token_code(self, strength: tuple, token: str) -> str:
        if token in ("none", "unseen"):
            return token[0]
        if self.mode == "card":
            return str(self.rank_class(strength, token))
        return token if self.mode == "free" else str(self.L.signal_tokens.index(token))

    # ------------------------------------------------------------------ keys
    def key(self, phase: str, role: int, own: list, blind: int, strength: tuple, trick: list, winners: list,
            level: int, raiser: str, all_in: bool, call: str, caller: int, partner_signal, instruction) -> str:
        """The information-set key from the primitive pieces (seats relative to the viewer)."""
        cls = self.classes(strength)
        hand = "".join(sorted(str(cls[c]) for c in own)) + "?" * blind
        past = "".join("t" if w < 0 else ("w" if w % 2 == 0 else "l") for w in winners)
        if trick:
            top = max(strength[c] for _, c in trick)
            holders = {s % 2 for s, c in trick if strength[c] == top}
            owner = "t" if len(holders) == 2 else ("p" if 0 in holders else "o")
            best = next(c for _, c in trick if strength[c] == top)
            table = f"{len(trick)}{cls[best]}{owner}"
        else:
            table = ""
        stake = f"{min(level, LEVEL_CAP)}{raiser}{'*' if all_in else ''}"
        pending = f"{CALL_CODES.get(call, call)}{caller}" if call else ""
        sig = self._token_code(strength, partner_signal) if partner_signal is not None else ""
        if instruction is None:
            ins = ""
        elif instruction in INSTRUCTIONS:
            ins = instruction[0]
        else:
            ins = "c" + str(self.rank_class(strength, instruction))
        return f"{PHASES.get(phase, phase)}{role}{hand}|{past}|{table}|{stake}|{pending}|{sig}|{ins}"

    # ------------------------------------------------------------------ actions
    def abstract_actions(self, legal, own: list, strength: tuple, trick: list) -> list[tuple[int, int]]:
        """(abstract id, engine action) for each distinct abstract action among the legal engine actions.

        Card plays of one class collapse to the weakest card of the class that beats the table (else
        the weakest of the class); signals of one class to the first such token; rank instructions are
        dropped. Sorted by abstract id.
        """
        L = self.L
        cls = self.classes(strength)
        out: dict[int, int] = {}
        top = max((strength[c] for _, c in trick), default=-1)
        play_lo, play_hi = L.play, L.play + len(L.deck)
        best_card: dict[int, tuple] = {}
        for a in legal:
            if play_lo <= a < play_hi:
                card = L.deck[a - play_lo]
                k = cls[card]
                s = strength[card]
                # prefer cards that beat the table, then the weakest
                rank = (0 if s > top else 1, s)
                cur = best_card.get(k)
                if cur is None or rank < cur[0]:
                    best_card[k] = (rank, a)
            elif a in self.call_abs:
                out[self.call_abs[a]] = a
            elif L.slot >= 0 and L.slot <= a < L.slot + self.rules.hand_size:
                out.setdefault(self.PLAY + (a - L.slot), a)
            elif L.signal >= 0 and L.signal <= a < L.signal + len(L.signal_tokens):
                i = a - L.signal
                if i == 0:
                    out[self.SIG] = a
                else:
                    token = L.signal_tokens[i]
                    j = self.rank_class(strength, token) if self.mode == "card" else i - 1
                    out.setdefault(self.SIG + 1 + j, a)
            elif L.instruct >= 0 and L.instruct <= a < L.instruct + len(L.instruct_tokens):
                i = a - L.instruct
                if i < len(INSTRUCTIONS):
                    out[self.INS + i] = a
        for k, (_, a) in best_card.items():
            out[self.PLAY + k] = a
        return sorted(out.items())


# ---------------------------------------------------------------------- adapters
def state_key(ab: PartnershipAbstraction, state, seat: int) -> str:
    """The key of ``seat``'s decision, read from the engine state (training)."""
    n = 4
    rules = state.rules
    hand = state.hands[seat]
    blind = state.special == "iron" and rules.blind
    own = [] if blind else [c for c in hand if c >= 0]
    nblind = sum(1 for c in hand if c >= 0) if blind else 0
    trick = [((s - seat) % n, c) for s, c in state.trick]
    winners = [((w - seat) % n) if w >= 0 else -1 for w in state.trick_winners]
    lrs = state.last_raiser_side
    raiser = "-" if lrs < 0 else ("u" if lrs == rules.side(seat) else "t")
    caller = (state.call_caller - seat) % n if state.call_caller >= 0 else -1
    partner = rules.partner(seat)
    sig = None
    for entry in state.signals:
        if entry[0] == partner:
            sig = state.L.signal_tokens[entry[1]]
    ins = state.L.instruct_tokens[state.instruction] if state.instruction >= 0 else None
    return ab.key(state.phase, (seat - state.dealer) % n, own, nblind, state.strength, trick, winners, state.level,
                  raiser, state.all_in_accepted, state.call_kind, caller, sig, ins)


def view_key(ab: PartnershipAbstraction, view: dict) -> str:
    """The key of a decision, read from :func:`truc_env.game.view.seat_view` (playing)."""
    lrs = view["raise_side_last"]
    raiser = "-" if lrs < 0 else ("u" if lrs == view["side"] else "t")
    sig = None
    for s in view["signals"]:
        if s["sender"] == 2:
            sig = s["token"]
    own = list(view["own"])
    nblind = len(view["unseen_slots"]) if not own else 0
    return ab.key(view["phase"], (-view["dealer"]) % 4, own, nblind, view["strength"], list(view["trick"]),
                  list(view["trick_winners"]), view["level"], raiser, view["all_in_accepted"], view["call"],
                  view["caller"], sig, view["instruction"])
