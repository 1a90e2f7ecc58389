"""The variants as declared data (truc_env/game/variants.py): keys pinned, records consistent, and no module
outside the declaring one compares a variant's name."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

from agents.cfr.partnership_abstraction import PartnershipAbstraction, unsupported_reason
from truc_env.batch.vector import kernel_supports
from truc_env.errors import RulesError
from truc_env.game.actions import layout_of
from truc_env.game.engine import State
from truc_env.game.rules import COMMON, make_rules, option_specs
from truc_env.game.variants import VARIANTS, ByOption

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Rules.key of a few variants, computed before the variants became records: strategy files and
# checkpoints are keyed by these strings, so they must never change.
PINNED_KEYS = [
    ("le_truc", {}, '{"options": {"all_tied": "none", "first_dealer": 0, "fold": true, "hand_size": null, '
     '"ladder": "standard", "max_raises": null, "ranking": "standard", "ranks": null, "redeal": true, "target": 12}, '
     '"variant": "le_truc"}'),
    ("le_truc_4p", {}, '{"options": {"all_tied": "leader", "first_dealer": 0, "fold": false, "hand_size": null, '
     '"instructions": true, "ladder": "standard", "max_raises": null, "ranking": "standard", "ranks": null, '
     '"redeal": true, "signals": {"intercept": 0.0, "mode": "card", "timing": "deal", "truthful": true, "vocab": 8}, '
     '"target": 12}, "variant": "le_truc_4p"}'),
    ("put", {}, '{"options": {"all_tied": "none", "first_dealer": 0, "fold": true, "hand_size": null, '
     '"max_raises": null, "ranks": null, "target": 5}, "variant": "put"}'),
    ("put_4p", {}, '{"options": {"all_tied": "none", "first_dealer": 0, "fold": true, "hand_size": null, '
     '"max_raises": null, "ranks": null, "target": 5}, "variant": "put_4p"}'),
    ("put_n", {"players": 6}, '{"options": {"first_dealer": 0, "hand_size": null, "max_raises": null, "players": 6, '
     '"ranks": null, "target": 5}, "variant": "put_n"}'),
    ("truco_paulista", {"deck": "clean", "players": 2}, '{"options": {"all_tied": "dealer", "blind": true, '
     '"deck": "clean", "first_dealer": 0, "fold": false, "hand_size": null, "max_raises": null, "players": 2, '
     '"ranks": null, "signals": {"intercept": 0.0, "mode": "none", "timing": "deal", "truthful": true, "vocab": 8}, '
     '"target": 12}, "variant": "truco_paulista"}'),
    ("truco_paulista", {"signals": {"mode": "senas"}}, '{"options": {"all_tied": "dealer", "blind": true, '
     '"deck": "dirty", "first_dealer": 0, "fold": false, "hand_size": null, "max_raises": null, "players": 4, '
     '"ranks": null, "signals": {"intercept": 0.0, "mode": "senas", "timing": "deal", "truthful": true, "vocab": 8}, '
     '"target": 12}, "variant": "truco_paulista"}'),
    ("truco_mineiro", {"ladder": "mineiro"}, '{"options": {"all_tied": "none", "blind": true, "deck": "dirty", '
     '"first_dealer": 0, "fold": false, "hand_size": null, "ladder": "mineiro", "max_raises": null, "players": 4, '
     '"ranks": null, "signals": {"intercept": 0.0, "mode": "none", "timing": "deal", "truthful": true, "vocab": 8}, '
     '"target": 12}, "variant": "truco_mineiro"}'),
    ("truco_argentino", {"flor": True}, '{"options": {"all_tied": "leader", "envido": true, "first_dealer": 0, '
     '"flor": true, "fold": true, "hand_size": null, "max_raises": null, "players": 4, "ranks": null, '
     '"signals": {"intercept": 0.0, "mode": "none", "timing": "deal", "truthful": true, "vocab": 8}, "target": 30}, '
     '"variant": "truco_argentino"}'),
]


@pytest.mark.parametrize("variant,options,key", PINNED_KEYS)
def test_rules_keys_are_pinned(variant, options, key):
    assert make_rules(variant, **options).key == key


# ---------------------------------------------------------------------- the records
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_record_is_consistent(variant):
    """Each record names itself, its option-dependent fields cover every allowed value, and its option
    specs are what option_specs serves (plus the common options)."""
    spec = VARIANTS[variant]
    assert spec.name == variant
    assert option_specs(variant) == {**spec.options, **COMMON}
    for field in ("ranking", "ladder", "removed", "special_hands"):
        value = getattr(spec, field)
        if isinstance(value, ByOption):
            assert value.option in spec.options, f"{variant}.{field} depends on unknown option {value.option}"
            assert set(value.values) == set(spec.options[value.option].allowed), f"{variant}.{field}"
    if spec.senas is not None:
        named = set(spec.senas.cards.values()) | set(spec.senas.ranks.values()) | set(spec.senas.vira_manilhas)
        assert named == set(spec.senas.tokens), f"{variant}: every seña token names some card, and only those"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rules_fields_follow_the_record(variant):
    r = make_rules(variant)
    spec = r.spec
    assert spec is VARIANTS[variant]
    assert (r.counter_raise, r.all_in, r.governors, r.tie_rule, r.vira) == (
        spec.counter_raise, spec.all_in, spec.governors, spec.tie_rule, spec.vira)
    assert r.family.name == spec.family
    assert (kernel_supports(r) is None) <= spec.kernel  # the kernel never runs an undeclared variant


def test_option_dependent_fields():
    assert make_rules("le_truc", ladder="doubling").ladder == (1, 2, 4, 8, 16)
    assert make_rules("le_truc", ranking="seven_ace").ranking[:2] == ("7", "A")
    assert len(make_rules("truco_paulista", deck="clean").deck) == 24
    assert len(make_rules("truco_mineiro", deck="clean").deck) == 27
    mineiro = make_rules("truco_mineiro", ladder="mineiro")
    assert (mineiro.ladder, mineiro.eleven, mineiro.eleven_score, mineiro.eleven_value) == ((2, 4, 6, 10, 12), True, 10, 4)
    paulista = make_rules("truco_paulista")
    assert (paulista.eleven, paulista.eleven_score, paulista.eleven_value) == (True, 11, 3)
    assert not make_rules("truco_argentino").eleven
    assert make_rules("put_n", players=5).hand_size == 6


# ---------------------------------------------------------------------- seat geometry
@pytest.mark.parametrize("variant,options", [("le_truc_4p", {}), ("put_4p", {}), ("truco_paulista", {}),
                                             ("truco_argentino", {})])
def test_partner_sits_opposite(variant, options):
    r = make_rules(variant, **options)
    assert [r.partner(s) for s in range(4)] == [2, 3, 0, 1]
    assert all(r.side(r.partner(s)) == r.side(s) for s in range(4))
    state = State(r, episode="hand", dealer=1)
    assert [state.partner(s) for s in range(4)] == [2, 3, 0, 1]


@pytest.mark.parametrize("variant,options", [("le_truc", {}), ("truco_paulista", {"players": 2}),
                                             ("put_n", {"players": 4}), ("put_n", {"players": 6})])
def test_no_partner_without_partnership(variant, options):
    r = make_rules(variant, **options)
    assert all(r.partner(s) == -1 for s in range(r.players))


# ---------------------------------------------------------------------- señas
def _senas(r, vira_text=None):
    fam = r.family
    vira = fam.parse(vira_text) if vira_text else -1
    return {fam.format(c): r.senas_of(c, vira) for c in r.deck}


def test_senas_follow_the_vira_in_paulista():
    r = make_rules("truco_paulista", signals={"mode": "senas"})
    with_vira = _senas(r, "2d")  # manilha rank 3: the threes are manilhas, no card is a plain "three"
    assert [with_vira[c] for c in ("3c", "3h", "3s", "3d")] == [("zap",), ("copas",), ("espadilha",), ("picafumo",)]
    assert with_vira["4c"] == () and with_vira["2c"] == ()
    no_vira = _senas(r)
    assert no_vira["3c"] == ("three",) and no_vira["4c"] == ()


def test_senas_of_fixed_top_cards():
    mineiro = _senas(make_rules("truco_mineiro", signals={"mode": "senas"}))
    assert (mineiro["4c"], mineiro["7d"], mineiro["3s"], mineiro["7c"]) == (("zap",), ("picafumo",), ("three",), ())
    arg = _senas(make_rules("truco_argentino", signals={"mode": "senas"}))
    assert (arg["1e"], arg["1c"], arg["1o"], arg["2b"], arg["3o"], arg["12e"]) == (
        ("1e",), ("ancho_falso",), ("ancho_falso",), ("two",), ("three",), ())


@pytest.mark.parametrize("variant", [v for v, s in VARIANTS.items() if s.senas is not None])
def test_senas_tokens_are_the_records(variant):
    r = make_rules(variant, signals={"mode": "senas"})
    assert layout_of(r).signal_tokens == ("none",) + r.spec.senas.tokens


def test_senas_refused_where_not_declared():
    with pytest.raises(RulesError, match="exists only for truco_paulista, truco_mineiro, truco_argentino"):
        make_rules("le_truc_4p", signals={"mode": "senas"})


# ---------------------------------------------------------------------- readers of the record
def test_kernel_coverage_is_the_records(monkeypatch):
    declared = {v for v, s in VARIANTS.items() if s.kernel}
    assert declared == set(VARIANTS)  # every variant: put_n on a kernel of its own
    assert all(kernel_supports(make_rules(v)) is None for v in declared)
    monkeypatch.setitem(VARIANTS, "put", dataclasses.replace(VARIANTS["put"], kernel=False))  # a variant without one
    why = kernel_supports(make_rules("put"))
    assert "no array kernel" in why and all(v in why for v in declared - {"put"})


def test_partnership_abstraction_reads_the_record():
    for variant in ("le_truc_4p", "truco_paulista", "truco_mineiro"):
        r = make_rules(variant)
        ab = PartnershipAbstraction(r)
        assert (ab.groups, ab.class_names) == (r.spec.card_classes.groups, r.spec.card_classes.names)
    assert "no card abstraction for truco_argentino" in unsupported_reason(make_rules("truco_argentino"))


# ---------------------------------------------------------------------- no variant names outside variants.py
NAMES = set(VARIANTS) - {"put"}  # "put" is also a call's name: only flagged where compared with a variant


def _mentions_variant(node) -> bool:
    return any((isinstance(n, ast.Name) and n.id == "variant") or (isinstance(n, ast.Attribute) and n.attr == "variant")
               for n in ast.walk(node))


def _strings(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def variant_name_uses(source: str) -> list[int]:
    """Lines where code compares a variant's name, tests its prefix, or keys a table by it."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            strings = [s for o in operands for s in _strings(o)]
            table = any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and _mentions_variant(node.left) \
                and not all(isinstance(c, ast.Name) and c.id == "VARIANTS" for c in node.comparators)
            bare = any((isinstance(o, ast.Name) and o.id == "variant") or (isinstance(o, ast.Attribute) and o.attr == "variant")
                       for o in operands)  # the name itself, not e.g. option_specs(variant)
            if set(strings) & NAMES or (strings and bare) or table:
                hits.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") and _mentions_variant(node.func.value):
            hits.append(node.lineno)
        elif isinstance(node, ast.Dict) and {s for k in node.keys if k is not None for s in _strings(k)} & NAMES:
            hits.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Name, ast.Attribute)) \
                and _mentions_variant(node.slice) and not (isinstance(node.value, ast.Name) and node.value.id == "VARIANTS"):
            hits.append(node.lineno)
    return hits


def test_the_scan_finds_variant_name_tests():
    assert variant_name_uses('if rules.variant == "le_truc":\n    pass') == [1]
    assert variant_name_uses('x = v in ("truco_paulista", "truco_mineiro")') == [1]
    assert variant_name_uses('x = variant.startswith("put")') == [1]
    assert variant_name_uses('T = {"le_truc_4p": 1}\ny = T[rules.variant]') == [1, 2]
    assert variant_name_uses('x = rules.variant not in KERNEL_VARIANTS') == [1]
    assert variant_name_uses('x = view["call"] in ("rest", "put")\ny = VARIANTS[rules.variant]') == []


def test_no_variant_name_comparisons_outside_the_records():
    found = []
    for pkg in ("truc_env", "agents", "train"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path == ROOT / "truc_env" / "game" / "variants.py" or (ROOT / "train" / "bench") in path.parents:
                continue  # the benchmarks pick their workloads by name; they decide no rule
            found += [f"{path.relative_to(ROOT)}:{line}" for line in variant_name_uses(path.read_text())]
    assert not found, "variant names compared outside truc_env/game/variants.py: " + ", ".join(found)


# ---------------------------------------------------------------------- layers
def _imports(module_path: pathlib.Path) -> list[tuple[str, str]]:
    """(module, name) of every ``from module import name`` in a file, nested imports included."""
    out = []
    for node in ast.walk(ast.parse(module_path.read_text())):
        if isinstance(node, ast.ImportFrom):
            out += [("." * node.level + (node.module or ""), a.name) for a in node.names]
    return out


def test_signals_layers_have_no_circle():
    analysis = [m for m, _ in _imports(ROOT / "train" / "analysis" / "signals.py")]
    runs = [m for m, _ in _imports(ROOT / "train" / "algos" / "signals_runs.py")]
    assert not any(m.endswith("signals_runs") or m.endswith("signals_cli") for m in analysis)
    assert not any(m.endswith("signals_cli") for m in runs)


def test_vector_reads_no_private_engine_names():
    assert not [n for m, n in _imports(ROOT / "truc_env" / "batch" / "vector.py") if m.endswith("engine") and n.startswith("_")]
