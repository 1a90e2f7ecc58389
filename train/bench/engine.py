"""Random-play throughput of the reference engine, beside OpenSpiel's C++ leduc_poker.

    python -m train.bench.engine [--seconds S] [--variants le_truc put ...] [--profile]

For every variant (default options) it plays random single hands (``episode="hand"``) for S
seconds in one process on one core, the way an environment would: chance resolved by the episode
driver's ``truc_env.game.episode.Dealer.shuffled`` over a ``numpy.random.Generator`` (a deck order
per hand, the deal in one step, as the PettingZoo env deals), decisions picked uniformly from ``legal_actions()`` and applied with ``apply_action``. In the same run it drives
``pyspiel.load_game("leduc_poker")`` through the same kind of Python loop and prints the ratio.

Two extra columns isolate overheads that are not the rules themselves:

- ``lean``: the same loop with the standard library's ``random.Random`` in place of numpy for the
  picks (numpy's per-call overhead is a few microseconds), deal draws taken straight from
  ``chance_outcomes()``;
- ``no-check``: the lean loop without ``apply_action``'s legality check (the action is known to
  be legal; it calls the engine's internal ``_apply``), to show what validation costs.

``--profile`` prints the cProfile hot spots of the le_truc loop.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import sys
import time

import numpy as np

from train.bench.threads import pin_single_thread
from truc_env.game.engine import State, sample_chance
from truc_env.game.episode import Dealer
from truc_env.game.rules import VARIANTS, make_rules

AIM_LE_TRUC = 10_000  # random le_truc hands per second on one core (issue 2)


def _timed(play_one, seconds: float) -> tuple[float, int, int]:
    """Run play_one() repeatedly for about `seconds` of this process's CPU time.

    Returns (units per CPU second, units, decisions). CPU time rather than wall time keeps the
    figures meaningful on a shared, loaded machine (other processes do not count against us).
    """
    play_one()  # warm caches (layouts, manilha tables, winner tables)
    n = steps = 0
    clock = time.process_time
    start = clock()
    deadline = start + seconds
    while True:
        for _ in range(20):
            steps += play_one()
            n += 1
        now = clock()
        if now >= deadline:
            return n / (now - start), n, steps


def random_play_loop(new_state, chance, rng):
    """``play_one()``: one episode of ``new_state()`` with uniform random decisions; returns the decisions.

    Works on ``engine.State`` and on pyspiel states alike (the same loop drives both sides of a comparison).
    """

    def play_one() -> int:
        state = new_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(chance(state))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                decisions += 1
        return decisions

    return play_one


def truc_hand_loop(rules, rng):
    """One random hand, as an environment drives the engine; returns the decisions taken.

    Chance is resolved as the PettingZoo and Gymnasium environments resolve it, by the episode
    driver's ``Dealer.shuffled``: one deck order drawn per hand, the deal applied in one
    ``State.deal`` step (:func:`truc_card_loop` draws a card per chance node instead).
    """

    def play_one() -> int:
        state = State(rules, episode="hand")
        dealer = Dealer.shuffled(rules, rng)  # a dealer per episode, as an environment's reset makes
        decisions = 0
        while True:
            dealer.resolve(state)
            if state.is_terminal():
                return decisions
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            decisions += 1

    return play_one


def truc_card_loop(rules, rng):
    """:func:`truc_hand_loop` with one chance node per card (``sample_chance``), the way OpenSpiel deals."""
    return random_play_loop(lambda: State(rules, episode="hand"), lambda state: sample_chance(state, rng), rng)


def truc_lean_loop(rules, rnd: random.Random, check: bool = True):
    """The same hand with stdlib random picks; with check=False apply skips the legality test."""

    def play_one() -> int:
        state = State(rules, episode="hand")
        decisions = 0
        while state.phase != "terminal":
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                if state.phase == "deal":  # uniform over the undrawn cards
                    state.apply_action(outcomes[rnd.randrange(len(outcomes))][0])
                else:
                    state.apply_action(sample_chance(state, rnd_np))
                continue
            legal = state.legal_actions()
            action = legal[rnd.randrange(len(legal))]
            if check:
                state.apply_action(action)
            else:  # apply_action minus its validation
                state._legal = None
                state.history.append((state.current_player(), action, 0))
                state._apply(action)
            decisions += 1
        return decisions

    rnd_np = np.random.default_rng(rnd.randrange(2**32))
    return play_one


def spiel_loop(game, rng):
    """One random game of a pyspiel game with uniform chance (leduc_poker, kuhn_poker) through the same loop."""

    def uniform(state) -> int:
        outcomes = state.chance_outcomes()
        return outcomes[int(rng.integers(len(outcomes)))][0]

    return random_play_loop(game.new_initial_state, uniform, rng)


def leduc_rate(seconds: float) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("leduc_poker")
    rate, _, _ = _timed(spiel_loop(game, np.random.default_rng(0)), seconds)
    return rate


def profile_le_truc(hands: int = 20_000, top: int = 25) -> str:
    rules = make_rules("le_truc")
    play_one = truc_hand_loop(rules, np.random.default_rng(0))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(hands):
        play_one()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default 2)")
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--profile", action="store_true", help="print the cProfile hot spots of the le_truc loop")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the process to one core")
    args = ap.parse_args(argv)
    if not args.no_pin:
        pin_single_thread()

    leduc = leduc_rate(args.seconds)
    print(f"random play, one process, {args.seconds:g} CPU-seconds per measurement; python {sys.version.split()[0]}")
    if leduc is None:
        print("open_spiel is not installed: no leduc_poker reference (pip install open_spiel)")
    else:
        print(f"reference: OpenSpiel C++ leduc_poker through the same Python loop: {leduc:,.0f} games/s")
    print()
    head = f"{'variant':<17}{'players':>7}{'hands/s':>10}{'dec/hand':>9}{'us/dec':>8}{'lean':>9}{'no-check':>10}"
    if leduc is not None:
        head += f"{'vs leduc':>10}"
    print(head)
    print("-" * len(head))
    results = {}
    for i, variant in enumerate(args.variants):
        rules = make_rules(variant)
        rate, n, decisions = _timed(truc_hand_loop(rules, np.random.default_rng(i)), args.seconds)
        lean, _, _ = _timed(truc_lean_loop(rules, random.Random(i)), args.seconds / 2)
        bare, _, _ = _timed(truc_lean_loop(rules, random.Random(i), check=False), args.seconds / 2)
        results[variant] = rate
        per_hand = decisions / n
        line = (f"{variant:<17}{rules.players:>7}{rate:>10,.0f}{per_hand:>9.1f}{1e6 / rate / max(per_hand, 1):>8.1f}"
                f"{lean:>9,.0f}{bare:>10,.0f}")
        if leduc is not None:
            line += f"{rate / leduc:>10.2f}"
        print(line, flush=True)
    if "le_truc" in results:
        verdict = "meets" if results["le_truc"] >= AIM_LE_TRUC else "is below"
        print(f"\nle_truc: {results['le_truc']:,.0f} random hands/s {verdict} the aim of {AIM_LE_TRUC:,}/s")
    print("(us/dec: microseconds per hand divided by decisions per hand, deal included)")
    if args.profile:
        print("\ncProfile of the le_truc loop (20,000 hands), by own time:")
        print(profile_le_truc())
    return 0


if __name__ == "__main__":
    sys.exit(main())
