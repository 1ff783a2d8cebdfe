"""Fields and annotations the target version does not act on: DRA fields behind a feature gate that is off by
default (or does not exist yet) at the target, which the apiserver drops silently, and annotations that no longer
link anything (``scheduling.k8s.io/pod-group`` in 1.36+, where pods name their PodGroup in
``spec.schedulingGroup.podGroupName``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubedra.audit.podspecs import format_path
from kubedra.audit.scope import Context, Scope, check
from kubedra.k8s.featuregates import dropped_from, gate_info
from kubedra.k8s.versions import holds

Path = tuple[str | int, ...]
# request field -> the feature gate that makes the apiserver keep it (k8s.io/kubernetes pkg/registry/resource
# dropDisabledFields: DRAAdminAccess, DRAPrioritizedList, DRADeviceTaints, DRAConsumableCapacity)
_REQUEST_FIELDS = {
    "tolerations": "DRADeviceTaints",
    "adminAccess": "DRAAdminAccess",
    "capacity": "DRAConsumableCapacity",
    "firstAvailable": "DRAPrioritizedList",
}
_CLASS_FIELDS = {"extendedResourceName": "DRAExtendedResource"}
# scheduling fields of the gang API that `kubedra migrate` writes (k8s.io/api v0.37 JobSpec.Scheduling: "requires
# the WorkloadWithJob feature gate"; PodSpec.SchedulingGroup: GenericWorkload), dropped like the DRA ones
_JOB_FIELDS = {"scheduling": "WorkloadWithJob"}
_POD_FIELDS = {"schedulingGroup": "GenericWorkload", "workloadRef": "GenericWorkload"}
POD_GROUP_ANNOTATION = "scheduling.k8s.io/pod-group"


def _requests(spec: Any, base: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    reqs = devices.get("requests") if isinstance(devices, dict) else None
    for i, r in enumerate(reqs if isinstance(reqs, list) else []):
        if not isinstance(r, dict):
            continue
        p: Path = (*base, "devices", "requests", i)
        yield p, r
        if isinstance(r.get("exactly"), dict):
            yield (*p, "exactly"), r["exactly"]
        for j, sub in enumerate(r.get("firstAvailable") or []):
            if isinstance(sub, dict):
                yield (*p, "firstAvailable", j), sub


def _gated(ctx: Context, gate: str, field: str = "") -> str | None:
    """Why the field is dropped at the target, or None when its gate is on by default there, or when the target's
    apiserver keeps the field with the gate off (data/dropped-fields.yaml: 1.34 drops no claim tolerations)."""
    first = dropped_from(gate, field) if field else None
    if first is not None and ctx.target < first:
        return None
    info = gate_info(gate, str(ctx.target))
    if info is None:
        return f"the feature gate {gate} does not exist in {ctx.target}"
    if not info.get("default"):
        return f"{gate} is {info.get('stage', 'off')} and off by default in {ctx.target}"
    return None


@check("dra.field-dropped-at-target", "scheduling.field-dropped-at-target", "scheduling.pod-group-annotation")
def target_fields(ctx: Context, scope: Scope) -> None:
    for item in scope.kind("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"):
        if not item.api_version.startswith("resource.k8s.io/"):
            continue
        spec = item.obj.get("spec")
        fields: list[tuple[Path, str]] = []
        if item.kind == "DeviceClass" and isinstance(spec, dict):
            fields = [(("spec", k), g) for k, g in _CLASS_FIELDS.items() if k in spec]
        else:
            base: Path = ("spec", "spec") if item.kind == "ResourceClaimTemplate" else ("spec",)
            inner = (
                spec.get("spec") if item.kind == "ResourceClaimTemplate" and isinstance(spec, dict) else spec
            )
            for p, r in _requests(inner, base):
                fields += [((*p, k), g) for k, g in _REQUEST_FIELDS.items() if k in r]
        for path, gate in fields:
            why = _gated(ctx, gate, str(path[-1]))
            if why is None:
                continue
            ctx.emit(
                "dra.field-dropped-at-target",
                item,
                f"{format_path(path)}: {why}; the apiserver drops the field without an error unless the gate is "
                "enabled, so the object silently loses it",
                path=path,
                severity="error" if "does not exist" in why else None,
                gate=gate,
            )
    _scheduling_fields(ctx, scope)
    if not holds("scheduling.podGroupLink", ctx.target):
        return
    for item in scope.items:
        for at in item.pod_specs:
            for where in ("annotations", "labels"):
                values = at.meta.get(where)
                if isinstance(values, dict) and POD_GROUP_ANNOTATION in values:
                    ctx.emit(
                        "scheduling.pod-group-annotation",
                        item,
                        f"{where[:-1]} {POD_GROUP_ANNOTATION}={values[POD_GROUP_ANNOTATION]!r} has no effect in "
                        f"{ctx.target}: pods join a PodGroup with spec.schedulingGroup.podGroupName",
                        path=(*at.meta_path, where, POD_GROUP_ANNOTATION),
                        group=values[POD_GROUP_ANNOTATION],
                    )


def _scheduling_fields(ctx: Context, scope: Scope) -> None:
    """A Job's spec.scheduling and a pod's spec.schedulingGroup/workloadRef, which migrate writes for a gang and
    warns about: with their gate off at the target the apiserver drops them and the pods are scheduled one by one."""
    for item in scope.items:
        fields: list[tuple[Path, str]] = []
        spec = item.obj.get("spec")
        if item.kind == "Job" and item.api_version == "batch/v1" and isinstance(spec, dict):
            fields += [(("spec", k), g) for k, g in _JOB_FIELDS.items() if k in spec]
        for at in item.pod_specs:
            fields += [((*at.path, k), g) for k, g in _POD_FIELDS.items() if k in at.spec]
        for path, gate in fields:
            why = _gated(ctx, gate)
            if why is None:
                continue
            ctx.emit(
                "scheduling.field-dropped-at-target",
                item,
                f"{format_path(path)}: {why}; the apiserver drops the field without an error unless the gate is "
                "enabled, and the pods are scheduled one by one, not as a gang",
                path=path,
                gate=gate,
            )
