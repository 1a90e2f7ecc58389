"""The house's layering, checked on the source: no import circles between modules (imports inside
functions count too), no private name imported from another module, and imports pointing down
(``train`` -> ``agents`` -> ``truc_env``) at module level."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("truc_env", "agents", "train")
LAYER = {"truc_env": 0, "agents": 1, "train": 2}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str) -> list[tuple[str, list[str], bool]]:
    """(module, names, at module level) for every import of ``name`` that names a project module."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = _resolve(name, path, node)
            names = [a.name for a in node.names]
            target = next((f"{mod}.{n}" for n in names if f"{mod}.{n}" in MODULES), mod)
            if mod in MODULES or target in MODULES:
                out.append((mod if mod in MODULES else target, names, id(node) in top))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], id(node) in top) for a in node.names if a.name in MODULES]
    return out


def test_no_import_circles_between_modules():
    # a package's __init__ re-exports its modules; the edges into it are not a module's dependency
    graph = {m: {t for t, _, _ in imports(m) if t != m and MODULES[t].name != "__init__.py"} for m in MODULES}
    done: set = set()

    def visit(m, path):
        assert m not in path, "import circle: " + " -> ".join(path[path.index(m):] + [m])
        if m not in done:
            for dep in sorted(graph[m]):
                visit(dep, path + [m])
            done.add(m)

    for m in sorted(MODULES):
        visit(m, [])


def test_visibility_sits_just_above_the_engine():
    """view.py decides what a seat sees; the encoders, renderers and adapters ask it, never the reverse."""
    below = {"truc_env.game.engine", "truc_env.game.rules", "truc_env.game.variants", "truc_env.game.actions", "truc_env.errors",
             "truc_env.game.cards"}
    assert {t for t, _, _ in imports("truc_env.game.view")} <= below


def test_no_private_names_imported_from_another_module():
    # a package's private module (truc_env.batch._vector_kernels) is its own business; a private name is not
    found = [f"{m}: {t}.{n}" for m in MODULES for t, names, _ in imports(m) for n in names
             if n.startswith("_") and not n.startswith("__") and f"{t}.{n}" not in MODULES]
    assert not found, found


def test_module_level_imports_point_down():
    found = [f"{m} imports {t}" for m in MODULES for t, _, top in imports(m)
             if top and LAYER[t.split(".")[0]] > LAYER[m.split(".")[0]]]
    assert not found, found


def test_the_checks_see_a_circle_and_a_private_name(monkeypatch, tmp_path):
    """The checks can fail: a planted circle and a planted private import are found."""
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from .a import _y\n")
    monkeypatch.setitem(MODULES, "truc_env.a", tmp_path / "a.py")
    monkeypatch.setitem(MODULES, "truc_env.b", tmp_path / "b.py")
    assert imports("truc_env.b") == [("truc_env.a", ["_y"], False)]
    try:
        test_no_import_circles_between_modules()
    except AssertionError as e:
        assert "truc_env.a -> truc_env.b -> truc_env.a" in str(e)
    else:
        raise AssertionError("the planted circle was not found")
