"""Find pod specs inside any object: Pods, workload templates and GPU CRDs (PyTorchJob, RayCluster, vcjob, JobSet...).

A pod spec is recognised by shape (a mapping with a ``containers`` list of mappings), so operators we do not
know by name are covered too. Each hit carries its path, so findings can point at the exact line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Path = tuple[str | int, ...]
_SKIP_KEYS = frozenset({"metadata", "status", "data", "stringData", "binaryData"})
_MAX_DEPTH = 14
_COLLECTIONS = (dict, list)


@dataclass(frozen=True)
class PodSpecAt:
    path: Path  # path of the pod spec mapping inside the object
    spec: dict[str, Any]
    meta_path: Path  # path of the template's metadata (the object's own for a Pod)
    meta: dict[str, Any]


def format_path(path: Path) -> str:
    """``("spec", "workers", 0, "template")`` -> ``spec.workers[0].template``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def owned_by_listed_controller(item: Any, owners: set[tuple[str, str, str]]) -> bool:
    """True when ``item`` (an audit Item) has a controller ownerReference to an object in ``owners``
    ((kind, namespace, name)): its pod template is the owner's, reported once there."""
    refs = item.meta.get("ownerReferences")
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or not ref.get("controller"):
            continue
        kind, name = ref.get("kind"), ref.get("name")
        if isinstance(kind, str) and isinstance(name, str) and (kind, item.home, name) in owners:
            return True
    return False


def _is_pod_spec(d: dict[str, Any]) -> bool:
    c = d.get("containers")
    return isinstance(c, list) and bool(c) and all(isinstance(x, dict) for x in c)


def find_pod_specs(obj: dict[str, Any]) -> Iterator[PodSpecAt]:
    """Every pod spec in ``obj``, in document order: the Pod's own, else every mapping with a ``containers``
    list of mappings below the root (not inside another pod spec, metadata or data), at most 14 levels deep."""
    if obj.get("kind") == "Pod":
        spec = obj.get("spec")
        if isinstance(spec, dict) and _is_pod_spec(spec):
            meta = obj.get("metadata")
            yield PodSpecAt(("spec",), spec, ("metadata",), meta if isinstance(meta, dict) else {})
        return
    out: list[PodSpecAt] = []
    _in_mapping(obj, [], out)
    yield from out


def _in_mapping(node: dict[str, Any], path: list[str | int], out: list[PodSpecAt]) -> None:
    """The pod specs below mapping ``node`` at ``path``, recursively: the path is one list, made a tuple only
    for a hit (a stack of tuples, one per collection visited, cost 0.1 s of 10,000 manifests)."""
    if len(path) >= _MAX_DEPTH:
        return  # its children would be deeper than _MAX_DEPTH
    for k, v in node.items():
        if not isinstance(v, _COLLECTIONS) or k in _SKIP_KEYS:
            continue
        path.append(k)
        if isinstance(v, dict):
            if _is_pod_spec(v):
                meta = node.get("metadata")
                out.append(
                    PodSpecAt(
                        tuple(path), v, (*path[:-1], "metadata"), meta if isinstance(meta, dict) else {}
                    )
                )
            else:
                _in_mapping(v, path, out)
        else:
            _in_sequence(v, path, out)
        path.pop()


def _in_sequence(node: list[Any], path: list[str | int], out: list[PodSpecAt]) -> None:
    if len(path) >= _MAX_DEPTH:
        return
    for i, v in enumerate(node):
        if not isinstance(v, _COLLECTIONS):
            continue
        path.append(i)
        if isinstance(v, dict):
            if _is_pod_spec(v):
                out.append(PodSpecAt(tuple(path), v, (*path[:-1], "metadata"), {}))
            else:
                _in_mapping(v, path, out)
        else:
            _in_sequence(v, path, out)
        path.pop()


@dataclass(frozen=True)
class ResourceUse:
    container: str
    resource: str
    quantity: Any
    path: Path  # path of the resource key (limits preferred, else requests)


def resource_uses(at: PodSpecAt) -> Iterator[ResourceUse]:
    """Every extended resource each container asks for, once per (container, resource)."""
    for field in ("initContainers", "containers"):
        containers = at.spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                continue
            res = c.get("resources")
            if not isinstance(res, dict):
                continue
            seen: set[str] = set()
            for section in ("limits", "requests"):
                values = res.get(section)
                if not isinstance(values, dict):
                    continue
                for name, qty in values.items():
                    if name in seen:
                        continue
                    seen.add(name)
                    yield ResourceUse(
                        str(c.get("name") or f"{field}[{i}]"),
                        str(name),
                        qty,
                        (*at.path, field, i, "resources", section, name),
                    )
