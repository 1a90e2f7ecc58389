"""Heads-up MCCFR runs: ``truc train cfr`` with ``algorithm: es_mccfr`` on two-player rules.

Trains :class:`agents.cfr.hu_mccfr_numba.NumbaHeadsUpMCCFR` (``backend: numba``, the default) or
:class:`agents.cfr.hu_mccfr.HeadsUpMCCFR` (``backend: loop``) for ``iterations`` (the budget; ``time_limit`` and
``cpu_limit`` stop it earlier only where set), checkpoints every ``checkpoint_every`` iterations
(``--resume`` continues bit-identically; Ctrl-C or SIGTERM stops it at the end of a block of iterations with a
checkpoint), and measures the average strategy's exact exploitability every
``eval_every`` iterations and at the end: the public trees are built for that measurement (and cached),
never read by the training. Writes ``strategy.npz`` (the exact solver's format: ``table:PATH`` plays it,
``truc exploitability`` reads its tables as they are), ``checkpoint.npz``, ``curve.csv`` / ``curve.png``
and ``summary.json``.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict
from typing import TYPE_CHECKING

from train import config
from truc_env.errors import TrucError
from truc_env.io.atomic import atomic_write_text

if TYPE_CHECKING:
    from agents.cfr.hu_mccfr import HeadsUpMCCFR
    from agents.cfr.hu_mccfr_numba import NumbaHeadsUpMCCFR

FIELDS = ["part", "iteration", "cpu_seconds", "seconds", "nodes", "infosets", "exploitability"]
INTS = ("iteration", "nodes", "infosets")


def export_strategy(solver: HeadsUpMCCFR | NumbaHeadsUpMCCFR, path: str | None = None,
                    cache_dir: str | None = None) -> dict:
    """Write the average strategy as an exact-solver strategy file on the public trees (``main``, and ``cont``
    with a redeal) and measure its exact exploitability (in the real game, with a redeal). Returns the
    measurement; with ``path`` the file is written too (atomically)."""
    from agents.cfr.policy_tree import real_redeal_best_responses
    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.strategy import StrategyTable, save_strategy
    from train.eval.tree_cache import cached_tree
    from truc_env.game.rules import make_rules

    rules = solver.rules
    t0 = time.process_time()
    tree = cached_tree(rules, solver.dealer, (0, 0), "strength", cache_dir)
    ts = PublicTreeSolver(tree)
    sigma, found = solver.sigma_on_tree(tree, ts)
    parts = {"main": StrategyTable.from_solver(tree, ts, sigma)}
    out = {"infosets_found": found, "infosets": int(ts.iset_start.shape[0] - 1)}
    if rules.redeal:
        ctree = cached_tree(make_rules(rules.variant, **{**rules.options, "redeal": False}), solver.dealer, (0, 0),
                            "strength", cache_dir)
        cs = PublicTreeSolver(ctree)
        csigma, cfound = solver.sigma_on_tree(ctree, cs, redealt=True)
        parts["cont"] = StrategyTable.from_solver(ctree, cs, csigma)
        br = real_redeal_best_responses(ts, sigma, cs, csigma)
        out.update(exploitability=float(br["exploitability"]), br0=float(br["br0"]), br1=float(br["br1"]),
                   infosets_found_cont=cfound, infosets_cont=int(cs.iset_start.shape[0] - 1))
    else:
        ev = ts.evaluate(sigma)
        out.update(exploitability=float(ev["exploitability"]))
    out["measure_cpu_seconds"] = time.process_time() - t0
    if path:
        header = {"variant": rules.variant, "options": dict(rules.options), "rules_key": rules.key,
                  "dealer": solver.dealer, "score": [0, 0], "abstraction": "strength", "algorithm": "es_mccfr",
                  "iterations": solver.iteration, "training_cpu_seconds": solver.cpu_seconds, "seed": solver.seed,
                  "backend": solver.BACKEND,
                  "exploitability": out["exploitability"], "real_redeal": bool(rules.redeal)}
        save_strategy(path, header, parts)
    return out


class _Interrupt:
    """Ctrl-C or SIGTERM asks the run to stop at the end of its current block of iterations (a few seconds),
    with a checkpoint, rather than losing what it did since the last one; a second Ctrl-C stops it at once."""

    def __enter__(self):
        import signal

        self.asked = False
        self._old = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._old[sig] = signal.signal(sig, self._ask)
            except ValueError:  # not the main thread: no handler, the default behaviour
                pass
        return self

    def _ask(self, sig, frame):
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __exit__(self, *exc):
        import signal

        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def run_hu_mccfr(cfg, rules, resume: bool, deadline: float, log=print) -> dict:
    """Train, measure and write a heads-up MCCFR run (see the module docstring)."""
    from tqdm import tqdm

    from agents.cfr.hu_mccfr import HeadsUpMCCFR
    from agents.cfr.hu_mccfr_numba import NumbaHeadsUpMCCFR
    from train.algos.cfr_io import plot_curve, read_rows, resume_from, write_rows
    from train.eval.tree_cache import default_cache_dir

    if cfg.algorithm != "es_mccfr":
        raise TrucError(f"heads-up MCCFR runs external sampling only (algorithm: es_mccfr), not {cfg.algorithm}")
    if cfg.dealer != 0 or list(cfg.score) != [0, 0]:
        raise TrucError("MCCFR trains one hand from 0-0 with dealer 0 (keys are relative to the dealer)")
    if cfg.threshold or cfg.exclude:
        raise TrucError("threshold and exclude are for the partnership MCCFR agent; the heads-up strategy is "
                        "played as the exact solver's tables are")
    start = time.time()
    config.output_folder(cfg.out)
    solver = (NumbaHeadsUpMCCFR if cfg.backend == "numba" else HeadsUpMCCFR)(rules, seed=cfg.seed,
                                                                              weighting=cfg.weighting)
    ckpt = os.path.join(cfg.out, "checkpoint.npz")
    curve_csv = os.path.join(cfg.out, "curve.csv")
    rows: list[dict] = []
    if resume and os.path.exists(ckpt):
        try:
            resume_from(ckpt, lambda: solver.load_checkpoint(ckpt))
        except TrucError as e:  # the other backend's checkpoint: say which setting reads it
            for backend, kind in (("loop", HeadsUpMCCFR), ("numba", NumbaHeadsUpMCCFR)):
                if f"(format {kind.CHECKPOINT_FORMAT!r})" in str(e):
                    raise TrucError(f"{e}; it was written with backend: {backend} (--set backend={backend} "
                                    "resumes it)") from None
            raise
        rows = [r for r in read_rows(curve_csv, FIELDS, INTS) if r["iteration"] <= solver.iteration]
        log(f"resumed at iteration {solver.iteration:,} ({solver.infosets:,} information sets)")
    cache = default_cache_dir()

    def measure(path=None) -> dict:
        m = export_strategy(solver, path, cache)
        rows.append({"part": "hand", "iteration": solver.iteration, "cpu_seconds": round(solver.cpu_seconds, 2),
                     "seconds": round(time.time() - start, 2), "nodes": solver.nodes, "infosets": solver.infosets,
                     "exploitability": m["exploitability"]})
        return m

    def write_curve() -> None:
        write_rows(curve_csv, FIELDS, rows)
        if rows:
            plot_curve(rows, os.path.join(cfg.out, "curve.png"),
                       f"{cfg.variant} {json.dumps(cfg.options)} (heads-up es_mccfr, seed {cfg.seed})")

    def save() -> None:
        solver.save_checkpoint(ckpt)
        write_curve()

    def at_boundary() -> bool:  # the loop checkpoints there (or the checkpoint was read there)
        return solver.iteration % cfg.checkpoint_every == 0 or solver.iteration % cfg.eval_every == 0

    g = math.gcd(cfg.checkpoint_every, cfg.eval_every)  # the iterations between stops, dividing both
    step = g if g <= 1000 else math.gcd(g, 1000)
    stop = _Interrupt()
    with stop, tqdm(total=cfg.iterations, initial=solver.iteration, desc="es_mccfr", unit="it") as bar:
        while solver.iteration < cfg.iterations and time.time() < deadline and not (
                cfg.cpu_limit and solver.cpu_seconds >= cfg.cpu_limit):
            if stop.asked:  # between iterations: the checkpoint is one a straight run passes through
                save()
                raise TrucError(f"interrupted at iteration {solver.iteration:,}: checkpoint {ckpt} written; "
                                "--resume continues from it")
            n = min(step - solver.iteration % step, cfg.iterations - solver.iteration)
            solver.iterate(n)
            bar.update(n)
            bar.set_postfix(infosets=f"{solver.infosets:,}", cpu=f"{solver.cpu_seconds:.0f}s")
            at = solver.iteration
            if at % cfg.eval_every == 0 and at < cfg.iterations:
                bar.write(f"iteration {at:,}: exploitability {measure()['exploitability']:.4f}")
            if at_boundary():
                save()
    strategy_path = os.path.join(cfg.out, "strategy.npz")
    if rows and rows[-1]["iteration"] == solver.iteration:
        rows.pop()  # measured again with the file written
    final = measure(strategy_path)
    if not at_boundary():  # stopped by time or CPU between boundaries
        solver.save_checkpoint(ckpt)
    write_curve()
    summary = {"config": asdict(cfg), "rules_key": rules.key, "algorithm": "es_mccfr (heads-up, exact-solver keys)",
               "backend": cfg.backend,
               "seed": cfg.seed, "iterations": solver.iteration, "cpu_seconds": solver.cpu_seconds,
               "nodes": solver.nodes, "nodes_per_cpu_second": solver.nodes / max(solver.cpu_seconds, 1e-9),
               "infosets": solver.infosets, "exploitability": final["exploitability"],
               "exploitability_kind": "exact, the real game with its redeal" if rules.redeal else "exact",
               "measurement": final, "wall_seconds": time.time() - start, "strategy": strategy_path}
    atomic_write_text(os.path.join(cfg.out, "summary.json"), json.dumps(summary, indent=2, default=float))
    log(f"es_mccfr: {solver.iteration:,} iterations, {solver.cpu_seconds:.0f} CPU s, {solver.infosets:,} "
        f"information sets; exploitability {final['exploitability']:.4f}; strategy: {strategy_path}")
    return summary
