"""The exact figure of a policy as it plays: every suit relabelling, and the projection error.

``truc exploitability`` writes a network's policy on the strength-abstracted public tree at one canonical
assignment of suits (the cards of a rank take its suits in order of play, :mod:`agents.cfr.policy_tree`), and
exploitability descent keeps the round that scores best on that same figure: the optimizer and the
referee are one measurement. A network is not suit-blind, so here it is measured as it plays:

- **every suit relabelling** (:func:`suit_relabellings`: each permutation of the deck's suits that keeps every
  card in its strength class, 24 in Le Truc and Put), each one's exact figure, and the exact figure of the
  mean of their tables (the policy made suit-blind by averaging over them, what ``--suits k`` estimates with
  k random ones);
- **the projection error** on self-play hands of the raw agent (real deals, real suits, real dealt order) from a
  seed stream of their own, never the one that drew the first hands: at each decision, the total variation
  between the raw distribution (card plays summed per class) and the canonical table, the averaged table,
  and each relabelling's table against the averaged one (the spread across relabellings).

A suit-blind policy (a ``table:`` strategy, the random agent) has every relabelling's figure equal and every
projection error 0; a policy that reads suits has neither (``tests/test_as_played.py``).
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np

from agents.cfr.policy_tree import CardClasses, best_response_values, suit_permutations
from agents.cfr.solver import PublicTreeSolver
from train.eval.exploitability import (
    cached_tree,
    check_applies,
    check_fits,
    first_hand_samples,
    probability_function,
    result_head,
    self_play_decisions,
    tabulate_part,
)
from truc_env.errors import TrucError
from truc_env.game.rules import Rules, make_rules

# the held-out self-play hands draw from their own stream: SeedSequence([seed, HELD_OUT])
HELD_OUT = 0x50_4C_41_59  # "PLAY"


def suit_relabellings(ab, rules: Rules) -> list[np.ndarray]:
    """Every permutation of the deck's suits that maps each card to a card of its own class, as a permutation
    of deck indices (``perm[d]``: the image of card ``d``); the identity first."""
    from truc_env.game.actions import layout_of

    L = layout_of(rules)
    fam = rules.family
    n_suits = len(fam.suits)
    cls = ab.card_class
    out = []
    for sigma in itertools.permutations(range(n_suits)):
        perm = np.arange(len(L.deck))
        for d, c in enumerate(L.deck):
            img = (c // n_suits) * n_suits + sigma[c % n_suits]
            if img not in L.card_index or cls.get(img, -1) != cls.get(c, -1):
                break
            perm[d] = L.card_index[img]
        else:
            out.append(perm)
    return out


def class_relabellings(ab, rules: Rules, k: int, seed: int) -> list[np.ndarray]:
    """The identity and ``k - 1`` random relabellings of the suits *within every class*, drawn independently
    class by class (:func:`agents.cfr.policy_tree.suit_permutations`) from the held-out stream of ``seed``:
    the suits of a real deal, which the canonical assignment and the global relabellings never give (the
    unplayed cards of distinct ranks all take their rank's first suit there: a hand of one suit)."""
    if k < 1:
        raise TrucError(f"--relabellings {k}: at least 1 (the identity)")
    seq = np.random.SeedSequence([seed, HELD_OUT, 1])
    drawn = suit_permutations(ab, rules, max(k - 1, 2), int(seq.generate_state(1)[0]))[:k - 1]
    return [np.arange(len(CardClasses.of(ab, rules).card_class))] + drawn


def relabelling_group(ab, rules: Rules, group, seed: int) -> list[np.ndarray]:
    """``"suits"``: every global suit relabelling (:func:`suit_relabellings`); an int k:
    :func:`class_relabellings`."""
    if group == "suits":
        return suit_relabellings(ab, rules)
    if isinstance(group, (int, np.integer)) and not isinstance(group, bool):
        return class_relabellings(ab, rules, int(group), seed)
    raise TrucError(f"relabellings {group!r}: 'suits' (every suit relabelling) or a number k of random ones "
                    "within every class")


def describe(perm: np.ndarray, rules: Rules) -> str:
    """A relabelling by the suits it maps, ``'c>d d>c h>h s>s'`` when it is one for every rank; else the
    cards it moves, ``'7c>7h 7h>7c ...'``."""
    from truc_env.game.actions import layout_of

    L = layout_of(rules)
    fam = rules.family
    seen = {}
    for d, c in enumerate(L.deck):
        seen.setdefault(fam.suit_of(c), set()).add(fam.suit_of(L.deck[perm[d]]))
    if all(len(t) == 1 for t in seen.values()):
        return " ".join(f"{s}>{next(iter(t))}" for s, t in seen.items())
    return " ".join(f"{fam.format(c)}>{fam.format(L.deck[perm[d]])}" for d, c in enumerate(L.deck) if perm[d] != d)


def _held_out_decisions(agent, rules: Rules, parts: dict, hands: int, seed: int) -> dict:
    """Self-play hands of the raw agent; per part, each decision's slots (start, length) and the raw
    agent's distribution over them (card plays summed per class)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, HELD_OUT]))
    out = {p: {"start": [], "len": [], "raw": []} for p in parts}
    main = parts["main"][0]
    for part, _, a, p in self_play_decisions(probability_function(agent), rules, main.dealer, main.score, hands,
                                             rng, lambda part, st: parts[part]):
        rec = out[part]
        rec["start"].append(a)
        rec["len"].append(len(p))
        rec["raw"].append(p)
    for rec in out.values():
        start = np.asarray(rec["start"], dtype=np.int64)
        length = np.asarray(rec["len"], dtype=np.int64)
        rec["slots"] = (np.repeat(start - np.concatenate([[0], np.cumsum(length)[:-1]]), length)
                        + np.arange(int(length.sum()))) if len(start) else np.zeros(0, dtype=np.int64)
        rec["decision"] = np.repeat(np.arange(len(start)), length)
        rec["raw"] = np.concatenate(rec["raw"]) if rec["raw"] else np.zeros(0)
        rec["n"] = len(start)
    return out


def _tv(x: np.ndarray, y: np.ndarray, rec: dict) -> np.ndarray:
    """Per decision, the total variation between two distributions over its slots."""
    return 0.5 * np.bincount(rec["decision"], weights=np.abs(x - y), minlength=rec["n"])


def _stats(x: np.ndarray) -> dict:
    if not len(x):
        return {"decisions": 0}
    return {"decisions": int(len(x)), "mean": float(x.mean()), "median": float(np.median(x)),
            "p90": float(np.quantile(x, 0.9)), "max": float(x.max())}


def as_played_exploitability(agent, rules: Rules, dealer: int = 0, first_hands: int = 4, hands: int = 2000,
                             seed: int = 1, cache_dir: str | None = None, progress: bool = False, log=None,
                             relabellings: list | None = None, group="suits") -> dict:
    """The policy's exact figure under every suit relabelling and under their mean, with the projection
    errors on ``hands`` held-out self-play hands (module docstring). ``seed`` draws the first hands after a
    redeal and, through its own stream, the held-out hands and any random relabellings; ``group``: which
    relabellings (:func:`relabelling_group`), or ``relabellings`` given as deck-index permutations (the first
    one is reported as the canonical assignment: give the identity first)."""
    check_applies(rules)
    if rules.vira:
        raise TrucError(f"{rules.variant}: --as-played takes rules without a vira (the vira's suit fixes its "
                        "manilhas, so no suit relabelling but the identity keeps the game)")
    fn = probability_function(agent, rules)
    say = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    t_start, cpu_start = time.time(), time.process_time()
    names = ["cont", "main"] if rules.redeal else ["main"]
    trees = {}
    if rules.redeal:
        trees["cont"] = cached_tree(make_rules(rules.variant, **{**rules.options, "redeal": False}), dealer, (0, 0),
                                    "strength", cache_dir)
    trees["main"] = cached_tree(rules, dealer, (0, 0), "strength", cache_dir)
    planned = 0
    for p, t in trees.items():  # both parts are held at once, each with its table and the running mean
        planned = check_fits(t, p, tables=2, besides=planned)
    parts = {p: (t, PublicTreeSolver(t, dtype="float32")) for p, t in trees.items()}
    ab = trees["main"].abstraction
    perms = relabellings if relabellings is not None else relabelling_group(ab, rules, group, seed)
    n = len(perms)
    samples = None
    if rules.redeal:
        samples, _ = first_hand_samples(rules, trees["cont"].abstraction, fn, dealer, (0, 0), first_hands, seed)
    held = _held_out_decisions(agent, rules, parts, hands, seed)
    decisions = sum(h["n"] for h in held.values())
    say(f"[as played] {n} relabellings ({group if relabellings is None else 'given'}); {decisions:,} held-out "
        f"decisions in {hands:,} hands")
    sums = {p: np.zeros(parts[p][1].n_slots) for p in names}
    at = {p: [] for p in names}  # each relabelling's table at the held-out decisions' slots
    rows = []
    for r, perm in enumerate(perms):
        redeal_br, redeal_value, row = (0.0, 0.0), 0.0, {"relabelling": describe(perm, rules)}
        for p in names:
            tree, solver = parts[p]
            sigma = tabulate_part(tree, solver, agent, fn, rules, samples if p == "cont" else None, 1, seed, progress,
                              cache_dir, p, perms=[perm])
            ev = best_response_values(solver, sigma, redeal_br, redeal_value)
            sums[p] += sigma / n
            at[p].append(sigma[held[p]["slots"]])
            if p == "cont":
                redeal_br, redeal_value = (ev["br0"], ev["br1"]), ev["value_seat0"]
            del sigma
        row.update({k: ev[k] for k in ("exploitability", "br0", "br1", "value_seat0")})
        rows.append(row)
        say(f"[as played] {r + 1}/{n} {row['relabelling']}: exploitability {row['exploitability']:.4f}")
    redeal_br, redeal_value = (0.0, 0.0), 0.0
    for p in names:
        ev = best_response_values(parts[p][1], sums[p], redeal_br, redeal_value)
        if p == "cont":
            redeal_br, redeal_value = (ev["br0"], ev["br1"]), ev["value_seat0"]
    figures = np.array([row["exploitability"] for row in rows])
    projection = {}
    for p in names:
        rec = held[p]
        avg = sums[p][rec["slots"]]
        spread = np.mean([_tv(x, avg, rec) for x in at[p]], axis=0) if rec["n"] else np.zeros(0)
        projection[p] = {"raw_vs_canonical": _stats(_tv(rec["raw"], at[p][0], rec)),
                         "raw_vs_averaged": _stats(_tv(rec["raw"], avg, rec)),
                         "relabellings_vs_averaged": _stats(spread)}
    out = {**result_head(rules, dealer, (0, 0), "strength", n, first_hands if rules.redeal else None, seed),
           "group": "given" if relabellings is not None else group, "relabellings": rows,
           "canonical": rows[0]["exploitability"],
           "per_relabelling": {"min": float(figures.min()), "mean": float(figures.mean()),
                               "max": float(figures.max())},
           **{k: ev[k] for k in ("exploitability", "nash_conv", "br0", "br1", "value_seat0")},
           "held_out": {"hands": hands, "seed_stream": [seed, HELD_OUT]}, "projection": projection,
           "seconds": time.time() - t_start, "cpu_seconds": time.process_time() - cpu_start}
    return out
