"""What the plan needs to know about one cluster, read from its snapshot.

- GPU nodes of every registered vendor (:mod:`kubedra.vendors`), each in a node pool (the fleet's pools, else the
  first pool label found) and on a stack: the device plugin, or DRA already (a ResourceSlice of its vendor's
  driver and no extended resources of its vendor's, or the ``kubedra.io/gpu-stack=dra`` label). A node of a
  vendor the plan has no steps for (:meth:`kubedra.vendors.Vendor.unsupported` ``plan``: AMD) is left out of the
  waves and named, with the reason.
- Physical GPUs per node before (device plugin) and after (DRA), from the simulator's two views of the cluster
  (:func:`kubedra.simulate.cluster.build_cluster`: a DRA view is derived from GPU Feature Discovery labels
  through the NVIDIA catalogue when the cluster has no slices yet).
- GPU demand per pool: whole-GPU equivalents requested by the pods bound there (as each vendor counts one unit:
  :meth:`kubedra.vendors.Vendor.gpu_fraction`, NVIDIA's MIG profile ``<g>g`` g/7), plus workloads without pods
  (replicas x GPUs per pod) pinned to the pool by nodeSelector.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from kubedra import vendors
from kubedra.errors import KubedraError
from kubedra.model import snapshot as snapfmt
from kubedra.model.inventory import Inventory
from kubedra.model.snapshot import Snapshot
from kubedra.plan.fleet import ClusterSpec
from kubedra.simulate.cluster import DP, DRA, Cluster, ClusterOptions, build_cluster
from kubedra.vendors.gpurequest import admitted_counts, device_count

# the labels that name a node's pool when the fleet names none, first found wins; then each vendor's product label
POOL_LABELS = (
    "kubedra.io/node-pool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "kops.k8s.io/instancegroup",
    "node.kubernetes.io/instance-type",
)
STACK_LABEL = "kubedra.io/gpu-stack"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job", "ReplicaSet")
# the kinds whose model the capacity check reads (:func:`_capacity`: ``build_cluster`` of a snapshot reads its
# nodes, slices, device classes, taint rules and claims): the model of no other kind is kept
CAPACITY_KINDS = ("Node", "ResourceSlice", "DeviceClass", "DeviceTaintRule", "ResourceClaim")


@dataclass
class GpuNode:
    name: str
    pool: str
    labels: dict[str, str]
    gpus_before: int
    gpus_after: int
    stack: str  # "device-plugin" | "dra"
    model: str = ""


@dataclass(frozen=True)
class UnsupportedNode:
    """A GPU node of a vendor the plan has no steps for: no wave moves it."""

    name: str
    vendor: str  # the vendor's title: AMD
    reason: str  # Vendor.unsupported("plan")


@dataclass
class PoolState:
    name: str
    selector: dict[str, str]
    nodes: list[GpuNode] = field(default_factory=list)
    demand: float = 0.0  # GPUs in use (whole-GPU equivalents)
    pods: int = 0  # GPU pods counted in demand
    pending: int = 0  # GPU pods pending
    workloads: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, namespace, name) pinned here

    @property
    def gpus_before(self) -> int:
        return sum(n.gpus_before for n in self.nodes)

    @property
    def gpus_after(self) -> int:
        return sum(n.gpus_after for n in self.nodes)

    @property
    def models(self) -> list[str]:
        return sorted({n.model for n in self.nodes if n.model})


@dataclass
class ClusterState:
    spec: ClusterSpec
    snapshot: Snapshot
    pools: list[PoolState] = field(default_factory=list)
    version: str = ""
    has_workloads: bool = False
    unplaced_demand: float = 0.0  # GPU workloads not tied to a pool
    device_plugin: tuple[str, str] | None = None  # (namespace, DaemonSet name)
    gpu_operator: bool = False
    dra_driver: bool = False
    cluster_policy: str | None = None  # name of the GPU Operator's ClusterPolicy
    gpu_cluster: str | None = None  # name of the GPU Operator's GPUCluster (26.7+: it deploys the DRA driver)
    dra_driver_daemonset: tuple[str, str] | None = None  # (namespace, name) of the kubelet plugin seen
    gpu_workloads: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (kind, namespace, name), any pool
    notes: list[str] = field(default_factory=list)
    # GPU nodes in none of the fleet's node pools: no wave moves them (the plan does not cover the fleet)
    unplanned: list[str] = field(default_factory=list)
    # GPU nodes of a vendor the plan has no steps for (Vendor.unsupported("plan")): no wave moves them either
    unsupported: list[UnsupportedNode] = field(default_factory=list)

    @property
    def gpu_nodes(self) -> list[GpuNode]:
        return [n for p in self.pools for n in p.nodes]


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((obj.get("metadata") or {}).get("labels") or {}).items()}


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


@functools.cache
def _pool_labels() -> tuple[str, ...]:
    return POOL_LABELS + tuple(v.labels.product for v in vendors.all() if v.labels.product)


def _gpu_resources(obj: dict[str, Any], release: str) -> dict[str, int]:
    """The node's allocatable extended resources of any vendor's device plugin (by its resource domain), counted
    as ``release``'s kube-scheduler counts them."""
    alloc = _fields(_fields(obj.get("status")).get("allocatable"))
    out = {}
    for k, v in alloc.items():
        n = device_count(v, release)  # read as every verb reads a GPU count (kubedra.vendors.gpurequest)
        if n is not None and vendors.for_resource(str(k)) is not None:
            out[str(k)] = n
    return out


def _fraction(resource: str) -> Fraction | None:
    vendor = vendors.for_resource(resource)
    return vendor.gpu_fraction(resource) if vendor is not None else None


def gpu_equivalents(counts: dict[str, int]) -> float:
    """Whole-GPU equivalents of device counts, one unit as its vendor counts it (NVIDIA: a MIG profile ``<g>g``
    counts g/7); a resource that is no vendor's GPU counts nothing."""
    total = 0.0
    for k, n in counts.items():
        f = _fraction(k)
        if f is not None:
            total += n * f  # exact, then one rounding: (n * g) / 7 as a float, whatever the vendor
    return total


def _fields(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _items(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _pod_gpus(
    spec: dict[str, Any],
    claims: dict[tuple[str, str], int],
    namespace: str,
    release: str,
    seen: dict[int, float | str] | None = None,
) -> float | str:
    """Whole-GPU equivalents a pod spec holds, or why the apiserver refuses it (then it holds none): its GPU
    requests read as every verb reads them at ``release`` (:func:`kubedra.vendors.gpurequest.admitted_counts`;
    plan reads them at the target release, as its capacity views do). ``seen``: what
    each containers list already read holds, by its id (the lists must stay alive while it is used: the pods
    of a workload share one, :func:`kubedra.sources.jsonstream.shared_tree`)."""
    containers = spec.get("containers")
    if seen is None or type(containers) is not list:
        total = _containers_gpus(containers, release)
    else:
        hit = seen.get(id(containers))
        total = seen[id(containers)] = _containers_gpus(containers, release) if hit is None else hit
    if isinstance(total, str):
        return total
    for rc in _items(spec.get("resourceClaims")):
        name = rc.get("resourceClaimName") if isinstance(rc, dict) else None
        total += claims.get((namespace, str(name)), 1) if name else 1
    return total


def _containers_gpus(containers: Any, release: str) -> float | str:
    """:func:`_pod_gpus` of the containers alone (the sum starts there, so adding the claims after it is the same
    arithmetic)."""
    total = 0.0
    # a snapshot an API server wrote has these types; an edited one may not: a value of another type holds no GPU
    for c in _items(containers):
        counts = admitted_counts(c.get("resources"), release) if isinstance(c, dict) else {}
        refused = sorted(k for k, n in counts.items() if n is None and _fraction(k) is not None)
        if refused:
            return (
                f"the apiserver refuses its {refused[0]} (only requested, requests unequal to limits, or not a "
                "whole number), so it never runs and holds no GPU"
            )
        total += gpu_equivalents({k: n for k, n in counts.items() if n})
    return total


def _capacity(snap: Snapshot, target: str, notes: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """(device-plugin GPUs per node, DRA GPUs per node) from the simulator's two cluster views."""

    try:
        opts = ClusterOptions(target_version=target)
        inv = snapfmt.inventory(snap)
        cluster = build_cluster(inv, opts)
        dp = cluster.views[DP].physical_gpus() if DP in cluster.views else {}
        dra = cluster.views[DRA].physical_gpus() if DRA in cluster.views else {}
        notes.extend(n for n in cluster.notes if "derived" in n)
        again = inv.slices and not _derived_all(cluster, inv)
        del cluster  # its views are not needed beside the derived ones
        if again:
            # nodes still on the device plugin have no slices yet: derive theirs from their GFD labels (the
            # same model without its slices, not the documents modelled again)
            try:
                derived = build_cluster(replace(inv, slices=[]), opts)
            except (KubedraError, ImportError, KeyError, AttributeError) as e:
                # the first build's figures stand (a cluster whose every node is on DRA has nothing to derive);
                # only the plugin nodes without slices lack a DRA figure, and the note says so
                missing = sorted(set(dp) - set(dra))
                if missing:
                    notes.append(
                        f"DRA capacity of {len(missing)} device-plugin node(s) without ResourceSlices (first: "
                        f"{missing[0]}) not derived from their labels: {e}"
                    )
            else:
                if DRA in derived.views:
                    for node, n in derived.views[DRA].physical_gpus().items():
                        dra.setdefault(node, n)
        return dp, dra
    except (KubedraError, ImportError, KeyError, AttributeError) as e:
        notes.append(f"capacity from node labels only (simulator view unavailable: {e})")
        return {}, {}


def _derived_all(cluster: Cluster, inv: Inventory) -> bool:
    """Whether the view built with the slices derived every node the view without them would (the second
    build in :func:`_capacity` then adds no node and fails in no way the first did not): no node on the device
    plugin has slices too (the nodes derived from labels are the same, alike in both builds, and the first's
    derived devices, counted after the real ones, are its own), the derived objects held ResourceSlices
    (without them the second build has none and fails), and the snapshot has Nodes (without them the second
    build has no node)."""
    view = cluster.views.get(DRA)
    return bool(view is not None and not cluster.dual and inv.nodes and len(view.slices) > len(inv.slices))


def _pool_of(labels: dict[str, str], spec: ClusterSpec) -> tuple[str, dict[str, str]] | None:
    for p in spec.pools:
        if p.matches(labels):
            return p.name, dict(p.selector)
    if spec.pools:
        return None
    for key in _pool_labels():
        if key in labels:
            return labels[key], {key: labels[key]}
    return "default", {}


def analyse(spec: ClusterSpec, snap: Snapshot, target: str) -> ClusterState:
    """One cluster of the fleet: its GPU nodes by pool, the GPU demand placed on each pool, its GPU stack."""
    state = ClusterState(spec=spec, snapshot=snap)
    state.version = spec.current_version or snap.header.server_version
    node_pool = _gpu_nodes(state, spec, snap, target)
    claims: dict[tuple[str, str], int] = {}
    for c in snap.kind("ResourceClaim"):
        meta = c.get("metadata") or {}
        results = (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get(
            "results"
        ) or []
        claims[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = max(1, len(results))
    owners_with_pods = _pod_demand(state, snap, claims, node_pool, target)
    _workload_demand(state, snap, claims, owners_with_pods, target)
    _gpu_stack(state, snap)
    return state


def _node_vendor(
    labels: Mapping[str, str], res: Mapping[str, int], driver: str | None
) -> vendors.Vendor | None:
    """The vendor of a GPU node's GPUs: by its labels, else its extended resources, else its slices' driver."""
    vendor = vendors.for_node(labels)
    for name in res if vendor is None else ():
        vendor = vendors.for_resource(name)
        if vendor is not None:
            break
    return vendor or (vendors.for_driver(driver) if driver else None)


def _gpu_nodes(state: ClusterState, spec: ClusterSpec, snap: Snapshot, target: str) -> dict[str, PoolState]:
    """Sorts the GPU nodes into the fleet's pools (state.pools); returns each node's pool."""
    slices_by_node: dict[str, int] = {}
    slice_driver: dict[str, str] = {}
    for s in snap.kind("ResourceSlice"):
        sp = s.get("spec") or {}
        if sp.get("nodeName") and vendors.for_driver(str(sp.get("driver"))) is not None:
            slices_by_node[str(sp["nodeName"])] = slices_by_node.get(str(sp["nodeName"]), 0) + len(
                sp.get("devices") or []
            )
            slice_driver.setdefault(str(sp["nodeName"]), str(sp.get("driver")))
    dp_caps, dra_caps = _capacity(snap, target, state.notes)
    pools: dict[str, PoolState] = {p.name: PoolState(p.name, dict(p.selector)) for p in spec.pools}
    node_pool: dict[str, PoolState] = {}
    marks = tuple(pair for v in vendors.all() for pair in v.gpu_node_labels())
    for node in snap.kind("Node"):
        name = _name(node)
        labels = _labels(node)
        res = _gpu_resources(node, target)
        is_gpu = (
            any(v > 0 for v in res.values())
            or name in slices_by_node
            or vendors.for_node(labels) is not None
            or any(labels.get(k) == v for k, v in marks)
        )
        if not is_gpu:
            continue
        vendor = _node_vendor(labels, res, slice_driver.get(name))
        why = vendor.unsupported("plan") if vendor is not None else None
        if vendor is not None and why is not None:
            state.unsupported.append(UnsupportedNode(name, vendor.title, why))
            continue
        hit = _pool_of(labels, spec)
        if hit is None:
            state.notes.append(
                f"GPU node {name} matches none of the fleet's node pools: left out of the waves"
            )
            state.unplanned.append(name)
            continue
        pool = pools.setdefault(hit[0], PoolState(hit[0], hit[1]))
        # the vendor's count (NVIDIA: GFD's counts MIG devices under the single strategy, turned into GPUs)
        labelled = vendor.labelled_gpus(labels, res)[0] if vendor is not None else None
        label_gpus = labelled if isinstance(labelled, int) else 0
        before = dp_caps.get(name) or label_gpus or math.ceil(gpu_equivalents(res))
        after = dra_caps.get(name, 0)
        on_dra = labels.get(STACK_LABEL) == "dra" or (name in slices_by_node and not any(res.values()))
        product = vendor.labels.product if vendor is not None else None
        pool.nodes.append(
            GpuNode(
                name=name,
                pool=pool.name,
                labels=labels,
                gpus_before=int(before),
                gpus_after=int(after),
                stack="dra" if on_dra else "device-plugin",
                model=labels.get(product, "") if product else "",
            )
        )
        node_pool[name] = pool
    state.pools = [p for p in pools.values() if p.nodes]
    for p in state.pools:
        p.nodes.sort(key=lambda n: n.name)
    return node_pool


def _pod_demand(
    state: ClusterState,
    snap: Snapshot,
    claims: dict[tuple[str, str], int],
    node_pool: dict[str, PoolState],
    target: str,
) -> set[tuple[str, str]]:
    """Adds the GPU pods' demand to their pools; returns the (namespace, name) of the pods' owners."""
    owners_with_pods: set[tuple[str, str]] = set()
    skipped = {n.name for n in state.unsupported}
    seen: dict[int, float | str] = {}  # the snapshot's items, and so each containers list, outlive it
    for pod in snap.kind("Pod"):
        meta = _fields(pod.get("metadata"))
        ns = str(meta.get("namespace") or "")
        spec_ = _fields(pod.get("spec"))
        gpus = _pod_gpus(spec_, claims, ns, target, seen)
        if isinstance(gpus, str):
            state.notes.append(f"Pod {ns}/{_name(pod)}: {gpus}")
            continue
        if gpus <= 0:
            continue
        state.has_workloads = True
        for ref in _items(meta.get("ownerReferences")):
            if isinstance(ref, dict):
                owners_with_pods.add((ns, str(ref.get("name") or "")))
        phase = _fields(pod.get("status")).get("phase")
        node_name = spec_.get("nodeName")
        if node_name and str(node_name) in skipped:
            continue  # on a GPU node no wave moves (its vendor's, named in the notes): no pool's demand
        target_pool: PoolState | None = (
            node_pool.get(str(node_name)) if node_name else _pinned_pool(spec_, state.pools)
        )
        if phase in ("Succeeded", "Failed"):
            continue
        if target_pool is None:
            state.unplaced_demand += gpus
            continue
        target_pool.demand += gpus
        target_pool.pods += 1
        if phase == "Pending" or not node_name:
            target_pool.pending += 1
    return owners_with_pods


def _workload_demand(
    state: ClusterState,
    snap: Snapshot,
    claims: dict[tuple[str, str], int],
    owners_with_pods: set[tuple[str, str]],
    target: str,
) -> None:
    """Adds the demand of GPU workloads whose pods are not in the snapshot (replicas x GPUs per pod)."""
    replicasets: dict[str, set[str]] | None = None  # read from the pods once, when a workload first asks
    for wl in snap.kind(*WORKLOAD_KINDS):
        meta = wl.get("metadata") or {}
        ns = str(meta.get("namespace") or "")
        tmpl: dict[str, Any] = _fields(_fields(_fields(wl.get("spec")).get("template")).get("spec"))
        gpus = _pod_gpus(tmpl, claims, ns, target) if tmpl else 0
        if isinstance(gpus, str):
            state.notes.append(f"{wl.get('kind')} {ns}/{_name(wl)}: {gpus}")
            continue
        if gpus <= 0:
            continue
        state.has_workloads = True
        home = _pinned_pool(tmpl, state.pools)
        if wl.get("kind") in ("Deployment", "StatefulSet"):
            state.gpu_workloads.append((str(wl.get("kind")), ns, _name(wl)))
            if home is not None:
                home.workloads.append((str(wl.get("kind")), ns, _name(wl)))
        if (ns, _name(wl)) not in owners_with_pods and replicasets is None:
            replicasets = _replicasets(snap.kind("Pod"))
        if (ns, _name(wl)) in owners_with_pods or any(
            (ns, o) in owners_with_pods for o in (replicasets or {}).get(_name(wl), ())
        ):
            continue  # its pods are counted already
        replicas = (wl.get("spec") or {}).get("replicas")
        if wl.get("kind") == "Job":
            replicas = (wl.get("spec") or {}).get("parallelism", 1)
        n = int(replicas) if isinstance(replicas, int) else 1
        pinned = _pinned_pool(tmpl, state.pools)
        if pinned is None:
            state.unplaced_demand += n * gpus
        else:
            pinned.demand += n * gpus
            pinned.pods += n


def _gpu_stack(state: ClusterState, snap: Snapshot) -> None:
    """The device plugin, DRA driver and GPU operator (NVIDIA's ClusterPolicy, GPUCluster) the cluster runs."""
    for ds in snap.kind("DaemonSet"):
        text = str(ds)
        component = vendors.node_component(ds)  # not GFD or the MPS daemon, which run the plugin's image
        if _runs_device_plugin(ds) or (component is not None and component.key == "device-plugin"):
            meta = ds.get("metadata") or {}
            state.device_plugin = (str(meta.get("namespace") or ""), _name(ds))
        if "dra-driver" in text and "kubelet-plugin" in _name(ds):
            state.dra_driver = True
            state.dra_driver_daemonset = (str((ds.get("metadata") or {}).get("namespace") or ""), _name(ds))
    # what each vendor's GPU operator custom resources deploy (NVIDIA: a ClusterPolicy the device plugin, a
    # GPUCluster the DRA driver), asked once per kind and apiVersion (which decide it), in the objects' order
    roles: dict[str, list[dict[str, Any]]] = {}
    asked: dict[tuple[str, str], str | None] = {}
    for o in snap.items:
        key = (str(o.get("kind")), str(o.get("apiVersion")))  # an edited snapshot's may be unhashable
        if key not in asked:
            asked[key] = next((r for v in vendors.all() if (r := v.operator_role(o)) is not None), None)
        if (role := asked[key]) is not None:
            roles.setdefault(role, []).append(o)
    policies = roles.get("device-plugin", [])
    clusters = roles.get("dra-driver", [])
    state.cluster_policy = _name(policies[0]) if policies else None
    state.gpu_cluster = _name(clusters[0]) if clusters else None
    state.gpu_operator = bool(policies or clusters) or any(
        "gpu-operator" in str((d.get("metadata") or {}).get("labels") or {}) for d in snap.kind("DaemonSet")
    )


def _replicasets(pods: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """The ReplicaSets owning pods, under each name they start with before a ``-`` (a Deployment ``web`` owns
    the ReplicaSets ``web-<hash>``): one pass over the pods, not one per workload."""
    out: dict[str, set[str]] = {}
    for pod in pods:
        for ref in _items(_fields(pod.get("metadata")).get("ownerReferences")):
            if not isinstance(ref, dict) or ref.get("kind") != "ReplicaSet":
                continue
            owner = str(ref.get("name") or "")
            at = owner.find("-")
            while at >= 0:
                out.setdefault(owner[:at], set()).add(owner)
                at = owner.find("-", at + 1)
    return out


def _runs_device_plugin(ds: dict[str, Any]) -> bool:
    """A container of the DaemonSet runs a vendor's device plugin itself (by its image, as the vendor tells;
    not GPU feature discovery or the MPS control daemon from the same image)."""
    spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict) or not isinstance(c.get("image"), str):
                continue
            found = (v.node_component(c) for v in vendors.all())
            if any(comp is not None and comp.key == "device-plugin" for comp in found):
                return True
    return False


def _pinned_pool(spec: dict[str, Any], pools: list[PoolState]) -> PoolState | None:
    sel = spec.get("nodeSelector") or {}
    if not isinstance(sel, dict) or not sel:
        return None
    for p in pools:
        if p.selector and all(sel.get(k) == v for k, v in p.selector.items()):
            return p
        if p.nodes and all(p.nodes[0].labels.get(str(k)) == str(v) for k, v in sel.items()):
            return p
    return None
