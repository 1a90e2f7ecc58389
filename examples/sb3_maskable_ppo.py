"""sb3-contrib's MaskablePPO on one seat of Le Truc against a heuristic bot.

    pip install "truc-env[sb3]"
    python examples/sb3_maskable_ppo.py --steps 20000

MaskablePPO reads the legal actions from ``env.action_masks()``, which ``SingleAgentEnv`` provides,
so no wrapper is needed; masked sampling never picks an illegal action.
"""

from __future__ import annotations

import argparse

from sb3_contrib import MaskablePPO

from truc_env.envs.gym_env import SingleAgentEnv, evaluate


def train(variant: str = "le_truc", steps: int = 20_000, opponents="heuristic:honest", seed: int = 0,
          n_steps: int = 512, batch_size: int = 64) -> MaskablePPO:
    """Train MaskablePPO for ``steps`` environment steps on one-hand episodes."""
    env = SingleAgentEnv(variant, opponents=opponents, episode="hand")
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=batch_size, seed=seed, verbose=0,
                        device="cpu")
    return model.learn(total_timesteps=steps)


def policy_of(model: MaskablePPO):
    """The trained policy as ``(observation, action_mask) -> action`` (greedy, masked)."""
    return lambda observation, mask: int(model.predict(observation, action_masks=mask, deterministic=True)[0])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="le_truc")
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--opponents", default="heuristic:honest")
    p.add_argument("--episodes", type=int, default=500, help="evaluation hands")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    model = train(a.variant, a.steps, a.opponents, a.seed)
    env = SingleAgentEnv(a.variant, opponents=a.opponents, episode="hand", illegal="raise")
    print(f"mean points per hand against {a.opponents}: {evaluate(policy_of(model), env, a.episodes, a.seed):+.3f}")


if __name__ == "__main__":
    main()
