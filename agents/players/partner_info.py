"""What a seat knows of its partner, changed on purpose, for the partner-signal study (docs/signals.md).

- :class:`OracleAgent` (spec ``oracle:heuristic:<style>``): a **research bound, not a fair agent**. Its
  view also holds the partner's actual cards, read from the engine state, so it plays as if the
  partner had told it everything. A team of two measures what perfect team information is worth to
  the heuristic's way of playing (the heuristic already weighs a partner hand it can see, the same
  way it weighs one described by a signal). :func:`agents.make_agent` refuses this spec; only the
  bound (``truc analyze bound``, :mod:`train.analysis.signals_bound`) builds it, through
  :func:`make_oracle`, so it can never sit in the arena, a match or a training run by accident.
- :class:`DeafAgent` (spec ``deaf:<spec>``): a listener that ignores its partner's signals (they read
  as ``none``, in the state's signal list and its history alike). The negative control: a deaf team
  plays every hand the same whether its channel is open or muted.
"""

from __future__ import annotations

import numpy as np

from truc_env.errors import TrucError
from truc_env.game.observe import SeatObservation
from truc_env.game.view import seat_view

ORACLE_PREFIX = "oracle:"


class _PartnerWrapper:
    """An inner agent given a changed account of its partner; ``kind`` is the spec prefix."""

    kind = ""

    def __init__(self, inner, rules):
        self.inner = inner
        self.name = f"{self.kind}:{getattr(inner, 'name', 'agent')}"

    def reset(self, seed=None):
        if hasattr(self.inner, "reset"):
            self.inner.reset(seed)

    def _state_of(self, observation):
        if not hasattr(observation, "apply"):
            raise TrucError(f"{self.kind}:<spec> needs a truc_env.game.observe.SeatObservation (it reads the engine state)")
        return observation.apply(lambda st, s: (st, s))


class OracleAgent(_PartnerWrapper):
    """A heuristic that sees its partner's hand (see the module docstring: a research bound)."""

    kind = "oracle"

    def __init__(self, inner, rules):
        if rules is None or not rules.partnership:
            raise TrucError("oracle:<spec> sees a partner's hand; it needs a partnership (2 vs 2) variant")
        super().__init__(inner, rules)

    def act(self, observation, mask) -> int:
        state, seat = self._state_of(observation)
        view = seat_view(state, seat)
        partner = state.partner(seat)
        rel = (partner - seat) % state.rules.players
        hands = dict(view["hands"])
        hands[rel] = [c for c in state.held(partner) if c >= 0]  # the truth, whatever the view allows
        view["hands"] = hands
        told = SeatObservation(state, seat, np.array(mask))
        told["view"] = view
        return int(self.inner.act(told, mask))


class DeafAgent(_PartnerWrapper):
    """An agent whose partner's signals always read ``none``."""

    kind = "deaf"

    def __init__(self, inner, rules):
        if rules is None or not rules.partnership or rules.signals.mode == "none":
            raise TrucError("deaf:<spec> ignores a partner's signals; it needs a 2 vs 2 variant with signals on")
        super().__init__(inner, rules)

    def act(self, observation, mask) -> int:
        state, seat = self._state_of(observation)
        partner = state.partner(seat)
        s = state.clone()
        for entry in s.signals:
            if entry[0] == partner:
                entry[1] = 0  # token index 0 is "none"
        L = s.L
        for i, (actor, action, aux) in enumerate(s.history):
            if actor == partner and L.signal >= 0 and L.signal <= action < L.signal + len(L.signal_tokens):
                s.history[i] = (actor, L.signal, aux)
        return int(self.inner.act(SeatObservation(s, seat, np.array(mask)), mask))


def make_oracle(spec: str, rules, seed: int | None = None) -> OracleAgent:
    """Build ``oracle:heuristic:<style>`` for the bound; any other inner agent is refused (it could not
    use a partner hand it was shown: PPO and CFR read encodings that have no place for it)."""
    from agents import make_agent

    if not spec.startswith(ORACLE_PREFIX):
        raise TrucError(f"{spec!r} is not an oracle spec; the form is oracle:heuristic:<style>")
    inner_spec = spec[len(ORACLE_PREFIX):]
    if not inner_spec.startswith("heuristic"):
        raise TrucError(f"{spec!r}: the oracle wraps a heuristic (oracle:heuristic:<style>), the one agent that "
                        "plays on a partner hand it can see")
    return OracleAgent(make_agent(inner_spec, rules, seed), rules)
