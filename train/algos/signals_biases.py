"""Inductive biases for emergent communication (Eccles et al., NeurIPS 2019), as two PPO loss terms.

PPO's ``signal_coef`` and ``listen_coef`` (docs/signals.md "Talking from the silent twin"):

- **positive signalling**, on the speaker's decisions (the rows of a minibatch whose legal actions are
  signals): the batch estimate of the mutual information between the sender's observation and its token,
  ``H(mean_i pi_i) - mean_i H(pi_i)`` (nats, over the signal block), is *maximised*: tokens that vary across
  hands and are consistent within one. Eccles et al. pull the per-state entropy towards a target; with a
  truthful channel whose legal tokens already depend on the hand, the plain difference is enough.
- **positive listening**, on the listener's decisions (the rows whose observation holds a signal of the
  partner, relative seat 2, with a token other than ``none``): the total variation between the policy and
  the policy on the same observation with those tokens read as ``none`` is *maximised*: the listener's play
  must change with what it was shown (Eccles et al. use the L1 distance to a learned no-message policy;
  here the counterfactual observation is exact, the partner having shown nothing).

The loss adds ``- signal_coef * MI - listen_coef * TV``; both are logged (``signal_mi``, ``listen_tv``).
"""

from __future__ import annotations

import torch

from agents.network.network import legal_probs
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.observe import encoder_of

PARTNER = 2  # the partner's relative seat in 2 vs 2


class SignalBiases:
    """Where a Rules' signals sit in the actions and in the observation, and the two loss terms."""

    def __init__(self, rules):
        L, enc = layout_of(rules), encoder_of(rules)
        if L.signal < 0 or not enc.has("signals") or rules.players != 4:
            raise TrucError(f"signal_coef and listen_coef need a 2 vs 2 game with a signal channel; "
                            f"{rules.variant} {dict(rules.options)} has none")
        self.sig = slice(L.signal, L.signal + len(L.signal_tokens))
        piece = enc.piece("signals")
        slots, width = piece.shape
        n, ntok = rules.players, enc.n_tokens
        base = torch.arange(slots) * width + piece.offset
        self.present = base  # [present, sender (n), token (ntok + unseen), trick]
        self.sender = base + 1 + PARTNER
        self.token0 = base + 1 + n  # token 0 is none
        self.ntok = ntok

    def mutual_information(self, logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, int]:
        """The batch estimate of I(observation; token) over the speaker rows, in nats, and their count."""
        rows = mask[:, self.sig].any(-1) & ~mask[:, :self.sig.start].any(-1) & ~mask[:, self.sig.stop:].any(-1)
        if not rows.any():
            return logits.new_zeros(()), 0
        m = mask[rows][:, self.sig]
        logp = torch.log_softmax(logits[rows][:, self.sig].masked_fill(~m, torch.finfo(logits.dtype).min), -1)
        p = legal_probs(logp, m)
        h_each = -(p * logp.masked_fill(~m, 0.0)).sum(-1).mean()
        p_bar = p.mean(0)
        h_bar = -(p_bar * torch.log(p_bar.clamp_min(1e-12))).sum()
        return h_bar - h_each, int(rows.sum())

    def listener_rows(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(rows whose observation holds a partner's token other than none, those observations with it read as none)."""
        shown = (obs[:, self.present] > 0.5) & (obs[:, self.sender] > 0.5)  # rows x slots: the partner's signals
        tok = torch.stack([obs[:, self.token0 + k] for k in range(1, self.ntok)], -1)  # rows x slots x tokens but none
        named = shown & (tok > 0.5).any(-1)
        rows = named.any(-1)
        cf = obs[rows].clone()
        for s in range(len(self.present)):
            hit = named[rows][:, s]
            if hit.any():
                cols = self.token0[s] + torch.arange(self.ntok)
                block = cf[:, cols]
                block[hit] = 0.0
                block[hit, 0] = 1.0  # read as none
                cf[:, cols] = block
        return rows, cf

    def listening(self, net, obs: torch.Tensor, mask: torch.Tensor, logits: torch.Tensor) -> tuple[torch.Tensor, int]:
        """Mean total variation between the policy and its counterfactual (the partner showed nothing)
        over the listener rows, and their count."""
        rows, cf = self.listener_rows(obs)
        if not rows.any():
            return logits.new_zeros(()), 0
        m = mask[rows]
        p = torch.softmax(logits[rows].masked_fill(~m, torch.finfo(logits.dtype).min), -1)
        q = torch.softmax(net.masked_logits(cf, m), -1)
        return 0.5 * (p - q).abs().sum(-1).mean(), int(rows.sum())
