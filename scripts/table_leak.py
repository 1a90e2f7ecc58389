"""How a table that always plays the lowest card of a class leaks its hand (docs/approx_exploitability.md).

    python scripts/table_leak.py --out docs/results/data/table_leak_put.json

On shrunk heads-up Put (``approx_solved.SHRUNK``), a CFR+ table of 300 iterations and a response learned
against it as ``scripts/approx_solved.py`` learns one (seed 0, 400,000 steps), against the table as it played
before 2026-12-06: the lowest card id of the class it chose (:class:`LowestCard`). Then, on the same ``--deals``
fresh duplicate deals (measurement seed 1):

- the table's exact best response, written as a table and played in the arena: its exact value, as a check
  that the arena and the public tree agree;
- the learned response's own policy, tabulated on the public tree and evaluated exactly against the table;
- the learned response played (greedily) against the table it learned against, and against the table as it
  plays now (a class's probability spread evenly over its legal cards).

``--openspiel``: instead, the exact check by OpenSpiel's own ``exploitability`` on its ``python_truc`` game, whose
information states hold the cards with their suits: a CFR+ table of :data:`TINY_PUT` (200 iterations) exported
both ways (``agents.cfr.openspiel_export``), beside our public tree's figure. About 5 CPU-minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from approx_solved import LEARNER, SHRUNK, solved_table  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.cfr import agent as cfr_agent  # noqa: E402
from agents.cfr.strategy import load_strategy, save_table  # noqa: E402
from agents.cfr.tree import PLAY  # noqa: E402
from train.algos.psro import TableGame  # noqa: E402
from train.eval import approx_br  # noqa: E402
from train.eval import exploitability as ex  # noqa: E402
from truc_env.game.rules import make_rules  # noqa: E402
from truc_env.io.atomic import atomic_write_text  # noqa: E402


class LowestCard(cfr_agent.CFRAgent):
    """The table agent as it played before 2026-12-06: the lowest legal card id of the class it chose."""

    def policy(self, observation, action_mask):
        legal = cfr_agent.legal_for(self.rules, observation, action_mask)
        labels, probs = self.strategy.distribution(observation["info_state"])
        L, ab = self.layout, self.strategy.abstraction_of(observation["info_state"])
        first: dict[int, int] = {}
        for a in legal:
            if L.play <= a < L.play + len(L.deck):
                first.setdefault(ab.card_class[L.deck[a - L.play]], a)
        out: dict[int, float] = {}
        for lab, p in zip(labels, probs):
            a = first.get(int(lab) - PLAY) if lab >= PLAY else int(lab)
            if a is not None and a in legal and p > 0:
                out[a] = out.get(a, 0.0) + float(p)
        total = sum(out.values())
        return {a: p / total for a, p in out.items()}


@contextmanager
def lowest_card_play():
    """Every table agent built or asked inside plays as :class:`LowestCard` (the arena builds its own agents)."""
    even = cfr_agent.CFRAgent.policy
    cfr_agent.CFRAgent.policy = LowestCard.policy
    try:
        yield
    finally:
        cfr_agent.CFRAgent.policy = even


TINY_PUT = {"ranks": 2, "hand_size": 2, "max_raises": 1}  # 8 cards: the smallest Put with a put and a choice of card


def openspiel_check(options: dict = TINY_PUT, iterations: int = 200) -> dict:
    """OpenSpiel's exploitability of one CFR+ table of Put ``options``, played evenly within a class and by the
    lowest card id, beside the public tree's own figure (points per hand)."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    import truc_env.envs.openspiel_game  # noqa: F401  (registers python_truc)
    from agents.cfr.openspiel_export import to_tabular_policy

    rules = make_rules("put", **options)
    game = pyspiel.load_game("python_truc", {"variant": "put", "episode": "hand", "dealer": 0,
                                             "options": json.dumps(options)})
    with tempfile.TemporaryDirectory(prefix="table-leak-") as tmp:
        path, exact = solved_table(rules, tmp, iterations)
        out = {"options": options, "iterations": iterations, "ours": exact,
               "openspiel_even": float(exploitability.exploitability(game, to_tabular_policy(game, load_strategy(path))))}
        with lowest_card_play():
            out["openspiel_lowest_card"] = float(exploitability.exploitability(
                game, to_tabular_policy(game, load_strategy(path))))
    return out


def summary(v: dict) -> dict:
    return {k: v[k] for k in ("value", "lo", "hi", "side0", "side1", "deals", "eval_seed")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=4000)
    p.add_argument("--openspiel", action="store_true", help="the exact check by OpenSpiel instead (module docstring)")
    p.add_argument("--out")
    args = p.parse_args()
    if args.openspiel:
        out = openspiel_check()
        print(json.dumps(out, indent=1))
        if args.out:
            atomic_write_text(args.out, json.dumps(out, indent=1))
        return
    rules = make_rules("put", **SHRUNK["put"])
    quiet = lambda msg: None  # noqa: E731
    out: dict = {"variant": "put", "options": SHRUNK["put"], "deals": args.deals, "measurement_seed": 1}
    with tempfile.TemporaryDirectory(prefix="table-leak-") as tmp:
        path, exact = solved_table(rules, tmp)
        table = f"cfr:{path}"
        with lowest_card_play():
            r = approx_br.approx_exploitability(table, rules, 400_000, seed=0, eval_deals=200, overrides=LEARNER,
                                                out_dir=str(Path(tmp) / "br"), log=quiet)
            learned = f"greedy:ppo:{r['br_policy']}"
            out["learned_vs_lowest_card"] = summary(approx_br.measure_value(learned, table, rules, args.deals, seed=1))
        # the exact best response as a table of its own, and the learned response tabulated, on one tree
        rt = ex.policy_exploitability(make_agent(table, rules, seed=0), rules, keep=True, log=quiet)
        rb = ex.policy_exploitability(make_agent(learned, rules, seed=0), rules, keep=True, log=quiet)
        tree, solver, sigma, _ = rt["parts"]["main"]
        mine = rb["parts"]["main"][2]
        game = TableGame(tree, solver)
        out["exact"] = {"exploitability": rt["exploitability"], "br0": rt["br0"], "br1": rt["br1"]}
        out["learned_exact"] = {"side0": game.value(game.combine(mine, sigma)),
                                "side1": -game.value(game.combine(sigma, mine))}
        both = game.best_response(sigma)[0]  # the exact best response at either seat (Put has no redeal)
        br_path = str(Path(tmp) / "exact_br.npz")
        save_table(br_path, tree, solver, both)
        out["exact_br_in_arena"] = summary(approx_br.measure_value(f"cfr:{br_path}", table, rules, args.deals, seed=1))
        out["learned_vs_even"] = summary(approx_br.measure_value(learned, table, rules, args.deals, seed=1))
    print(json.dumps(out, indent=1))
    if args.out:
        atomic_write_text(args.out, json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
