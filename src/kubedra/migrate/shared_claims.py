"""Time-slicing/MPS fleets keep their density: groups of pods share one ResourceClaim.

With the device plugin, ``replicas: R`` in a sharing config lets R pods use one GPU. With DRA, pods share a GPU only
by referencing the same ResourceClaim (the class's ``GpuConfig`` sets TimeSlicing or MPS). A Deployment's pods
all come from one template, so they can only name one claim: kubedra splits a Deployment (ReplicaSet,
ReplicationController) of N pods into ceil(N/R) Deployments of at most R pods, each with its own shared
ResourceClaim. The original keeps its name, selector (immutable) and first group; the others are
``<name>-share-<k>`` with the label ``kubedra.io/gpu-share: "<k>"`` added to their selector and pods.

A Job or StatefulSet that runs at most R pods at a time needs no split: all its pods reference one claim. Workloads
whose controller cannot point groups of its pods at different claims (larger StatefulSets and Jobs, operators'
custom resources, autoscaled Deployments, pods with several GPUs) are manual items: rewriting them one exclusive
GPU per pod would silently divide their density by R.

GKE's time-sharing node pools (``cloud.google.com/gke-max-shared-clients-per-gpu: N`` in the pod's nodeSelector,
:meth:`~kubedra.migrate.sharing_scope.Scope.decide`) are the same sharing with R = N.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from kubedra import vendors
from kubedra.k8s import namespaces
from kubedra.k8s.workloads import (
    PodTemplate,
    api_group,
    as_int,
    ceil_div,
    containers,
    get_path,
    pod_templates,
)
from kubedra.migrate import gpu
from kubedra.migrate.context import ObjectContext
from kubedra.migrate.sharing_scope import Scope
from kubedra.sources.yamldoc import to_plain, to_ruamel
from kubedra.text import count
from kubedra.vendors import SharedClass, classify

SHARE_LABEL = "kubedra.io/gpu-share"
_SPLITTABLE = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("", "ReplicationController")}
Key = tuple[str, str, str]  # (kind, namespace, name)


@dataclass(frozen=True)
class Candidate:
    """A workload whose pods will be split into groups sharing claims (read from the plain object)."""

    key: Key
    pods: int
    shared: SharedClass


def candidate(obj: Mapping[str, Any], scope: Scope, autoscaled: set[Key]) -> Candidate | None:
    """The same tests as :func:`convert` on the plain object, before any rewrite (to pack partial groups)."""
    group, kind = api_group(str(obj.get("apiVersion", ""))), str(obj.get("kind", ""))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    key = (kind, namespaces.effective(meta.get("namespace")), str(meta.get("name") or ""))
    if (group, kind) not in _SPLITTABLE or not key[2] or key in autoscaled:
        return None
    templates = pod_templates(obj)
    if not templates or len(templates) != 1:
        return None
    spec = get_path(obj, templates[0].spec)
    if not isinstance(spec, Mapping):
        return None
    wants = []
    for _, _, c in containers(spec):
        res = c.get("resources") if isinstance(c.get("resources"), Mapping) else {}
        assert isinstance(res, Mapping)
        sections = [res[sec] for sec in ("limits", "requests") if isinstance(res.get(sec), Mapping)]
        for n in sorted({str(n) for sec in sections for n in sec}):
            if classify(n) is not None:
                value = next(sec[n] for sec in sections if n in sec)
                wants.append((n, as_int(value)))
    if len(wants) != 1 or wants[0][1] != 1:
        return None
    d = scope.decide(wants[0][0], spec)
    if d.manual is not None or d.shared is None or d.shared.replicas <= 1:
        return None
    raw = get_path(obj, ("spec", "replicas"))
    pods = 1 if raw is None else as_int(raw)
    if pods is None or pods < 1:
        return None
    return Candidate(key, pods, d.shared)


def pack(candidates: list[Candidate]) -> dict[Key, tuple[str, str]]:
    """Partial groups (pods % R) of workloads in one namespace and class share claims, first-fit decreasing:
    workload key -> (namespace, claim name) for its last group, when that claim is shared with another workload."""
    out: dict[Key, tuple[str, str]] = {}
    by_pool: dict[tuple[str, str], list[tuple[int, Key]]] = {}
    per: dict[tuple[str, str], int] = {}
    for c in candidates:
        rest = c.pods % c.shared.replicas
        if rest:
            pool = (c.key[1], c.shared.name)
            by_pool.setdefault(pool, []).append((rest, c.key))
            per[pool] = c.shared.replicas
    for pool, items in sorted(by_pool.items()):
        bins: list[tuple[int, list[Key]]] = []
        for size, key in sorted(items, key=lambda x: (-x[0], x[1])):
            for i, (used, keys) in enumerate(bins):
                if used + size <= per[pool]:
                    bins[i] = (used + size, [*keys, key])
                    break
            else:
                bins.append((size, [key]))
        cls = pool[1].split(".", 1)[0]
        for j, (_, keys) in enumerate(b for b in bins if len(b[1]) > 1):
            for key in keys:
                out[key] = (pool[0], f"{cls}-shared-{j}")
    return out


def shared_class_of(
    ctx: ObjectContext, tmpl: PodTemplate, found: list[gpu.ContainerGpus]
) -> SharedClass | None:
    """The sharing class (replicas > 1) the device plugin gives this template's pods, if any."""
    spec = get_path(ctx.obj, tmpl.spec)
    for cg in found:
        for gr, _ in cg.wants:
            d = ctx.run.scope.decide(gr.name, spec if isinstance(spec, Mapping) else {})
            if d.manual is None and d.shared is not None and d.shared.replicas > 1:
                return d.shared
    return None


def convert(
    ctx: ObjectContext, templates: list[PodTemplate]
) -> tuple[bool, list[dict[str, Any]], list[dict[str, Any]]]:
    """Rewrite ``ctx.obj`` into groups sharing claims when the device plugin shared its GPUs.

    Returns (handled, new objects before, new objects after). ``handled`` False: not shared (or one pod only,
    or a DaemonSet): the ordinary per-pod claim template is right.
    """
    if ctx.options.sharing is not None or ctx.options.gpu_strategy != "claim-template":
        return False, [], []
    scans = []
    for t in templates:
        scan = gpu.scan_template(ctx, t)
        if scan is not None and scan[0] and not scan[1]:
            scans.append((t, scan[0]))
    shared = [(t, found, sc) for t, found in scans if (sc := shared_class_of(ctx, t, found)) is not None]
    if not shared:
        return False, [], []
    group, kind = api_group(ctx.ref.api_version), ctx.ref.kind
    packed = ctx.run.packed_claims.get((kind, namespaces.effective(ctx.ref.namespace), ctx.ref.name or ""))
    if kind == "DaemonSet" or (sum(t.replicas for t, _, _ in shared) <= 1 and packed is None):
        return False, [], []  # one pod per node / one pod: a claim per pod loses nothing within the workload
    tmpl, found, sc = shared[0]
    why = _not_splittable(ctx, group, kind, templates, found)
    pods = _one_group(ctx, group, kind, templates, found, sc) if why else None
    if pods is not None:  # all its pods fit in one group: they all share one claim, no split needed
        return True, _share_one_claim(ctx, tmpl, found, sc, pods), []
    if why:
        ctx.note(
            "manual",
            f"{sc.who} let {sc.replicas} pods share one GPU ({sc.resource}, {sc.strategy}); with DRA only pods "
            f"that reference one ResourceClaim share it, and {why}: split it by hand into groups of {sc.replicas} pods "
            f"sharing a ResourceClaim of class {sc.name}, or keep it on device-plugin nodes",
            tmpl.spec,
        )
        return True, [], []
    return True, *_split(ctx, tmpl, found, sc, packed)


def _not_splittable(
    ctx: ObjectContext, group: str, kind: str, templates: list[PodTemplate], found: list[gpu.ContainerGpus]
) -> str | None:
    if (group, kind) not in _SPLITTABLE:
        return f"a {kind}'s controller cannot point groups of its pods at different claims"
    if len(templates) != 1:
        return f"this {kind} has several pod templates"
    if ctx.run.autoscaled(kind, ctx.ref.namespace, ctx.ref.name):
        return "a HorizontalPodAutoscaler changes its replicas, so the groups cannot be fixed"
    if (
        as_int(get_path(ctx.obj, ("spec", "replicas"))) is None
        and get_path(ctx.obj, ("spec", "replicas")) is not None
    ):
        return "its replicas are not a number"
    wants = [(cg, gr, n) for cg in found for gr, n in cg.wants]
    if len(wants) != 1 or wants[0][2] != 1:
        return "its pods ask for more than one shared GPU unit"
    if not ctx.ref.name:
        return "it has no name"
    return None


# Controllers that keep a fixed number of pods of one template at a time (a Job: parallelism capped by completions;
# a StatefulSet: replicas): when they fit in one sharing group, every pod references one ResourceClaim.
_ONE_GROUP = {("batch", "Job"), ("apps", "StatefulSet")}


def _one_group(
    ctx: ObjectContext,
    group: str,
    kind: str,
    templates: list[PodTemplate],
    found: list[gpu.ContainerGpus],
    sc: SharedClass,
) -> int | None:
    """How many pods the workload runs at once, when all of them can share one claim of ``sc`` (else None)."""
    if (group, kind) not in _ONE_GROUP or len(templates) != 1 or not ctx.ref.name:
        return None
    if ctx.run.autoscaled(kind, ctx.ref.namespace, ctx.ref.name):
        return None
    wants = [n for cg in found for _, n in cg.wants]
    fields = ("parallelism", "completions") if kind == "Job" else ("replicas",)
    raw = [get_path(ctx.obj, ("spec", f)) for f in fields]
    if wants != [1] or any(v is not None and as_int(v) is None for v in raw):
        return None
    pods = templates[0].replicas
    return pods if 1 <= pods <= sc.replicas else None


def _share_one_claim(
    ctx: ObjectContext, tmpl: PodTemplate, found: list[gpu.ContainerGpus], sc: SharedClass, pods: int
) -> list[dict[str, Any]]:
    """One ResourceClaim of ``sc`` that every pod of the workload references."""
    ns = ctx.ref.namespace
    cname = ctx.run.name_for(ctx.obj, "ResourceClaim", ns, f"{ctx.ref.name}-gpu")
    meta: dict[str, Any] = {"name": cname, **({"namespace": ns} if ns else {})}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": sc.name}}]}},
    }
    pod_spec = get_path(ctx.obj, tmpl.spec)
    assert isinstance(pod_spec, MutableMapping)
    (cg,) = found
    container = pod_spec[cg.field][cg.index]
    gpu._remove_gpu_keys(container)
    gpu._add_claim_ref(container, "gpu", None)
    pod_spec["resourceClaims"] = to_ruamel(
        [*_other_claims(pod_spec), {"name": "gpu", "resourceClaimName": cname}]
    )
    ctx.note(
        "change",
        f"{count(pods, 'pod')} at a time, up to {sc.replicas} per GPU as {sc.who} allowed ({sc.resource} "
        f"{sc.strategy}) -> all share ResourceClaim {cname} of class {sc.name}",
        tmpl.spec,
    )
    ctx.note(
        "warning",
        f"the pods run on the node of their claim's GPU (as pods sharing one GPU did); {_gate(sc)}",
        tmpl.spec,
    )
    return [claim]


def _split(
    ctx: ObjectContext,
    tmpl: PodTemplate,
    found: list[gpu.ContainerGpus],
    sc: SharedClass,
    packed: tuple[str, str] | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    obj = ctx.obj
    name, ns = str(ctx.ref.name), ctx.ref.namespace
    total = as_int(get_path(obj, ("spec", "replicas")))
    total = 1 if total is None else max(total, 0)
    per = sc.replicas
    groups = max(ceil_div(total, per), 1)
    sizes = [min(per, total - k * per) for k in range(groups)] if total else [0]
    claims: list[dict[str, Any]] = []
    claim_names = []
    shared_with: list[str] = []
    for k in range(groups):
        if packed is not None and k == groups - 1 and sizes[k] < per:
            cname = packed[1]  # a partial group: shares its GPU with other workloads' partial groups
            claim_names.append(cname)
            shared_with.append(cname)
            if ctx.run.taken("ResourceClaim", ns, cname):
                continue  # written with the first workload of the group (or already in the input)
            ctx.run.reserve("ResourceClaim", ns, cname)
        else:
            cname = ctx.run.name_for(ctx.obj, "ResourceClaim", ns, f"{name}-gpu-{k}")
            claim_names.append(cname)
        meta: dict[str, Any] = {"name": cname}
        if ns:
            meta["namespace"] = ns
        claims.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": meta,
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": sc.name}}]}},
            }
        )
    # the original: first group, its selector unchanged (immutable)
    pod_spec = get_path(obj, tmpl.spec)
    assert isinstance(pod_spec, MutableMapping)
    (cg,) = found
    container = pod_spec[cg.field][cg.index]
    gpu._remove_gpu_keys(container)
    gpu._add_claim_ref(container, "gpu", None)
    pod_spec["resourceClaims"] = to_ruamel(
        [*_other_claims(pod_spec), {"name": "gpu", "resourceClaimName": claim_names[0]}]
    )
    _set_label(obj, tmpl, "0")
    obj["spec"]["replicas"] = sizes[0]
    after = []
    base = to_plain(obj)
    for k in range(1, groups):
        shard = copy.deepcopy(base)
        sname = ctx.run.name_for(ctx.obj, ctx.ref.kind, ns, f"{name}-share-{k}")
        meta = {
            key: v
            for key, v in shard.get("metadata", {}).items()
            if key in ("name", "namespace", "labels", "annotations")
        }
        meta["name"] = sname
        shard["metadata"] = meta
        shard["spec"]["replicas"] = sizes[k]
        sel = shard["spec"].setdefault("selector", {})
        if kind_uses_match_labels(ctx.ref.kind):
            sel.setdefault("matchLabels", {})[SHARE_LABEL] = str(k)
        else:  # ReplicationController: selector is a plain label map
            sel[SHARE_LABEL] = str(k)
        labels = get_path(shard, tmpl.metadata)
        if isinstance(labels, dict):
            labels.setdefault("labels", {})[SHARE_LABEL] = str(k)
        claims_of = get_path(shard, (*tmpl.spec, "resourceClaims"))
        for c in claims_of if isinstance(claims_of, list) else []:
            if c.get("name") == "gpu":
                c["resourceClaimName"] = claim_names[k]
        shard.pop("status", None)
        after.append(shard)
    ctx.note(
        "change",
        f"{total} pods, {per} per GPU as {sc.who}'s {sc.resource} {sc.strategy} config ({sc.data_key}) "
        f"allowed -> {count(groups, 'group')} of up to {per} pods, each sharing one ResourceClaim of class {sc.name} "
        f"({', '.join(claim_names)})",
        tmpl.spec,
    )
    if shared_with:
        ctx.note(
            "change",
            f"its last {count(sizes[-1], 'pod')} share ResourceClaim {shared_with[0]} with other workloads' remaining pods "
            f"(the device plugin filled a GPU with pods of several workloads too)",
            tmpl.spec,
        )
    if groups > 1:
        ctx.note(
            "warning",
            f"{ctx.ref.kind} split: this object keeps {sizes[0]} pods; {', '.join(str(s['metadata']['name']) for s in after)} "
            f"hold the others (label {SHARE_LABEL}); scale by adding or removing groups, and point tools that name "
            "the original at all of them",
            ("spec", "replicas"),
        )
    ctx.note(
        "warning",
        f"the pods of one group run on the node of their claim's GPU (as pods sharing one GPU did); {_gate(sc)}",
        tmpl.spec,
    )
    return claims, after


def _gate(sc: SharedClass) -> str:
    vendor = vendors.for_resource(sc.resource)
    assert vendor is not None  # a sharing class is made by the vendor whose resource it shares
    return f"the {vendor.title} DRA driver needs its {vendor.sharing_gate(sc.strategy)} feature gate for the sharing config"


def kind_uses_match_labels(kind: str) -> bool:
    return kind != "ReplicationController"


def _other_claims(pod_spec: Mapping[str, Any]) -> list[Any]:
    claims = pod_spec.get("resourceClaims")
    return [
        c
        for c in (claims if isinstance(claims, list) else [])
        if not (isinstance(c, Mapping) and c.get("name") == "gpu")
    ]


def _set_label(obj: MutableMapping[str, Any], tmpl: PodTemplate, value: str) -> None:
    meta = get_path(obj, tmpl.metadata)
    if not isinstance(meta, MutableMapping):
        parent = get_path(obj, tmpl.metadata[:-1])
        if not isinstance(parent, MutableMapping):
            return
        parent["metadata"] = to_ruamel({})
        meta = parent["metadata"]
    labels = meta.get("labels")
    if not isinstance(labels, MutableMapping):
        meta["labels"] = to_ruamel({})
        labels = meta["labels"]
    labels[SHARE_LABEL] = value
