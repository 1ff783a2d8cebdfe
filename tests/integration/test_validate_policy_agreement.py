"""kubedra validate agrees with each testbed release's real apiserver (server-side dry-run) on a consumable
capacity's requestPolicy and on a DeviceConstraint's matchAttribute/distinctAttribute: the same verdict and the
same field paths, valid and invalid objects alike.

The cases are written to tell the releases apart (kubedra.validate.requestpolicy: v1.36.3's code against v1.37.2's,
DRAFractionalCapacityRange off at 1.37 and on at 1.38; at 1.34 and 1.35 DRAConsumableCapacity is off and the
apiserver drops requestPolicy and, at 1.35, distinctAttribute). The releases are data/versions.yaml ``testbed``:
1.37 on the session's ``controlplane``, the others on ``release_controlplane``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from kubedra.errors import ClusterError
from kubedra.k8s.findings import Finding
from kubedra.sources.files import parse_text
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import create_ignore_exists
from kubedra.validate.dryrun import dry_run, field_path
from kubedra.validate.engine import validate_documents

pytestmark = pytest.mark.integration

NAMESPACE = "kubedra-agree"

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "kubedra-policy-slice"},
    "spec": {
        "driver": "gpu.nvidia.com",
        "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [
            {"name": "gpu-0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "80Gi"}}}
        ],
    },
}


def _policy(policy: dict[str, Any], value: str = "80Gi", multiple: bool = True) -> dict[str, Any]:
    obj = copy.deepcopy(SLICE)
    device = obj["spec"]["devices"][0]
    device["capacity"]["memory"] = {"value": value, "requestPolicy": policy}
    if not multiple:
        del device["allowMultipleAllocations"]
    return obj


def _range(default: Any, value: str = "80Gi", **rng: Any) -> dict[str, Any]:
    return _policy({"default": default, "validRange": rng}, value)


POLICIES: dict[str, dict[str, Any]] = {
    "default only": _policy({"default": "1Gi"}),
    "valid values": _policy({"default": "2Gi", "validValues": ["1Gi", "2Gi", "4Gi"]}),
    "valid range": _range("2Gi", min="1Gi", max="8Gi", step="1Gi"),
    "range without max": _range("2Gi", min="1Gi", step="1Gi"),
    "range without step": _range("3Gi", min="1Gi", max="4Gi"),
    "fractional range on its steps": _range("500m", value="10", min="500m", max="2", step="500m"),
    "fractional step off its multiples": _range("1", value="10", min="0", max="2", step="300m"),
    "finer than milli": _range("1", value="10", min="0.0005", step="1m"),
    "values and range": _policy({"default": "1Gi", "validValues": ["1Gi"], "validRange": {"min": "1Gi"}}),
    "values without default": _policy({"validValues": ["1Gi"]}),
    "range without default": _policy({"validRange": {"min": "1Gi"}}),
    "values unsorted": _policy({"default": "1Gi", "validValues": ["2Gi", "1Gi"]}),
    "value over capacity": _policy({"default": "1Gi", "validValues": ["1Gi", "100Gi"]}),
    "default not a value": _policy({"default": "3Gi", "validValues": ["1Gi", "2Gi"]}),
    "11 values": _policy({"default": "1", "validValues": [str(i) for i in range(1, 12)]}),
    "duplicate values": _policy({"default": "1Gi", "validValues": ["1Gi", "1Gi"]}),
    "values equal after rounding": _policy({"default": "1", "validValues": ["500m", "1"]}, value="10"),
    "range without min": _range("1Gi", max="2Gi"),
    "min over capacity": _range("100Gi", min="90Gi"),
    "default below min": _range("1Gi", min="2Gi", max="4Gi"),
    "default above max": _range("8Gi", min="2Gi", max="4Gi"),
    "min above max": _range("4Gi", min="4Gi", max="2Gi"),
    "max over capacity": _range("1Gi", min="1Gi", max="100Gi"),
    "step over capacity": _range("1Gi", min="1Gi", step="80Gi"),
    "default off the step": _range("3", min="0", max="10", step="2"),
    "max off the step": _range("2", min="0", max="9", step="2"),
    "negative step": _range("1", min="0", step="-1"),
    "negative min": _range("0", min="-2", max="4", step="2"),
    "max past int64": _range("1", value="1e20", min="1", max="1e19", step="1"),
    "policy without multiple allocations": _policy({"default": "1Gi"}, multiple=False),
    "malformed default": _range("lots", min="0"),
    "step finer than milli": _range("1", min="0", step="1n"),
    "zero step": _range("1", min="0", step="0"),
    "step reading 0 past int64": _range("0", value="1e20", min="0", step="18446744073709551616"),
    "values one and one point zero": _policy({"default": "1", "validValues": ["1", "1.0"]}, value="10"),
    "values one and 1000m": _policy({"default": "1", "validValues": ["1000m", "1"]}, value="10"),
    "fractional default on an integer range": _range("1500m", value="10", min="0", max="4", step="1"),
    "milli step past int64": _range("500m", value="1e17", min="500m", step="1e16"),
    "negative default": _range("-1", min="-3", max="3", step="2"),
    "negative value": _policy({"default": "-1", "validValues": ["-1", "2"]}, value="10"),
    "fractional capacity": _range("1", value="1500m", min="500m", step="1"),
}
# The apiserver refuses a malformed quantity while it decodes the object, before validation names a field.
VERDICT_ONLY = {"malformed default"}

RCT: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "kubedra-constraint", "namespace": NAMESPACE},
    "spec": {
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}],
                "constraints": [],
            }
        }
    },
}


def _constraint(**c: Any) -> dict[str, Any]:
    obj = copy.deepcopy(RCT)
    obj["spec"]["spec"]["devices"]["constraints"] = [{"requests": ["gpu"], **c}]
    return obj


UUID = "gpu.nvidia.com/uuid"
CONSTRAINTS: dict[str, dict[str, Any]] = {
    "match and distinct": _constraint(matchAttribute=UUID, distinctAttribute=UUID),
    "match and a bad distinct": _constraint(matchAttribute=UUID, distinctAttribute="uuid"),
    "a bad match and distinct": _constraint(matchAttribute="uuid", distinctAttribute=UUID),
    "neither match nor distinct": _constraint(),
    "distinct alone": _constraint(distinctAttribute=UUID),
    "a bad distinct alone": _constraint(distinctAttribute="uuid"),
}

CASES = {**POLICIES, **CONSTRAINTS}


def verdicts(cp: ControlPlane, obj: dict[str, Any], name: str) -> tuple[list[Finding], list[Finding] | None]:
    """(kubedra's errors, the apiserver's) for ``obj`` at the control plane's release; None: the apiserver
    dropped the connection instead of answering (1.36 on a zero step)."""
    docs = parse_text(yaml.safe_dump(obj, sort_keys=False), f"{name}.yaml").documents
    create_ignore_exists(cp.api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    offline = validate_documents(docs, cp.version)
    try:
        server: list[Finding] | None = dry_run(docs, kubeconfig=str(cp.kubeconfig))
    except ClusterError as e:
        if "Remote end closed connection" not in str(e):
            raise
        server = None
    return offline.errors, server


def paths(found: list[Finding]) -> list[str]:
    """Each error's field path, one entry per error (two errors at one field count twice)."""
    return sorted(".".join(map(str, field_path(f.path or ""))) for f in found)


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_matches_the_apiserver(controlplane: ControlPlane, case: str) -> None:
    _agree(controlplane, case)


# The same at the testbed's other releases, against each one's apiserver (the session's release_controlplane).
@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_matches_each_release_apiserver(release_controlplane: ControlPlane, case: str) -> None:
    _agree(release_controlplane, case)


def _agree(apiserver: ControlPlane, case: str) -> None:
    offline, server = verdicts(apiserver, CASES[case], case)
    got = {"release": apiserver.version, "kubedra": offline, "apiserver": server}
    if (
        server is None
    ):  # v1.36.3 divides by zero: the request handler panics, the apiserver closes the connection
        assert [f.message for f in offline if "division by zero" in f.message], got
    elif case in VERDICT_ONLY:
        assert bool(offline) == bool(server), got
    else:
        assert paths(offline) == paths(server), got
