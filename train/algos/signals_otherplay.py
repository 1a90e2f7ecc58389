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

On engine tables each table holds a :class:`Relabelling`; on the batched engine one
:class:`Relabellings` holds a frame per game, redrawn when the game's episode begins, and applies it
to the kernel's observation and mask rows and to the chosen actions, vectorised over the games (the
one implementation: a :class:`Relabelling` is a :class:`Relabellings` of one game).

Card signals and señas are not arbitrary (a card rank is shown truthfully; a seña names a card),
so relabelling them would break the rules' meaning rather than a symmetry: other-play refuses them.
"""

from __future__ import annotations

import numpy as np

from agents.network.network import encoder_of
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of


def check_applies(rules) -> None:
    """Refuse other-play where the signal tokens are not arbitrary labels."""
    mode = rules.signals.mode
    if mode != "free":
        raise TrucError(f"other_play relabels free-talk tokens; this variant's signals are {mode!r} "
                          "(card ranks and señas mean what they name): use signals mode 'free' or other_play: false")


class Relabellings:
    """The relabellings of ``num_envs`` games at once, one per game's episode (the batched engine's
    form; :class:`Relabelling` is one game of it). Rows ``i`` of a batch are game ``idx[i]``'s acting
    seat ``seats[i]``; every method works on the rows of a batch at once."""

    def __init__(self, rules, num_envs: int):
        enc = encoder_of(rules)
        self.rules, self.enc, self.L = rules, enc, layout_of(rules)
        n, ntok = rules.players, enc.n_tokens
        self.side_of = np.array([rules.side(s) for s in range(n)])
        # phi[b, side]: token index in the seat's frame -> token index sent; phi[b, side, 0] = 0 (none)
        self.phi = np.tile(np.arange(ntok), (num_envs, rules.n_sides, 1))
        self.seat_of = np.full((num_envs, rules.n_sides), -1, np.int64)  # -1: game b has no frame yet

    def draw(self, b: int, rng: np.random.Generator) -> None:
        """A new episode's relabelling for game ``b``: per side a permutation and the seat playing in it."""
        ntok = self.enc.n_tokens
        for sd in range(self.rules.n_sides):
            self.phi[b, sd] = np.concatenate([[0], 1 + rng.permutation(ntok - 1)])
            seats = np.flatnonzero(self.side_of == sd)
            self.seat_of[b, sd] = seats[int(rng.integers(len(seats)))]

    def relabelled(self, idx, seats) -> np.ndarray:
        """Per row: does the seat play in a permuted frame this episode?"""
        idx, seats = np.asarray(idx), np.asarray(seats)
        return self.seat_of[idx, self.side_of[seats]] == seats

    def _frames(self, idx, seats):
        """The relabelled rows, their seats and their side's permutation."""
        idx, seats = np.asarray(idx), np.asarray(seats)
        rows = np.flatnonzero(self.relabelled(idx, seats))
        return rows, seats[rows], self.phi[idx[rows], self.side_of[seats[rows]]]

    def observe(self, x: np.ndarray, idx, seats) -> np.ndarray:
        """The network inputs ``x`` (one row per game) in their seats' frames (a copy): each relabelled
        seat's side's tokens shown as ``phi^-1(token)``."""
        x = np.array(x, copy=True)
        rows, seats, phi = self._frames(idx, seats)
        if not len(rows):
            return x
        r, enc = self.rules, self.enc
        n, ntok = r.players, enc.n_tokens
        for i in range(enc.signal_slots):
            b = enc.piece("signals").at(i)
            rel = np.argmax(x[rows, b + 1:b + 1 + n], axis=1)
            own = (x[rows, b] != 0) & (self.side_of[(seats + rel) % n] == self.side_of[seats])
            sel = rows[own]
            tok = slice(b + 1 + n, b + 1 + n + ntok)
            # shown token j = phi^-1(u): column j takes column phi[j]
            x[sel, tok] = np.take_along_axis(x[sel, tok], phi[own], axis=1)
        return x

    def mask(self, m: np.ndarray, idx, seats) -> np.ndarray:
        """The legal masks ``m`` (one row per game) in their seats' frames (a copy)."""
        m = np.array(m, copy=True)
        rows, _, phi = self._frames(idx, seats)
        seg = slice(self.L.signal, self.L.signal + len(self.L.signal_tokens))
        m[rows, seg] = np.take_along_axis(m[rows, seg], phi, axis=1)
        return m

    def act(self, actions, idx, seats) -> np.ndarray:
        """The actions sent to the games for ``actions`` chosen in the seats' frames (a copy)."""
        a = np.array(actions, dtype=np.int64, copy=True)
        rows, _, phi = self._frames(idx, seats)
        t = a[rows] - self.L.signal
        tok = (t >= 0) & (t < len(self.L.signal_tokens))
        a[rows[tok]] = self.L.signal + phi[tok, t[tok]]
        return a


class Relabelling:
    """One episode's relabelling of one table: per side a token permutation and the seat that plays
    in it (a :class:`Relabellings` of one game)."""

    def __init__(self, rules, rng: np.random.Generator):
        self.rules, self.batch = rules, Relabellings(rules, 1)
        self.batch.draw(0, rng)
        self.phi, self.seat_of = self.batch.phi[0], self.batch.seat_of[0]

    def relabelled(self, seat: int) -> bool:
        """Does ``seat`` play in a permuted frame this episode?"""
        return bool(self.batch.relabelled([0], [seat])[0])

    def observe(self, x: np.ndarray, seat: int) -> np.ndarray:
        """The network input ``x`` of ``seat`` in its frame (a copy): its side's tokens relabelled."""
        return self.batch.observe(np.asarray(x)[None], [0], [seat])[0]

    def mask(self, m: np.ndarray, seat: int) -> np.ndarray:
        """The legal mask of ``seat`` in its frame (a copy)."""
        return self.batch.mask(np.asarray(m)[None], [0], [seat])[0]

    def act(self, action: int, seat: int) -> int:
        """The action sent to the game for ``action`` chosen by ``seat`` in its frame."""
        return int(self.batch.act([action], [0], [seat])[0])
