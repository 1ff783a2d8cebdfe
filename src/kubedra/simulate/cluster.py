"""The two views of one cluster: what the NVIDIA device plugin advertises, and what the DRA driver publishes.

- ``--nodes 4x8xH100-80GB`` generates both from the catalogue (:mod:`kubedra.vendors.nvidia`): device-plugin
  Nodes with ``nvidia.com/gpu`` / ``nvidia.com/mig-<profile>`` (time-slicing: replicas per GPU), and DRA
  Nodes without GPU extended resources plus the ResourceSlices and DeviceClasses of the DRA driver.
  ``mig-dynamic`` has no device-plugin equivalent: the device-plugin side then runs the GPUs whole
  (MIG off), unless ``--dp-gpu-mode`` says otherwise.
- From files: Nodes with GPU extended resources are the device-plugin view; the DRA view is the same Nodes
  without them, plus the ResourceSlices. A missing view is derived when the facts allow it: device-plugin
  resources from the NVIDIA driver's slices (full GPUs, static MIG devices; dynamic MIG counts as whole
  GPUs), and DRA slices from a device-plugin Node's GPU Feature Discovery labels (model, GPU count,
  MIG layout from ``nvidia.com/mig.config``) through the catalogue. A file written by ``--save-cluster``
  holds both views (each Node twice) and reads back as such.

Accounting facts are kept per node (:class:`DpNodeInfo`) and per device (:mod:`kubedra.simulate.devices`) so the
results can say how many physical GPUs exist and how much GPU memory each pod got.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.errors import InputError, UsageError
from kubedra.k8s.quantity import Quantity
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.model.objects import (
    Device,
    DeviceClass,
    DeviceTaintRule,
    Node,
    ResourceClaim,
    ResourceSlice,
)
from kubedra.scheduler.pods import amount
from kubedra.simulate.catalogue import typed_cluster, vendor_objects
from kubedra.simulate.devices import DeviceInfo, device_infos
from kubedra.sources.files import Document
from kubedra.text import count
from kubedra.vendors.base import PublishedDevice

DP = "device-plugin"
DRA = "dra"
MODES = (DP, DRA)
UNLIMITED = 10**15  # cpu/memory of nodes synthesized from slices: not a constraint


@functools.lru_cache(maxsize=4096)
def is_gpu_resource(name: str) -> bool:
    """A GPU resource of any vendor's device plugin (``nvidia.com/gpu``, ``nvidia.com/mig-1g.10gb``, ``amd.com/gpu``)."""
    return vendors.classify(name) is not None


DpNodeInfo = vendors.DevicePluginGpus  # device-plugin facts of one node, as its vendor reads them


@dataclass
class ClusterView:
    mode: str
    nodes: list[Node] = field(default_factory=list)
    classes: list[DeviceClass] = field(default_factory=list)
    slices: list[ResourceSlice] = field(default_factory=list)
    taint_rules: list[DeviceTaintRule] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)  # derived objects, for --save-cluster
    source: Callable[[], list[dict[str, Any]]] | None = None  # generated objects, made on demand

    def all_objects(self) -> list[dict[str, Any]]:
        return self.source() if self.source is not None else list(self.objects)

    dp_info: dict[str, DpNodeInfo] = field(default_factory=dict)
    devices: Mapping[tuple[str, str, str], DeviceInfo] = field(default_factory=dict)
    release: str = DEFAULT_TARGET  # --target-version: how its kube-scheduler counts a node's GPUs

    def physical_gpus(self) -> dict[str, int]:
        if self.mode == DP:
            return {n: i.physical for n, i in self.dp_info.items()}
        out: dict[str, set[str]] = {}
        for d in self.devices.values():
            out.setdefault(d.node, set()).add(d.gpu)
        return {n: len(g) for n, g in out.items()}


@dataclass
class Cluster:
    views: dict[str, ClusterView] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    generated: bool = False
    spec: str | None = None
    # GPU nodes that one view lacks (node name -> why): the comparison is incomplete, simulate exits 2
    unmodelled: dict[str, str] = field(default_factory=dict)
    # GPU nodes on the device plugin that have DRA driver slices too (their DRA view is their slices)
    dual: set[str] = field(default_factory=set)

    @property
    def node_names(self) -> list[str]:
        view = next(iter(self.views.values()), None)
        return [n.name for n in view.nodes] if view else []


# Kubernetes' documented scalability limits (kubernetes.io "Considerations for large clusters"): at most
# 5,000 nodes and 150,000 pods per cluster. simulate refuses more by default (exit 2) instead of running out
# of memory; --max-nodes / --max-pods raise the bounds.
MAX_NODES = 5_000
MAX_PODS = 150_000


@dataclass(frozen=True)
class ClusterOptions:
    nodes: str | None = None  # --nodes catalogue spec
    gpu_mode: str | None = None  # --gpu-mode (DRA side; device-plugin side too unless dp_gpu_mode)
    dp_gpu_mode: str | None = None
    target_version: str = DEFAULT_TARGET
    modes: tuple[str, ...] = MODES
    max_nodes: int = MAX_NODES  # --max-nodes


# --------------------------------------------------------------------------- accounting facts


def _attr(attrs: Mapping[str, Any], name: str, driver: str) -> Any:
    a = attrs.get(name) or attrs.get(f"{driver}/{name}")
    return a.value if a is not None else None


def _capacity_bytes(capacity: Mapping[str, Any], driver: str) -> int:
    c = capacity.get("memory") or capacity.get(f"{driver}/memory")
    return c.value.value() if c is not None else 0


def used_gpus(info: DpNodeInfo, used: Mapping[str, int]) -> int:
    """GPUs of a device-plugin node with at least one unit in use (resource -> units), as its vendor counts them."""
    if info.vendor:
        return vendors.get(info.vendor).used_gpus(info, used)
    n = sum(v for v in used.values() if v > 0)
    return min(n, info.physical) if info.physical else n


def gpu_allocatable(node: Node, release: str) -> dict[str, int]:
    """The node's allocatable GPU resources as ``release``'s kube-scheduler counts them
    (:func:`kubedra.scheduler.pods.amount`, the scheduler's own reading: past int64 ``1e20`` is 0 at 1.36/1.37,
    MaxInt64 at 1.38); a count read as negative is none (the scheduler refuses such a node, ``node_unmodelled``)."""
    return {k: max(amount(k, q, release), 0) for k, q in node.allocatable.items() if is_gpu_resource(k)}


def dp_node_info(node: Node, release: str) -> DpNodeInfo:
    """Physical GPUs and memory per unit from the allocatable resources (:func:`gpu_allocatable`) and labels, as
    the node's vendor reads them (NVIDIA: GPU Feature Discovery's labels; AMD: the node labeller's)."""
    alloc = gpu_allocatable(node, release)
    vendor = vendors.for_resource(next(iter(alloc))) if alloc else vendors.for_node(node.labels)
    return vendor.device_plugin_gpus(node.labels, alloc) if vendor is not None else DpNodeInfo()


# --------------------------------------------------------------------------- building views


def _docs(objects: Sequence[dict[str, Any]], origin: str) -> list[Document]:
    return [Document(obj=o, file=origin, line=0, index=i) for i, o in enumerate(objects)]


def _strip_gpu_resources(node: Node) -> Node:
    n = copy.copy(node)
    n.allocatable = {k: v for k, v in node.allocatable.items() if not is_gpu_resource(k)}
    n.capacity = {k: v for k, v in node.capacity.items() if not is_gpu_resource(k)}
    return n


def _has_gpu_resources(node: Node, release: str) -> bool:
    return any(n > 0 for n in gpu_allocatable(node, release).values())


def _vendor_parts(text: str) -> list[tuple[vendors.Vendor, str]]:
    """The node spec's groups per vendor, in the registry's order."""
    order = vendors.all()
    return sorted(vendors.split_node_spec(text), key=lambda part: order.index(part[0]))


def _modes(
    parts: list[tuple[vendors.Vendor, str]], opts: ClusterOptions, notes: list[str]
) -> list[tuple[vendors.Vendor, str, str, str]]:
    """(vendor, its groups, DRA-view mode, device-plugin-view mode) per vendor of the spec: a mode for another
    vendor's GPUs (AMD's cpx_nps4) leaves a vendor's GPUs in their default mode; a mode chosen for a model that
    cannot run it is refused (a driver would publish such a GPU whole: a run would simulate something else than
    what was asked, exit 0)."""
    for chosen in (opts.gpu_mode, opts.dp_gpu_mode):
        if chosen and not any(v.gpu_mode(chosen) for v, _ in parts):
            parts[0][0].check_mode(parts[0][1], chosen)  # no vendor of the spec runs it: the first says why
    out = []
    for vendor, spec in parts:
        dra_mode = vendor.gpu_mode(opts.gpu_mode) or vendor.default_gpu_mode
        for chosen in (dra_mode, vendor.gpu_mode(opts.dp_gpu_mode)):
            if chosen:
                vendor.check_mode(spec, chosen)
        dp_mode = vendor.gpu_mode(opts.dp_gpu_mode)
        if dp_mode is None:
            dp_mode, note = vendor.device_plugin_mode(dra_mode)
            if note and DP in opts.modes:
                notes.append(note)
        out.append((vendor, spec, dra_mode, dp_mode))
    return out


def _add_typed(view: ClusterView, typed: tuple[list[Node], list[ResourceSlice], list[DeviceClass]]) -> None:
    nodes, slices, classes = typed
    view.nodes += nodes
    view.slices += slices
    have = {c.name for c in view.classes}
    view.classes += [c for c in classes if c.name not in have]


def generated_cluster(opts: ClusterOptions) -> Cluster:
    assert opts.nodes is not None

    parts = _vendor_parts(opts.nodes)
    for vendor, spec in parts:
        vendor.check_mode(spec, vendor.default_gpu_mode)  # parses the groups: a bad one is refused first
    total = sum(int(p.split("x", 1)[0]) for _, spec in parts for p in spec.split(","))
    if total > opts.max_nodes:
        raise UsageError(
            f"--nodes {opts.nodes}: {total} nodes is more than the simulation bound of {opts.max_nodes} "
            "(Kubernetes supports up to 5,000 nodes per cluster); raise it with --max-nodes"
        )
    cluster = Cluster(generated=True, spec=opts.nodes)
    plan = _modes(parts, opts, cluster.notes)
    target = opts.target_version
    for mode in (DP, DRA):
        if mode not in opts.modes:
            continue
        dp = mode == DP
        view = ClusterView(mode, release=target)
        chosen = [(vendor, spec, dp_mode if dp else dra_mode) for vendor, spec, dra_mode, dp_mode in plan]
        for vendor, spec, gpu_mode in chosen:
            _add_typed(view, typed_cluster(vendor, spec, gpu_mode, target, device_plugin=dp))
        view.source = functools.partial(_objects, chosen, target, dp)
        if dp:
            view.dp_info = {n.name: dp_node_info(n, target) for n in view.nodes}
        else:
            view.devices = device_infos(view.slices)
        cluster.views[mode] = view
    for vendor, spec, dra_mode, dp_mode in plan:
        cluster.notes += vendor.generated_notes(spec, dra_mode, dp_mode)
    return cluster


def _objects(
    plan: list[tuple[vendors.Vendor, str, str]], k8s_version: str, device_plugin: bool
) -> list[dict[str, Any]]:
    return [o for v, spec, mode in plan for o in vendor_objects(v, spec, mode, k8s_version, device_plugin)]


def _split_nodes(nodes: Sequence[Node], release: str) -> tuple[list[Node], list[Node]]:
    """(device-plugin nodes, DRA nodes): a node given twice (a --save-cluster file) is one of each."""
    seen: dict[str, list[Node]] = {}
    order: list[str] = []
    for n in nodes:
        if n.name not in seen:
            order.append(n.name)
        seen.setdefault(n.name, []).append(n)
    dp: list[Node] = []
    dra: list[Node] = []
    for name in order:
        group = seen[name]
        if len(group) == 1:
            dp.append(group[0])
            dra.append(_strip_gpu_resources(group[0]))
            continue
        if len(group) > 2:
            raise InputError(f"Node {name} is given {len(group)} times")
        with_gpu = [n for n in group if _has_gpu_resources(n, release)]
        without = [n for n in group if not _has_gpu_resources(n, release)]
        if len(with_gpu) != 1 or len(without) != 1:
            raise InputError(
                f"Node {name} is given twice; that is only allowed for the two views of a --save-cluster file "
                "(one with GPU extended resources, one without)"
            )
        dp.append(with_gpu[0])
        dra.append(without[0])
    return dp, dra


def _published(d: Device, driver: str) -> PublishedDevice:
    cs = d.consumes_counters[0].counter_set if d.consumes_counters else None
    typ, profile, parent = (_attr(d.attributes, k, driver) for k in ("type", "profile", "parentUUID"))
    return PublishedDevice(
        type=None if typ is None else str(typ),
        memory=_capacity_bytes(d.capacity, driver),
        profile=None if profile is None else str(profile),
        counter_set=cs,
        parent=None if parent is None else str(parent),
    )


def _dp_from_slices(node: Node, slices: Sequence[ResourceSlice], notes: list[str]) -> Node:
    """The device plugin's extended resources and labels for a node known from DRA slices, as each slice's vendor
    derives them."""
    gpus: dict[str, int] = {}
    labels = dict(node.labels)
    for vendor in vendors.all():
        mine = [s for s in slices if s.driver == vendor.driver and (s.node_name or "") == node.name]
        if not mine:
            continue
        derived = vendor.device_plugin_view(
            node.name, [_published(d, s.driver) for s in mine for d in s.devices]
        )
        for k, v in derived.resources.items():
            gpus[k] = gpus.get(k, 0) + v
        for k, value in derived.labels.items():
            labels.setdefault(k, value)
        notes += derived.notes
    n = copy.copy(node)
    n.meta = copy.copy(node.meta)
    n.meta.labels = labels
    n.allocatable = {**node.allocatable, **{k: Quantity.from_int(v) for k, v in gpus.items()}}
    n.capacity = {**node.capacity, **{k: Quantity.from_int(v) for k, v in gpus.items()}}
    return n


def _dra_from_labels(
    nodes: Sequence[Node], gpu_mode: str | None, target: str, unmodelled: dict[str, str], notes: list[str]
) -> tuple[list[dict[str, Any]], list[vendors.Vendor]]:
    """The DRA driver's slices for device-plugin nodes, from their labels, as each node's vendor derives them, and
    the vendors derived; a node that cannot be derived goes into ``unmodelled`` with the reason."""
    objects: list[dict[str, Any]] = []
    used: list[vendors.Vendor] = []
    for node in nodes:
        if not _has_gpu_resources(node, target):
            continue
        alloc = gpu_allocatable(node, target)
        vendor = vendors.for_resource(next(iter(alloc)))
        assert vendor is not None
        derived = vendor.dra_view(node.name, node.labels, alloc, vendor.gpu_mode(gpu_mode), target)
        if derived.reason is not None:
            unmodelled[node.name] = derived.reason
            continue
        notes += derived.notes
        objects += derived.objects
        if vendor not in used:
            used.append(vendor)
    return objects, used


def _derived_again(
    generated: list[dict[str, Any]], nodes: Sequence[Node], gpu_mode: str | None, target: str
) -> list[dict[str, Any]]:
    """The DRA view's derived objects (--save-cluster), made again as :func:`files_cluster` made them: the
    generated DeviceClasses, then each device-plugin node's slices (deterministic in the node's labels)."""
    return [*generated, *_dra_from_labels(nodes, gpu_mode, target, {}, [])[0]]


def _titles(vs: Iterable[vendors.Vendor]) -> str:
    """The vendors' titles, once each: ``NVIDIA``, ``NVIDIA and AMD``."""
    return " and ".join(dict.fromkeys(v.title for v in vs))


def files_cluster(inv: Inventory, opts: ClusterOptions) -> Cluster:
    cluster = Cluster()
    nodes = list(inv.nodes)
    synthesized = False
    if not nodes:
        nodes = inv.nodes_or_synthesized()
        synthesized = bool(nodes)
        for n in nodes:
            n.allocatable = {"cpu": Quantity.from_int(UNLIMITED), "memory": Quantity.from_int(UNLIMITED)}
        if synthesized:
            cluster.notes.append(
                "no Node objects: nodes taken from the ResourceSlices' nodeName, without cpu/memory limits"
            )
    if not nodes:
        raise InputError(
            "no cluster in the input: add Node objects (and ResourceSlices for DRA), or generate one with "
            "--nodes 4x8xH100-80GB"
        )
    dp_nodes, dra_nodes = _split_nodes(nodes, opts.target_version)
    dra_view_nodes = dra_nodes
    # A cluster in the middle of its migration has both: nodes still on the device plugin and nodes whose GPUs
    # the DRA driver publishes. Each view is the whole fleet, each node derived where it is not yet there.
    drivers = {v.driver: v for v in vendors.all()}
    sliced = {s.node_name for s in inv.slices if s.driver in drivers and s.node_name}
    on_plugin = {n.name for n in dp_nodes if _has_gpu_resources(n, opts.target_version)}
    cluster.dual = on_plugin & sliced
    if DP in opts.modes:
        derive = {n.name for n in dp_nodes if n.name in sliced and n.name not in on_plugin}
        if derive:
            by_node: dict[str, list[ResourceSlice]] = {}  # each node's slices: not every slice for each node
            for s in inv.slices:
                if s.driver in drivers and s.node_name:
                    by_node.setdefault(s.node_name, []).append(s)
            dp_nodes = [
                _dp_from_slices(n, by_node.get(n.name, []), cluster.notes) if n.name in derive else n
                for n in dp_nodes
            ]
            titles = _titles(
                drivers[s.driver] for s in inv.slices if s.driver in drivers and s.node_name in derive
            )
            cluster.notes.append(
                f"device-plugin view derived from the {titles} DRA driver's ResourceSlices (what the device plugin "
                "would advertise on the same GPUs)"
                + (f" for {count(len(derive), 'node')} on DRA" if on_plugin else "")
            )
        view = ClusterView(DP, nodes=dp_nodes, release=opts.target_version)
        view.dp_info = {n.name: dp_node_info(n, opts.target_version) for n in dp_nodes}
        cluster.views[DP] = view
    if DRA in opts.modes:
        slices = list(inv.slices)
        classes = list(inv.classes)
        pending_nodes = [n for n in dp_nodes if n.name in on_plugin and n.name not in sliced]
        objects, used = _dra_from_labels(
            pending_nodes, opts.gpu_mode, opts.target_version, cluster.unmodelled, cluster.notes
        )
        cluster.notes += [f"node {name}: {reason}" for name, reason in cluster.unmodelled.items()]
        if objects:
            derived = len(pending_nodes) - len(cluster.unmodelled)
            labellers = " and ".join(dict.fromkeys(v.labeller for v in used))
            cluster.notes.append(
                f"DRA view derived from the Nodes' {labellers} labels: the ResourceSlices the "
                f"{_titles(used)} DRA driver would publish on them"
                + (f" ({count(derived, 'node')} still on the device plugin)" if sliced else "")
            )
        generated: list[dict[str, Any]] = []
        if objects or (slices and not classes):
            have = {c.name for c in classes}
            publishing = [*used, *(drivers[s.driver] for s in slices if s.driver in drivers)]
            generated = [
                c
                for v in dict.fromkeys(publishing)
                for c in v.simulated_device_classes(opts.target_version)
                if c["metadata"]["name"] not in have
            ]
            objects = generated + objects
        source: Callable[[], list[dict[str, Any]]] | None = None
        if objects:
            extra = build_inventory(_docs(objects, "<derived>"))
            slices += extra.slices
            classes += extra.classes
            # the derived dicts are not kept (most of a large fleet's memory): made again if asked
            if len(objects) > len(generated):
                source = functools.partial(
                    _derived_again, generated, pending_nodes, opts.gpu_mode, opts.target_version
                )
                objects = []
        if not slices:
            why = "".join(f"; node {name}: {reason}" for name, reason in list(cluster.unmodelled.items())[:3])
            more = len(cluster.unmodelled) - 3
            raise InputError(
                "no ResourceSlices for the DRA view: add them (kubectl get resourceslices -o yaml), use "
                "--nodes to generate a cluster, or run --mode device-plugin"
                + why
                + (f" (and {more} more)" if more > 0 else "")
            )
        view = ClusterView(
            DRA,
            release=opts.target_version,
            nodes=dra_view_nodes,
            classes=classes,
            slices=slices,
            taint_rules=list(inv.taint_rules),
            claims=[c for c in inv.claims if c.allocation is not None],
            objects=objects,
            source=source,
        )
        view.devices = device_infos(slices)
        cluster.views[DRA] = view
    return cluster


def build_cluster(inv: Inventory, opts: ClusterOptions) -> Cluster:
    if opts.nodes:
        if inv.nodes or inv.slices:
            raise UsageError(
                "--nodes generates the cluster: remove the Node/ResourceSlice objects from the input, or drop --nodes"
            )
        cluster = generated_cluster(opts)
        if DRA in cluster.views and inv.classes:
            view = cluster.views[DRA]
            mine = {c.name for c in inv.classes}
            view.classes = [c for c in view.classes if c.name not in mine] + list(inv.classes)
        if DRA in cluster.views:
            cluster.views[DRA].taint_rules = list(inv.taint_rules)
            cluster.views[DRA].claims = [c for c in inv.claims if c.allocation is not None]
        return cluster
    if opts.gpu_mode and inv.slices:
        raise UsageError(
            "--gpu-mode shapes generated or derived clusters; the input already has ResourceSlices"
        )
    return files_cluster(inv, opts)
