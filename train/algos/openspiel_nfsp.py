"""OpenSpiel's own NFSP (``open_spiel.python.pytorch.nfsp``) on ``python_truc``, measured exactly.

The comparison point for :mod:`train.algos.ppo` and :mod:`train.algos.psro` written by no one here: two NFSP
agents (Heinrich & Silver 2016) play one hand per episode of the game registered by
:mod:`truc_env.envs.openspiel_game` through OpenSpiel's ``rl_environment``. The budget is learner steps
(decisions of either agent), as in PPO. Every ``eval_every`` steps the agents' *average policy*
network (what NFSP outputs) is written into the public-tree table and best-responded to exactly
(:func:`train.eval.exploitability.policy_exploitability`); its input is OpenSpiel's information-state
tensor, which :func:`agents.network.network.encode_state` with ``info_state`` reproduces from an engine
state.

    python -m train.algos.openspiel_nfsp --options '{"ranks": 4, "hand_size": 2, "max_raises": 2, "redeal": false}' \\
        --steps 100000 --seed 0 --out runs/nfsp_small
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from truc_env.errors import TrucError
from truc_env.io.atomic import atomic_write_text


class NFSPAverageAgent:
    """Seat ``q`` of the hand plays NFSP agent ``q``'s average-policy network (an agent that says its
    probabilities, for :func:`train.eval.exploitability.probability_function`)."""

    name = "nfsp"

    def __init__(self, agents):
        self.agents = agents

    def probabilities(self, observation, mask) -> np.ndarray:
        import torch

        from agents.network.network import encode_state

        x = observation.apply(lambda state, seat: encode_state(state, seat, "info_state"))
        seat = observation.apply(lambda state, seat: seat)
        legal = np.asarray(mask, dtype=bool)
        with torch.no_grad():
            logits = self.agents[seat]._avg_network(torch.as_tensor(x, dtype=torch.float32).unsqueeze(0)).squeeze(0)
        logits = logits.numpy().astype(np.float64)
        logits[~legal] = -np.inf
        p = np.exp(logits - logits[legal].max())
        return p / p.sum()


def run(options: dict, steps: int, seed: int = 0, eval_every: int = 10_000, out: str = "runs/nfsp",
        variant: str = "le_truc", hidden=(64, 64), min_buffer: int = 1000, log=print) -> dict:
    """Train two NFSP agents for ``steps`` learner steps; returns the curve (also ``{out}/curve.csv``),
    the summary and, under ``policy``, the average policy as an agent.

    ``min_buffer``: transitions an agent's buffers hold before it learns (OpenSpiel's example: 1000;
    a tiny budget needs fewer, since only a tenth of the steps feed the average policy's buffer)."""
    try:
        import pyspiel
        import torch
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import nfsp
    except ImportError as e:
        raise TrucError(f"OpenSpiel's NFSP needs open_spiel, torch and dm-tree ({e}); "
                        "install them with pip install -e '.[openspiel,ppo]'") from None

    import truc_env.envs.openspiel_game  # noqa: F401  (registers python_truc)
    from train.eval.exploitability import default_cache_dir, policy_exploitability
    from truc_env.game.rules import make_rules

    if steps < 1 or eval_every < 1:
        raise TrucError(f"steps and eval_every must be at least 1, got {steps} and {eval_every}")
    rules = make_rules(variant, **options)
    if rules.redeal:
        raise TrucError("the NFSP comparison measures one hand without a redeal; set redeal: false")
    np.random.seed(seed)  # NFSP samples its actions and episode policies with numpy's global generator
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    game = pyspiel.load_game("python_truc", {"variant": variant, "episode": "hand", "dealer": 0,
                                             **{k: v for k, v in options.items()}})
    env = rl_environment.Environment(game, seed=seed)
    size = env.observation_spec()["info_state"][0]
    n_actions = env.action_spec()["num_actions"]
    # OpenSpiel's leduc_nfsp example settings, scaled to the budget
    agents = [nfsp.NFSP(p, size, n_actions, list(hidden), reservoir_buffer_capacity=200_000, anticipatory_param=0.1,
                        batch_size=min(128, min_buffer), rl_learning_rate=0.01, sl_learning_rate=0.01,
                        min_buffer_size_to_learn=min_buffer,
                        learn_every=64, optimizer_str="sgd", replay_buffer_capacity=200_000, epsilon_start=0.06,
                        epsilon_end=0.001, epsilon_decay_duration=steps, update_target_network_every=1000,
                        seed=seed + 10 * p) for p in range(2)]
    avg = NFSPAverageAgent(agents)
    rows, done, cpu0 = [], 0, time.process_time()

    def measure():
        r = policy_exploitability(avg, rules, seed=seed, log=lambda msg: None, cache_dir=default_cache_dir())
        rows.append({"global_step": done, "exploitability": float(r["exploitability"]), "br0": float(r["br0"]),
                     "br1": float(r["br1"]), "cpu_seconds": time.process_time() - cpu0})
        log(f"nfsp step {done}: average-policy exploitability {r['exploitability']:.4f}")

    measure()
    next_eval = eval_every
    while done < steps:
        ts = env.reset()
        while not ts.last():
            p = ts.observations["current_player"]
            ts = env.step([agents[p].step(ts).action])
            done += 1
        for a in agents:
            a.step(ts)
        if done >= next_eval or done >= steps:
            measure()
            next_eval += eval_every
    os.makedirs(out, exist_ok=True)
    lines = ["global_step,exploitability,br0,br1,cpu_seconds"]
    lines += [",".join(str(r[k]) for k in ("global_step", "exploitability", "br0", "br1", "cpu_seconds")) for r in rows]
    atomic_write_text(os.path.join(out, "curve.csv"), "\n".join(lines) + "\n")
    summary = {"variant": variant, "options": options, "steps": done, "seed": seed, "exploitability": rows[-1]["exploitability"],
               "cpu_seconds": time.process_time() - cpu0}
    atomic_write_text(os.path.join(out, "summary.json"), json.dumps(summary, indent=2))
    return {"rows": rows, **summary, "policy": avg}


def main(argv=None) -> None:
    """``python -m train.algos.openspiel_nfsp --options JSON --steps N [--seed S] [--eval-every K] [--out DIR]``."""
    from train.config import parse_options

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--options", help="the variant's options as JSON (redeal must be false)")
    p.add_argument("--steps", type=int, required=True, help="learner steps (decisions of both agents): the budget")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=10_000)
    p.add_argument("--min-buffer", type=int, default=1000, help="transitions buffered before an agent learns")
    p.add_argument("--out", default="runs/nfsp")
    args = p.parse_args(argv)
    try:
        run(parse_options(args.options), args.steps, args.seed, args.eval_every, args.out, args.variant,
            min_buffer=args.min_buffer)
    except TrucError as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
