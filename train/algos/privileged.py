"""A privileged critic for PPO and MMD (``critic: privileged``): the advantages' baseline also reads every other
seat's unplayed cards.

In a card game most of the spread of a decision's return is the cards the opponents hold, which the acting
seat's critic cannot see, so its advantages are noisy and the policy's steps follow the deal more than the
play. A critic trained during learning on the hidden cards as well (Suphx's oracle critic, the centralised
critic of MAPPO) predicts the return of the state itself. The baseline stays unbiased: the policy's action
depends on the seat's own information only, so any function of the whole state may be subtracted from its
return. Only the update reads the hidden cards; the policy and ``policy.pt`` never see them, and the
policy's own critic is trained as before (``policy.pt`` keeps a valid value of the observation).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.network.network import layer_init
from truc_env.errors import TrucError


def check_applies(cfg) -> None:
    """Refuse settings whose transitions the hidden cards cannot be attached to, naming why."""
    if cfg.other_play:
        raise TrucError("critic: privileged does not go with other_play (the inputs are in relabelled frames)")


def hidden_size(rules) -> int:
    return (rules.players - 1) * len(rules.deck)


def hidden_of_hands(hands: np.ndarray, seats: np.ndarray, rules, after=None) -> np.ndarray:
    """(rows, len(after) * deck) 1 where the k-th seat after the row's seat still holds the card, one block per
    k of ``after`` (default every other seat, 1 .. players - 1), from the batched engine's hands (rows of
    ``VectorEnv.hands``: deck indices, -1 played or not dealt)."""
    n, deck, rows = rules.players, len(rules.deck), np.arange(len(seats))
    after = range(1, n) if after is None else after
    out = np.zeros((len(seats), len(after) * deck), np.float32)
    for i, k in enumerate(after):
        held = hands[rows, (seats + k) % n]  # rows x hand_size
        r, j = np.nonzero(held >= 0)
        out[r, i * deck + held[r, j]] = 1.0
    return out


def hidden_of_states(states_seats, rules, after=None) -> np.ndarray:
    """The same from engine states (the engine rollout)."""
    n, deck = rules.players, len(rules.deck)
    after = range(1, n) if after is None else after
    index = {c: i for i, c in enumerate(rules.deck)}
    out = np.zeros((len(states_seats), len(after) * deck), np.float32)
    for row, (state, seat) in enumerate(states_seats):
        for i, k in enumerate(after):
            for c in state.hands[(seat + k) % n]:
                if c >= 0:
                    out[row, i * deck + index[c]] = 1.0
    return out


class PrivilegedCritic(nn.Module):
    """The value of a decision from the acting seat's input and the other seats' unplayed cards."""

    def __init__(self, obs_size: int, hidden_cards: int, hidden: list[int] | tuple[int, ...]):
        super().__init__()
        sizes, layers = [obs_size + hidden_cards, *hidden], []
        for a, b in zip(sizes[:-1], sizes[1:]):  # the policy's critic's shape (tanh layers, CleanRL's init)
            layers += [layer_init(nn.Linear(a, b)), nn.Tanh()]
        self.critic = nn.Sequential(*layers, layer_init(nn.Linear(sizes[-1], 1), std=1.0))

    def forward(self, obs: torch.Tensor, cards: torch.Tensor) -> torch.Tensor:
        return self.critic(torch.cat([obs, cards], dim=-1)).squeeze(-1)

    @torch.no_grad()
    def values(self, obs: np.ndarray, cards: np.ndarray, device) -> list[float]:
        """The critic's values of a rollout's transitions (the baseline of its advantages)."""
        return self(torch.as_tensor(obs, device=device), torch.as_tensor(cards, device=device)).cpu().tolist()
