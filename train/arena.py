"""Tournaments: round-robin or gauntlet, duplicate deals, honest statistics, resumable.

An *entrant* is an agent spec (``heuristic:honest``) or, in partnership games, a team of two specs
(``heuristic:honest+random``: the first plays seats of side's first seat). A *pairing* is two
entrants; a *unit* is one pairing on one deal seed, played once per seating (the entrants swap sides —
in ``put_n`` the first entrant takes each seat in turn) when ``duplicate`` is on, so card luck
cancels. Units are independent: they run on worker processes (or Ray tasks), each finished unit is
appended to ``units.jsonl``, and ``--resume`` skips those already there. The summary is computed
from the units in canonical order, so the same config gives the same ``summary.json`` whether the run
was interrupted or not, and whatever the number of workers.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from truc_env.atomic import atomic_open, atomic_write_text
from truc_env.errors import TrucError
from truc_env.rules import make_rules

from . import stats

DEFAULTS = {
    "variant": "le_truc",
    "options": {},
    "agents": ["random", "heuristic:honest", "heuristic:bluffer", "heuristic:cautious"],
    "format": "round_robin",
    "hero": None,
    "deals": 40,
    "duplicate": True,
    "episode": "game",
    "seed": 0,
    "workers": 2,
    "backend": "multiprocessing",
    "out": "results/arena",
}


@dataclass
class ArenaConfig:
    variant: str = "le_truc"
    options: dict = field(default_factory=dict)
    agents: list = field(default_factory=lambda: list(DEFAULTS["agents"]))
    format: str = "round_robin"  # or "gauntlet": hero against every other entrant
    hero: str | None = None
    deals: int = 40  # deal seeds per pairing
    duplicate: bool = True  # play each deal in every seating
    episode: str = "game"  # "game" (to the target) or "hand"
    seed: int = 0
    workers: int = 2
    backend: str = "multiprocessing"  # or "ray"
    out: str = "results/arena"

    @classmethod
    def from_dict(cls, cfg: dict) -> ArenaConfig:
        unknown = set(cfg) - set(DEFAULTS)
        if unknown:
            raise TrucError(f"unknown arena setting(s) {sorted(unknown)}; allowed: {sorted(DEFAULTS)}")
        c = cls(**{**DEFAULTS, **cfg})
        c.validate()
        return c

    def validate(self) -> None:
        make_rules(self.variant, **(self.options or {}))
        if not isinstance(self.agents, list) or len(self.agents) < 2 or len(set(self.agents)) != len(self.agents):
            raise TrucError("arena 'agents' must list at least two distinct agent specs")
        if self.format not in ("round_robin", "gauntlet"):
            raise TrucError(f"arena format {self.format!r} is invalid; allowed: round_robin, gauntlet")
        if self.format == "gauntlet" and self.hero not in self.agents:
            raise TrucError(f"a gauntlet needs 'hero' set to one of the agents {self.agents}")
        if self.episode not in ("game", "hand"):
            raise TrucError(f"arena episode {self.episode!r} is invalid; allowed: game, hand")
        if not isinstance(self.deals, int) or self.deals < 1:
            raise TrucError(f"arena deals must be a positive integer, got {self.deals!r}")
        if self.backend not in ("multiprocessing", "ray"):
            raise TrucError(f"arena backend {self.backend!r} is invalid; allowed: multiprocessing, ray")
        if not isinstance(self.workers, int) or self.workers < 1:
            raise TrucError(f"arena workers must be a positive integer, got {self.workers!r}")

    def fingerprint(self) -> dict:
        """What must match for --resume to reuse finished units."""
        d = asdict(self)
        for k in ("workers", "backend", "out"):
            d.pop(k)
        return d


# ---------------------------------------------------------------------- seating
def team_members(entrant: str, rules) -> list[str]:
    members = entrant.split("+")
    if len(members) == 1:
        return members * (2 if rules.partnership else 1)
    if not rules.partnership or len(members) != 2:
        raise TrucError(f"entrant {entrant!r}: 'A+B' teams exist only in partnership games (two players)")
    return members


def seatings(rules) -> int:
    """How many seatings a duplicate deal is played in."""
    return rules.players if rules.put_n else 2


def seat_entrants(rules, a: str, b: str, seating: int) -> tuple[list[str], list[int]]:
    """Agent spec per seat, and the seats entrant ``a`` holds, for one seating."""
    n = rules.players
    if rules.put_n:
        specs = [b] * n
        specs[seating] = a
        return specs, [seating]
    a_side = seating % 2
    ta, tb = team_members(a, rules), team_members(b, rules)
    specs, a_seats, counters = [], [], [0, 0]
    for s in range(n):
        side = rules.side(s)
        team = ta if side == a_side else tb
        specs.append(team[counters[side] % len(team)])
        counters[side] += 1
        if side == a_side:
            a_seats.append(s)
    return specs, a_seats


# ---------------------------------------------------------------------- units
def pairings(cfg: ArenaConfig) -> list[tuple[str, str]]:
    if cfg.format == "gauntlet":
        return [(cfg.hero, x) for x in cfg.agents if x != cfg.hero]
    return list(itertools.combinations(cfg.agents, 2))


def units_of(cfg: ArenaConfig) -> list[dict]:
    units = []
    for p, (a, b) in enumerate(pairings(cfg)):
        for d in range(cfg.deals):
            units.append({"id": f"{p}:{d}", "pairing": p, "a": a, "b": b, "deal": d})
    return units


_AGENT_CACHE: dict = {}


def _agent(spec: str, rules, seed: int):
    from agents import make_agent

    key = (spec, rules.key)
    agent = _AGENT_CACHE.get(key)
    if agent is None:
        agent = _AGENT_CACHE[key] = make_agent(spec, rules, seed)
    if hasattr(agent, "reset"):
        agent.reset(seed)
    return agent


def play_unit(cfg_dict: dict, unit: dict) -> dict:
    """Play one unit (all its seatings) and return its results; runs in a worker."""
    from .match import play_game

    cfg = ArenaConfig.from_dict(cfg_dict)
    rules = make_rules(cfg.variant, **cfg.options)
    deal_seed = int(np.random.SeedSequence([cfg.seed, unit["deal"]]).generate_state(1)[0])
    k = seatings(rules)
    which = range(k) if cfg.duplicate else [unit["deal"] % k]
    games = []
    for seating in which:
        specs, a_seats = seat_entrants(rules, unit["a"], unit["b"], seating)
        agents = []
        for s, spec in enumerate(specs):
            agent_seed = int(np.random.SeedSequence([cfg.seed, unit["pairing"], unit["deal"], seating, s])
                             .generate_state(1)[0])
            # the same spec at two seats needs two objects (agents may keep per-game memory)
            agents.append(_agent(spec, rules, agent_seed) if specs.count(spec) == 1 else
                          _fresh_agent(spec, rules, agent_seed))
        res = play_game(rules, agents, deal_seed, episode=cfg.episode)
        a_ret = res.returns[a_seats[0]]
        a_side = rules.side(a_seats[0])
        # a hand episode is won by scoring more than the opponents; a drawn one has no result
        a_won = None if res.winner_side < 0 else int(res.winner_side == a_side)
        games.append({"seating": seating, "a_points": a_ret, "hands": res.hands, "a_won": a_won,
                      "record": res.record})
    return {"id": unit["id"], "pairing": unit["pairing"], "deal": unit["deal"], "games": games}


def _fresh_agent(spec: str, rules, seed: int):
    from agents import make_agent

    return make_agent(spec, rules, seed)


# ---------------------------------------------------------------------- running
def _load_done(path: Path) -> dict:
    done = {}
    if not path.exists():
        return done
    good = 0
    with open(path, "rb") as f:
        data = f.read()
    for line in data.split(b"\n"):
        if not line.strip():
            good += len(line) + 1
            continue
        try:
            u = json.loads(line)
        except json.JSONDecodeError:
            break  # a line cut by an interruption: drop it and everything after
        done[u["id"]] = u
        good += len(line) + 1
    if good < len(data):
        with open(path, "r+b") as f:
            f.truncate(min(good, len(data)))
    return done


def run_arena(cfg: ArenaConfig, resume: bool = False, progress: bool = True, max_units: int | None = None) -> dict:
    """Run (or resume) a tournament, write its results folder, and return the summary."""
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    meta_path, units_path = out / "config.json", out / "units.jsonl"
    if resume and meta_path.exists():
        saved = json.loads(meta_path.read_text())
        if saved != cfg.fingerprint():
            raise TrucError(f"--resume: {out} holds a tournament with another config; use another 'out' folder")
        done = _load_done(units_path)
    else:
        if units_path.exists() and not resume:
            units_path.unlink()
        done = {}
        atomic_write_text(meta_path, json.dumps(cfg.fingerprint(), indent=1, sort_keys=True))
    todo = [u for u in units_of(cfg) if u["id"] not in done]
    if max_units is not None:
        todo = todo[:max_units]
    cfg_dict = {k: v for k, v in asdict(cfg).items()}
    t0 = time.time()
    hands = 0
    with open(units_path, "a") as sink:
        for result in _execute(cfg, cfg_dict, todo, progress):
            sink.write(json.dumps(result) + "\n")
            sink.flush()  # survives a killed process; the fsync below guards against a lost machine
            done[result["id"]] = result
            hands += sum(g["hands"] for g in result["games"])
        os.fsync(sink.fileno())
    elapsed = time.time() - t0
    all_ids = [u["id"] for u in units_of(cfg)]
    if any(i not in done for i in all_ids):
        return {"complete": False, "units_done": len(done), "units": len(all_ids)}
    results = [done[i] for i in all_ids]
    summary = stats.summarize(cfg, results)
    write_outputs(cfg, results, summary, out, hands_per_second=hands / elapsed if elapsed > 0 and hands else None)
    return summary


def _execute(cfg: ArenaConfig, cfg_dict: dict, todo: list[dict], progress: bool):
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc="arena", unit="deal", disable=not progress or not todo)
    try:
        if cfg.backend == "ray":
            yield from _execute_ray(cfg, cfg_dict, todo, bar)
        elif cfg.workers == 1 or len(todo) <= 1:
            for u in todo:
                yield play_unit(cfg_dict, u)
                bar.update()
        else:
            import multiprocessing as mp

            ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
            with ctx.Pool(cfg.workers) as pool:
                chunk = max(1, min(16, len(todo) // (cfg.workers * 8)))  # tiny units: batch the IPC
                for result in pool.imap_unordered(_play_unit_star, [(cfg_dict, u) for u in todo], chunksize=chunk):
                    yield result
                    bar.update()
    finally:
        bar.close()


def _play_unit_star(args):
    return play_unit(*args)


def _execute_ray(cfg, cfg_dict, todo, bar):
    try:
        import ray
    except ImportError:
        raise TrucError("backend 'ray' needs Ray: pip install 'truc-env[distributed]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=cfg.workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(play_unit)
    pending = [remote.remote(cfg_dict, u) for u in todo]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            yield ray.get(ref)
            bar.update()


# ---------------------------------------------------------------------- outputs
def write_outputs(cfg: ArenaConfig, results: list[dict], summary: dict, out: Path,
                  hands_per_second: float | None = None) -> None:
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=1, sort_keys=True) + "\n")
    lines = []
    for r in results:
        for g in r["games"]:
            lines.append(json.dumps({"unit": r["id"], "seating": g["seating"], "record": g["record"]}))
    atomic_write_text(out / "games.jsonl", "\n".join(lines) + "\n")
    with atomic_open(out / "summary.csv", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rank", "entrant", "elo", "elo_lo", "elo_hi", "points_per_hand", "games", "separated_from_next"])
        for row in summary["ranking"]:
            w.writerow([row["rank"], row["entrant"], f"{row['elo']:.1f}", f"{row['elo_lo']:.1f}",
                        f"{row['elo_hi']:.1f}", f"{row['points_per_hand']:.4f}", row["games"],
                        row["separated_from_next"]])
    from . import report

    report.write_report(cfg, summary, out, hands_per_second)
