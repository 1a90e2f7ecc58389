"""The chance of a hand: the deal card by card or at once, the vira, the first dealer, signal interceptions."""

from __future__ import annotations

from functools import cache

from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.hand_rules import (
    ELEVEN,
    IRON,
    NORMAL,
    eleven_seat,
    next_seat,
    special_hand,
)
from truc_env.game.rules import Rules
from truc_env.io.checks import check_action

_INTS = {int}

CHANCE = -1
TERMINAL = -4

# history entry kinds (third field): who/what a chance event was about
DEAL_DRAW = -2
FIRST_DEALER = -3
# each card's history entry as a deal draw, made once: a deal appends these (tuples are immutable, so shared)
_DRAWN = tuple((CHANCE, card, DEAL_DRAW) for card in range(256))


@cache
def deal_sequence(rules: Rules, dealer: int, vira: bool) -> tuple:
    """The seats a deal's draws go to (-1: the vira), in reverse: ``State.deal_seq`` is popped from the end.
    Round the table from the seat after the dealer, ``hand_size`` rounds, then the vira where one is turned."""
    n = rules.players
    seq = [(dealer + 1 + i) % n for i in range(rules.hand_size * n)] + ([-1] if vira else [])
    return tuple(reversed(seq))


# every field of a hand at its start, before the deal: (slot, Python expression over n players and s sides)
_HAND_FIELDS = (
    ("hands", "[{empty}]"), ("dealt_hands", "[{empty}]"), ("dealt", "[]"), ("drawn", "set()"), ("deal_seq", "[]"),
    ("vira", "-1"), ("strength", "strength"), ("redeal_used", "False"), ("old_hands", "[]"), ("deal_order", "[]"),
    ("active", "{seats}"), ("leader", "0"), ("turn", "0"), ("trick", "[]"), ("trick_no", "0"),
    ("trick_winners", "[]"), ("trick_leaders", "[]"), ("played", "[]"), ("withdrawn", "()"),
    ("play_started", "False"), ("level", "0"), ("raises", "0"), ("last_raiser_side", "-1"),
    ("all_in_called", "False"), ("all_in_accepted", "False"), ("special", "''"), ("eleven_seat", "-1"),
    ("call_kind", "''"), ("call_caller", "-1"), ("call_queue", "[]"), ("call_level", "0"), ("resigned", "[]"),
    ("env_calls", "[]"), ("env_caller", "-1"), ("env_queue", "[]"), ("env_done", "False"), ("env_result", "None"),
    ("flor_seats", "[]"), ("flor_sides", "[]"),  # flor_sides: sides whose flor is settled (sung, or answered "con flor")
    ("flor_answerer", "-1"), ("flor_result", "None"), ("signal_queue", "[]"), ("signals", "[]"),
    ("intercept_queue", "[]"), ("instruction", "-1"), ("pass_queue", "[]"), ("given", "[{minus}]"),
    ("discards", "[{minus}]"), ("hand_points", "[{zeros}]"),
)


@cache
def hand_resetter(players: int, n_sides: int):
    """``State._reset_hand_fields`` for a table size, straight-line with literal lists: a list display
    costs a fifth of a comprehension, and every hand (and every new State) begins here."""
    fill = {"empty": ", ".join(["[]"] * players), "seats": repr(tuple(range(players))),
            "minus": ", ".join(["-1"] * players), "zeros": ", ".join(["0"] * n_sides)}
    lines = ["def reset(self, strength):"] + [f"    self.{name} = {value.format(**fill)}" for name, value in _HAND_FIELDS]
    scope: dict = {}
    exec("\n".join(lines), scope)  # noqa: S102  (the text is built from the field table above)
    return scope["reset"]


_DEAL_SEQS: dict = {}  # (Rules key, dealer, vira) -> deal_sequence(...)


class Dealing:
    """The chance nodes of State (it inherits them): their outcomes and how each is applied."""

    __slots__ = ()  # the slots are State's

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome, probability) pairs at a chance node."""
        ph = self.phase
        if ph == "deal":
            drawn = self.drawn
            left = [c for c in self.rules.deck if c not in drawn]
            p = 1.0 / len(left)
            return [(c, p) for c in left]
        if ph == "intercept":
            q = self.rules.signals.intercept
            return [(0, 1.0 - q), (1, q)]
        if ph == "dealer":
            return [(s, 1.0 / self.n) for s in range(self.n)]
        raise TrucError(f"not a chance node (phase {ph!r})")

    def deal(self, cards) -> None:
        """Apply the next deal draws at once, in draw order: the same state as applying each card with
        :meth:`apply_action` (the same history entries), in one call. Nothing is applied if any card
        is not an undrawn card of the deck or there are more cards than draws left in this deal."""
        if self.phase != "deal":
            raise IllegalActionError(f"not dealing now (phase {self.phase!r}): no card can be dealt")
        cards = list(cards)
        if not _INTS.issuperset(map(type, cards)):  # the types in C, no set built: no per-card Python test in the usual case
            cards = [c if type(c) is int else check_action(c) for c in cards]
        k = len(cards)
        if k > len(self.deal_seq):
            raise IllegalActionError(f"{k} cards given for the {len(self.deal_seq)} draws left of this deal")
        drawn = self.drawn
        given = set(cards)
        # one set test for the usual case; the card-by-card test names the first bad card
        if len(given) < k or not drawn.isdisjoint(given) or not given <= self.L.deck_set:
            for i, card in enumerate(cards):
                self._check_card(card, drawn.union(cards[:i]))
        self._deal_valid(cards)

    def _deal_valid(self, cards: list[int]) -> None:
        """:meth:`deal` of cards known to be undrawn cards of the deck, no more than the draws left (the
        episode driver's dealer, dealing down a deck order it drew): the same state, no checks."""
        seq = self.deal_seq
        k = len(cards)
        targets = seq[:-k - 1:-1]  # the draws' seats, as _draw pops them from the end
        del seq[len(seq) - k:]
        self.drawn.update(cards)
        self.dealt += cards
        self.history += map(_DRAWN.__getitem__, cards)
        self.deal_order += targets
        hands = self.hands
        if -1 in targets:  # the vira is among these draws
            for card, target in zip(cards, targets):  # _draw's work, card after card
                if target >= 0:
                    hands[target].append(card)
                else:
                    self.vira = card
                    self.strength = self.rules.strength_with_vira(card)
        else:
            for card, target in zip(cards, targets):
                hands[target].append(card)
        if not seq:
            self._after_deal()
        self._legal = None

    @property
    def draws_left(self) -> int:
        """The deal draws still to come in this deal (0 when not dealing)."""
        return len(self.deal_seq) if self.phase == "deal" else 0

    def _begin_hand(self) -> None:
        r = self.rules
        hand_resetter(r.players, r.n_sides)(self, r.base_strength)  # State._reset_hand_fields, one call fewer
        self.hand_log.append({"dealer": self.dealer, "score": list(self.score), "start": len(self.history)})
        self._queue_deal()

    def _queue_deal(self) -> None:
        r = self.rules
        if self.dealt:  # a redeal: new hands (a hand's first deal has the empty ones just reset)
            self.hands = [[] for _ in range(r.players)]
        vira = r.vira and not self.redeal_used
        seq = _DEAL_SEQS.get((r.key, self.dealer, vira))  # keyed by the Rules' key: no Python-level __hash__ call
        if seq is None:
            seq = _DEAL_SEQS[r.key, self.dealer, vira] = deal_sequence(r, self.dealer, vira)
        self.deal_seq = list(seq)
        self.phase = "deal"
        self._legal = None

    def _check_card(self, card: int, drawn) -> None:
        if card in drawn or not (0 <= card < len(self.strength)) or self.rules.base_strength[card] < 0:
            raise IllegalActionError(f"chance outcome {card} is not a card left in the deck")

    def _draw(self, outcome: int) -> None:
        """One deal draw: the card goes to the next seat of the deal sequence (or is turned: the vira)."""
        self._check_card(outcome, self.drawn)
        self.drawn.add(outcome)
        self.dealt.append(outcome)
        self.history.append((CHANCE, outcome, DEAL_DRAW))
        target = self.deal_seq.pop()
        self.deal_order.append(target)
        if target >= 0:
            self.hands[target].append(outcome)
        else:
            self.vira = outcome
            self.strength = self.rules.strength_with_vira(outcome)
        if not self.deal_seq:
            self._after_deal()

    def _apply_chance(self, outcome: int) -> None:
        ph = self.phase
        if ph == "deal":
            self._draw(outcome)
        elif ph == "intercept":
            if outcome not in (0, 1):
                raise IllegalActionError(f"interception outcome must be 0 (unseen) or 1 (seen), got {outcome}")
            seat = self.intercept_queue.pop(0)
            self.history.append((CHANCE, outcome, seat))
            if outcome:
                self.signals[-1][3] |= 1 << seat
            if not self.intercept_queue:
                self._next_signal()
        else:  # first dealer
            if not 0 <= outcome < self.n:
                raise IllegalActionError(f"first dealer must be a seat in 0..{self.n - 1}, got {outcome}")
            self.history.append((CHANCE, outcome, FIRST_DEALER))
            self.dealer = outcome
            self._begin_hand()
        self._legal = None

    def _after_deal(self) -> None:
        r, d, n = self.rules, self.dealer, self.rules.players
        self.dealt_hands = list(map(list, self.hands))
        self.leader = self.turn = next_seat(d, n)
        if r.put_pass:
            self.pass_queue = [next_seat(d, n), d]
            self.phase = "give"
            return
        # r.eleven first only to skip building the arguments where the variant has no special hands
        special = special_hand(True, self.redeal_used, self.score[0], self.score[1], r.eleven_score) if r.eleven else NORMAL
        if special == IRON:
            self.special = "iron"
            self.hand_log[-1]["special"] = "iron"
        elif special == ELEVEN:
            self.eleven_seat = eleven_seat(self.leader, n, self.score[0], r.eleven_score)
            self.hand_log[-1].update(special="eleven", eleven_seat=self.eleven_seat)
            self.phase = "eleven"
            return
        self._begin_play()
