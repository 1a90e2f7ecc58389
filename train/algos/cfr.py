"""Solve a heads-up hand with CFR: ``truc train cfr --config configs/cfr_<name>.yaml [--resume]``.

One readable loop: build the public tree once with the engine (:mod:`agents.cfr.tree`), run CFR+ /
discounted CFR / linear CFR over it (:mod:`agents.cfr.solver`), measure the exact exploitability of
the average strategy every ``eval_every`` iterations, write the curve (CSV + PNG), checkpoint the
regrets atomically every ``checkpoint_every`` iterations, and save the strategy file that ``table:PATH``
loads. ``--resume`` continues from the checkpoint in ``out``.

Rules with a redeal are solved in two steps (``docs/cfr.md``): first the redeal-free hand (the
continuation after an accepted redeal), whose equilibrium value then stands for an accepted redeal
in the main hand; the strategy file holds both parts.

Heads-up Truco Paulista is solved one vira at a time (:func:`run_vira`): the vira is public chance,
so each distinct game after it (:func:`agents.cfr.tree.vira_subgames`) is a part of its own, and
the whole hand's exploitability is the parts' weighted by the chance of their viras (curve part
``whole``, at the iterations every part reached).

Partnership variants (``le_truc_4p``, 4-player ``truco_paulista``) have no exact solver: with
``algorithm: es_mccfr`` or ``os_mccfr`` the run trains sampling MCCFR over a card abstraction
(:mod:`agents.cfr.mccfr`) within an iteration, CPU-time and wall-time budget, checkpointing its
tables atomically every ``checkpoint_every`` iterations (``--resume`` continues bit-identically).
On two-player rules ``es_mccfr`` trains heads-up MCCFR keyed as the exact solver's tables, measured
exactly as it goes (:mod:`train.algos.hu_mccfr`).
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from agents.cfr.mccfr import ALGORITHMS as MCCFR_ALGORITHMS
from agents.cfr.solver import ALGORITHMS as EXACT_ALGORITHMS
from train import config
from train.algos.cfr_io import plot_curve, read_rows, resume_from, write_rows
from truc_env.errors import TrucError
from truc_env.game.rules import make_rules
from truc_env.io.atomic import atomic_open, atomic_write_text
from truc_env.io.checks import check_memory


@dataclass
class CFRConfig(config.RunConfig):
    dealer: int = 0
    """the dealer of the solved hand (the strategy plays any hand by role: dealer / first player)"""
    score: list = field(default_factory=lambda: [0, 0])
    """the score before the hand (mon reste is worth what the winner still needs)"""
    algorithm: str = "dcfr"
    """cfr+, dcfr (alpha 1.5, beta 0, gamma 2), lcfr, cfr; mmd (full-width magnetic mirror descent: its
    last iterate is the strategy); es_mccfr, os_mccfr (sampling MCCFR: the 2 vs 2 games over a card abstraction;
    es_mccfr on two-player rules too, keyed as the exact solver's tables: agents/cfr/hu_mccfr.py)"""
    abstraction: str = "strength"
    """strength (lossless: cards of equal strength merged) or none"""
    iterations: int = 1000
    """at most this many iterations"""
    time_limit: float = 1800.0
    """stop after this many seconds of wall time for the whole run (tree building included)"""
    target_exploitability: float = 0.0
    """stop once the exploitability (points per hand) is at most this (0: never)"""
    eval_every: int = 25
    """iterations between exact exploitability measurements"""
    checkpoint_every: int = 100
    """iterations between checkpoints"""
    dtype: str = "float32"
    """float32 halves memory traffic on big trees; float64 for exact cross-checks"""
    out: str = "runs/cfr"
    """output folder: strategy.npz, checkpoint.npz, curve.csv, curve.png, summary.json"""
    continuation: str = ""
    """with a redeal: a strategy file of the same game with ``redeal: false`` (same dealer and score)
    to reuse as the hand after an accepted redeal, instead of solving it first"""
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0
    mmd_step: float = 1.0
    """mmd: the step size (per point of action value)"""
    mmd_magnet: float = 0.1
    """mmd: the magnet's weight (a pull towards the uniform policy) at the first iteration"""
    mmd_magnet_end: float = 0.001
    """mmd: the magnet's weight at the last iteration (annealed geometrically over ``iterations``)"""
    seed: int = 0
    """MCCFR: the seed of the sampling generator"""
    weighting: str = "linear"
    """MCCFR: linear (iteration t weighted by t) or uniform"""
    epsilon: float = 0.6
    """os_mccfr: the traverser's exploration probability"""
    cpu_limit: float = 0.0
    """MCCFR: stop after this many CPU seconds of training (0: no CPU limit)"""
    threshold: float = 0.0
    """MCCFR agent: drop actions below this fraction of the most likely one's probability (1: purify)"""
    exclude: list = field(default_factory=list)
    """MCCFR agent: abstract actions it never takes while another is legal (e.g. allin: no mon reste call)"""
    backend: str = "numba"
    """heads-up MCCFR: the games walked on the batched engine's numba kernel (numba, 15-26x the iterations per CPU
    second) or on engine.State objects (loop); the same algorithm and keys, other random streams"""

    def validate(self) -> None:
        """A setting that would not apply is refused, saying why, rather than silently ignored."""
        mccfr = self.algorithm in ("es_mccfr", "os_mccfr")
        for name in ("exclude", "threshold"):
            if getattr(self, name) and not mccfr:
                raise TrucError(f"setting {name} is for the MCCFR agent (algorithm es_mccfr or os_mccfr); "
                                f"the {self.algorithm} strategy would ignore it")
        if self.backend != "numba" and not (self.algorithm == "es_mccfr" and self.rules().players == 2):
            raise TrucError(f"setting backend: {self.backend} is for heads-up MCCFR (algorithm es_mccfr on "
                            "two-player rules); this run has one engine")
        if self.continuation:
            if mccfr:
                raise TrucError("setting continuation is for the exact solver with a redeal, not MCCFR")
            if not self.rules().redeal:
                raise TrucError("setting continuation is the hand after an accepted redeal, and these rules have "
                                "no redeal (options.redeal is false): it would be ignored")


# the exact solver's algorithms, then MCCFR's (kept equal to theirs by tests/test_config.py; importing
# them here would load the numba kernels just to read a config)
ALGORITHMS = EXACT_ALGORITHMS + MCCFR_ALGORITHMS  # the solvers' own lists: nothing to keep in step
CFRConfig.KIND = "cfr"
CFRConfig.SCHEMA = {
    **config.RUN_SCHEMA, "dealer": config.Int(0, 5),
    "score": config.List(config.Int(0, 10**6), min_len=1), "algorithm": config.Choice(*ALGORITHMS),
    "abstraction": config.Choice("strength", "none"), "iterations": config.Int(1, 10**12),
    "time_limit": config.Float(0.001), "target_exploitability": config.Float(0.0), "eval_every": config.Int(1, 10**12),
    "checkpoint_every": config.Int(1, 10**12), "dtype": config.Choice("float32", "float64"), "out": config.STR,
    "continuation": config.STR, "alpha": config.Float(), "beta": config.Float(), "gamma": config.Float(),
    "mmd_step": config.Float(1e-9), "mmd_magnet": config.Float(0.0), "mmd_magnet_end": config.Float(1e-12),
    "seed": config.SEED, "weighting": config.Choice("linear", "uniform"), "epsilon": config.Float(0.0, 1.0),
    "cpu_limit": config.Float(0.0), "threshold": config.Float(0.0, 1.0), "exclude": config.List(config.STR),
    "backend": config.Choice("numba", "loop"),
}


def load_config(path: str, overrides=()) -> CFRConfig:
    """The CFR config of a YAML file, checked, with ``--set`` overrides applied."""
    return config.load(CFRConfig, path, overrides)


def solver_counts(tree, slot_bytes: int = 4, chunk: int = 1 << 20) -> dict:
    """What ``PublicTreeSolver`` allocates on top of the tree, counted before it does (the layout, the
    regret / strategy-sum / policy slots, reach and values; edge-sized temporaries left out), with the
    counts it comes from (``truc bench``'s tree sizes print them). The edges are counted ``chunk`` nodes at
    a time: edge-sized temporaries of the whole tree (384 M edges on the 40-card Mineiro) took more memory
    than the tree itself, so the check that a measurement fits was what did not fit."""
    sizes = np.diff(tree.hs_off).astype(np.int64)
    n = tree.n_nodes
    actor, hs = np.asarray(tree.actor[:n]), np.asarray(tree.hs[:n])
    q = np.minimum(actor, 1)
    own = np.where(actor <= 1, sizes[hs[np.arange(n), q]], 0)
    hits = np.concatenate([[0], np.cumsum(np.asarray(tree.tr_pos) >= 0)])
    can = hits[tree.tr_off[1:]] - hits[tree.tr_off[:-1]]  # per transition: the hands that can make the play
    slots = moves = 0
    for a in range(0, n, chunk):
        b = min(n, a + chunk)
        e0, e1 = int(tree.act_start[a]), int(tree.act_start[b])
        node = np.repeat(np.arange(a, b), np.diff(tree.act_start[a:b + 1]))
        trans, kind, child = tree.trans[e0:e1], tree.kind[e0:e1], tree.child[e0:e1]
        slots += int(np.where(trans < 0, own[node], can[np.maximum(trans, 0)] if len(can) else 0).sum())
        move = kind == 0
        moves += int(sizes[hs[child[move], q[node[move]]]].sum())
    reach = int(sizes[hs[0, 0]] + sizes[hs[0, 1]] + moves)
    values = int(max(sizes[hs[:, 0]].sum(), sizes[hs[:, 1]].sum()))
    isets = int(own.sum())
    total = (8 * (n + 1) + 8 * (isets + 1) + slots + 16 * n + 16 * (n + 1) + 3 * slot_bytes * slots
             + 8 * reach + 8 * values)
    return {"isets": isets, "slots": slots, "reach": reach, "values": values, "bytes": int(total)}


def _load_npz_state(solver, path: str) -> None:
    with np.load(path, allow_pickle=False) as z:
        solver.load_state_dict({k: z[k] for k in z.files})


def _atomic_savez(path: str, **arrays) -> None:
    with atomic_open(path, "wb") as f:
        np.savez(f, **arrays)


def _solve_part(cfg: CFRConfig, rules, part: str, deadline: float, resume: bool, rows: list, redeal_value=0.0,
                log=print, vira=None):
    """Build one public tree and run the solver until a stop rule fires; returns (tree, solver)."""
    from tqdm import tqdm

    from agents.cfr.solver import PublicTreeSolver
    from agents.cfr.tree import build_tree

    t0 = time.time()
    tree = build_tree(rules, dealer=cfg.dealer, score=tuple(cfg.score), abstraction=cfg.abstraction, vira=vira)
    log(f"[{part}] public tree: {tree.size()} built in {time.time() - t0:.1f}s")
    check_memory(solver_counts(tree, 4 if cfg.dtype == "float32" else 8)["bytes"],
                 f"solving the {part} tree ({tree.n_nodes:,} public nodes)",
                 "solve a smaller game (options ranks, hand_size or max_raises), or set dtype: float32")
    solver = PublicTreeSolver(tree, cfg.algorithm, cfg.alpha, cfg.beta, cfg.gamma, redeal_value, cfg.dtype,
                              cfg.mmd_step, cfg.mmd_magnet, cfg.mmd_magnet_end, cfg.iterations)
    ckpt, curve_csv = os.path.join(cfg.out, f"checkpoint_{part}.npz"), os.path.join(cfg.out, "curve.csv")
    if resume and os.path.exists(ckpt):
        resume_from(ckpt, lambda: _load_npz_state(solver, ckpt))
        log(f"[{part}] resumed at iteration {solver.iteration}")
    # the curve is written before each checkpoint: its rows past the checkpoint are played again
    rows[:] = [r for r in rows if not (r["part"] == part and r["iteration"] > solver.iteration)]
    # a with-block: the bar is closed on an error too, so the error gets a line of its own
    with tqdm(total=cfg.iterations, initial=solver.iteration, desc=f"cfr {part}", unit="it") as bar:
        last = None
        while solver.iteration < cfg.iterations and time.time() < deadline:
            step = min(cfg.eval_every - solver.iteration % cfg.eval_every, cfg.iterations - solver.iteration)
            solver.iterate(step)
            bar.update(step)
            ev = solver.evaluate()
            last = ev["exploitability"]
            rows.append({"part": part, "iteration": solver.iteration, "seconds": round(solver.seconds, 2),
                         "cpu_seconds": round(solver.cpu_seconds, 2), "elapsed": round(time.time() - t0, 2),
                         "exploitability": last, "value": ev["value"], "br0": ev["br0"], "br1": ev["br1"]})
            bar.set_postfix(expl=f"{last:.4f}")
            if solver.iteration % cfg.checkpoint_every < step or solver.iteration >= cfg.iterations:
                _write_curve(cfg, curve_csv, rows, [])  # every row so far survives a kill -9 (--resume keeps them)
                _atomic_savez(ckpt, **solver.state_dict())
            if cfg.target_exploitability and last <= cfg.target_exploitability:
                break
    _write_curve(cfg, curve_csv, rows, [])
    _atomic_savez(ckpt, **solver.state_dict())
    return tree, solver


def main(config_path: str, resume: bool = False, overrides=()) -> dict:
    """Run a CFR config; returns the summary (also written to ``out/summary.json``)."""
    cfg = load_config(config_path, overrides)
    return run(cfg, resume)


def run(cfg: CFRConfig, resume: bool = False, log=print) -> dict:
    from agents.cfr.strategy import StrategyTable, save_strategy
    from agents.cfr.tree import unsupported_reason

    start = time.time()
    deadline = start + cfg.time_limit
    rules = cfg.rules()
    if cfg.algorithm in ("es_mccfr", "os_mccfr"):
        return run_mccfr(cfg, rules, resume, deadline, log)
    why = unsupported_reason(rules, cfg.score)
    if why:
        raise TrucError(f"{cfg.variant}: the exact solver does not apply ({why})")
    if rules.redeal and cfg.continuation and not os.path.exists(cfg.continuation):
        # refused before the out folder is made (a refused run used to leave an empty one behind)
        raise TrucError(f"continuation: no strategy file {cfg.continuation!r} (solve the hand without the redeal "
                        "first, e.g. truc train cfr --config configs/cfr/le_truc.yaml)")
    config.output_folder(cfg.out)
    curve_csv = os.path.join(cfg.out, "curve.csv")
    rows = read_rows(curve_csv, _CURVE_FIELDS) if resume else []
    if rules.vira:
        return run_vira(cfg, rules, resume, start, rows, log)
    parts = {}
    summary = {"config": asdict(cfg), "rules_key": rules.key}
    redeal_value = 0.0
    if rules.redeal and cfg.continuation:
        from agents.cfr.strategy import load_strategy

        cont_rules = make_rules(cfg.variant, **{**cfg.options, "redeal": False})
        cont = load_strategy(cfg.continuation, cont_rules)
        h = cont.header
        if h.get("dealer") != cfg.dealer or list(h.get("score", [])) != list(cfg.score):
            raise TrucError(f"{cfg.continuation}: solved for dealer {h.get('dealer')} at {h.get('score')}, "
                            f"not dealer {cfg.dealer} at {cfg.score}")
        redeal_value = h.get("value_seat0")
        if redeal_value is None:
            with open(os.path.join(os.path.dirname(cfg.continuation), "summary.json")) as f:
                redeal_value = json.load(f)["main"]["value_seat0"]
        parts["cont"] = cont.parts["main"]
        summary["cont"] = {"from": cfg.continuation, "exploitability": h.get("exploitability"),
                           "iterations": h.get("iterations"), "value_seat0": redeal_value}
        log(f"[cont] reusing {cfg.continuation}: value {redeal_value:+.4f} for seat 0")
    elif rules.redeal:
        # the hand after an accepted redeal: the same hand without a second redeal
        cont_rules = make_rules(cfg.variant, **{**cfg.options, "redeal": False})
        share = (deadline - time.time()) * 0.4
        tree, solver = _solve_part(cfg, cont_rules, "cont", time.time() + share, resume, rows, log=log)
        ev = solver.evaluate()
        redeal_value = ev["value"]
        parts["cont"] = StrategyTable.from_solver(tree, solver, solver.average_strategy())
        summary["cont"] = {"size": tree.size(), "iterations": solver.iteration, "exploitability": ev["exploitability"],
                           "value_seat0": redeal_value, "build_seconds": tree.build_seconds,
                           "solve_seconds": solver.seconds, "solve_cpu_seconds": solver.cpu_seconds}
        del tree, solver
    tree, solver = _solve_part(cfg, rules, "main", deadline, resume, rows, redeal_value, log=log)
    ev = solver.evaluate()
    parts["main"] = StrategyTable.from_solver(tree, solver, solver.average_strategy())
    summary["main"] = {"size": tree.size(), "iterations": solver.iteration, "exploitability": ev["exploitability"],
                       "value_seat0": ev["value"], "br0": ev["br0"], "br1": ev["br1"],
                       "build_seconds": tree.build_seconds, "solve_seconds": solver.seconds,
                       "solve_cpu_seconds": solver.cpu_seconds}
    summary["wall_seconds"] = time.time() - start
    summary["cpu_seconds"] = time.process_time()
    header = {"variant": cfg.variant, "options": dict(rules.options), "rules_key": rules.key, "dealer": cfg.dealer,
              "score": list(cfg.score), "abstraction": cfg.abstraction, "algorithm": cfg.algorithm,
              "iterations": solver.iteration, "exploitability": ev["exploitability"], "value_seat0": ev["value"],
              "redeal_value": redeal_value if rules.redeal else None}
    save_strategy(os.path.join(cfg.out, "strategy.npz"), header, parts)
    _write_curve(cfg, curve_csv, rows, rows)
    atomic_write_text(os.path.join(cfg.out, "summary.json"), json.dumps(summary, indent=2, default=float))
    log(f"exploitability {ev['exploitability']:.5f} points/hand after {solver.iteration} iterations; "
        f"wall {summary['wall_seconds']:.0f}s; strategy: {os.path.join(cfg.out, 'strategy.npz')}")
    return summary


_CURVE_FIELDS = ["part", "iteration", "seconds", "cpu_seconds", "elapsed", "exploitability", "value", "br0", "br1"]


def _write_curve(cfg: CFRConfig, path: str, rows: list[dict], plotted: list[dict]) -> None:
    write_rows(path, _CURVE_FIELDS, rows)
    if plotted:
        plot_curve(plotted, os.path.join(cfg.out, "curve.png"),
                   f"{cfg.variant} {json.dumps(cfg.options)} ({cfg.algorithm})")


def whole_game_rows(rows: list[dict], weights: dict) -> list[dict]:
    """Part ``whole``: the vira parts' weighted sums at the iterations every part reached.

    Best response conditions on the public vira, so the whole hand's BR values, value and
    exploitability are the parts' weighted by the chance of their viras; solver seconds add up.
    """
    by_part: dict = {p: {r["iteration"]: r for r in rows if r["part"] == p} for p in weights}
    common = sorted(set.intersection(*(set(v) for v in by_part.values()))) if by_part else []
    out = []
    for it in common:
        row = {"part": "whole", "iteration": it}
        for k in ("seconds", "cpu_seconds", "elapsed"):
            row[k] = round(sum(by_part[p][it][k] for p in weights), 2)
        for k in ("exploitability", "value", "br0", "br1"):
            row[k] = sum(w * by_part[p][it][k] for p, w in weights.items())
        out.append(row)
    return out


def run_vira(cfg: CFRConfig, rules, resume: bool, start: float, rows: list, log=print) -> dict:
    """Heads-up Paulista: solve each vira subgame in turn, then the whole hand's curve and strategy.

    A finished part is kept as its own strategy file (``part_viraK.npz``), so ``--resume`` skips it;
    an unfinished one resumes from its checkpoint. The wall-time budget left is shared equally by the
    parts still to solve, so that they reach the same iterations.
    """
    from agents.cfr.strategy import StrategyTable, load_strategy, save_strategy
    from agents.cfr.tree import vira_subgames

    fam = rules.family
    subgames = vira_subgames(rules)
    log(f"{len(subgames)} vira subgames: " + ", ".join(
        f"{'/'.join(fam.format(v) for v in members)} ({w:.3f})" for _, w, members in subgames))
    parts, info, weights = {}, [], {}
    for k, (vira, weight, members) in enumerate(subgames):
        part = f"vira{k}"
        weights[part] = weight
        done = os.path.join(cfg.out, f"part_{part}.npz")
        if resume and os.path.exists(done):
            saved = load_strategy(done, rules)
            if saved.header["iterations"] >= cfg.iterations or saved.header.get("target_reached"):
                parts[part] = saved.parts["main"]
                info.append(saved.header["subgame"])
                log(f"[{part}] finished before: {saved.header['iterations']} iterations, "
                    f"exploitability {saved.header['exploitability']:.5f}")
                continue
        deadline = time.time() + (start + cfg.time_limit - time.time()) / (len(subgames) - k)
        tree, solver = _solve_part(cfg, rules, part, deadline, resume, rows, log=log, vira=vira)
        ev = solver.evaluate()
        parts[part] = StrategyTable.from_solver(tree, solver, solver.average_strategy())
        sub = {"part": part, "vira": fam.format(vira), "viras": [fam.format(v) for v in members], "weight": weight,
               "size": tree.size(), "situations": tree.situations, "iterations": solver.iteration,
               "exploitability": ev["exploitability"], "value_seat0": ev["value"], "br0": ev["br0"], "br1": ev["br1"],
               "build_seconds": tree.build_seconds, "solve_seconds": solver.seconds,
               "solve_cpu_seconds": solver.cpu_seconds}
        info.append(sub)
        reached = bool(cfg.target_exploitability and ev["exploitability"] <= cfg.target_exploitability)
        save_strategy(done, {"variant": cfg.variant, "options": dict(rules.options), "rules_key": rules.key,
                             "dealer": cfg.dealer, "score": list(cfg.score), "abstraction": cfg.abstraction,
                             "algorithm": cfg.algorithm, "iterations": solver.iteration,
                             "exploitability": ev["exploitability"], "target_reached": reached, "subgame": sub},
                      {"main": parts[part]})
        log(f"[{part}] vira {sub['vira']}: exploitability {ev['exploitability']:.5f} after {solver.iteration} "
            f"iterations ({solver.cpu_seconds:.0f} CPU s)")
        del tree, solver
    rows[:] = [r for r in rows if r["part"] != "whole"]
    whole = whole_game_rows(rows, weights)
    total = {k: sum(s["weight"] * s[k] for s in info) for k in ("exploitability", "value_seat0", "br0", "br1")}
    sizes = {k: sum(s["size"][k] for s in info) for k in ("public_nodes", "public_leaves", "infosets",
                                                          "infoset_actions")}
    summary = {"config": asdict(cfg), "rules_key": rules.key, "subgames": info, "whole": {
        **total, "size": sizes, "iterations": min(s["iterations"] for s in info),
        "build_seconds": sum(s["build_seconds"] for s in info),
        "solve_cpu_seconds": sum(s["solve_cpu_seconds"] for s in info)}}
    summary["wall_seconds"] = time.time() - start
    summary["cpu_seconds"] = time.process_time()
    header = {"variant": cfg.variant, "options": dict(rules.options), "rules_key": rules.key, "dealer": cfg.dealer,
              "score": list(cfg.score), "abstraction": cfg.abstraction, "algorithm": cfg.algorithm,
              "iterations": summary["whole"]["iterations"], "exploitability": total["exploitability"],
              "value_seat0": total["value_seat0"], "subgames": info,
              "viras": {fam.format(v): f"vira{k}" for k, (_, _, members) in enumerate(subgames) for v in members}}
    save_strategy(os.path.join(cfg.out, "strategy.npz"), header, parts)
    _write_curve(cfg, os.path.join(cfg.out, "curve.csv"), rows + whole, whole)
    atomic_write_text(os.path.join(cfg.out, "summary.json"), json.dumps(summary, indent=2, default=float))
    log(f"whole hand: exploitability {total['exploitability']:.5f} points/hand (weighted over {len(info)} vira "
        f"subgames); wall {summary['wall_seconds']:.0f}s; strategy: {os.path.join(cfg.out, 'strategy.npz')}")
    return summary


def run_mccfr(cfg: CFRConfig, rules, resume: bool, deadline: float, log=print) -> dict:
    """MCCFR: train to the iteration / CPU / wall budget, checkpoint, write the strategy (heads-up rules:
    :func:`train.algos.hu_mccfr.run_hu_mccfr`)."""
    from tqdm import tqdm

    from agents.cfr.mccfr import MCCFR

    if rules.players == 2:
        from train.algos.hu_mccfr import run_hu_mccfr

        return run_hu_mccfr(cfg, rules, resume, deadline, log)
    if cfg.dealer != 0 or list(cfg.score) != [0, 0]:
        raise TrucError("MCCFR trains one hand from 0-0 with dealer 0 (keys are relative to the dealer)")
    start = time.time()
    config.output_folder(cfg.out)
    solver = MCCFR(rules, cfg.algorithm, seed=cfg.seed, weighting=cfg.weighting, epsilon=cfg.epsilon)
    ckpt = os.path.join(cfg.out, "checkpoint.npz")
    curve_csv = os.path.join(cfg.out, "curve.csv")
    rows: list[dict] = []
    if resume and os.path.exists(ckpt):
        resume_from(ckpt, lambda: solver.load_checkpoint(ckpt))
        if os.path.exists(curve_csv):
            with open(curve_csv) as f:
                rows = [r for r in csv.DictReader(f) if int(r["iteration"]) <= solver.iteration]
        log(f"resumed at iteration {solver.iteration} ({len(solver.table)} information sets)")
    step = max(1, min(cfg.checkpoint_every, 100))
    # a with-block: the bar is closed on an error too, so the error gets a line of its own
    with tqdm(total=cfg.iterations, initial=solver.iteration, desc=cfg.algorithm, unit="it") as bar:
        last_ckpt = solver.iteration
        while solver.iteration < cfg.iterations and time.time() < deadline and not (
                cfg.cpu_limit and solver.cpu_seconds >= cfg.cpu_limit):
            n = min(step, cfg.iterations - solver.iteration)
            solver.iterate(n)
            bar.update(n)
            bar.set_postfix(infosets=len(solver.table), cpu=f"{solver.cpu_seconds:.0f}s")
            if solver.iteration - last_ckpt >= cfg.checkpoint_every:
                rows.append({"iteration": solver.iteration, "cpu_seconds": round(solver.cpu_seconds, 2),
                             "elapsed": round(time.time() - start, 2), "infosets": len(solver.table),
                             "nodes": solver.nodes})
                solver.save_checkpoint(ckpt)
                _write_rows(curve_csv, rows)
                last_ckpt = solver.iteration
    if not rows or int(rows[-1]["iteration"]) != solver.iteration:
        rows.append({"iteration": solver.iteration, "cpu_seconds": round(solver.cpu_seconds, 2),
                     "elapsed": round(time.time() - start, 2), "infosets": len(solver.table),
                     "nodes": solver.nodes})
    solver.save_checkpoint(ckpt)
    _write_rows(curve_csv, rows)
    strategy_path = os.path.join(cfg.out, "strategy.npz")
    solver.save_strategy(strategy_path, {"threshold": cfg.threshold, "exclude": list(cfg.exclude)})
    summary = {"config": asdict(cfg), "rules_key": rules.key, "algorithm": cfg.algorithm,
               "iterations": solver.iteration, "cpu_seconds": solver.cpu_seconds, "nodes": solver.nodes,
               "nodes_per_cpu_second": solver.nodes / max(solver.cpu_seconds, 1e-9),
               "infosets": len(solver.table), "wall_seconds": time.time() - start, "strategy": strategy_path}
    atomic_write_text(os.path.join(cfg.out, "summary.json"), json.dumps(summary, indent=2, default=float))
    log(f"{cfg.algorithm}: {solver.iteration} iterations, {solver.cpu_seconds:.0f} CPU s, "
        f"{len(solver.table)} information sets; strategy: {strategy_path}")
    return summary


def _write_rows(path: str, rows: list[dict]) -> None:
    write_rows(path, ["iteration", "cpu_seconds", "elapsed", "infosets", "nodes"], rows)
