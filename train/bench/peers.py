"""``truc bench --peers``: Truc beside other game libraries, like for like, per CPU-second of one core.

Each comparison drives both sides the same way and counts the same thing, a *decision step* (one
decision of one game; chance is resolved inside the step), in one single-threaded process pinned to
one core, so the figure is steps per CPU-second and other jobs on the machine do not distort it:

- ``python loop``: one game at a time through a Python loop over the state API (``legal_actions`` /
  ``apply_action``, uniform random choices): ``truc_env.game.engine.State`` against OpenSpiel's C++
  ``leduc_poker`` and ``kuhn_poker`` through ``pyspiel``. Each side resolves chance with its own
  API: pyspiel one chance node at a time, Truc as its PettingZoo env does (the episode driver's
  ``Dealer.shuffled``: a deck order per hand, the deal in one step); the ``per card`` row is Truc
  with one chance node per card (``sample_chance``);
- ``aec raw_env``: the PettingZoo agent loop (``agent_iter`` / ``last`` / ``step``) over
  ``truc_env.raw_env`` against PettingZoo classic ``leduc_holdem_v4`` and ``texas_holdem_v4``
  (they need ``rlcard``);
- ``batched B=...``: B games stepped at once with uniform random legal actions, auto-reset, on one
  thread: :class:`truc_env.batch.vector.VectorEnv` (numba) against pgx's JAX ``leduc_holdem``
  (``jit(vmap(step))`` with pgx's ``auto_reset``, the random action drawn inside the jitted call).

A peer that is not installed is listed as "not installed"; no figure is ever quoted from elsewhere.
"""

from __future__ import annotations

import numpy as np

from train.bench.engine import spiel_loop, truc_card_loop, truc_hand_loop
from train.bench.envs import aec_chunk
from train.bench.threads import SINGLE_THREAD_ENV, pin_single_thread  # noqa: F401  (re-exported for table.py)


def truc_loop_chunk(rules, seed: int):
    play_one = truc_hand_loop(rules, np.random.default_rng(seed))
    return lambda: sum(play_one() for _ in range(20))


def truc_card_loop_chunk(rules, seed: int):
    play_one = truc_card_loop(rules, np.random.default_rng(seed))
    return lambda: sum(play_one() for _ in range(20))


def spiel_loop_chunk(name: str, seed: int):
    import pyspiel

    play_one = spiel_loop(pyspiel.load_game(name), np.random.default_rng(seed))
    return lambda: sum(play_one() for _ in range(50))


def vector_chunk(variant: str, options: dict, B: int, seed: int, threads: int | None = 1):
    """Batched random play in ``VectorEnv``; returns (chunk, backend)."""
    from truc_env.batch.vector import VectorEnv

    v = VectorEnv(variant, B, seed=seed, threads=threads, **options)
    v.reset()
    reps = max(1, 4096 // B) if v.backend == "numba" else 1

    def chunk() -> int:
        for _ in range(reps):
            v.step(v.random_actions())
        return reps * B

    return chunk, v.backend


def pgx_chunk(name: str, B: int, seed: int):
    """pgx's batched ``name`` with random legal actions, auto-reset, all inside one jitted call."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    env = pgx.make(name)
    init = jax.jit(jax.vmap(env.init))
    step = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def random_step(state, key):
        k_act, k_step = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        return step(state, action, jax.random.split(k_step, B))

    key = jax.random.PRNGKey(seed)
    key, sub = jax.random.split(key)
    box = {"state": init(jax.random.split(sub, B)), "key": key}
    reps = max(1, 4096 // B)

    def chunk() -> int:
        state, key = box["state"], box["key"]
        for _ in range(reps):
            key, sub = jax.random.split(key)
            state = random_step(state, sub)
        state.terminated.block_until_ready()
        box["state"], box["key"] = state, key
        return reps * B

    return chunk


def peer_rows(timer, configs: list[tuple[str, str, dict]], sizes: list[int], report, repeats: int = 1) -> list[dict]:
    """Measure every comparison group; ``configs`` are (name, variant, options) of the Truc side.

    The rows of a group are measured in turn, ``repeats`` rounds, and each row keeps its median
    round: on a shared machine the load drifts, and interleaving exposes both sides to the same
    drift. ``report(row)`` is called as each row is final; a peer that cannot be imported gives a
    row with ``missing`` set instead of figures.
    """
    from truc_env.envs.pettingzoo_env import raw_env as truc_raw_env
    from truc_env.game.rules import make_rules

    def pettingzoo_classic(env_name: str):
        import importlib

        try:
            module = importlib.import_module(f"pettingzoo.classic.{env_name}")
        except Exception as exc:  # rlcard or pygame missing: PettingZoo raises its own error types
            raise ImportError(f"pettingzoo.classic.{env_name}: {exc}", name="rlcard") from exc
        return aec_chunk(module.raw_env, 0)

    groups: dict[str, list[tuple]] = {}  # group -> [(what, make, peer, extra)]
    for name in ("leduc_poker", "kuhn_poker"):
        groups.setdefault("python loop", []).append(
            (f"openspiel {name}", lambda n=name: spiel_loop_chunk(n, 0), True, {}))
    for name, variant, options in configs:
        groups["python loop"].append(
            (f"truc {name}", lambda v=variant, o=options: truc_loop_chunk(make_rules(v, **o), 0), False, {}))
        groups["python loop"].append((f"truc {name} per card", lambda v=variant, o=options:
                                      truc_card_loop_chunk(make_rules(v, **o), 0), False, {}))
    for env_name in ("leduc_holdem_v4", "texas_holdem_v4"):
        groups.setdefault("aec raw_env", []).append(
            (f"pettingzoo {env_name}", lambda e=env_name: pettingzoo_classic(e), True, {}))
    for name, variant, options in configs:
        groups["aec raw_env"].append(
            (f"truc {name}", lambda v=variant, o=options: aec_chunk(lambda: truc_raw_env(variant=v, **o), 0), False, {}))
    for B in sizes:
        group = groups.setdefault(f"batched B={B}", [])
        group.append(("pgx leduc_holdem (JAX)", lambda b=B: pgx_chunk("leduc_holdem", b, 0), True, {"B": B}))
        for name, variant, options in configs:
            group.append((f"truc {name}", lambda v=variant, o=options, b=B: vector_chunk(v, o, b, 0, threads=1),
                          False, {"B": B}))

    rows: list[dict] = []
    for group, specs in groups.items():
        made = []
        for what, make, peer, extra in specs:
            row = {"group": group, "what": what, "peer": peer, **extra}
            try:
                built = make()
            except ImportError as exc:
                row["missing"] = f"not installed ({exc.name})"
                built = None
            chunk, backend = built if isinstance(built, tuple) else (built, "")
            made.append((row, chunk, backend))
        rounds: list[list[dict]] = [[] for _ in made]
        for _ in range(max(1, repeats)):
            for k, (_row, chunk, _backend) in enumerate(made):
                if chunk is not None:
                    rounds[k].append(timer(chunk))
        for (row, _, backend), results in zip(made, rounds):
            if results:
                results.sort(key=lambda res: res["steps_per_cpu_s"])
                row.update(backend=backend, rounds=len(results), **results[len(results) // 2])
            rows.append(row)
            report(row)
    return rows


def ratios(rows: list[dict]) -> list[dict]:
    """Each Truc row against each measured peer of its group, steps per CPU-second over steps per CPU-second."""
    out = []
    for row in rows:
        if row["peer"] or "missing" in row:
            continue
        for peer in rows:
            if peer["peer"] and peer["group"] == row["group"] and "missing" not in peer:
                out.append({"group": row["group"], "truc": row["what"], "peer": peer["what"],
                            "ratio": row["steps_per_cpu_s"] / peer["steps_per_cpu_s"]})
    return out
