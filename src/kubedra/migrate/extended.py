"""The ``extended-resource`` strategy (KEP-5004): pods keep their device-plugin resource names and a DeviceClass with
``extendedResourceName`` (the vendor's, :meth:`kubedra.vendors.base.Vendor.extended_resource_class`) maps each name
to DRA devices; the gate's stage at the target is said with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra import vendors
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import Path, PodTemplate, get_path
from kubedra.migrate.context import ObjectContext
from kubedra.migrate.gpu import scanned_templates
from kubedra.vendors import GpuResource


def extended_resource_warning(target: tuple[int, int]) -> str:
    release = Version(*target)
    info = gate_info("DRAExtendedResource", release) or {}  # data/feature-gates.yaml
    stage = info.get("stage", "alpha")
    if stage == "ga":
        gate = f"DRAExtendedResource is GA (on) in {release}"
    elif info.get("default"):
        gate = f"DRAExtendedResource is {stage} and on by default in {release}"
    else:
        gate = (
            f"DRAExtendedResource is {stage} and OFF in {release}: enable the feature gate on kube-apiserver, "
            "kube-scheduler and kubelet, or extendedResourceName is dropped and pods stay Pending"
        )
    plugins = " or ".join(v.title for v in vendors.all() if v.unsupported("extended-resource") is None)
    return (
        f"extended-resource strategy: {gate}; the {plugins} device plugin must not run on the nodes that serve "
        "these classes (both would advertise the same GPUs)"
    )


def extended_resource_classes(ctx: ObjectContext, templates: list[PodTemplate]) -> list[dict[str, Any]]:
    """DeviceClasses with ``extendedResourceName`` for every GPU resource ``ctx.obj`` requests."""
    wanted: dict[str, GpuResource] = {}
    for tmpl, found, _manual in scanned_templates(ctx, templates):
        spec = get_path(ctx.obj, tmpl.spec)
        for cg in found:
            for gr, _ in cg.wants:
                wanted.setdefault(gr.name, gr)
                _shared_on_extended_resource(ctx, gr, spec if isinstance(spec, Mapping) else {}, tmpl.spec)
    out: list[dict[str, Any]] = []
    for _name, gr in wanted.items():
        cls = extended_class(ctx, gr)
        if cls is not None:
            out.append(cls)
    return out


def _shared_on_extended_resource(
    ctx: ObjectContext, gr: GpuResource, spec: Mapping[str, Any], path: Path
) -> None:
    """With extendedResourceName every pod gets its own device: where the device plugin shared GPUs between
    pods, that divides their density — a manual item, not a silent rewrite."""
    d = ctx.run.scope.decide(gr.name, spec)
    if d.manual:
        ctx.note("manual", d.manual, path)
    elif d.shared is not None and d.shared.replicas > 1:
        ctx.note(
            "manual",
            f"{gr.name}: {d.shared.who} let {d.shared.replicas} pods share one GPU on this pod's nodes "
            f"({d.why}); with --gpu-strategy extended-resource each pod gets a device of its own, so the same nodes "
            "hold a fraction of the pods: use --gpu-strategy claim-template (groups of pods sharing ResourceClaims) "
            "or keep these nodes on the device plugin",
            path,
        )


def extended_class(ctx: ObjectContext, gr: GpuResource) -> dict[str, Any] | None:
    run = ctx.run
    if gr.kind == "shared" and run.sharing_classes.get(gr.name):
        return None  # the ConfigMap conversion emitted it with extendedResourceName
    made = vendors.get(gr.vendor).extended_resource_class(gr, interval=run.options.interval)
    if made is None:
        return None
    class_name, spec, note = made
    if run.taken("DeviceClass", None, class_name):
        return None
    run.reserve("DeviceClass", None, class_name)
    ctx.note("change", note)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": class_name},
        "spec": spec,
    }
