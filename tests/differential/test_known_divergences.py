"""Each known divergence (test_allocator_vs_oracle.KNOWN_DIVERGENCES) on its minimal scenario: kubedra
and upstream still disagree there, and the divergence's predicate recognises it. When the allocator is
fixed these tests fail (strict xfail on the agreement), and the entry comes off the list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

from .compare import difference, kubedra_outcome, oracle_outcome, oracle_release, ordered
from .corpus import CORPUS, case_to_scenario
from .test_allocator_vs_oracle import KNOWN_DIVERGENCES, _is_135, _is_136, _is_138

pytestmark = pytest.mark.integration

KNOWN = Path(__file__).parent / "known"


def _scenario(name: str) -> dict[str, Any]:
    """The oracle input: known/<name>.yaml, or the corpus case diff-<name>.yaml."""
    path = KNOWN / f"{name}.yaml"
    if not path.exists():
        with (CORPUS / f"diff-{name}.yaml").open() as f:
            return case_to_scenario(yaml.safe_load(f))
    with path.open() as f:
        doc: dict[str, Any] = yaml.safe_load(f)
    return doc


def test_every_known_divergence_has_a_scenario() -> None:
    known = {p.stem for p in KNOWN.glob("*.yaml")}
    corpus = {p.stem.removeprefix("diff-") for p in CORPUS.glob("diff-*.yaml")}
    assert known <= set(KNOWN_DIVERGENCES), f"known/ has scenarios for no listed divergence: {known}"
    for name in KNOWN_DIVERGENCES:
        assert name in known or name in corpus, f"{name}: no known/{name}.yaml nor corpus diff-{name}.yaml"


def _outcomes(name: str, oracle: Oracle) -> tuple[dict[str, Any], Any, Any, str | None]:
    doc = _scenario(name)
    release = "1.38" if _is_138(doc) else "1.35" if _is_135(doc) else "1.36" if _is_136(doc) else None
    if release is not None:  # kubedra's model of that release against its allocator
        if binaries.find(binaries.ORACLE, release) is None:
            unavailable(f"{binaries.ORACLE} {release} is not built: run `make testbed`")
        oracle = Oracle(version=release)
        ours = kubedra_outcome(doc, version=oracle_release(release))
    else:
        ours = kubedra_outcome(doc, version=oracle_release("1.37"))
    theirs = oracle_outcome(oracle.run(doc))
    exact = ordered(doc["features"], release or "1.37")
    return doc, ours, theirs, difference(ours, theirs, exact)


def test_each_known_divergence_is_recognised_and_still_diverges(oracle: Oracle) -> None:
    """Each listed divergence: its predicate recognises what its scenario gives, and the scenario still
    disagrees (once it agrees, the entry must go). One test over the list, so that an empty list (nothing
    waived, as now) is a pass and not a skip."""
    for name in KNOWN_DIVERGENCES:
        doc, ours, theirs, why = _outcomes(name, oracle)
        assert why is not None, f"{name}: kubedra now agrees with upstream; remove the entry and its scenario"
        assert KNOWN_DIVERGENCES[name][1](doc, ours, theirs), f"{name}: the predicate misses {why}"
