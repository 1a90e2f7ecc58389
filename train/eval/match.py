"""Play one game (or hand) between agents seated at a table, with deals fixed by a seed.

Also where entrants sit: the pairings of a tournament and the seatings of a duplicate deal.

Each hand's deck order comes from ``(deal_seed, hand number)`` alone, never from the actions
(``truc_env.game.episode.Dealer.seeded``), so the same deal seed gives the same cards whoever sits where:
the basis of duplicate play in the arena.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from truc_env.errors import TrucError
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode, winning_side
from truc_env.game.observe import SeatObservation
from truc_env.game.records import record_of
from truc_env.game.rules import Rules


@dataclass
class GameResult:
    returns: list[float]  # zero-sum points per seat over the game
    hands: int
    winner_side: int  # episode.winning_side: the game's winner, else the side ahead in the hand; -1 drawn
    record: dict | None


def play_game(rules: Rules, seat_agents: list, deal_seed: int, episode: str = "game",
              record: bool = True, dealer: int = 0) -> GameResult:
    """Play to the end of the episode; ``seat_agents[s]`` acts for seat ``s``."""
    state = State(rules, episode=episode, dealer=dealer)
    game = Episode(state, Dealer.seeded(rules, deal_seed))
    for seat in game.decisions():
        mask = game.mask()
        game.play(seat_agents[seat].act(SeatObservation(state, seat, mask.copy()), mask))
    return GameResult(state.returns(), state.hands_completed, winning_side(state),
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
