"""Play one game (or hand) between agents seated at a table, with deals fixed by a seed.

Also where entrants sit: the pairings of a tournament and the seatings of a duplicate deal.

Each hand's deck order comes from ``(deal_seed, hand number)`` alone, never from the actions, so the
same deal seed gives the same cards whoever sits where: the basis of duplicate play in the arena.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from truc_env.engine import State
from truc_env.errors import TrucError
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


# ---------------------------------------------------------------------- seating
def pairings(format: str, entrants: list, hero: str | None = None) -> list[tuple[str, str]]:
    """The pairings of a tournament: every two entrants (round robin), or the hero against each other."""
    if format == "gauntlet":
        return [(hero, x) for x in entrants if x != hero]
    return list(itertools.combinations(entrants, 2))


def team_members(entrant: str, rules) -> list[str]:
    """The agent specs of an entrant's side: ``A+B`` is a team of two, a plain spec fills its side."""
    members = entrant.split("+")
    if len(members) == 1:
        return members * (2 if rules.partnership else 1)
    if not rules.partnership or len(members) != 2:
        raise TrucError(f"entrant {entrant!r}: 'A+B' teams exist only in partnership games (two players)")
    return members


def seatings(rules) -> int:
    """How many seatings a duplicate deal is played in."""
    return rules.players if rules.put_n else 2


def seat_entrants(rules, a: str, b: str, seating: int) -> tuple[list[str], list[int]]:
    """Agent spec per seat, and the seats entrant ``a`` holds, for one seating."""
    n = rules.players
    if rules.put_n:
        specs = [b] * n
        specs[seating] = a
        return specs, [seating]
    a_side = seating % 2
    ta, tb = team_members(a, rules), team_members(b, rules)
    specs, a_seats, counters = [], [], [0, 0]
    for s in range(n):
        side = rules.side(s)
        team = ta if side == a_side else tb
        specs.append(team[counters[side] % len(team)])
        counters[side] += 1
        if side == a_side:
            a_seats.append(s)
    return specs, a_seats
