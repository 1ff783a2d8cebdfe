"""The DeviceTaintRule that drains one device: the operator's step the NVIDIA driver leaves out.

The driver taints an unhealthy device ``NoSchedule`` (new pods avoid it) and never ``NoExecute``; pods
already on it keep running. To move them off, an operator creates a ``NoExecute`` DeviceTaintRule selecting
the device by driver, pool (the node name, for the NVIDIA driver) and device name: the device-taint eviction
controller then deletes every pod whose claim holds the device without a matching NoExecute toleration, and
their controllers recreate them elsewhere. Delete the rule when the GPU is repaired.
"""

from __future__ import annotations

import re
from typing import Any

from kubedra import vendors
from kubedra.errors import UsageError
from kubedra.k8s.featuregates import taint_rule_gates_off
from kubedra.k8s.versions import require_supported as parse_version
from kubedra.model.convert import taint_rule_api_version

DRAIN_KEY = "kubedra.io/drain"
_DNS = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def parse_target(text: str) -> tuple[str, str]:
    """``NODE/DEVICE`` (the pool and device of the NVIDIA driver's ResourceSlice)."""
    node, sep, device = text.partition("/")
    if not sep or not node or not device or "/" in device:
        raise UsageError(f"--drain-rule wants NODE/DEVICE (e.g. gpu-node-3/gpu-5), not {text!r}")
    for part in (node, device):
        if len(part) > 253 or not _DNS.match(part):
            raise UsageError(f"--drain-rule: {part!r} is not a valid node or device name")
    return node, device


def device_selector(node: str, device: str) -> dict[str, str]:
    """The device as the driver that taints unhealthy devices publishes it (:meth:`kubedra.vendors.base.Vendor.
    drain_selector`; NVIDIA's is the one vendor whose driver does today)."""
    found = [s for v in vendors.all() if (s := v.drain_selector(node, device)) is not None]
    if len(found) != 1:
        raise UsageError(
            f"--drain-rule: {len(found)} vendors' drivers taint unhealthy devices; cannot tell whose"
        )
    return found[0]


def drain_rule(node: str, device: str, k8s_version: str, reason: str = "unhealthy") -> dict[str, Any]:
    name = f"drain-{node}-{device}"
    if len(name) > 253:
        name = name[:253].rstrip("-.")
    return {
        "apiVersion": taint_rule_api_version(k8s_version),
        "kind": "DeviceTaintRule",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "kubedra"}},
        "spec": {
            "deviceSelector": device_selector(node, device),
            "taint": {"key": DRAIN_KEY, "value": reason, "effect": "NoExecute"},
        },
    }


def gates_note(k8s_version: str) -> str | None:
    """What the API server needs before it takes a DeviceTaintRule (data/versions.yaml apis.deviceTaintRuleGates,
    data/feature-gates.yaml), or None."""
    release = parse_version(k8s_version)
    off = taint_rule_gates_off(release)
    if not off:
        return None
    api = taint_rule_api_version(str(release))
    gates = " and ".join(off)
    return (
        f"Kubernetes {release}: DeviceTaintRule needs the {gates} feature gate{'s' if len(off) > 1 else ''} "
        f"(off by default) and --runtime-config={api}=true on the API server"
    )
