"""Workload → pods and gangs: how each controller and operator really creates pods, in one place.

Used by every verb (migrate rewrites the templates, simulate creates the pods, validate checks the pod specs,
audit finds the GPU requests). The facts — which field holds the templates, the replica defaults, how each
operator sizes its gang — are in ``kubedra/data/workloads.yaml`` with the upstream code they were read from.

A :class:`PodTemplate` is a path to a pod spec inside an object, the path to the metadata that goes with it, a role
(``Worker``, ``ps``, ``head``…) and how many pods the controller makes from it now. ``groups`` > 1 splits those pods
into independent groups (LeaderWorkerSet replicas, each its own gang); ``after`` names the role whose pods must be
Ready before the controller creates these (MPIJob ``WaitForWorkersReady`` launcher, LWS ``LeaderReady`` workers).
Kinds not known here return ``None``: their GPU requests cannot be rewritten or simulated without guessing.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubedra.k8s import datafiles, kaigangs
from kubedra.k8s.gpunames import GpuNames

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class PodTemplate:
    spec: Path  # path to the PodSpec
    metadata: Path  # path to the pod (template) metadata
    role: str = ""  # replica type / task / group name; "" for single-template kinds
    replicas: int = 1  # pods the controller creates from this template now (all groups together)
    groups: int = 1  # independent groups the pods are split into (LWS: spec.replicas)
    after: str | None = None  # role whose pods must be Ready before these are created
    min_replicas: int | None = None  # elastic lower bound (PyTorchJob/PaddleJob elasticPolicy.minReplicas)


@dataclass(frozen=True)
class Gang:
    """All-or-nothing placement the operator asks for: ``min_count`` pods (per group when ``per_group``)."""

    min_count: int
    source: str  # what the size came from
    per_group: bool = False  # one gang per template group (LeaderWorkerSet)
    problem: str | None = None  # the gang as written can never start, and why
    held: bool = (
        False  # no PodGroup is made for it (KAI's pod-grouper refused it): its pods are never scheduled
    )
    native: bool = (
        False  # declared by the workload's own Kubernetes field (Job spec.scheduling): nothing to write
    )


@functools.cache
def facts() -> Mapping[str, Any]:
    """The workload facts (``kubedra/data/workloads.yaml``)."""
    data = datafiles.load("workloads.yaml")
    assert isinstance(data, Mapping)
    return data


def api_group(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def get_path(obj: Any, path: Path) -> Any:
    cur = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(cur, Sequence) or isinstance(cur, str) or step >= len(cur):
                return None
        elif not isinstance(cur, Mapping):
            return None
        cur = cur[step] if isinstance(step, int) else cur.get(step)
        if cur is None:
            return None
    return cur


def dotted(path: Path) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + step
    return out


def as_int(value: Any) -> int | None:
    """A whole number written as an int or a digit string; ``None`` otherwise (booleans, templates...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdigit() and len(text) <= 19:  # longer is no int64 (and int() refuses 4,300+)
        return int(text)
    return None


def _int(value: Any, default: int = 1) -> int:
    n = as_int(value)
    return default if n is None else n


def _field(dotted_path: str) -> Path:
    return tuple(dotted_path.split("."))


def _items(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [(i, v) for i, v in enumerate(value) if isinstance(v, Mapping)]


def _template(base: Path, role: str = "", replicas: int = 1, **kw: Any) -> PodTemplate:
    # a negative count is invalid (the apiserver refuses it): it stands for no pods, not fewer
    return PodTemplate(
        spec=(*base, "spec"), metadata=(*base, "metadata"), role=role, replicas=max(replicas, 0), **kw
    )


def _job_pods(job_spec: Any) -> int:
    """Pods a Job runs at once: parallelism (default 1) capped by completions."""
    par = as_int(get_path(job_spec, ("parallelism",)))
    comp = as_int(get_path(job_spec, ("completions",)))
    n = 1 if par is None else par
    if comp is not None:
        n = min(n, comp)
    return max(n, 0)


# --- per operator ---------------------------------------------------------------------------------------------


def _ray_worker_pods(group: Mapping[str, Any]) -> int:
    """KubeRay GetWorkerGroupDesiredReplicas: replicas clamped to [minReplicas, maxReplicas] x numOfHosts."""
    if group.get("suspend") is True:
        return 0
    lo = _int(group.get("minReplicas"), 0)
    hi = as_int(group.get("maxReplicas"))
    reps = as_int(group.get("replicas"))
    n = lo if reps is None or reps < lo else reps
    if hi is not None and n > hi:
        n = hi
    return max(n, 0) * max(_int(group.get("numOfHosts"), 1), 1)


def _ray_cluster(obj: Any, base: Path) -> list[PodTemplate]:
    out: list[PodTemplate] = []
    spec = get_path(obj, base)
    if not isinstance(spec, Mapping):
        return out
    if isinstance(spec.get("headGroupSpec"), Mapping):
        out.append(_template((*base, "headGroupSpec", "template"), "head", 1))
    for i, g in _items(spec.get("workerGroupSpecs")):
        name = str(g.get("groupName") or f"worker-{i}")
        out.append(_template((*base, "workerGroupSpecs", i, "template"), name, _ray_worker_pods(g)))
    return out


def _kubeflow(obj: Mapping[str, Any], spec: Mapping[str, Any], kind: str) -> list[PodTemplate] | None:
    kf = facts()["kubeflow"]
    keys = [kf["replica_keys"][kind]] if kind in kf["replica_keys"] else list(kf["replica_keys"].values())
    elastic = kf["elastic"].get(kind)
    low = None
    if elastic:
        low = as_int(get_path(obj, (*_field(elastic["policy"]), "minReplicas")))
    mpi = facts()["mpijob"]
    waits = kind == "MPIJob" and get_path(obj, _field(mpi["policy"])) == mpi["waits"]
    for key in keys:
        roles = spec.get(key)
        if not isinstance(roles, Mapping):
            continue
        out = []
        for role, rs in roles.items():
            if not isinstance(rs, Mapping):
                continue
            after = mpi["worker"] if waits and role == mpi["launcher"] else None
            minimum = low if elastic and role == elastic["role"] else None
            out.append(
                _template(
                    ("spec", key, role, "template"),
                    str(role),
                    _int(rs.get("replicas"), kf["replicas_default"]),
                    after=after,
                    min_replicas=minimum,
                )
            )
        return out
    return None


def _volcano(spec: Mapping[str, Any]) -> list[PodTemplate]:
    """Each task's replicas; a task with ``dependsOn`` is created once the tasks it names are running."""
    out = []
    for i, t in _items(spec.get("tasks")):
        deps = get_path(t, ("dependsOn", "name"))
        after = str(deps[-1]) if isinstance(deps, list) and deps else None
        low = as_int(t.get("minAvailable"))
        path: Path = ("spec", "tasks", i, "template")
        out.append(
            _template(
                path,
                str(t.get("name") or f"task-{i}"),
                _int(t.get("replicas")),
                after=after,
                min_replicas=low,
            )
        )
    return out


def _jobset(spec: Mapping[str, Any]) -> list[PodTemplate]:
    """replicas Jobs of parallelism pods each; a job with ``dependsOn`` (or after another under
    ``startupPolicy.startupPolicyOrder: InOrder``) is created only once the job it follows is Ready/Complete."""
    f = facts()["jobset"]
    in_order = get_path(spec, _field(f["startup_order"])) == f["in_order"]
    out: list[PodTemplate] = []
    for i, rj in _items(spec.get("replicatedJobs")):
        reps = _int(rj.get("replicas")) * _job_pods(get_path(rj, ("template", "spec")))
        deps = [d for _, d in _items(rj.get("dependsOn")) if d.get("name")]
        after = str(deps[-1]["name"]) if deps else (out[-1].role if in_order and out else None)
        path: Path = ("spec", "replicatedJobs", i, "template", "spec", "template")
        out.append(_template(path, str(rj.get("name", i)), reps, after=after))
    return out


def _lws(obj: Mapping[str, Any]) -> list[PodTemplate]:
    f = facts()["lws"]
    lwt = ("spec", "leaderWorkerTemplate")
    groups = max(_int(get_path(obj, ("spec", "replicas")), f["replicas_default"]), 0)
    size = max(_int(get_path(obj, (*lwt, "size")), f["size_default"]), 1)
    waits = get_path(obj, ("spec", "startupPolicy")) == f["waits"]
    if not isinstance(get_path(obj, (*lwt, "leaderTemplate")), Mapping):
        # the leader is made from the worker template too: one template, `size` pods per group
        return [_template((*lwt, "workerTemplate"), "", groups * size, groups=groups)]
    out = [_template((*lwt, "leaderTemplate"), "leader", groups, groups=groups)]
    if size > 1:
        out.append(
            _template(
                (*lwt, "workerTemplate"),
                "worker",
                groups * (size - 1),
                groups=groups,
                after="leader" if waits else None,
            )
        )
    return out


def pod_templates(obj: Mapping[str, Any]) -> list[PodTemplate] | None:
    """The pod templates of ``obj``; ``None`` when kubedra does not know the kind."""
    group = api_group(str(obj.get("apiVersion", "")))
    kind = str(obj.get("kind", ""))
    spec = obj.get("spec")
    if group == "" and kind == "Pod":
        return [PodTemplate(spec=("spec",), metadata=("metadata",))]
    if group == "" and kind == "PodTemplate":
        return [_template(("template",))]
    if group == "" and kind == "ReplicationController":
        return [_template(("spec", "template"), replicas=_int(get_path(obj, ("spec", "replicas"))))]
    if group == "apps" and kind in facts()["builtin"]["apps"]["kinds"] + ["DaemonSet"]:
        return [_template(("spec", "template"), replicas=_int(get_path(obj, ("spec", "replicas"))))]
    if group == "batch" and kind == "Job":
        return [_template(("spec", "template"), replicas=_job_pods(spec))]
    if group == "batch" and kind == "CronJob":
        job = get_path(obj, ("spec", "jobTemplate", "spec"))
        return [_template(("spec", "jobTemplate", "spec", "template"), replicas=_job_pods(job))]
    if not isinstance(spec, Mapping):
        return None
    if group == "kubeflow.org":
        return _kubeflow(obj, spec, kind)
    if group == "batch.volcano.sh" and kind == "Job":
        return _volcano(spec)
    if group == "ray.io" and kind in facts()["ray"]["cluster_spec"]:
        out = _ray_cluster(obj, _field(facts()["ray"]["cluster_spec"][kind]))
        ray = facts()["ray"]
        mode = spec.get("submissionMode") or ray["submitter_mode"]
        if (
            kind == "RayJob"
            and mode == ray["submitter_mode"]
            and isinstance(spec.get("submitterPodTemplate"), Mapping)
        ):
            # the submitter Job's pod, created once the cluster is ready (not in KubeRay's gang)
            out.append(_template(("spec", "submitterPodTemplate"), "submitter", 1, after="head"))
        return out
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        return _jobset(spec)
    if group == "leaderworkerset.x-k8s.io" and kind == "LeaderWorkerSet":
        return _lws(obj)
    return None


def containers(pod_spec: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """(field, index, container) for init containers then containers."""
    out: list[tuple[str, int, Mapping[str, Any]]] = []
    for fld in ("initContainers", "containers"):
        out.extend((fld, i, c) for i, c in _items(pod_spec.get(fld)))
    return out


# --- gangs ----------------------------------------------------------------------------------------------------


def is_coscheduling_group(api_version: str, kind: str) -> bool:
    """A scheduler-plugins PodGroup (``scheduling.x-k8s.io``), not Kubernetes' own ``scheduling.k8s.io`` one."""
    f = facts()["coscheduling"]
    return bool(api_group(api_version) == f["group"] and kind == f["kind"])


def coscheduling_min_member(obj: Mapping[str, Any]) -> int | None:
    """A scheduler-plugins PodGroup's ``spec.minMember`` (None when unset or not a number)."""
    return as_int(get_path(obj, tuple(facts()["coscheduling"]["min_member"].split("."))))


def coscheduling_pod_group(labels: Mapping[str, Any] | None) -> str | None:
    """The scheduler-plugins PodGroup a pod joins with its ``scheduling.x-k8s.io/pod-group`` label."""
    value = (labels or {}).get(facts()["coscheduling"]["label"])
    return str(value) if value else None


def gang(obj: Mapping[str, Any], templates: list[PodTemplate]) -> Gang | None:
    """The gang the workload's operator asks for (``None``: its pods are placed one by one)."""
    group = api_group(str(obj.get("apiVersion", "")))
    kind = obj.get("kind")
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    total = sum(t.replicas for t in templates)
    if group == "batch.volcano.sh" and kind == "Job":
        n = as_int(spec.get("minAvailable"))
        if (
            n is None
        ):  # the webhook's default: sum of the tasks' minAvailable (each defaulting to its replicas)
            n = sum(
                t.min_replicas if t.min_replicas is not None else t.replicas for t in templates if not t.after
            )
            return Gang(n, "sum of tasks' minAvailable (Volcano's default)") if n > 1 else None
        return Gang(n, "spec.minAvailable") if n > 1 else None
    if group == "kubeflow.org":
        return _kubeflow_gang(obj, templates, total)
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        if kaigangs.under_kai(obj):  # KAI's pod-grouper sizes the gang (kubedra.k8s.kaigangs)
            kai = kaigangs.jobset_gang(obj)
            return Gang(kai.min_count, kai.source, problem=kai.problem, held=kai.held) if kai else None
        first = sum(t.replicas for t in templates if not t.after)
        why = "replicatedJobs replicas x parallelism" + (" (jobs created at start)" if first < total else "")
        return Gang(first, why) if first > 1 else None
    if group == "leaderworkerset.x-k8s.io" and kind == "LeaderWorkerSet":
        groups = max((t.groups for t in templates), default=1)
        per_group = total // groups if groups else 0
        if get_path(obj, ("spec", "startupPolicy")) == facts()["lws"]["waits"]:
            return None  # LWS's own PodGroup is minMember 1: the leader starts alone, workers follow
        if per_group > 1:
            return Gang(per_group, "leaderWorkerTemplate.size (one gang per group)", per_group=True)
        return None
    if group == "ray.io":
        labels = get_path(obj, ("metadata", "labels"))
        first = sum(t.replicas for t in templates if not t.after)  # not the RayJob submitter
        if (
            isinstance(labels, Mapping)
            and str(labels.get(facts()["ray"]["gang_label"], "")).lower() == "true"
        ):
            return (
                Gang(first, "head + desired workers (label ray.io/gang-scheduling-enabled)")
                if first > 1
                else None
            )
        return None
    if group == "batch" and kind in ("Job", "CronJob"):
        return job_gang(obj)
    return None


def job_spec_path(obj: Mapping[str, Any]) -> Path:
    """Where a Job's JobSpec is: ``spec`` (Job) or ``spec.jobTemplate.spec`` (CronJob)."""
    return ("spec", "jobTemplate", "spec") if obj.get("kind") == "CronJob" else ("spec",)


def job_gang(obj: Mapping[str, Any]) -> Gang | None:
    """A Job's pods are placed one by one unless the Job asks for a gang (``data/workloads.yaml`` job_gang):
    its own ``spec.scheduling.schedulingPolicy.gang`` (1.37, minCount defaulting to the pods it runs at once)
    or KAI's ``kai.scheduler/batch-min-member`` annotation. parallelism == completions is no gang."""
    f = facts()["job_gang"]
    job = get_path(obj, job_spec_path(obj))
    pods = _job_pods(job)
    policy = get_path(job, _field(f["policy"]))
    if isinstance(policy, Mapping) and isinstance(policy.get("gang"), Mapping):
        n = as_int(policy["gang"].get("minCount"))
        where = f"spec.{f['policy']}.gang"
        if n is None:
            return (
                Gang(pods, f"{where} (minCount defaults to parallelism)", native=True) if pods > 1 else None
            )
        return Gang(n, f"{where}.minCount", native=True) if n > 1 else None
    if obj.get("kind") != "Job":
        return None
    annotations = get_path(obj, ("metadata", "annotations"))
    value = annotations.get(f["kai_min_member"]) if isinstance(annotations, Mapping) else None
    if value is None:
        return None
    n = kaigangs.parse_int32(value)
    source = f"annotation {f['kai_min_member']} (KAI pod-grouper)"
    if n is None:
        problem = (
            f"{f['kai_min_member']}: {str(value)[:40]!r} is not a whole number: KAI's pod-grouper refuses it "
            "(invalid min-member annotation value) and makes no PodGroup, so the pods are never scheduled"
        )
        return Gang(max(pods, 1), source, problem=problem, held=True)
    if n < 0:
        problem = (
            f"{f['kai_min_member']}: {n} is negative: the apiserver refuses KAI's PodGroup (minMember minimum 0), "
            "so the pods are never scheduled"
        )
        return Gang(max(pods, 1), source, problem=problem, held=True)
    return Gang(n, source) if n > 1 else None  # 0: KAI's "no gang requirement", the pods go one by one


def _kubeflow_gang(obj: Mapping[str, Any], templates: list[PodTemplate], total: int) -> Gang | None:
    explicit = as_int(get_path(obj, _field(facts()["kubeflow"]["gang_min"])))
    later = sum(t.replicas for t in templates if t.after)
    at_start = total - later
    if explicit is not None and explicit > 1:
        problem = None
        if explicit > at_start:
            problem = (
                f"minAvailable {explicit} counts pods that are created only after the others are Ready "
                f"(launcherCreationPolicy WaitForWorkersReady): at most {at_start} exist while the gang waits, "
                f"so it can never start; set runPolicy.schedulingPolicy.minAvailable <= {at_start}"
            )
        return Gang(
            min(explicit, max(at_start, 1)), "spec.runPolicy.schedulingPolicy.minAvailable", problem=problem
        )
    elastic = [t for t in templates if t.min_replicas is not None]
    if elastic:
        n = sum(t.replicas for t in templates if t.min_replicas is None and not t.after)
        n += sum(min(t.min_replicas or 0, t.replicas) for t in elastic)
        return Gang(n, "elasticPolicy.minReplicas workers + the other roles") if n > 1 else None
    if later:
        return (
            Gang(at_start, "workers only: the launcher is created after they are Ready")
            if at_start > 1
            else None
        )
    return Gang(total, "sum of replicas") if total > 1 else None


# --- admission: suspended workloads and queues ----------------------------------------------------------------

_SUSPEND: dict[tuple[str, str], Path] = {
    ("batch", "Job"): ("spec", "suspend"),
    ("batch", "CronJob"): ("spec", "suspend"),
    ("jobset.x-k8s.io", "JobSet"): ("spec", "suspend"),
    ("ray.io", "RayCluster"): ("spec", "suspend"),
    ("ray.io", "RayJob"): ("spec", "suspend"),
    ("trainer.kubeflow.org", "TrainJob"): ("spec", "suspend"),
}


def queue_name(obj: Mapping[str, Any]) -> str | None:
    """The Kueue LocalQueue a workload is submitted to (label ``kueue.x-k8s.io/queue-name``)."""
    labels = get_path(obj, ("metadata", "labels"))
    if isinstance(labels, Mapping):
        q = labels.get(facts()["kueue"]["queue_label"])
        return str(q) if q else None
    return None


def suspended(obj: Mapping[str, Any]) -> str | None:
    """Why the controller creates no pods for ``obj`` now (``None``: it does). A workload queued in Kueue is
    created suspended and started when admitted: it is not reported here (see :func:`queue_name`)."""
    group = api_group(str(obj.get("apiVersion", "")))
    kind = str(obj.get("kind", ""))
    path: Path | None = _SUSPEND.get((group, kind))
    if path is None and group == "kubeflow.org":
        path = ("spec", "runPolicy", "suspend")
    if path is None or get_path(obj, path) is not True or queue_name(obj):
        return None
    return f"{dotted(path)}: true — the controller creates no pods until it is unsuspended"


# --- TrainJob: the runtime's JobSet with the job's overrides ----------------------------------------------------


def trainjob_runtime(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) of the (Cluster)TrainingRuntime a TrainJob runs."""
    ref = get_path(obj, ("spec", "runtimeRef"))
    if not isinstance(ref, Mapping) or not ref.get("name"):
        return None
    return str(ref.get("kind") or "ClusterTrainingRuntime"), str(ref["name"])


def trainjob_jobset(trainjob: Mapping[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet the trainer controller creates for ``trainjob`` from ``runtime`` (numNodes and
    resourcesPerNode applied to the trainer job), for counting and simulating its pods."""

    f = facts()["trainer"]
    template = copy.deepcopy(get_path(runtime, ("spec", "template")) or {})
    nodes = as_int(get_path(trainjob, ("spec", "trainer", "numNodes")))
    if nodes is None:
        nodes = _int(get_path(runtime, ("spec", "mlPolicy", "numNodes")), 1)
    per_node = get_path(trainjob, ("spec", "trainer", "resourcesPerNode"))
    for _, rj in _items(get_path(template, ("spec", "replicatedJobs"))):
        labels = get_path(rj, ("template", "metadata", "labels"))
        labels = labels if isinstance(labels, Mapping) else {}
        is_trainer = (
            rj.get("name") == f["trainer_job"] or labels.get(f["ancestor_label"]) == f["ancestor_trainer"]
        )
        job = get_path(rj, ("template", "spec"))
        if not is_trainer or not isinstance(job, dict):
            continue
        job["parallelism"] = job["completions"] = nodes
        pod = get_path(job, ("template", "spec"))
        if isinstance(per_node, Mapping) and isinstance(pod, Mapping):
            for _, c in _items(pod.get("containers")):
                if c.get("name") == f["trainer_container"] and isinstance(c, dict):
                    c["resources"] = copy.deepcopy(dict(per_node))
    meta = trainjob.get("metadata") if isinstance(trainjob.get("metadata"), Mapping) else {}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": dict(meta or {}),
        "spec": dict(spec) if isinstance(spec := get_path(template, ("spec",)), Mapping) else {},
    }


def ceil_div(a: int, b: int) -> int:
    return math.ceil(a / b) if b > 0 else a


# --- GPU settings in a custom resource's own fields ------------------------------------------------------------


_CRD_GPU_KEYS = frozenset(
    {"gpu", "gpus", "numgpus", "num_gpus", "num-gpus", "gpucount", "gpu_count", "gpunum", "numgpu"}
)


# Where a GPU is named without being requested: node placement and toleration of the GPU nodes' taint
# (key: nvidia.com/gpu), labels and annotations. A toleration with key nvidia.com/gpu is not a GPU request.
_NOT_A_REQUEST = frozenset(
    {"tolerations", "nodeSelector", "affinity", "nodeAffinity", "nodeLabels", "labels", "annotations"}
)


def deep_gpu_fields(obj: Any, names: GpuNames, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """(path, value) of every field of an unknown custom resource that looks like a GPU setting: a key in a vendor's
    resource domain (``nvidia.com/...``), a string naming a vendor's GPU resource (``nvidia.com/gpu``/``mig-``), or
    a positive ``gpus``-like count. Tolerations, node selectors, affinity, labels and annotations are placement,
    not requests: skipped."""
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            key = str(k)
            p = (*path, key)
            if key in _NOT_A_REQUEST:
                continue
            if key.startswith(names.domains):
                yield p, v
                continue
            if isinstance(v, str) and names.names_gpu(v):
                yield p, v
                continue
            if key.lower() in _CRD_GPU_KEYS and not isinstance(v, Mapping | list):
                try:
                    if float(str(v).strip()) > 0:
                        yield p, v
                        continue
                except ValueError:
                    pass
            yield from deep_gpu_fields(v, names, p)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from deep_gpu_fields(v, names, (*path, i))


def custom_resource_gpu_fields(obj: Mapping[str, Any], names: GpuNames) -> list[tuple[Path, Any]]:
    """GPU settings in the fields of a custom resource whose pods kubedra cannot derive (no pod template it
    knows: a TrainJob's ``resourcesPerNode``, a vLLM runtime CR). Built-in kinds never hide one, and neither do
    Kueue's configuration objects (a ClusterQueue's GPU quota is a quota: :mod:`kubedra.k8s.kueue`).
    audit reports them, migrate makes them manual items, simulate skips them: the same list for every verb."""
    group = api_group(str(obj.get("apiVersion") or ""))
    if "." not in group or group.endswith(".k8s.io") or pod_templates(obj) is not None:
        return []
    if group == facts()["kueue"]["group"] and obj.get("kind") in facts()["kueue"]["config_kinds"]:
        return []  # a queue, flavor or quota: configuration (kubedra.k8s.kueue), not a request
    return list(deep_gpu_fields(obj, names))
