"""`make test-integration` collects only the folders of the Makefile's INTEGRATION_TESTS: a test marked
``integration`` anywhere else would be run by neither suite (the unit suite deselects it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _integration_folders() -> list[Path]:
    make = (ROOT / "Makefile").read_text()
    folders = re.search(r"^INTEGRATION_TESTS := (.+)$", make, re.M)
    assert folders, "the Makefile names the integration test folders (INTEGRATION_TESTS)"
    assert "$(INTEGRATION_TESTS)" in make.split("\ntest-integration:", 1)[1].split("\n\n", 1)[0], (
        "make test-integration runs pytest on INTEGRATION_TESTS"
    )
    return [ROOT / f for f in folders.group(1).split()]


def test_every_integration_test_is_in_a_folder_make_test_integration_collects() -> None:
    folders = _integration_folders()
    assert all(f.is_dir() for f in folders), folders
    mark = "pytest.mark." + "integration"  # not written out, so this file does not match itself
    marked = [p for p in (ROOT / "tests").rglob("*.py") if mark in p.read_text(encoding="utf-8")]
    assert marked, "no test file carries the integration mark: the search is broken"
    outside = [str(p.relative_to(ROOT)) for p in marked if not any(p.is_relative_to(f) for f in folders)]
    assert outside == [], (
        f"integration tests outside {[str(f.relative_to(ROOT)) for f in folders]}: {outside}"
    )
