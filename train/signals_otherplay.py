"""Other-play (Hu et al. 2020) for the free signal channel: PPO's ``other_play: true``.

Free-talk tokens (docs/rules.md §8, ``signals: {mode: free}``) are arbitrary labels: any
relabelling of them is a symmetry of the game. Self-play can settle on any one of those relabelled
conventions, and two teams trained apart may pick different ones. Other-play trains the policy
against a partner whose labels are permuted at random per episode, so only what survives every
relabelling can be learned.

How one episode is relabelled. Per side, one permutation ``phi`` of the tokens (``none`` stays
``none``: abstaining is not a label) and one of the side's seats, drawn at random: that seat plays
in the frame ``phi``. It is shown each of its side's signals (its own and its partner's) as
``phi^-1(token)`` and a signal it chooses as token ``t`` is sent as ``phi(t)``; so it reads back its
own signal as it chose it, while its partner (unrelabelled) sees ``phi(t)``. Relabelling both
partners with the same ``phi`` would cancel out (what one sends in the frame, the other reads in
the frame): the permutation has to sit between the partners. The opponents' signals are not
relabelled: they are another side's labels.

Card signals and señas are not arbitrary (a card rank is shown truthfully; a seña names a card),
so relabelling them would break the rules' meaning rather than a symmetry: other-play refuses them.
"""

from __future__ import annotations

import numpy as np

from agents.ppo.network import encoder_of
from truc_env.actions import layout_of
from truc_env.errors import TrucError


def check_applies(rules) -> None:
    """Refuse other-play where the signal tokens are not arbitrary labels."""
    mode = rules.signals.mode
    if mode != "free":
        raise TrucError(f"other_play relabels free-talk tokens; this variant's signals are {mode!r} "
                          "(card ranks and señas mean what they name): use signals mode 'free' or other_play: false")


class Relabelling:
    """One episode's relabelling: per side a token permutation and the seat that plays in it."""

    def __init__(self, rules, rng: np.random.Generator):
        enc = encoder_of(rules)
        self.rules, self.enc, self.L = rules, enc, layout_of(rules)
        n, ntok = rules.players, enc.n_tokens
        # phi[side]: token index in the seat's frame -> token index sent; phi[side][0] = 0 (none)
        self.phi = np.zeros((rules.n_sides, ntok), np.int64)
        self.seat_of = np.zeros(rules.n_sides, np.int64)
        for sd in range(rules.n_sides):
            self.phi[sd] = np.concatenate([[0], 1 + rng.permutation(ntok - 1)])
            seats = [s for s in range(n) if rules.side(s) == sd]
            self.seat_of[sd] = seats[int(rng.integers(len(seats)))]

    def relabelled(self, seat: int) -> bool:
        """Does ``seat`` play in a permuted frame this episode?"""
        return int(self.seat_of[self.rules.side(seat)]) == seat

    def observe(self, x: np.ndarray, seat: int) -> np.ndarray:
        """The network input ``x`` of ``seat`` in its frame (a copy): its side's tokens relabelled."""
        x = np.array(x, copy=True)
        if not self.relabelled(seat):
            return x
        r, enc = self.rules, self.enc
        n, ntok, w = r.players, enc.n_tokens, enc.signal_width
        phi = self.phi[r.side(seat)]
        for i in range(enc.signal_slots):
            b = enc.offset["signals"] + i * w
            if not x[b]:
                continue
            rel = int(np.argmax(x[b + 1:b + 1 + n]))
            if r.side((seat + rel) % n) != r.side(seat):
                continue
            tok = slice(b + 1 + n, b + 1 + n + ntok)
            x[tok] = x[tok][phi]  # shown token j = phi^-1(u): column j takes column phi[j]
        return x

    def mask(self, m: np.ndarray, seat: int) -> np.ndarray:
        """The legal mask of ``seat`` in its frame (a copy)."""
        m = np.array(m, copy=True)
        if self.relabelled(seat):
            L = self.L
            seg = slice(L.signal, L.signal + len(L.signal_tokens))
            m[seg] = m[seg][self.phi[self.rules.side(seat)]]
        return m

    def act(self, action: int, seat: int) -> int:
        """The action sent to the game for ``action`` chosen by ``seat`` in its frame."""
        L = self.L
        t = action - L.signal
        if self.relabelled(seat) and 0 <= t < len(L.signal_tokens):
            return L.signal + int(self.phi[self.rules.side(seat)][t])
        return action
