"""Export a solved strategy as an OpenSpiel ``TabularPolicy`` of the ``python_truc`` game.

Every information-state string of the OpenSpiel game is keyed by the solver's abstraction
(:mod:`agents.cfr.keys`), so OpenSpiel's own ``exploitability`` can be measured on our strategy.
"""

from __future__ import annotations

import numpy as np

from agents.cfr.agent import CFRAgent
from agents.cfr.strategy import Strategy


def to_tabular_policy(game, strategy: Strategy):
    """An OpenSpiel TabularPolicy playing ``strategy`` (OpenSpiel must be installed)."""
    from open_spiel.python import policy as os_policy

    pol = os_policy.TabularPolicy(game)
    agent = CFRAgent(strategy)
    n = game.num_distinct_actions()
    for key, row in pol.state_lookup.items():
        mask = pol.legal_actions_mask[row]
        dist = agent.policy({"info_state": key}, np.asarray(mask[:n]))
        probs = np.zeros(pol.action_probability_array.shape[1])
        for a, p in dist.items():
            probs[a] = p
        pol.action_probability_array[row] = probs
    return pol
