"""PSRO on the public tree: ``truc train psro --config configs/psro_<name>.yaml``.

Policy-Space Response Oracles (Lanctot et al. 2017) for heads-up hands, with the exact best response
of the public-tree solver as its oracle. Every policy is a table (one distribution per information
set, :mod:`agents.cfr.solver`'s slots) that plays both seats. One iteration:

1. the meta-game: ``M[i, j]`` = seat 0's expected points when seat 0 plays policy ``i`` and seat 1
   plays policy ``j`` (exact, one pass over the tree per new entry);
2. the meta-solver: a Nash equilibrium ``(p, q)`` of that zero-sum matrix game (regret matching+
   with linear averaging, :func:`solve_matrix_game`);
3. the oracle: each seat's exact best response (a pure table, :func:`best_response_table`) to the
   other seat's mixture; both join the population as one new policy.

A mixture of tables is itself a table: at each information set, the members' distributions
weighted by meta-probability x the seat's own probability of reaching it (:func:`mix_tables`;
Kuhn's theorem). The meta-Nash mixture is what PSRO outputs (its "average policy"); the last best
response alone (the "last iterate") is a pure strategy and is logged too. The budget is a count of
oracle calls (``iterations``), never wall-clock time. The strategy file the run writes
(``{out}/strategy.npz``) is what ``table:PATH`` loads.
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from agents.cfr.descent import best_response_choice
from train import config
from truc_env.errors import TrucError
from truc_env.io.atomic import atomic_write_text


@dataclass
class PSROConfig(config.RunConfig):
    dealer: int = 0
    """the dealer of the hand played"""
    score: list = field(default_factory=lambda: [0, 0])
    """the score before the hand"""
    abstraction: str = "strength"
    """strength (cards of equal strength merged) or none"""
    iterations: int = 50
    """oracle calls (each adds one best response per seat): the budget"""
    meta_iterations: int = 20000
    """regret-matching+ iterations of the meta-solver per PSRO iteration"""
    initial: str = "uniform"
    """the first policy of the population: ``uniform`` over legal actions"""
    eval_every: int = 1
    """PSRO iterations between exploitability measurements of the meta-Nash mixture (and the last one)"""
    out: str = "runs/psro"
    """folder of the curve (CSV, PNG), the summary and the strategy file"""

    KIND = "PSRO"

    def validate(self) -> None:
        """Rules the tree must take: heads-up, supported, no redeal."""
        from agents.cfr.tree import unsupported_reason

        rules = self.rules()
        why = unsupported_reason(rules, tuple(self.score))
        if why:
            raise TrucError(f"PSRO needs a game the public tree takes: {why}")
        if rules.redeal:
            raise TrucError(f"PSRO plays one hand without a redeal; set options.redeal: false for {self.variant}")
        if len(self.score) != 2:
            raise TrucError(f"PSRO setting score must be two numbers (seat 0, seat 1), got {self.score}")


PSROConfig.SCHEMA = {
    **config.RUN_SCHEMA, "dealer": config.Int(0, 1),
    "score": config.List(config.Int(0, 10**6), min_len=2), "abstraction": config.Choice("strength", "none"),
    "iterations": config.Int(1, 10**6), "meta_iterations": config.Int(1, 10**8), "initial": config.Choice("uniform"),
    "eval_every": config.Int(1, 10**6), "out": config.STR,
}


# ---------------------------------------------------------------------------------- tables
class TableGame:
    """A heads-up hand's public tree and solver, with the seat and own-reach index of every slot."""

    def __init__(self, tree, solver=None):
        from agents.cfr.solver import PublicTreeSolver

        self.tree = tree
        self.solver = solver if solver is not None else PublicTreeSolver(tree)
        s = self.solver
        iset_of_slot = np.repeat(np.arange(s.n_infosets), np.diff(s.iset_start))
        node_of_iset = np.repeat(np.arange(tree.n_nodes), np.diff(s.iset_off))
        self.node_of_slot = node = node_of_iset[iset_of_slot]
        self.seat_of_slot = tree.actor[node].astype(np.int64)
        hand = iset_of_slot - s.iset_off[node]
        self.reach_index = s.roff[node, self.seat_of_slot] + hand

    def uniform(self) -> np.ndarray:
        """The table of the uniform policy over legal actions."""
        counts = np.diff(self.solver.iset_start)
        return np.repeat(1.0 / counts, counts)

    def combine(self, seat0: np.ndarray, seat1: np.ndarray) -> np.ndarray:
        """The table that plays seat 0 as ``seat0`` and seat 1 as ``seat1``."""
        return np.where(self.seat_of_slot == 0, seat0, seat1)

    def value(self, sigma: np.ndarray, redeal_value: float = 0.0) -> float:
        """Seat 0's expected points when both seats follow ``sigma``; an accepted redeal (a tree of rules with
        the redeal) is worth ``redeal_value`` to seat 0."""
        self.solver.forward(0, sigma)
        self.solver.forward(1, sigma)
        self.solver.redeal_value = float(redeal_value)
        return float(self.solver.backward(0, sigma))

    def exploitability(self, sigma: np.ndarray) -> dict:
        """Exact best-response values and exploitability (points per hand) of ``sigma``."""
        from agents.cfr.policy_tree import best_response_values

        return best_response_values(self.solver, sigma)

    def best_response(self, sigma: np.ndarray, redeal_br=(0.0, 0.0)) -> tuple[np.ndarray, tuple[float, float]]:
        """A pure table best-responding to ``sigma`` at each seat, and each seat's best-response value; an
        accepted redeal is worth ``redeal_br[q]`` to a best-responding seat ``q`` (its value in the hand after it).
        PSRO refuses rules with a redeal: there the default 0 is never read."""
        s, t = self.solver, self.tree
        out = np.zeros(s.n_slots)
        values = []
        for seat in (0, 1):
            redeal0 = float(redeal_br[seat]) if seat == 0 else -float(redeal_br[seat])  # the kernels read seat 0's points
            s.forward(0, sigma)
            s.forward(1, sigma)
            s.redeal_value = redeal0
            values.append(float(s.backward(seat, sigma, best_response=True)))
            best_response_choice(seat, t.actor, t.hs, t.act_start, t.kind, t.child, t.util, t.trans, t.hs_off,
                                 t.hs_hands, t.tr_off, t.tr_pos, t.W, s.iset_off, s.iset_start, s.slot_k, s.roff,
                                 s.voff, s.reach, s.values, redeal0, out, 0.0)
        return out, (values[0], values[1])

    def mix(self, tables: list[np.ndarray], weights0, weights1) -> np.ndarray:
        """The table of a mixture: seat 0 draws a table with ``weights0`` once per hand and follows it,
        seat 1 with ``weights1`` (:class:`ReachAverage`)."""
        avg = ReachAverage(self)
        for table, w0, w1 in zip(tables, weights0, weights1):
            avg.add(table, w0, w1)
        return avg.table()


class ReachAverage:
    """The average policy of a sequence of tables, kept as running sums.

    At each information set of a seat, the tables' distributions weighted by ``weight x`` the seat's own
    probability of reaching it (``sum_t w_t reach_t pi_t / sum_t w_t reach_t``): by Kuhn's theorem the
    table that plays like drawing one member by weight once per hand and following it. Where no member
    reaches an information set, the weighted plain mean. PSRO's meta-Nash mixture and PPO/MMD's average
    of their iterates (``average`` in :class:`train.algos.ppo.PPOConfig`) are both this. The sums are kept per
    slot, for the seat that decides there (one value per slot and sum: they are large on the full game)."""

    def __init__(self, game: TableGame):
        n = game.solver.n_slots
        self.num, self.den, self.plain = np.zeros(n), np.zeros(n), np.zeros(n)
        self.total = np.zeros(2)
        self.bind(game)

    @classmethod
    def restored(cls, d: dict) -> ReachAverage:
        """The sums of :meth:`state_dict`, bound to no tree yet (:meth:`bind` one before ``add`` or ``table``)."""
        self = cls.__new__(cls)
        self.num, self.den, self.plain = (np.array(d[k], dtype=np.float64) for k in ("num", "den", "plain"))
        self.total = np.array(d["total"], dtype=np.float64)
        self.unbind()
        return self

    def bind(self, game: TableGame) -> None:
        """Use ``game`` (the same public tree, e.g. with another solver) for the reach of the next tables."""
        if game.solver.n_slots != self.num.shape[0]:
            raise TrucError(f"a tree of {game.solver.n_slots} slots for an average of {self.num.shape[0]}")
        self.game = game
        self.own = [np.flatnonzero(game.seat_of_slot == seat) for seat in (0, 1)]

    def unbind(self) -> None:
        """Let go of the tree and solver (the sums stay): they are large on the full game."""
        self.game = self.own = None

    def add(self, table: np.ndarray, weight0: float = 1.0, weight1: float | None = None) -> None:
        """Add one table with weight ``weight0`` for seat 0 and ``weight1`` (default: the same) for seat 1."""
        table = np.asarray(table, dtype=np.float64)
        if table.shape != (self.game.solver.n_slots,):
            raise TrucError(f"a table of {table.shape} values for a tree of {self.game.solver.n_slots} slots")
        for seat, w in ((0, weight0), (1, weight0 if weight1 is None else weight1)):
            if w <= 0.0:
                continue
            self.game.solver.forward(seat, table)
            own = self.own[seat]
            r = w * self.game.solver.reach[self.game.reach_index[own]].astype(np.float64)
            mine = table[own]
            self.num[own] += r * mine
            self.den[own] += r
            self.plain[own] += w * mine
            self.total[seat] += w

    def table(self) -> np.ndarray:
        """The average table (each seat's slots from that seat's sums)."""
        out = np.zeros(self.num.shape[0])
        for seat in (0, 1):
            own = self.own[seat]
            den = self.den[own]
            plain = self.plain[own] / max(float(self.total[seat]), 1e-300)
            out[own] = np.where(den > 0, self.num[own] / np.where(den > 0, den, 1.0), plain)
        return out

    def state_dict(self) -> dict:
        """The running sums (for a checkpoint)."""
        return {"num": self.num.copy(), "den": self.den.copy(), "plain": self.plain.copy(), "total": self.total.copy()}

    def load_state_dict(self, d: dict) -> None:
        """Restore the running sums of :meth:`state_dict`."""
        if np.shape(d["num"]) != self.num.shape:
            raise TrucError(f"an average of {np.shape(d['num'])} sums for a tree of {self.num.shape} slots")
        self.num, self.den, self.plain = (np.array(d[k], dtype=np.float64) for k in ("num", "den", "plain"))
        self.total = np.array(d["total"], dtype=np.float64)


def solve_matrix_game(M: np.ndarray, iterations: int = 20000) -> tuple[np.ndarray, np.ndarray, float]:
    """An approximate Nash equilibrium ``(p, q, value)`` of the zero-sum game where the row player
    (seat 0) gets ``M[i, j]``: regret matching+ with linearly weighted averages (the averages converge)."""
    m, n = M.shape
    Rp, Rq = np.zeros(m), np.zeros(n)
    Sp, Sq = np.zeros(m), np.zeros(n)
    for t in range(1, iterations + 1):
        p = Rp / Rp.sum() if Rp.sum() > 0 else np.full(m, 1.0 / m)
        q = Rq / Rq.sum() if Rq.sum() > 0 else np.full(n, 1.0 / n)
        u_row = M @ q
        u_col = -(p @ M)
        Rp = np.maximum(Rp + u_row - p @ u_row, 0.0)
        Rq = np.maximum(Rq + u_col - q @ u_col, 0.0)
        Sp += t * p
        Sq += t * q
    p, q = Sp / Sp.sum(), Sq / Sq.sum()
    return p, q, float(p @ M @ q)


# ---------------------------------------------------------------------------------- the run
def run(cfg: PSROConfig, log=print) -> dict:
    """Run PSRO for ``cfg.iterations`` oracle calls; writes the curve, the summary and the strategy file."""
    from agents.cfr.strategy import StrategyTable, save_strategy
    from train.eval.exploitability import cached_tree, default_cache_dir

    rules = cfg.rules()
    config.output_folder(cfg.out)
    cpu0, t0 = time.process_time(), time.time()
    tree = cached_tree(rules, cfg.dealer, tuple(cfg.score), cfg.abstraction, default_cache_dir())
    game = TableGame(tree)
    population = [game.uniform()]
    M = np.array([[game.value(population[0])]])
    rows: list[dict] = []
    p = q = np.ones(1)
    mixture = population[0]

    def measure(it: int, last_br: float) -> dict:
        ev = game.exploitability(mixture)
        row = {"iteration": it, "policies": len(population), "exploitability": ev["exploitability"],
               "br0": ev["br0"], "br1": ev["br1"], "value_seat0": ev["value_seat0"],
               "last_response_exploitability": last_br, "cpu_seconds": time.process_time() - cpu0}
        rows.append(row)
        return row

    measure(0, float("nan"))
    log(f"psro: tree {tree.n_nodes:,} public nodes; uniform policy exploitability {rows[0]['exploitability']:.4f}")
    for it in range(1, cfg.iterations + 1):
        br, _ = game.best_response(mixture)
        population.append(br)
        # the new row and column of the meta-game
        k = len(population)
        M2 = np.zeros((k, k))
        M2[:k - 1, :k - 1] = M
        for j in range(k):
            M2[k - 1, j] = game.value(game.combine(population[k - 1], population[j]))
            M2[j, k - 1] = game.value(game.combine(population[j], population[k - 1]))
        M = M2
        p, q, _ = solve_matrix_game(M, cfg.meta_iterations)
        mixture = game.mix(population, p, q)
        if it % cfg.eval_every == 0 or it == cfg.iterations:
            last_br = game.exploitability(br)["exploitability"]
            row = measure(it, last_br)
            log(f"psro iteration {it}: {k} policies, meta-Nash mixture exploitability {row['exploitability']:.5f} "
                f"(last best response alone: {last_br:.3f})")
    final = rows[-1]
    header = {"variant": cfg.variant, "options": dict(rules.options), "rules_key": rules.key, "dealer": cfg.dealer,
              "score": list(cfg.score), "abstraction": cfg.abstraction, "algorithm": "psro",
              "iterations": cfg.iterations, "exploitability": final["exploitability"],
              "value_seat0": final["value_seat0"], "redeal_value": None}
    save_strategy(os.path.join(cfg.out, "strategy.npz"), header,
                  {"main": StrategyTable.from_solver(tree, game.solver, mixture)})
    write_csv(os.path.join(cfg.out, "curve.csv"), rows)
    plot_curve(rows, os.path.join(cfg.out, "curve.png"), f"PSRO {cfg.variant}")
    summary = {"config": asdict(cfg), "iterations": cfg.iterations, "policies": len(population),
               "exploitability": final["exploitability"], "uniform_exploitability": rows[0]["exploitability"],
               "last_response_exploitability": final["last_response_exploitability"],
               "meta_weights_seat0": p.tolist(), "meta_weights_seat1": q.tolist(),
               "cpu_seconds": time.process_time() - cpu0, "seconds": time.time() - t0}
    atomic_write_text(os.path.join(cfg.out, "summary.json"), json.dumps(summary, indent=2, default=float))
    log(f"exploitability {final['exploitability']:.5f} points/hand after {cfg.iterations} PSRO iterations "
        f"(uniform: {rows[0]['exploitability']:.4f}); strategy: table:{os.path.join(cfg.out, 'strategy.npz')}")
    return summary


def write_csv(path: str, rows: list[dict], columns=None) -> None:
    """Rows of a curve or table as CSV (header: ``columns``, default the first row's keys), written atomically."""
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns or rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(path, buf.getvalue())


def plot_curve(rows: list[dict], path: str, title: str) -> None:
    """Exploitability of the meta-Nash mixture against PSRO iterations (log scale) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from truc_env.io.atomic import atomic_open

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r["iteration"] for r in rows], [r["exploitability"] for r in rows], marker=".")
    ax.set_yscale("log")
    ax.set_xlabel("PSRO iterations (oracle calls)")
    ax.set_ylabel("exploitability (points per hand)")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    with atomic_open(path, "wb") as f:
        fig.savefig(f, format="png", dpi=90)
    plt.close(fig)


def main(config_path: str, overrides=()) -> dict:
    """``truc train psro --config PATH [--set key=value ...]``."""
    cfg = config.load(PSROConfig, config_path, overrides)
    return run(cfg)
