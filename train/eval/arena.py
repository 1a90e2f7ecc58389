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

from train import config
from train.eval import stats
from train.eval.match import pairings, seat_entrants, seatings, team_members
from truc_env.errors import TrucError
from truc_env.io.atomic import atomic_open, atomic_write_text


@dataclass
class ArenaConfig(config.RunConfig):
    KIND = "arena"
    agents: list = field(default_factory=lambda: ["random", "heuristic:honest", "heuristic:bluffer",
                                                  "heuristic:cautious"])
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
    def from_dict(cls, cfg: dict, source: str = "arena config") -> ArenaConfig:
        """A checked config from a mapping of settings (missing ones take the defaults)."""
        return config.build(cls, cfg, source)

    def validate(self) -> None:
        """Cross-setting rules: the variant's options, the entrants, the gauntlet's hero."""
        rules = self.rules()
        for entrant in self.agents:
            team_members(entrant, rules)
        if self.format == "gauntlet" and self.hero not in self.agents:
            raise TrucError(f"a gauntlet needs 'hero' set to one of the agents {self.agents}")

    def fingerprint(self) -> dict:
        """What must match for --resume to reuse finished units."""
        d = asdict(self)
        for k in ("workers", "backend", "out"):
            d.pop(k)
        return d


ArenaConfig.SCHEMA = {
    **config.RUN_SCHEMA, "agents": config.List(config.STR, min_len=2, unique=True),
    "format": config.Choice("round_robin", "gauntlet"), "hero": config.Setting("str", none=True),
    "deals": config.Int(1, 10**9), "duplicate": config.BOOL, "episode": config.Choice("game", "hand"),
    "seed": config.SEED, "workers": config.WORKERS, "backend": config.Choice("multiprocessing", "ray"),
    "out": config.STR,
}


# ---------------------------------------------------------------------- units
def units_of(cfg: ArenaConfig):
    """The units in canonical order, generated as they are needed (a million deals cost no memory)."""
    for p, (a, b) in enumerate(cfg_pairings(cfg)):
        for d in range(cfg.deals):
            yield {"id": f"{p}:{d}", "pairing": p, "a": a, "b": b, "deal": d}


def cfg_pairings(cfg: ArenaConfig) -> list[tuple[str, str]]:
    """The pairings of a config's tournament."""
    return pairings(cfg.format, cfg.agents, cfg.hero)


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


def load_agents(cfg: ArenaConfig) -> None:
    """Load every entrant's agents once (workers forked after this inherit them); TrucError for a bad spec."""
    rules = cfg.rules()
    for entrant in cfg.agents:
        for spec in dict.fromkeys(team_members(entrant, rules)):
            _agent(spec, rules, cfg.seed)


def play_units(cfg_dict: dict, units: list[dict]) -> list[dict]:
    """Play several units in a worker (tiny units: one call per batch saves the IPC)."""
    return [play_unit(cfg_dict, u) for u in units]


def play_unit(cfg_dict: dict, unit: dict) -> dict:
    """Play one unit (all its seatings) and return its results; runs in a worker."""
    from train.eval.match import play_game

    cfg = ArenaConfig(**cfg_dict)  # checked by the parent (a Ray node may have fewer cores)
    rules = cfg.rules()
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
            uid = u["id"]
        except (ValueError, KeyError, TypeError):  # bad JSON or bytes that are not UTF-8 (ValueErrors), no id
            break  # a line cut by an interruption or damaged: drop it and everything after (replayed)
        done[uid] = u
        good += len(line) + 1
    if good < len(data):
        with open(path, "r+b") as f:
            f.truncate(min(good, len(data)))
    return done


def run_arena(cfg: ArenaConfig, resume: bool = False, progress: bool = True, max_units: int | None = None) -> dict:
    """Run (or resume) a tournament, write its results folder, and return the summary."""
    out = Path(cfg.out)
    meta_path, units_path = out / "config.json", out / "units.jsonl"
    config.output_folder(out)
    try:
        if resume and meta_path.exists():
            try:
                saved = json.loads(meta_path.read_text())
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise TrucError(f"--resume: {meta_path} is not a tournament's config.json; "
                                "use another 'out' folder") from None
            if saved != cfg.fingerprint():
                raise TrucError(f"--resume: {out} holds a tournament with another config; use another 'out' folder")
            done = _load_done(units_path)
        else:
            if units_path.exists() and not resume:
                units_path.unlink()
            done = {}
            atomic_write_text(meta_path, json.dumps(cfg.fingerprint(), indent=1, sort_keys=True))
        sink = open(units_path, "a")
    except OSError as e:
        raise TrucError(f"arena output folder {out} is not writable ({e.strerror}); choose another 'out'") from None
    n_units = len(cfg_pairings(cfg)) * cfg.deals
    todo = (u for u in units_of(cfg) if u["id"] not in done)
    n_todo = n_units - len(done)  # the fingerprint matched: every id done is one of this config's units
    if max_units is not None:
        todo = itertools.islice(todo, max_units)
        n_todo = min(n_todo, max_units)
    cfg_dict = asdict(cfg)
    if n_todo:
        load_agents(cfg)  # in the parent: a bad agent file ends the run here, before any worker starts
    t0 = time.time()
    hands = 0
    with sink:
        for result in _execute(cfg, cfg_dict, todo, n_todo, progress):
            sink.write(json.dumps(result) + "\n")
            sink.flush()  # survives a killed process; the fsync below guards against a lost machine
            done[result["id"]] = result
            hands += sum(g["hands"] for g in result["games"])
        os.fsync(sink.fileno())
    elapsed = time.time() - t0
    if len(done) < n_units or any(u["id"] not in done for u in units_of(cfg)):
        return {"complete": False, "units_done": len(done), "units": n_units}
    results = [done[u["id"]] for u in units_of(cfg)]
    summary = stats.summarize(cfg, results)
    write_outputs(cfg, results, summary, out, hands_per_second=hands / elapsed if elapsed > 0 and hands else None)
    return summary


def _execute(cfg: ArenaConfig, cfg_dict: dict, todo, n_todo: int, progress: bool):
    from tqdm import tqdm

    bar = tqdm(total=n_todo, desc="arena", unit="deal", disable=not progress or not n_todo)
    try:
        if cfg.backend == "ray":
            yield from _execute_ray(cfg, cfg_dict, todo, bar)
        elif config.worker_count(cfg.workers) == 1 or n_todo <= 1:
            for u in todo:
                yield play_unit(cfg_dict, u)
                bar.update()
        else:
            yield from _execute_pool(cfg, cfg_dict, todo, n_todo, bar)
    finally:
        bar.close()


def _execute_pool(cfg, cfg_dict, todo, n_todo: int, bar):
    """Units on worker processes. A worker's exception ends the run with its message, and a worker that
    dies (killed, out of memory) ends it too (a ``concurrent.futures`` pool notices; ``multiprocessing.Pool``
    would wait forever for the lost units). Units finished before stay in units.jsonl for ``--resume``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
    workers = min(config.worker_count(cfg.workers), n_todo)
    chunk = max(1, min(16, n_todo // (workers * 8)))  # tiny units: batch the IPC
    pool = ProcessPoolExecutor(workers, mp_context=ctx)
    try:
        # windows of units, so that a long tournament is never queued whole
        while batch := list(itertools.islice(todo, workers * chunk * 64)):
            futures = [pool.submit(play_units, cfg_dict, batch[i:i + chunk]) for i in range(0, len(batch), chunk)]
            for future in as_completed(futures):
                for result in future.result():
                    yield result
                    bar.update()
    except BrokenProcessPool:
        raise TrucError(f"an arena worker process died (killed, or out of memory); the units finished so far are "
                        f"kept in {cfg.out}/units.jsonl: run again with --resume to continue") from None
    except TrucError:
        raise
    except Exception as e:
        raise TrucError(f"an arena worker failed: {type(e).__name__}: {e}; the units finished so far are kept in "
                        f"{cfg.out}/units.jsonl (--resume continues)") from e
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _execute_ray(cfg, cfg_dict, todo, bar):
    try:
        import ray
    except ImportError:
        raise TrucError("backend 'ray' needs Ray: pip install 'truc-env[distributed]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=config.worker_count(cfg.workers), include_dashboard=False, log_to_driver=False)
    remote = ray.remote(play_unit)
    pending = [remote.remote(cfg_dict, u) for u in todo]  # Ray schedules its own queue
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
    from train.eval import report

    report.write_report(cfg, summary, out, hands_per_second)
