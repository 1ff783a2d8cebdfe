"""Workloads → the pods a controller would create, for the simulator.

Each workload object becomes :class:`PodSet` s, one per pod template (and per group), holding the parsed
template (:class:`~kubedra.model.objects.Pod`) and the names of the pods made from it. Where the templates are,
how many pods each stands for and which gangs the operator asks for is shared knowledge
(:mod:`kubedra.k8s.workloads`, facts in ``data/workloads.yaml``, also used by ``kubedra migrate``); on top of that:

- Job: ``parallelism`` (default 1), capped by ``completions``; CronJob: one Job run.
- LeaderWorkerSet: ``replicas`` groups named ``<name>-<g>`` (leader) and ``<name>-<g>-<j>`` (workers), each
  group its own gang of ``size`` pods.
- Pods the operator creates only after others are Ready (MPIJob launcher with ``WaitForWorkersReady``, LWS
  workers with ``LeaderReady``) wait for those pods: they exist only once those are placed.
- Suspended workloads (``suspend: true``) create no pods and are reported; a workload queued in Kueue
  (``kueue.x-k8s.io/queue-name``) is simulated as admitted (quota is not simulated) and noted.
- TrainJob: the JobSet its (Cluster)TrainingRuntime makes, with ``numNodes`` and ``resourcesPerNode``.
- DaemonSet: one pod per node the pod may run on (nodeName, nodeSelector, required affinity, NoSchedule and
  NoExecute taints, with the tolerations the controller adds: :mod:`kubedra.scheduler.daemonpods`), pinned with a
  ``metadata.name`` matchFields term like the DaemonSet controller does.
- A workload's pods already in the input (a snapshot's running pods, :mod:`kubedra.scheduler.owned`) are
  simulated as they are and not made again: a DaemonSet gets pods only on nodes without one, a single-template
  workload the replicas missing; for a workload of several templates this is not decided (reported).
- Pod names are deterministic: ``<workload>-<role>-<i>`` (``<workload>-<i>`` for single-template kinds);
  creation order is input order.
- Gangs: PodGroups (``scheduling.k8s.io`` v1alpha2/v1alpha3/v1beta1 ``spec.schedulingPolicy.gang.minCount``)
  and v1alpha1 Workloads (``spec.podGroups[].policy.gang.minCount``, pods join with ``spec.workloadRef``);
  pods join with ``spec.schedulingGroup.podGroupName``; scheduler-plugins PodGroups (``scheduling.x-k8s.io``
  ``spec.minMember``), pods join with the label ``scheduling.x-k8s.io/pod-group``. Operator gangs (Volcano, Kubeflow, JobSet, LWS, Ray,
  Jobs that ask for one) come from :func:`kubedra.k8s.workloads.gang`, the same sizes ``kubedra migrate`` writes.
- Anything that cannot become pods is reported precisely (:class:`Skipped`): KAI/HAMi fraction annotations
  without an extended resource, GPU requests hidden in a custom resource's own fields, pods waiting for a
  missing PodGroup are reported by the simulator itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.errors import InputError, Location
from kubedra.k8s import dnsnames, kueue
from kubedra.k8s import workloads as k8s
from kubedra.k8s.gpuschemes import annotation_schemes
from kubedra.k8s.podadmission import refusal
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.k8s.workloads import (
    PodTemplate,
    api_group,
    custom_resource_gpu_fields,
    dotted,
    get_path,
    pod_templates,
)
from kubedra.model.fields import ParseContext, object_meta, path_steps
from kubedra.model.identity import key_of
from kubedra.model.objects import Node, Pod
from kubedra.model.parse import pod_spec
from kubedra.scheduler import owned
from kubedra.scheduler.daemonpods import daemon_pods, named
from kubedra.scheduler.pods import unmodelled
from kubedra.scheduler.skipped import Skipped
from kubedra.sources.files import Document

DEFAULT_SCHEDULERS = ("", "default-scheduler")


@dataclass(slots=True)
class PodSet:
    """Pods made from one template: same spec, different names (slotted: a snapshot has one per running pod)."""

    template: Pod
    names: list[str]
    owner: str  # "Deployment/ns/name" ("Pod/ns/name" for a bare pod)
    role: str = ""
    location: Location | None = None
    existing: bool = False  # a bound pod of the cluster (spec.nodeName set)
    per_pod: list[Pod] | None = None  # pods that differ per name (DaemonSet pins)

    @property
    def namespace(self) -> str:
        return self.template.meta.namespace or "default"

    def pods(self) -> list[Pod]:
        if self.per_pod is not None:
            return list(self.per_pod)
        if len(self.names) == 1 and self.names[0] == self.template.meta.name:
            return [self.template]
        return [named(self.template, n) for n in self.names]


@dataclass
class Workloads:
    sets: list[PodSet] = field(default_factory=list)
    gangs: dict[str, int] = field(default_factory=dict)  # "ns/group" -> minCount
    gang_sources: dict[str, str] = field(default_factory=dict)  # "ns/group" -> where minCount came from
    podgroups: set[str] = field(default_factory=set)  # "ns/group" of PodGroup/Workload objects (incl. basic)
    held: dict[str, str] = field(default_factory=dict)  # "ns/group" -> why its pods are never scheduled
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    schedulers: dict[str, int] = field(default_factory=dict)  # non-default schedulerName -> pods
    # pod key ("ns/name") -> (keys of the pods that must be placed first, why)
    after: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)


def _workload_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = meta.get("name") or str(meta.get("generateName") or "").rstrip("-")
    return str(name or "unnamed")


def _namespace(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return str(meta.get("namespace") or "default")


def _parse_template(doc: Document, tmpl: PodTemplate, namespace: str) -> Pod:
    """The typed pod of one template; errors name the file:line of the offending field."""
    spec = get_path(doc.obj, tmpl.spec)
    raw_meta = get_path(doc.obj, tmpl.metadata)
    loc = doc.location
    c = ParseContext(loc)
    try:
        meta = object_meta(c, raw_meta if isinstance(raw_meta, Mapping) else {})
        meta.namespace = namespace
        return pod_spec(c, meta, spec if isinstance(spec, dict) else {})
    except InputError as e:
        path = str(getattr(e, "field_path", None) or "")
        if path.startswith("metadata"):
            prefix, rest = tmpl.metadata, path.removeprefix("metadata").lstrip(".")
        else:
            prefix, rest = tmpl.spec, path.removeprefix("spec").lstrip(".")
        steps = [*prefix, *(path_steps(rest) if rest else [])]
        shown = dotted(tuple(prefix)) + ("." + rest if rest else "")
        raise InputError(
            f"{doc.describe()}: {shown}: {e.message.split(': ', 1)[-1]}",
            Location(file=doc.file, line=doc.line_of(steps)),
        ) from None


def _has_gpu(pod: Pod) -> bool:
    if pod.resource_claims:
        return True
    for c in [*pod.init_containers, *pod.containers]:
        for name in (*c.requests, *c.limits):
            if vendors.classify(name) is not None or name.startswith("deviceclass.resource.kubernetes.io/"):
                return True
    return False


def _fraction_annotation(pod: Pod) -> tuple[str, str, str] | None:
    for sch in annotation_schemes(pod.meta.annotations):
        return sch.key, pod.meta.annotations[sch.key], f"{sch.reason} ({sch.scheme})"
    return None


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _creation_order(parsed: list[tuple[PodTemplate, Pod]]) -> list[tuple[PodTemplate, Pod]]:
    """Templates in the order the controller creates their pods: one that waits for a role after that role."""
    out: list[tuple[PodTemplate, Pod]] = []
    left = list(parsed)
    while left:
        done = {t.role for t, _ in out}
        ready = [
            x
            for x in left
            if not x[0].after
            or x[0].after in done
            or x[0].after not in {t.role for t, _ in left} - {x[0].role}
        ]
        if not ready:  # a cycle: keep input order
            ready = left[:1]
        out.extend(ready)
        left = [x for x in left if x not in ready]
    return out


class _Expander:
    def __init__(
        self, nodes: Sequence[Node], max_pods: int | None = None, release: str = DEFAULT_TARGET
    ) -> None:
        self.nodes = nodes
        self.release = release
        self.made: dict[owned.Key, list[Pod]] = {}  # the input's pods, by the workload that made them
        self.out = Workloads()
        self.seen_names: set[tuple[str, str]] = set()
        self.max_pods = max_pods
        self.pods = 0

    def _room(self, n: int, doc: Document, location: Location) -> None:
        """Count ``n`` more pods; InputError (before any is made) beyond ``max_pods``."""
        self.pods += max(n, 0)
        if self.max_pods is not None and self.pods > self.max_pods:
            raise InputError(
                f"{doc.describe()} brings the simulation to {self.pods} pods, more than its bound of "
                f"{self.max_pods} (Kubernetes supports up to 150,000 pods per cluster); raise it with --max-pods",
                location,
            )

    def _unique(self, namespace: str, name: str, location: Location | None) -> str:
        """The pod name, with a numeric suffix when another workload's pod already has it."""
        key = (namespace, name)
        if key in self.seen_names:
            k = 2
            while (namespace, f"{name}-{k}") in self.seen_names:
                k += 1
            self.out.notes.append(
                f"{location}: pod name {namespace}/{name} is taken by another workload; simulated as {name}-{k}"
            )
            name = f"{name}-{k}"
            key = (namespace, name)
        self.seen_names.add(key)
        return name

    def _count_scheduler(self, pod: Pod, n: int) -> None:
        if pod.scheduler_name not in DEFAULT_SCHEDULERS and n:
            self.out.schedulers[pod.scheduler_name] = self.out.schedulers.get(pod.scheduler_name, 0) + n

    # ------------------------------------------------------------------ gang objects
    def scheduling_object(self, doc: Document) -> None:
        obj = doc.obj
        ns = _namespace(obj)
        name = _workload_name(obj)
        spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        if k8s.is_coscheduling_group(doc.api_version, doc.kind):
            key = f"{ns}/{name}"
            self.out.podgroups.add(key)
            n = k8s.coscheduling_min_member(obj)
            if n is not None and n > 0:
                self.out.gangs[key] = n
                self.out.gang_sources[key] = f"PodGroup {ns}/{name} spec.minMember (scheduler-plugins)"
        elif doc.kind == "PodGroup":
            key = f"{ns}/{name}"
            self.out.podgroups.add(key)
            n = k8s.as_int(get_path(spec, ("schedulingPolicy", "gang", "minCount")))
            if n is not None:
                self.out.gangs[key] = n
                self.out.gang_sources[key] = f"PodGroup {ns}/{name} spec.schedulingPolicy.gang.minCount"
        elif doc.kind == "Workload":
            for g in spec.get("podGroups") or []:
                if not isinstance(g, Mapping) or not g.get("name"):
                    continue
                key = f"{ns}/{name}/{g['name']}"
                self.out.podgroups.add(key)
                n = k8s.as_int(get_path(g, ("policy", "gang", "minCount")))
                if n is not None:
                    self.out.gangs[key] = n
                    self.out.gang_sources[key] = f"Workload {ns}/{name} podGroup {g['name']} gang.minCount"

    # ------------------------------------------------------------------ pods
    def bare_pod(self, doc: Document, pod: Pod) -> None:
        if pod.phase in ("Succeeded", "Failed"):
            return
        ns = pod.meta.namespace or "default"
        if pod.meta.namespace == "":
            pod.meta.namespace = ns
        obj = doc.obj  # read once: a streamed pod's document makes its mapping each time it is read
        if not pod.meta.name:
            generate = _map(obj.get("metadata")).get("generateName")
            if not generate:
                raise InputError(f"{doc.describe()}: pod without metadata.name", doc.location)
            # the apiserver appends 5 random characters; the simulation names it deterministically
            pod.meta.name = f"{generate}{len(self.seen_names):05d}"
            self.out.notes.append(
                f"{doc.location}: Pod with generateName {generate!r} simulated as {ns}/{pod.meta.name}"
            )
        pod.meta.name = self._unique(ns, pod.meta.name, doc.location)
        queue = k8s.queue_name(obj)
        if queue and not pod.node_name:
            self.out.notes.append(
                f"{doc.location}: Pod {ns}/{pod.meta.name} is queued in Kueue LocalQueue {queue}: simulated as "
                "admitted; queue quotas are not simulated"
            )
        self._link_workload_ref(obj.get("spec"), pod)
        existing = bool(pod.node_name)
        if not existing and self._refused(doc, obj.get("spec"), ("spec",), f"Pod {ns}/{pod.meta.name}", pod):
            return
        frac = _fraction_annotation(pod)
        if frac and not _has_gpu(pod) and not existing:
            self._skip_fraction(doc.location, f"Pod {ns}/{pod.meta.name}", frac)
            return
        if not existing:
            self._count_scheduler(pod, 1)
        self.out.sets.append(
            PodSet(
                template=pod,
                names=[pod.meta.name],
                owner=f"Pod/{ns}/{pod.meta.name}",
                location=doc.location,
                existing=existing,
            )
        )

    def _link_workload_ref(self, spec: Any, pod: Pod) -> None:
        """1.35 pods join a Workload's pod group with spec.workloadRef{name, podGroup}; a scheduler-plugins
        PodGroup's pods with the label scheduling.x-k8s.io/pod-group."""
        ref = spec.get("workloadRef") if isinstance(spec, Mapping) else None
        if pod.scheduling_group is None and isinstance(ref, Mapping) and ref.get("name"):
            pod.scheduling_group = f"{ref.get('name')}/{ref.get('podGroup') or ''}"
        if pod.scheduling_group is None:
            pod.scheduling_group = k8s.coscheduling_pod_group(pod.meta.labels)

    def _refused(
        self,
        doc: Document,
        spec: Any,
        path: tuple[str | int, ...],
        what: str,
        pod: Pod,
        obj: Mapping[str, Any] | None = None,
    ) -> bool:
        """Pods the apiserver refuses are never created: reported (refused), not placed; pods whose requests the
        release reads in a way kubedra does not model (:func:`kubedra.scheduler.pods.unmodelled`) are reported,
        not placed. ``obj``: what the template is read from (the document itself unless given)."""
        found = refusal(spec, path, doc.obj if obj is None else obj, self.release)
        if found is not None:
            self.out.skipped.append(
                Skipped(Location(doc.file, doc.line_of(found[0])), what, found[1], refused=True)
            )
        elif (why := unmodelled(pod, self.release)) is not None:  # read past int64: not simulated (exit 2)
            self.out.skipped.append(Skipped(Location(doc.file, doc.line_of(path)), what, why))
        return found is not None or why is not None

    def _skip_fraction(self, location: Location | None, what: str, frac: tuple[str, str, str]) -> None:
        key, value, kind = frac
        whole = " or ".join(v.gpu_resource for v in vendors.all())
        self.out.skipped.append(
            Skipped(
                location,
                what,
                f"{kind} annotation {key}={value!r} without an extended resource: its GPU share is decided "
                f"by that scheduler, not by kube-scheduler; not simulated (request {whole}, or a claim, "
                "to include it)",
            )
        )

    def workload(  # noqa: C901 - a controller's checks before it makes pods, in its order
        self, doc: Document, templates: list[PodTemplate], obj: Mapping[str, Any] | None = None
    ) -> None:
        """Pods of one workload. ``obj`` is what the templates are read from when it is not the document
        itself (the JobSet a TrainJob makes)."""
        obj = doc.obj if obj is None else obj
        view = doc if obj is doc.obj else dataclasses.replace(doc, obj=dict(obj))
        ns = _namespace(doc.obj)
        name = _workload_name(doc.obj)
        owner = f"{doc.kind}/{ns}/{name}"
        why_not = k8s.suspended(doc.obj)
        if why_not:
            self.out.skipped.append(Skipped(doc.location, doc.describe(), why_not, as_cluster=True))
            return
        queue = k8s.queue_name(obj)
        if queue:
            self.out.notes.append(
                f"{doc.location}: {doc.describe()} is queued in Kueue LocalQueue {queue}: simulated as admitted "
                "(all its pod sets at once); queue quotas are not simulated"
            )
        parsed = [(t, _parse_template(view, t, ns)) for t in templates]
        for t, pod in parsed:
            self._link_workload_ref(get_path(obj, t.spec), pod)
        gang = k8s.gang(obj, templates)
        single = len(templates) == 1 and not templates[0].role
        gang_key: str | None = None
        if gang is not None and not any(p.scheduling_group for _, p in parsed):
            gang_key = f"{ns}/{name}"
            if gang.held and gang.problem:  # pending with the reason, not a note beside pods placed anyway
                self.out.held[gang_key] = gang.problem
            elif gang.problem:
                self.out.notes.append(f"{doc.location}: {doc.describe()}: {gang.problem}")
            if not gang.per_group:
                self.out.gangs[gang_key] = gang.min_count
                self.out.gang_sources[gang_key] = f"{doc.describe()} {gang.source}"
        by_role: dict[tuple[str, int], list[str]] = {}  # (role, group) -> pod keys, for pods that wait
        for t, pod in _creation_order(parsed):
            role = dnsnames.as_dns_label(t.role) if t.role else ""
            base = name if single or not role else f"{name}-{role}"
            what = f"{doc.describe()}" + (f" {t.role}" if t.role else "")
            frac = _fraction_annotation(pod)
            if frac and not _has_gpu(pod):
                self._skip_fraction(Location(doc.file, doc.line_of(t.metadata)), what, frac)
                continue
            if self._refused(doc, get_path(obj, t.spec), t.spec, what, pod, obj):
                continue
            if gang_key is not None and not t.after:
                pod.scheduling_group = name
            pod.meta.owner_references = [{"kind": doc.kind, "name": name}]
            location = Location(doc.file, doc.line_of(t.spec))
            have = self.made.get((api_group(doc.api_version), doc.kind, ns, name), [])
            daemon = (doc.kind, api_group(doc.api_version)) == ("DaemonSet", "apps")
            if have and not daemon and not single:
                self.out.skipped.append(Skipped(location, what, owned.undecided(have)))
                continue
            if have:
                self.out.notes.append(f"{location}: {what}: {owned.note(have, daemon)}")
            if doc.kind == "DaemonSet" and api_group(doc.api_version) == "apps":
                pods = daemon_pods(pod, base, self.nodes, owned.nodes_of(have))
                for p in pods:
                    self._unique(ns, p.meta.name, location)
                self._count_scheduler(pod, len(pods))
                self.out.sets.append(
                    PodSet(pod, [p.meta.name for p in pods], owner, t.role, location, per_pod=pods)
                )
                continue
            if api_group(doc.api_version) == "leaderworkerset.x-k8s.io":
                self._grouped(doc, t, pod, name, gang, by_role, owner, location)
                continue
            replicas = t.replicas - len(have)  # the controller makes what is missing
            self._room(replicas, doc, location)
            names = [self._unique(ns, f"{base}-{i}", location) for i in range(max(replicas, 0))]
            by_role[(t.role, 0)] = [f"{ns}/{n}" for n in names]
            self._count_scheduler(pod, len(names))
            if names:
                pod.meta.name = names[0]
                self.out.sets.append(PodSet(pod, names, owner, t.role, location))
                self._wait(t, by_role, names, ns, doc, 0)

    def _grouped(
        self,
        doc: Document,
        t: PodTemplate,
        pod: Pod,
        name: str,
        gang: k8s.Gang | None,
        by_role: dict[tuple[str, int], list[str]],
        owner: str,
        location: Location,
    ) -> None:
        """LeaderWorkerSet: group g is the leader ``<name>-<g>`` and workers ``<name>-<g>-<j>`` (j from 1)."""
        ns = pod.meta.namespace or "default"
        groups = max(t.groups, 1)
        per = t.replicas // groups if groups else 0
        self._room(groups * max(per, 1), doc, location)
        for g in range(groups):
            if t.role == "leader":
                raw = [f"{name}-{g}"]
            elif t.role == "worker":
                raw = [f"{name}-{g}-{j}" for j in range(1, per + 1)]
            else:  # the leader is made from the worker template too
                raw = [f"{name}-{g}"] + [f"{name}-{g}-{j}" for j in range(1, per)]
            names = [self._unique(ns, n, location) for n in raw]
            by_role[(t.role, g)] = [f"{ns}/{n}" for n in names]
            if not names:
                continue
            member = named(pod, names[0])
            if gang is not None and gang.per_group and not t.after:
                key = f"{ns}/{name}-{g}"
                member.scheduling_group = f"{name}-{g}"
                self.out.gangs[key] = gang.min_count
                self.out.gang_sources[key] = f"{doc.describe()} {gang.source}"
            self._count_scheduler(member, len(names))
            self.out.sets.append(PodSet(member, names, owner, t.role, location))
            self._wait(t, by_role, names, ns, doc, g)

    def _wait(
        self,
        t: PodTemplate,
        by_role: dict[tuple[str, int], list[str]],
        names: list[str],
        ns: str,
        doc: Document,
        group: int,
    ) -> None:
        if not t.after:
            return
        first = by_role.get((t.after, group)) or by_role.get((t.after, 0)) or []
        why = (
            f"not created yet: {doc.describe()} creates its {t.role or 'pods'} only after its {t.after} pods are "
            "Ready, and they could not all be placed"
        )
        for n in names:
            self.out.after[f"{ns}/{n}"] = (tuple(first), why)

    def trainjob(self, doc: Document, runtimes: Mapping[tuple[str, str, str], Document]) -> None:
        ref = k8s.trainjob_runtime(doc.obj)
        runtime = None
        if ref is not None:
            kind, rname = ref
            runtime = runtimes.get(
                (kind, (doc.namespace or "default") if kind == "TrainingRuntime" else "", rname)
            )
        if runtime is None:
            self.out.skipped.append(
                Skipped(
                    doc.location,
                    doc.describe(),
                    f"its {' '.join(ref) if ref else 'runtime'} is not in the input: the pods a TrainJob runs "
                    "come from its (Cluster)TrainingRuntime; add the runtime to the input",
                )
            )
            return
        jobset = k8s.trainjob_jobset(doc.obj, runtime.obj)
        templates = pod_templates(jobset) or []
        self.workload(doc, templates, jobset)

    def unknown(self, doc: Document, runtime: bool = False) -> None:
        if quotas := kueue.gpu_quotas(
            doc.obj, vendors.gpu_names()
        ):  # configuration, not a pod creator: noted, never skipped
            self.out.notes.append(f"{doc.location}: {doc.describe()} {kueue.not_simulated(quotas)}")
        hits = custom_resource_gpu_fields(doc.obj, vendors.gpu_names())
        if not hits:
            return
        path, value = hits[0]
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        why = (  # a (Cluster)TrainingRuntime runs no pods of its own: each TrainJob that names it does
            "a training runtime's pods run only as a TrainJob's (simulated with each TrainJob in the input)"
            if runtime
            else "kubedra does not know which pods its operator creates; simulate the pods or the Deployment "
            "it renders instead"
        )
        self.out.skipped.append(
            Skipped(
                Location(doc.file, doc.line_of(list(path))),
                doc.describe(),
                f"GPU request hidden in a field of the custom resource ({dotted(path)} = {value!r}){more}: {why}",
                as_cluster=runtime,
            )
        )


def _last_definitions(docs: list[Document], out: Workloads) -> list[Document]:
    """An object defined twice (same API group, kind, namespace and name: :func:`kubedra.model.identity.key_of`)
    is the later definition, as ``kubectl apply`` of both files would leave it; the earlier one is reported."""
    keys = [key_of(doc) for doc in docs]
    last = {key: doc for key, doc in zip(keys, docs, strict=True) if key is not None}
    keep: list[Document] = []
    for key, doc in zip(keys, docs, strict=True):
        winner = last.get(key) if key is not None else None
        if winner is not None and winner is not doc:
            out.skipped.append(
                Skipped(
                    doc.location,
                    doc.describe(),
                    f"defined again at {winner.location}; the later definition replaces this one "
                    "(as kubectl apply of both would)",
                    as_cluster=True,
                )
            )
            continue
        keep.append(doc)
    return keep


def expand(
    documents: Iterable[Document],
    pods: Mapping[int, Pod] | None = None,
    nodes: Sequence[Node] = (),
    max_pods: int | None = None,
    release: str = DEFAULT_TARGET,
) -> Workloads:
    """Expand every workload in ``documents`` (input order) into pod sets, gangs and skip reports.

    ``pods`` maps ``id(document)`` to its already-parsed Pod (from the inventory), so bare pods are not
    parsed twice; ``nodes`` are the cluster's nodes (for DaemonSets); ``release``: the apiserver whose
    refusals apply (:mod:`kubedra.k8s.podadmission`).
    """
    ex = _Expander(nodes, max_pods, release)
    docs = _last_definitions(list(documents), ex.out)
    runtimes = {
        (d.kind, (d.namespace or "default") if d.kind == "TrainingRuntime" else "", d.name): d
        for d in docs
        if api_group(d.api_version) == "trainer.kubeflow.org"
        and d.kind in ("TrainingRuntime", "ClusterTrainingRuntime")
    }
    for doc in docs:  # PodGroups first: pods may come before their group in the files
        if (
            api_group(doc.api_version) == "scheduling.k8s.io" and doc.kind in ("PodGroup", "Workload")
        ) or k8s.is_coscheduling_group(doc.api_version, doc.kind):
            ex.scheduling_object(doc)
    bare = owned.bare_pods(docs, pods or {})
    ex.made = owned.made(docs, bare)  # a workload's pods in the input are not made again
    for doc in docs:
        group = api_group(doc.api_version)
        if id(doc) in bare:
            ex.bare_pod(doc, bare[id(doc)])
            continue
        if group == "scheduling.k8s.io" or k8s.is_coscheduling_group(doc.api_version, doc.kind):
            continue
        templates = pod_templates(doc.obj)
        if templates is None and group == "trainer.kubeflow.org" and doc.kind == "TrainJob":
            ex.trainjob(doc, runtimes)
            continue
        if templates is None:
            ex.unknown(doc, runtime=any(r is doc for r in runtimes.values()))
            continue
        if doc.kind in ("PodTemplate",) and group == "":
            continue  # a template alone creates no pod
        ex.workload(doc, templates)
    return ex.out
