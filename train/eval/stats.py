"""Tournament statistics: confidence intervals, duplicate-deal variance reduction, Bradley–Terry ratings.

Ratings are a Bradley–Terry model fitted by maximum likelihood on every game's result (a win, a
loss, a draw counting half), with a weak Gaussian prior so that a clean sweep still has a finite
rating. The rated players are the entrants as entered: a mixed team (``A+B``) is one entrant with
its own rating, as it played. Game results, not points, decide the ranking, so it can disagree with
the points per hand (an entrant that wins many close games and loses a few heavily); the summary
says where it does. Uncertainty comes from the inverse Hessian at the optimum; two
neighbours in the ranking are *separated* when the 95% interval of their difference excludes zero.
"""

from __future__ import annotations

import math

import numpy as np

from train.eval.match import pairings, seatings

ELO = 400.0 / math.log(10.0)
Z95 = 1.959963984540054


# Student's t 97.5% quantiles for 1..30 degrees of freedom (standard tables)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)


def t_quantile_975(df: int) -> float:
    """Student's t 97.5% quantile: the table up to 30, a Cornish–Fisher expansion beyond (error < 1e-4)."""
    if df <= 0:
        return float("inf")
    if df <= len(_T975):
        return _T975[df - 1]
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2) \
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)


def mean_ci(values) -> dict:
    """Mean with a 95% t interval."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return {"mean": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0, "sd": float("nan")}
    m = float(x.mean())
    if n == 1:
        return {"mean": m, "lo": float("-inf"), "hi": float("inf"), "n": 1, "sd": float("nan")}
    sd = float(x.std(ddof=1))
    half = t_quantile_975(n - 1) * sd / math.sqrt(n)
    return {"mean": m, "lo": m - half, "hi": m + half, "n": n, "sd": sd}


def wilson(wins: float, n: int) -> dict:
    """Win rate with the 95% Wilson score interval."""
    if n == 0:
        return {"rate": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0}
    p = wins / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return {"rate": p, "lo": centre - half, "hi": centre + half, "n": n}


def bradley_terry(n_players: int, games: list[tuple[dict, dict, float]], prior_sd: float = 10.0):
    """Fit ratings r (log-odds units) from games (team_a weights, team_b weights, score of a in [0,1]).

    A team is a dict {player index: weight} whose strength is sum(weight * r). Returns (r, cov),
    with r centred on zero.
    """
    r = np.zeros(n_players)
    rows = []
    for ta, tb, y in games:
        x = np.zeros(n_players)
        for i, w in ta.items():
            x[i] += w
        for i, w in tb.items():
            x[i] -= w
        rows.append((x, y))
    if not rows:
        return r, np.eye(n_players) * prior_sd**2
    X = np.array([x for x, _ in rows])
    Y = np.array([y for _, y in rows])
    lam = 1.0 / prior_sd**2
    H = np.eye(n_players)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(X @ r)))
        grad = X.T @ (Y - p) - lam * r
        W = p * (1 - p)
        H = (X * W[:, None]).T @ X + lam * np.eye(n_players)
        step = np.linalg.solve(H, grad)
        r = r + step
        if np.max(np.abs(step)) < 1e-10:
            break
    cov = np.linalg.inv(H)
    # centre: ratings are only defined up to a constant; project out the mean
    C = np.eye(n_players) - np.ones((n_players, n_players)) / n_players
    return C @ r, C @ cov @ C.T


def summarize(cfg, results: list[dict]) -> dict:
    """The tournament summary: pairings, variance reduction, ratings and the ranking of the entrants."""
    rules = cfg.rules()
    pairs = pairings(cfg.format, cfg.agents, cfg.hero)
    by_pair: dict[int, list[dict]] = {}
    for r in results:
        by_pair.setdefault(r["pairing"], []).append(r)
    entrants = list(cfg.agents)
    index = {e: i for i, e in enumerate(entrants)}

    pair_rows, bt_games = [], []
    per_entrant: dict[str, list[float]] = {e: [] for e in entrants}
    k = seatings(rules) if cfg.duplicate else 1
    total_plain, total_dup = [], []
    for p, (a, b) in enumerate(pairs):
        units = sorted(by_pair.get(p, []), key=lambda u: u["deal"])
        per_game = [g["a_points"] / max(1, g["hands"]) for u in units for g in u["games"]]
        per_deal = [float(np.mean([g["a_points"] / max(1, g["hands"]) for g in u["games"]])) for u in units]
        wins = [g["a_won"] for u in units for g in u["games"] if g["a_won"] is not None]
        pts = mean_ci(per_deal)
        row = {"a": a, "b": b, "deals": len(units), "games": len(per_game), "points_per_hand": pts,
               "win_rate": wilson(sum(wins), len(wins)) if wins else None,
               "separated": bool(pts["lo"] > 0 or pts["hi"] < 0)}
        if cfg.duplicate and len(per_deal) > 1 and len(per_game) > 1:
            v_plain = float(np.var(per_game, ddof=1))
            v_dup = float(np.var(per_deal, ddof=1))
            row["variance_reduction"] = v_plain / (k * v_dup) if v_dup > 0 else float("inf")
            total_plain.append(v_plain)
            total_dup.append(v_dup)
        pair_rows.append(row)
        per_entrant[a] += per_deal
        per_entrant[b] += [-x if not rules.put_n else -x / (rules.players - 1) for x in per_deal]
        for u in units:
            for g in u["games"]:
                score = g["a_won"] if g["a_won"] is not None else (
                    1.0 if g["a_points"] > 0 else 0.0 if g["a_points"] < 0 else 0.5)
                bt_games.append((index[a], index[b], float(score)))
    ratings, cov = bradley_terry(len(entrants), [({i: 1.0}, {j: 1.0}, y) for i, j, y in bt_games])
    order = sorted(range(len(entrants)), key=lambda i: -ratings[i])
    points = {e: float(np.mean(per_entrant[e])) if per_entrant[e] else float("nan") for e in entrants}
    by_points = sorted(entrants, key=lambda e: -points[e] if math.isfinite(points[e]) else math.inf)
    ranking = []
    for pos, i in enumerate(order):
        se = math.sqrt(max(cov[i, i], 0.0))
        sep = None
        if pos + 1 < len(order):
            j = order[pos + 1]
            d = ratings[i] - ratings[j]
            sd = math.sqrt(max(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0))
            sep = bool(d - Z95 * sd > 0)
        e = entrants[i]
        won = [y if a == i else 1.0 - y for a, b, y in bt_games if i in (a, b)]
        ranking.append({
            "rank": pos + 1, "entrant": e, "elo": float(ratings[i] * ELO),
            "elo_lo": float((ratings[i] - Z95 * se) * ELO), "elo_hi": float((ratings[i] + Z95 * se) * ELO),
            "points_per_hand": points[e], "points_rank": by_points.index(e) + 1,
            "score_rate": float(np.mean(won)) if won else float("nan"),
            "games": len(won), "separated_from_next": sep,
        })
    # per pairing, then the median: a pooled ratio is dominated by the pairings of largest variance (those
    # with random), which can hide that most pairings were reduced
    ratios = [r["variance_reduction"] for r in pair_rows if "variance_reduction" in r]
    vr = float(np.median(ratios)) if ratios else None
    pooled = None
    if total_plain and np.mean(total_dup) > 0:
        pooled = float(np.mean(total_plain) / (k * np.mean(total_dup)))
    return {
        "variant": cfg.variant, "options": cfg.options, "format": cfg.format, "episode": cfg.episode,
        "deals": cfg.deals, "duplicate": cfg.duplicate, "seed": cfg.seed,
        "pairings": pair_rows, "ranking": ranking, "variance_reduction": vr,
        "variance_reduced_pairings": [sum(r > 1 for r in ratios), len(ratios)], "variance_reduction_pooled": pooled,
        "rank_disagreements": [r["entrant"] for r in ranking if r["rank"] != r["points_rank"]],
        "pairwise": {"entrants": entrants, "points_per_hand": _pairwise(entrants, pair_rows)},
    }


def _pairwise(entrants, pair_rows) -> list[list[float | None]]:
    idx = {e: i for i, e in enumerate(entrants)}
    m: list[list[float | None]] = [[None] * len(entrants) for _ in entrants]
    for row in pair_rows:
        i, j = idx[row["a"]], idx[row["b"]]
        v = row["points_per_hand"]["mean"]
        m[i][j] = v
        m[j][i] = -v
    return m
