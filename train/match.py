"""Play one game (or hand) between agents seated at a table, with deals fixed by a seed.

Each hand's deck order comes from ``(deal_seed, hand number)`` alone, never from the actions, so the
same deal seed gives the same cards whoever sits where: the basis of duplicate play in the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from truc_env.engine import State
from truc_env.observe import SeatObservation
from truc_env.records import record_of
from truc_env.rules import Rules


@dataclass
class GameResult:
    returns: list[float]  # zero-sum points per seat over the game
    hands: int
    winner_side: int  # -1 when the episode was one hand that ended without a game winner
    record: dict | None


class SeededDealer:
    """Chance outcomes for a game: deck orders per hand and interception draws from one seed."""

    def __init__(self, rules: Rules, deal_seed: int):
        self.rules = rules
        self.seed = deal_seed
        self.hand = -1
        self.order: list[int] = []
        self.pos = 0
        self.rng = np.random.default_rng([deal_seed, 1 << 20])

    def outcome(self, state: State) -> int:
        if state.phase == "deal":
            if len(state.hand_log) != self.hand:  # a new hand: its own deck order
                self.hand = len(state.hand_log)
                rng = np.random.default_rng([self.seed, self.hand])
                self.order = [self.rules.deck[i] for i in rng.permutation(len(self.rules.deck))]
                self.pos = 0
            while self.order[self.pos] in state.drawn:  # redeals continue down the same deck
                self.pos += 1
            return self.order[self.pos]
        outcomes = state.chance_outcomes()
        probs = np.array([p for _, p in outcomes])
        return outcomes[int(self.rng.choice(len(outcomes), p=probs))][0]


def play_game(rules: Rules, seat_agents: list, deal_seed: int, episode: str = "game",
              record: bool = True, dealer: int = 0) -> GameResult:
    """Play to the end of the episode; ``seat_agents[s]`` acts for seat ``s``."""
    state = State(rules, episode=episode, dealer=dealer)
    chance = SeededDealer(rules, deal_seed)
    mask = np.zeros(state.L.size, dtype=np.int8)
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(chance.outcome(state))
            continue
        seat = state.current_player()
        legal = state.legal_actions()
        mask[:] = 0
        mask[legal] = 1
        action = seat_agents[seat].act(SeatObservation(state, seat, mask.copy()), mask.copy())
        state.apply_action(int(action))
    return GameResult(state.returns(), state.hands_completed, state.winner,
                      record_of(state) if record else None)
