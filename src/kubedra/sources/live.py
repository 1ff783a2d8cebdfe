"""Read from a live cluster what the scheduler's DRA plugin sees for one pod or ResourceClaim (read-only).

GETs the target (a Pod or a ResourceClaim), then LISTs ResourceSlices, DeviceClasses, every ResourceClaim (the
in-use allocations), DeviceTaintRules, Nodes, and the target namespace's ResourceClaimTemplates. Each
resource.k8s.io resource is read at the first served version of v1, v1beta2, v1beta1, v1alpha3 that lists it
(the model converts older versions). A list the cluster refuses (RBAC) or cannot serve is reported in
``not_read`` (:class:`kubedra.sources.access.Unread`): the answer is then incomplete, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import ClusterError, InputError
from kubedra.sources import cluster as cs
from kubedra.sources.access import Unread

GROUP = "resource.k8s.io"
VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")
CLUSTER_LISTS = (
    (GROUP, "resourceslices"),
    (GROUP, "deviceclasses"),
    (GROUP, "resourceclaims"),
    (GROUP, "devicetaintrules"),
    ("", "nodes"),
)
KINDS = {"pod": "Pod", "claim": "ResourceClaim"}


@dataclass
class LiveRead:
    context: str
    server_version: str
    target: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)
    not_read: list[Unread] = field(default_factory=list)


def _fail(label: str, client: cs.Client, e: Exception) -> ClusterError:
    if isinstance(e, cs.HTTPError):
        return ClusterError(f"cluster {label} ({client.host}): {e.reason()}")
    return ClusterError(f"cannot reach cluster {label} at {client.host}: {cs.short_error(e)}")


def _resource_types(client: cs.Client, served: set[str]) -> dict[tuple[str, str], cs.ResourceType]:
    out: dict[tuple[str, str], cs.ResourceType] = {}
    wanted = {r for g, r in CLUSTER_LISTS if g == GROUP} | {"resourceclaimtemplates"}
    for v in VERSIONS:
        if f"{GROUP}/{v}" not in served:
            continue
        try:
            rts = cs.resources_of(client, GROUP, v)
        except cs.HTTPError:
            continue
        for rt in rts:
            if rt.resource in wanted and (GROUP, rt.resource) not in out:
                out[(GROUP, rt.resource)] = rt
    out[("", "nodes")] = cs.ResourceType("", "v1", "nodes", "Node", False)
    return out


def read(  # noqa: C901 - each read of the target with its own exit-2 message
    kubeconfig: str | None, context: str | None, namespace: str, kind: str, name: str, timeout: float
) -> LiveRead:
    """Raises ClusterError (unreachable, exit 2) and InputError (target not found, exit 2)."""
    label = context or "current-context"
    client = cs.Client(kubeconfig, context, timeout)
    try:
        ver = client.get_json("/version")
        disc = cs.discover(client)
        rts = _resource_types(client, disc.served)
    except Exception as e:
        if isinstance(e, cs.HTTPError) or cs.connection_error(e) or isinstance(e, ValueError):
            raise _fail(label, client, e) from e
        raise
    out = LiveRead(label, str(ver.get("gitVersion") or ""), {})
    if kind == "pod":
        path = f"/api/v1/namespaces/{namespace}/pods/{name}"
    else:
        rt = rts.get((GROUP, "resourceclaims"))
        if rt is None:
            raise ClusterError(f"cluster {label} serves no {GROUP} ResourceClaims (DRA is off)")
        path = f"/apis/{rt.group_version}/namespaces/{namespace}/resourceclaims/{name}"
    try:
        target = client.get_json(path)
    except cs.HTTPError as e:
        if e.status == 404:
            raise InputError(f"{KINDS[kind]} {namespace}/{name} not found in cluster {label}") from e
        raise _fail(label, client, e) from e
    except Exception as e:
        if cs.connection_error(e):
            raise _fail(label, client, e) from e
        raise
    target.setdefault("kind", KINDS[kind])
    target.setdefault("apiVersion", "v1" if kind == "pod" else rts[(GROUP, "resourceclaims")].group_version)
    out.target = target
    own = _own_claims(client, rts, namespace, target, out) if kind == "pod" else []
    lists: list[tuple[str, cs.ResourceType | None, list[tuple[str, Any]]]] = [
        (r, rts.get((g, r)), []) for g, r in CLUSTER_LISTS
    ]
    tmpl = rts.get((GROUP, "resourceclaimtemplates"))
    if tmpl is not None:
        tmpl = cs.ResourceType(
            tmpl.group,
            tmpl.version,
            f"namespaces/{namespace}/resourceclaimtemplates",
            "ResourceClaimTemplate",
            True,
        )
    lists.append(("resourceclaimtemplates", tmpl, []))
    for resource, rt, query in lists:
        name = f"{resource}.{GROUP}" if resource != "nodes" else "nodes"
        ns = namespace if resource == "resourceclaimtemplates" else None
        if rt is None:
            out.not_read.append(Unread(name, f"not served by {GROUP}", "list", ns))
            continue
        try:
            listed = client.list_all(rt, query)
        except cs.HTTPError as e:
            out.not_read.append(Unread(name, e.reason(), "list", ns))
            continue
        except Exception as e:
            if not cs.connection_error(e):
                raise
            out.not_read.append(Unread(name, cs.short_error(e), "list", ns))
            continue
        if resource == "resourceclaims":  # the target claim and the pod's own claims are read already
            listed = [o for o in listed if not any(_same(o, x) for x in [target, *own])]
        out.objects += listed
    out.objects += [*own, target]
    return out


def _own_claims(
    client: cs.Client,
    rts: dict[tuple[str, str], cs.ResourceType],
    namespace: str,
    pod: dict[str, Any],
    out: LiveRead,
) -> list[dict[str, Any]]:
    """GET the pod's claims one by one (a reader that may not list every claim may still read these)."""
    rt = rts.get((GROUP, "resourceclaims"))
    if rt is None:
        return []
    names = [
        str(s["resourceClaimName"])
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
        if isinstance(s, dict) and s.get("resourceClaimName")
    ]
    names += [
        str(c["resourceClaimName"])
        for c in (pod.get("spec") or {}).get("resourceClaims") or []
        if isinstance(c, dict) and c.get("resourceClaimName")
    ]
    found = []
    for name in dict.fromkeys(names):
        try:
            obj = client.get_json(f"/apis/{rt.group_version}/namespaces/{namespace}/resourceclaims/{name}")
        except cs.HTTPError as e:
            if e.status != 404:
                out.not_read.append(Unread(f"resourceclaims.{GROUP}", e.reason(), "get", namespace))
            continue
        obj.setdefault("kind", "ResourceClaim")
        obj.setdefault("apiVersion", rt.group_version)
        found.append(obj)
    return found


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    ma, mb = a.get("metadata") or {}, b.get("metadata") or {}
    return bool(ma.get("uid")) and ma.get("uid") == mb.get("uid")
