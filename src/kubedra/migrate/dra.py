"""DRA API versions → v1, through the project's single set of conversion rules (``kubedra.model.convert``).

This module only adapts those rules to ``migrate``: it reports their notes with file:line, turns
classic DRA (v1alpha1/v1alpha2, removed in 1.31) into manual items with what must be redesigned, and
flattens the pod-side ``resourceClaims[].source`` of that era, which *is* mechanical.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from kubedra import vendors
from kubedra.k8s.workloads import PodTemplate, api_group, get_path
from kubedra.migrate.context import ObjectContext
from kubedra.model import convert
from kubedra.model.convert import EXACT_FIELDS
from kubedra.sources.yamldoc import splice

RESOURCE_GROUP = "resource.k8s.io"
CLASSIC = ("v1alpha1", "v1alpha2")
OLD_STRUCTURED = ("v1alpha3", "v1beta1", "v1beta2")

CLASSIC_REDESIGN = {
    "ResourceClass": "becomes a DeviceClass with CEL selectors on the attributes the driver publishes "
    "({classes}); driverName and parametersRef have no equivalent",
    "ResourceClaim": "spec.resourceClassName + parametersRef become spec.devices.requests[].exactly "
    "{deviceClassName, selectors, count}; vendor parameters become spec.devices.config[].opaque",
    "ResourceClaimTemplate": "spec.spec.resourceClassName + parametersRef become spec.spec.devices.requests[]."
    "exactly{deviceClassName, selectors, count}; vendor parameters become spec.spec.devices.config[].opaque",
    "PodSchedulingContext": "not needed any more: structured parameters let kube-scheduler allocate; delete it",
    "PodScheduling": "not needed any more: structured parameters let kube-scheduler allocate; delete it",
    "ResourceClaimParameters": "becomes CEL selectors and opaque config in the claim",
    "ResourceClassParameters": "becomes CEL selectors and config in the DeviceClass",
}


def is_classic(obj: Mapping[str, Any]) -> bool:
    api = str(obj.get("apiVersion", ""))
    return api_group(api) == RESOURCE_GROUP and api.rsplit("/", 1)[-1] in CLASSIC


def is_vendor_claim_parameters(obj: Mapping[str, Any]) -> bool:
    kind = str(obj.get("kind", ""))
    return (
        kind.endswith(("ClaimParameters", "ClassParameters"))
        and api_group(str(obj.get("apiVersion", ""))) != ""
    )


def needs_upgrade(obj: Mapping[str, Any]) -> bool:
    api = str(obj.get("apiVersion", ""))
    return api_group(api) == RESOURCE_GROUP and api.rsplit("/", 1)[-1] in OLD_STRUCTURED


def report_classic(ctx: ObjectContext) -> None:
    kind = ctx.ref.kind
    named = _vendor_of(str(ctx.obj.get("driverName") or ""))  # a classic ResourceClass names its driver
    classes = "; ".join(
        f"{v.title}: {' / '.join(v.claim_classes)}" for v in ([named] if named else vendors.all())
    )
    what = CLASSIC_REDESIGN.get(kind, "has no structured-DRA equivalent").replace("{classes}", classes)
    ctx.note(
        "manual",
        f"classic DRA {ctx.ref.api_version} {kind} (removed in 1.31) cannot be converted mechanically: {what}; "
        "see https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/",
    )


def _vendor_of(domain: str) -> vendors.Vendor | None:
    """The vendor whose DNS domain ``domain`` (an API group, a classic DRA driver name) is in:
    ``gpu.resource.nvidia.com`` is NVIDIA's."""
    return next(
        (
            v
            for v in vendors.all()
            if domain and ((d := v.resource_domain.rstrip("/")) == domain or domain.endswith("." + d))
        ),
        None,
    )


def report_vendor_parameters(ctx: ObjectContext) -> None:
    extra = ""
    spec = ctx.obj.get("spec")
    vendor = _vendor_of(api_group(ctx.ref.api_version))
    claim = (
        vendor.partition_claim(str(spec["profile"]))
        if vendor and isinstance(spec, Mapping) and spec.get("profile")
        else None
    )
    if vendor is not None and claim is not None:
        assert isinstance(spec, Mapping)
        extra = (
            f" (profile {spec['profile']}: with the {vendor.title} DRA driver request class {claim[0]} with selector "
            f"{' && '.join(claim[1])})"
        )
    ctx.note(
        "manual",
        f"classic DRA claim parameters {ctx.ref.api_version} {ctx.ref.kind}: move its settings into CEL selectors "
        f"and opaque config of the claim{extra}",
    )


def _comment_moves(obj: Mapping[str, Any]) -> list[tuple[Any, str, dict[Any, Any]]]:
    """Comments of the fields the conversion moves into a new mapping, to put back afterwards."""

    moves: list[tuple[Any, str, dict[Any, Any]]] = []
    spec = obj.get("spec")
    kind = obj.get("kind")
    if kind == "ResourceClaimTemplate" and isinstance(spec, Mapping):
        spec = spec.get("spec")
    if kind in ("ResourceClaim", "ResourceClaimTemplate") and isinstance(spec, Mapping):
        for req in get_path(spec, ("devices", "requests")) or []:
            ca = getattr(req, "ca", None)
            if ca is not None and "exactly" not in req:
                saved = {k: v for k, v in ca.items.items() if k in EXACT_FIELDS}
                if saved:
                    moves.append((req, "exactly", saved))
    if kind == "ResourceSlice" and isinstance(spec, Mapping):
        for dev in spec.get("devices") or []:
            basic = dev.get("basic") if isinstance(dev, Mapping) else None
            ca = getattr(basic, "ca", None)
            if ca is not None and ca.items:
                moves.append((dev, "", dict(ca.items)))
    return moves


def upgrade(ctx: ObjectContext) -> bool:
    """Convert ``ctx.obj`` in place to v1; False when it needs a human."""

    moves = _comment_moves(ctx.obj)
    try:
        notes = convert.upgrade_to_v1(ctx.obj, target_version=ctx.options.target_version)
    except convert.ClassicDRAError:
        report_classic(ctx)
        return False
    for owner, key, items in moves:  # the conversion builds new mappings; carry the comments over
        target = owner.get(key) if key else owner
        if hasattr(target, "ca"):
            for k, entry in items.items():
                if k in target:
                    target.ca.items[k] = entry
    for n in notes:
        ctx.note("warning" if n.warning else "change", f"{n.path}: {n.message}")
    return bool(notes)


def flatten_pod_claim_sources(ctx: ObjectContext, templates: list[PodTemplate]) -> bool:
    """``resourceClaims[].source.{resourceClaimName,resourceClaimTemplateName}`` (≤1.30) → direct fields."""
    changed = False
    for t in templates:
        claims = get_path(ctx.obj, (*t.spec, "resourceClaims"))
        if not isinstance(claims, Sequence) or isinstance(claims, str):
            continue
        for i, c in enumerate(claims):
            if not isinstance(c, MutableMapping) or not isinstance(c.get("source"), Mapping):
                continue
            src = c["source"]
            items = [(k, src[k]) for k in ("resourceClaimName", "resourceClaimTemplateName") if src.get(k)]
            ctx.note(
                "change",
                "pod resourceClaims[].source (Kubernetes ≤1.30) flattened to "
                + ", ".join(k for k, _ in items),
                (*t.spec, "resourceClaims", i, "source"),
            )
            splice(c, "source", items)
            changed = True
    return changed
