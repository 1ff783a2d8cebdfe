"""The allocator conformance corpus (tests/conformance/allocator) run through the upstream allocator.

The corpus was written by reading upstream's test table; this proves that each expectation is upstream's
own answer: every case goes to ``kubedra-oracle`` (one batch for the whole corpus), without API defaulting
(upstream's table builds its objects directly), and the oracle's answer is compared with ``expect`` by the
corpus runner's rules (per-claim results in any order, devices as a multiset, node selectors
order-insensitive, config exact, error substrings).

A case where the oracle disagrees with its expectation means the corpus is wrong; :data:`CORPUS_WRONG`
lists any such case with the reason (strict xfail, so a corrected case must come off the list).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.k8s import versions
from kubedra.testing import binaries
from kubedra.testing.oracle import Oracle
from kubedra.testing.require import unavailable

from .compare import oracle_outcome
from .corpus import CORPUS, case_to_scenario

pytestmark = pytest.mark.integration

CASE_FILES = sorted(CORPUS.glob("*.yaml"))

# Cases upstream runs in a way the oracle cannot: the interrupt cases cancel a Go context (expired timeout,
# past deadline, cancelled) that the oracle's input has no way to express.
NOT_EXPRESSIBLE = {
    "interrupt-timeout": "needs an already expired context timeout",
    "interrupt-deadline": "needs a context deadline in the past",
    "interrupt-cancel": "needs a cancelled context",
}
# Corpus expectations the oracle contradicts (the corpus would be wrong); none known.
CORPUS_WRONG: dict[str, str] = {}
# Device-result fields the oracle's output does not carry (testbed/oracle deviceResult): a case that
# expects one is compared on everything else and must be listed here.
COMPARED_FIELDS = {
    "request",
    "driver",
    "pool",
    "device",
    "adminAccess",
    "tolerations",
    "bindingConditions",
    "bindingFailureConditions",
    "shareID",
    "consumedCapacity",
}
PARTLY_COMPARED = {
    "optional-node-operations": "skipNodeOperations (1.37) is not in the oracle's output; the rest is compared",
}


def _load(path: Path) -> dict[str, Any]:
    with path.open() as f:
        data: dict[str, Any] = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data


CASES = {p.stem: _load(p) for p in CASE_FILES}


@pytest.fixture(scope="module")
def answers(oracle: Oracle) -> dict[str, dict[str, Any]]:
    names = [n for n in CASES if n not in NOT_EXPRESSIBLE]
    results = oracle.run_batch([case_to_scenario(CASES[n]) for n in names])
    return dict(zip(names, results, strict=True))


def _expected_claim(r: dict[str, Any]) -> dict[str, Any]:
    """An expected result entry in the oracle's claim shape, for the same normalisation."""
    return {"results": r["devices"], "nodeSelector": r.get("nodeSelector"), "config": r.get("config") or []}


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def _params() -> list[Any]:
    out = []
    for p in CASE_FILES:
        marks: list[Any] = []
        if p.stem in NOT_EXPRESSIBLE:
            marks.append(pytest.mark.skip(reason=NOT_EXPRESSIBLE[p.stem]))
        elif p.stem in CORPUS_WRONG:
            marks.append(pytest.mark.xfail(strict=True, reason=CORPUS_WRONG[p.stem]))
        out.append(pytest.param(p.stem, id=p.stem, marks=marks))
    return out


@pytest.mark.parametrize("name", _params())
def test_corpus_expectation_is_upstreams(name: str, answers: dict[str, dict[str, Any]]) -> None:
    _assert_upstream_gives(name, oracle_outcome(answers[name]), CASES[name]["expect"])


# expectAt entries (a case's answer at an older release) of the releases the testbed builds: a release's entries
# are checked here once it joins data/versions.yaml testbed (1.35's were read from its v0.35.10 oracle).
AT_RELEASE = [
    pytest.param(name, release, id=f"{name}@{release}")
    for name, case in CASES.items()
    for release in case.get("expectAt", {})
    if release in versions.testbed()
]


@pytest.mark.parametrize(("name", "release"), AT_RELEASE)
def test_release_expectation_is_upstreams(name: str, release: str) -> None:
    """The case at an older release, through that release's oracle: only the features the case names (no
    implementation selection, which is v0.37's), slices by name (kubedra's order; where upstream's order
    changes the answer, the corpus has no expectAt)."""
    if binaries.find(binaries.ORACLE, release) is None:
        unavailable(f"{binaries.ORACLE} {release} is not built: run `make testbed`")
    doc = case_to_scenario(CASES[name])
    doc["features"] = dict.fromkeys(CASES[name]["features"], True)
    doc["slices"] = sorted(doc["slices"], key=lambda s: s["metadata"]["name"])
    got = oracle_outcome(Oracle(version=release).run(doc))
    _assert_upstream_gives(name, got, CASES[name]["expectAt"][release])


def _assert_upstream_gives(name: str, got: dict[str, Any], expect: dict[str, Any]) -> None:
    if "error" in expect:
        subs = expect["error"] if isinstance(expect["error"], list) else [expect["error"]]
        assert got["kind"] == "error", f"upstream: {got['kind']}, corpus expects an error {subs}"
        for s in subs:
            assert s in got["error"], f"upstream error {got['error']!r} lacks {s!r}"
        return
    want = expect["results"]
    if want is None:
        assert got["kind"] == "unsatisfiable", f"upstream: {got['kind']} {got['error'] or ''}"
        return
    if not want:
        assert got["kind"] == "allocated", f"upstream: {got}"
        assert not got["claims"], f"upstream: {got}"
        return
    assert got["kind"] == "allocated", f"upstream: {got['kind']} {got['error'] or ''}"
    extra = {k for r in want for d in r["devices"] for k in d} - COMPARED_FIELDS
    assert not extra or name in PARTLY_COMPARED, f"the oracle cannot show {sorted(extra)}: list the case"
    expected = oracle_outcome({"allocated": True, "claims": [_expected_claim(r) for r in want]})["claims"]
    actual = got["claims"]
    # Upstream's own test matches the per-claim results with ConsistOf: any order.
    if sorted(map(_canon, actual)) != sorted(map(_canon, expected)):
        pytest.fail(
            "upstream's allocation differs from the corpus:\n"
            f"  corpus   {json.dumps(expected, sort_keys=True)}\n  upstream {json.dumps(actual, sort_keys=True)}"
        )


def test_every_case_is_checked() -> None:
    assert len(CASES) >= 283
    assert set(NOT_EXPRESSIBLE) <= set(CASES)
