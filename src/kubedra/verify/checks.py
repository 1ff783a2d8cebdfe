"""Post-wave checks on one cluster state (a live capture or a snapshot), optionally against a baseline.

Each check returns a :class:`Check` with ``pass``/``warn``/``fail`` and one message per problem, naming the
object. What "healthy" means follows the API:

- ``claims``: a ResourceClaim used by a live pod must have ``status.allocation`` and be in
  ``status.reservedFor`` for that pod; a claim nobody uses yet may stay unallocated (warn only).
- ``claim-pods``: pods with ``spec.resourceClaims`` are Running (or Succeeded) and Ready.
- ``driver``: the DRA driver's kubelet-plugin pods (DaemonSet pods of a DRA driver) are Ready, one per GPU node
  on DRA.
- ``slices``: every GPU node on DRA publishes a complete pool (``resourceSliceCount`` slices of the newest
  generation) whose GPUs match what its vendor's feature discovery labels say (NVIDIA's GFD:
  ``nvidia.com/gpu.count`` and ``nvidia.com/gpu.product``; AMD's node labeller: the product, no count), each
  vendor's devices read by the vendor (:meth:`kubedra.vendors.Vendor.published_gpu`).
- ``events``: no DRA error events (FailedPrepareDynamicResources, FailedScheduling about claims...) in the window.
- ``health``: no pod holds a device with a NoExecute taint it does not tolerate (slice taints and
  DeviceTaintRules, see :mod:`kubedra.verify.taints`; other taints warn), no claim device condition is
  False, no container reports an Unhealthy allocated resource (``allocatedResourcesStatus``).
- ``baseline``: no GPU workload lost (fewer Running GPU pods per owner than in the baseline), none stuck Pending.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.allocator.selectors import required_drivers
from kubedra.model.snapshot import Snapshot
from kubedra.text import count
from kubedra.verify.gpupods import meta as _meta
from kubedra.verify.gpupods import reading_release, uses_gpu
from kubedra.verify.gpupods import ref as _ref
from kubedra.verify.taints import judge as taint_findings

PASS, WARN, FAIL = "pass", "warn", "fail"
# a check that had nothing to look at (no object of its kind, no --baseline): never a pass over nothing
NOTHING = "nothing-to-check"
# kubedra's own label for a node on DRA (plan's waves set it); each vendor adds its kubelet plugin's node selector
STACK_LABEL = ("kubedra.io/gpu-stack", "dra")
ERROR_REASONS = frozenset(
    {"FailedPrepareDynamicResources", "FailedUnprepareDynamicResources", "FailedResourceClaimCreation"}
)
_CLAIM_WORDS = re.compile(r"resourceclaim|resource claim|claim|cannot allocate|dynamic resource", re.I)
_PLUGIN = re.compile(r"kubelet-plugin|dra-driver|dra-kubelet", re.I)
# every kind the checks (and verify.counts) read of a snapshot: a large one keeps no other (model.snapshot.load)
KINDS = ("Pod", "ResourceClaim", "ResourceSlice", "Node", "DeviceClass", "Event", "DeviceTaintRule")
# what the checks read of a Pod (most of a cluster's objects): a large snapshot keeps no more of each (slim_pod)
_POD_META = (
    "name",
    "namespace",
    "uid",
    "labels",
    "ownerReferences",
    "creationTimestamp",
    "deletionTimestamp",
)
_POD_SPEC = ("nodeName", "resourceClaims")
_POD_STATUS = ("phase", "conditions", "resourceClaimStatuses")


@dataclass
class Check:
    id: str
    title: str
    status: str = PASS
    messages: list[str] = field(default_factory=list)
    checked: int = 0

    def fail(self, msg: str) -> None:
        self.status = FAIL
        self.messages.append(msg)

    def warn(self, msg: str) -> None:
        if self.status == PASS:
            self.status = WARN
        self.messages.append(msg)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "checked": self.checked,
            "messages": self.messages,
        }


def parse_time(text: Any) -> dt.datetime | None:
    if not text or not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ready(pod: dict[str, Any]) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def slim_pod(obj: dict[str, Any]) -> dict[str, Any]:
    """A Pod as the checks read it (other kinds whole): name, owners, labels and times; node, claims and each
    container's image and resources; phase, conditions, claim statuses and each container's state and allocated
    resource health. Applied to a modelled object (its shapes are checked)."""
    if obj.get("kind") != "Pod":
        return obj
    out: dict[str, Any] = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    meta, spec, status = (_d(obj.get(k)) for k in ("metadata", "spec", "status"))
    out["metadata"] = {k: meta[k] for k in _POD_META if k in meta}
    out["spec"] = {k: spec[k] for k in _POD_SPEC if k in spec}
    if "containers" in spec:
        out["spec"]["containers"] = [_keep(c, ("image", "resources")) for c in spec["containers"] or []]
    out["status"] = {k: status[k] for k in _POD_STATUS if k in status}
    if "containerStatuses" in status:
        statuses = status["containerStatuses"] or []
        out["status"]["containerStatuses"] = [
            _keep(c, ("name", "state", "allocatedResourcesStatus")) for c in statuses
        ]
    return out


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _keep(v: Any, keys: tuple[str, ...]) -> Any:
    return {k: v[k] for k in keys if k in v} if isinstance(v, dict) else v


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _terminated(pod: dict[str, Any]) -> bool:
    return _phase(pod) in ("Succeeded", "Failed") or bool(_meta(pod).get("deletionTimestamp"))


def _pod_claim_names(pod: dict[str, Any]) -> list[str]:
    """Names of the ResourceClaims a pod uses (status.resourceClaimStatuses for template claims)."""
    out = []
    statuses = {
        s.get("name"): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
    }
    for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
        if rc.get("resourceClaimName"):
            out.append(str(rc["resourceClaimName"]))
        elif statuses.get(rc.get("name")):
            out.append(str(statuses[rc.get("name")]))
    return out


def check_claims(state: Snapshot) -> Check:
    chk = Check("claims", "ResourceClaims allocated and reserved")
    pods = [p for p in state.kind("Pod") if not _terminated(p)]
    users: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for p in pods:
        ns = str(_meta(p).get("namespace") or "")
        for name in _pod_claim_names(p):
            users[(ns, name)].append(p)
        # template claims not created yet
        statuses = {s.get("name") for s in (p.get("status") or {}).get("resourceClaimStatuses") or []}
        for rc in (p.get("spec") or {}).get("resourceClaims") or []:
            if rc.get("resourceClaimTemplateName") and rc.get("name") not in statuses:
                chk.fail(
                    f"{_ref(p)}: the claim for {rc.get('name')!r} (template {rc['resourceClaimTemplateName']}) "
                    "has not been created"
                )
    for claim in state.kind("ResourceClaim"):
        chk.checked += 1
        m = _meta(claim)
        key = (str(m.get("namespace") or ""), str(m.get("name") or ""))
        status = claim.get("status") or {}
        reserved = {str(r.get("uid") or r.get("name")) for r in status.get("reservedFor") or []}
        reserved_names = {str(r.get("name")) for r in status.get("reservedFor") or []}
        who = users.get(key, [])
        if not status.get("allocation"):
            if who:
                chk.fail(f"{_ref(claim)} is not allocated, but {_ref(who[0])} needs it")
            else:
                chk.warn(f"{_ref(claim)} is not allocated (no running pod uses it yet)")
            continue
        for p in who:
            pm = _meta(p)
            if str(pm.get("uid")) not in reserved and str(pm.get("name")) not in reserved_names:
                if (p.get("spec") or {}).get("nodeName"):
                    chk.fail(f"{_ref(claim)} is allocated but not reserved for {_ref(p)}")
                else:
                    chk.warn(f"{_ref(claim)} is allocated; {_ref(p)} is not bound yet")
        if not who and not reserved:
            chk.warn(f"{_ref(claim)} is allocated but reserved for no pod")
    return chk


def check_claim_pods(state: Snapshot) -> Check:
    chk = Check("claim-pods", "Pods using claims are Running and Ready")
    for p in state.kind("Pod"):
        if not (p.get("spec") or {}).get("resourceClaims"):
            continue
        chk.checked += 1
        phase = _phase(p)
        if phase == "Succeeded":
            continue
        if phase != "Running":
            reason = ""
            for c in (p.get("status") or {}).get("conditions") or []:
                if c.get("type") == "PodScheduled" and c.get("status") == "False":
                    reason = f": {c.get('reason', '')} {c.get('message', '')}".rstrip()
            chk.fail(f"{_ref(p)} is {phase}{reason}")
        elif not _ready(p):
            chk.fail(f"{_ref(p)} is Running but not Ready")
    return chk


def _owner_refs(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The ownerReferences that are references (an edited snapshot may hold a list or a string there)."""
    refs = meta.get("ownerReferences")
    return [o for o in refs if isinstance(o, dict)] if isinstance(refs, list) else []


def _is_plugin_pod(p: dict[str, Any]) -> bool:
    m = _meta(p)
    owners = [o for o in _owner_refs(m) if o.get("kind") == "DaemonSet"]
    if not owners:
        return False
    text = " ".join(
        [
            str(m.get("name") or ""),
            str(owners[0].get("name") or ""),
            " ".join(str(v) for v in (m.get("labels") or {}).values()),
        ]
        + [str(c.get("image") or "") for c in (p.get("spec") or {}).get("containers") or []]
    )
    return bool(_PLUGIN.search(text))


def _driver_preflight(chk: Check, plugin_pods: list[dict[str, Any]], server_version: str) -> None:
    """The driver release of the kubelet-plugin pods (image tag) against the cluster's Kubernetes version
    (each vendor's ``driver_preflight``); problems warn."""
    m = re.match(r"v?1\.(\d+)", server_version or "")
    images = {
        str(c.get("image") or "") for p in plugin_pods for c in (p.get("spec") or {}).get("containers") or []
    }
    found = {(v.name, tag) for v in vendors.all() for i in images if (tag := v.driver_image_release(i))}
    if not m:
        return
    for vendor, tag in sorted(found):
        for problem in vendors.get(vendor).driver_preflight(tag, int(m.group(1))):
            chk.warn(problem)


def _dra_labels() -> tuple[tuple[str, str], ...]:
    return (STACK_LABEL, *(pair for v in vendors.all() for pair in v.dra_node_labels()))


def _on_dra(node: dict[str, Any], slice_nodes: set[str], dra_labels: tuple[tuple[str, str], ...]) -> bool:
    labels = _meta(node).get("labels") or {}
    return _meta(node).get("name") in slice_nodes or any(labels.get(k) == v for k, v in dra_labels)


def _gpu_slices(state: Snapshot) -> dict[str, list[dict[str, Any]]]:
    """Per node, the ResourceSlices of every registered vendor's GPU driver."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in state.kind("ResourceSlice"):
        sp = s.get("spec") or {}
        if sp.get("nodeName") and vendors.for_driver(str(sp.get("driver"))) is not None:
            out[str(sp["nodeName"])].append(s)
    return out


def check_driver(state: Snapshot, release: str | None = None) -> Check:
    chk = Check("driver", "DRA driver kubelet-plugin pods Ready")
    plugin_pods = [p for p in state.kind("Pod") if _is_plugin_pod(p)]
    by_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in plugin_pods:
        chk.checked += 1
        by_node[str((p.get("spec") or {}).get("nodeName") or "")].append(p)
        if not _ready(p):
            phase = _phase(p)
            waiting = [
                (cs.get("state") or {}).get("waiting", {}).get("reason")
                for cs in (p.get("status") or {}).get("containerStatuses") or []
                if (cs.get("state") or {}).get("waiting")
            ]
            chk.fail(
                f"{_ref(p)} on node {(p.get('spec') or {}).get('nodeName') or '?'} is not Ready ({phase}"
                + (f", {', '.join(w for w in waiting if w)}" if any(waiting) else "")
                + "): its node publishes no usable GPUs"
            )
    _driver_preflight(chk, plugin_pods, state.header.server_version if release is None else release)
    slice_nodes = set(_gpu_slices(state))
    dra_labels = _dra_labels()
    dra_nodes = [n for n in state.kind("Node") if _on_dra(n, slice_nodes, dra_labels)]
    if dra_nodes and not plugin_pods:
        chk.warn(
            f"{count(len(dra_nodes), 'GPU node')} on DRA but no DRA driver kubelet-plugin pod was found "
            "(not captured, or the driver runs outside Kubernetes)"
        )
    elif plugin_pods:
        for n in dra_nodes:
            name = str(_meta(n).get("name"))
            if name not in by_node:
                chk.fail(f"GPU node {name} is on DRA but runs no DRA driver kubelet-plugin pod")
    return chk


def unpublished_drivers(classes: list[tuple[str, list[str]]], published: set[str]) -> list[str]:
    """Hints for DeviceClasses (name, CEL selectors) that pin a driver no ResourceSlice publishes."""
    out = []
    for name, selectors in classes:
        for driver in sorted(required_drivers(selectors) - published):
            out.append(
                f"DeviceClass {name} selects driver {driver}, but no ResourceSlice publishes it: the driver is not "
                "installed, not running, or its kubelet plugin runs on no node yet"
            )
    return out


def _class_selectors(c: dict[str, Any]) -> list[str]:
    return [
        str((s.get("cel") or {}).get("expression") or "")
        for s in (c.get("spec") or {}).get("selectors") or []
        if isinstance(s, dict)
    ]


def check_slices(state: Snapshot) -> Check:
    chk = Check("slices", "GPU nodes publish ResourceSlices matching their GPUs")
    published = {str((s.get("spec") or {}).get("driver")) for s in state.kind("ResourceSlice")}
    classes = [(str(_meta(c).get("name")), _class_selectors(c)) for c in state.kind("DeviceClass")]
    for hint in unpublished_drivers(classes, published):
        chk.warn(hint)
    slices = _gpu_slices(state)
    slice_nodes = set(slices)  # once, not per node: quadratic (38 s of 123 s CPU at 20,000 nodes)
    dra_labels = _dra_labels()
    for node in state.kind("Node"):
        name = str(_meta(node).get("name"))
        if not _on_dra(node, slice_nodes, dra_labels):
            continue
        labels = {str(k): str(v) for k, v in (_meta(node).get("labels") or {}).items() if v is not None}
        chk.checked += 1
        mine = slices.get(name, [])
        vendor = vendors.for_driver(str((mine[0].get("spec") or {}).get("driver"))) if mine else None
        vendor = vendor or vendors.for_node(labels)
        if not mine:
            drivers = [vendor.driver] if vendor else [v.driver for v in vendors.all()]
            chk.fail(f"Node {name} is on DRA but publishes no {' or '.join(drivers)} ResourceSlice")
            continue
        assert vendor is not None  # its slices' driver is a registered vendor's (_gpu_slices)
        newest = max(int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) for s in mine)
        current = [
            s for s in mine if int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0) == newest
        ]
        want = int(((current[0].get("spec") or {}).get("pool") or {}).get("resourceSliceCount") or 1)
        if len(current) != want:
            chk.fail(
                f"Node {name}: pool {name} generation {newest} is incomplete ({len(current)} of {want} slices): "
                "the scheduler ignores an incomplete pool"
            )
        _compare_labels(chk, vendor, name, labels, current)
    return chk


def _compare_labels(
    chk: Check, vendor: vendors.Vendor, name: str, labels: dict[str, str], current: list[dict[str, Any]]
) -> None:
    """A DRA node's published GPUs and products against what its vendor's feature discovery labels say."""
    gpus: set[str] = set()
    products: set[str] = set()
    for s in current:
        for d in (s.get("spec") or {}).get("devices") or []:
            if not isinstance(d, dict) or (found := vendor.published_gpu(d)) is None:
                continue
            gpus.add(found[0])
            if found[1]:
                products.add(found[1])
    # NVIDIA: under GFD's single MIG strategy nvidia.com/gpu.count counts MIG devices; the vendor says what it read
    labelled, source = vendor.labelled_gpus(labels)
    if isinstance(labelled, int) and labelled != len(gpus):
        chk.fail(f"Node {name}: labels say {labelled} GPUs ({source}), its slices publish {len(gpus)}")
    elif isinstance(labelled, str):
        chk.warn(f"Node {name}: its GPU count cannot be compared with its labels: {labelled}")
    key = vendor.labels.product
    product = labels.get(key) if key else None
    if product and products:
        base = vendor.labelled_product(product)
        if base is None:
            chk.warn(
                f"Node {name}: label {key}={product} is no {vendor.title} GPU kubedra can relate to the driver's "
                f"productName ({', '.join(sorted(products))}): its product is not compared"
            )
        elif products != {base}:
            chk.fail(f"Node {name}: label {key}={product}, slices say {', '.join(sorted(products))}")
    if labelled is None and not product:
        chk.warn(f"Node {name}: no {vendor.labeller} labels to compare its {len(gpus)} GPUs with")


def _event_time(e: dict[str, Any]) -> dt.datetime | None:
    series = e.get("series") or {}
    for t in (
        series.get("lastObservedTime"),
        e.get("lastTimestamp"),
        e.get("eventTime"),
        _meta(e).get("creationTimestamp"),
    ):
        parsed = parse_time(t)
        if parsed is not None:
            return parsed
    return None


def check_events(state: Snapshot, now: dt.datetime, since: dt.timedelta) -> Check:
    mins = int(since.total_seconds() // 60)
    chk = Check("events", f"No DRA error events in the last {mins} min")
    for e in state.kind("Event"):
        reason = str(e.get("reason") or "")
        msg = str(e.get("message") or e.get("note") or "")
        if reason not in ERROR_REASONS and not (reason == "FailedScheduling" and _CLAIM_WORDS.search(msg)):
            continue
        t = _event_time(e)
        if t is not None and now - t > since:
            continue
        chk.checked += 1
        obj = e.get("involvedObject") or e.get("regarding") or {}
        ns = f"{obj['namespace']}/" if obj.get("namespace") else ""
        where = f"{obj.get('kind', '')} {ns}{obj.get('name', '')}"
        times = e.get("count") or (e.get("series") or {}).get("count") or 1
        chk.fail(f"{reason} on {where.strip()} ({times}x): {msg[:300]}")
    return chk


def _bound_claim_users(state: Snapshot) -> dict[tuple[str, str], list[str]]:
    """(namespace, claim) → the bound, live pods using it and in its ``reservedFor`` (the pods the eviction
    controller would delete)."""
    reserved: dict[tuple[str, str], set[str]] = {}
    for c in state.kind("ResourceClaim"):
        m = _meta(c)
        reserved[(str(m.get("namespace") or ""), str(m.get("name") or ""))] = {
            str(r.get("uid") or r.get("name"))
            for r in (c.get("status") or {}).get("reservedFor") or []
            if isinstance(r, dict)
        }
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for p in state.kind("Pod"):
        if _terminated(p) or not (p.get("spec") or {}).get("nodeName"):
            continue
        m = _meta(p)
        ns = str(m.get("namespace") or "")
        for name in _pod_claim_names(p):
            if {str(m.get("uid")), str(m.get("name"))} & reserved.get((ns, name), set()):
                out[(ns, name)].append(_ref(p))
    return out


def check_health(state: Snapshot, release: str | None = None) -> Check:
    chk = Check("health", "Device taints and health")
    findings, chk.checked = taint_findings(
        state.kind("ResourceSlice"),
        state.kind("DeviceTaintRule"),
        state.kind("ResourceClaim"),
        _bound_claim_users(state),
        state.header.server_version if release is None else release,
        state.header.feature_gates,
    )
    for f in findings:
        (chk.fail if f.severity == FAIL else chk.warn)(f.message)
    for claim in state.kind("ResourceClaim"):
        status = claim.get("status") or {}
        for dev in status.get("devices") or []:
            for c in dev.get("conditions") or []:
                if c.get("status") == "False":
                    chk.fail(
                        f"{_ref(claim)}: device {dev.get('device')} condition {c.get('type')} is False"
                        + (f" ({c.get('reason')}: {c.get('message', '')})" if c.get("reason") else "")
                    )
    for p in state.kind("Pod"):
        for cs in (p.get("status") or {}).get("containerStatuses") or []:
            for ar in cs.get("allocatedResourcesStatus") or []:
                for res in ar.get("resources") or []:
                    if res.get("health") == "Unhealthy":
                        chk.fail(
                            f"{_ref(p)} container {cs.get('name')}: {ar.get('name')} device {res.get('resourceID')} is Unhealthy"
                        )
    return chk


def workload_key(pod: dict[str, Any]) -> str:
    """The GPU workload a pod belongs to: its controller (a ReplicaSet counts as its Deployment), else itself."""
    m = _meta(pod)
    ns = str(m.get("namespace") or "")
    refs = _owner_refs(m)
    for o in refs:
        if o.get("controller") or len(refs) == 1:
            kind, name = str(o.get("kind")), str(o.get("name"))
            if kind == "ReplicaSet":
                hash_ = (m.get("labels") or {}).get("pod-template-hash")
                if hash_ and name.endswith("-" + hash_):
                    kind, name = "Deployment", name[: -len(hash_) - 1]
                elif "-" in name:
                    kind, name = "Deployment", name.rsplit("-", 1)[0]
            return f"{kind} {ns}/{name}"
    return f"Pod {ns}/{m.get('name', '')}"


def gpu_running(state: Snapshot, release: str) -> Counter[str]:
    """Running GPU pods per workload, their requests read as ``release`` reads them; a terminating pod
    (deletionTimestamp set) is already lost."""
    return Counter(
        workload_key(p)
        for p in state.kind("Pod")
        if uses_gpu(p, release) and _phase(p) == "Running" and not _meta(p).get("deletionTimestamp")
    )


def check_baseline(
    state: Snapshot,
    baseline: Snapshot | None,
    now: dt.datetime,
    pending_grace: dt.timedelta,
    release: str | None = None,  # --target-version; None: each snapshot's own server version
) -> Check:
    chk = Check("baseline", "GPU workloads: none lost, none stuck Pending")
    reading, assumed = reading_release(state, release)
    if assumed:
        chk.warn(assumed)
    for p in state.kind("Pod"):
        if not uses_gpu(p, reading) or _phase(p) != "Pending":
            continue
        created = parse_time(_meta(p).get("creationTimestamp"))
        age = now - created if created else None
        chk.checked += 1
        if age is None or age > pending_grace:
            chk.fail(
                f"GPU pod {_ref(p).split(' ', 1)[1]} is Pending"
                + (f" for {int(age.total_seconds() // 60)} min" if age else "")
            )
        else:
            chk.warn(
                f"GPU pod {_ref(p).split(' ', 1)[1]} is Pending (created {int(age.total_seconds())} s ago)"
            )
    if baseline is None:
        return chk
    before_reading, before_assumed = reading_release(baseline, release)
    if before_assumed:
        chk.warn(f"baseline: {before_assumed}")
    before = gpu_running(baseline, before_reading)
    after = gpu_running(state, reading)
    for key, n in sorted(before.items()):
        chk.checked += 1
        if after.get(key, 0) < n:
            chk.fail(f"{key}: {count(n, 'GPU pod')} Running in the baseline, {after.get(key, 0)} now")
    return chk


def run_checks(
    state: Snapshot,
    *,
    baseline: Snapshot | None = None,
    now: dt.datetime,
    since: dt.timedelta,
    pending_grace: dt.timedelta = dt.timedelta(minutes=5),
    release: str | None = None,  # --target-version; None: the cluster's own (the snapshot header)
) -> list[Check]:
    checks = [
        check_claims(state),
        check_claim_pods(state),
        check_driver(state, release),
        check_slices(state),
        check_events(state, now, since),
        check_health(state, release),
        check_baseline(state, baseline, now, pending_grace, release),
    ]
    for c in checks:
        if c.status == PASS and not c.checked:
            c.status = NOTHING
    return checks


def summary(checks: Iterable[Check]) -> dict[str, int]:
    c = Counter(ch.status for ch in checks)
    counts = {"passed": PASS, "warnings": WARN, "failed": FAIL, "nothingToCheck": NOTHING}
    return {k: c.get(v, 0) for k, v in counts.items()}
