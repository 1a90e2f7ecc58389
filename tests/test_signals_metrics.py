"""The signalling metrics on synthetic agents whose behaviour is known (issue 8).

Synthetic players on Truco Paulista 2 vs 2 with free cheap talk (vocab 2, so tokens none/0/1):
- ``truthful``: signals 1 when holding a manilha (a top-4 card), else 0;
- ``random``: signals 0 or 1 at random, whatever the hand;
- ``follow``: at its first card decision takes ``legal[token index % legal]``, the token being its
  partner's signal; ``ignore``: the lowest legal play. Nobody else ever raises.
"""

import math

import numpy as np
import pytest

from agents import make_agent
from agents.base import legal_ids
from train.analysis.info_theory import entropy, kl_divergence, mi_report, mutual_information, total_variation
from train.analysis.signals import analyze, cross_play, play_hands, signalling
from truc_env.game.actions import layout_of
from truc_env.game.rules import make_rules

RULES = make_rules("truco_paulista", signals={"mode": "free", "vocab": 2})
EPS = 0.01


class Synthetic:
    def __init__(self, signal: str, listen: str, seed: int | None = None, probs: bool = False):
        self.signal, self.listen, self.seed = signal, listen, seed
        self.rng = np.random.default_rng(seed)
        self.name = f"syn:{signal},{listen}"
        if probs:  # exposes its (uniform) policy instead of being sampled
            self.action_probs = lambda obs, mask: np.asarray(mask, float) / np.sum(mask)

    def reset(self, seed=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation, mask):
        L = layout_of(observation["rules"])
        legal = list(legal_ids(mask))
        view = observation["view"]
        names = {L.to_string(int(a)): int(a) for a in legal}
        if view["phase"] == "signal":
            if self.signal == "truthful":
                deck = sorted(s for s in view["strength"] if s >= 0)
                top = any(view["strength"][c] >= deck[-4] for c in view["own"])
                return names["signal 1" if top else "signal 0"]
            return names[f"signal {int(self.rng.integers(2))}"]
        plays = [a for n, a in names.items() if n.startswith("play ")]
        if self.listen == "uniform" and plays:
            return int(legal[int(self.rng.integers(len(legal)))])
        if self.listen == "follow" and view["trick_no"] == 0 and len(view["own"]) == 3 and view["phase"] == "turn":
            said = [s["token"] for s in view["signals"] if s["sender"] == 2]
            idx = L.signal_tokens.index(said[-1]) if said else 0
            return int(legal[idx % len(legal)])
        return min(plays) if plays else int(legal[0])


def factory(spec, rules, seed=None):
    if spec.startswith("syn:"):
        signal, listen = spec[4:].split(",")
        return Synthetic(signal, listen, seed, probs=listen == "uniform")
    return make_agent(spec, rules, seed)


AGAINST = "syn:random,ignore"


def p_top() -> float:
    """Probability that 3 cards from the 39 left after the vira hold one of the 4 manilhas."""
    return 1.0 - math.comb(35, 3) / math.comb(39, 3)


def h2(p: float) -> float:
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


# ------------------------------------------------------------------ the estimators on samples
def test_truthful_binary_signal_carries_the_feature_entropy():
    rng = np.random.default_rng(1)
    x = (rng.random(4000) < 0.3).astype(int)
    r = mi_report(x, x * 7 + 1, n_boot=300, n_perm=200)
    assert r["mi"] == pytest.approx(entropy(x), abs=1e-12)
    assert r["lo"] <= h2(0.3) <= r["hi"]
    assert r["p_value"] < 0.01 and r["mi"] > r["null_q95"]


def test_independent_signal_has_mutual_information_near_zero_within_its_interval():
    rng = np.random.default_rng(2)
    x, y = rng.integers(4, size=3000), rng.integers(8, size=3000)
    r = mi_report(x, y, n_boot=300, n_perm=200)
    assert r["lo"] <= 0.0 <= r["hi"]
    assert abs(r["mi"]) < 0.01
    assert r["plugin"] > r["mi"]  # the correction removes the small-sample bias upwards
    assert mutual_information(x, y, miller_madow=False) == pytest.approx(r["plugin"])


def test_kl_and_total_variation():
    p, q = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    assert kl_divergence(p, p, EPS) == 0.0 and total_variation(p, p) == 0.0
    assert total_variation(p, q) == 1.0
    assert kl_divergence(p, q) == math.inf
    assert kl_divergence(p, q, EPS) == pytest.approx((1 - EPS) * math.log2((1 - EPS + EPS / 3) / (EPS / 3)))


# ------------------------------------------------------------------ the metrics on played hands
def test_truthful_signaller_mi_equals_the_feature_entropy():
    res = play_hands(RULES, "syn:truthful,ignore", AGAINST, deals=150, seed=3, factory=factory)
    s = signalling(res.events, n_boot=300)
    m = s["mi_top"]
    assert s["signals"] == 150 * 2 * 2
    assert m["mi"] == pytest.approx(m["h_x"], abs=1e-12)  # the signal is the feature
    assert m["lo"] <= h2(p_top()) <= m["hi"]
    assert m["p_value"] < 0.01


def test_random_signaller_mi_is_near_zero_within_its_interval():
    res = play_hands(RULES, "syn:random,ignore", AGAINST, deals=150, seed=4, factory=factory)
    m = signalling(res.events, n_boot=300)["mi_top"]
    assert m["lo"] <= 0.0 <= m["hi"]
    assert abs(m["mi"]) < 0.02


@pytest.mark.parametrize("listener", ["ignore", "uniform"])
def test_listener_that_ignores_signals_has_zero_causal_influence(listener):
    # "ignore" is deterministic and sampled; "uniform" exposes action_probs
    res = play_hands(RULES, f"syn:truthful,{listener}", AGAINST, deals=40, seed=5, influence=10_000, factory=factory)
    infl = [ev for ev in res.events if "kl" in ev]
    assert len(infl) == 40 * 2 * 2
    assert all(ev["kl"] == 0.0 and ev["tv"] == 0.0 for ev in infl)
    if listener == "ignore":  # nor does muting or shuffling the channel change a single hand
        assert np.array_equal(play_hands(RULES, "syn:truthful,ignore", AGAINST, 40, 5, "muted", factory=factory).points,
                              res.points)


def test_deterministic_follower_has_the_expected_influence():
    res = play_hands(RULES, "syn:truthful,follow", AGAINST, deals=40, seed=6, influence=10_000, factory=factory)
    infl = [ev for ev in res.events if "kl" in ev]
    assert len(infl) == 40 * 2 * 2
    k = len(layout_of(RULES).signal_tokens)  # none, 0, 1: a random replacement changes the action 2 times in 3
    for ev in infl:
        n = ev["n_legal"]
        assert n >= k
        assert ev["tv"] == pytest.approx((k - 1) / k)
        assert ev["kl"] == pytest.approx((k - 1) / k * (1 - EPS) * math.log2((1 - EPS + EPS / n) / (EPS / n)))
    s = signalling(res.events, n_boot=200)
    assert s["influence"]["changed_share"] == 1.0
    assert s["mi_reply"]["mi"] > s["mi_reply"]["null_q95"]  # and the reply carries the signal


def test_ablation_and_cross_play_of_identical_teams():
    out = analyze("truco_paulista", {"signals": {"mode": "free", "vocab": 2}}, ["syn:truthful,follow"] * 2,
                  against=AGAINST, deals=12, seed=7, sweep=(0.0, 1.0), influence=5, log=lambda *a: None,
                  factory=factory)
    team = out["teams"][0]
    assert set(team["points"]) == {"channel", "muted", "shuffled"}
    assert team["sweep"][0]["vs_private"]["mean"] == 0.0
    xp = out["cross_play"]
    assert xp["xp_minus_sp"]["mean"] == pytest.approx(0.0)  # the same convention on both sides


def test_cross_play_pairs_every_first_seat_with_every_partner():
    # a follower partnered with a random signaller plays differently from one with a truthful signaller
    rules = RULES
    out = cross_play(rules, ["syn:truthful,follow", "syn:random,follow"], AGAINST, deals=10, seed=8, factory=factory)
    assert len(out["matrix"]) == 2 and all(len(r) == 2 for r in out["matrix"])
    assert out["self_play"]["n"] == 10


def test_heuristic_team_end_to_end(tmp_path):
    out = analyze("le_truc_4p", {}, ["heuristic:honest"], against="random", deals=6, seed=0, sweep=(0.0, 0.5),
                  influence=10, samples=2, out=str(tmp_path), log=lambda *a: None)
    assert out["teams"][0]["signals"] > 0
    assert (tmp_path / "summary.json").exists() and (tmp_path / "report.md").exists()
    assert (tmp_path / "convention.png").exists() and (tmp_path / "sweep.png").exists()


def test_cli_analyze_signals(tmp_path, capsys):
    from train.commands.cli import main

    main(["analyze", "signals", "--variant", "truco_paulista", "--options", '{"signals": {"mode": "free"}}',
          "--team", "heuristic:honest", "--deals", "4", "--sweep", "0", "--influence", "4", "--out", str(tmp_path)])
    assert "I(signal; hand class)" in capsys.readouterr().out


def test_a_mirrored_team_plays_exactly_like_the_plain_one():
    from train.analysis.signals import signal_agent

    rules = make_rules("truco_paulista", signals={"mode": "free", "vocab": 8})
    plain = play_hands(rules, "heuristic:honest", "heuristic:cautious", 8, 1)
    mirrored = play_hands(rules, "mirror:heuristic:honest", "heuristic:cautious", 8, 1)
    assert np.array_equal(plain.points, mirrored.points)
    assert sorted(mirrored.tokens) == sorted((9 - t) % 9 for t in plain.tokens)  # none stays none
    with pytest.raises(Exception, match="free cheap talk"):
        signal_agent("mirror:random", make_rules("le_truc_4p"))


def test_the_counterfactual_rewrites_the_signal_in_a_clone_only():
    from train.analysis.signals import with_signal
    from truc_env.game.engine import State
    from truc_env.game.episode import Dealer
    from truc_env.game.observe import info_state_string

    state, chance = State(RULES, episode="hand", dealer=0), Dealer.seeded(RULES, 0)
    while state.phase != "signal":
        state.apply_action(chance.outcome(state))
    sender, h, k = state.current_player(), len(state.history), len(state.signals)
    state.apply_action(state.L.signal + 2)
    clone = with_signal(state, k, 1, h)
    assert clone.signals[k][1] == 1 and clone.history[h][1] == state.L.signal + 1
    assert state.signals[k][1] == 2 and state.history[h][1] == state.L.signal + 2
    partner = state.partner(sender)
    assert info_state_string(clone, partner) != info_state_string(state, partner)
