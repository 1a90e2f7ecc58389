"""Rule-of-thumb players a Truco table would recognise, for every variant.

They read ``observation["view"]`` (:func:`truc_env.game.view.seat_view`: only what the seat knows) and
judge their hand by card strength this hand (manilhas included), tricks already won or lost, the
partner's signals or visible hand, and envido points; they raise, accept and call by thresholds that
climb with the stake. Styles:

- ``honest``: raises and accepts by strength alone;
- ``bluffer``: as honest, and also raises (and calls envido) with weak hands at ``bluff_rate``;
- ``cautious``: raises only strong hands and refuses more often.

In partnership games they signal truthfully (their best card, or a strength class in ``free`` mode,
where the convention is "higher token = stronger hand"), trust their partner's signals, give
instructions as governors and obey them (the engine narrows their legal plays).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.base import legal_ids
from truc_env.game.actions import layout_of
from truc_env.game.engine import envido_points, flor_points


def _ours(view, rel_seat: int) -> bool:
    """Is this seat (relative to the viewer) on the viewer's side?"""
    return rel_seat % 2 == 0 if view["rules_partnership"] else rel_seat == 0


def card_percentile(strength, card: int) -> float:
    """The share of this hand's deck that ``card`` beats, by the hand's ranking ``strength`` (-1: not in the deck)."""
    mine = strength[card]
    deck = [s for s in strength if s >= 0]
    return sum(1 for s in deck if s < mine) / max(1, len(deck) - 1)


# The hand judgement and the style-free thresholds, written once: the per-state agent below, the batched one
# (heuristic_batch.py) and the signal study's features (train/analysis/signals.py) all read them from here.
HAND_WEIGHTS = (0.55, 0.3, 0.15)  # the best, second and third card's share of a hand's strength
BLIND_STRENGTH = 0.5  # a hand nobody sees
OWN_SHARE, PARTNER_SHARE = 0.6, 0.4  # a partner's shown strength counts where it is the better
TRICK_WON, TRICK_LOST = 0.2, 0.25  # a trick taken or lost moves the strength
ELEVEN_ACCEPT = 0.45  # play a mão de onze from this strength
REDEAL_ACCEPT_BELOW = 0.4  # accept a redeal below this strength
REDEAL_PROPOSE_BELOW = 0.3  # propose one below this
ALL_IN_ANSWER_FLOOR = 0.62  # the least strength to accept an all-in (rest, put)
RERAISE_MARGIN = 0.25  # raise back when this far above the acceptance threshold
ALL_IN_AT, REST_EXTRA = 0.85, 0.05  # call an all-in from this strength (the rest needs a little more)
BLUFF_BELOW = 0.4  # a bluffer raises only hands below this


@dataclass(frozen=True)
class Style:
    raise_at: float  # hand strength from which to raise
    accept_at: float  # strength from which to accept a raise at the first step
    per_level: float  # how much both thresholds climb per accepted step
    bluff_rate: float  # chance to raise a weak hand anyway
    envido_call: int  # envido points from which to call envido
    envido_accept: int


STYLES = {
    "honest": Style(raise_at=0.68, accept_at=0.5, per_level=0.04, bluff_rate=0.0, envido_call=28, envido_accept=26),
    "bluffer": Style(raise_at=0.68, accept_at=0.45, per_level=0.03, bluff_rate=0.3, envido_call=28, envido_accept=25),
    "cautious": Style(raise_at=0.8, accept_at=0.6, per_level=0.05, bluff_rate=0.0, envido_call=30, envido_accept=28),
}


class HeuristicAgent:
    """A threshold player; see the module docstring for the styles."""

    def __init__(self, style: str = "honest", seed: int | None = None):
        if style not in STYLES:
            raise ValueError(f"unknown heuristic style {style!r}; styles: {', '.join(STYLES)}")
        self.style_name = style
        self.style = STYLES[style]
        self.name = f"heuristic:{style}"
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ judging the hand
    @staticmethod
    def _pct(view, card: int) -> float:
        return card_percentile(view["strength"], card)

    def _hand_strength(self, view) -> float:
        own = sorted((self._pct(view, c) for c in view["own"]), reverse=True)
        if not own:  # blind hand: nothing known
            base = BLIND_STRENGTH
        else:
            weights = HAND_WEIGHTS[: len(own)]
            base = sum(w * p for w, p in zip(weights, own)) / sum(weights)
        partner = self._partner_strength(view)
        if partner is not None:
            base = OWN_SHARE * base + PARTNER_SHARE * max(base, partner)
        won = sum(1 for w in view["trick_winners"] if w >= 0 and _ours(view, w))
        lost = sum(1 for w in view["trick_winners"] if w >= 0) - won
        return float(np.clip(base + TRICK_WON * won - TRICK_LOST * lost, 0.0, 1.0))

    def _partner_strength(self, view) -> float | None:
        if not view["rules_partnership"]:
            return None
        if 2 in view["hands"] and view["hands"][2]:
            return max(self._pct(view, c) for c in view["hands"][2])
        tokens = [s["token"] for s in view["signals"] if s["sender"] == 2 and s["token"] not in ("none", "unseen")]
        if not tokens:
            return None
        token = tokens[-1]
        if token.isdigit() and view.get("signal_mode") == "free":
            return (int(token) + 0.5) / view["vocab"]
        ranks = [c for c in range(len(view["strength"])) if view["strength"][c] >= 0
                 and view["card_rank"](c) == token]
        if ranks:
            return max(self._pct(view, c) for c in ranks)
        return 0.9  # a seña names a manilha or a top card

    # ------------------------------------------------------------------ choosing
    def act(self, observation, action_mask) -> int:
        rules = observation["rules"]
        L = layout_of(rules)
        ids = legal_ids(action_mask)
        names = {L.to_string(int(a)): int(a) for a in ids}
        view = dict(observation["view"])
        view["rules_partnership"] = rules.partnership
        view["signal_mode"] = rules.signals.mode
        view["vocab"] = rules.signals.vocab
        view["card_rank"] = rules.family.rank_of
        choice = self._choose(view, names, rules)
        return names[choice] if isinstance(choice, str) else int(choice)

    def _choose(self, view, names: dict, rules):
        st = self.style
        phase = view["phase"]
        strength = self._hand_strength(view)
        plays = [n for n in names if n.startswith("play ")]
        if phase == "signal":
            return self._signal(view, names, strength)
        if phase == "instruct":
            return self._instruct(view, names)
        if phase == "eleven":
            return "accept" if strength >= ELEVEN_ACCEPT else "refuse"
        if phase == "give":
            return next(iter(names))
        if phase == "discard":
            return min(names, key=lambda n: self._pct(view, rules.family.parse(n.split()[1])))
        if "flor" in names:  # compulsory before anything else in the first trick, even when asked an envido (§6)
            return "flor"
        if phase == "envido":
            return self._envido_answer(view, names, rules)
        if phase == "flor":  # "con flor quiero" with a good flor: 4 to the better one, else 3 lost
            return "accept" if self._flor_pts(view, rules) >= st.envido_accept + 4 else "refuse"
        if phase == "answer":
            if view["call"] == "redeal":
                return "accept" if strength < REDEAL_ACCEPT_BELOW else "refuse"
            if any(n in names for n in ("envido", "real_envido")) and self._envido_pts(view, rules) >= st.envido_call:
                return "envido"
            need = st.accept_at + st.per_level * view["level"]
            if view["call"] in ("rest", "put"):
                need = max(need, ALL_IN_ANSWER_FLOOR)
            if "raise" in names and strength >= need + RERAISE_MARGIN:
                return "raise"
            if strength >= need or (st.bluff_rate and self.rng.random() < st.bluff_rate / 3):
                return "accept"
            return "refuse"
        # a turn: calls before the card
        if "redeal" in names and strength < REDEAL_PROPOSE_BELOW:
            return "redeal"
        if "envido" in names:
            pts = self._envido_pts(view, rules)
            if pts >= st.envido_call + 3 and "real_envido" in names:
                return "real_envido"
            if pts >= st.envido_call or (st.bluff_rate and self.rng.random() < st.bluff_rate / 2):
                return "envido"
        all_in = "rest" if "rest" in names else ("put" if "put" in names else None)
        if all_in and strength >= ALL_IN_AT + (REST_EXTRA if all_in == "rest" else 0.0):
            return all_in
        if "raise" in names:
            need = st.raise_at + st.per_level * view["level"]
            if strength >= need or (st.bluff_rate and strength < BLUFF_BELOW and self.rng.random() < st.bluff_rate):
                return "raise"
        if plays:
            return self._play(view, plays, rules)
        return next(iter(names))

    def _envido_pts(self, view, rules) -> int:
        cards = list(view["own"]) + [c for s, c in view["trick"] if s == 0]
        return envido_points(cards, rules.family) if cards else 0

    def _flor_pts(self, view, rules) -> int:
        cards = list(view["own"]) + [c for s, c in view["trick"] if s == 0]
        return flor_points(cards, rules.family) if len(cards) == 3 else 0

    def _envido_answer(self, view, names, rules):
        pts = self._envido_pts(view, rules)
        st = self.style
        if pts >= st.envido_accept + 4 and "real_envido" in names:
            return "real_envido"
        if pts >= st.envido_accept:
            return "accept"
        return "refuse"

    def _signal(self, view, names, strength):
        tokens = [n.split(" ", 1)[1] for n in names if n != "signal none"]
        if not tokens:
            return "signal none"
        if view["signal_mode"] == "free":
            token = min(view["vocab"] - 1, int(strength * view["vocab"]))
            return f"signal {token}"
        if view["signal_mode"] == "card":  # show the best card held
            best = max(view["own"], key=lambda c: self._pct(view, c), default=None)
            if best is not None and f"signal {view['card_rank'](best)}" in names:
                return f"signal {view['card_rank'](best)}"
        return f"signal {tokens[0]}"  # señas: listed strongest first

    def _instruct(self, view, names):
        table = view["trick"]
        if not table:
            return "instruct none"
        best_seat, _ = max(table, key=lambda sc: view["strength"][sc[1]])
        return "instruct low" if _ours(view, best_seat) else "instruct high"

    def _play(self, view, plays, rules):
        if plays[0].startswith("play slot"):
            return plays[int(self.rng.integers(len(plays)))]
        strength = view["strength"]
        cards = sorted((strength[rules.family.parse(p.split()[1])], p) for p in plays)
        table = view["trick"]
        if not table:  # leading: keep the best for later unless a trick is already won
            won = any(w >= 0 and _ours(view, w) for w in view["trick_winners"])
            return cards[-1][1] if won or len(cards) == 1 else cards[len(cards) // 2][1]
        best_seat, best_card = max(table, key=lambda sc: strength[sc[1]])
        if best_seat != 0 and _ours(view, best_seat):  # the partner is winning it
            return cards[0][1]
        beating = [p for s, p in cards if s > strength[best_card]]
        return beating[0] if beating else cards[0][1]
