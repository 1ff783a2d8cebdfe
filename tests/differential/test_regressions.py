"""Disagreements the differential test found and that are fixed, kept as scenarios where the allocator
corpus (tests/conformance/allocator, diff-*.yaml) cannot express them (DeviceTaintRules, for example):
each file in regressions/ is an oracle input on which kubedra and upstream must agree. A file named
``136-*.yaml`` is a 1.36 scenario: kubedra's 1.36 model against the v0.36 allocator (the 1.36 oracle), one
named ``138-*.yaml`` a 1.38 one against the v0.38 allocator, ``134-*.yaml`` a 1.34 one against the v0.34.13
allocator; the others run at 1.37."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kubedra.k8s import versions
from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

from .compare import difference, kubedra_outcome, oracle_outcome, oracle_release, ordered

pytestmark = pytest.mark.integration

FILES = sorted((Path(__file__).parent / "regressions").glob("*.yaml"))


def _release(path: Path) -> str | None:
    """The release a ``1NN-*.yaml`` scenario runs at (``136-`` -> ``1.36``), None for the others (1.37)."""
    m = re.match(r"1(\d\d)-", path.stem)
    return f"1.{m.group(1)}" if m else None


def test_there_are_regression_scenarios() -> None:
    assert FILES


def test_release_prefix_names_the_release() -> None:
    assert _release(Path("138-nineteen-digit-quantity-is-an-integer.yaml")) == "1.38"
    assert _release(Path("136-pool-name-shared-by-drivers.yaml")) == "1.36"
    assert _release(Path("taint-rule-without-selector.yaml")) is None


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_regression_scenario_agrees(path: Path, oracle: Oracle) -> None:
    with path.open() as f:
        doc = yaml.safe_load(f)
    release = _release(path)
    if release is not None:
        if binaries.find(binaries.ORACLE, release) is None:
            if release not in versions.testbed():
                # a supported release make testbed does not build yet (docs/testbed.md says why)
                pytest.skip(
                    f"{binaries.ORACLE} {release} is built by hand: make -C testbed K8S_VERSION={release}"
                )
            unavailable(f"{binaries.ORACLE} {release} is not built: run `make testbed`")
        oracle = Oracle(version=release)
        ours = kubedra_outcome(doc, version=oracle_release(release))
    else:
        ours = kubedra_outcome(doc, version=oracle_release("1.37"))
    theirs = oracle_outcome(oracle.run(doc))
    assert theirs["kind"] != "error" or "panic" not in (theirs["error"] or "")
    why = difference(ours, theirs, ordered(doc["features"], release or "1.37"))
    assert why is None, why
