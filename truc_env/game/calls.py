"""The calls of a hand and what they settle: raises and their answers, envido and flor, the put_n put, signals."""

from __future__ import annotations

from truc_env.errors import TrucError
from truc_env.game.hand_rules import (
    NO_SUIT,
    envido_open,
    envido_pip,
    envido_refused_stake,
    envido_score,
    envido_stake,
    flor_score,
    flor_stake,
    has_flor,
    may_call_envido,
    may_counter,
    may_envido_on_truco,
    may_raise_envido,
    must_sing,
    raise_budget,
    signal_audience,
    wins_announcement,
)

ENVIDO_KINDS = ("envido", "real_envido", "falta_envido")  # hand_rules.ENVIDO, REAL_ENVIDO, FALTA_ENVIDO


def envido_cards(cards, family) -> tuple:
    """The (pip, suit) arguments of hand_rules' envido and flor decisions for up to three cards."""
    if len(cards) > 3:
        raise TrucError(f"envido and flor count up to three dealt cards, not {len(cards)}")
    args = []
    for c in cards:
        args += [envido_pip(int(family.rank_of(c))), c % 4]
    return tuple(args + [0, NO_SUIT] * (3 - len(cards)))


def flor_points(cards, family) -> int:
    """20 + the three pip values of a flor (10-12 count 0), docs/rules.md §6."""
    pips = envido_cards(cards, family)
    return flor_score(pips[0], pips[2], pips[4])


def envido_points(cards, family) -> int:
    """20 + the two highest pips of two cards of one suit (10-12 count 0), else the highest pip."""
    return envido_score(*envido_cards(cards, family))


def holds_flor(cards, family) -> bool:
    """Three dealt cards of one suit."""
    args = envido_cards(cards, family) if len(cards) == 3 else (0, NO_SUIT) * 3
    return has_flor(args[1], args[3], args[5])


def raise_cap(max_raises: int | None) -> int:
    """The raise cap as hand_rules takes it: -1 for none."""
    return -1 if max_raises is None else max_raises


class Calls:
    """The calls of State (it inherits them): what may be called and answered, and what each settles."""

    __slots__ = ()  # the slots are State's

    def _may_counter(self) -> bool:
        r = self.rules
        return may_counter(r.counter_raise, self.call_level, r.ladder_top, raise_budget(self.raises, raise_cap(r.max_raises), 1))

    def _envido_open(self) -> bool:
        return envido_open(self.rules.envido, self.env_done, self.trick_no, self.level, bool(self.flor_seats))

    def _envido_open_at_turn(self, seat: int) -> bool:
        return may_call_envido(self._envido_open(), self._has_played_this_hand(seat))

    def _envido_open_for_answer(self, seat: int) -> bool:
        # "envido goes first": the answer to the first truco, in the first trick
        return may_envido_on_truco(self._envido_open(), self.call_kind == "raise", self.call_level)

    def _has_flor(self, seat: int) -> bool:
        return holds_flor(self.dealt_hands[seat], self.rules.family)

    def _must_sing(self, seat: int) -> bool:
        """A flor holder whose side's flor is not settled yet, in the first trick (docs/rules.md §6)."""
        r = self.rules  # r.flor first: no hand is read where the variant has no flor
        return r.flor and must_sing(r.flor, self.trick_no, r.side(seat) in self.flor_sides,
                                    self._has_played_this_hand(seat), self._has_flor(seat))

    def _envido_answer_legal(self) -> list[int]:
        L, chain = self.L, self.env_calls
        if self._must_sing(self.env_queue[0]):  # a flor holder never answers an envido
            return [L.FLOR]
        acts = [L.ACCEPT, L.REFUSE]
        last, envidos = ENVIDO_KINDS.index(chain[-1]), chain.count("envido")
        acts += [L.ENVIDO[name] for kind, name in enumerate(ENVIDO_KINDS) if may_raise_envido(last, envidos, kind)]
        return sorted(acts)

    def _signal_legal(self, seat: int) -> list[int]:
        L, sig = self.L, self.rules.signals
        base = L.signal
        tokens = L.signal_tokens
        if sig.mode == "free" or not sig.truthful:
            return list(range(base, base + len(tokens)))
        return [base] + [base + i for i in range(1, len(tokens)) if self._signal_true(seat, tokens[i])]

    def _signal_true(self, seat: int, token: str) -> bool:
        """Does the token describe a card the seat still holds? (truthful card / señas modes)."""
        fam = self.rules.family
        hand = self.held(seat)
        if self.rules.signals.mode == "card":
            return any(fam.rank_of(c) == token for c in hand)
        return any(token in self.senas_of(c) for c in hand)

    def senas_of(self, card: int) -> tuple:
        """The seña names that truthfully describe a card in this hand."""
        return self.rules.senas_of(card, self.vira)

    def _open_call(self, kind: str, caller: int, level: int, queue: list[int] | None = None) -> None:
        self.call_kind = kind
        self.call_caller = caller
        self.call_level = level
        self.call_queue = queue if queue is not None else self._answerers(caller)
        self.phase = "answer"

    def _close_call(self) -> None:
        self.call_kind = ""
        self.call_caller = -1
        self.call_queue = []
        self.phase = "turn"

    def _apply_answer(self, seat: int, a: int) -> None:
        L, r = self.L, self.rules
        kind, caller = self.call_kind, self.call_caller
        if a == L.FLOR:  # sung before answering; the truco question then resumes at him
            self._announce_flor(seat)
            return
        if L.ENVIDO and a in L.ENVIDO.values():  # envido goes first; the truco question waits
            self._open_envido(seat, L.to_string(a))
            return
        if kind == "redeal":
            self._close_call()
            if a == L.ACCEPT:
                self.old_hands.append([list(h) for h in self.hands])
                self._queue_deal()
            return
        if r.put_n:
            self.call_queue.pop(0)
            if a == L.REFUSE:
                self.resigned.append(seat)
            if not self.call_queue:
                self._settle_put_n(caller)
            return
        if a == L.ACCEPT:
            self._accept_call(kind, caller)
            self._close_call()
        elif a == L.REFUSE:
            self.call_queue.pop(0)
            if not self.call_queue:
                self._score(r.side_of[caller], r.ladder[self.level])
                self._end_hand()
        else:  # counter-raise: accepts the pending step and asks the counter-raiser's opponents
            self._accept_call(kind, caller)
            self._open_call("raise", seat, self.level + 1)

    def _accept_call(self, kind: str, caller: int) -> None:
        if kind == "raise":
            self.level = self.call_level
        else:
            self.all_in_accepted = True
        self.raises += 1
        self.last_raiser_side = self.rules.side_of[caller]

    def _settle_put_n(self, caller: int) -> None:
        out = set(self.resigned)
        self.active = tuple(s for s in self.active if s not in out)
        self.trick = [(s, c) for s, c in self.trick if s not in out]
        if self.leader in out:
            self.leader = self.next_active(self.leader)
        self._close_call()
        if len(self.active) == 1:
            self._score(caller, self.rules.ladder[0])
            self._end_hand()
            return
        # the resigned seats take their cards of this trick back (when the hand goes on)
        self.withdrawn = tuple(p for p in self.played if p[0] == self.trick_no and p[1] in out)
        self.all_in_accepted = True
        self.raises += 1
        self.last_raiser_side = caller
        if self.trick_winners:  # resignations can decide the hand at once
            self._end_if_decided()

    # ------------------------------------------------------------------ envido and flor
    def _open_envido(self, seat: int, call: str) -> None:
        self.env_calls.append(call)
        self.env_caller = seat
        self.env_queue = self._opponents_after(seat)
        self.phase = "envido"

    def _apply_envido_answer(self, seat: int, a: int) -> None:
        L = self.L
        if a == L.ACCEPT:
            self._settle_envido(accepted=True)
        elif a == L.REFUSE:
            self.env_queue.pop(0)
            if not self.env_queue:
                self._settle_envido(accepted=False)
        elif a == L.FLOR:  # the pending envido is cancelled and scores nothing
            self.env_queue = []
            self.env_calls = []
            self._announce_flor(seat)
        else:
            self._open_envido(seat, L.to_string(a))

    def _envido_value(self, chain: list[str]) -> int:
        value = 0
        for call in chain:
            value = envido_stake(value, ENVIDO_KINDS.index(call), self.rules.target, max(self.score))
        return value

    def _settle_envido(self, accepted: bool) -> None:
        r, chain = self.rules, self.env_calls
        self.env_queue = []
        self.env_done = True
        if accepted:
            order = [(self.dealer + 1 + k) % self.n for k in range(self.n)]
            holder, best = self._best_announcement(order, [envido_points(self.dealt_hands[s], r.family) for s in order])
            self.env_result = (holder, best)
            # announced right after the history entry that accepted it
            self.hand_log[-1].setdefault("envido", []).append((len(self.history) - 1, holder, best))
            self._score(r.side(holder), self._envido_value(chain))
        else:
            self._score(r.side(self.env_caller), envido_refused_stake(self._envido_value(chain[:-1])))
        self._resume_after_calls()

    def _announce_flor(self, seat: int) -> None:
        r = self.rules
        self.flor_seats.append(seat)
        self.flor_sides.append(r.side(seat))
        self.env_done = True
        # an opposing flor answers this one instead of being sung (the first holder in play order)
        rivals = [s for s in self._opponents_after(seat) if self._must_sing(s)]
        if rivals:
            self.flor_answerer = rivals[0]
            self.phase = "flor"
            return
        self._score(r.side(seat), flor_stake(False, False))
        self._resume_after_calls()

    def _apply_flor_answer(self, seat: int, a: int) -> None:
        r = self.rules
        self.flor_sides.append(r.side(seat))
        self.flor_answerer = -1
        if a == self.L.ACCEPT:  # "con flor quiero": 4 to the better flor, ties nearer the mano
            order = [s for s in ((self.dealer + 1 + k) % self.n for k in range(self.n)) if self._has_flor(s)]
            holder, best = self._best_announcement(order, [flor_points(self.dealt_hands[s], r.family) for s in order])
            self.flor_result = (holder, best)
            self.hand_log[-1].setdefault("flor", []).append((len(self.history) - 1, holder, best))
            self._score(r.side(holder), flor_stake(True, True))
        else:  # "con flor me achico": 3 to the first flor's side
            self._score(r.side(self.flor_seats[-1]), flor_stake(True, False))
        self._resume_after_calls()

    @staticmethod
    def _best_announcement(order: list[int], points: list[int]) -> tuple[int, int]:
        """(holder, points) of the best envido (or flor) of the seats in play order from the mano."""
        holder, best = order[0], points[0]
        for seat, pts in zip(order[1:], points[1:]):
            if not wins_announcement(best, pts, True):
                holder, best = seat, pts
        return holder, best

    def _resume_after_calls(self) -> None:
        if self.game_over:
            self._end_hand()
        elif self.call_kind:
            self.phase = "answer"
        else:
            self.phase = "turn"

    # ------------------------------------------------------------------ signals
    def _apply_signal(self, seat: int, a: int) -> None:
        r, n = self.rules, self.n
        self.signal_queue.pop(0)
        opponents = [(seat + k) % n for k in range(1, n) if r.side((seat + k) % n) != r.side(seat)]
        q = r.signals.intercept
        seen = signal_audience(seat, self.partner(seat), n, q >= 1.0)
        self.signals.append([seat, a - self.L.signal, self.trick_no, seen])
        if 0.0 < q < 1.0:
            self.intercept_queue = opponents
            self.phase = "intercept"
        else:
            self._next_signal()
