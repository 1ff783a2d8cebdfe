"""Disagreements the differential test found and that are fixed, kept as scenarios where the allocator
corpus (tests/conformance/allocator, diff-*.yaml) cannot express them (DeviceTaintRules, for example):
each file in regressions/ is an oracle input on which kubedra and upstream must agree. A file named
``136-*.yaml`` is a 1.36 scenario: kubedra's 1.36 model against the v0.36 allocator (the 1.36 oracle)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

from .compare import difference, implementation, kubedra_outcome, oracle_outcome, oracle_release

pytestmark = pytest.mark.integration

FILES = sorted((Path(__file__).parent / "regressions").glob("*.yaml"))


def test_there_are_regression_scenarios() -> None:
    assert FILES


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression_scenario_agrees(path: Path, oracle: Oracle) -> None:
    with path.open() as f:
        doc = yaml.safe_load(f)
    if path.stem.startswith("136-"):
        if binaries.find(binaries.ORACLE, "1.36") is None:
            unavailable(f"{binaries.ORACLE} 1.36 is not built: run `make testbed`")
        oracle = Oracle(version="1.36")
        ours = kubedra_outcome(doc, version=oracle_release("1.36"))
    else:
        ours = kubedra_outcome(doc, version=oracle_release("1.37"))
    theirs = oracle_outcome(oracle.run(doc))
    assert theirs["kind"] != "error" or "panic" not in (theirs["error"] or "")
    why = difference(ours, theirs, implementation(doc["features"]) != "stable")
    assert why is None, why
