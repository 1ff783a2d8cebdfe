"""Run the same workloads through kube-scheduler's loop twice: device plugin, then DRA.

The two modes differ only in how GPUs are asked for and accounted: device-plugin mode runs
:class:`~kubedra.scheduler.simulator.Scheduler` with ``dra=False`` on Nodes that advertise
``nvidia.com/...`` extended resources; DRA mode runs it with ``dra=True`` on Nodes plus ResourceSlices.
Every pod exists in both worlds (:mod:`kubedra.scheduler.convert`); a pod that cannot be expressed in one of
them stays pending there with the reason.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubedra import vendors
from kubedra.allocator.session import EngineConfig, engine_config
from kubedra.errors import Location, UsageError
from kubedra.gcpause import paused_gc
from kubedra.k8s import namespaces
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.model.objects import (
    DeviceClaim,
    DeviceClaimConfiguration,
    ObjectMeta,
    OpaqueDeviceConfiguration,
    Pod,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimTemplate,
)
from kubedra.scheduler.build import PriorityClasses, build_sim_pods
from kubedra.scheduler.convert import DraOptions, MigOffer, memory_need, to_device_plugin, to_dra
from kubedra.scheduler.pods import SimPod, node_unmodelled
from kubedra.scheduler.preemption import candidates_rule
from kubedra.scheduler.sampling import ADAPTIVE, check_percentage
from kubedra.scheduler.simulator import Scheduler
from kubedra.scheduler.skipped import Skipped
from kubedra.scheduler.workloads import PodSet, Workloads, expand
from kubedra.simulate.cluster import (
    DP,
    DRA,
    MAX_PODS,
    MODES,
    Cluster,
    ClusterOptions,
    ClusterView,
    build_cluster,
)
from kubedra.simulate.controllers import add_created_objects, add_plugin_devices
from kubedra.simulate.inputs import Inputs
from kubedra.simulate.results import ModeResult, Simulation, collect, memory_basis_note
from kubedra.simulate.served import unread_taint_rules, unserved_workloads
from kubedra.text import count

SCORINGS = ("LeastAllocated", "MostAllocated")


@dataclass(frozen=True)
class SimulateOptions:
    modes: tuple[str, ...] = MODES
    target_version: str = DEFAULT_TARGET
    feature_gates: str | None = None
    scoring: str = "LeastAllocated"
    sizing: str = "gpu"  # --dra-sizing
    gpu_memory: int | None = None  # --gpu-memory, bytes
    sharing: str | None = None  # --sharing time-slicing:N | mps:N: each claim's vendor gives its config
    preemption: bool = True
    cluster: ClusterOptions = field(default_factory=ClusterOptions)
    max_pods: int = MAX_PODS  # --max-pods
    # --percentage-of-nodes-to-score: KubeSchedulerConfiguration's field; 0 is upstream's adaptive default
    percentage_of_nodes_to_score: int = ADAPTIVE

    def check(self) -> None:
        if self.scoring not in SCORINGS:
            raise UsageError(f"--scoring must be one of {', '.join(SCORINGS)}")
        for m in self.modes:
            if m not in MODES:
                raise UsageError(f"unknown mode {m!r} (expected device-plugin, dra or both)")
        try:
            check_percentage(self.percentage_of_nodes_to_score)
        except ValueError as e:
            raise UsageError(f"--percentage-of-nodes-to-score: {e}") from None


@dataclass
class Prepared:
    """One mode's pods and the claim objects they need."""

    pods: list[Pod] = field(default_factory=list)
    # the pod set each of ``pods`` comes from (its owner; ``existing``: a bound pod of the cluster): a list beside
    # ``pods``, not a map by id (a large cluster's running pods are most of them)
    sets: list[PodSet] = field(default_factory=list)
    templates: list[ResourceClaimTemplate] = field(default_factory=list)
    claims: list[ResourceClaim] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)  # id(pod) -> why it cannot be scheduled
    need: dict[int, int] = field(default_factory=dict)  # id(pod) -> declared GPU memory per device
    notes: list[str] = field(default_factory=list)


def _memory_slices(d: object) -> int:
    """Memory slices a MIG device occupies: its memory-slice counters (dynamic) or memorySlice capacities."""
    n = 0
    for cc in getattr(d, "consumes_counters", ()):
        n += sum(1 for k in cc.counters if k.startswith("memory-slice-"))
    if not n:
        n = sum(1 for k in getattr(d, "capacity", {}) if k.startswith("memorySlice"))
    return n


def mig_offers(view: ClusterView) -> tuple[MigOffer, ...]:
    """MIG profiles the DRA view publishes (the drivers of vendors with partition profiles: NVIDIA's), with their
    device memory per GPU model.

    Profiles with attributes (``1g.10gb+me``: media extensions, one per GPU) are left out: sizing by
    memory picks the plain profiles."""
    mems: dict[str, set[int]] = {}
    slots: dict[str, int] = {}
    drivers = {v.driver for v in vendors.all() if v.partition_profiles()}
    for s in view.slices:
        if s.driver not in drivers:
            continue
        for d in s.devices:
            t = d.attributes.get("type")
            p = d.attributes.get("profile")
            if t is None or t.value != "mig" or p is None or "+" in str(p.value):
                continue
            cap = d.capacity.get("memory")
            profile = str(p.value)
            mems.setdefault(profile, set()).add(cap.value.value() if cap else 0)
            n = _memory_slices(d)
            if n:
                slots[profile] = min(slots.get(profile, n), n)
    out = []
    for profile, m in sorted(mems.items()):
        head = profile.split("g.", 1)[0]
        out.append(
            MigOffer(profile, tuple(sorted(m)), slots.get(profile, 0), int(head) if head.isdigit() else 0)
        )
    return tuple(out)


def _resolve_specs(
    pod: Pod, inv: Inventory, claims_by_key: dict[tuple[str, str], ResourceClaim]
) -> tuple[list[tuple[str, DeviceClaim]], str | None]:
    ns = namespaces.effective(pod.meta.namespace)
    tmpl = {(namespaces.effective(t.meta.namespace), t.meta.name): t for t in inv.templates}
    out: list[tuple[str, DeviceClaim]] = []
    for rc in pod.resource_claims:
        if rc.resource_claim_template_name:
            t = tmpl.get((ns, rc.resource_claim_template_name))
            if t is None:
                return [], f'resourceclaimtemplate "{rc.resource_claim_template_name}" not found'
            out.append((rc.name, t.spec))
        elif rc.resource_claim_name:
            c = claims_by_key.get((ns, rc.resource_claim_name))
            if c is None:
                return [], f'resourceclaim "{rc.resource_claim_name}" not found'
            out.append((rc.name, c.spec))
    return out, None


def prepare_device_plugin(sets: Sequence[PodSet], inv: Inventory, opts: SimulateOptions) -> Prepared:
    prep = Prepared()
    claims_by_key = {(namespaces.effective(c.meta.namespace), c.meta.name): c for c in inv.claims}
    classes = {c.name: c for c in inv.classes}
    converted = 0
    domains: set[str] = set()
    for ps in sets:
        tmpl = ps.template
        need = memory_need(tmpl, opts.gpu_memory, ps.location)
        reason: str | None = None
        if tmpl.resource_claims:
            specs, reason = _resolve_specs(tmpl, inv, claims_by_key)
            if reason is None:
                new, reason = to_device_plugin(tmpl, specs, classes)
                if reason is None:
                    converted += 1
                    domains.update(
                        v.resource_domain.rstrip("/")
                        for c in (*new.containers, *new.init_containers)
                        for name in (*c.requests, *c.limits)
                        if (v := vendors.for_resource(name)) is not None
                    )
                    ps = dataclasses.replace(ps, template=new)
        for pod in _instantiate(ps):
            prep.pods.append(pod)
            prep.sets.append(ps)
            if reason is not None and not ps.existing:
                prep.reasons[id(pod)] = reason
            if need is not None:
                prep.need[id(pod)] = need
    if converted:
        prep.notes.append(
            f"device-plugin view: {count(converted, 'pod template')} written with ResourceClaims converted to "
            f"{' and '.join(sorted(domains))} extended resources"
        )
    return prep


def _instantiate(ps: PodSet) -> list[Pod]:
    if ps.per_pod is not None:
        out = []
        for p in ps.per_pod:
            # what differs per pod: its name, its pin and (a DaemonSet's) the tolerations its controller adds;
            # converting the template for a view changes neither
            q = dataclasses.replace(ps.template, meta=p.meta, affinity=p.affinity, tolerations=p.tolerations)
            out.append(q)
        return out
    return ps.pods()


def _owner_name(ps: PodSet) -> str:
    return ps.owner.rsplit("/", 1)[-1]


def prepare_dra(  # noqa: C901 - converts every pod set with the naming and counting state they share
    sets: Sequence[PodSet], inv: Inventory, opts: SimulateOptions, offers: tuple[MigOffer, ...]
) -> Prepared:
    prep = Prepared(templates=list(inv.templates))
    dra_opts = DraOptions(
        sizing=opts.sizing, gpu_memory=opts.gpu_memory, offers=offers, release=opts.target_version
    )
    taken = {(namespaces.effective(t.meta.namespace), t.meta.name) for t in inv.templates}
    taken |= {(namespaces.effective(c.meta.namespace), c.meta.name) for c in inv.claims}
    rcts: dict[tuple[str, tuple[object, ...]], ResourceClaimTemplate] = {}
    whole_without_need = 0
    sharing = opts.sharing
    shared_claims = 0
    shared_as: vendors.ClaimSharing | None = None  # the config of the claims shared (the note's replicas)
    unshared: dict[str, int] = {}  # Vendor.name -> pods whose claims --sharing cannot share (no such config)
    gpu_shared_pods = 0
    shared_names: set[str] = set()

    def free(ns: str, base: str) -> str:
        name, k = base, 2
        while (ns, name) in taken:
            name, k = f"{base}-{k}", k + 1
        taken.add((ns, name))
        return name

    for ps in sets:
        version = to_dra(ps.template, dra_opts, ps.location)
        pods_of_set = _instantiate(
            ps if version.pod is ps.template else dataclasses.replace(ps, template=version.pod)
        )
        ns = ps.namespace
        if version.spec is not None and version.claim_name is not None:
            if opts.sizing == "mig" and version.need_bytes is None:
                whole_without_need += len(pods_of_set)
            if version.shared_resource and sharing is None:
                gpu_shared_pods += len(pods_of_set)
                shared_names.update(w.resource.name for w in version.wants if w.resource.kind == "shared")
            share = None
            if sharing is not None and version.shareable and version.vendor is not None and not ps.existing:
                # the claim's own vendor's config: another vendor's driver would not read it
                share = vendors.get(version.vendor).claim_sharing(sharing)
                if share is None:
                    unshared[version.vendor] = unshared.get(version.vendor, 0) + len(pods_of_set)
            group = share.replicas if share is not None else 0
            if share is not None and group > 1:
                shared_as = share
                spec = version.spec
                spec = DeviceClaim(
                    requests=spec.requests,
                    constraints=spec.constraints,
                    config=[
                        DeviceClaimConfiguration(
                            requests=[],
                            opaque=OpaqueDeviceConfiguration(share.driver, share.parameters),
                        )
                    ],
                )
                claim: ResourceClaim | None = None
                for i, pod in enumerate(pods_of_set):
                    if i % group == 0:
                        claim = ResourceClaim(
                            meta=ObjectMeta(
                                name=free(ns, f"{_owner_name(ps)}-gpu-shared-{i // group}"), namespace=ns
                            ),
                            spec=spec,
                        )
                        prep.claims.append(claim)
                        shared_claims += 1
                    assert claim is not None
                    pod.resource_claims = [
                        *pod.resource_claims[:-1],
                        PodResourceClaim(name=version.claim_name, resource_claim_name=claim.meta.name),
                    ]
            else:
                key = (ns, version.key)
                rct = rcts.get(key)
                if rct is None:
                    rct = ResourceClaimTemplate(
                        meta=ObjectMeta(name=free(ns, f"{_owner_name(ps)}-gpu"), namespace=ns),
                        spec=version.spec,
                    )
                    rcts[key] = rct
                    prep.templates.append(rct)
                entry = PodResourceClaim(name=version.claim_name, resource_claim_template_name=rct.meta.name)
                resource_claims = [*version.pod.resource_claims[:-1], entry]
                for pod in pods_of_set:
                    pod.resource_claims = resource_claims
        for pod in pods_of_set:
            prep.pods.append(pod)
            prep.sets.append(ps)
            if version.error is not None and not ps.existing:
                prep.reasons[id(pod)] = version.error
            if version.need_bytes is not None:
                prep.need[id(pod)] = version.need_bytes
    prep.claims = [*(copy.copy(c) for c in inv.claims), *prep.claims]
    if whole_without_need:
        prep.notes.append(
            f"--dra-sizing mig: {count(whole_without_need, 'pod')} declare no GPU memory (annotation "
            "kubedra.io/gpu-memory or --gpu-memory) and keep whole GPUs"
        )
    if gpu_shared_pods:
        prep.notes.append(
            f"{count(gpu_shared_pods, 'pod')} ask for time-sliced {', '.join(sorted(shared_names))}: in DRA pods share "
            "a GPU only "
            "through one ResourceClaim; pass --sharing time-slicing:<pods per GPU> to model that"
        )
    if shared_claims and shared_as is not None:
        prep.notes.append(
            f"--sharing {shared_as}: {count(shared_claims, 'shared ResourceClaim')}, each used by up to "
            f"{shared_as.replicas} pods of one workload"
        )
    for name, pods in sorted(unshared.items()):
        vendor = vendors.get(name)
        why = vendor.unsupported("sharing") or f"{vendor.title}'s DRA driver has no config for it"
        prep.notes.append(
            f"--sharing {sharing}: not applied to the claims of {count(pods, 'pod')} on {vendor.title} GPUs "
            f"(one claim per pod): {why}"
        )
    return prep


def _gang_reasons(pods: Sequence[SimPod], workloads: Workloads) -> None:
    for sp in pods:
        if sp.pod.scheduling_group is None or sp.reason is not None or sp.pod.node_name:
            continue
        if sp.gang in workloads.held:
            sp.reason = workloads.held[sp.gang]
        elif sp.gang not in workloads.podgroups and sp.gang not in workloads.gangs:
            sp.reason = (
                f"waiting for PodGroup {sp.gang}, which is not in the input (kube-scheduler keeps the pod "
                "out of the scheduling queue until it exists)"
            )


def run_mode(
    mode: str,
    view: ClusterView,
    prep: Prepared,
    inv: Inventory,
    workloads: Workloads,
    cfg: EngineConfig,
    opts: SimulateOptions,
) -> ModeResult:
    start = time.perf_counter()
    cpu_start = time.process_time()
    dra = mode == DRA
    sched = Scheduler(
        cfg,
        view.nodes,
        view.classes if dra else (),
        view.slices if dra else (),
        view.taint_rules if dra else (),
        [c for c in prep.claims if c.allocation is not None] if dra else (),
        scoring=opts.scoring,
        percentage_of_nodes_to_score=opts.percentage_of_nodes_to_score,
        dra=dra,
        preemption=opts.preemption,
    )
    priorities = PriorityClasses.from_objects(d.obj for d in inv.others)
    sim_pods = build_sim_pods(
        prep.pods,
        prep.templates if dra else [],
        prep.claims if dra else [],
        priorities,
        ext_classes=sched.ext_classes,
        release=cfg.target_version,
    )
    known_nodes = set(sched.by_name)
    simulated: list[SimPod] = []
    for sp, ps in zip(sim_pods, prep.sets, strict=True):
        sp.owner = ps.owner
        if ps.existing:
            if sp.pod.node_name not in known_nodes:
                sp.extra["ignored"] = True
            sp.reason = None
            continue
        reason = prep.reasons.get(id(sp.pod))
        if reason is not None:
            sp.reason = reason
        if sp.reason is not None:
            sp.extra["blocked"] = True  # held back before the queue: no scheduler could place it
        if id(sp.pod) in prep.need:
            sp.extra["need"] = prep.need[id(sp.pod)]
        if sp.key in workloads.after:
            sp.extra["after"] = workloads.after[sp.key]
        simulated.append(sp)
    _gang_reasons(simulated, workloads)
    for sp in simulated:
        if sp.reason is not None:
            sp.extra["blocked"] = True
    runnable = [sp for sp in sim_pods if not sp.extra.get("ignored")]
    sched.run(runnable, gangs=workloads.gangs)
    prep.notes += [f"{mode}: {note}" for note in sched.notes]
    if sched.shortlisted:
        prep.notes.append(
            f"{mode}: {count(sched.shortlisted, 'preemption')} chose among the first candidates in node order: "
            f"like kube-scheduler, preemption stops once it has {candidates_rule(cfg.target_version)}, but "
            "kube-scheduler starts at a random node, so it may preempt on other nodes (the best of the "
            "candidates it found, ranked as here)"
        )
    simulated += sched.recreated  # replacements of pods evicted for device taints: scheduled like the rest
    seconds = time.perf_counter() - start
    return collect(mode, sched, view, simulated, seconds, time.process_time() - cpu_start)


def _unmodelled_nodes(inv: Inventory, release: str) -> list[Skipped]:
    """Nodes whose allocatable the release's kube-scheduler reads in a way kubedra does not model
    (:func:`kubedra.scheduler.pods.node_unmodelled`): named, and the simulation is incomplete."""
    out = []
    for node in inv.nodes:
        why = node_unmodelled(node, release)
        if why is not None:
            doc = inv.source_of(node)
            where = Location(doc.file, doc.line) if doc is not None else None
            out.append(Skipped(where, f"Node {node.name}", why))
    return out


def _pods_by_doc(inv: Inventory) -> dict[int, Pod]:
    out = {}
    for pod in inv.pods:
        doc = inv.source_of(pod)
        if doc is not None:
            out[id(doc)] = pod
    return out


def simulate(inputs: Inputs, opts: SimulateOptions) -> Simulation:
    with paused_gc():  # the model, cluster and pods are large and acyclic (kubedra.gcpause)
        return _simulate(inputs, opts)


def _simulate(inputs: Inputs, opts: SimulateOptions) -> Simulation:
    opts.check()
    cfg = engine_config(opts.target_version, opts.feature_gates)
    # streamed input was modelled while it was read (its documents keep only what expand() reads)
    inv = inputs.inventory if inputs.inventory is not None else build_inventory(inputs.documents)
    made = add_created_objects(inv, opts.target_version)  # a ComputeDomain's ResourceClaimTemplate
    cluster_opts = dataclasses.replace(opts.cluster, target_version=opts.target_version, modes=opts.modes)
    cluster: Cluster = build_cluster(inv, cluster_opts)
    if DRA in cluster.views:
        add_plugin_devices(cluster.views[DRA], made)
    first = next(iter(cluster.views.values()))
    workloads = expand(
        inputs.documents, _pods_by_doc(inv), first.nodes, max_pods=opts.max_pods, release=opts.target_version
    )
    unserved = unserved_workloads(inputs.documents, opts.target_version)
    sim = Simulation(
        cluster=cluster,
        workloads=workloads,
        skipped=[
            *inputs.skipped,
            *unserved,
            *workloads.skipped,
            *_unmodelled_nodes(inv, opts.target_version),
        ],
    )
    sim.notes += cluster.notes
    if DRA in cluster.views and (
        unread := unread_taint_rules(cluster.views[DRA].taint_rules, cfg.target_version, cfg.gates)
    ):
        sim.notes.append(unread)
    sim.notes += [n for n in inv.notes]
    sim.notes += workloads.notes  # Kueue admission and quotas, generateName names, gang problems...
    if workloads.schedulers:
        names_ = ", ".join(f"{k} ({v} pods)" for k, v in sorted(workloads.schedulers.items()))
        sim.notes.append(
            f"pods name other schedulers ({names_}); simulated with kube-scheduler's default profile"
        )
    if workloads.gangs and not (cfg.gates.get("GangScheduling") or cfg.gates.get("GenericWorkload")):
        sim.notes.append(
            f"gangs are placed all-or-nothing; kube-scheduler {cfg.target_version} does that only with the "
            "GenericWorkload/GangScheduling feature gates (off by default) or with a gang scheduler "
            "(Volcano, KAI, Kueue)"
        )
    dp_view = cluster.views.get(DP)
    replicas = max((i.replicas for i in dp_view.dp_info.values()), default=1) if dp_view else 1
    if replicas > 1 and opts.sharing is None and DRA in opts.modes:
        sim.notes.append(
            f"the device plugin shares each GPU between {replicas} pods (time-slicing/MPS replicas); in DRA pods "
            f"share a GPU only through one claim: pass --sharing time-slicing:{replicas} to compare like for like"
        )
    for mode in opts.modes:
        view = cluster.views[mode]
        if mode == DP:
            prep = prepare_device_plugin(workloads.sets, inv, opts)
        else:
            prep = prepare_dra(workloads.sets, inv, opts, mig_offers(view) if opts.sizing == "mig" else ())
        sim.results[mode] = run_mode(mode, view, prep, inv, workloads, cfg, opts)
        sim.notes += prep.notes
    basis = memory_basis_note(cluster)
    if basis is not None:
        sim.notes.append(basis)
    return sim


__all__ = ["SCORINGS", "SimulateOptions", "Simulation", "build_inventory", "simulate"]
