"""Play one game (or hand) between agents seated at a table, with deals fixed by a seed.

Each hand's deck order comes from ``(deal_seed, hand number)`` alone, never from the actions
(``truc_env.episode.Dealer.seeded``), so the same deal seed gives the same cards whoever sits where:
the basis of duplicate play in the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

from truc_env.engine import State
from truc_env.episode import Dealer, Episode, winning_side
from truc_env.records import record_of
from truc_env.rules import Rules
from truc_env.view import SeatObservation


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
