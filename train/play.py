"""``truc play``: a person plays a whole game in the terminal against agents."""

from __future__ import annotations

import numpy as np

from agents import make_agent
from agents.human import HumanAgent
from truc_env.errors import TrucError
from truc_env.rules import make_rules

from .match import play_game


def play_human(variant: str, options: dict, opponents: list[str], seat: int = 0, seed: int = 0,
               stdin=None, stdout=None) -> list[float]:
    """Seat a human at ``seat`` and the opponents' specs at the other seats (in play order after him)."""
    rules = make_rules(variant, **options)
    n = rules.players
    if not 0 <= seat < n:
        raise TrucError(f"--seat must be in 0..{n - 1}")
    others = [(seat + k) % n for k in range(1, n)]
    if len(opponents) == 1:
        opponents = opponents * (n - 1)
    if len(opponents) != n - 1:
        raise TrucError(f"{variant} has {n} seats: give 1 or {n - 1} opponent specs, got {len(opponents)}")
    agents = [None] * n
    human = HumanAgent(stdin, stdout)
    agents[seat] = human
    for k, (s, spec) in enumerate(zip(others, opponents)):
        agents[s] = make_agent(spec, rules, seed=seed * 100 + k)
    deal_seed = int(np.random.SeedSequence([seed]).generate_state(1)[0])
    result = play_game(rules, agents, deal_seed, episode="game", record=False)
    out = human.stdout
    won = result.winner_side == rules.side(seat)
    out.write(f"\nGame over after {result.hands} hands: {'you win' if won else 'you lose'} "
              f"(points {result.returns[seat]:+.0f}).\n")
    return result.returns
