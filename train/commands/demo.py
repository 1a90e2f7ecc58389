"""The demo job: one game between uniformly random players, with the first hands rendered."""

from __future__ import annotations

import numpy as np

from truc_env.display.render import render
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.rules import make_rules


def play_demo(variant: str = "le_truc", options: dict | None = None, seed: int = 0, show_hands: int = 3,
              out=print) -> State:
    """Play one full game with random legal actions; print the first hands move by move."""
    rules = make_rules(variant, **(options or {}))
    rng = np.random.default_rng(seed)
    state = State(rules)
    game = Episode(state, Dealer(rules, rng))
    shown = 0
    for seat in game.decisions():
        legal = state.legal_actions()
        action = legal[int(rng.integers(len(legal)))]
        if shown < show_hands:
            out(render(state, viewer=None))
            out(f"  >> seat {seat}: {state.action_to_string(action)}\n")
        done = state.hands_completed
        game.play(action)
        if state.hands_completed > done:
            if shown < show_hands:
                out(f"== hand {done + 1} over: points {state.last_hand_points}, score {state.score}\n")
            shown += 1
    out(f"Game over after {state.hands_completed} hands: final score {state.score}; side {state.winner} wins.")
    return state
