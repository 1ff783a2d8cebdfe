"""Whether the apiserver admits an extended resource's quantity is decided by each release's int64 arithmetic
(kubedra.k8s.podadmission.integer_resource_value): kubedra validate's verdict on one pod per value agrees with
each testbed release's real apiserver (server-side dry-run), huge, tiny and fractional values included."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
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
    offline = {VALUES[int(e.name[1:])] for e in validate_documents(docs, cp.version).errors}
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
