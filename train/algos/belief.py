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

from truc_env.errors import TrucError


def check_applies(rules) -> None:
    """Refuse Rules without partners (nothing to predict)."""
    if not rules.partnership or rules.players != 4:
        raise TrucError(f"belief_coef needs a 2 vs 2 game (a partner whose hand to predict); "
                        f"{rules.variant} has {rules.players} players")


def partner(seat: int, n: int) -> int:
    return (seat + n // 2) % n


def targets_of_states(states_seats, rules) -> np.ndarray:
    """(rows, deck) 1 where the partner of the row's seat holds the card, from engine states."""
    index = {c: i for i, c in enumerate(rules.deck)}
    out = np.zeros((len(states_seats), len(rules.deck)), np.float32)
    for row, (state, seat) in enumerate(states_seats):
        for c in state.hands[partner(seat, rules.players)]:
            if c >= 0:
                out[row, index[c]] = 1.0
    return out


def targets_of_hands(hands: np.ndarray, seats: np.ndarray, rules) -> np.ndarray:
    """The same from the batched engine's hands (rows of ``VectorEnv.hands``) and the rows' seats."""
    held = hands[np.arange(len(seats)), (seats + rules.players // 2) % rules.players]  # rows x hand_size
    out = np.zeros((len(seats), len(rules.deck)), np.float32)
    rows, k = np.nonzero(held >= 0)
    out[rows, held[rows, k]] = 1.0
    return out


class BeliefHead(nn.Module):
    """One logit per deck card from the actor's last hidden layer."""

    def __init__(self, hidden: int, deck: int):
        super().__init__()
        self.out = nn.Linear(hidden, deck)

    def loss(self, net, obs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean binary cross-entropy over rows and cards; the gradient reaches the actor's hidden layers."""
        h = net.actor[:-1](obs)
        return nn.functional.binary_cross_entropy_with_logits(self.out(h), target)
