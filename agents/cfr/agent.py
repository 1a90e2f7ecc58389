"""The ``table:PATH`` agent: samples its action from the solved average strategy.

It reads the seat's perfect-recall ``info_state`` string from the observation dict (the arena's
observation), keys it by the solver's abstraction (:mod:`agents.cfr.keys`), and spreads each card class's
probability evenly over the legal cards of that class. A fixed choice within the class (the lowest card id, as
before 2026-12-06) tells an opponent which cards the seat still holds, information the abstract strategy never
priced: on shrunk Put a learned response took 0.042 points a hand from a table whose exact exploitability is
0.0004, and 0.003 once the card was drawn evenly (docs/approx_exploitability.md). An information set the strategy does not cover (a
hand from another score in a whole game, say) is played uniformly at random among the legal actions
and counted in ``misses``.
"""

from __future__ import annotations

import numpy as np

from agents.base import sample_policy
from agents.cfr.strategy import Strategy, load_strategy
from agents.cfr.tree import PLAY
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of


def legal_for(rules, observation, action_mask=None) -> list[int]:
    """The legal action ids of a decision, after checking it is for the Rules a strategy was made for."""
    theirs = observation.get("rules")
    if theirs is not None and getattr(theirs, "key", theirs) != rules.key:
        raise TrucError(f"this cfr strategy plays {rules.key}, not {getattr(theirs, 'key', theirs)}")
    mask = np.asarray(action_mask if action_mask is not None else observation["action_mask"])
    legal = [int(a) for a in np.flatnonzero(mask)]
    if not legal:
        raise TrucError("no legal action in the mask")
    return legal


def spread(L, card_class, labels, probs, legal) -> dict[int, float] | None:
    """Engine action probabilities of a strategy's (labels, probabilities) at a decision with these legal
    actions: each card class's probability spread evenly over the legal cards of that class (None: the
    strategy puts no weight on any legal action)."""
    by_class: dict[int, list[int]] = {}
    for a in legal:
        if L.play <= a < L.play + len(L.deck):
            by_class.setdefault(int(card_class[L.deck[a - L.play]]), []).append(a)
    out: dict[int, float] = {}
    for lab, p in zip(labels, probs):
        if p <= 0:
            continue
        cards = by_class.get(int(lab) - PLAY, []) if lab >= PLAY else [int(lab)] if int(lab) in legal else []
        for a in cards:  # the class's cards evenly: which one is played says nothing more than its class
            out[a] = out.get(a, 0.0) + float(p) / len(cards)
    total = sum(out.values())
    if total <= 0:
        return None
    return {a: p / total for a, p in out.items()}


class CFRAgent:
    """Plays a :class:`Strategy` from observation dicts with an ``info_state`` string.

    In heads-up Paulista the strategy of the vira the seat sees is played (its card classes too).
    """

    def __init__(self, strategy: Strategy, seed: int | None = None):
        self.strategy = strategy
        self.rules = strategy.rules
        self.layout = layout_of(self.rules)
        self.rng = np.random.default_rng(seed)
        self.misses = 0
        self.decisions = 0

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def policy(self, observation, action_mask) -> dict[int, float]:
        """Probability of each legal engine action at this decision."""
        try:
            info_state = observation["info_state"]  # may be built on first use (truc_env.game.view)
        except (KeyError, TypeError, IndexError):
            raise TrucError("the cfr agent needs an observation dict with an 'info_state' string "
                            "(truc_env.game.observe.info_state_string)") from None
        legal = legal_for(self.rules, observation, action_mask)
        self.decisions += 1
        try:
            labels, probs = self.strategy.distribution(info_state)
        except KeyError:
            self.misses += 1
            return {a: 1.0 / len(legal) for a in legal}
        out = spread(self.layout, self.strategy.abstraction_of(info_state).card_class, labels, probs, legal)
        if out is None:
            self.misses += 1
            return {a: 1.0 / len(legal) for a in legal}
        return out

    def act(self, observation, action_mask=None) -> int:
        return sample_policy(self.policy(observation, action_mask), self.rng)


def load_agent(path: str, rules=None, seed: int | None = None) -> CFRAgent:
    """The agent of a strategy file; refuses a file made for other Rules."""
    return CFRAgent(load_strategy(path, rules), seed)
