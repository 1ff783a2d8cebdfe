"""Disagreements the differential test found and that are fixed, kept as scenarios where the allocator
corpus (tests/conformance/allocator, diff-*.yaml) cannot express them (DeviceTaintRules, for example):
each file in regressions/ is an oracle input on which kubedra and upstream must agree."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubedra.testing.oracle import Oracle

from .compare import difference, implementation, kubedra_outcome, oracle_outcome

pytestmark = pytest.mark.integration

FILES = sorted((Path(__file__).parent / "regressions").glob("*.yaml"))


def test_there_are_regression_scenarios() -> None:
    assert FILES


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression_scenario_agrees(path: Path, oracle: Oracle) -> None:
    with path.open() as f:
        doc = yaml.safe_load(f)
    ours, theirs = kubedra_outcome(doc), oracle_outcome(oracle.run(doc))
    assert theirs["kind"] != "error" or "panic" not in (theirs["error"] or "")
    why = difference(ours, theirs, implementation(doc["features"]) != "stable")
    assert why is None, why
