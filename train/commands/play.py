"""``truc play``: a person plays a whole game in the terminal against agents, every move narrated."""

from __future__ import annotations

import numpy as np

from agents import make_agent
from agents.players.human import HumanAgent, Narrator, QuitGame
from train.eval.match import play_game
from truc_env.display.talk import seat_label
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules


class Narrated:
    """An agent whose every decision is told to a :class:`Narrator` before the game applies it."""

    def __init__(self, agent, narrator: Narrator):
        self.agent = agent
        self.narrator = narrator

    def __getattr__(self, name):
        return getattr(self.agent, name)

    def act(self, observation, action_mask) -> int:
        observation.apply(lambda state, seat: self.narrator.before_decision(state))
        action = int(self.agent.act(observation, action_mask))
        # still inside this decision: the state seen through the observation is the one before it
        observation.apply(lambda state, seat: self.narrator.on_decision(state, seat, action))
        return action


def check_table(variant: str, options: dict, opponents: list[str], seat: int):
    """The rules and one opponent spec per other seat; TrucError for a seat or a count that does not fit."""
    rules = make_rules(variant, **options)
    n = rules.players
    if not 0 <= seat < n:
        raise TrucError(f"--seat must be in 0..{n - 1}")
    if len(opponents) == 1:
        opponents = opponents * (n - 1)
    if len(opponents) != n - 1:
        raise TrucError(f"{variant} has {n} seats: give 1 or {n - 1} opponent specs, got {len(opponents)}")
    return rules, list(opponents)


def play_human(variant: str, options: dict, opponents: list[str], seat: int = 0, seed: int = 0,
               stdin=None, stdout=None) -> list[float]:
    """Seat a human at ``seat`` and the opponents' specs at the other seats (in play order after him)."""
    rules, opponents = check_table(variant, options, opponents, seat)
    n = rules.players
    others = [(seat + k) % n for k in range(1, n)]
    agents = [None] * n
    human = HumanAgent(stdin, stdout)
    agents[seat] = human
    for k, (s, spec) in enumerate(zip(others, opponents)):
        agents[s] = make_agent(spec, rules, seed=seed * 100 + k)
    out = human.stdout
    out.write(f"{rules.variant}: you are seat {seat}; "
              + ", ".join(f"{seat_label(rules, s, seat)} is {spec}" for s, spec in zip(others, opponents))
              + ". Type an action's number (or its name) when asked, or 'quit' to leave.\n")
    narrator = Narrator(seat, out)
    table = [Narrated(agent, narrator) for agent in agents]
    deal_seed = int(np.random.SeedSequence([seed]).generate_state(1)[0])
    try:
        result = play_game(rules, table, deal_seed, episode="game", record=False)
    except QuitGame:
        out.write("\nYou left the game; no result is counted.\n")
        return [0.0] * n
    won = result.winner_side == rules.side(seat)
    out.write(f"\nGame over after {result.hands} hands: {'you win' if won else 'you lose'} "
              f"(points {result.returns[seat]:+.0f}).\n")
    return result.returns
