"""The shared decisions of the hand (truc_env/game/hand_rules.py): one definition for the engine and the kernel.

- numba compiles each function to the same answers as Python, on every input of a small domain
  (int32 arguments, as the kernel passes its fields);
- the trick leader and the mão de onze seat agree with their plain statement of the rules
  (docs/rules.md §0, §4) for every variant that uses them;
- the kernels (the main one and put_n's) compile the very functions the engine calls and do not
  grow their own copies (a planted copy is caught);
- docs/architecture.md's table of the kernel's decisions names every shared function.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from truc_env.game import calls, dealing, engine, hand_rules
from truc_env.game.rules import VARIANTS, make_rules, option_specs

ROOT = Path(__file__).resolve().parents[1]
SHARED = sorted(name for name, f in vars(hand_rules).items()
                if inspect.isfunction(f) and f.__module__ == hand_rules.__name__)

B = (0, 1)
SEAT = (-1, 0, 1, 2, 3)
DOMAINS = {  # every argument's values: the whole range the kernel's rules can give it, and a bit more
    "next_seat": [range(6), (2, 3, 4, 5, 6)],
    "put_n_value": [range(1, 7)],
    "hand_value": [(1, 2, 3, 12), B, B, (1, 3, 4), (1,), B, range(-2, 14)],
    "wins_game": [range(0, 30), (1, 12, 24)],
    "raise_budget": [range(6), (-1, 0, 1, 2, 4), B],
    "may_raise": [range(6), range(6), B, B, (-1, 0, 1), B, B],
    "may_all_in": [B, B, B, (-1, 0, 1), B, B],
    "may_counter": [B, range(6), range(6), B],
    "may_redeal": [B, B, B, range(4), range(4), (2, 4), (0, 5, 6, 11, 12, 20), (2, 3)],
    "special_hand": [B, B, range(0, 13), range(0, 13), (3, 11)],
    "eleven_seat": [range(4), (2, 4), range(0, 13), (3, 11)],
    "trick_lead": [range(-1, 4), SEAT + (4, 5), range(-1, 6), range(4), range(6), range(6)],  # put_n: side = seat
    "signal_audience": [range(4), SEAT[1:], (4,), B],
    "envido_pip": [range(0, 14)],
    "envido_score": [range(8), range(-1, 4)] * 3,
    "has_flor": [range(-1, 4)] * 3,
    "flor_score": [range(8)] * 3,
    "wins_announcement": [range(36), range(36), B],
    "envido_open": [B, B, range(3), range(3), B],
    "may_raise_envido": [range(3), range(4), range(3)],
    "may_call_envido": [B, B],
    "may_envido_on_truco": [B, B, range(4)],
    "envido_stake": [range(12), range(3), (15, 30), range(31)],
    "envido_refused_stake": [range(12)],
    "must_sing": [B, range(3), B, B, B],
    "flor_stake": [B, B],
}


def test_every_shared_function_has_a_domain():
    assert sorted(DOMAINS) == SHARED


@pytest.mark.parametrize("name", SHARED)
def test_numba_compiles_the_same_answers(name):
    numba = pytest.importorskip("numba")
    py = getattr(hand_rules, name)
    jit = numba.njit(py)
    for args in itertools.product(*DOMAINS[name]):
        want = py(*args)
        got = jit(*(np.int32(a) for a in args))
        assert np.array_equal(np.asarray(got, np.int64), np.asarray(want, np.int64)), (name, args, got, want)


def _trick_by_the_book(cards, side):
    """docs/rules.md §0: the highest card takes; equal highest cards of opposing sides tie (-1);
    of one side, the first of them takes it."""
    best = max(st for _, st in cards)
    holders = [s for s, st in cards if st == best]
    return holders[0] if len({side(s) for s in holders}) == 1 else -1


@pytest.mark.parametrize("players,n_sides", [(2, 2), (4, 2), (3, 3), (4, 4), (6, 6)])
def test_trick_lead_is_the_trick_rule(players, n_sides):
    side = (lambda s: s % 2) if n_sides == 2 else (lambda s: s)
    for strengths in itertools.product(range(3), repeat=players):
        for first in range(players):
            cards = [((first + k) % players, strengths[k]) for k in range(players)]
            for k in range(1, players + 1):  # every trick so far
                best = winner = winner_side = -1
                for s, st in cards[:k]:
                    best, winner, winner_side = hand_rules.trick_lead(best, winner, winner_side, st, s, side(s))
                assert best == max(st for _, st in cards[:k])
                assert winner == _trick_by_the_book(cards[:k], side), cards[:k]


def _eleven_rules():
    for variant in VARIANTS:
        spec = option_specs(variant).get("players")
        for players in (spec.allowed if spec else (None,)):
            r = make_rules(variant, **({"players": players} if players else {}))
            if r.eleven:
                yield r


def test_the_eleven_rule_has_two_alternating_sides():
    """special_hand and eleven_seat take two sides, seat s on side s % 2: every variant with the rule."""
    found = list(_eleven_rules())
    assert {r.variant for r in found} >= {"truco_paulista", "truco_mineiro"}
    for r in found:
        assert r.n_sides == 2 and r.side_of == tuple(s % 2 for s in range(r.players)), r.key


def test_eleven_seat_is_the_first_of_the_side_at_the_mark():
    for r in _eleven_rules():
        n, mark = r.players, r.eleven_score
        for dealer, score0, score1 in itertools.product(range(n), range(mark + 2), range(mark + 2)):
            special = hand_rules.special_hand(True, False, score0, score1, mark)
            at = (score0 >= mark, score1 >= mark)
            assert special == (hand_rules.IRON if all(at) else hand_rules.ELEVEN if any(at) else hand_rules.NORMAL)
            if special == hand_rules.ELEVEN:
                mano = hand_rules.next_seat(dealer, n)
                book = next(s for s in ((dealer + 1 + k) % n for k in range(n)) if at[r.side(s)])
                assert hand_rules.eleven_seat(mano, n, score0, mark) == book
            assert hand_rules.special_hand(True, True, score0, score1, mark) == hand_rules.NORMAL  # after a redeal


def test_signal_audience_is_sender_partner_or_everyone():
    for variant in ("truco_paulista", "truco_mineiro", "le_truc_4p", "truco_argentino"):
        r = make_rules(variant, signals={"mode": "free"})
        n = r.players
        for seat in range(n):
            opponents = [s for s in range(n) if r.side(s) != r.side(seat)]
            private = (1 << seat) | (1 << r.partner(seat))
            assert hand_rules.signal_audience(seat, r.partner(seat), n, False) == private
            assert hand_rules.signal_audience(seat, r.partner(seat), n, True) == private | sum(1 << o for o in opponents)


def test_shared_functions_are_leaves():
    """numba inlines each with hand_rules' globals: a call to another shared function would not compile."""
    tree = ast.parse((ROOT / "truc_env/game/hand_rules.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and n.module != "__future__"]
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert not set(calls) & set(SHARED), set(calls) & set(SHARED)


def restated_in_kernel(source: str) -> list[str]:
    """Functions of the kernel source named after a shared decision (``_may_raise``, ``hand_value``...)
    that are not the compiled shared function itself."""
    tree = ast.parse(source)
    return [f.name for f in tree.body if isinstance(f, ast.FunctionDef) and f.name.lstrip("_") in SHARED]


KERNELS = ("_vector_kernels", "_vector_put_n")  # the main kernel, and put_n's


def test_the_kernels_compile_the_shared_functions_and_restate_none():
    """Every shared function is compiled from hand_rules and called by a kernel (the main one, or
    put_n's for put_n's own decision); a kernel's wrapper of a shared name is the shared function."""
    pytest.importorskip("numba")
    import importlib

    used = set()
    for module in KERNELS:
        K = importlib.import_module("truc_env.batch." + module)
        source = (ROOT / f"truc_env/batch/{module}.py").read_text(encoding="utf-8")
        for name in SHARED:
            wrapper = getattr(K, "_" + name, None)
            if wrapper is None:
                continue
            assert wrapper.py_func is getattr(hand_rules, name), f"{module} compiles its own {name}"
            # a compiled decision must be used by the kernel (else it decides it some other way)
            assert len(re.findall(rf"\b_{name}\(", source)) >= 1, f"{module} never calls _{name}"
            used.add(name)
        assert restated_in_kernel(source) == [], module
    assert used == set(SHARED), f"no kernel compiles {set(SHARED) - used}"


def test_a_regrown_copy_in_the_kernel_is_caught():
    planted = "def _raise_budget(b, g, p, extra):\n    return p[9] < 0 or g[b, 8] + extra < p[9]\n"
    assert restated_in_kernel(planted) == ["_raise_budget"]


def test_the_engine_calls_every_shared_function():
    source = "\n".join(inspect.getsource(m) for m in (engine, calls, dealing))  # State and its mixins
    tree = ast.parse(source)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "truc_env.game.hand_rules"
                for a in n.names}
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert set(SHARED) <= imported & called, set(SHARED) - (imported & called)


def test_the_architecture_table_names_every_shared_function():
    doc = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\| shared `hand_rules\.(\w+)`", doc))
    assert named == set(SHARED), (set(SHARED) - named, named - set(SHARED))
