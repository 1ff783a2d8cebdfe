"""Which fields the bundled operator CRDs declare (``kubedra/data/crds``, written by ``scripts/gen_crd_schemas.py``
from each operator's released CRD at a pinned version): whether a pod template of a custom resource may carry a
field such as ``spec.schedulingGroup``, which an apiserver prunes (and ``kubectl --validate=strict`` refuses) when
the CRD does not declare it."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubedra.k8s import datafiles

FOLDER = "crds"


@dataclass(frozen=True)
class Declared:
    """Whether the bundled CRDs of a kind declare a field: ``yes`` for every one, else the sources that do not
    (``None`` when no CRD of the kind is bundled, or none serves the version)."""

    yes: bool | None
    sources: tuple[str, ...]  # "operator@version" of the CRDs read
    missing: tuple[str, ...] = ()  # those that do not declare it


@functools.cache
def _bundled() -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    out: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for name in sorted(datafiles.names(FOLDER)):
        if name.endswith(".json"):
            data = json.loads(datafiles.read_text(f"{FOLDER}/{name}"))
            out.setdefault((data["group"], data["kind"]), []).append(data)
    return out


def _has(schema: Any, defs: Mapping[str, Any], path: Sequence[str | int]) -> bool:
    for step in path:
        while isinstance(schema, Mapping) and "$def" in schema:
            schema = defs.get(schema["$def"])
        if not isinstance(schema, Mapping):
            return False
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return False  # kept, but not declared: nothing says the operator reads it
        if isinstance(step, int):
            schema = schema.get("items")
        else:
            props = schema.get("properties")
            found = props.get(step) if isinstance(props, Mapping) else None
            # a map (MPIJob's mpiReplicaSpecs: role -> ReplicaSpec) declares its values once
            schema = found if found is not None else schema.get("additionalProperties")
    return isinstance(schema, Mapping)


def declares(api_version: str, kind: str, path: Sequence[str | int]) -> Declared:
    """Whether every bundled CRD of ``kind`` in ``api_version``'s group, at that version, declares ``path``
    (list indexes step into ``items``)."""
    group, _, version = api_version.rpartition("/")
    sources, missing = [], []
    for data in _bundled().get((group, kind), []):
        schema = next((v["schema"] for v in data["versions"] if v["name"] == version), None)
        if schema is None:
            continue
        src = str(data["source"].get("repository") or data["source"].get("module") or "?").rsplit("/", 1)[-1]
        sources.append(src)
        if not _has(schema, data.get("defs") or {}, path):
            missing.append(src)
    if not sources:
        return Declared(None, ())
    return Declared(not missing, tuple(sources), tuple(missing))
