"""The episode driver: chance, rewards and the loop from one decision to the next, defined once.

Every place that plays an episode (the PettingZoo and Gymnasium envs, the vector env's loop fallback,
the arena, the signals kit, the demo, PPO's rollouts) builds on this module:

- :class:`Dealer` samples chance: ``Dealer(rules, rng)`` draws each card uniformly from the undrawn
  ones; ``Dealer.shuffled(rules, rng)`` shuffles a deck order per hand from ``rng`` and deals down it;
  ``Dealer.seeded(rules, deal_seed)`` takes each hand's deck order from ``(deal_seed, hand number)``
  alone (duplicate deals: the same cards whoever sits where, whatever was played before). Other
  chance (the first dealer, signal interception) is drawn by its probabilities from the stream.
- :func:`win_rewards` is the ``"win"`` reward; :func:`side_rewards` its table per winning side.
- :class:`Episode` steps a State through chance to the next decision and hands out each seat's
  reward since it last asked: ``"points"`` as they are scored (the zero-sum change of
  ``State.returns()``), ``"win"`` at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import sub

import numpy as np

from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State, sample_chance, sample_deal
from truc_env.game.rules import Rules

REWARDS = ("points", "win")
CHANCE_PHASES = ("deal", "intercept", "dealer")  # the phases where State.is_chance_node() is true
INTERCEPT_STREAM = 1 << 20  # a seeded dealer's non-deal chance stream: apart from every hand's deck


_DECK_ARRAYS: dict = {}


def _deck_array(rules: Rules) -> np.ndarray:
    """``rules.deck`` as an array, made once per Rules."""
    arr = _DECK_ARRAYS.get(rules.key)
    if arr is None:
        arr = _DECK_ARRAYS[rules.key] = np.array(rules.deck, dtype=np.int64)
    return arr


def _cards_of(rules: Rules, perm) -> list[int]:
    """A deck order given as indices into ``rules.deck``, as cards (Python ints: indexing by numpy integers costs
    several times more); any sequence of indices works."""
    if isinstance(perm, np.ndarray):
        return _deck_array(rules)[perm].tolist()  # one gather: a third of a Python loop's time
    deck = rules.deck
    return [deck[i] for i in perm]


class Dealer:
    """Chance outcomes of one episode; see the module docstring for the three forms."""

    def __init__(self, rules: Rules, rng: np.random.Generator,
                 decks: Callable[[int], np.ndarray] | None = None):
        self.rules = rules
        self.rng = rng
        # hand number -> that hand's deck order as cards; None: uniform draws. ``decks`` gives indices into rules.deck
        self._orders = None if decks is None else (lambda hand: _cards_of(rules, decks(hand)))
        self._valid = False  # the orders are permutations of the deck (shuffled, seeded): deal()'s cards need no checks
        self.hand = -1
        self._perm: np.ndarray | None = None
        self.order: list[int] = []  # this hand's deck order, as cards
        self.pos = 0

    @classmethod
    def shuffled(cls, rules: Rules, rng: np.random.Generator) -> Dealer:
        """A deck order per hand drawn from ``rng`` when the hand's deal begins (the batched kernel's way)."""
        def order(hand: int) -> list[int]:
            # rng.permutation(len(deck)) is rng.shuffle(arange(len(deck))): the cards shuffled in place of
            # their indices are the same order from the same draws, without the gather from the deck
            cards = list(rules.deck)
            rng.shuffle(cards)
            return cards

        dealer = cls(rules, rng)
        dealer._orders, dealer._valid = order, True
        return dealer

    @classmethod
    def seeded(cls, rules: Rules, deal_seed: int) -> Dealer:
        """Each hand's deck order from ``(deal_seed, hand number)`` alone, never from the actions."""
        dealer = cls(rules, np.random.default_rng([deal_seed, INTERCEPT_STREAM]),
                     lambda hand: np.random.default_rng([deal_seed, hand]).permutation(len(rules.deck)))
        dealer._valid = True
        return dealer

    @property
    def perm(self) -> np.ndarray | None:
        """This hand's deck order as indices into ``rules.deck`` (None before the first deal)."""
        if self._perm is None and self.order:
            index = layout_of(self.rules).card_index
            self._perm = np.array([index[c] for c in self.order], dtype=np.int64)
        return self._perm

    def outcome(self, state: State) -> int:
        """The outcome of the chance node ``state`` is at."""
        if state.phase != "deal" or self._orders is None:
            return sample_chance(state, self.rng)
        self._deck_for(state)
        while self.order[self.pos] in state.drawn:  # redeals continue down the same deck
            self.pos += 1
        return self.order[self.pos]

    def deal(self, state: State) -> list[int]:
        """The rest of the deal ``state`` is in, at once: the cards :meth:`outcome` would give one draw
        at a time (the same random calls in the same order, so the same states from the same seed)."""
        if self._orders is None:
            return sample_deal(state, self.rng)
        self._deck_for(state)
        order, drawn, pos = self.order, state.drawn, self.pos
        if not drawn:  # a hand's first deal: the top of the deck
            k = state.draws_left
            self.pos = pos + k
            return order[pos:pos + k]
        cards = []
        for _ in range(state.draws_left):
            while order[pos] in drawn:  # redeals continue down the same deck
                pos += 1
            cards.append(order[pos])
            pos += 1
        self.pos = pos
        return cards

    def _deck_for(self, state: State) -> None:
        if len(state.hand_log) != self.hand:  # a new hand: its own deck order
            self.hand = len(state.hand_log)
            self.order = self._orders(self.hand)
            self._perm = None  # made from the order if asked for
            self.pos = 0

    def resolve(self, state: State) -> None:
        """Play chance nodes until a decision or the end; a deal is dealt in one step."""
        while (phase := state.phase) in CHANCE_PHASES:
            if phase == "deal":
                if self._valid:  # undrawn cards of the deck by construction: the state's checks skipped
                    state._deal_valid(self.deal(state))
                else:
                    state.deal(self.deal(state))
            else:
                state.apply_action(self.outcome(state))


def side_rewards(rules: Rules, win: int) -> list[float]:
    """Per-seat ``"win"`` rewards when side ``win`` wins (-1: nobody, all zero): +1 to the winning
    side, -1/(sides - 1) to each other side, so that they sum to zero over the sides."""
    if win < 0:
        return [0.0] * rules.players
    ns = rules.n_sides
    per_side = [1.0 if sd == win else -1.0 / (ns - 1) for sd in range(ns)]
    return [per_side[rules.side(s)] for s in range(rules.players)]


def winning_side(state: State) -> int:
    """The side that won the episode: the game's winner, else the side strictly ahead in the points
    gained during the episode (a hand episode that did not end the game); -1 on a draw."""
    if state.game_over:
        return state.winner
    return leading_side([s - s0 for s, s0 in zip(state.score, state.start_score)])


def leading_side(points) -> int:
    """The side strictly ahead in ``points`` (one number per side), -1 when the lead is shared."""
    points = list(points)
    best = max(points)
    top = [i for i, g in enumerate(points) if g == best]
    return top[0] if len(top) == 1 else -1


def win_rewards(state: State) -> list[float]:
    """Per-seat rewards of ``reward="win"`` at the end of an episode (zero-sum)."""
    return side_rewards(state.rules, winning_side(state))


class Episode:
    """One episode of ``state`` with chance from ``dealer``; rewards of kind ``reward`` per seat.

        episode = Episode(State(rules), Dealer.seeded(rules, deal_seed))
        for seat in episode.decisions():
            episode.play(agents[seat].act(...))
    """

    def __init__(self, state: State, dealer: Dealer, reward: str = "points"):
        if reward not in REWARDS:
            raise TrucError(f"reward={reward!r} is invalid; allowed: {', '.join(map(repr, REWARDS))}")
        self.state, self.dealer, self.reward = state, dealer, reward
        self._paid = [0.0] * state.rules.players
        self._paid_score = None  # the score when "points" rewards were last paid

    def to_decision(self) -> int:
        """Play chance to the next decision; the seat to act, or -1 at the end."""
        st = self.state
        self.dealer.resolve(st)
        return -1 if st.is_terminal() else st.current_player()

    def play(self, action: int) -> None:
        """Apply the decision ``action``: the engine checks that it is an integer id (``2.7`` is refused,
        not played as 2) and that it is legal."""
        self.state.apply_action(action)

    def decisions(self) -> Iterator[int]:
        """The seat at each decision until the end; the caller plays one action per seat yielded."""
        while (seat := self.to_decision()) >= 0:
            yield seat

    def mask(self) -> np.ndarray:
        """The legal actions now, as an int8 mask over the action layout."""
        mask = np.zeros(self.state.L.size, np.int8)
        mask[self.state.legal_actions()] = 1
        return mask

    def rewards(self) -> list[float]:
        """Each seat's reward since the last call: ``points`` as scored, ``win`` once at the end."""
        st = self.state
        if self.reward == "points":
            if st.score == self._paid_score:  # nothing scored since: returns() would equal what was paid
                return [0.0] * len(self._paid)
            self._paid_score = list(st.score)
            now = st.returns()
        elif st.is_terminal():
            now = win_rewards(st)
        else:
            return [0.0] * len(self._paid)
        out = list(map(sub, now, self._paid))
        self._paid = now
        return out
