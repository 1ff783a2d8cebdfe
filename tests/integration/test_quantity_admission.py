"""Whether the apiserver admits an extended resource's quantity is decided by each release's int64 arithmetic
(kubedra.k8s.podadmission.integer_resource_value): kubedra validate's verdict on one pod per value agrees with
each testbed release's real apiserver (server-side dry-run), huge, tiny and fractional values included. Past
what kubedra models (10^10000, 4,000 digits: kubedra.k8s.quantity.QuantityNotModelled) validate warns that it
cannot check the value, never an error. The canonical string each apiserver stores (a cpu limit, after defaulting;
a ResourceSlice capacity, as parsed) equals kubedra's for every value it models."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.k8s import versions
from kubedra.k8s.podadmission import admitted
from kubedra.k8s.quantity import parse_quantity, quantity_rules
from kubedra.k8s.quantityread import unmodelled_string
from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
from kubedra.testing.kubeapi import ApiError, object_path
from kubedra.validate.dryrun import dry_run
from kubedra.validate.engine import validate_documents

pytestmark = pytest.mark.integration

NAMESPACE = "kubedra-qvalue"

# (limits, requests or None): the limit alone, or both
VALUES: list[tuple[str, str | None]] = [
    ("1", None),
    ("1.5", None),
    ("100m", None),
    ("1000m", None),
    ("0.9999", None),  # MilliValue rounds up to 1000: an integer to every release
    ("2999.5m", None),
    ("1.0001", None),
    ("1e18", None),
    ("1e20", None),  # 1.37: MilliValue 0; 1.38: an integer
    ("1e30", None),
    ("9223372036854775807", None),
    ("9223372036854775808", None),
    ("1Ei", None),  # 1.37: MilliValue wraps to MinInt64, -808 modulo 1000
    ("8Ei", None),
    ("1.5Ei", None),
    ("123456789012345678901234567890", None),  # 1.37: MilliValue ...992
    ("100000000000000000000000000011", None),
    ("1000000000000000000000000000000.5", None),  # 1.38 keeps 29 digits: an integer there
    ("12345678901234567890.123", None),
    ("9223372036854775807500m", None),
    ("1e-20", None),
    # 1.38 parses both to 29 significant digits: equal there, unequal through 1.37
    ("100000000000000000000000000002", "100000000000000000000000000001"),
    ("2", "2000m"),
    ("1", "0.9999"),  # API defaulting rounds the request up to 1: equal to the limit
    ("1000000000000000000.9999", None),  # defaulted to 10^18 + 1: an integer whose milli-value overflows
    # huge and tiny: modelled exactly up to 10^10000 and 4,000 digits
    ("1e1000", None),
    ("1e1001", None),
    ("9e9990", None),
    ("123.456e9000", None),
    ("1" * 1100, None),
    ("1" * 1100 + ".5", None),
    ("1e-1000", None),
    ("0." + "0" * 1100 + "1", None),
    ("1e1001", "1e1000"),
]

# past what kubedra models: validate warns it cannot check them, whatever the apiserver says of the value, and
# names the string ParseQuantity stores (kubedra.k8s.quantityread.unmodelled_string), read from the text
NOT_MODELLED = [
    "1e9999999",
    "9e999999",
    "1.5e99999999",
    "-1e999999999",
    "1" * 4001,
    "1" * 20 + "e12000",  # inf.Dec through 1.37 (e99999 timed a 1.35-1.37 dry-run out)
    "1" + "0" * 4010 + "E",
    "1" * 4001 + "Ki",
]


def _pod(i: int, limit: str, request: str | None) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": {"example.com/gpu": limit}}
    if request is not None:
        resources["requests"] = {"example.com/gpu": request}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"q{i}", "namespace": NAMESPACE},
        "spec": {"containers": [{"name": "c", "image": "x:1", "resources": resources}]},
    }


def _agree(cp: ControlPlane) -> None:
    # each document JSON (flow YAML): every value a quoted string, where a YAML dump would leave 1e20 plain, a
    # float, which clients send as a number
    text = "\n---\n".join(json.dumps(_pod(i, lim, req)) for i, (lim, req) in enumerate(VALUES))
    docs = parse_text(text, "values.yaml").documents
    assert len(docs) == len(VALUES)
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    result = validate_documents(docs, cp.version)
    assert not [w for w in result.warnings if "cannot check" in w.message]
    offline = {VALUES[int(e.name[1:])] for e in result.errors}
    server = {VALUES[int(e.name[1:])] for e in dry_run(docs, kubeconfig=str(cp.kubeconfig))}
    assert offline == server, {
        "only kubedra refuses": offline - server,
        "only the apiserver": server - offline,
    }


def test_extended_resource_quantities_match_the_apiserver(controlplane: ControlPlane) -> None:
    _agree(controlplane)


def test_extended_resource_quantities_match_each_release_apiserver(
    release_controlplane: ControlPlane,
) -> None:
    _agree(release_controlplane)


def _dry_run_stored(cp: ControlPlane, obj: dict[str, Any]) -> dict[str, Any] | str:
    """The object the apiserver would store (server-side dry-run), or its refusal."""
    try:
        stored: dict[str, Any] = cp.api.request(
            "POST", object_path(obj, with_name=False) + "?dryRun=All", obj
        )
    except ApiError as e:
        return str(e)
    return stored


def _slice(i: int, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"kubedra-qvalue-{i}"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "d", "capacity": {"memory": {"value": value}}}],
        },
    }


def _cpu_pod(i: int, value: str) -> dict[str, Any]:
    pod = _pod(i, "1", None)
    pod["metadata"]["name"] = f"cpu{i}"
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": value}}
    return pod


CANONICAL = sorted(
    {lim for lim, _ in VALUES}
    | {
        "1e9999",
        "-1e1001",
        "1000E",
        "1e21",
        "1000000E",
        "1.5e-9999",
        "123.4567e9000",
        "100.035k",
        "+1.255k",
        "8192Mi",
        "123456789012345678",
        "1234567890123456789",
        "05Gi",
    }
    | {"1" * 20 + "e9000", "1" * 30 + ".5e8000", "1" * 3999 + "e6000", "-1.5e-9999", "1.5e-1000"}
)


def _canonical_agrees(cp: ControlPlane) -> None:
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    since_138 = versions.holds("quantity.nineteenDigitInt64", cp.version)
    differ: dict[str, Any] = {}
    for i, value in enumerate(CANONICAL):
        q = parse_quantity(value)
        with quantity_rules(since_138):
            pod_ours = admitted(q, cp.version).canonical() if q.sign() >= 0 else "refused"
            slice_ours = q.at(since_138).canonical()
        stored = _dry_run_stored(cp, _cpu_pod(i, value))
        pod_theirs = "refused" if isinstance(stored, str) else stored["spec"]["containers"][0]["resources"]
        if not isinstance(pod_theirs, str):
            pod_theirs = pod_theirs["limits"]["cpu"]
        stored = _dry_run_stored(cp, _slice(i, value))
        slice_theirs = (
            stored if isinstance(stored, str) else stored["spec"]["devices"][0]["capacity"]["memory"]
        )
        if not isinstance(slice_theirs, str):
            slice_theirs = slice_theirs["value"]
        if (pod_ours, slice_ours) != (pod_theirs, slice_theirs):
            differ[value[:40]] = {"kubedra": (pod_ours, slice_ours), "apiserver": (pod_theirs, slice_theirs)}
    assert not differ, differ


def _not_modelled_warns(cp: ControlPlane) -> None:
    pods = [_pod(i, v, None) for i, v in enumerate(NOT_MODELLED)]
    slices = [_slice(i, v) for i, v in enumerate(NOT_MODELLED)]
    docs = parse_text("\n---\n".join(json.dumps(p) for p in pods + slices), "huge.yaml").documents
    result = validate_documents(docs, cp.version)
    warned = [w.message for w in result.warnings if "cannot check quantity" in w.message]
    assert len(warned) == len(pods) + len(slices) - 1, warned
    # the sign of a value kubedra does not build is the text's: a negative request is refused at every release
    assert [e.name for e in result.errors] == [f"q{NOT_MODELLED.index('-1e999999999')}"]
    since_138 = versions.holds("quantity.nineteenDigitInt64", cp.version)
    differ = {}
    for value, obj in zip(NOT_MODELLED, slices, strict=True):
        ours = unmodelled_string(value, since_138)
        assert ours is not None
        assert any(f"ParseQuantity accepts it, as {ours!r}" in w for w in warned)
        stored = _dry_run_stored(cp, obj)
        theirs = (
            stored if isinstance(stored, str) else stored["spec"]["devices"][0]["capacity"]["memory"]["value"]
        )
        if ours != theirs:
            differ[value[:40]] = {"kubedra": ours[:60], "apiserver": theirs[:200]}
    assert not differ, differ


def test_canonical_strings_match_the_apiserver(controlplane: ControlPlane) -> None:
    _canonical_agrees(controlplane)
    _not_modelled_warns(controlplane)


def test_canonical_strings_match_each_release_apiserver(release_controlplane: ControlPlane) -> None:
    _canonical_agrees(release_controlplane)
    _not_modelled_warns(release_controlplane)
