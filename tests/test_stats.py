"""Tournament statistics checked on synthetic data with known answers."""

import math

import numpy as np

from train.eval.stats import ELO, bradley_terry, mean_ci, t_quantile_975, wilson


def test_t_quantile_matches_tables():
    for df, q in [(3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042), (100, 1.984)]:
        assert abs(t_quantile_975(df) - q) < 2e-3


def test_mean_ci_covers_the_true_mean_about_95_percent():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        ci = mean_ci(rng.normal(1.5, 2.0, 20))
        hits += ci["lo"] <= 1.5 <= ci["hi"]
    assert 0.93 < hits / 2000 < 0.97


def test_wilson_interval_coverage_and_edges():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(2000):
        w = rng.binomial(50, 0.8)
        ci = wilson(w, 50)
        hits += ci["lo"] <= 0.8 <= ci["hi"]
    assert 0.92 < hits / 2000 < 0.98
    sweep = wilson(20, 20)
    assert sweep["rate"] == 1.0 and sweep["hi"] <= 1.0 + 1e-12 and sweep["lo"] > 0.8


def test_bradley_terry_recovers_known_win_rates():
    # three players with true strengths 0, 1, 2 (log-odds): A beats B with p = sigmoid(rA - rB)
    rng = np.random.default_rng(2)
    true = np.array([0.0, 1.0, 2.0])
    games = []
    for _ in range(6000):
        i, j = rng.choice(3, 2, replace=False)
        p = 1 / (1 + math.exp(-(true[i] - true[j])))
        games.append(({int(i): 1.0}, {int(j): 1.0}, float(rng.random() < p)))
    r, cov = bradley_terry(3, games, prior_sd=100.0)
    assert np.allclose(r - r.mean(), true - true.mean(), atol=0.1)
    se = np.sqrt(np.diag(cov))
    assert np.all(se < 0.06) and np.all(se > 0.01)


def test_two_agents_of_known_win_rate_give_the_elo_gap():
    games = [({0: 1.0}, {1: 1.0}, 1.0)] * 750 + [({0: 1.0}, {1: 1.0}, 0.0)] * 250
    r, _ = bradley_terry(2, games, prior_sd=100.0)
    assert abs((r[0] - r[1]) * ELO - 400 * math.log10(3)) < 1.0  # p = 0.75 -> 190.8 Elo


def test_mixed_teams_rate_the_members():
    # team strength = mean of members: A+A beats B+B as often as A alone would beat B
    rng = np.random.default_rng(3)
    true = {0: 1.0, 1: 0.0, 2: -1.0}
    teams = [{0: 1.0}, {1: 1.0}, {2: 1.0}, {0: 0.5, 2: 0.5}]
    games = []
    for _ in range(8000):
        a, b = rng.choice(len(teams), 2, replace=False)
        sa = sum(w * true[m] for m, w in teams[a].items())
        sb = sum(w * true[m] for m, w in teams[b].items())
        games.append((teams[a], teams[b], float(rng.random() < 1 / (1 + math.exp(-(sa - sb))))))
    r, _ = bradley_terry(3, games, prior_sd=100.0)
    assert np.allclose(r, [1.0, 0.0, -1.0], atol=0.12)
