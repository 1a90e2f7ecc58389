"""Write the generated docs: docs/api.md from the docstrings, the tables of docs/rules.md from the code.

The API reference lists every public module of ``truc_env``, ``agents`` and ``train`` in turn: its summary, then its public
classes (with their public methods) and functions, each with its signature and docstring. Only
names defined in the module itself are listed, so a re-export is documented once, where it lives.

In docs/rules.md, each table sits between ``<!-- generated:NAME -->`` and ``<!-- end:NAME -->``
markers (the option specs of every variant, the signal keys, the señas, the calls); the prose around
them is written by hand. ``python scripts/api_docs.py`` rewrites both; ``--check`` writes nothing
and exits 1 when either is out of date.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api.md"
RULES = ROOT / "docs" / "rules.md"
PACKAGES = ("truc_env", "agents", "train")


def modules() -> list[str]:
    """Names of the public modules of the packages, packages first, then alphabetically."""
    names = []
    for package in PACKAGES:
        names.append(package)
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names, key=lambda n: (n.split(".")[0] != "truc_env", n.split(".")[0] != "agents", n))


def _signature(obj) -> str:
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", sig)  # object reprs in defaults: no addresses


def _doc(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip()


def _quote(doc: str) -> list[str]:
    """A docstring as a paragraph of its own (docstrings here are plain prose)."""
    return [doc, ""] if doc else []


def _summary(module) -> str:
    doc = _doc(module)
    if not doc:
        return ""
    first = doc.split("\n\n")[0].lstrip("# ").replace("\n", " ")
    return first


def _own(module, obj) -> bool:
    return getattr(obj, "__module__", None) == module.__name__


def _public(name: str) -> bool:
    return not name.startswith("_")


def module_section(name: str) -> list[str]:
    """The reference of one module as markdown lines."""
    module = importlib.import_module(name)
    lines = [f"## `{name}`", ""]
    summary = _summary(module)
    if summary:
        lines += [summary, ""]
    members = inspect.getmembers(module)
    classes = [(n, o) for n, o in members if inspect.isclass(o) and _public(n) and _own(module, o)]
    functions = [(n, o) for n, o in members
                 if inspect.isfunction(o) and _public(n) and _own(module, o)]
    for cname, cls in classes:
        lines += [f"### class `{name}.{cname}{_signature(cls)}`", ""]
        doc = _doc(cls) if cls.__doc__ else ""
        if doc.startswith(cname + "("):  # a dataclass's generated docstring repeats the signature
            doc = ""
        lines += _quote(doc)
        for mname, member in cls.__dict__.items():
            if not _public(mname):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, property):
                doc = _doc(member)
                if doc:
                    lines += [f"- `{mname}` (property): {doc.splitlines()[0]}"]
                continue
            if inspect.isfunction(member):
                doc = _doc(member)
                lines += [f"- `{mname}{_signature(member)}`" + (f": {doc.splitlines()[0]}" if doc else "")]
        if lines[-1] != "":
            lines.append("")
    for fname, fn in functions:
        lines += [f"### `{name}.{fname}{_signature(fn)}`", ""]
        lines += _quote(_doc(fn))
    return lines


def render() -> str:
    """The whole reference as one markdown text."""
    names = modules()
    lines = ["# API reference", "",
             "Generated from the docstrings by `python scripts/api_docs.py`; do not edit by hand.",
             "The rules are in [rules.md](rules.md), the layout in [architecture.md](architecture.md).", "",
             "Modules: " + ", ".join(f"[`{n}`](#{n.replace('.', '')})" for n in names), ""]
    for name in names:
        lines += module_section(name)
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------- docs/rules.md tables
def _value(v) -> str:
    if v is None:
        return "full game"
    if isinstance(v, bool):
        return f"`{str(v).lower()}`"
    if isinstance(v, dict):
        return ", ".join(f"`{k}: {_value(x).strip('`')}`" for k, x in v.items())
    return f"`{v}`"


def _allowed(spec) -> str:
    allowed = spec.allowed
    if allowed == "signals":
        return "see §8"
    if isinstance(allowed, tuple) and allowed and allowed[0] == "int":
        return f"integer {allowed[1]}..{allowed[2]}"
    return ", ".join(_value(a) for a in allowed)


def option_table(specs: dict) -> str:
    """A markdown table of option specs: name, default, allowed values, meaning."""
    rows = ["| option | default | allowed | meaning |", "|---|---|---|---|"]
    for name, spec in specs.items():
        rows.append(f"| `{name}` | {_value(spec.default)} | {_allowed(spec)} | {spec.doc} |")
    return "\n".join(rows)


def signal_table() -> str:
    """The keys of the ``signals`` option with their defaults (from ``SignalRules``)."""
    from truc_env.game.rules import SIGNAL_MODES, SIGNAL_TIMINGS, SignalRules

    allowed = {"mode": ", ".join(f"`{m}`" for m in SIGNAL_MODES), "vocab": "integer 1..64",
               "truthful": "`true`, `false`", "intercept": "probability 0..1",
               "timing": ", ".join(f"`{t}`" for t in SIGNAL_TIMINGS), "open_hands": "`true`, `false`"}
    rows = ["| key | default | allowed |", "|---|---|---|"]
    for f in dataclasses.fields(SignalRules):
        if f.name in allowed:
            rows.append(f"| `{f.name}` | {_value(f.default)} | {allowed[f.name]} |")
    return "\n".join(rows)


def senas_table() -> str:
    """The gesture tokens of ``mode: senas`` per variant."""
    from truc_env.game.rules import VARIANTS

    rows = ["| variant | tokens |", "|---|---|"]
    for variant, spec in VARIANTS.items():
        if spec.senas is not None:
            rows.append(f"| `{variant}` | {', '.join(f'`{t}`' for t in spec.senas.tokens)} |")
    return "\n".join(rows)


def calls_list() -> str:
    """The single-word calls of the action notation."""
    from truc_env.game.actions import CALLS

    return ", ".join(f"`{c}`" for c in CALLS)


def rules_tables() -> dict[str, str]:
    """Every generated block of docs/rules.md by name."""
    from truc_env.game.rules import COMMON, VARIANTS

    out = {f"options:{v}": f"{spec.summary}\n\n{option_table(spec.options)}" for v, spec in VARIANTS.items()}
    out["options:common"] = option_table(COMMON)
    out["signals"] = signal_table()
    out["senas"] = senas_table()
    out["calls"] = calls_list()
    return out


_BLOCK = re.compile(r"(<!-- generated:(?P<name>[\w:]+) -->\n)(?P<body>.*?)(<!-- end:(?P=name) -->)", re.S)


def render_rules(text: str) -> tuple[str, list[str]]:
    """docs/rules.md's ``text`` with every generated block replaced; also the names of blocks that changed."""
    blocks = rules_tables()
    changed = []

    def swap(m):
        name = m["name"]
        if name not in blocks:
            raise SystemExit(f"{RULES}: unknown generated block {name!r}; known: {', '.join(blocks)}")
        body = blocks[name] + "\n"
        if m["body"] != body:
            changed.append(name)
        return m.group(1) + body + m.group(4)

    new = _BLOCK.sub(swap, text)
    missing = sorted(set(blocks) - {m["name"] for m in _BLOCK.finditer(text)})
    if missing:
        raise SystemExit(f"{RULES}: no place for generated block(s) {', '.join(missing)}")
    return new, changed


def main(argv: list[str] | None = None) -> int:
    """Write docs/api.md and docs/rules.md's tables, or with ``--check`` report which are out of date."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a generated doc is out of date")
    args = p.parse_args(argv)
    rules_text = RULES.read_text(encoding="utf-8")
    new_rules, stale = render_rules(rules_text)
    api_old = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    updates = {RULES: (rules_text, new_rules), OUT: (api_old, render())}
    out_of_date = [path for path, (old, new) in updates.items() if old != new]
    for path in out_of_date:
        name = path.relative_to(ROOT)
        if args.check:
            print(f"{name} is out of date" + (f" ({', '.join(stale)})" if path == RULES else "")
                  + ": run python scripts/api_docs.py")
        else:
            from truc_env.io.atomic import atomic_write_text

            atomic_write_text(path, updates[path][1])
            print(f"wrote {name}")
    return 1 if args.check and out_of_date else 0


if __name__ == "__main__":
    sys.exit(main())
