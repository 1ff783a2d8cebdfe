"""What NVIDIA's GPU Operator custom resources deploy: a ClusterPolicy (the device plugin, unless disabled, and
optionally the DRA driver) or a GPUCluster (GPU Operator 26.7, Technology Preview: the DRA driver and no device
plugin), and that the operator reconciles neither while both exist (controllers/gpucluster_controller.go and
clusterpolicy_controller.go @ NVIDIA/gpu-operator v26.7.0: each refuses to reconcile while the other kind exists).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubedra.vendors.base import OperatorNote
from kubedra.vendors.nvidia import names

_GROUP = names.RESOURCE_DOMAIN  # the operator's API group nvidia.com, as the resource domain spells it
_TITLE = "NVIDIA GPU operator"


def _ours(obj: Mapping[str, Any], kind: str) -> bool:
    return obj.get("kind") == kind and str(obj.get("apiVersion") or "").startswith(_GROUP)


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""


def notes(objs: Sequence[Mapping[str, Any]]) -> list[OperatorNote]:
    """Each GPUCluster (an error next to a ClusterPolicy), then each ClusterPolicy (a warning while it deploys the
    device plugin)."""
    policies = [i for i, o in enumerate(objs) if _ours(o, "ClusterPolicy")]
    out = []
    for i, obj in enumerate(objs):
        if not _ours(obj, "GPUCluster"):
            continue
        dra = _spec(obj).get("draDriver")
        version = str(dra.get("version") or "") if isinstance(dra, Mapping) else ""
        what = f"DRA driver {version}" if version else "DRA driver (version not set)"
        if policies:
            out.append(
                OperatorNote(
                    i,
                    f"{_TITLE} GPUCluster ({what}) next to ClusterPolicy {_name(objs[policies[0]])}: GPU Operator "
                    "26.7 reconciles neither while both exist (a cluster uses one or the other); remove the "
                    "GPUCluster and install the DRA driver with its Helm chart, keeping the ClusterPolicy",
                    ("kind",),
                    "error",
                )
            )
            continue
        out.append(
            OperatorNote(
                i,
                f"{_TITLE} GPUCluster ({what}, Technology Preview): the operator deploys the DRA driver and no "
                "device plugin",
                ("spec", "draDriver") if isinstance(dra, Mapping) else ("spec",),
            )
        )
    for i in policies:
        spec = _spec(objs[i])
        dp = spec.get("devicePlugin")
        enabled = not (isinstance(dp, Mapping) and dp.get("enabled") is False)
        dra = spec.get("draDriver") or spec.get("dra")
        state = "device plugin enabled" if enabled else "device plugin disabled"
        if isinstance(dra, Mapping) and dra.get("enabled"):
            state += ", DRA driver enabled"
        out.append(
            OperatorNote(
                i,
                f"{_TITLE} ClusterPolicy ({state})",
                ("spec", "devicePlugin") if isinstance(dp, Mapping) else ("spec",),
                "warning" if enabled else None,
            )
        )
    return out


def role(obj: Mapping[str, Any]) -> str | None:
    """What the plan's steps take ``obj`` for: a ClusterPolicy deploys the device plugin (and the DRA driver only
    when asked), a GPUCluster the DRA driver and no device plugin (GPU Operator 26.7)."""
    if _ours(obj, "ClusterPolicy"):
        return "device-plugin"
    if _ours(obj, "GPUCluster"):
        return "dra-driver"
    return None
