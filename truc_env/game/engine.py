"""The reference state machine for every variant (docs/rules.md). Every other piece is checked against it.

A :class:`State` is one game (``episode="game"``) or one hand (``episode="hand"``). Exactly one
actor at a time: a seat (``0..n-1``) or chance (:data:`CHANCE`). Chance is explicit: the first
dealer, each dealt card (one draw at a time from the cards not yet drawn), the vira, and each
signal interception. Environments sample chance with an injected ``numpy.random.Generator``.

Phases, in the order of a hand (docs/rules.md §0): ``deal`` (chance) -> ``give``/``discard`` (put_4p)
-> ``eleven`` (Brazilian decision at 11) -> ``signal``/``intercept`` -> ``turn`` (a card play or a
call) with ``instruct`` (Le Truc governor) before a partner's turn, ``answer`` (a pending raise,
mon reste, put or redeal), ``envido`` (a pending envido question, which goes first) and ``flor``
(the opposing flor holder's answer to a flor).
"""

from __future__ import annotations

from functools import cache
from operator import sub

from truc_env.errors import IllegalActionError, TrucError
from truc_env.game.actions import layout_of
from truc_env.game.calls import ENVIDO_KINDS, Calls, envido_cards, envido_points, flor_points, holds_flor, raise_cap  # noqa: F401  (re-exported: callers import the hand's facts from the engine)
from truc_env.game.dealing import CHANCE, DEAL_DRAW, FIRST_DEALER, TERMINAL, Dealing, deal_sequence, hand_resetter  # noqa: F401  (re-exported: callers import the chance labels from the engine)
from truc_env.game.hand_rules import (
    hand_value,
    may_all_in,
    may_raise,
    may_redeal,
    next_seat,
    put_n_value,
    raise_budget,
    trick_lead,
    wins_game,
)
from truc_env.game.rules import Rules
from truc_env.io.checks import check_action


@cache
def _winner(counts: tuple, first: int, tie_rule: str, all_tied: int) -> int:
    """Index of the side that wins with these trick counts, or -1 for nobody (docs/rules.md §0)."""
    best = max(counts)
    if best == 0:
        return all_tied
    top = [i for i, c in enumerate(counts) if c == best]
    if len(top) == 1:
        return top[0]
    return first if (tie_rule == "earliest" and first in top) else -1


_DECIDED: dict = {}  # State._decided_winner's results: few keys per Rules (trick results, seats in)
_DECIDED_MAX = 1 << 16
_UNKNOWN = object()
_TURN_CALLS: dict = {}  # State._turn_calls's results, by the fields they read


@cache
def _sides_index(side_of: tuple, active: tuple) -> tuple[list, dict]:
    """The sides still in, ascending, and each one's index among them (read only: shared by the cache)."""
    sides = sorted({side_of[s] for s in active})
    return sides, {sd: i for i, sd in enumerate(sides)}


@cache
def possible_winners(counts: tuple, first: int, remaining: int, tie_rule: str, all_tied: int) -> frozenset:
    """Every hand winner still reachable by some result of the remaining tricks."""
    if remaining == 0:
        return frozenset((_winner(counts, first, tie_rule, all_tied),))
    out = set(possible_winners(counts, first, remaining - 1, tie_rule, all_tied))
    for i in range(len(counts)):
        more = counts[:i] + (counts[i] + 1,) + counts[i + 1:]
        out |= possible_winners(more, first if first >= 0 else i, remaining - 1, tie_rule, all_tied)
    return frozenset(out)


class State(Dealing, Calls):
    """One game (or hand) of a Truc variant. Small and primitive: cheap to clone and pickle."""

    __slots__ = (
        "rules", "L", "episode", "score", "start_score", "dealer", "game_over", "winner", "phase",
        "hand_points", "last_hand_points", "hands_completed", "history", "hand_log",
        # deal
        "hands", "dealt_hands", "dealt", "drawn", "deal_seq", "vira", "strength", "redeal_used", "old_hands",
        "deal_order",
        # tricks
        "active", "leader", "turn", "trick", "trick_no", "trick_winners", "trick_leaders", "play_started",
        "played", "withdrawn",
        # stakes and calls
        "level", "raises", "last_raiser_side", "all_in_called", "all_in_accepted", "special",
        "eleven_seat", "call_kind", "call_caller", "call_queue", "call_level", "resigned",
        # envido and flor
        "env_calls", "env_caller", "env_queue", "env_done", "env_result", "flor_seats", "flor_sides",
        "flor_answerer", "flor_result",
        # signals, instructions, put_4p
        "signal_queue", "signals", "intercept_queue", "instruction", "pass_queue", "given", "discards",
        "_legal",
    )

    def __init__(self, rules: Rules, episode: str = "game", dealer: int | None = None,
                 score: list[int] | tuple[int, ...] | None = None):
        if episode not in ("game", "hand"):
            raise TrucError(f"episode must be 'game' or 'hand', got {episode!r}")
        self.rules = rules
        self.L = layout_of(rules)
        self.episode = episode
        n_sides = rules.n_sides
        if score is None:
            score = [0] * n_sides
        else:
            score = _checked_score(score, n_sides, rules.target)
        self.score = score
        self.start_score = tuple(score)
        self.game_over = False
        self.winner = -1
        self.hand_points = [0] * n_sides
        self.last_hand_points = [0] * n_sides
        self.hands_completed = 0
        self.history: list[tuple[int, int, int]] = []
        self.hand_log: list[dict] = []
        self._legal = None
        if dealer is None:
            dealer = rules.first_dealer
        if dealer == "random":
            self.dealer = -1
            self.phase = "dealer"
            self._reset_hand_fields()
        else:
            if not (isinstance(dealer, int) and 0 <= dealer < rules.players):
                raise TrucError(f"dealer must be a seat in 0..{rules.players - 1}, got {dealer!r}")
            self.dealer = dealer
            self._begin_hand()

    # ------------------------------------------------------------------ public API
    @property
    def n(self) -> int:
        return self.rules.players

    def current_player(self) -> int:
        """The seat to act, :data:`CHANCE`, or :data:`TERMINAL`."""
        ph = self.phase
        if ph == "turn":
            return self.turn
        if ph == "answer":  # the commonest after a turn
            return self.call_queue[0]
        if ph in ("deal", "intercept", "dealer"):
            return CHANCE
        if ph == "terminal":
            return TERMINAL
        if ph == "envido":
            return self.env_queue[0]
        if ph == "flor":
            return self.flor_answerer
        if ph == "signal":
            return self.signal_queue[0]
        if ph == "instruct":
            return self.governor(self.turn)
        if ph == "eleven":
            return self.eleven_seat
        if ph in ("give", "discard"):
            return self.pass_queue[0]
        raise AssertionError(ph)

    def is_chance_node(self) -> bool:
        return self.phase in ("deal", "intercept", "dealer")

    def is_terminal(self) -> bool:
        return self.phase == "terminal"

    @property
    def hand_over(self) -> bool:
        """True when the last hand begun has ended (the state then waits at the next deal or is terminal)."""
        return self.phase == "terminal" or (self.hands_completed > 0 and self.phase == "deal" and not self.dealt)

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the actor (empty at chance and terminal nodes)."""
        return list(self.legal_tuple())  # a list of their own: callers may change it

    def legal_tuple(self) -> tuple[int, ...]:
        """:meth:`legal_actions` as a tuple computed once per state change (the environments' masks key on it)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = tuple(self._turn_legal() if self.phase == "turn" else self._compute_legal())
        return legal

    def apply_action(self, action: int) -> None:
        """Apply a decision or a chance outcome; an illegal one raises IllegalActionError.

        Only integers (Python or numpy) are actions: a bool, float or string is refused rather
        than truncated or parsed, so ``2.7`` cannot silently play action 2.
        """
        if type(action) is not int:  # the shared contract (truc_env.io.checks); texts: string_to_action()
            action = check_action(action)
        legal = self._legal
        if legal and action in legal:  # a decision whose legal actions are known (reset at every change)
            self._legal = None
            if self.phase == "turn":  # the commonest decision, straight to its rule
                seat = self.turn
                self.history.append((seat, action, 0))
                card = self.L.card_of_play.get(action)
                if card is not None:  # a card play: _apply_turn's first case, one call fewer
                    self.play_started = True
                    self._play(seat, card)
                else:
                    self._apply_turn(seat, action)
                return
            seat = self.current_player()
            self.history.append((seat, action, 0))
            self._apply(action, seat)
            return
        ph = self.phase
        if ph == "deal":
            self._draw(action)
            self._legal = None
            return
        if ph == "terminal":
            raise IllegalActionError("the game is over: no action is legal")
        if ph in ("intercept", "dealer"):
            self._apply_chance(action)
            return
        if action not in self.legal_tuple():
            seat = self.current_player()
            raise IllegalActionError(
                f"seat {seat} cannot {self._describe(action)!r} now; legal: "
                + ", ".join(self.L.to_string(a) for a in self.legal_actions()))
        self._legal = None
        self.history.append((self.current_player(), action, 0))
        self._apply(action)

    def returns(self) -> list[float]:
        """Zero-sum points per seat accumulated since the start of the episode."""
        side_ret = zero_sum(list(map(sub, self.score, self.start_score)))
        return list(map(side_ret.__getitem__, self.rules.side_of))  # side_of: one side per seat

    _COPY_LISTS = ("score", "hand_points", "last_hand_points", "history", "dealt", "deal_seq", "deal_order", "trick",
                   "played",
                   "trick_winners", "trick_leaders", "call_queue", "resigned", "env_calls", "env_queue",
                   "flor_seats", "flor_sides", "signal_queue", "intercept_queue", "pass_queue", "given", "discards")

    # how clone copies each slot that is not shared (immutable values and the Rules are shared)
    _COPY_NESTED = {"hands": "[list(h) for h in self.hands]", "dealt_hands": "[list(h) for h in self.dealt_hands]",
                    "old_hands": "[[list(h) for h in hs] for hs in self.old_hands]",
                    "signals": "[list(x) for x in self.signals]", "drawn": "set(self.drawn)",
                    "hand_log": "[dict(h) for h in self.hand_log]"}

    def clone(self) -> State:
        """An independent copy (the solvers clone millions of states: see :func:`_make_clone`)."""
        return _clone(self)

    def hand_facts(self, hand: int = -1) -> dict:
        """What happened at the table in one hand (index into ``hand_log``; -1: the last begun).

        ``deal_order``: the seat each card of ``dealt`` went to, in draw order (-1: the vira);
        ``played``: ``(trick, seat, card)`` of every card put on the table, in order (a card withdrawn
        by a resignation stays: every seat saw it played); ``trick_winners``: the seat that won each
        finished trick (-1: tied); ``withdrawn``: the plays taken back by put_n resignations.
        """
        if hand < 0:
            hand += len(self.hand_log)
        if hand == len(self.hand_log) - 1 or hand < 0:
            facts = (self.deal_order, self.played, self.trick_winners, self.withdrawn)
        else:
            facts = self.hand_log[hand]["facts"]
        return dict(zip(("deal_order", "played", "trick_winners", "withdrawn"), facts))

    def action_to_string(self, action: int) -> str:
        return self.L.to_string(action)

    def string_to_action(self, text: str) -> int:
        return self.L.from_string(text)

    # ------------------------------------------------------------------ seats
    def governor(self, seat: int) -> int:
        """The governor of a seat's side: the dealer for his side, seat d+1 for the other (Le Truc)."""
        d, r = self.dealer, self.rules
        side = r.side_of
        return d if side[seat] == side[d] else (d + 1) % r.players

    def partner(self, seat: int) -> int:
        return self.rules.partner(seat)

    def next_active(self, seat: int) -> int:
        n, active = self.rules.players, self.active
        s = seat + 1 if seat + 1 < n else 0
        if s in active:  # the usual case: the next seat is still in
            return s
        for k in range(2, n + 1):
            s = (seat + k) % n
            if s in active:
                return s
        raise AssertionError("no active seat")

    def _opponents_after(self, seat: int) -> list[int]:
        r, active = self.rules, self.active
        side, n = r.side_of, r.players
        my = side[seat]
        out = []  # loops, not comprehensions: this runs at every call and every put
        for k in range(1, n):
            s = (seat + k) % n
            if s in active and side[s] != my:
                out.append(s)
        return out

    def _answerers(self, seat: int) -> list[int]:
        if self.rules.governors:
            return [self.governor((seat + 1) % self.rules.players)]
        return self._opponents_after(seat)

    def held(self, seat: int) -> list[int]:
        return [c for c in self.hands[seat] if c >= 0]

    # ------------------------------------------------------------------ hand set-up
    def _reset_hand_fields(self) -> None:
        r = self.rules
        hand_resetter(r.players, r.n_sides)(self, r.base_strength)

    def _begin_play(self) -> None:
        if self.rules.signals.mode != "none" and self.special != "iron":
            self._open_signal_round(self.leader)
        else:
            self._to_turn(self.leader)

    def _open_signal_round(self, first: int) -> None:
        n = self.n
        order = [(first + k) % n for k in range(n)]
        if self.rules.signals.governor_partners_only:
            gov_partners = {self.partner(self.dealer), self.partner((self.dealer + 1) % n)}
            order = [s for s in order if s in gov_partners]
        self.signal_queue = order
        self.phase = "signal"

    def _next_signal(self) -> None:
        if self.signal_queue:
            self.phase = "signal"
        else:
            self._to_turn(self.leader)

    def _to_turn(self, seat: int) -> None:
        self.turn = seat
        r = self.rules
        if (r.instructions and self.instruction < 0 and seat != self.governor(seat)
                and len(self.held(seat)) > 1):
            self.phase = "instruct"
        else:
            self.phase = "turn"

    # ------------------------------------------------------------------ legal actions
    def _compute_legal(self) -> list[int]:
        ph = self.phase
        L = self.L
        if ph == "turn":
            return self._turn_legal()
        if ph == "answer":
            r = self.rules  # r.flor, r.envido first: no call where the variant has neither
            if r.flor and self._must_sing(self.call_queue[0]):  # flor is sung before answering a truco
                return [L.FLOR]
            acts = [L.ACCEPT, L.REFUSE]
            if self.call_kind == "raise" and self._may_counter():
                acts.append(L.RAISE)
            if r.envido and self._envido_open_for_answer(self.call_queue[0]):
                acts += L.ENVIDO.values()
            acts.sort()
            return acts
        if ph in ("deal", "intercept", "dealer", "terminal"):
            return []
        if ph == "envido":
            return self._envido_answer_legal()
        if ph == "flor":
            return sorted([L.ACCEPT, L.REFUSE])
        if ph == "eleven":
            return sorted([L.ACCEPT, L.REFUSE])
        if ph == "signal":
            return self._signal_legal(self.signal_queue[0])
        if ph == "instruct":
            return list(range(L.instruct, L.instruct + len(L.instruct_tokens)))
        if ph == "give":
            hand = self.held(self.pass_queue[0])
            top = max(self.strength[c] for c in hand)
            return sorted(L.give + L.card_index[c] for c in hand if self.strength[c] == top)
        if ph == "discard":
            return sorted(L.discard + L.card_index[c] for c in self.held(self.pass_queue[0]))
        raise AssertionError(ph)

    def _turn_legal(self) -> list[int]:
        r, L, s = self.rules, self.L, self.turn
        if r.flor and self._must_sing(s):  # flor is compulsory: sing it (or fold) before anything else
            return sorted([L.FLOR] + ([L.FOLD] if r.fold else []))
        special = self.special
        if special == "iron" and r.blind:
            acts = [L.slot + i for i, c in enumerate(self.hands[s]) if c >= 0]
        elif self.instruction <= 0:  # no governor's instruction: every card held is playable
            play_of = L.play_of
            acts = []  # a loop, not a comprehension: its function call costs more than three cards
            for c in self.hands[s]:
                if c >= 0:
                    acts.append(play_of[c])
        else:
            acts = [L.play + L.card_index[c] for c in self._playable(s)]
        # the calls open at this turn: a function of the few fields in the key, kept (few keys per Rules)
        key = (r.key, s, special, self.last_raiser_side, self.raises, self.level, self.all_in_accepted,
               self.all_in_called, self.play_started, self.redeal_used, self.dealer, len(self.drawn))
        calls = _TURN_CALLS.get(key)
        if calls is None:
            if len(_TURN_CALLS) >= _DECIDED_MAX:  # a bound on memory, whatever the variants played
                _TURN_CALLS.clear()
            calls = _TURN_CALLS[key] = self._turn_calls(s, special)
        acts += calls
        if r.envido and self._envido_open_at_turn(s):
            acts += L.ENVIDO.values()
        acts.sort()
        return acts

    def _turn_calls(self, s: int, special: str) -> tuple[int, ...]:
        """The calls seat ``s`` may make at its turn (raise, mon reste / put, fold, redeal; envido apart)."""
        r, L = self.rules, self.L
        acts = []
        # the call rules are and-chains (hand_rules): their cheap terms first skip building the arguments
        if not special:
            side, last = r.side_of[s], self.last_raiser_side
            if last != side:
                budget = raise_budget(self.raises, raise_cap(r.max_raises), 0)
                if may_raise(self.level, r.ladder_top, False, self.all_in_accepted, last, side, budget):
                    acts.append(L.RAISE)
                if r.all_in is not None and may_all_in(True, self.all_in_called, False, last, side, budget):
                    acts.append(L.ALL_IN)
        if r.fold:
            acts.append(L.FOLD)
        if (r.redeal and not self.play_started
                and may_redeal(True, self.redeal_used, False, s, next_seat(self.dealer, r.players),
                               r.players, len(r.deck) - len(self.drawn), r.hand_size)):
            acts.append(L.REDEAL)
        return tuple(acts)

    def _playable(self, seat: int) -> list[int]:
        hand = self.held(seat)
        ins = self.instruction
        if ins <= 0 or len(hand) <= 1:
            return hand
        token = self.L.instruct_tokens[ins]
        strength = self.strength
        if token == "high":
            top = max(strength[c] for c in hand)
            return [c for c in hand if strength[c] == top]
        if token == "low":
            low = min(strength[c] for c in hand)
            return [c for c in hand if strength[c] == low]
        fam = self.rules.family
        same = [c for c in hand if fam.rank_of(c) == token]
        return same or hand

    def _has_played_this_hand(self, seat: int) -> bool:
        return any(s == seat for s, _ in self.trick)

    # ------------------------------------------------------------------ applying decisions
    def _describe(self, action: int) -> str:
        try:
            return self.L.to_string(action)
        except TrucError:
            return f"action {action}"

    def _apply(self, a: int, seat: int | None = None) -> None:
        L, ph = self.L, self.phase
        if seat is None:
            seat = self.current_player()
        if ph == "turn":  # the commonest decisions first
            self._apply_turn(seat, a)
        elif ph == "answer":
            self._apply_answer(seat, a)
        elif ph == "envido":
            self._apply_envido_answer(seat, a)
        elif ph == "flor":
            self._apply_flor_answer(seat, a)
        elif ph == "signal":
            self._apply_signal(seat, a)
        elif ph == "instruct":
            self.instruction = a - L.instruct
            self.phase = "turn"
        elif ph == "eleven":
            if a == L.ACCEPT:
                self.special = "eleven"
                self._begin_play()
            else:
                self._score(1 - self.rules.side(seat), self.rules.ladder[0])
                self._end_hand()
        elif ph == "give":
            card = self.L.deck[a - L.give]
            self.pass_queue.pop(0)
            self._remove(seat, card)
            receiver = self.partner(seat)
            self.hands[receiver].append(card)
            self.given[receiver] = card
            if not self.pass_queue:
                d = self.dealer
                self.pass_queue = [self.partner(d), self.partner((d + 1) % 4)]
                self.phase = "discard"
        elif ph == "discard":
            card = self.L.deck[a - L.discard]
            self.pass_queue.pop(0)
            self._remove(seat, card)
            self.discards[seat] = card
            if not self.pass_queue:
                d = self.dealer
                self.active = (self.partner(d), self.partner((d + 1) % 4))
                self.leader = self.active[1]
                self._begin_play()

    def _remove(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand[hand.index(card)] = -1

    def _apply_turn(self, seat: int, a: int) -> None:
        L, r = self.L, self.rules
        card = L.card_of_play.get(a)
        if card is not None:  # a card play: the commonest turn
            self.play_started = True
            self._play(seat, card)
        elif L.slot >= 0 and L.slot <= a < L.slot + r.hand_size:
            self.play_started = True
            self._play(seat, self.hands[seat][a - L.slot])
        elif a == L.RAISE:
            self.play_started = True
            self._open_call("raise", seat, self.level + 1)
        elif a == L.ALL_IN:
            self.play_started = True
            self.all_in_called = True
            # put_n: every other player still in answers, in order after the caller
            queue = [self.next_active_from(seat, k) for k in range(1, len(self.active))] if r.put_n else None
            self._open_call(r.all_in, seat, self.level, queue)
        elif a == L.FOLD:
            other = 1 - r.side_of[seat]
            self._score(other, self._hand_value(other))
            self._end_hand()
        elif a == L.REDEAL:
            self.redeal_used = True
            self._open_call("redeal", seat, self.level, [self.dealer])
        elif a in L.ENVIDO.values():
            self.play_started = True
            self._open_envido(seat, L.to_string(a))
        elif a == L.FLOR:
            self._announce_flor(seat)

    def next_active_from(self, seat: int, k: int) -> int:
        for _ in range(k):
            seat = self.next_active(seat)
        return seat

    def _play(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand[hand.index(card)] = -1
        trick = self.trick
        trick.append((seat, card))
        self.played.append((self.trick_no, seat, card))
        self.instruction = -1
        strength, side = self.strength, self.rules.side_of
        best = winner = winner_side = -1
        for s, c in trick:
            best, winner, winner_side = trick_lead(best, winner, winner_side, strength[c], s, side[s])
        active = self.active
        if len(trick) < len(active):
            # the rest of the trick is the winner's partners: the trick is his whatever they play
            if winner < 0 or not self.rules.partnership or self._rest_not_partners(winner) or not self._decided_if(winner):
                self._to_turn(self.next_active(seat))
                return
        self.trick_winners.append(winner)
        self.trick_leaders.append(self.leader)
        if self._end_if_decided():
            return
        self.trick_no += 1
        self.trick = []
        if winner >= 0:
            self.leader = winner
        if self.leader not in self.active:
            self.leader = self.next_active(self.leader)
        sig = self.rules.signals
        if sig.mode != "none" and sig.timing == "every_trick" and self.special != "iron":
            self._open_signal_round(self.leader)
        else:
            self._to_turn(self.leader)

    def _rest_not_partners(self, winner: int) -> bool:
        """Is a seat yet to play in this trick not of the trick winner's side?"""
        side = self.rules.side_of
        mine, trick = side[winner], self.trick
        for s in self.active:  # loops, not comprehensions: this runs at most plays in partnership games
            if side[s] != mine:
                for t, _ in trick:
                    if t == s:
                        break
                else:
                    return True
        return False

    def _end_if_decided(self) -> bool:
        """Score and end the hand if no remaining trick can change its winner."""
        winner = self._decided_winner()
        if winner is None:
            return False
        if winner >= 0:
            self._score(winner, self._hand_value(winner))
        self._end_hand()
        return True

    def _decided_if(self, trick_winner: int) -> bool:
        """Would this trick's result, as it stands, decide the hand?"""
        self.trick_winners.append(trick_winner)
        self.trick_leaders.append(self.leader)
        decided = self._decided_winner() is not None
        self.trick_winners.pop()
        self.trick_leaders.pop()
        return decided

    def _decided_winner(self) -> int | None:
        """The winning side (-1 for nobody) once no remaining trick can change it, else None."""
        # a function of the rules, the seats in, the tricks' winners and the seat whose side an all-tie goes to
        r = self.rules
        tied = r.all_tied
        if tied == "leader":
            tied = self.trick_leaders[0]
        elif tied == "dealer":
            tied = self.dealer
        key = (r.key, self.active, tuple(self.trick_winners), tied)
        out = _DECIDED.get(key, _UNKNOWN)
        if out is _UNKNOWN:
            if len(_DECIDED) >= _DECIDED_MAX:  # a bound on memory, whatever the variants played
                _DECIDED.clear()
            out = _DECIDED[key] = self._find_decided_winner()
        return out

    def _find_decided_winner(self) -> int | None:
        r = self.rules
        side, active = r.side_of, self.active
        sides, index = _sides_index(side, active)
        counts = [0] * len(sides)
        first = -1
        for w in self.trick_winners:
            if w >= 0 and w in active:
                i = index[side[w]]
                counts[i] += 1
                if first < 0:
                    first = i
        if r.all_tied == "leader":
            tied = index.get(r.side(self.trick_leaders[0]), -1)
        elif r.all_tied == "dealer":
            tied = index.get(r.side(self.dealer), -1)
        else:
            tied = -1
        remaining = r.hand_size - len(self.trick_winners)
        possible = possible_winners(tuple(counts), first, remaining, r.tie_rule, tied)
        if len(possible) > 1:
            return None
        (w,) = possible
        return sides[w] if w >= 0 else -1

    def _hand_value(self, side: int) -> int:
        r = self.rules
        if r.put_n and self.all_in_accepted and not self.special:  # put_n after a put: the still-in count
            return put_n_value(len(self.active))
        return hand_value(r.ladder[self.level], self.special == "eleven", self.special == "iron", r.eleven_value,
                          r.ladder[0], self.all_in_accepted, r.target - self.score[side])

    # ------------------------------------------------------------------ scoring
    def _score(self, side: int, points: int) -> None:
        if points <= 0:
            return
        self.score[side] += points
        self.hand_points[side] += points
        if wins_game(self.score[side], self.rules.target) and not self.game_over:
            self.game_over = True
            self.winner = side

    def _end_hand(self) -> None:
        self.last_hand_points = list(self.hand_points)
        self.hands_completed += 1
        log = self.hand_log[-1]
        log["hand_points"] = list(self.hand_points)
        log["end"] = len(self.history)
        # the hand's facts outlive its fields, which the next deal resets
        log["facts"] = (tuple(self.deal_order), tuple(self.played), tuple(self.trick_winners), self.withdrawn)
        self.call_kind = ""
        self.call_queue = []
        self.env_queue = []
        self.flor_answerer = -1
        if self.game_over or self.episode == "hand":
            self.phase = "terminal"
        else:
            self.dealer = next_seat(self.dealer, self.rules.players)
            self._begin_hand()
        self._legal = None


def _make_clone():
    """``State.clone`` as one straight-line function over the slots, generated once from ``__slots__``:
    a loop of getattr/setattr over 80 slots costs 3-4x more, and the tree builders clone millions."""
    lines = ["def clone(self):", "    new = new_state(State)"]
    for name in State.__slots__:
        if name in State._COPY_NESTED:
            value = State._COPY_NESTED[name]
        elif name in State._COPY_LISTS:
            value = f"list(self.{name})"
        else:
            value = f"self.{name}"
        lines.append(f"    new.{name} = {value}")
    lines.append("    return new")
    scope = {"State": State, "new_state": object.__new__}
    exec("\n".join(lines), scope)  # noqa: S102  (the text is built from the class's own slot names)
    return scope["clone"]


_clone = _make_clone()


def _checked_score(score, n_sides: int, target: int) -> list[int]:
    if not isinstance(score, (list, tuple)):  # a scalar, a string or a mapping is no score
        raise TrucError(f"score must be {n_sides} non-negative integers (one per side), got {score!r:.60}")
    score = list(score)
    if len(score) != n_sides or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in score):
        raise TrucError(f"score must be {n_sides} non-negative integers (one per side), got {score!r}")
    if any(s >= target for s in score):
        raise TrucError(f"score {score} already reaches the target {target}")
    return score


def zero_sum(points: list[int]) -> list[float]:
    """Per-side zero-sum rewards: own minus opponent (2 sides), own minus the mean (put_n)."""
    if len(points) == 2:
        return [float(points[0] - points[1]), float(points[1] - points[0])]
    mean = sum(points) / len(points)
    return [p - mean for p in points]


def new_game(rules: Rules, episode: str = "game", dealer: int | None = None, score=None) -> State:
    """A new game (or single hand) at its first chance node."""
    return State(rules, episode=episode, dealer=dealer, score=score)


def sample_chance(state: State, rng) -> int:
    """Draw a chance outcome with the injected ``numpy.random.Generator``: a card uniformly from the
    undrawn ones, any other outcome by its probability. The per-outcome draw of
    ``truc_env.game.episode.Dealer``, which plays whole episodes (and deals duplicate deals by seed)."""
    if state.phase == "deal":  # uniform over the undrawn cards, by rejection (no outcome list)
        deck, drawn = state.rules.deck, state.drawn
        while True:
            card = deck[int(rng.integers(len(deck)))]
            if card not in drawn:
                return card
    outcomes = state.chance_outcomes()
    probs = [p for _, p in outcomes]
    return outcomes[int(rng.choice(len(outcomes), p=probs))][0]


def sample_deal(state: State, rng) -> list[int]:
    """The rest of this deal's draws at once, for :meth:`State.deal`: the very cards that
    :func:`sample_chance` would draw one at a time from the same ``rng`` (the same calls, in order)."""
    deck, drawn = state.rules.deck, set(state.drawn)
    integers, size = rng.integers, len(deck)
    cards = []
    for _ in range(state.draws_left):
        card = deck[int(integers(size))]
        while card in drawn:
            card = deck[int(integers(size))]
        drawn.add(card)
        cards.append(card)
    return cards
