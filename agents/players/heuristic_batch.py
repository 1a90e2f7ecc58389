"""The ``heuristic:*`` players of :mod:`agents.players.heuristic`, deciding for a whole batch at once.

For the batched engine (:class:`truc_env.batch.vector.VectorEnv`), which has observation vectors and masks
but no ``State``: every quantity the per-state player reads from its seat's view is read here from
the observation vector (``observe.encoder_of(rules)``'s sections: the decision kind, the own hand,
the finished tricks' winners, the cards played, the vira, the accepted stake, the pending call) and
from the legal-action mask, and every decision rule is the same, in the same floating-point
operations, so the actions are the per-state player's exactly (``tests/test_heuristic_batch.py``
checks every decision of thousands).

Heads-up rules only (the partnership players read partners' signals and hands, and give
instructions); envido and flor are not in the batched engine either. :func:`batch_supports` says why
not.

Chance. The per-state player draws from its generator only for a bluff (``bluffer``) and for a blind
card (a slot in a hand played blind). Here each call draws two uniforms per game from the batch's
generator, ``u[:, 0]`` for the bluff test (``u < rate``) and ``u[:, 1]`` for the slot (the
``floor(u * k)``-th of the k legal slots); :meth:`BatchHeuristic.act` also takes them from the
caller, which is how the test gives both players the same draws.
"""

from __future__ import annotations

import numpy as np

from agents.players.heuristic import (
    ALL_IN_ANSWER_FLOOR,
    ALL_IN_AT,
    BLIND_STRENGTH,
    BLUFF_BELOW,
    ELEVEN_ACCEPT,
    HAND_WEIGHTS,
    REDEAL_ACCEPT_BELOW,
    REDEAL_PROPOSE_BELOW,
    RERAISE_MARGIN,
    REST_EXTRA,
    STYLES,
    TRICK_LOST,
    TRICK_WON,
    card_percentile,
)
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.observe import encoder_of

_WEIGHTS = HAND_WEIGHTS


def batch_supports(rules) -> str | None:
    """None if :class:`BatchHeuristic` plays these Rules, else the reason it does not."""
    if rules.players != 2 or rules.partnership:
        return f"{rules.players} players: the batched heuristic is heads-up only (partners' signals and hands)"
    if rules.envido or rules.flor:
        return "envido and flor are not in the batched heuristic"
    if rules.signals.mode != "none" or rules.instructions or rules.put_pass:
        return "signals, instructions and card passes are partnership rules"
    return None


class BatchHeuristic:
    """``heuristic:<style>`` for a batch of observation vectors of ``rules`` (see the module docstring)."""

    def __init__(self, rules, style: str = "honest", seed: int | None = None):
        if style not in STYLES:
            raise TrucError(f"unknown heuristic style {style!r}; styles: {', '.join(STYLES)}")
        why = batch_supports(rules)
        if why is not None:
            raise TrucError(f"no batched heuristic for {rules.variant}: {why}")
        self.rules, self.style_name, self.style = rules, style, STYLES[style]
        self.name = f"heuristic:{style}"
        self.rng = np.random.default_rng(seed)
        enc, L = encoder_of(rules), layout_of(rules)
        D, hs, n = len(rules.deck), rules.hand_size, rules.players
        self.D, self.hs, self.n = D, hs, n

        self.span = {k: enc.piece(k).slice for k in ("decision", "hand", "played", "trick_winner", "stake", "call", "vira")
                     if enc.has(k)}
        self.phase_of = {p: i for i, p in enumerate(enc.decisions)}
        self.call_of = {"raise": 0, "all_in": 1, "redeal": 2}  # observe.CALL_KINDS
        # each card's percentile as the per-state player computes it, under every ranking of a hand
        # (row 0 without vira, row 1 + v with the vira of deck index v), in Python floats: the same bits
        rows = [rules.base_strength] + ([rules.strength_with_vira(c) for c in rules.deck] if rules.vira else [])
        self.pct = np.array([[card_percentile(row, c) for c in rules.deck] for row in rows], np.float64)
        # the same ranking as integers (cards below): exact sort keys and comparisons
        self.below = np.array([[sum(1 for s in row if 0 <= s < row[c]) for c in rules.deck] for row in rows], np.int64)
        # the per-state player sorts its plays by (strength, action name): the names' order breaks ties
        names = [L.to_string(a) for a in range(L.size)]
        self.play_lo = L.play
        self.name_rank = np.argsort(np.argsort([names[L.play + i] for i in range(D)], kind="stable"), kind="stable")
        self.slot_ids = np.array([a for a in range(L.size) if names[a].startswith("play slot")], np.int64)
        self.ids = {k: names.index(k) for k in ("raise", "accept", "refuse", "rest", "put", "redeal") if k in names}
        # Python's sum of the weights used, as the player's (no card: unused, 1 avoids a 0 / 0)
        self.den = np.array([1.0] + [sum(_WEIGHTS[:k]) for k in range(1, len(_WEIGHTS) + 1)])

    def reset(self, seed: int | None = None) -> None:
        """Reseed the batch's generator (None: keep it)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ judging the hand
    def _ranking(self, obs: np.ndarray) -> np.ndarray:
        """(B,) the row of ``pct`` / ``below`` that ranks each game's hand (0: no vira, 1 + v: vira v)."""
        if "vira" in self.span:
            vira = obs[:, self.span["vira"]]
            return np.where(vira.any(1), vira.argmax(1) + 1, 0)
        return np.zeros(len(obs), np.int64)

    def strength(self, obs: np.ndarray) -> np.ndarray:
        """(B,) the per-state player's hand strength: own cards weighted best first, plus tricks won, minus lost."""
        pct = self.pct[self._ranking(obs)]
        own = obs[:, self.span["hand"]] > 0
        k = np.minimum(own.sum(1), len(_WEIGHTS))
        top = -np.sort(np.where(own, -pct, 1.0), axis=1)[:, :len(_WEIGHTS)]  # strongest first
        num = _WEIGHTS[0] * top[:, 0]
        for i in range(1, len(_WEIGHTS)):  # the per-state sum, term by term in the same order
            num = np.where(k > i, num + _WEIGHTS[i] * top[:, i], num)
        base = np.where(k > 0, num / self.den[k], BLIND_STRENGTH)
        won, lost = self._tricks(obs)
        return np.clip(base + TRICK_WON * won - TRICK_LOST * lost, 0.0, 1.0)

    def _tricks(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(B,) tricks won and lost by the acting seat (a tie is neither)."""
        tw = obs[:, self.span["trick_winner"]].reshape(len(obs), self.hs, self.n + 1)
        won = tw[:, :, 0].sum(1).round().astype(np.int64)
        return won, tw[:, :, 1:self.n].sum((1, 2)).round().astype(np.int64)

    # ------------------------------------------------------------------ choosing
    def act(self, obs: np.ndarray, mask: np.ndarray, uniforms: np.ndarray | None = None) -> np.ndarray:
        """(B,) int64 actions for observation vectors ``obs`` (B, F) and legal masks ``mask`` (B, A).

        ``uniforms`` (B, 2) in [0, 1): the bluff and blind-slot draws (None: drawn from the generator).
        """
        obs, mask = np.asarray(obs), np.asarray(mask).astype(bool)
        B = len(obs)
        if uniforms is None:
            uniforms = self.rng.random((B, 2))
        if not B:
            return np.zeros(0, np.int64)
        st, ids = self.style, self.ids
        strength = self.strength(obs)
        level = obs[:, self.span["stake"]].argmax(1)
        phase = obs[:, self.span["decision"]].argmax(1)
        call = obs[:, self.span["call"]].argmax(1)

        def legal(name):
            return mask[:, ids[name]] if name in ids else np.zeros(B, bool)

        def act_id(name):
            return ids.get(name, -1)

        # the first legal action: the per-state player's last resort
        out = mask.argmax(1).astype(np.int64)
        decided = np.zeros(B, bool)

        def take(cond, action):
            nonlocal decided
            pick = cond & ~decided
            out[pick] = action if np.isscalar(action) else action[pick]
            decided |= pick

        bluff_u = uniforms[:, 0]
        accept_refuse = np.where(strength >= ELEVEN_ACCEPT, act_id("accept"), act_id("refuse"))
        take(phase == self.phase_of["eleven"], accept_refuse)
        answer = phase == self.phase_of["answer"]
        take(answer & (call == self.call_of["redeal"]), np.where(strength < REDEAL_ACCEPT_BELOW, act_id("accept"), act_id("refuse")))
        need = st.accept_at + st.per_level * level
        need = np.where(call == self.call_of["all_in"], np.maximum(need, ALL_IN_ANSWER_FLOOR), need)
        take(answer & legal("raise") & (strength >= need + RERAISE_MARGIN), act_id("raise"))
        accept = strength >= need
        if st.bluff_rate:
            accept = accept | (bluff_u < st.bluff_rate / 3)
        take(answer, np.where(accept, act_id("accept"), act_id("refuse")))
        turn = phase == self.phase_of["turn"]
        take(turn & legal("redeal") & (strength < REDEAL_PROPOSE_BELOW), act_id("redeal"))
        rest, put = legal("rest"), legal("put")
        all_in = np.where(rest, act_id("rest"), act_id("put"))
        take(turn & (rest | put) & (strength >= ALL_IN_AT + np.where(rest, REST_EXTRA, 0.0)), all_in)
        need = st.raise_at + st.per_level * level
        raise_ = strength >= need
        if st.bluff_rate:
            raise_ = raise_ | ((strength < BLUFF_BELOW) & (bluff_u < st.bluff_rate))
        take(turn & legal("raise") & raise_, act_id("raise"))
        play = self._play(obs, mask, uniforms[:, 1])
        take(turn & (play >= 0), play)
        return out

    def draw_cells(self, slots: bool = True) -> list[tuple[float, float, float]]:
        """The cells of the two draws' square on which :meth:`act` is constant: ``(u_bluff, u_slot,
        area)``, a point inside each cell and its area (the areas sum to 1).

        The bluff draw is only compared with ``rate / 3`` and ``rate``, and the slot draw picks the
        ``floor(u * k)``-th of k legal slots (k up to the hand size), so the action is constant between
        those cut points; a cell's area is the probability of the action taken at its point. ``slots``:
        False where no blind slot is legal, so that the slot draw is never read."""
        rate = self.style.bluff_rate
        cuts0 = sorted({0.0, 1.0} | ({rate / 3, rate} if rate else set()))
        cuts1 = sorted({j / k for k in range(1, self.hs + 1) for j in range(k + 1)}
                       if slots and len(self.slot_ids) else {0.0, 1.0})
        return [((a + b) / 2, (c + d) / 2, (b - a) * (d - c))
                for a, b in zip(cuts0, cuts0[1:]) for c, d in zip(cuts1, cuts1[1:])]

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, A) float64: the exact probability of every action, :meth:`act` integrated over its draws
        (one call per cell of :meth:`draw_cells`: 1 for ``honest`` and ``cautious``, 3 for ``bluffer``;
        more for the rows where a blind slot is legal)."""
        obs, mask = np.asarray(obs), np.asarray(mask).astype(bool)
        out = np.zeros(mask.shape, np.float64)
        blind = mask[:, self.slot_ids].any(1) if len(self.slot_ids) else np.zeros(len(obs), bool)
        for slots in (False, True):
            rows = np.flatnonzero(blind == slots)
            if not len(rows):
                continue
            o, m = obs[rows], mask[rows]
            for u0, u1, area in self.draw_cells(slots):
                u = np.empty((len(rows), 2))
                u[:, 0], u[:, 1] = u0, u1
                out[rows, self.act(o, m, u)] += area
        return out

    def _play(self, obs, mask, slot_u) -> np.ndarray:
        """(B,) the card the per-state player plays (-1 where no play is legal: its first legal action then)."""
        B, D = len(obs), self.D
        cards = mask[:, self.play_lo:self.play_lo + D]
        below = self.below[self._ranking(obs)]
        # sort key of the per-state player: strength, then the action's name
        key = np.where(cards, below * D + self.name_rank, np.iinfo(np.int64).max)
        order = np.argsort(key, axis=1, kind="stable")
        k = cards.sum(1)
        rows = np.arange(B)
        weakest = order[:, 0]
        strongest = order[rows, np.maximum(k - 1, 0)]
        middle = order[rows, k // 2]
        won, _ = self._tricks(obs)
        # the trick in progress (index = tricks finished) and the opponent's card in it, if any
        finished = obs[:, self.span["trick_winner"]].sum(1).round().astype(np.int64)
        played = obs[:, self.span["played"]].reshape(B, self.hs, self.n, D)
        theirs = played[rows, np.minimum(finished, self.hs - 1), 1]
        table = theirs.any(1) & (finished < self.hs)
        to_beat = np.where(table, below[rows, theirs.argmax(1)], -1)
        leading = np.where((won > 0) | (k == 1), strongest, middle)
        # the weakest card that beats the table's, else the weakest
        beats = cards & (below > to_beat[:, None])
        beat_key = np.where(beats, key, np.iinfo(np.int64).max)
        beating = np.where(beats.any(1), beat_key.argmin(1), weakest)
        choice = np.where(table, beating, leading) + self.play_lo
        if len(self.slot_ids):  # a blind hand: a uniformly drawn legal slot
            slots = mask[:, self.slot_ids]
            ns = slots.sum(1)
            j = np.minimum((slot_u * ns).astype(np.int64), np.maximum(ns - 1, 0))
            nth = np.argmax(np.cumsum(slots, axis=1) > j[:, None], axis=1)
            choice = np.where((k == 0) & (ns > 0), self.slot_ids[nth], choice)
            k = k + ns
        return np.where(k > 0, choice, -1)
