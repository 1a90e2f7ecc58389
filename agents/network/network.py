"""The PPO policy network: an actor and a critic MLP over one seat's observation, with action masking.

The observation is relative to the acting seat (self first), so one network plays every seat and
partners share it. ``features`` picks the input: ``observation`` (the flat vector of the
environments), ``info_state`` (that vector followed by this hand's decision history, which makes it
perfect-recall within a hand; see :mod:`truc_env.game.observe`), or ``observation+strength``: the flat
vector followed by card strengths in this hand's ranking (manilhas follow the vira, so a card's
one-hot alone does not say how strong it is): own unplayed cards sorted, every card played so far
by trick and relative seat, and the best card on the table for each side; ``info_state+strength``:
the ``info_state`` vector followed by the same strengths (perfect recall within a hand, and the
batched engine gives it where every decision is public: the learned best response's input);
``observation+strength+envido`` (variants with envido): the strengths followed by the seat's own envido
points over 33 and whether its three cards are a flor, counted from its dealt cards (those held and those it
played), as a player counts them before a call; the one-hot cards alone leave a small network to learn
that sum of same-suit pips. All of it is what the seat sees (own cards only when not playing blind; played
cards and the ranking are public).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from truc_env.game.calls import envido_points, holds_flor
from truc_env.game.hand_rules import envido_pip
from truc_env.game.observe import encoder_of
from truc_env.game.view import visible_hand

FEATURES = ("observation", "info_state", "observation+strength", "info_state+strength", "observation+strength+envido")
HISTORY_FEATURES = ("info_state", "info_state+strength")  # inputs with the hand's decision history
ENVIDO_FEATURES = 2  # own envido points / 33, own flor (0 or 1)
ENVIDO_MAX = 33.0


def has_strength(features: str) -> bool:
    """Does the input carry the card strengths (every ``+strength`` input)?"""
    return "+strength" in features


def has_envido(features: str) -> bool:
    """Does the input end with the seat's own envido points and flor?"""
    return features.endswith("+envido")


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights and constant bias, as in CleanRL."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def _mlp(sizes: list[int], out: int, out_std: float, init: bool = True) -> nn.Sequential:
    ini = layer_init if init else (lambda layer, std=None: layer)
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [ini(nn.Linear(a, b)), nn.Tanh()]
    layers.append(ini(nn.Linear(sizes[-1], out), std=out_std))
    return nn.Sequential(*layers)


def legal_probs(logp_all: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logp_all.exp()``, the same bits and gradients, exponentiating the legal entries only: the
    illegal ones sit near the smallest float, where the CPU's ``exp`` takes a path ~13x slower."""
    return logp_all.masked_fill(~mask, 0.0).exp().masked_fill(~mask, 0.0)


class PolicyNet(nn.Module):
    """Separate actor and critic MLPs (CleanRL's ``Agent``); the actor's logits are masked."""

    def __init__(self, obs_size: int, n_actions: int, hidden: list[int] | tuple[int, ...] = (256, 256),
                 init: bool = True):
        super().__init__()
        sizes = [obs_size, *hidden]
        # init=False skips the orthogonal initialisation (a QR per layer) when weights are loaded next
        self.actor = _mlp(sizes, n_actions, out_std=0.01, init=init)
        self.critic = _mlp(sizes, 1, out_std=1.0, init=init)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)

    def masked_logits(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Actor logits with every illegal action at the smallest float: probability exactly 0."""
        logits = self.actor(x)
        return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None,
                generator: torch.Generator | None = None):
        """(action, log-prob, entropy, value); samples the action when none is given.

        The same mask is applied when sampling and when an update recomputes log-probabilities of
        the stored actions, so both see the same distribution over legal actions only.
        """
        logits = self.masked_logits(x, mask)
        logp_all = torch.log_softmax(logits, dim=-1)
        probs = legal_probs(logp_all, mask)
        if action is None:
            action = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        logp = logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        # illegal actions have p = 0 exactly: p * log p is taken as 0 there
        entropy = -(probs * logp_all.masked_fill(~mask, 0.0)).sum(-1)
        return action, logp, entropy, self.value(x)

    def sample(self, x: torch.Tensor, mask: torch.Tensor, generator: torch.Generator | None = None):
        """(action, log-prob, value) of a sampled action: :meth:`forward` without the entropy (rollouts)."""
        logp_all = torch.log_softmax(self.masked_logits(x, mask), dim=-1)
        action = torch.multinomial(legal_probs(logp_all, mask), 1, generator=generator).squeeze(-1)
        return action, logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1), self.value(x)


def stack_actors(params: list[dict]) -> list[tuple]:
    """The actor layers of several :class:`PolicyNet` parameter sets: ``[(weights (S, out, in), biases (S, out))]``."""
    names = sorted({k.rsplit(".", 1)[0] for k in params[0] if k.startswith("actor.")}, key=lambda n: int(n.split(".")[1]))
    return [(torch.stack([p[n + ".weight"] for p in params]), torch.stack([p[n + ".bias"] for p in params]))
            for n in names]


def stacked_actor_logits(layers: list[tuple], x: torch.Tensor) -> torch.Tensor:
    """Unmasked actor logits of S networks at once: ``x`` (S, rows, inputs) -> (S, rows, actions)."""
    for i, (w, b) in enumerate(layers):
        x = torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        if i < len(layers) - 1:
            x = torch.tanh(x)  # the activation of _mlp
    return x


def feature_size(rules, features: str) -> int:
    enc = encoder_of(rules)
    base = enc.info_size if features in HISTORY_FEATURES else enc.size
    return (base + (strength_size(rules) if has_strength(features) else 0)
            + (ENVIDO_FEATURES if has_envido(features) else 0))


def strength_offset(rules, features: str) -> int:
    """Where the strength features begin in the input (-1: the input has none)."""
    if not has_strength(features):
        return -1
    enc = encoder_of(rules)
    return enc.info_size if features in HISTORY_FEATURES else enc.size


def strength_size(rules) -> int:
    return rules.hand_size + rules.hand_size * rules.players + 2


_PERCENTILES: dict = {}


def percentiles(strength: tuple) -> dict:
    """card -> 0.05 + 0.95 * (fraction of the deck it beats), for one hand's ranking (cached)."""
    table = _PERCENTILES.get(strength)
    if table is None:
        cards = [c for c, s in enumerate(strength) if s >= 0]
        values = sorted(strength[c] for c in cards)
        n = max(len(cards) - 1, 1)
        table = {c: 0.05 + 0.95 * (np.searchsorted(values, strength[c]) / n) for c in cards}
        if len(_PERCENTILES) > 4096:
            _PERCENTILES.clear()
        _PERCENTILES[strength] = table
    return table


def strength_features(state, seat: int) -> np.ndarray:
    """Card strengths this hand as ``seat`` sees them (see the module docstring)."""
    r = state.rules
    hs, n = r.hand_size, r.players
    out = np.zeros(strength_size(r), np.float32)
    if not state.hand_log or not state.dealt:
        return out
    pct = percentiles(tuple(state.strength))
    own = visible_hand(state, seat, seat)
    if own is not None:
        mine = sorted((pct.get(c, 0.0) for c in own if c >= 0), reverse=True)[:hs]
        out[:len(mine)] = mine
    for trick, s, card in state.played:
        if trick < hs:
            out[hs + trick * n + (s - seat) % n] = pct.get(card, 0.0)
    best = [0.0, 0.0]
    for s, card in state.trick:
        k = 0 if r.side(s) == r.side(seat) else 1
        best[k] = max(best[k], pct.get(card, 0.0))
    out[-2:] = best
    return out


_STRENGTH_PLANS: dict = {}


def _strength_plan(rules) -> tuple:
    """Per Rules: the observation slices the features read, and each deck card's percentile under
    every ranking of a hand (row 0 without vira, row 1 + v under the vira of deck index v)."""
    plan = _STRENGTH_PLANS.get(rules.key)
    if plan is None:
        enc = encoder_of(rules)
        n, hs, D = rules.players, rules.hand_size, len(rules.deck)
        rows = [rules.base_strength] + ([rules.strength_with_vira(c) for c in rules.deck] if rules.vira else [])
        table = np.zeros((len(rows), D), np.float32)
        for i, row in enumerate(rows):
            pct = percentiles(tuple(row))
            table[i] = [pct.get(c, 0.0) for c in rules.deck]
        span = {name: enc.piece(name).slice for name in ("hand", "played", "trick_winner", "active", "vira")
                if enc.has(name)}
        mine = np.array([rules.side(r) == rules.side(0) for r in range(n)])
        plan = _STRENGTH_PLANS[rules.key] = (n, hs, D, table, span, mine)
    return plan


def strength_features_batch(rules, obs: np.ndarray) -> np.ndarray:
    """:func:`strength_features` of a batch, read from the observation vectors alone (bit-identical).

    For the batched engine, which has no ``State`` objects: the observation holds everything the
    features need (own visible cards, cards played by trick and relative seat, finished tricks,
    the vira). It relies on every seat still in playing once in every trick of a hand that goes on;
    a put_n seat that resigns takes its card of the trick under way back (it stays in ``played``,
    as every seat saw it), so the trick's best cards count only the seats still in (``active``).
    """
    n, hs, D, table, span, mine = _strength_plan(rules)
    B = obs.shape[0]
    if "vira" in span:
        vira = obs[:, span["vira"]]
        pct = table[np.where(vira.any(1), vira.argmax(1) + 1, 0)]
    else:
        pct = np.broadcast_to(table[0], (B, D))
    out = np.zeros((B, hs + hs * n + 2), np.float32)
    # own unplayed cards, strongest first (the hand section is all zero when the seat plays blind)
    own = np.sort(np.where(obs[:, span["hand"]] > 0, -pct, 1.0), axis=1)[:, :hs]
    np.maximum(-own, 0.0, out=out[:, :hs])
    # every card played this hand, [trick, relative seat]: one-hot rows times percentiles (exact:
    # one term of each sum is the percentile, the others are zeros)
    values = (obs[:, span["played"]].reshape(B, hs * n, D) @ pct[:, :, None])[:, :, 0]
    out[:, hs:hs + hs * n] = values
    # the trick in progress (index = tricks finished) and each side's best card in it
    finished = obs[:, span["trick_winner"]].sum(1).round().astype(np.int64)
    current = values.reshape(B, hs, n)[np.arange(B), np.minimum(finished, hs - 1)]
    current[finished >= hs] = 0.0
    current *= obs[:, span["active"]]  # a withdrawn card (put_n resignation) is out of the trick
    out[:, -2] = current[:, mine].max(1)
    out[:, -1] = current[:, ~mine].max(1)
    return out


def envido_features(state, seat: int) -> np.ndarray:
    """The seat's own envido points / 33 and flor (0 or 1), from the cards it holds and those it played."""
    r = state.rules
    own = visible_hand(state, seat, seat)
    cards = [c for c in own if c >= 0] if own is not None else []
    cards += [c for _, s, c in state.played if s == seat]
    out = np.zeros(ENVIDO_FEATURES, np.float32)
    if cards:
        out[0] = envido_points(cards, r.family) / ENVIDO_MAX
        out[1] = float(holds_flor(cards, r.family))
    return out


_ENVIDO_PLANS: dict = {}


def _envido_plan(rules) -> tuple:
    """Per Rules: each deck card's envido pip and suit, and the observation slices of the own cards."""
    plan = _ENVIDO_PLANS.get(rules.key)
    if plan is None:
        enc, fam = encoder_of(rules), rules.family
        pip = np.array([envido_pip(int(fam.rank_of(c))) for c in rules.deck], np.float64)  # float64: as Python divides
        suit = np.array([c % 4 for c in rules.deck])
        plan = _ENVIDO_PLANS[rules.key] = (pip, [suit == s for s in range(4)], enc.piece("hand").slice,
                                           enc.piece("played").slice, rules.hand_size, rules.players, len(rules.deck))
    return plan


def envido_features_batch(rules, obs: np.ndarray) -> np.ndarray:
    """:func:`envido_features` of a batch, read from the observation vectors alone (bit-identical): the own
    cards are the hand section and the own seat's (relative seat 0) entries of every trick in ``played``."""
    pip, suits, hand, played, hs, n, D = _envido_plan(rules)
    B = obs.shape[0]
    mine = obs[:, hand] + obs[:, played].reshape(B, hs, n, D)[:, :, 0].sum(1)  # one-hot of the dealt cards seen
    held = mine > 0
    points = (held * pip).max(1)  # the best single card
    flor = np.zeros(B, bool)
    for in_suit in suits:  # 20 + the two best pips of two cards of one suit
        k = (held & in_suit).sum(1)
        top2 = -np.sort(np.where(held & in_suit, -pip, 0.0), axis=1)[:, :2].sum(1)
        points = np.where(k >= 2, np.maximum(points, 20.0 + top2), points)
        flor |= k >= 3
    out = np.zeros((B, ENVIDO_FEATURES), np.float32)
    out[:, 0] = points / ENVIDO_MAX
    out[:, 1] = flor
    return out


def encode_batch(rules, obs: np.ndarray, features: str, history: np.ndarray | None = None) -> np.ndarray:
    """The network inputs of a batch of observation vectors (the batched engine's): float32, fresh.

    Inputs with the decision history need ``history``, each game's ``history`` section
    (:func:`history_batch`), which the observation vector does not hold."""
    if features == "observation":
        return np.array(obs, np.float32)
    if features == "observation+strength":
        return np.concatenate([obs, strength_features_batch(rules, obs)], axis=1)
    if features == "observation+strength+envido":
        return np.concatenate([obs, strength_features_batch(rules, obs), envido_features_batch(rules, obs)], axis=1)
    if history is None:
        raise ValueError(f"{features!r} features need the decision history: only engine states have it")
    parts = [obs, history] + ([strength_features_batch(rules, obs)] if has_strength(features) else [])
    return np.concatenate(parts, axis=1).astype(np.float32, copy=False)


def history_batch(rules, actors: np.ndarray, actions: np.ndarray, counts: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The info-state ``history`` section of a batch of games: row i from game i's first ``counts[i]``
    decisions of the hand (``actors[i, k]`` the absolute seat, ``actions[i, k]`` the action id) as
    ``seats[i]`` sees them. Equal to the engine's where every decision is public (no signals, no
    put passes): then the seat sees each action, and each entry is its actor and action one-hot."""
    enc = encoder_of(rules)
    (H, W), n = enc.piece("history").shape, rules.players
    B = len(seats)
    out = np.zeros((B, H * W), np.float32)
    k = np.arange(H)
    used = k[None, :] < np.minimum(counts, H)[:, None]
    rows, cols = np.nonzero(used)
    base = cols * W
    out[rows, base + (actors[rows, cols] - seats[rows]) % n] = 1.0
    out[rows, base + n + actions[rows, cols]] = 1.0
    return out


def encode_state(state, seat: int, features: str) -> np.ndarray:
    """The network input of ``seat`` at ``state`` (float32)."""
    enc = encoder_of(state.rules)
    x = enc.encode(state, seat, info_state=features in HISTORY_FEATURES)
    if has_envido(features):
        return np.concatenate([x, strength_features(state, seat), envido_features(state, seat)])
    if has_strength(features):
        return np.concatenate([x, strength_features(state, seat)])
    return x


def encode_observation(observation, features: str) -> np.ndarray:
    """The network input from an agent's observation dict (:class:`truc_env.game.observe.SeatObservation`)."""
    if features == "observation":
        return np.asarray(observation["observation"], dtype=np.float32)
    # other inputs are encoded from the seat's information by truc_env's encoders
    if not hasattr(observation, "apply"):
        raise ValueError(f"this PPO policy reads {features!r} features: give it a truc_env.game.observe.SeatObservation")
    return observation.apply(lambda state, seat: encode_state(state, seat, features))
