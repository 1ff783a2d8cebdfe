"""The only tests that look beside the clone. Every other test reads tests/corpus, a copy of the development
checkout's shared example corpus (../shared/corpus). Where that folder exists, these check that the copies have
not drifted from it and sweep all of it (including files not copied here): audit parses every file, naming each document that is no
Kubernetes object (input.malformed) instead of counting it as scanned clean, and migrate either migrates a file or says, with a reason and a line, what a human must do.
A lone clone has no ../shared, so these skip, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, load_sources

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "tests" / "corpus"
SHARED = REPO.parent / "shared" / "corpus"

pytestmark = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason="../shared/corpus is not beside this clone (only the development checkout has it); "
    "the copies in tests/corpus are what every other test reads",
)


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p.name != "README.md"
    )


def test_the_copies_in_tests_corpus_match_the_shared_corpus() -> None:
    differing = [
        rel
        for rel in _files(LOCAL)
        if not (SHARED / rel).is_file() or (SHARED / rel).read_bytes() != (LOCAL / rel).read_bytes()
    ]
    assert not differing, (
        f"tests/corpus differs from ../shared/corpus in {differing}: copy the shared file(s) again "
        "(cp ../shared/corpus/<path> tests/corpus/<path>) and review the expectations of the tests that read them"
    )


def test_audit_and_migrate_read_every_shared_file() -> None:
    files = _files(SHARED)
    r = CliRunner().invoke(cli, ["audit", str(SHARED), "-o", "json"], catch_exceptions=False)
    report = json.loads(r.stdout)
    # a folder scan reads the manifest files; Helm templates (.tpl) need `helm template` first, and one not
    # read is named (input.helm-template) and said on stderr: the run is incomplete, never clean, and what was
    # found wins the exit code (docs/exit-codes.md): 1 with error findings, 2 only without
    templates = sorted(f for f in files if f.endswith(".tpl"))
    named = sorted(
        str(Path(f["source"]["file"]).relative_to(SHARED))
        for f in report["findings"]
        if f["rule"] == "input.helm-template"
    )
    assert named == templates
    errors = [
        f for f in report["findings"] if f["severity"] == "error" and not f["rule"].startswith("input.")
    ]
    assert r.exit_code == (1 if errors or not templates else 2), r.stderr
    assert not templates or "could not be read" in r.stderr
    assert report["summary"]["filesScanned"] == len(templates) + len(
        [f for f in files if f.endswith((".yaml", ".yml", ".json"))]
    )
    # every file parses; the documents that are no Kubernetes object (a fragment, a tool's own configuration:
    # no kind) are named as not audited, never counted as objects scanned clean
    malformed = [f for f in report["findings"] if f["rule"] == "input.malformed"]
    assert all(f["message"].startswith("not a Kubernetes object (no kind)") for f in malformed), malformed
    kindless = []
    for f in files:
        if f.endswith((".yaml", ".yml")):
            for doc in yaml.safe_load_all((SHARED / f).read_text()):
                if isinstance(doc, dict) and not doc.get("kind"):
                    kindless.append(f)
    assert sorted(str(Path(f["source"]["file"]).relative_to(SHARED)) for f in malformed) == sorted(kindless)
    migrated = Migrator(MigrateOptions(target_version="1.37")).migrate(
        load_sources([str(SHARED / f) for f in files])
    )
    assert len(migrated.files) == len(files)
    for m in (f for r in migrated.files for f in r.findings if f.level == "manual"):
        assert m.message, f"manual item without reason or line: {m}"
        assert m.line, f"manual item without reason or line: {m}"
