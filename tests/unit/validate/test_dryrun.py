"""Server-side dry-run plumbing with a stand-in dynamic client (the real apiserver is in tests/integration)."""

from __future__ import annotations

import json
from typing import Any

from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from kubedra.sources.files import parse_text
from kubedra.validate.dryrun import dry_run, field_path

TEXT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 0
---
apiVersion: example.com/v1
kind: Unknown
metadata: {name: u}
---
apiVersion: v1
kind: Pod
metadata: {generateName: p-}
spec: {containers: [{name: c, image: x}]}
"""


class _Resource:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.namespaced = kind != "DeviceClass"


class FakeDynamic:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        outer = self

        class Resources:
            def get(self, api_version: str, kind: str) -> _Resource:
                if kind == "Unknown":
                    raise ResourceNotFoundError("no")
                return _Resource(kind)

        self.resources = Resources()
        self.outer = outer

    def server_side_apply(self, resource: _Resource, **kw: Any) -> None:
        self.calls.append(("apply", kw))
        e = ApiException(status=422, reason="Unprocessable Entity")
        e.body = json.dumps(
            {
                "message": 'ResourceClaim.resource.k8s.io "c" is invalid',
                "details": {
                    "causes": [
                        {
                            "field": "spec.devices.requests[0].exactly.count",
                            "message": "Invalid value: 0: must be greater than zero",
                        }
                    ]
                },
            }
        )
        raise e

    def create(self, resource: _Resource, **kw: Any) -> None:
        self.calls.append(("create", kw))


def test_field_path() -> None:
    assert field_path("spec.devices.requests[0].exactly.count") == [
        "spec",
        "devices",
        "requests",
        0,
        "exactly",
        "count",
    ]
    assert field_path("metadata.labels[app.kubernetes.io/name]") == [
        "metadata",
        "labels",
        "app.kubernetes.io/name",
    ]


def test_dry_run_reports_server_causes_with_lines() -> None:
    docs = parse_text(TEXT, "in.yaml").documents
    fake = FakeDynamic()
    errors = dry_run(docs, client=fake)
    assert [(e.line, e.path, e.message) for e in errors] == [
        (10, "spec.devices.requests[0].exactly.count", "server: Invalid value: 0: must be greater than zero"),
        (12, "apiVersion", "server: the server does not serve example.com/v1 Unknown"),
    ]
    (apply, create) = fake.calls
    assert apply[1]["dry_run"] == "All"
    assert apply[1]["field_manager"] == "kubedra"
    assert apply[1]["force_conflicts"]
    assert apply[1]["namespace"] == "ns"
    assert apply[1]["name"] == "c"
    assert create[0] == "create"
    assert create[1]["dry_run"] == "All"
    assert create[1]["namespace"] == "default"


def _forbidden(message: str) -> ApiException:
    e = ApiException(status=403, reason="Forbidden")
    e.body = json.dumps({"kind": "Status", "status": "Failure", "reason": "Forbidden", "message": message})
    return e


def test_a_403_from_admission_is_the_answer_about_the_object_and_from_rbac_is_about_access() -> None:
    """A ValidatingAdmissionPolicy or webhook denial is a 403 too (the apiserver's admission errors are
    Forbidden): it is the dry-run's verdict on the object; only the authorizer's 403 ('User "x" cannot ...')
    means kubedra could not ask."""
    import pytest

    from kubedra.errors import ClusterError

    denial = (
        "pods \"root\" is forbidden: ValidatingAdmissionPolicy 'no-privileged' with binding "
        "'no-privileged' denied request: privileged containers are not allowed"
    )
    rbac = (
        'resourceclaims.resource.k8s.io "c" is forbidden: User "system:serviceaccount:a:b" cannot patch '
        'resource "resourceclaims" in API group "resource.k8s.io" in the namespace "ns"'
    )

    class Denying(FakeDynamic):
        def __init__(self, message: str) -> None:
            super().__init__()
            self.message = message

        def server_side_apply(self, resource: _Resource, **kw: Any) -> None:
            raise _forbidden(self.message)

    docs = parse_text(TEXT, "in.yaml").documents[:1]
    errors = dry_run(docs, client=Denying(denial))
    assert [(e.line, e.message) for e in errors] == [(1, f"server: {denial}")]
    with pytest.raises(ClusterError, match="forbidden"):
        dry_run(docs, client=Denying(rbac))
