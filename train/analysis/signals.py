"""Partner-signalling analysis: does a team's signal channel carry information, is it listened to, and
what is it worth? ``truc analyze signals --variant V --team SPEC [--team SPEC ...] [--against SPEC]``.

The team plays hands against ``--against`` on duplicate deals (each deal once with the team on each
side, same cards, same dealer; deals fixed by seed as in :mod:`train.eval.match`). Measured, for the
signals of the team's seats (see docs/signals.md for the definitions and their caveats):

- **positive signalling**: I(signal; hand feature) for ``top`` (holds one of the four strongest cards
  of this hand: Paulista's manilhas, Le Truc's sevens) and ``strength`` (a class of the hand held at
  the signal, :data:`HAND_CLASSES`); Miller–Madow corrected, bootstrap CI, permutation null
  (:mod:`train.analysis.info_theory`);
- **positive listening**: I(signal; the receiver's next action), the action abstracted to its class
  (``play high|mid|low``, ``raise``, ``accept``, ``instruct high``...), at the partner's first
  decision after the signal that is not itself a signal;
- **causal influence**: at that same decision, the receiver's policy is re-queried on clones of the
  state whose signal token is replaced, in turn, by every token of the channel (a uniformly random
  replacement, averaged exactly); reported as the mean KL(actual || replaced) in bits (both
  distributions smoothed with ``eps`` of uniform over the legal actions, so that deterministic
  policies give finite values) and the mean total variation (how often the action would change);
  policies come from ``action_probs``/``probabilities`` when the agent has one, else from
  ``samples`` seeded draws of a copy of the agent (the same seeds for every token);
- **channel-ablation gap**: the team's points per hand with the channel, muted (the team's signals
  forced to ``none``) and shuffled between hands (each team signal replaced by one drawn from the
  team's own signals of the other condition's hands, kept legal), with paired per-deal CIs;
- **interception sweep**: points per hand as ``intercept`` goes from 0 to 1;
- **cross-play** (two teams or more): team i's first seat with team j's partner, against the same
  opponents; self-play (i = j) vs cross-play (i != j), the XP/SP ratio and the XP - SP gap;
- **the convention**: counts of signal x hand class, as a table and a heat map.
"""

from __future__ import annotations

import copy
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from agents import make_agent, spec_kind
from agents.players.heuristic import HAND_WEIGHTS
from train.analysis.info_theory import kl_divergence, mi_report, smooth, total_variation
from train.analysis.signals_controls import check_twin, check_twins, fmt_ci, pool_teams, pooled_text
from train.eval.stats import mean_ci
from truc_env.errors import TrucError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State
from truc_env.game.episode import Dealer, Episode
from truc_env.game.observe import SeatObservation
from truc_env.game.rules import make_rules
from truc_env.game.view import strength_percentile
from truc_env.io.atomic import atomic_write_text

HAND_CLASSES = ("weak", "fair", "good", "strong")
# channel: as the agents choose; muted: the team's signals forced to none; shuffled: each team signal sent
# as chosen but read by the partner as a token drawn from the team's own tokens (the marginal kept, the
# information destroyed, in truthful modes too); redrawn: the sender's signal itself replaced by a drawn
# token it may legally send (in truthful modes the re-draw still names a card it holds)
CONDITIONS = ("channel", "muted", "shuffled", "redrawn")
_WEIGHTS = HAND_WEIGHTS  # the heuristic agents' own weights: best card counts most


# ---------------------------------------------------------------------------------------------- features
def hand_strength(state: State, seat: int) -> float:
    """A hand's strength in [0, 1]: weighted percentiles of the cards held, best first."""
    own = sorted((strength_percentile(state, c) for c in state.held(seat)), reverse=True)
    if not own:
        return 0.0
    w = _WEIGHTS[: len(own)]
    return sum(a * b for a, b in zip(w, own)) / sum(w)


def top_threshold(state: State, k: int = 4) -> int:
    """The strength of the k-th strongest card of this hand's deck (manilhas follow the vira)."""
    return sorted((state.strength[c] for c in state.rules.deck), reverse=True)[k - 1]


def hand_features(state: State, seat: int) -> dict:
    """The features a signal may describe: ``top`` (holds a top-4 card), ``strength`` (class)."""
    s = hand_strength(state, seat)
    thr = top_threshold(state)
    return {"top": int(any(state.strength[c] >= thr for c in state.held(seat))),
            "strength": HAND_CLASSES[min(3, int(s * 4))], "score": s}


def action_class(state: State, seat: int, action: int) -> str:
    """An action abstracted from the cards: ``play high|mid|low|only``, else its name without a card."""
    name = state.L.to_string(action)
    if name.startswith("play slot"):
        return "play slot"
    if name.startswith("play "):
        plays = sorted(state.strength[state.rules.family.parse(state.L.to_string(a).split()[1])]
                       for a in state.legal_actions() if state.L.to_string(a).startswith("play "))
        mine = state.strength[state.rules.family.parse(name.split()[1])]
        if len(plays) == 1:
            return "play only"
        return "play high" if mine == plays[-1] else "play low" if mine == plays[0] else "play mid"
    if name.startswith(("give ", "discard ")):
        return name.split()[0]
    return name


# ---------------------------------------------------------------------------------------------- policies
def policy_distribution(agent, observation, mask, samples: int = 8, seed: int = 0) -> np.ndarray:
    """The agent's action distribution at this decision (over all action ids).

    Exact when the agent has ``action_probs(observation, mask)`` or ``probabilities(...)`` (PPO);
    otherwise estimated from ``samples`` decisions of a copy of the agent reset with seeds
    ``seed, seed+1, ...`` (common random numbers: the same seeds for every counterfactual).
    """
    for name in ("action_probs", "probabilities"):
        fn = getattr(agent, name, None)
        if fn is not None:
            return np.asarray(fn(observation, mask), dtype=float)
    p = np.zeros(len(mask))
    probe = copy.deepcopy(agent)
    for i in range(samples):
        if hasattr(probe, "reset"):
            probe.reset(seed + i)
        p[int(probe.act(observation, np.array(mask)))] += 1.0
    return p / samples


def with_signal(state: State, index: int, token: int, history_index: int | None = None) -> State:
    """A clone of the state whose signal ``index`` carries ``token`` (an index into the layout's tokens).

    ``history_index``: the signal's entry in ``state.history``, rewritten too, for the encoders that
    read the history (info-state strings and features) rather than ``state.signals``."""
    s = state.clone()
    s.signals[index][1] = token
    if history_index is not None:
        actor, _, aux = s.history[history_index]
        s.history[history_index] = (actor, s.L.signal + token, aux)
    return s


def causal_influence(agent, state: State, seat: int, index: int, samples: int = 8, eps: float = 0.01,
                     seed: int = 0, history_index: int | None = None) -> dict:
    """How much the receiver's next decision depends on signal ``index``: mean KL and TV over the
    replacement of the signal's token by each token of the channel in turn (a uniformly random one)."""
    mask = np.zeros(state.L.size, dtype=np.int8)
    legal = state.legal_actions()
    mask[legal] = 1
    base = policy_distribution(agent, SeatObservation(state, seat, mask.copy()), mask, samples, seed)
    p = base[legal]
    kls, tvs = [], []
    for token in range(len(state.L.signal_tokens)):
        s = with_signal(state, index, token, history_index)
        q = policy_distribution(agent, SeatObservation(s, seat, mask.copy()), mask, samples, seed)[legal]
        kls.append(kl_divergence(p, q, eps))
        tvs.append(total_variation(p, q))
    return {"kl": float(np.mean(kls)), "tv": float(np.mean(tvs)), "n_legal": len(legal),
            "entropy": float(-np.sum(smooth(p, eps) * np.log2(smooth(p, eps))))}


# ---------------------------------------------------------------------------------------------- playing
class Mirrored:
    """An agent speaking a relabelled language (free mode): it sends token ``v-1-t`` where the inner
    agent would send ``t``, and reads its side's tokens back the same way. A team of two mirrored
    agents plays exactly as the inner agents do; a mirrored agent partnered with a plain one does
    not understand its partner: a convention mismatch with everything else equal, for cross-play.
    Spec: ``mirror:<spec>``."""

    def __init__(self, inner, rules):
        if rules.signals.mode != "free":
            raise TrucError("mirror:<spec> relabels free cheap talk; these rules have signals mode "
                            f"{rules.signals.mode!r}")
        self.inner, self.name = inner, f"mirror:{getattr(inner, 'name', 'agent')}"
        v = rules.signals.vocab
        self.flip = [0] + [v + 1 - i for i in range(1, v + 1)]  # token index 0 is "none"; i <-> v + 1 - i

    def reset(self, seed=None):
        if hasattr(self.inner, "reset"):
            self.inner.reset(seed)

    def _translated(self, observation, mask):
        if not hasattr(observation, "apply"):
            raise TrucError("mirror:<spec> needs a truc_env.game.observe.SeatObservation")
        state, seat = observation.apply(lambda st, seat: (st, seat))
        s = state.clone()
        for entry in s.signals:
            if state.rules.side(entry[0]) == state.rules.side(seat):
                entry[1] = self.flip[entry[1]]
        return SeatObservation(s, seat, np.array(mask))

    def act(self, observation, mask) -> int:
        a = int(self.inner.act(self._translated(observation, mask), mask))
        L = layout_of(observation["rules"])
        if L.signal >= 0 and L.signal <= a < L.signal + len(L.signal_tokens):
            return L.signal + self.flip[a - L.signal]
        return a


def signal_agent(spec: str, rules, seed: int | None = None):
    """:func:`agents.make_agent`, plus ``mirror:<spec>`` (:class:`Mirrored`) and ``deaf:<spec>``
    (:class:`agents.players.partner_info.DeafAgent`, a listener that ignores its partner's signals)."""
    if spec.startswith("mirror:"):
        return Mirrored(signal_agent(spec[len("mirror:"):], rules, seed), rules)
    if spec.startswith("deaf:"):
        from agents.players.partner_info import DeafAgent

        return DeafAgent(signal_agent(spec[len("deaf:"):], rules, seed), rules)
    return make_agent(spec, rules, seed)


def mirror_match(team: str, against: str) -> bool:
    """Does the team play its own copy? Then, on duplicate deals, its points and every interception
    sweep point are 0 by construction (each seating is the other's mirror image, and interception is
    symmetric). A fully mirrored team (``mirror:X`` at both seats) plays exactly as ``X``."""
    a, b = team_members(team)
    if a.startswith("mirror:") and b.startswith("mirror:"):
        a, b = a[len("mirror:"):], b[len("mirror:"):]
    return a == b == against


ZERO_BY_CONSTRUCTION = ("mirror match: the team plays against itself ({against}), so its points and the "
                        "interception sweep are 0 by construction and were not measured; pass --against "
                        "random (or another spec) to measure them")


def team_members(spec: str) -> tuple[str, str]:
    """``A`` (both seats) or ``A+B`` (A at the side's first seat, B at its partner)."""
    parts = spec.split("+")
    if len(parts) == 1:
        return parts[0], parts[0]
    if len(parts) != 2 or not all(parts):
        raise TrucError(f"team {spec!r}: a team is 'SPEC' or 'SPEC+SPEC'")
    return parts[0], parts[1]


@dataclass
class HandsResult:
    points: np.ndarray  # per deal: the team's mean zero-sum points per hand over the two seatings
    events: list = field(default_factory=list)  # one dict per team signal
    tokens: list = field(default_factory=list)  # token indices the team sent (the shuffle bank)


def play_hands(rules, team: str, against: str, deals: int, seed: int = 0, condition: str = "channel",
               bank: list | None = None, influence: int = 0, samples: int = 8, eps: float = 0.01,
               agent_rules=None, factory=None, against_rules=None) -> HandsResult:
    """Play ``deals`` duplicate deals (one hand each, both seatings) of ``team`` against ``against``.

    ``condition``: ``channel`` (as the agents choose), ``muted`` (team signals forced to ``none``),
    ``shuffled`` (each team signal sent as chosen, but its partner reads a token drawn from ``bank``:
    the team's own tokens, so the marginal is kept and the information destroyed), ``redrawn`` (the
    sender's signal replaced by a legal token drawn from ``bank``). ``influence``: how many receiver decisions get
    the counterfactual re-query (0: none). ``agent_rules``: the Rules the agents are built for, when
    the hands are played under others (the interception sweep). ``against_rules``: the Rules the
    opponents are built for, when not those (an eavesdropper trained at another intercept than the
    team, :func:`leak`). ``factory(spec, rules, seed)`` builds the agents (default
    :func:`signal_agent`; tests pass synthetic agents this way).
    """
    if condition not in CONDITIONS:
        raise TrucError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if condition in ("shuffled", "redrawn") and not bank:
        raise TrucError(f"the {condition} condition needs a bank of signals (the team's signals with the channel)")
    n, L = rules.players, layout_of(rules)
    if not rules.partnership:
        raise TrucError(f"{rules.variant}: signals exist only in partnership games")
    a_spec, b_spec = team_members(team)
    build = agent_rules or rules
    build_against = against_rules or build
    factory = factory or signal_agent
    seatings = []
    for side in (0, 1):
        seats = [s for s in range(n) if rules.side(s) == side]
        agents = {}
        for s in range(n):
            if s in seats:
                agents[s] = factory(a_spec if s == seats[0] else b_spec, build, seed=seed + s)
            else:
                agents[s] = factory(against, build_against, seed=seed + s)
        seatings.append((seats, agents))
    points = np.zeros(deals)
    events: list[dict] = []
    sent: list[int] = []
    measured = 0
    for d in range(deals):
        deal_seed = seed * 1_000_003 + d
        total = 0.0
        for k, (seats, agents) in enumerate(seatings):
            for s, ag in agents.items():
                if hasattr(ag, "reset"):
                    ag.reset(seed * 7919 + d * 31 + s)
            state = State(rules, episode="hand", dealer=d % n)
            hand = Episode(state, Dealer.seeded(rules, deal_seed))
            pending: dict[int, list[dict]] = {}
            draws = np.random.default_rng([seed, d, k, 17])
            misread: list[tuple[int, int, int, int]] = []  # shuffled: (sender, signal, history entry, token read)
            for seat in hand.decisions():
                legal = state.legal_actions()
                mask = hand.mask()
                ours = seat in seats
                phase = state.phase
                if ours and phase == "signal" and condition in ("muted", "redrawn"):
                    if condition == "muted":
                        action = L.signal
                    else:
                        ok = [t for t in bank if L.signal + t in legal]
                        action = L.signal + int(ok[int(draws.integers(len(ok)))]) if ok else L.signal
                elif condition == "shuffled" and ours:
                    view = state
                    for sender, index, entry, token in misread:
                        if sender == state.partner(seat):
                            view = with_signal(view, index, token, entry)
                    action = int(agents[seat].act(SeatObservation(view, seat, mask.copy()), mask.copy()))
                    if phase == "signal":
                        misread.append((seat, len(state.signals), len(state.history), int(bank[int(draws.integers(len(bank)))])))
                else:
                    replying = pending.pop(seat, []) if ours and phase != "signal" else []
                    for ev in replying:
                        if measured < influence:
                            ev.update(causal_influence(agents[seat], state, seat, ev["index"], samples, eps,
                                                       seed=seed * 7919 + d * 31 + seat, history_index=ev["history"]))
                            measured += 1
                    action = int(agents[seat].act(SeatObservation(state, seat, mask.copy()), mask.copy()))
                    for ev in replying:
                        ev["reply"] = action_class(state, seat, action)
                if ours and phase == "signal":
                    token = action - L.signal
                    sent.append(token)
                    feats = hand_features(state, seat)
                    ev = {"deal": d, "seating": k, "sender": seat, "receiver": state.partner(seat),
                          "token": L.signal_tokens[token], "token_index": token, "trick": state.trick_no,
                          "index": len(state.signals), "history": len(state.history), "top": feats["top"], "strength": feats["strength"],
                          "score": feats["score"]}
                    events.append(ev)
                    pending.setdefault(state.partner(seat), []).append(ev)
                hand.play(action)
            total += state.returns()[seats[0]]
        points[d] = total / 2.0
    return HandsResult(points, events, sent)


# ---------------------------------------------------------------------------------------------- analysis
def convention_table(events: list[dict], tokens: tuple, feature: str = "strength") -> dict:
    """Counts of (hand class, token) over the team's signals: the convention as data."""
    classes = list(HAND_CLASSES) if feature == "strength" else [0, 1]
    counts = np.zeros((len(classes), len(tokens)), dtype=int)
    for ev in events:
        counts[classes.index(ev[feature]), tokens.index(ev["token"])] += 1
    return {"feature": feature, "rows": [str(c) for c in classes], "tokens": list(tokens), "counts": counts.tolist()}


def signalling(events: list[dict], seed: int = 0, n_boot: int = 1000) -> dict:
    """Positive signalling and listening, and the causal influence, of a list of signal events."""
    out: dict = {"signals": len(events)}
    if not events:
        return out
    toks = [ev["token"] for ev in events]
    out["token_share"] = {t: toks.count(t) / len(toks) for t in sorted(set(toks))}
    for feat in ("top", "strength"):
        out[f"mi_{feat}"] = mi_report([ev[feat] for ev in events], toks, n_boot=n_boot, seed=seed)
    heard = [ev for ev in events if "reply" in ev]
    if heard:
        out["mi_reply"] = mi_report([ev["token"] for ev in heard], [ev["reply"] for ev in heard], n_boot=n_boot,
                                    seed=seed + 1)
    infl = [ev for ev in events if "kl" in ev]
    if infl:
        out["influence"] = {"decisions": len(infl), "kl": mean_ci([ev["kl"] for ev in infl]),
                            "tv": mean_ci([ev["tv"] for ev in infl]),
                            "changed_share": float(np.mean([ev["tv"] > 1e-9 for ev in infl]))}
    return out


def _diff(a: np.ndarray, b: np.ndarray) -> dict:
    return mean_ci(np.asarray(a) - np.asarray(b))


def analyze_team(rules, team: str, against: str, deals: int, seed: int = 0, sweep=(0.0, 0.25, 0.5, 0.75, 1.0),
                 influence: int = 400, samples: int = 8, eps: float = 0.01, n_boot: int = 1000, factory=None,
                 twin: str | None = None) -> dict:
    """Every single-team metric: signalling, listening, influence, convention, ablation gaps (muted,
    shuffled and, given the team's no-channel ``twin``, channel - twin), sweep."""
    out: dict = {"team": team, "against": against, "deals": deals, "seed": seed}
    mirror = mirror_match(team, against)
    if mirror:
        out["zero_by_construction"] = ZERO_BY_CONSTRUCTION.format(against=against)
    ch = play_hands(rules, team, against, deals, seed, "channel", influence=influence, samples=samples, eps=eps,
                    factory=factory)
    out["points"] = {"channel": mean_ci(ch.points)}
    if rules.signals.mode == "none":
        out["channel"] = False
        out["_points"] = {"channel": ch.points.tolist()}
        return out
    out["channel"] = True
    L = layout_of(rules)
    out.update(signalling(ch.events, seed, n_boot))
    out["convention"] = convention_table(ch.events, L.signal_tokens, "strength")
    out["convention_top"] = convention_table(ch.events, L.signal_tokens, "top")
    mu = play_hands(rules, team, against, deals, seed, "muted", factory=factory)
    sh = play_hands(rules, team, against, deals, seed, "shuffled", bank=ch.tokens or [0], factory=factory)
    out["points"].update({"muted": mean_ci(mu.points), "shuffled": mean_ci(sh.points)})
    out["gap"] = {"channel_minus_muted": _diff(ch.points, mu.points),
                  "channel_minus_shuffled": _diff(ch.points, sh.points)}
    per_deal = {"channel": ch.points.tolist(), "muted": mu.points.tolist(), "shuffled": sh.points.tolist()}
    if twin:
        # the twin plays its own Rules (no channel) on the same deck orders, the opponents built for them
        silent = check_twin(rules, twin)
        tw = play_hands(silent, twin, against, deals, seed, factory=factory).points
        out["twin"] = twin
        out["points"]["twin"] = mean_ci(tw)
        out["gap"]["channel_minus_twin"] = _diff(ch.points, tw)
        per_deal["twin"] = tw.tolist()
    rows = []
    for q in () if mirror else sweep or ():
        swept = with_intercept(rules, q)
        if swept == rules:
            pts = ch.points
        else:
            pts = play_hands(swept, team, against, deals, seed, "channel", agent_rules=rules, factory=factory).points
        # every hand as with private signals: nobody at the table reads what it intercepts
        rows.append({"intercept": float(q), "points": mean_ci(pts), "vs_private": _diff(pts, ch.points),
                     "unchanged": bool(np.array_equal(pts, ch.points))})
    out["sweep"] = rows
    out["_points"] = per_deal
    out["_events"] = ch.events
    return out


def _options_of(rules) -> dict:
    """The options the Rules were built from."""
    return dict(rules.options)


def with_intercept(rules, intercept: float):
    """The same Rules with each opponent seeing each signal with probability ``intercept``."""
    sig = {**rules.signals.as_dict(), "intercept": float(intercept)}
    return make_rules(rules.variant, **{**_options_of(rules), "signals": sig})


# (opponent, intercept) of the leak measurement: the two trained conditions first, then the cross cells
LEAK_CELLS = (("eavesdropper", 1.0), ("twin", 0.0), ("eavesdropper", 0.0), ("twin", 1.0))
# the paired differences reported (minuend cell, subtrahend cell), docs/signals.md "Leaks"
LEAK_DIFFS = {"cost": ("twin@0", "eavesdropper@1"), "reading": ("eavesdropper@0", "eavesdropper@1"),
              "twin_hears": ("twin@0", "twin@1")}
LEAK_NOT_MIRROR = ("the leak is measured against an opponent other than the team: {what} is the team itself "
                   "({team}), a mirror match whose points are 0 at every intercept by construction")


def leak(rules, team: str, eavesdropper: str, twin: str, deals: int, seed: int = 0, team_rules=None,
         eavesdropper_rules=None, twin_rules=None, cross: bool = True, sweep=(), factory=None, log=print) -> dict:
    """What an intercepted convention costs the team: its points against an ``eavesdropper`` (an
    opponent trained seeing the team's signals, intercept 1) and against the eavesdropper's ``twin``
    (trained identically at intercept 0), on the same duplicate deals, paired by deal.

    ``rules``: the game (its intercept is set per cell). ``team_rules`` / ``eavesdropper_rules`` /
    ``twin_rules``: the Rules each was trained for (default: ``rules`` at intercept 0 for the team and
    the twin, 1 for the eavesdropper); each plays under the cell's. Cells (opponent, intercept):
    ``eavesdropper@1`` and ``twin@0`` (as trained), with ``cross`` also ``eavesdropper@0`` and
    ``twin@1``. Reported: the team's points per hand in each cell and the paired differences
    ``cost`` = twin@0 - eavesdropper@1 (what the leak costs the team, opponent training included),
    ``reading`` = eavesdropper@0 - eavesdropper@1 (the same eavesdropper with the signals hidden from it)
    and ``twin_hears`` = twin@0 - twin@1 (interception alone, against an opponent that never learned to
    read it: the symmetry control, since at intercept 1 the team sees the opponent's signals too).
    ``sweep``: intercept values at which the eavesdropper also plays (the leak curve): the cells
    ``eavesdropper@q`` and ``curve``: per intercept the eavesdropper played at, in increasing order, the
    team's points and the cost twin@0 - eavesdropper@q.
    """
    if rules.signals.mode == "none":
        raise TrucError(f"{rules.variant}: these rules have no signal channel (signals mode 'none'), so nothing "
                        "can leak; choose a mode (free, card, senas)")
    for what, spec in (("the eavesdropper", eavesdropper), ("the twin", twin)):
        if mirror_match(team, spec):
            raise TrucError(LEAK_NOT_MIRROR.format(what=what, team=team))
    specs = {"eavesdropper": eavesdropper, "twin": twin}
    built = {"eavesdropper": eavesdropper_rules or with_intercept(rules, 1.0),
             "twin": twin_rules or with_intercept(rules, 0.0)}
    team_rules = team_rules or with_intercept(rules, 0.0)
    per: dict[str, np.ndarray] = {}
    cells = list(LEAK_CELLS[: 4 if cross else 2])
    cells += [("eavesdropper", float(q)) for q in sweep if ("eavesdropper", float(q)) not in cells]
    for who, q in cells:
        key = f"{who}@{q:g}"
        log(f"leak: {team} against {who} {specs[who]} at intercept {q:g} ({deals} duplicate deals)")
        per[key] = play_hands(with_intercept(rules, q), team, specs[who], deals, seed, "channel",
                              agent_rules=team_rules, factory=factory, against_rules=built[who]).points
    out = {"variant": rules.variant, "team": team, "eavesdropper": eavesdropper, "twin": twin, "deals": deals,
           "seed": seed, "points": {k: mean_ci(v) for k, v in per.items()}}
    for name, (a, b) in LEAK_DIFFS.items():
        if a in per and b in per:
            out[name] = _diff(per[a], per[b])
    if sweep:
        out["curve"] = [{"intercept": q, "points": mean_ci(per[f"eavesdropper@{q:g}"]),
                         "cost": _diff(per["twin@0"], per[f"eavesdropper@{q:g}"])} for q in leak_intercepts(per)]
    out["_points"] = {k: v.tolist() for k, v in per.items()}
    return out


def leak_intercepts(cells) -> list[float]:
    """The intercepts at which the eavesdropper played, in increasing order (the leak curve's x axis)."""
    return sorted(float(k.split("@")[1]) for k in cells if k.startswith("eavesdropper@"))


def leak_text(res: dict) -> str:
    """The leak measurement as text: the team's points per cell and the paired differences."""
    lines = [f"{res['variant']}: team {res['team']}, {res['deals']} duplicate deals (seed {res['seed']}); "
             f"eavesdropper {res['eavesdropper']}, twin {res['twin']}"]
    for key, c in res["points"].items():
        lines.append(f"  team points per hand vs {key:16s} {fmt_ci(c)}")
    for name, (a, b) in LEAK_DIFFS.items():
        if name in res:
            lines.append(f"  {name} = {a} - {b}: {fmt_ci(res[name])}")
    for row in res.get("curve", []):
        lines.append(f"  curve: intercept {row['intercept']:.2f}: cost = twin@0 - eavesdropper@{row['intercept']:g} "
                     f"{fmt_ci(row['cost'])}")
    return "\n".join(lines)


def cross_play(rules, teams: list[str], against: str, deals: int, seed: int = 0, factory=None) -> dict:
    """Team i's first seat with team j's partner seat, for every (i, j): self-play vs cross-play."""
    k = len(teams)
    first = [team_members(t)[0] for t in teams]
    per = [[play_hands(rules, f"{first[i]}+{first[j]}", against, deals, seed, factory=factory).points
            for j in range(k)]
           for i in range(k)]
    matrix = [[mean_ci(per[i][j]) for j in range(k)] for i in range(k)]
    sp_d = np.mean([per[i][i] for i in range(k)], axis=0)
    xp_d = np.mean([per[i][j] for i in range(k) for j in range(k) if i != j], axis=0)
    sp, xp = float(sp_d.mean()), float(xp_d.mean())
    return {"teams": teams, "matrix": matrix, "self_play": mean_ci(sp_d), "cross_play": mean_ci(xp_d),
            "xp_minus_sp": mean_ci(xp_d - sp_d), "xp_sp_ratio": xp / sp if sp > 0 else None}


def analyze(variant: str, options: dict | None, teams: list[str], against: str = "heuristic:honest",
            deals: int = 300, seed: int = 0, sweep=(0.0, 0.25, 0.5, 0.75, 1.0), influence: int = 400,
            samples: int = 8, eps: float = 0.01, crossplay: bool = True, out: str | None = None,
            img_prefix: str | None = None, log=print, factory=None, twins=(), pool: bool = False) -> dict:
    """Analyse each team, cross-play them, and write ``summary.json``, ``report.md`` and PNGs to ``out``.

    ``twins``: one no-channel twin per team (channel - twin beside channel - muted and - shuffled).
    ``pool``: the teams are independent runs of one procedure: each gap pooled over them, the runs as
    the units (at least 2)."""
    rules = make_rules(variant, **(options or {}))
    if not rules.partnership:
        raise TrucError(f"{variant}: signals exist only in partnership games; choose a 2 vs 2 variant")
    check_twins(rules, list(teams), list(twins))  # before any hand is played
    if pool and len(teams) < 2:
        raise TrucError(f"a pooled figure needs at least 2 seeds (independent runs); got {len(teams)} --team")
    report: dict = {"variant": variant, "options": options or {}, "against": against, "deals": deals, "seed": seed,
                    "signal_mode": rules.signals.mode, "controls": 2, "teams": []}  # signals_runs.CONTROLS
    for i, t in enumerate(teams):
        log(f"analysing {t} ({deals} duplicate deals against {against})")
        report["teams"].append(analyze_team(rules, t, against, deals, seed, sweep, influence, samples, eps,
                                            factory=factory, twin=twins[i] if twins else None))
    if pool:
        report["pooled"] = pool_teams(report["teams"])
    if crossplay and len(teams) > 1:
        log(f"cross-play among {len(teams)} teams")
        report["cross_play"] = cross_play(rules, teams, against, deals, seed, factory=factory)
    if out:
        write_outputs(report, out, img_prefix)
    return report


# ---------------------------------------------------------------------------------------------- output
def _fmt_mi(m: dict | None) -> str:
    if not m or not math.isfinite(m.get("mi", float("nan"))):
        return "n/a"
    return (f"{m['mi']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}] of H={m['h_x']:.3f} "
            f"(null q95 {m['null_q95']:.3f}, p={m['p_value']:.3f}, n={m['n']})")


def summary_text(report: dict) -> str:
    """A plain-text summary of an analysis (what the CLI prints)."""
    lines = [f"{report['variant']} {json.dumps(report['options'])}: signals {report['signal_mode']}, "
             f"against {report['against']}, {report['deals']} duplicate deals"]
    for t in report["teams"]:
        lines.append(f"\nteam {t['team']}: points per hand {fmt_ci(t['points']['channel'])}")
        if t.get("zero_by_construction"):
            lines.append(f"  NOTE: {t['zero_by_construction']}")
        if not t.get("channel"):
            continue
        lines.append(f"  signals sent: {t['signals']}, token shares: "
                     + ", ".join(f"{k}:{v:.2f}" for k, v in t.get("token_share", {}).items()))
        lines.append(f"  I(signal; top card)   = {_fmt_mi(t.get('mi_top'))}")
        lines.append(f"  I(signal; hand class) = {_fmt_mi(t.get('mi_strength'))}")
        lines.append(f"  I(signal; reply)      = {_fmt_mi(t.get('mi_reply'))}")
        inf = t.get("influence")
        if inf:
            lines.append(f"  causal influence: KL {fmt_ci(inf['kl'], 4)} bits, TV {fmt_ci(inf['tv'], 4)}, "
                         f"action changed in {inf['changed_share']:.1%} of {inf['decisions']} decisions")
        p, g = t["points"], t["gap"]
        lines.append(f"  points: channel {fmt_ci(p['channel'])}, muted {fmt_ci(p['muted'])}, "
                     f"shuffled {fmt_ci(p['shuffled'])}"
                     + (f", no-channel twin {fmt_ci(p['twin'])} ({t['twin']})" if "twin" in p else ""))
        lines.append(f"  gap: channel-shuffled {fmt_ci(g['channel_minus_shuffled'])} (information), "
                     + (f"channel-twin {fmt_ci(g['channel_minus_twin'])} (training with the channel), "
                        if "channel_minus_twin" in g else "")
                     + f"channel-muted {fmt_ci(g['channel_minus_muted'])}")
        lines += sweep_lines(t.get("sweep", []))
    if report.get("pooled"):
        lines.append(pooled_text(report["pooled"]))
    xp = report.get("cross_play")
    if xp:
        lines.append(f"\ncross-play: SP {fmt_ci(xp['self_play'])}, XP {fmt_ci(xp['cross_play'])}, "
                     f"XP-SP {fmt_ci(xp['xp_minus_sp'])}, XP/SP "
                     + (f"{xp['xp_sp_ratio']:.2f}" if xp["xp_sp_ratio"] is not None else "n/a (SP <= 0)"))
    return "\n".join(lines)


def sweep_lines(rows: list[dict]) -> list[str]:
    """The interception sweep as text. Where every hand at every intercept is played as with private
    signals, no opponent reads what it intercepts: one line says so instead of a column of zeros."""
    swept = [r for r in rows if r["intercept"] > 0]
    if not swept:
        return []
    if all(r.get("unchanged") for r in swept):
        at = ", ".join(f"{r['intercept']:g}" for r in rows)
        return [f"  interception sweep ({at}): every hand played exactly "
                "as with private signals: no eavesdropper reads the channel here (the opponents ignore what they "
                "intercept), so a leak is not measured; train one: --eavesdropper (docs/signals.md 'Leaks')"]
    def note(r):
        if r["intercept"] == 0:
            return "(private signals)"
        if r.get("unchanged"):
            return "(every hand as with private signals: nobody reads the channel at this intercept)"
        return f"(minus private signals {fmt_ci(r['vs_private'])})"

    return [f"  intercept {r['intercept']:.2f}: {fmt_ci(r['points'])} {note(r)}" for r in rows]


def report_markdown(report: dict, images: dict) -> str:
    """The analysis as a Markdown report (tables and the PNGs written next to it)."""
    md = [f"# Signal analysis: {report['variant']}", "", "```", summary_text(report), "```", ""]
    for t in report["teams"]:
        if not t.get("channel"):
            continue
        conv = t["convention"]
        md += [f"## Convention of {t['team']} (signals per hand class)", "",
               "| class | " + " | ".join(conv["tokens"]) + " |", "|---|" + "---|" * len(conv["tokens"])]
        for name, row in zip(conv["rows"], conv["counts"]):
            md.append(f"| {name} | " + " | ".join(str(c) for c in row) + " |")
        md.append("")
    for title, path in images.items():
        md += [f"![{title}]({os.path.basename(path)})", ""]
    return "\n".join(md)


def write_outputs(report: dict, out: str, img_prefix: str | None = None) -> dict:
    """summary.json, report.md and the PNGs; returns {title: png path}. PNGs are also copied under
    ``img_prefix`` (e.g. ``docs/results/img/signals_paulista``) when given."""
    os.makedirs(out, exist_ok=True)
    images = plots(report, out)
    if img_prefix:
        import shutil

        os.makedirs(os.path.dirname(img_prefix) or ".", exist_ok=True)
        for path in images.values():
            shutil.copyfile(path, f"{img_prefix}_{os.path.basename(path)}")
    clean = json.loads(json.dumps(report, default=float))
    for t in clean["teams"]:
        t.pop("_events", None)
    atomic_write_text(os.path.join(out, "summary.json"), json.dumps(clean, indent=1))
    atomic_write_text(os.path.join(out, "report.md"), report_markdown(report, images))
    return images


def plots(report: dict, out: str) -> dict:
    """convention.png (heat map), ablation.png, sweep.png, crossplay.png, as the data allow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    teams = [t for t in report["teams"] if t.get("channel")]
    if teams:
        fig, axes = plt.subplots(1, len(teams), figsize=(3.2 + 2.6 * len(teams), 3.4), squeeze=False)
        for ax, t in zip(axes[0], teams):
            counts = np.array(t["convention"]["counts"], dtype=float)
            rows = counts.sum(axis=1, keepdims=True)
            share = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
            ax.imshow(share, cmap="viridis", vmin=0, vmax=1, aspect="auto")
            ax.set_xticks(range(len(t["convention"]["tokens"])), t["convention"]["tokens"], fontsize=7)
            ax.set_yticks(range(len(t["convention"]["rows"])),
                          [f"{r} ({int(n)})" for r, n in zip(t["convention"]["rows"], rows[:, 0])], fontsize=7)
            for i in range(share.shape[0]):
                for j in range(share.shape[1]):
                    if share[i, j] >= 0.05:
                        ax.text(j, i, f"{share[i, j]:.2f}", ha="center", va="center", fontsize=6,
                                color="black" if share[i, j] > 0.6 else "white")
            mi = t.get("mi_strength", {}).get("mi", float("nan"))
            ax.set_title(f"{_short(t['team'])}\nI={mi:.2f} bits", fontsize=8)
            ax.set_xlabel("signal")
        fig.suptitle(f"{report['variant']}: P(signal | hand class)", fontsize=9)
        images["convention"] = save_figure(fig, os.path.join(out, "convention.png"))
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(1.5 + 1.6 * len(teams), 3.2))
        shown = [c for c in ("channel", "muted", "shuffled", "twin") if all(c in t["points"] for t in teams)]
        for k, cond in enumerate(shown):
            xs = np.arange(len(teams)) + (k - (len(shown) - 1) / 2) * 0.8 / len(shown)
            ys = [t["points"][cond]["mean"] for t in teams]
            err = [[t["points"][cond]["mean"] - t["points"][cond]["lo"] for t in teams],
                   [t["points"][cond]["hi"] - t["points"][cond]["mean"] for t in teams]]
            ax.bar(xs, ys, 0.8 / len(shown), yerr=err, label=cond, capsize=2)
        ax.set_xticks(range(len(teams)), [_short(t["team"]) for t in teams], fontsize=7)
        ax.axhline(0, color="grey", lw=0.7)
        ax.set_ylabel(f"points per hand vs {_short(report['against'])}")
        ax.legend(fontsize=7)
        ax.set_title(f"{report['variant']}: channel ablation (95% CI)", fontsize=9)
        images["ablation"] = save_figure(fig, os.path.join(out, "ablation.png"))
        plt.close(fig)

        if any(t.get("sweep") for t in teams):
            fig, ax = plt.subplots(figsize=(4.6, 3.2))
            for t in teams:
                xs = [r["intercept"] for r in t["sweep"]]
                ys = np.array([r["points"]["mean"] for r in t["sweep"]])
                lo = np.array([r["points"]["lo"] for r in t["sweep"]])
                hi = np.array([r["points"]["hi"] for r in t["sweep"]])
                ax.plot(xs, ys, marker="o", label=_short(t["team"]))
                ax.fill_between(xs, lo, hi, alpha=0.15)
            ax.set_xlabel("intercept (probability an opponent sees a signal)")
            ax.set_ylabel("points per hand")
            ax.legend(fontsize=7)
            ax.set_title(f"{report['variant']}: interception sweep (95% CI)", fontsize=9)
            images["sweep"] = save_figure(fig, os.path.join(out, "sweep.png"))
            plt.close(fig)
    if report.get("cross_play"):
        images["cross-play"] = plot_cross_play(report["cross_play"], os.path.join(out, "crossplay.png"))
    return images


def plot_cross_play(xp: dict, path: str, title: str = "cross-play") -> str:
    """The cross-play matrix of :func:`cross_play` as a heat map (points per hand), written to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = np.array([[c["mean"] for c in row] for row in xp["matrix"]])
    fig, ax = plt.subplots(figsize=(1.8 + 1.1 * len(m), 1.4 + 1.0 * len(m)))
    lim = max(1e-9, float(np.abs(m).max()))
    ax.imshow(m, cmap="RdBu", vmin=-lim, vmax=lim)
    names = [_short(t) for t in xp["teams"]]
    ax.set_xticks(range(len(m)), names, fontsize=7, rotation=30)
    ax.set_yticks(range(len(m)), names, fontsize=7)
    ax.set_xlabel("partner (seat +2)")
    ax.set_ylabel("first seat")
    for i in range(len(m)):
        for j in range(len(m)):
            ax.text(j, i, f"{m[i, j]:+.2f}", ha="center", va="center", fontsize=7)
    ratio = f"{xp['xp_sp_ratio']:.2f}" if xp["xp_sp_ratio"] is not None else "n/a"
    d = xp["xp_minus_sp"]
    ax.set_title(f"{title}, points/hand\nXP/SP {ratio}; XP - SP {d['mean']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}]",
                 fontsize=9)
    out = save_figure(fig, path)
    plt.close(fig)
    return out


def _short(spec: str) -> str:
    if spec_kind(spec) == "net":
        return os.path.basename(os.path.dirname(spec)) or spec
    return spec.replace("heuristic:", "h:")


def save_figure(fig, path: str) -> str:
    """Write a matplotlib figure as a PNG atomically; returns the path."""
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    return path
