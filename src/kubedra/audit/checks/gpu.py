"""GPUs still on device plugins: requests in every pod template, device-plugin DaemonSets and configs, the GPU
operator, and nodes advertising GPUs through both the device plugin and a DRA driver."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import yaml

from kubedra import vendors
from kubedra.audit.model import Item
from kubedra.audit.podspecs import format_path, owned_by_listed_controller, resource_uses
from kubedra.audit.scope import Context, Scope, check
from kubedra.k8s import kueue, platforms
from kubedra.k8s.findings import Finding
from kubedra.k8s.gpuschemes import annotation_schemes, resource_scheme
from kubedra.k8s.workloads import custom_resource_gpu_fields
from kubedra.text import count
from kubedra.vendors.gpurequest import is_zero

# The rule each kind of vendor resource (kubedra.vendors.GpuResource.kind) is reported under.
_RULE_BY_KIND = {
    "gpu": "gpu.device-plugin-request",
    "shared": "gpu.shared-request",
    "mig": "gpu.mig-request",
    "partition": "gpu.partition-request",
}


def _quantity(q: Any) -> str:
    return str(q).strip()


def _is_zero(q: Any, release: str | None = None) -> bool:
    # one reading of a GPU count for every verb (kubedra.vendors.gpurequest): "0", "00", 0, "0.0" are zero, and
    # at the target release what its Value() reads as 0 (1e20 at 1.36/1.37)
    if q.__class__ in _READ_ALIKE:
        return _is_zero_of(q.__class__.__name__, q, release)
    return _quantity(q) == "" or is_zero(q, release)


# Values read the same wherever they are written, so read once per (type, value, release): manifests repeat a few
# GPU counts, and parsing each as a quantity at the release (Version and Quantity objects) was about a fifth of
# this check (10,000 manifests: 3,000 readings of a handful of values). The type is part of the key: 1, 1.0
# and True are equal keys to a dict.
_READ_ALIKE = frozenset({str, int, float})


@functools.lru_cache(maxsize=1 << 12)
def _is_zero_of(_type: str, q: Any, release: str | None) -> bool:
    return _quantity(q) == "" or is_zero(q, release)


@functools.cache  # a pure reading of the name; manifests repeat a few resource names (10,000: 11,000 asks)
def _classify(resource: str) -> tuple[str, Mapping[str, Any]] | None:
    other = resource_scheme(
        resource
    )  # HAMi, gpushare, Intel...: a scheme of its own, before the vendor's names
    if other is not None:
        return other.rule, MappingProxyType({"driver": other.driver, "scheme": other.scheme})
    gr = vendors.classify(
        resource
    )  # every vendor behind the seam: nvidia.com/gpu, amd.com/gpu, MIG, partitions
    if gr is None:
        return None
    rule = _RULE_BY_KIND.get(gr.kind)
    if rule is None and gr.profile is not None:  # a MIG name kubedra does not know the profile of: still MIG
        rule = "gpu.mig-request"
    if rule is None:
        return None
    return rule, MappingProxyType({"profile": gr.profile} if gr.profile is not None else {})


def controllers(scope: Scope) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every object in the scope that owns others (captured or live state)."""
    owned = [it for it in scope.items if it.meta.get("ownerReferences")]
    if not owned:
        return set()
    return {(it.kind, it.home, it.name) for it in scope.items}


def _extended_resource_classes(scope: Scope) -> dict[str, str]:
    """extendedResourceName -> DeviceClass name (KEP-5004: the scheduler serves that resource from DRA)."""
    out: dict[str, str] = {}
    for dc in scope.kind("DeviceClass"):
        ern = dc.spec.get("extendedResourceName")
        if isinstance(ern, str) and ern:
            out[ern] = dc.name
    return out


# Rules that say "this object uses GPUs outside DRA" (the corpus checks audit, migrate and simulate agree on them).
REQUEST_RULES = (
    "gpu.device-plugin-request",
    "gpu.platform-sharing",
    "gpu.mig-request",
    "gpu.partition-request",
    "gpu.shared-request",
    "gpu.hami-request",
    "gpu.other-vendor-request",
    "gpu.memory-share-request",
    "gpu.fraction-annotation",
)
CUSTOM_RESOURCE_RULE = "gpu.custom-resource-request"


@check(*REQUEST_RULES)
def gpu_requests(ctx: Context, scope: Scope) -> None:
    mapped = _extended_resource_classes(scope)
    owners = controllers(scope)
    release = str(ctx.target)
    for item in scope.items:
        if item.kind in ("Node", "ResourceSlice", "ConfigMap", "Secret", "CustomResourceDefinition"):
            continue
        if owners and owned_by_listed_controller(item, owners):
            continue
        first = len(ctx.findings)
        for at in item.pod_specs:
            where = "pod" if at.path == ("spec",) else "pod template at " + format_path(at.path)
            for use in resource_uses(at):
                hit = _classify(use.resource)
                if hit is None or _is_zero(use.quantity, release):
                    continue
                rule, extra = hit
                msg = (
                    f"container {use.container} requests {use.resource}: {_quantity(use.quantity)} ({where})"
                )
                severity = None
                plat = platforms.gpu_sharing(at.spec) if rule == "gpu.device-plugin-request" else None
                if plat is not None:  # the platform's own MIG partition or GPU sharing, not a whole GPU
                    rule = "gpu.platform-sharing"
                    what = (
                        f"a {plat.strategy} share of a GPU"
                        + (f" (up to {plat.clients} containers per GPU)" if plat.clients else "")
                        if plat.strategy
                        else f"one MIG slice of profile {plat.partition}"
                    )
                    msg += (
                        f"; {plat.describe()}: on these nodes {use.resource} is {what}, not an exclusive GPU"
                    )
                    extra = {"selected": ", ".join(plat.labels)}
                cls = mapped.get(use.resource)
                if cls is not None:
                    severity = "info"
                    msg += (
                        f"; DeviceClass {cls} maps {use.resource} to DRA (extendedResourceName), so it runs "
                        "unchanged on nodes without the device plugin"
                    )
                ctx.emit(rule, item, msg, path=use.path, severity=severity, resource=use.resource, **extra)
            annotations = at.meta.get("annotations")
            for sch in annotation_schemes(annotations):
                assert isinstance(annotations, dict)
                ctx.emit(
                    "gpu.fraction-annotation",
                    item,
                    f"{where} has annotation {sch.key}: {annotations[sch.key]!r} ({sch.reason}, {sch.scheme})",
                    path=(*at.meta_path, "annotations", sch.key),
                    annotation=sch.key,
                    scheduler=sch.scheme,
                )
        _manual_object(ctx.findings, first)


def _manual_object(findings: list[Finding], first: int) -> None:
    """migrate leaves every GPU request of an object unchanged when one of them needs a manual decision (a HAMi
    memory share beside nvidia.com/gpu): then none of the object's findings (from FIRST on) is one it fixes."""
    mine = findings[first:]
    if any(f.fixed_by_migrate for f in mine) and not all(f.fixed_by_migrate for f in mine):
        findings[first:] = [replace(f, fixed_by_migrate=False) for f in mine]


@check(CUSTOM_RESOURCE_RULE)
def custom_resource_gpus(ctx: Context, scope: Scope) -> None:
    """GPUs requested in a custom resource's own fields (TrainJob resourcesPerNode, a vLLM runtime CR, a Kueue
    quota): the same fields migrate leaves as manual items and simulate skips."""
    for item in scope.items:
        fields = custom_resource_gpu_fields(item.obj, vendors.gpu_names())
        if not fields:
            continue
        in_pod_specs = [at.path for at in item.pod_specs]  # reported per container by gpu_requests already
        for path, value in fields:
            if any(path[: len(p)] == p for p in in_pod_specs):
                continue
            ctx.emit(
                CUSTOM_RESOURCE_RULE,
                item,
                f"{item.kind} field {format_path(path)} = {value!r} names a device-plugin GPU",
                path=path,
                field=format_path(path),
            )


@check("gpu.kueue-quota")
def kueue_quotas(ctx: Context, scope: Scope) -> None:
    """A Kueue ClusterQueue's (or Cohort's) GPU quota: configuration, which a migration to claims leaves
    uncharged unless the Kueue Configuration maps the DeviceClass (deviceClassMappings)."""
    for item in scope.items:
        quotas = kueue.gpu_quotas(item.obj, vendors.gpu_names())
        if quotas:
            ctx.emit(
                "gpu.kueue-quota",
                item,
                kueue.quota_message(item.kind, quotas),
                path=quotas[0].path,
                resource=quotas[0].resource,
            )


def _containers(item: Item) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """(path, container) of each init and main container of the item's pod specs."""
    out = []
    for at in item.pod_specs:
        for field in ("initContainers", "containers"):
            for i, c in enumerate(at.spec.get(field) or []):
                if isinstance(c, dict):
                    out.append(((*at.path, field, i), c))
    return out


def _images(item: Item) -> list[tuple[tuple[str | int, ...], str, str]]:
    """(path, image, first word of the command) of each container."""
    out = []
    for path, c in _containers(item):
        if isinstance(c.get("image"), str):
            command = c.get("command")
            first = str(command[0]) if isinstance(command, list) and command else ""
            out.append(((*path, "image"), c["image"], first))
    return out


def node_components(item: Item) -> list[tuple[tuple[str | int, ...], str, str, str]]:
    """(path, image, component key, vendor title) of each container running one of a vendor's node components
    (``device-plugin``, or another one such as GPU feature discovery from the same image, as the vendor tells by
    the container's command, image and name)."""
    out = []
    for path, c in _containers(item):
        for vendor in vendors.all():
            component = vendor.node_component(c)
            if component is not None:
                out.append(((*path, "image"), str(c.get("image") or ""), component.key, vendor.title))
                break
    return out


def _by_daemonset(item: Item) -> tuple[tuple[str | int, ...], str, str] | None:
    """(path, image, vendor title) when no container says but the vendor tells the DaemonSet a device plugin (the
    GPU Operator's per-component node selector)."""
    for vendor in vendors.all():
        component = vendor.node_component(item.obj)
        if component is not None and component.key == "device-plugin" and item.pod_specs:
            at = item.pod_specs[0]
            images = [
                str(c.get("image") or "") for c in at.spec.get("containers") or [] if isinstance(c, dict)
            ]
            return (*at.path, "nodeSelector"), ", ".join(i for i in images if i) or "no image", vendor.title
    return None


@check("gpu.device-plugin-daemonset", "gpu.mps-sharing")
def device_plugin_daemonsets(ctx: Context, scope: Scope) -> None:
    for item in scope.kind("DaemonSet"):
        components = {c: (p, i, t) for p, i, c, t in reversed(node_components(item))}
        if "mps-control-daemon" in components and "device-plugin" not in components:
            path, image, _ = components["mps-control-daemon"]
            ctx.emit(
                "gpu.mps-sharing",
                item,
                f"the device plugin's MPS control daemon ({image}) serves MPS-shared GPUs on its nodes",
                path=path,
            )
        hit = components.get("device-plugin") or _by_daemonset(item)
        if hit is None:
            continue
        path, image, title = hit
        st = item.status
        nodes = (
            f"; running on {st.get('numberReady', 0)}/{st.get('desiredNumberScheduled', 0)} nodes"
            if st
            else ""
        )
        ctx.emit("gpu.device-plugin-daemonset", item, f"{title} device plugin ({image}){nodes}", path=path)


def _time_slicing(cfg: Any) -> dict[str, Any] | None:
    if not isinstance(cfg, dict):
        return None
    sharing = cfg.get("sharing")
    if isinstance(sharing, dict) and isinstance(sharing.get("timeSlicing"), dict):
        ts: dict[str, Any] = sharing["timeSlicing"]
        return ts
    return None


def _mps(cfg: Any) -> dict[str, Any] | None:
    sharing = cfg.get("sharing") if isinstance(cfg, dict) else None
    mps = sharing.get("mps") if isinstance(sharing, dict) else None
    return mps if isinstance(mps, dict) else None


@check("gpu.time-slicing-config")
def time_slicing_configmaps(ctx: Context, scope: Scope) -> None:
    for item in scope.kind("ConfigMap"):
        data = item.obj.get("data")
        if not isinstance(data, dict):
            continue
        for key, text in data.items():
            if not isinstance(text, str) or ("timeSlicing" not in text and "mps" not in text):
                continue
            try:
                cfg = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            mps = _mps(cfg)
            if mps is not None:
                parts = [
                    f"{r.get('name')} x{r.get('replicas')}"
                    for r in mps.get("resources") or []
                    if isinstance(r, dict)
                ]
                ctx.emit(
                    "gpu.mps-sharing",
                    item,
                    f"device plugin MPS sharing config {key!r}: {', '.join(parts) or 'no resources'}",
                    path=("data", key),
                )
            ts = _time_slicing(cfg)
            if ts is None:
                continue
            parts = []
            for r in ts.get("resources") or []:
                if isinstance(r, dict):
                    parts.append(f"{r.get('name')} x{r.get('replicas')}")
            shared = [_shared_name(r.get("name")) for r in ts.get("resources") or [] if isinstance(r, dict)]
            renamed = ", ".join(n for n in shared if n)
            rename = (
                f" (renameByDefault: advertised as {renamed})"
                if ts.get("renameByDefault") and renamed
                else ""
            )
            ctx.emit(
                "gpu.time-slicing-config",
                item,
                f"device plugin time-slicing config {key!r}: {', '.join(parts) or 'no resources'}{rename}",
                path=("data", key),
            )


def _shared_name(resource: Any) -> str | None:
    vendor = vendors.for_resource(str(resource or ""))
    return vendor.shared_resource(str(resource)) if vendor is not None else None


@check("gpu.operator")
def gpu_operator(ctx: Context, scope: Scope) -> None:
    for vendor in vendors.all():  # what each vendor's GPU operator custom resources deploy
        items = scope.items
        for note in vendor.operator_notes([it.obj for it in items]):
            ctx.emit("gpu.operator", items[note.index], note.message, path=note.path, severity=note.severity)
    for item in scope.kind("Deployment"):
        for path, image, _ in _images(item):
            if re.search(r"(^|/)gpu-operator(:|@|$)", image):
                owner = next((v.title + " " for v in vendors.all() if v.names_component(image)), "")
                ctx.emit("gpu.operator", item, f"{owner}GPU operator deployment ({image})", path=path)
                break


def node_gpu_allocatable(node: Item, resource: str, release: str | None = None) -> str | None:
    """The node's allocatable count of ``resource`` (a vendor's whole GPU), or None when it has none (as
    ``release``'s kube-scheduler reads it, when given)."""
    alloc = node.status.get("allocatable") or node.status.get("capacity")
    if isinstance(alloc, dict):
        q = alloc.get(resource)
        if q is not None and not _is_zero(q, release):
            return _quantity(q)
    return None


def slices_by_node(scope: Scope, driver: str | None = None) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for s in scope.kind("ResourceSlice"):
        node = s.spec.get("nodeName")
        if not isinstance(node, str) or not node:
            continue
        if driver is not None and s.spec.get("driver") != driver:
            continue
        out.setdefault(node, []).append(s)
    return out


@check("gpu.dual-advertisement")
def dual_advertisement(ctx: Context, scope: Scope) -> None:
    for vendor in vendors.all():  # each vendor's device plugin and DRA driver advertising the same GPUs
        dra_nodes = slices_by_node(scope, vendor.driver)
        if not dra_nodes:
            continue
        for node in scope.kind("Node"):
            qty = node_gpu_allocatable(node, vendor.gpu_resource, str(ctx.target))
            if qty is None or node.name not in dra_nodes:
                continue
            ctx.emit(
                "gpu.dual-advertisement",
                node,
                f"node advertises {vendor.gpu_resource}: {qty} (device plugin) and has "
                f"{count(len(dra_nodes[node.name]), 'ResourceSlice')} of {vendor.driver}",
                path=("status", "allocatable", vendor.gpu_resource),
                node=node.name,
            )
