"""Where the pod templates are in each workload kind (built-ins and the GPU CRDs kubedra knows).

A :class:`PodTemplate` is a path to a pod spec inside an object, the path to the metadata that goes
with it, a role name (``Worker``, ``ps``, ``head``...) and how many pods it stands for. Kinds not listed
here are "unknown": their GPU requests cannot be rewritten safely and are reported for a human.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class PodTemplate:
    spec: Path  # path to the PodSpec
    metadata: Path  # path to the pod (template) metadata
    role: str = ""  # replica type / task / group name; "" for single-template kinds
    replicas: int = 1  # pods created from this template (for gang sizes)


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


def _int(value: Any, default: int = 1) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return default


def _template(base: Path, role: str = "", replicas: int = 1) -> PodTemplate:
    return PodTemplate(spec=(*base, "spec"), metadata=(*base, "metadata"), role=role, replicas=replicas)


_APPS = {"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"}
_KUBEFLOW_REPLICA_KEYS = (
    "pytorchReplicaSpecs",
    "tfReplicaSpecs",
    "mpiReplicaSpecs",
    "xgbReplicaSpecs",
    "paddleReplicaSpecs",
    "jaxReplicaSpecs",
    "xgboostReplicaSpecs",
)


def _ray_cluster(obj: Any, base: Path) -> list[PodTemplate]:
    out: list[PodTemplate] = []
    spec = get_path(obj, base)
    if not isinstance(spec, Mapping):
        return out
    if isinstance(spec.get("headGroupSpec"), Mapping):
        out.append(_template((*base, "headGroupSpec", "template"), "head", 1))
    groups = spec.get("workerGroupSpecs")
    if isinstance(groups, Sequence) and not isinstance(groups, str):
        for i, g in enumerate(groups):
            if isinstance(g, Mapping):
                name = str(g.get("groupName") or f"worker-{i}")
                reps = _int(g.get("replicas", g.get("minReplicas", 1))) * max(_int(g.get("numOfHosts", 1)), 1)
                out.append(_template((*base, "workerGroupSpecs", i, "template"), name, reps))
    return out


def pod_templates(obj: Mapping[str, Any]) -> list[PodTemplate] | None:
    """The pod templates of ``obj``; ``None`` when kubedra does not know the kind."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_group(api_version)
    kind = str(obj.get("kind", ""))
    spec = obj.get("spec")
    if group == "" and kind == "Pod":
        return [PodTemplate(spec=("spec",), metadata=("metadata",))]
    if group == "" and kind == "PodTemplate":
        return [_template(("template",))]
    if group == "" and kind == "ReplicationController":
        return [_template(("spec", "template"), replicas=_int(get_path(obj, ("spec", "replicas"))))]
    if group == "apps" and kind in _APPS:
        return [_template(("spec", "template"), replicas=_int(get_path(obj, ("spec", "replicas"))))]
    if group == "batch" and kind == "Job":
        return [_template(("spec", "template"), replicas=_int(get_path(obj, ("spec", "parallelism"))))]
    if group == "batch" and kind == "CronJob":
        par = _int(get_path(obj, ("spec", "jobTemplate", "spec", "parallelism")))
        return [_template(("spec", "jobTemplate", "spec", "template"), replicas=par)]
    if not isinstance(spec, Mapping):
        return None
    if group == "kubeflow.org":
        for key in _KUBEFLOW_REPLICA_KEYS:
            roles = spec.get(key)
            if isinstance(roles, Mapping):
                return [
                    _template(("spec", key, role, "template"), str(role), _int(rs.get("replicas")))
                    for role, rs in roles.items()
                    if isinstance(rs, Mapping)
                ]
        return None
    if group == "batch.volcano.sh" and kind == "Job":
        tasks = spec.get("tasks")
        if not isinstance(tasks, Sequence) or isinstance(tasks, str):
            return []
        return [
            _template(
                ("spec", "tasks", i, "template"), str(t.get("name") or f"task-{i}"), _int(t.get("replicas"))
            )
            for i, t in enumerate(tasks)
            if isinstance(t, Mapping)
        ]
    if group == "ray.io" and kind == "RayCluster":
        return _ray_cluster(obj, ("spec",))
    if group == "ray.io" and kind == "RayJob":
        return _ray_cluster(obj, ("spec", "rayClusterSpec"))
    if group == "ray.io" and kind == "RayService":
        return _ray_cluster(obj, ("spec", "rayClusterConfig"))
    if group == "jobset.x-k8s.io" and kind == "JobSet":
        jobs = spec.get("replicatedJobs")
        if not isinstance(jobs, Sequence) or isinstance(jobs, str):
            return []
        out = []
        for i, rj in enumerate(jobs):
            if not isinstance(rj, Mapping):
                continue
            par = _int(get_path(rj, ("template", "spec", "parallelism")))
            reps = _int(rj.get("replicas")) * par
            out.append(
                _template(
                    ("spec", "replicatedJobs", i, "template", "spec", "template"),
                    str(rj.get("name", i)),
                    reps,
                )
            )
        return out
    if group == "leaderworkerset.x-k8s.io" and kind == "LeaderWorkerSet":
        lwt = ("spec", "leaderWorkerTemplate")
        size = _int(get_path(obj, (*lwt, "size")))
        out = []
        if isinstance(get_path(obj, (*lwt, "leaderTemplate")), Mapping):
            out.append(_template((*lwt, "leaderTemplate"), "leader", 1))
            size -= 1
        out.append(_template((*lwt, "workerTemplate"), "worker", max(size, 1)))
        return out
    return None


def containers(pod_spec: Mapping[str, Any]) -> list[tuple[str, int, Mapping[str, Any]]]:
    """(field, index, container) for init containers then containers."""
    out: list[tuple[str, int, Mapping[str, Any]]] = []
    for fld in ("initContainers", "containers"):
        items = pod_spec.get(fld)
        if isinstance(items, Sequence) and not isinstance(items, str):
            out.extend((fld, i, c) for i, c in enumerate(items) if isinstance(c, Mapping))
    return out


def dotted(path: Path) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        else:
            out += ("." if out else "") + step
    return out
