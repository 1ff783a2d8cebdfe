"""What a simulation found, per mode, and its JSON shape.

Definitions (the same in both modes, so the columns compare):

- ``placed`` / ``pending``: simulated pods (the workloads; bound pods of the cluster are its state, not
  counted) with and without a node. Every pending pod has a ``reason``.
- ``gpus.physical``: whole physical GPUs of the cluster (device plugin: ``nvidia.com/gpu.count`` from GPU
  Feature Discovery, else the advertised GPUs; DRA: distinct GPUs behind the published devices, a MIG
  device or partition belonging to its parent GPU).
- ``gpus.used``: physical GPUs with at least one allocated device, partition or extended-resource unit
  after the simulation, bound cluster pods included. Device plugin: one GPU per ``nvidia.com/gpu`` unit;
  time-slicing/MPS replicas spread over the GPUs like the plugin's distributed allocation; MIG instances
  packed onto as few GPUs as their memory needs (the plugin does not say which GPU holds an instance).
- ``memory.requestedBytes``: GPU memory the placed pods asked for: ``kubedra.io/gpu-memory`` (or
  ``--gpu-memory``) × their devices, or, without a declared need, what they were given (a pod that asks for a
  whole GPU asks for all of its memory).
- ``memory.allocatedBytes``: GPU memory of what the placed pods got: the whole GPU for a device-plugin GPU,
  the GPU memory divided by the replicas for a time-sliced unit, the profile's memory for a MIG device or
  partition, a device's memory divided by the pods sharing its claim. A whole GPU counts what each side
  publishes (GFD ``gpu.memory``; the DRA device's ``memory``); :func:`memory_basis_note` says so where they
  differ.
- ``devices``: ``driver/pool/device`` of the allocated devices (DRA); empty for the device plugin, whose
  device IDs the kubelet picks at admission.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.scheduler.pods import SimPod
from kubedra.scheduler.simulator import Scheduler
from kubedra.scheduler.skipped import Skipped
from kubedra.scheduler.workloads import Workloads
from kubedra.simulate.cluster import DP, DRA, Cluster, ClusterView, is_gpu_resource
from kubedra.simulate.cluster import used_gpus as gpus_in_use
from kubedra.text import count

_MIB = 2**20

# How a mode is named in every output (tables, charts, the bound's line).
TITLES = {"device-plugin": "device plugin", "dra": "DRA"}


@dataclass
class PodOutcome:
    namespace: str
    name: str
    node: str | None
    devices: list[str]
    reason: str | None
    owner: str = ""
    requested: int = 0
    allocated: int = 0
    gpus: int = 0  # devices / units of GPU resources it holds
    given: list[str] = field(default_factory=list)  # what it got: "whole GPU", a MIG profile, a resource

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "node": self.node,
            "devices": list(self.devices),
            "reason": self.reason,
        }


@dataclass
class NodeUse:
    physical: int = 0
    used: int = 0
    memory: int = 0  # bytes of the node's GPUs
    allocated: int = 0  # bytes allocated to pods (cluster pods included)
    pods: int = 0


@dataclass
class ModeResult:
    mode: str
    pods: list[PodOutcome] = field(default_factory=list)
    evicted: list[PodOutcome] = field(default_factory=list)
    physical: int = 0
    used: int = 0
    nodes: dict[str, NodeUse] = field(default_factory=dict)
    seconds: float = 0.0  # wall time of the scheduling loop
    cpu_seconds: float = 0.0
    sim_pods: list[SimPod] = field(default_factory=list, repr=False)  # the simulated pods (for --bound)

    @property
    def placed(self) -> int:
        return sum(1 for p in self.pods if p.node)

    @property
    def pending(self) -> int:
        return sum(1 for p in self.pods if not p.node)

    def given(self) -> dict[str, int]:
        """Devices the placed pods got, by kind ("whole GPU", MIG profile, resource), most first."""
        counts: dict[str, int] = {}
        for p in self.pods:
            for g in p.given:
                counts[g] = counts.get(g, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def requested_bytes(self) -> int:
        return sum(p.requested for p in self.pods if p.node)

    @property
    def allocated_bytes(self) -> int:
        return sum(p.allocated for p in self.pods if p.node)

    def to_dict(self) -> dict[str, Any]:
        return {
            "placed": self.placed,
            "pending": self.pending,
            "gpus": {"physical": self.physical, "used": self.used},
            "memory": {"requestedBytes": self.requested_bytes, "allocatedBytes": self.allocated_bytes},
            "pods": [p.to_dict() for p in self.pods],
            "evicted": [p.to_dict() for p in self.evicted],
        }


@dataclass
class Simulation:
    cluster: Cluster
    workloads: Workloads
    results: dict[str, ModeResult] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"modes": {m: r.to_dict() for m, r in self.results.items()}}
        unread = [s for s in self.skipped if s.not_read]
        if unread:  # inputs not read (Helm templates, charts): the simulation is incomplete, exit 2
            out["notRead"] = [
                {
                    "source": s.location.to_dict() if s.location is not None else None,
                    "what": s.what,
                    "reason": s.reason,
                }
                for s in unread
            ]
        if self.cluster.unmodelled:  # GPU nodes one view lacks: the comparison is incomplete, exit 2
            out["notModelled"] = [{"node": n, "reason": r} for n, r in self.cluster.unmodelled.items()]
        return out

    @property
    def density(self) -> float | None:
        """Pods placed with DRA per pod placed with the device plugin (None without both or with 0)."""
        dp, dra = self.results.get("device-plugin"), self.results.get("dra")
        if dp is None or dra is None or dp.placed == 0:
            return None
        return dra.placed / dp.placed


def _sharers(sched: Scheduler) -> dict[int, int]:
    out: dict[int, int] = {}
    for sp in sched.bound:
        for c in sp.claims:
            if c.allocation is not None:
                out[id(c)] = out.get(id(c), 0) + 1
    return out


def _given(sp: SimPod, view: ClusterView) -> list[str]:
    if not sp.node:
        return []
    if view.mode == DP:
        out = []
        for res, n in sp.requests.items():
            if is_gpu_resource(res) and n > 0:
                vendor = vendors.for_resource(res)
                out += [vendor.resource_label(res) if vendor is not None else res] * n
        return out
    labels = []
    claims = [*sp.claims]
    if sp.extra.get("ext_claim") is not None:
        claims.append(sp.extra["ext_claim"])
    for c in claims:
        if c.allocation is None:
            continue
        for r in c.allocation.results:
            info = view.devices.get((r.driver, r.pool, r.device))
            if info is not None:
                labels.append(info.label)
    return labels


def _dra_pod(sp: SimPod, view: ClusterView, sharers: dict[int, int]) -> tuple[int, int]:
    claims = [*sp.claims]
    ext = sp.extra.get("ext_claim")
    if ext is not None:
        claims.append(ext)
    total = gpus = 0
    for c in claims:
        if c.allocation is None:
            continue
        share = max(sharers.get(id(c), 1), 1)
        for r in c.allocation.results:
            info = view.devices.get((r.driver, r.pool, r.device))
            if info is None:
                continue
            gpus += 1
            total += info.memory // share
    return total, gpus


def _dp_pod(sp: SimPod, view: ClusterView) -> tuple[int, int]:
    if not sp.node:
        return 0, 0
    info = view.dp_info.get(sp.node)
    total = gpus = 0
    for res, n in sp.requests.items():
        if is_gpu_resource(res) and n > 0:
            gpus += n
            total += n * (info.unit_memory.get(res, 0) if info else 0)
    return total, gpus


def _outcome(sp: SimPod, view: ClusterView, sharers: dict[int, int]) -> PodOutcome:
    if view.mode == DP:
        allocated, gpus = _dp_pod(sp, view)
    else:
        allocated, gpus = _dra_pod(sp, view, sharers) if sp.node else (0, 0)
    need = sp.extra.get("need")
    requested = need * gpus if need is not None and gpus else allocated
    return PodOutcome(
        namespace=sp.namespace,
        name=sp.name,
        node=sp.node,
        devices=list(sp.devices) if view.mode != DP else [],
        reason=None if sp.node else (sp.reason or "not scheduled"),
        owner=sp.owner,
        requested=requested if sp.node else 0,
        allocated=allocated if sp.node else 0,
        gpus=gpus,
        given=_given(sp, view),
    )


def _node_use(sched: Scheduler, view: ClusterView) -> dict[str, NodeUse]:
    out = {n.name: NodeUse() for n in view.nodes}
    for n in sched.nodes:
        out[n.name].pods = len(n.pods)
    if view.mode == DP:
        for n in sched.nodes:
            dp = view.dp_info.get(n.name)
            if dp is None:
                continue
            use = out[n.name]
            gpu_used = {k: v for k, v in n.used.items() if is_gpu_resource(k)}
            use.physical = dp.physical
            use.used = gpus_in_use(dp, gpu_used)
            use.memory = dp.physical * dp.gpu_memory
            use.allocated = sum(v * dp.unit_memory.get(k, 0) for k, v in gpu_used.items())
        return out
    per_gpu: dict[str, int] = {}
    for info in view.devices.values():
        per_gpu[info.gpu] = max(per_gpu.get(info.gpu, 0), info.memory)
    gpu_node = {info.gpu: info.node for info in view.devices.values()}
    for gpu, mem in per_gpu.items():
        use = out.setdefault(gpu_node[gpu], NodeUse())
        use.physical += 1
        use.memory += mem
    in_use = set(sched.allocated.devices) | {s[:3] for s in sched.allocated.shared_ids}
    used_gpus: set[str] = set()
    for did in in_use:
        dev = view.devices.get(did)
        if dev is None:
            continue
        used_gpus.add(dev.gpu)
        out.setdefault(dev.node, NodeUse()).allocated += dev.memory
    for gpu in used_gpus:
        out[gpu_node[gpu]].used += 1
    return out


def memory_basis_note(cluster: Cluster) -> str | None:
    """A note when a whole GPU's memory is not the same number in both views, so that the GPU memory rows differ
    though the pods got the same GPUs: the device plugin counts the GPU's total (GFD ``gpu.memory``), a DRA
    driver publishes its own full-GPU ``memory`` capacity (why, where its vendor knows:
    ``Vendor.full_gpu_memory_note``). None when they agree."""
    dp, dra = cluster.views.get(DP), cluster.views.get(DRA)
    if dp is None or dra is None:
        return None
    nodes: dict[tuple[int, int], set[str]] = {}
    last = None
    for info in dra.devices.values():  # a GPU's devices share one DeviceInfo per kind: look at each once
        if info is last or info.label != "whole GPU" or not info.memory:
            continue
        last = info
        dp_info = dp.dp_info.get(info.node)
        if dp_info is not None and dp_info.gpu_memory and info.memory != dp_info.gpu_memory:
            nodes.setdefault((dp_info.gpu_memory, info.memory), set()).add(info.node)
    if not nodes:
        return None
    where = set().union(*nodes.values())
    drivers = sorted({s.driver for s in dra.slices if s.node_name in where})
    parts = "; ".join(
        f"{count(len(names), 'node')}: {a // _MIB:,} MiB with the device plugin, {b // _MIB:,} MiB with DRA"
        for (a, b), names in sorted(nodes.items())
    )
    reasons = [v.full_gpu_memory_note for v in map(vendors.for_driver, drivers) if v is not None]
    why = "".join(f" ({r})" for r in reasons if r)
    return (
        f"a whole GPU's memory is not the same number in the two columns ({parts}): the device plugin counts the "
        f"GPU's total, the DRA driver publishes its own full-GPU memory capacity{why}; the GPU memory rows differ "
        "by that for every whole GPU, not by what the pods got"
    )


def collect(
    mode: str,
    sched: Scheduler,
    view: ClusterView,
    simulated: Sequence[SimPod],
    seconds: float,
    cpu_seconds: float = 0.0,
) -> ModeResult:
    sharers = _sharers(sched)
    result = ModeResult(mode=mode, seconds=seconds, cpu_seconds=cpu_seconds, sim_pods=list(simulated))
    result.pods = [_outcome(sp, view, sharers) for sp in simulated]
    result.evicted = [_outcome(sp, view, sharers) for sp in sched.evicted]
    result.nodes = _node_use(sched, view)
    result.physical = sum(u.physical for u in result.nodes.values())
    result.used = sum(u.used for u in result.nodes.values())
    return result
