"""A ``table:PATH`` strategy deciding for its games of the batched engine.

The ``table:`` agent reads a seat's perfect-recall info-state string, which only engine states give.
On the batched engine the rollout keeps each hand's decisions itself (actor, action id), and every decision
of a heads-up hand without signals or passes is public, so the solver's key follows from them directly: the
seat's role from the game's dealer, its dealt hand from its unplayed cards and the cards it played since the
deal, and the public labels with each card play written as its class, split at an accepted redeal as
:func:`agents.cfr.keys.parse_info_state` splits the string. The distribution is the table agent's
(:func:`agents.cfr.agent.spread`: a class's probability evenly over its legal cards), sampled from a
generator of the player's own; an information set the strategy lacks is played uniformly and counted in
``misses``, as the agent does. Tested equal to the agent asked at engine replicas of the same games.
"""

from __future__ import annotations

import numpy as np

from agents.cfr.agent import CFRAgent, spread
from agents.cfr.keys import InfoKey
from agents.cfr.tree import PLAY
from truc_env.game.actions import layout_of

SEEN_LIMIT = 200_000  # decisions kept for lookup (a few hundred MB at most; cleared when full)


class BatchTable:
    """The strategy of a :class:`CFRAgent` for games of the batched engine (:meth:`act_in`)."""

    def __init__(self, rules, agent: CFRAgent):
        self.rules, self.agent, self.key = rules, agent, id(agent)
        self.strategy, self.layout = agent.strategy, agent.layout
        self.card_class = np.asarray([self.strategy.abstraction.card_class[c] for c in rules.deck], np.int64)
        self.rng = np.random.default_rng(0)
        self.misses = 0
        self.decisions = 0
        self._seen: dict = {}  # (key, legal actions) -> (actions, cumulative probabilities)

    @staticmethod
    def why_not(agent, rules) -> str | None:
        """Why ``agent`` cannot decide on the batched engine of ``rules`` (None: it can)."""
        if not isinstance(agent, CFRAgent):
            return "not a table: agent"
        if agent.rules.key != rules.key:
            return "the strategy was solved for other rules"
        return BatchTable.why_not_rules(rules)

    @staticmethod
    def why_not_rules(rules) -> str | None:
        """Why no table of ``rules`` can decide on their batched engine (None: one can)."""
        if rules.players != 2 or rules.vira or rules.envido or rules.flor:
            return "a table on the batched engine plays heads-up hands without a vira, envido or flor"
        if layout_of(rules).slot >= 0 or rules.signals.mode != "none" or rules.put_pass:
            return "a table on the batched engine needs every decision public (no blind plays, signals or passes)"
        return None

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def key_of(self, seat: int, dealer: int, unplayed: np.ndarray, actors: np.ndarray, actions: np.ndarray) -> InfoKey:
        """The solver's key of ``seat``'s decision after the hand's decisions ``actors``/``actions``."""
        L = self.layout
        before: list[int] = []
        after: list[int] = []
        mine: list[list[int]] = [[]]  # the seat's card plays, per deal (a new list after an accepted redeal)
        redealt, last = False, None
        for actor, a in zip(actors.tolist(), actions.tolist()):
            if L.play <= a < L.play + len(L.deck):
                lab = PLAY + int(self.card_class[a - L.play])
                if actor == seat:
                    mine[-1].append(a - L.play)
            else:
                lab = a
            (after if redealt else before).append(lab)
            if last == L.REDEAL and lab == L.ACCEPT and not redealt:
                redealt = True
                mine.append([])
            last = lab
        dealt = [int(c) for c in unplayed if c >= 0] + mine[-1]
        hand = tuple(sorted(int(self.card_class[c]) for c in dealt))
        return InfoKey(0 if seat == dealer else 1, hand, tuple(before), redealt, tuple(after))

    def probabilities(self, key: InfoKey, legal: list[int]) -> dict[int, float]:
        """The table agent's distribution at ``key`` over ``legal`` (uniform where the strategy has no entry)."""
        self.decisions += 1
        try:
            labels, probs = self.strategy.distribution_of_key(key)
            out = spread(self.layout, self.strategy.abstraction.card_class, labels, probs, legal)
        except KeyError:
            out = None
        if out is None:
            self.misses += 1
            return {a: 1.0 / len(legal) for a in legal}
        return out

    def act_in(self, games, idx: np.ndarray) -> np.ndarray:
        """Actions of games ``idx`` of a :class:`train.algos.rollout.VectorGames` (its hand histories kept)."""
        venv = games.venv
        hands, dealers = venv.hands[idx], venv.dealers[idx]
        draws = self.rng.random(len(idx))
        out = np.empty(len(idx), np.int64)
        for row, b in enumerate(idx.tolist()):
            seat, k = int(games.seat[b]), int(games.decisions[b])
            key = self.key_of(seat, int(dealers[row]), hands[row, seat], games.t_actor[b, :k], games.t_action[b, :k])
            legal = tuple(np.flatnonzero(games.mask[b]).tolist())
            hit = self._seen.get((key, legal))
            if hit is None:  # a decision met again (most of them, past the first updates) is a lookup
                missed = self.misses
                dist = self.probabilities(key, list(legal))
                cdf = np.cumsum(np.fromiter(dist.values(), float, len(dist)))
                hit = (list(dist), cdf / cdf[-1], self.misses > missed)
                if len(self._seen) >= SEEN_LIMIT:
                    self._seen.clear()
                self._seen[(key, legal)] = hit
            else:  # counted as the agent counts them: every decision, every miss
                self.decisions += 1
                self.misses += hit[2]
            acts, cdf, _ = hit
            out[row] = acts[min(int(np.searchsorted(cdf, draws[row], side="right")), len(acts) - 1)]
        return out
