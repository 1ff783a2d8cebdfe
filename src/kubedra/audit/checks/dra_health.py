"""Health of a cluster that already runs DRA: driver plugins, slices, claims, taints and pools.

These checks read ``status``, so they speak about live clusters and about captured state (``kubectl get -o yaml``
dumps, ``kubedra snapshot``); hand-written manifests have no status and produce nothing here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from kubedra import vendors
from kubedra.audit.checks.gpu import node_gpu_allocatable, slices_by_node
from kubedra.audit.model import Item
from kubedra.audit.scope import Context, Scope, check
from kubedra.text import count, noun
from kubedra.vendors import Vendor

_DRA_DRIVER_IMAGE = re.compile(r"dra-driver|dra-example-driver|dra-plugin|kubelet-plugin")


def _captured(item: Item, scope: Scope) -> bool:
    """Live object, or one captured from a cluster (it has server-set metadata)."""
    return scope.live or "creationTimestamp" in item.meta or "uid" in item.meta


def _is_dra_plugin(ds: Item) -> bool:
    if "kubelet-plugin" in ds.name:
        return True
    for at in ds.pod_specs:
        for c in at.spec.get("containers") or []:
            if isinstance(c, dict) and _DRA_DRIVER_IMAGE.search(str(c.get("image") or "")):
                return True
    return False


def _pod_ready(pod: Item) -> bool:
    for cond in pod.status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _owned_by(pod: Item, kind: str, name: str) -> bool:
    for ref in pod.meta.get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == kind and ref.get("name") == name:
            return True
    return False


@check("dra.driver-not-ready")
def driver_not_ready(ctx: Context, scope: Scope) -> None:
    pods = scope.kind("Pod")
    for ds in scope.kind("DaemonSet"):
        if not _is_dra_plugin(ds) or not _captured(ds, scope):
            continue
        st = ds.status
        desired = int(st.get("desiredNumberScheduled") or 0)
        ready = int(st.get("numberReady") or 0)
        mine = [p for p in pods if p.home == ds.home and _owned_by(p, "DaemonSet", ds.name)]
        not_ready = [p for p in mine if not _pod_ready(p)]
        if ready >= desired and not not_ready:
            continue
        names = ", ".join(f"{p.name} on {p.spec.get('nodeName') or '?'}" for p in not_ready[:5])
        more = f" (+{len(not_ready) - 5} more)" if len(not_ready) > 5 else ""
        ctx.emit(
            "dra.driver-not-ready",
            ds,
            f"DRA kubelet plugin DaemonSet ready {ready}/{desired}"
            + (f"; not ready: {names}{more}" if names else ""),
            path=("status",),
            namespace=ds.home,
        )


def _driver_images(scope: Scope) -> list[tuple[Item, Vendor, str]]:
    """(DaemonSet, vendor, image tag) of each container running a vendor's DRA driver image, in order seen."""
    out = []
    for ds in scope.kind("DaemonSet"):
        for at in ds.pod_specs:
            for c in at.spec.get("containers") or []:
                image = str(c.get("image") or "") if isinstance(c, dict) else ""
                for vendor in vendors.all():
                    tag = vendor.driver_image_release(image) if image else None
                    if tag is not None:
                        out.append((ds, vendor, tag))
    return out


def driver_versions(scope: Scope, vendor: Vendor) -> list[str]:
    """The releases of ``vendor``'s DRA driver (among those kubedra has read) the scope's DaemonSets run, in
    order seen."""
    out: list[str] = []
    for _, v, tag in _driver_images(scope):
        if v is not vendor:
            continue
        try:
            release = vendor.resolve_driver_release(tag)
        except ValueError:
            continue
        if release not in out:
            out.append(release)
    return out


@check("dra.driver-release")
def driver_release(ctx: Context, scope: Scope) -> None:
    """A DRA driver's release (its DaemonSet's image tag) against the target: minimum Kubernetes,
    resource.k8s.io versions, or a release kubedra's table does not know (it cannot say)."""

    seen: set[tuple[str, str]] = set()
    for ds, vendor, tag in _driver_images(scope):
        if (vendor.name, tag) in seen:
            continue
        seen.add((vendor.name, tag))
        for problem in vendor.driver_preflight(tag, ctx.target.minor):
            ctx.emit("dra.driver-release", ds, problem, target=ctx.target)


def _is_gpu_node(node: Item, release: str) -> bool:
    labels = node.meta.get("labels")
    if isinstance(labels, dict):
        for vendor in vendors.all():
            for k, v in vendor.gpu_node_labels():
                if str(labels.get(k, "")).lower() == v:
                    return True
            if vendor.labels.product and vendor.labels.product in labels:
                return True
    return _allocatable(node, release) is not None


def _allocatable(node: Item, release: str) -> tuple[str, str] | None:
    """(resource, count) of the first vendor's whole-GPU resource the node advertises, or None; counted as the
    target ``release``'s kube-scheduler counts it (kubedra.vendors.gpurequest: ``1e20`` is none at 1.36/1.37)."""
    for vendor in vendors.all():
        qty = node_gpu_allocatable(node, vendor.gpu_resource, release)
        if qty is not None:
            return vendor.gpu_resource, qty
    return None


@check("dra.gpu-node-without-slices")
def gpu_nodes_without_slices(ctx: Context, scope: Scope) -> None:
    slices = scope.kind("ResourceSlice")
    if not slices:
        return  # the cluster does not use DRA (yet): nothing to compare against
    by_node = slices_by_node(scope)
    release = str(ctx.target)
    for node in scope.kind("Node"):
        if not _is_gpu_node(node, release) or node.name in by_node:
            continue
        found = _allocatable(node, release)
        if found is not None:
            ctx.emit(
                "dra.gpu-node-without-slices",
                node,
                f"GPU node still on the device plugin ({found[0]}: {found[1]}), no ResourceSlice: not migrated yet",
                severity="info",
                node=node.name,
            )
        else:
            ctx.emit(
                "dra.gpu-node-without-slices",
                node,
                "GPU node (by its labels) with neither device-plugin GPUs nor ResourceSlices",
                node=node.name,
            )


@check("dra.claim-unallocated")
def unallocated_claims(ctx: Context, scope: Scope) -> None:
    pending: dict[tuple[str, str], list[str]] = defaultdict(list)
    for pod in scope.kind("Pod"):
        if pod.status.get("phase") != "Pending":
            continue
        for rc in pod.spec.get("resourceClaims") or []:
            if isinstance(rc, dict) and rc.get("resourceClaimName"):
                pending[(pod.home, str(rc["resourceClaimName"]))].append(pod.name)
        for s in pod.status.get("resourceClaimStatuses") or []:
            if isinstance(s, dict) and s.get("resourceClaimName"):
                pending[(pod.home, str(s["resourceClaimName"]))].append(pod.name)
    for claim in scope.kind("ResourceClaim"):
        if not _captured(claim, scope) or claim.status.get("allocation"):
            continue
        waiting = sorted(set(pending.get((claim.home, claim.name), [])))
        msg = "claim has no allocation"
        if waiting:
            msg += f"; pending {noun(len(waiting), 'pod')}: {', '.join(waiting[:5])}"
        ctx.emit("dra.claim-unallocated", claim, msg, severity="warning" if waiting else "info")


@check("dra.device-taint-rule")
def device_taint_rules(ctx: Context, scope: Scope) -> None:
    for rule in scope.kind("DeviceTaintRule"):
        taint = rule.spec.get("taint") if isinstance(rule.spec.get("taint"), dict) else {}
        assert isinstance(taint, dict)
        effect = str(taint.get("effect") or "?")
        sel = rule.spec.get("deviceSelector")
        if isinstance(sel, dict) and sel:
            target = ", ".join(f"{k}={sel[k]}" for k in ("driver", "pool", "device") if sel.get(k))
        else:
            target = "every device (no selector)"
        ctx.emit(
            "dra.device-taint-rule",
            rule,
            f"taint {taint.get('key')}={taint.get('value', '')}:{effect} on {target}",
            path=("spec", "taint", "effect"),
            severity="warning" if effect in ("NoSchedule", "NoExecute") else "info",
        )


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


@check("dra.pool-inconsistent")
def pool_consistency(ctx: Context, scope: Scope) -> None:
    pools: dict[tuple[str, str], list[Item]] = defaultdict(list)
    for s in scope.kind("ResourceSlice"):
        pool = s.spec.get("pool")
        if isinstance(pool, dict) and pool.get("name"):
            pools[(str(s.spec.get("driver") or ""), str(pool["name"]))].append(s)
    for (driver, name), slices in sorted(pools.items()):
        gens = [g for g in (_int(s.spec["pool"].get("generation")) for s in slices) if g is not None]
        newest = max(gens, default=0)
        current = [s for s in slices if (_int(s.spec["pool"].get("generation")) or 0) == newest]
        counts = {_int(s.spec["pool"].get("resourceSliceCount")) for s in current}
        captured = all(_captured(s, scope) for s in current)
        first = current[0]
        if len(counts) > 1:
            msg = f"slices of pool {name} (driver {driver}) at generation {newest} disagree on resourceSliceCount {sorted(c or 0 for c in counts)}"
        else:
            want = counts.pop() or 0
            have = len(current)
            if have == want or (have < want and not captured):
                continue  # a manifest folder may hold only part of a pool
            msg = f"pool {name} (driver {driver}) has {count(have, 'slice')} at generation {newest}, resourceSliceCount says {want}"
        ctx.emit(
            "dra.pool-inconsistent",
            first,
            msg,
            path=("spec", "pool", "resourceSliceCount"),
            pool=name,
            generation=newest,
        )
