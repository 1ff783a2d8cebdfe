"""The ``extended-resource`` strategy (KEP-5004): pods keep ``nvidia.com/gpu`` and a DeviceClass with
``extendedResourceName`` maps the name to DRA devices; the gate's stage at the target is said with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import Path, PodTemplate, get_path
from kubedra.migrate.context import ObjectContext
from kubedra.migrate.gpu import scanned_templates
from kubedra.vendors.nvidia import names as nvidia
from kubedra.vendors.nvidia.classes import driver_class
from kubedra.vendors.nvidia.resources import GpuResource


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
    return (
        f"extended-resource strategy: {gate}; the NVIDIA device plugin must not run on the nodes that serve "
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
    if gr.kind == "gpu":
        class_name = nvidia.GPU_CLASS
        body = driver_class(class_name)
        spec: dict[str, Any] = dict(body["spec"]) if body else {}
        if not spec:
            spec = {"selectors": [{"cel": {"expression": nvidia.class_selector("gpu")}}]}
        spec["extendedResourceName"] = gr.name
        note = (
            f"DeviceClass {class_name} maps {gr.name} to DRA GPUs; the NVIDIA DRA driver chart installs this "
            "class with the same extendedResourceName on resource.k8s.io/v1, keep only one copy"
        )
    elif gr.kind == "mig":
        assert gr.profile
        class_name = nvidia.mig_class_name(gr.profile)
        spec = {
            "selectors": [{"cel": {"expression": nvidia.class_selector("mig", gr.profile)}}],
            "extendedResourceName": gr.name,
        }
        if gr.shared:
            spec["config"] = [{"opaque": nvidia.opaque(nvidia.sharing_parameters("TimeSlicing", mig=True))}]
        note = f"DeviceClass {class_name} maps {gr.name} to MIG {gr.profile} devices"
    else:  # shared full GPU
        mapped = run.sharing_classes.get(gr.name)
        if mapped:
            return None  # the ConfigMap conversion emitted it with extendedResourceName
        class_name = f"gpu-shared.{nvidia.DRIVER}"
        spec = {
            "selectors": [{"cel": {"expression": nvidia.class_selector("gpu")}}],
            "config": [
                {
                    "opaque": nvidia.opaque(
                        nvidia.sharing_parameters("TimeSlicing", interval=run.options.interval)
                    )
                }
            ],
            "extendedResourceName": gr.name,
        }
        note = f"DeviceClass {class_name} maps {gr.name} to time-sliced GPUs"
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
