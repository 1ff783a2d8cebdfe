"""The generated parts of hand-written docs (scripts/gen_doc_sections.py) are what the code and data say: the
per-verb exit codes (docs/exit-codes.md), the audit rules table (docs/audit.md), the module index and the size
figure (docs/architecture.md). These tests only check; they never rewrite a doc."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from tests.unit.cli.helpers import documented_exit_codes, verbs

from kubedra.audit.model import RuleBook
from kubedra.commands._common import SHARED_EXIT_CODES

REPO = Path(__file__).resolve().parents[2]
FIX = "run `python scripts/gen_doc_sections.py`"


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_doc_sections", REPO / "scripts" / "gen_doc_sections.py"
    )
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_generated_sections_are_current(gen: ModuleType) -> None:
    stale = gen.stale(gen.render())
    assert not stale, f"stale: {', '.join(stale)}: {FIX}"


def test_the_check_sees_a_hand_edit_and_writes_nothing(gen: ModuleType, tmp_path: Path) -> None:
    for s in gen.SECTIONS:
        (tmp_path / s.doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / s.doc, tmp_path / s.doc)
    edited = tmp_path / "docs" / "audit.md"
    row = "| [`api.removed`](rules/api.removed.md) | error |"
    assert row in edited.read_text()
    edited.write_text(edited.read_text().replace(row, row.replace("error", "info")))
    before = edited.read_text()
    docs = gen.render(tmp_path)
    assert gen.stale(docs, tmp_path) == ["docs/audit.md"]
    assert edited.read_text() == before


def test_every_verb_and_exit_code_is_in_the_table(gen: ModuleType) -> None:
    """The script's own reading of --help agrees with the one the CLI grammar tests use."""
    table = gen.exit_code_table()
    assert sorted(n for n, _ in gen.verbs()) == sorted(n for n, _ in verbs())
    for name, cmd in verbs():
        assert gen.documented_exit_codes(cmd) == documented_exit_codes(cmd)
        for code in documented_exit_codes(cmd):
            if code not in SHARED_EXIT_CODES:
                assert f"| `kubedra {name}` | {code} |" in table, (name, code)


def test_every_rule_of_the_rule_book_is_in_the_audit_table(gen: ModuleType) -> None:
    table = gen.rules_table()
    rules = RuleBook.load().rules
    assert len(rules) == len(yaml.safe_load(gen.RULES.read_text())["rules"])
    for rid, rule in rules.items():
        assert f"| [`{rid}`](rules/{rid}.md) | {rule.severity} |" in table, rid
    audit = (REPO / "docs" / "audit.md").read_text()
    assert all(f"[`{rid}`](rules/{rid}.md)" in audit for rid in rules)


def test_every_module_is_named_in_the_architecture(gen: ModuleType) -> None:
    doc = (REPO / "docs" / "architecture.md").read_text()
    names = [name for name, _ in gen.modules()]
    assert "kubedra.allocator.reuse" in names
    assert "kubedra" in names
    missing = [n for n in names if f"| `{n}` |" not in doc]
    assert not missing, f"docs/architecture.md does not name {missing}: {FIX}"


def test_the_size_figure_is_within_five_percent(gen: ModuleType) -> None:
    actual = gen.line_count()
    m = gen._SIZE.search((REPO / "docs" / "architecture.md").read_text())
    assert m, "docs/architecture.md lost its '`src/kubedra/` (about N lines)' figure"
    figure = int(m.group(1).replace(",", ""))
    assert gen.size_figure_ok(figure, actual), f"about {figure} lines, actually {actual}: {FIX}"
    assert not gen.size_figure_ok(37_000, 40_551)
    assert gen.size_figure_ok(40_500, 40_551)
