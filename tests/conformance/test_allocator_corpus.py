"""Data-driven conformance tests: every case file under ``allocator/`` against kubedra's allocator.

The case format is described in ``allocator/README.md``. The corpus itself is checked (schema, counts, every
object parses), then every case runs against ``kubedra.allocator``. The allocator is imported at module level:
a broken import fails the whole file instead of turning ~280 cases into skips. A case skips only for a reason
it names: its own ``skip:`` entry, or a feature in ``Features.UNSUPPORTED`` (like upstream skips a case whose
features an allocator implementation does not support); any other exception is a failure.

Comparison follows upstream's ``RunTestAllocator``: per-claim results order-insensitive (``ConsistOf``),
device results inside a claim order-insensitive, node selectors order-insensitive (terms, requirements,
values), config and allocation timestamp exact (absent config = none), shareIDs replaced by the fixed
UUID, and the inputs must be unchanged afterwards.
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.differential.corpus import DEFAULT_NODE  # upstream's node(node1, region1)

from kubedra import allocator as api
from kubedra.errors import InputError
from kubedra.k8s import versions as api_versions
from kubedra.k8s.quantity import parse_quantity
from kubedra.model.objects import AllocationResult
from kubedra.model.parse import parse_object
from kubedra.model.serialize import allocation_dict

CORPUS = Path(__file__).parent / "allocator"
CASE_FILES = sorted(CORPUS.glob("*.yaml"))
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"

# Upstream's structured.Features field names (k8s.io/dynamic-resource-allocation v0.37.2).
KNOWN_FEATURES = {
    "AdminAccess",
    "CompatibilityGroups",
    "ConsumableCapacity",
    "DerivedAttributes",
    "DeviceBindingAndStatus",
    "DeviceTaints",
    "FractionalCapacityRange",
    "ListTypeAttributes",
    "OptionalNodeOperations",
    "PartitionableDevices",
    "PrioritizedList",
}
IMPLEMENTATIONS = {"stable", "incubating", "experimental"}
TOP_KEYS = {
    "name",
    "source",
    "features",
    "node",
    "objects",
    "claims",
    "allocatedDevices",
    "allocatedSharedDeviceIDs",
    "allocatedCapacity",
    "expect",
    "implementations",
    "skip",
    "interrupt",
    "expectAt",
}
REQUIRED_KEYS = {"name", "source", "features", "objects", "claims", "expect"}
EXPECT_KEYS = {"error", "results", "allocateOneCalls", "allocateOneCallsByImplementation"}
RESULT_KEYS = {"devices", "nodeSelector", "config"}
# Fields of DeviceRequestAllocationResult that kubedra's model represents.
DEVICE_RESULT_KEYS = {
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
    "skipNodeOperations",
}
# Upstream tables: TestAllocator in allocator_testing.go at v0.37.2 has 275 cases plus the 4 "interrupt"
# subtests (kept here as interrupt-*), TestLexicographicalAllocator has 4.
UPSTREAM_COUNTS = {"allocator_testing.go": 275 + 4, "lexicographical_testing.go": 4}


# Cases whose objects the API server rejects (k8s.io/kubernetes v1.37.2 pkg/apis/resource/validation/validation.go:
# validateDeviceAttribute "exactly one value must be specified", validateSelector requires cel), so no cluster
# stores them; upstream's allocator, handed them directly, errors.
# kubedra refuses them when it reads them, naming the field: the precise outcome is asserted here (the read
# error, and that upstream's expectation is an error too), so a change of either side fails.
_NO_VALUE = "exactly one of int, bool, string, version (or a list type) must be set"
REFUSED_ON_READ: dict[str, str] = {
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": f"spec.devices[0].attributes.driverVersion: {_NO_VALUE}",
    "list-attributes-match-constaint-with-empty-or-unknown-type": f"spec.devices[0].attributes.stringAttribute: {_NO_VALUE}",
    "with-distinct-constraints-unknown-type-attribute": f"spec.devices[0].attributes.boolAttribute: {_NO_VALUE}",
    "unknown-selector": "spec.devices.requests[0].exactly.selectors[0].cel.expression: required value",
}
# Cases whose inputs or expectations kubedra's model cannot carry (strict xfail, naming the exception the gap
# raises, so that fixing the model fails here until the entry goes): none left.
MODEL_GAPS: dict[str, tuple[str, type[BaseException]]] = {}


def _refused_on_read(case: dict[str, Any], message: str) -> None:
    """Exactly one object of the case is refused, with ``message``; upstream's allocator errors on the case."""
    refused = []
    for o in [*case["objects"], *case["claims"]]:
        try:
            parse_object(copy.deepcopy(o))
        except InputError as e:
            refused.append(str(e))
    assert refused == [message]
    assert "error" in case["expect"], case["expect"]


# Cases where kubedra's allocator disagrees with upstream today, one line each, for the allocator's owner to
# fix (the expectations stay upstream's). Strict xfail: a fixed case fails here until taken off the list.
# A disagreement shows as a failed comparison (an assert, or pytest.raises seeing no AllocationError).
_DISAGREES = pytest.fail.Exception
ALLOCATOR_DISAGREES: dict[str, tuple[str, type[BaseException]]] = {}


def _params(known_failures: dict[str, tuple[str, type[BaseException]]] | None = None) -> list[Any]:
    gaps = {**MODEL_GAPS, **(known_failures or {})}
    return [
        pytest.param(
            p,
            id=p.stem,
            marks=pytest.mark.xfail(strict=True, reason=gaps[p.stem][0], raises=gaps[p.stem][1]),
        )
        if p.stem in gaps
        else pytest.param(p, id=p.stem)
        for p in CASE_FILES
    ]


def _load(path: Path) -> dict[str, Any]:
    with path.open() as f:
        data = yaml.safe_load(f)
    assert isinstance(data, dict), f"{path.name}: a case is a mapping"
    return data


CASES = {p.stem: _load(p) for p in CASE_FILES}


# --------------------------------------------------------------------------- the corpus itself


def test_corpus_size() -> None:
    by_source = Counter(c.get("source") for c in CASES.values())
    skipped = [n for n, c in CASES.items() if "skip" in c]
    for source, n in UPSTREAM_COUNTS.items():
        assert by_source[source] == n, f"{source}: {by_source[source]} case files, upstream has {n}"
    # The brief's floor: upstream master's 219 + 4 lexicographical cases, minus documented skips.
    assert len(CASES) >= 219 + 4
    # Every deliberate skip is explained in the README's table.
    readme = (CORPUS / "README.md").read_text()
    for name in skipped:
        assert f"`{name}`" in readme, f"{name} is skipped but not listed in allocator/README.md"


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_schema(path: Path) -> None:
    case = CASES[path.stem]
    assert not (REQUIRED_KEYS - case.keys()), f"missing keys {sorted(REQUIRED_KEYS - case.keys())}"
    assert not (case.keys() - TOP_KEYS), f"unknown keys {sorted(case.keys() - TOP_KEYS)}"
    assert case["name"] == path.stem, "file name must be the case name"
    assert isinstance(case["source"], str)
    assert case["source"]
    assert isinstance(case["features"], list)
    assert not (set(case["features"]) - KNOWN_FEATURES), f"unknown features {case['features']}"
    if "implementations" in case:
        impl = case["implementations"]
        assert impl, impl
        assert not (set(impl) - IMPLEMENTATIONS), impl
    if "skip" in case:
        assert isinstance(case["skip"], str), "skip needs a reason"
        assert case["skip"].strip(), "skip needs a reason"

    kinds = [o.get("kind") for o in case["objects"]]
    assert set(kinds) <= {"DeviceClass", "ResourceSlice"}, kinds
    for o in case["objects"] + case["claims"]:
        assert o.get("apiVersion") == "resource.k8s.io/v1", o.get("apiVersion")
        assert o.get("metadata", {}).get("name"), "every object has a name"
    assert all(c.get("kind") == "ResourceClaim" for c in case["claims"])
    if "node" in case:
        assert case["node"].get("kind") == "Node"
        assert case["node"].get("apiVersion") == "v1"

    for d in case.get("allocatedDevices", []):
        assert len(d.split("/")) == 3, d
    for d in case.get("allocatedSharedDeviceIDs", []):
        assert len(d.split("/")) in (3, 4), d
    for d, caps in case.get("allocatedCapacity", {}).items():
        assert len(d.split("/")) == 3, d
        for q in caps.values():
            parse_quantity(q)

    _check_expect_schema(case, case["expect"])
    for release, at in case.get("expectAt", {}).items():
        assert release in api_versions.SUPPORTED, f"expectAt {release}: not a supported release"
        older = api_versions.Version.parse(release) < api_versions.Version.parse(api_versions.DEFAULT_TARGET)
        assert older, f"expectAt {release}: expect is the default release's answer, expectAt an older one's"
        assert "allocateOneCalls" not in at, "expectAt holds the outcome only"
        _check_expect_schema(case, at)


def _check_expect_schema(case: dict[str, Any], expect: Any) -> None:
    assert isinstance(expect, dict), expect
    assert not (expect.keys() - EXPECT_KEYS), expect
    assert ("error" in expect) != ("results" in expect), "expect has exactly one of error / results"
    if "error" in expect:
        subs = expect["error"] if isinstance(expect["error"], list) else [expect["error"]]
        assert subs
        assert all(isinstance(s, str) and s for s in subs)
    results = expect.get("results")
    if isinstance(results, list):
        assert len(results) == len(case["claims"]), "one expected result per claim"
        for r in results:
            assert not (r.keys() - RESULT_KEYS), r.keys()
            assert isinstance(r["devices"], list)
            for dev in r["devices"]:
                assert {"request", "driver", "pool", "device"} <= dev.keys(), dev
    elif "results" in expect:
        assert results is None
        assert case["claims"], "no claims: expect results: [] (nothing to allocate)"


@pytest.mark.parametrize("path", _params())
def test_case_objects_parse(path: Path) -> None:
    case = CASES[path.stem]
    if path.stem in REFUSED_ON_READ:
        _refused_on_read(case, REFUSED_ON_READ[path.stem])
        return
    for o in [case.get("node", DEFAULT_NODE), *case["objects"], *case["claims"]]:
        parsed = parse_object(copy.deepcopy(o))
        assert parsed is not None, f"{o.get('kind')} {o['metadata']['name']}: not a supported kind"
        assert parsed.kind == o["kind"]
    for expect in [case["expect"], *case.get("expectAt", {}).values()]:
        for r in expect.get("results") or []:
            _expected_allocation(r)


# --------------------------------------------------------------------------- against the allocator


def test_every_corpus_feature_is_supported_or_declared_unsupported() -> None:
    """The skip above is taken only for features the allocator declares it lacks: every upstream feature is
    either one of Features.GO_NAMES or one of Features.UNSUPPORTED, never both, never neither."""
    supported, unsupported = set(api.Features.GO_NAMES), set(api.Features.UNSUPPORTED)
    assert not supported & unsupported, sorted(supported & unsupported)
    assert supported | unsupported == KNOWN_FEATURES, sorted(KNOWN_FEATURES ^ (supported | unsupported))


def _device_id(s: str) -> tuple[str, str, str]:
    driver, pool, device = s.split("/")  # upstream's DeviceID prints as driver/pool/device
    return driver, pool, device


def _shared_id(s: str) -> tuple[str, str, str, str]:
    """upstream's SharedDeviceID prints without the share ID when it is empty"""
    driver, pool, device, *share = s.split("/")
    return driver, pool, device, share[0] if share else ""


def _expected_allocation(r: dict[str, Any]) -> dict[str, Any]:
    """Expected result normalised through kubedra's model, like the actual one (quantities, defaults)."""
    for dev in r["devices"]:
        extra = set(dev) - DEVICE_RESULT_KEYS
        assert not extra, (
            f"expected device result has fields kubedra's model does not represent: {sorted(extra)}"
        )
    alloc: dict[str, Any] = {"devices": {"results": r["devices"]}}
    if r.get("config"):
        alloc["devices"]["config"] = r["config"]
    if r.get("nodeSelector") is not None:
        alloc["nodeSelector"] = r["nodeSelector"]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "expected"},
        "status": {"allocation": alloc},
    }
    parsed = parse_object(claim)
    assert parsed is not None
    assert parsed.obj.allocation is not None
    return _view(parsed.obj.allocation)


def _view(a: AllocationResult) -> dict[str, Any]:
    """allocation_dict with consumed capacities as exact values: a canonical quantity string can lose
    the value (Go prints 1e21 in DecimalSI as "1", and kubedra's canonical form follows it)."""
    d = allocation_dict(a)
    for r, rd in zip(a.results, d["devices"]["results"], strict=True):
        if r.consumed_capacity is not None:
            rd["consumedCapacity"] = {k: str(q.exact) for k, q in r.consumed_capacity.items()}
    return d


def _canon(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def _selector_key(ns: dict[str, Any] | None) -> Any:
    if ns is None:
        return None

    def reqs(rs: list[dict[str, Any]]) -> list[Any]:
        return sorted((r["key"], r["operator"], sorted(r.get("values", []))) for r in rs)

    terms = [
        (reqs(t.get("matchExpressions", [])), reqs(t.get("matchFields", []))) for t in ns["nodeSelectorTerms"]
    ]
    return sorted(terms)


def _mismatch(expected: dict[str, Any], actual_raw: dict[str, Any], want: dict[str, Any]) -> str | None:
    """Why one actual AllocationResult does not match one expected entry (None: it matches)."""
    actual = copy.deepcopy(actual_raw)
    for d in actual["devices"]["results"]:
        if "shareID" in d:
            d["shareID"] = FIXED_SHARE_ID
    exp_devs = sorted(_canon(d) for d in expected["devices"]["results"])
    act_devs = sorted(_canon(d) for d in actual["devices"]["results"])
    if exp_devs != act_devs:
        return f"devices differ:\n  expected {exp_devs}\n  actual   {act_devs}"
    if "nodeSelector" in want:
        e, a = _selector_key(expected.get("nodeSelector")), _selector_key(actual.get("nodeSelector"))
        if e != a:
            return f"nodeSelector differs:\n  expected {expected.get('nodeSelector')}\n  actual   {actual.get('nodeSelector')}"
    e_cfg, a_cfg = expected["devices"].get("config", []), actual["devices"].get("config", [])
    if e_cfg != a_cfg:
        return f"config differs:\n  expected {e_cfg}\n  actual   {a_cfg}"
    if actual.get("allocationTimestamp") is not None:
        return f"allocationTimestamp set: {actual['allocationTimestamp']}"
    return None


def _match_results(want: list[dict[str, Any]], got: list[Any]) -> None:
    assert len(got) == len(want), f"{len(got)} allocation results, expected {len(want)}"
    expected = [_expected_allocation(w) for w in want]
    actual = [_view(g) for g in got]
    in_order = [_mismatch(e, a, w) for e, a, w in zip(expected, actual, want, strict=True)]
    if all(m is None for m in in_order):
        return
    # Upstream compares the per-claim results with ConsistOf: any order is accepted.
    for perm in itertools.permutations(range(len(actual))):
        if all(_mismatch(e, actual[j], w) is None for e, j, w in zip(expected, perm, want, strict=True)):
            return
    first = next(i for i, m in enumerate(in_order) if m is not None)
    pytest.fail(f"claim #{first}: {in_order[first]}")


def _typed(obj: dict[str, Any]) -> Any:
    parsed = parse_object(copy.deepcopy(obj))
    assert parsed is not None
    return parsed.obj


@pytest.mark.parametrize("path", _params(ALLOCATOR_DISAGREES))
def test_allocator_case(path: Path) -> None:
    case = CASES[path.stem]
    if path.stem in REFUSED_ON_READ:
        _refused_on_read(case, REFUSED_ON_READ[path.stem])
        return
    if "skip" in case:
        pytest.skip(case["skip"])
    unsupported = sorted(set(case["features"]) & set(api.Features.UNSUPPORTED))
    if unsupported:
        # Upstream skips a case whose features an implementation does not support; so do we.
        pytest.skip(f"feature(s) {unsupported} not supported by kubedra's allocator (Features.UNSUPPORTED)")
    features = api.Features.from_names(case["features"])

    classes = [_typed(o) for o in case["objects"] if o["kind"] == "DeviceClass"]
    slices = [_typed(o) for o in case["objects"] if o["kind"] == "ResourceSlice"]
    claims = [_typed(o) for o in case["claims"]]
    node = _typed(case.get("node", DEFAULT_NODE))
    devices = {_device_id(d) for d in case.get("allocatedDevices", [])}
    shared_ids = {_shared_id(d) for d in case.get("allocatedSharedDeviceIDs", [])}
    capacity = {
        _device_id(d): {k: parse_quantity(q) for k, q in caps.items()}
        for d, caps in case.get("allocatedCapacity", {}).items()
    }
    state = api.AllocatedState(devices=devices, shared_ids=shared_ids, capacity=capacity)
    inputs = (classes, slices, claims, node, devices, shared_ids, capacity)
    before = copy.deepcopy(inputs)
    alloc = api.Allocator(features=features, classes=classes, slices=slices, allocated=state)

    expect = case["expect"]
    # upstream's interrupt subtests: a context whose timeout or deadline has already passed
    deadline = time.monotonic() if case.get("interrupt") == "deadline-passed" else None
    _check_allocation(alloc, node, claims, expect, deadline)

    # Upstream's search-step count (incubating/experimental value: kubedra ports those), where exposed.
    calls = getattr(alloc, "allocate_one_calls", None)
    if "allocateOneCalls" in expect and isinstance(calls, int):
        assert calls == expect["allocateOneCalls"], (
            f"{calls} allocateOne calls, upstream makes {expect['allocateOneCalls']}"
        )

    # Objects that the allocator had access to must not have been modified.
    for i, (now, then) in enumerate(zip(inputs, before, strict=True)):
        what = (
            "classes",
            "slices",
            "claims",
            "node",
            "allocated devices",
            "shared IDs",
            "allocated capacity",
        )[i]
        assert now == then, f"allocate() modified its input: {what}"


def _check_allocation(
    alloc: api.Allocator, node: Any, claims: list[Any], expect: dict[str, Any], deadline: float | None
) -> None:
    """Allocate and compare with one expectation (``expect`` or an ``expectAt`` entry)."""
    if "error" in expect:
        subs = expect["error"] if isinstance(expect["error"], list) else [expect["error"]]
        with pytest.raises(api.AllocationError) as info:
            alloc.allocate(node, claims, deadline=deadline)
        for s in subs:
            assert s in str(info.value), f"error {str(info.value)!r} lacks {s!r}"
    else:
        results = alloc.allocate(node, claims, deadline=deadline)
        want = expect["results"]
        if want is None:
            assert results is None, f"expected unsatisfiable (None), got {len(results)} result(s)"
        elif not want:
            assert not results, f"expected no results, got {results}"
        else:
            assert results is not None, "expected an allocation, got None (unsatisfiable)"
            _match_results(want, list(results))


# Cases whose answer at an older release (expectAt) kubedra does not give yet, one line each (strict xfail).
RELEASE_DISAGREES: dict[tuple[str, str], str] = {
    (name, release): "v0.35.10/v0.36.6 consumable_capacity.go shares the request's inf.Dec with the consumed "
    "amount (roundUpRange without a step returns *requestedVal) and Quantity.Add then changes the claim's own "
    "request during the search; kubedra's quantities are values and do not model that aliasing"
    for name in ("consumable-capacity-requests-are-not-modified",)
    for release in ("1.35", "1.36")
}


def _release_params() -> list[Any]:
    out = []
    for name, case in CASES.items():
        for release in case.get("expectAt", {}):
            marks = []
            if (name, release) in RELEASE_DISAGREES:
                marks.append(pytest.mark.xfail(strict=True, reason=RELEASE_DISAGREES[(name, release)]))
            out.append(pytest.param(name, release, id=f"{name}@{release}", marks=marks))
    return out


@pytest.mark.parametrize(("name", "release"), _release_params())
def test_allocator_case_at_release(name: str, release: str) -> None:
    """A case whose upstream answer at an older supported release differs from ``expect`` (upstream changed
    between releases; data/versions.yaml says how): kubedra at that release (its newest patch) gives that
    release's answer, ``expectAt``, read from its allocator (the testbed oracle; test_corpus_vs_oracle.py)."""
    case = CASES[name]
    features = api.Features.from_names(case["features"])
    classes = [_typed(o) for o in case["objects"] if o["kind"] == "DeviceClass"]
    slices = [_typed(o) for o in case["objects"] if o["kind"] == "ResourceSlice"]
    state = api.AllocatedState(
        devices={_device_id(d) for d in case.get("allocatedDevices", [])},
        shared_ids={_shared_id(d) for d in case.get("allocatedSharedDeviceIDs", [])},
        capacity={
            _device_id(d): {k: parse_quantity(q) for k, q in caps.items()}
            for d, caps in case.get("allocatedCapacity", {}).items()
        },
    )
    alloc = api.Allocator(
        features=features, classes=classes, slices=slices, allocated=state, target_version=release
    )
    claims = [_typed(o) for o in case["claims"]]
    _check_allocation(alloc, _typed(case.get("node", DEFAULT_NODE)), claims, case["expectAt"][release], None)


def test_release_expectations_differ_from_the_default() -> None:
    """An expectAt entry says what an older release answers differently; one equal to ``expect`` is noise."""
    for name, case in CASES.items():
        for release, at in case.get("expectAt", {}).items():
            assert at != {k: v for k, v in case["expect"].items() if k in ("error", "results")}, (
                name,
                release,
            )


# --------------------------------------------------------------------------- the comparison itself


def _alloc(
    devices: list[dict[str, Any]], ns: dict[str, Any] | None = None, config: Any = None
) -> dict[str, Any]:
    a: dict[str, Any] = {"devices": {"results": devices}}
    if config:
        a["devices"]["config"] = config
    if ns is not None:
        a["nodeSelector"] = ns
    return a


_D1 = {"request": "req-0", "driver": "driver-a", "pool": "pool-1", "device": "device-1"}
_D2 = {"request": "req-0", "driver": "driver-a", "pool": "pool-1", "device": "device-2"}
_NS = {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "region", "operator": "In", "values": ["a", "b"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]},
    ]
}
_NS_REORDERED = {
    "nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]},
        {"matchExpressions": [{"key": "region", "operator": "In", "values": ["b", "a"]}]},
    ]
}


def test_compare_devices_as_multiset() -> None:
    want = {"devices": [_D1, _D2], "nodeSelector": None}
    assert _mismatch(_alloc([_D1, _D2]), _alloc([_D2, _D1]), want) is None
    assert _mismatch(_alloc([_D1, _D2]), _alloc([_D1, _D1]), want) is not None
    assert _mismatch(_alloc([_D1]), _alloc([_D1, _D2]), want) is not None


def test_compare_node_selector_order_insensitive_but_present() -> None:
    want = {"devices": [_D1], "nodeSelector": _NS}
    assert _mismatch(_alloc([_D1], _NS), _alloc([_D1], _NS_REORDERED), want) is None
    assert _mismatch(_alloc([_D1], _NS), _alloc([_D1]), want) is not None
    # null expected: the allocation must not carry a node selector
    assert _mismatch(_alloc([_D1]), _alloc([_D1], _NS), {"devices": [_D1], "nodeSelector": None}) is not None


def test_compare_config_exact_and_absent_means_none() -> None:
    cfg = [{"source": "FromClaim", "opaque": {"driver": "driver-a", "parameters": {"a": "aValue"}}}]
    want = {"devices": [_D1], "nodeSelector": None}
    assert _mismatch(_alloc([_D1]), _alloc([_D1], config=cfg), want) is not None
    assert _mismatch(_alloc([_D1], config=cfg), _alloc([_D1], config=cfg), {**want, "config": cfg}) is None


def test_compare_replaces_share_ids() -> None:
    shared = {**_D1, "shareID": FIXED_SHARE_ID}
    want = {"devices": [shared], "nodeSelector": None}
    assert (
        _mismatch(
            _alloc([shared]), _alloc([{**_D1, "shareID": "0b0b0b0b-1111-2222-3333-444444444444"}]), want
        )
        is None
    )
    assert _mismatch(_alloc([shared]), _alloc([_D1]), want) is not None


def test_expected_results_are_normalised_through_the_model() -> None:
    r = {"devices": [{**_D1, "consumedCapacity": {"memory": "1024Mi"}}], "nodeSelector": None}
    same = {"devices": [{**_D1, "consumedCapacity": {"memory": "1Gi"}}], "nodeSelector": None}
    assert _expected_allocation(r) == _expected_allocation(same)
    # values, not canonical strings: 1e21 and 1 print alike in Go's (and kubedra's) DecimalSI form
    big = {
        "devices": [{**_D1, "consumedCapacity": {"memory": "1000000000000000000000"}}],
        "nodeSelector": None,
    }
    one = {"devices": [{**_D1, "consumedCapacity": {"memory": "1"}}], "nodeSelector": None}
    assert _mismatch(_expected_allocation(big), _expected_allocation(one), big) is not None
    with pytest.raises(AssertionError, match="does not represent"):
        _expected_allocation({"devices": [{**_D1, "unknownField": ["*"]}]})
