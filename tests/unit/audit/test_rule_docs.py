"""docs/rules/ is exactly what scripts/gen_rule_docs.py generates from the rule data (audit-rules.yaml)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from kubedra.audit.model import RuleBook

from .helpers import REPO


def _gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_rule_docs", REPO / "scripts" / "gen_rule_docs.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rule_pages_match_the_rule_data() -> None:
    gen = _gen()
    stale = gen.stale(gen.render())
    assert not stale, f"docs/rules/ is stale ({', '.join(stale)}): run `python scripts/gen_rule_docs.py`"


def test_every_rule_has_a_page_and_the_check_sees_changes(tmp_path: Path) -> None:
    gen = _gen()
    pages = gen.render()
    assert set(pages) == {f"{r}.md" for r in RuleBook.load().rules} | {"README.md"}
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert gen.stale(pages, tmp_path) == []
    (tmp_path / "api.removed.md").write_text("edited by hand\n")
    (tmp_path / "api.gone.md").write_text("a page for a removed rule\n")
    assert gen.stale(pages, tmp_path) == ["api.gone.md", "api.removed.md"]
    rules = gen.load()
    rules[0]["title"] = "changed in the data"
    assert "input.malformed.md" in gen.stale(gen.render(rules), tmp_path)
