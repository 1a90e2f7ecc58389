"""A listener's auxiliary task: predict the partner's unplayed cards (PPO's ``belief_coef``).

A head on the actor's last hidden layer outputs one logit per deck card, trained by binary cross-entropy
against the cards the partner still holds (hidden information, read from the engine state or the
batched engine's hands at each learner decision, in both rollout paths). The head is not part of the
policy (``policy.pt`` stays a :class:`~agents.network.PolicyNet`); what it changes is the actor's hidden
representation, which must then carry what the observation says about the partner's hand — the shown
card first of all. An auxiliary belief task of this kind is how SAD (Hu and Foerster, ICLR 2020) helps
Hanabi agents read their partners; here the target is the partner's hand, what a signal is about.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from train.algos.privileged import hidden_of_hands, hidden_of_states
from truc_env.errors import TrucError


def check_applies(rules) -> None:
    """Refuse Rules without partners (nothing to predict)."""
    if not rules.partnership or rules.players != 4:
        raise TrucError(f"belief_coef needs a 2 vs 2 game (a partner whose hand to predict); "
                        f"{rules.variant} has {rules.players} players")


def targets_of_states(states_seats, rules) -> np.ndarray:
    """(rows, deck) 1 where the partner of the row's seat holds the card, from engine states."""
    return hidden_of_states(states_seats, rules, after=(rules.players // 2,))


def targets_of_hands(hands: np.ndarray, seats: np.ndarray, rules) -> np.ndarray:
    """The same from the batched engine's hands (rows of ``VectorEnv.hands``) and the rows' seats."""
    return hidden_of_hands(hands, seats, rules, after=(rules.players // 2,))


class BeliefHead(nn.Module):
    """One logit per deck card from the actor's last hidden layer."""

    def __init__(self, hidden: int, deck: int):
        super().__init__()
        self.out = nn.Linear(hidden, deck)

    def loss(self, net, obs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean binary cross-entropy over rows and cards; the gradient reaches the actor's hidden layers."""
        h = net.actor[:-1](obs)
        return nn.functional.binary_cross_entropy_with_logits(self.out(h), target)
