"""The real-world corpus: every verb's outcome on each public manifest in inputs/ is pinned in expected/.

A change of outcome fails with the diff; after reviewing it, record it with
``python scripts/realworld_expect.py --update`` (see docs/realworld-corpus.md).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from realworld import outcomes

SOURCES = yaml.safe_load((outcomes.CORPUS / "SOURCES.yaml").read_text())["sources"]
LICENCES = {"Apache-2.0", "BSD-3-Clause", "MIT"}  # all allow redistribution with the notice kept


def test_corpus_is_large_enough_and_every_file_has_a_source() -> None:
    files = {p.name for p in outcomes.inputs()}
    assert len(files) >= 80
    by_file = {s["file"]: s for s in SOURCES}
    assert set(by_file) == files, "every input needs exactly one SOURCES.yaml entry and vice versa"
    for s in SOURCES:
        assert s["repo"].count("/") == 1, s
        assert s["path"], s
        assert len(s["commit"]) == 40, s
        assert int(s["commit"], 16) >= 0, s
        assert s["licence"] in LICENCES, s


def test_inputs_kept_in_tests_corpus_name_the_same_source() -> None:
    """One copy of each file: those shared with tests/corpus live there, and its # Source line agrees."""
    kept = [s for s in SOURCES if s.get("corpus")]
    assert kept
    for s in kept:
        corpus_file = outcomes.TESTS_CORPUS / s["corpus"]
        first = corpus_file.read_text().splitlines()[0]
        assert first.startswith("# Source: github.com/"), (s, first)
        assert s["path"] in first, (s, first)
        assert s["repo"].split("/")[1].lower() in first.lower(), (s, first)
        assert not (outcomes.INPUTS / s["file"]).exists(), (
            f"{s['file']} is kept in tests/corpus: no copy here"
        )
        assert outcomes.input_path(s["file"][: -len(".yaml")]).read_text() == outcomes.upstream_text(
            corpus_file
        )


def test_every_input_has_an_expectation() -> None:
    missing = [p.name for p in outcomes.inputs() if not (outcomes.EXPECTED / p.name).exists()]
    names = {p.name for p in outcomes.inputs()}
    stale = [p.name for p in outcomes.EXPECTED.glob("*.yaml") if p.name not in names]
    assert not missing, f"missing {missing}, stale {stale}; run {outcomes.UPDATE_HINT}"
    assert not stale, f"missing {missing}, stale {stale}; run {outcomes.UPDATE_HINT}"


@pytest.mark.parametrize("path", outcomes.inputs(), ids=lambda p: p.stem)
def test_outcome_unchanged(path: Path) -> None:
    expected = (outcomes.EXPECTED / path.name).read_text()
    actual = outcomes.dump(outcomes.outcome(path))
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), f"expected/{path.name}", "actual"
            )
        )
        pytest.fail(
            f"the outcome on {path.name} changed:\n{diff}\n"
            f"If the new outcome is right (review it against the operator's real behaviour), record it:\n"
            f"  {outcomes.UPDATE_HINT} {path.stem}",
            pytrace=False,
        )
