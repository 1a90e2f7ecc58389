"""The docs inside the repository match the code: generated tables, the API reference, the links."""

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_option_tables_match_the_code():
    api_docs = _script("api_docs")
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    _, stale = api_docs.render_rules(text)
    assert stale == [], f"docs/rules.md is out of date ({stale}): run python scripts/api_docs.py"


def test_rules_doc_lists_every_option_of_every_variant():
    from truc_env.game.rules import VARIANTS, option_specs

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for variant in VARIANTS:
        block = re.search(rf"<!-- generated:options:{variant} -->\n(.*?)<!-- end:", text, re.S).group(1)
        for name in set(option_specs(variant)) - {"ranks", "hand_size", "max_raises", "first_dealer"}:
            assert f"| `{name}` |" in block, (variant, name)


def test_a_changed_default_makes_the_rules_doc_stale(monkeypatch):
    from truc_env.game import rules

    api_docs = _script("api_docs")
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    spec = rules.VARIANTS["put"].options["target"]
    monkeypatch.setitem(rules.VARIANTS["put"].options, "target", rules.OptionSpec(7, spec.allowed, spec.doc))
    _, stale = api_docs.render_rules(text)
    assert stale == ["options:put"]


def test_every_rules_section_cited_exists():
    # citations "docs/rules.md §N" anywhere in the repository point at a real section
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\d+)\. ", text, re.M))
    cited, outside = set(), []
    contract = "RULES" + ".md"  # the name of the old contract outside the repository
    for path in ROOT.rglob("*"):
        if path.suffix in {".py", ".md", ".ipynb", ".yaml"} and ".venv" not in path.parts and path.is_file():
            text = path.read_text(encoding="utf-8", errors="ignore")
            cited |= set(re.findall(r"docs/rules\.md §(\d+)", text))
            if contract in text:
                outside.append(str(path.relative_to(ROOT)))
    assert cited and cited <= sections, sorted(cited - sections)
    assert outside == [], f"cite docs/rules.md instead of {contract} in {outside}"


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", ["README.md", "docs/rules.md", "docs/architecture.md", "docs/api.md", "docs/results.md",
                                 "docs/cfr.md", "docs/signals.md",
                                 "configs/README.md", "models/README.md",
                                 *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "results").glob("*.md"))])
def test_links_stay_inside_the_repository(doc):
    path = ROOT / doc
    text = path.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)]*))?\)", text):
        if target.startswith(("http://", "https://")):
            continue
        resolved = (path.parent / target).resolve() if target else path
        assert resolved.is_relative_to(ROOT), f"{doc} links outside the repository: {target}"
        assert resolved.exists(), f"{doc} links to a missing file: {target}"
        if anchor:
            assert anchor in _anchors(resolved), f"{doc}: no heading #{anchor} in {target or doc}"


def test_api_reference_is_generated_from_the_current_docstrings():
    api_docs = _script("api_docs")
    text = api_docs.render()
    for module in api_docs.modules():
        assert f"## `{module}`" in text
    for name in ("truc_env.game.engine.State", "truc_env.game.records.replay", "truc_env.display.draw.draw_table",
                 "agents.make_agent", "truc_env.game.rules.make_rules"):
        assert f"`{name}(" in text, name
    assert " at 0x" not in text  # no memory addresses: the file is the same on every machine
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert text == committed, "docs/api.md is out of date: run python scripts/api_docs.py"
