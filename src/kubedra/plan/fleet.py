"""The fleet file ``kubedra plan --fleet FLEET.yaml`` reads.

::

    apiVersion: kubedra.io/v1alpha1
    kind: Fleet
    clusters:
    - name: dev-eu                  # required, unique
      snapshot: snapshots/dev.yaml  # a `kubedra snapshot` file (path relative to this file) ...
      # context: dev-eu             # ... or a kubeconfig context, read live (read-only)
      distribution: kubeadm         # kubeadm | kops | eks | gke | aks | k3s
      criticality: low              # low | medium | high | critical (low goes first)
      manifests: manifests/dev      # optional: what `kubedra migrate` rewrites for this cluster
      provider: {region: eu-west-1, clusterName: dev-eu}   # optional, fills the cloud CLI commands
      nodePools:                    # optional; default: GPU nodes grouped by their pool label
      - name: h100
        selector: {kubedra.io/node-pool: h100-80gb-x8}
      - name: a100
        label: cloud.google.com/gke-nodepool=a100   # same as selector, one key
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.sources import files
from kubedra.text import noun

DISTRIBUTIONS = ("kubeadm", "kops", "eks", "gke", "aks", "k3s")
CRITICALITY = ("low", "medium", "high", "critical")
_CLUSTER_KEYS = {
    "name",
    "snapshot",
    "context",
    "kubeconfig",
    "distribution",
    "criticality",
    "manifests",
    "provider",
    "nodePools",
    "currentVersion",
}
_POOL_KEYS = {"name", "selector", "label"}


@dataclass(frozen=True)
class PoolSpec:
    name: str
    selector: dict[str, str]

    def matches(self, labels: dict[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.selector.items())


@dataclass
class ClusterSpec:
    name: str
    distribution: str
    criticality: str
    snapshot: str | None = None
    context: str | None = None
    kubeconfig: str | None = None
    manifests: str | None = None
    current_version: str | None = None
    provider: dict[str, str] = field(default_factory=dict)
    pools: list[PoolSpec] = field(default_factory=list)
    location: Location | None = None

    @property
    def rank(self) -> int:
        return CRITICALITY.index(self.criticality)


@dataclass
class Fleet:
    path: str
    clusters: list[ClusterSpec]


def _str(v: Any) -> str:
    return "" if v is None else str(v)


def load_fleet(path: str) -> Fleet:  # noqa: C901 - checks each field of the fleet file with its own one-line error
    if not os.path.isfile(path):
        raise InputError("no such fleet file", Location(path))
    result = files.load([path], strict=True)
    if len(result.documents) != 1:
        raise InputError("a fleet file holds one Fleet document", Location(path))
    doc = result.documents[0]
    obj = doc.obj
    if obj.get("kind") not in (None, "Fleet"):
        raise InputError(f"expected kind: Fleet, found {obj.get('kind')!r}", doc.location)
    raw = obj.get("clusters")
    if not isinstance(raw, list) or not raw:
        raise InputError(
            "the fleet needs a non-empty 'clusters' list", Location(path, doc.line_of(["clusters"]))
        )
    base = os.path.dirname(os.path.abspath(path))

    def rel(p: Any) -> str:
        text = _str(p)
        return text if os.path.isabs(text) else os.path.normpath(os.path.join(base, text))

    clusters: list[ClusterSpec] = []
    seen: set[str] = set()
    for i, c in enumerate(raw):
        where = Location(path, doc.line_of(["clusters", i]))
        if not isinstance(c, dict):
            raise InputError("each cluster is a mapping", where)
        unknown = set(c) - _CLUSTER_KEYS
        if unknown:
            raise InputError(
                f"unknown cluster {noun(len(unknown), 'field')}: {', '.join(sorted(unknown))}", where
            )
        name = _str(c.get("name"))
        if not name:
            raise InputError("cluster without a name", where)
        if name in seen:
            raise InputError(f"cluster {name!r} is listed twice", where)
        seen.add(name)
        dist = _str(c.get("distribution")).lower()
        if dist not in DISTRIBUTIONS:
            raise InputError(
                f"cluster {name}: distribution {c.get('distribution')!r} is not one of {', '.join(DISTRIBUTIONS)}",
                Location(path, doc.line_of(["clusters", i, "distribution"])),
            )
        crit = _str(c.get("criticality") or "medium").lower()
        if crit not in CRITICALITY:
            raise InputError(
                f"cluster {name}: criticality {c.get('criticality')!r} is not one of {', '.join(CRITICALITY)}",
                Location(path, doc.line_of(["clusters", i, "criticality"])),
            )
        if bool(c.get("snapshot")) == bool(c.get("context")):
            raise InputError(f"cluster {name}: give exactly one of 'snapshot' or 'context'", where)
        pools: list[PoolSpec] = []
        for j, p in enumerate(c.get("nodePools") or []):
            pwhere = Location(path, doc.line_of(["clusters", i, "nodePools", j]))
            if not isinstance(p, dict) or not p.get("name"):
                raise InputError(f"cluster {name}: each node pool needs a name", pwhere)
            unknown = set(p) - _POOL_KEYS
            if unknown:
                raise InputError(
                    f"node pool {p['name']}: unknown {noun(len(unknown), 'field')} {', '.join(sorted(unknown))}",
                    pwhere,
                )
            selector: dict[str, str] = {}
            if isinstance(p.get("selector"), dict):
                selector = {str(k): _str(v) for k, v in p["selector"].items()}
            if p.get("label"):
                k, sep, v = str(p["label"]).partition("=")
                if not sep or not k:
                    raise InputError(f"node pool {p['name']}: label must be KEY=VALUE", pwhere)
                selector[k] = v
            if not selector:
                raise InputError(f"node pool {p['name']}: give a selector or a label", pwhere)
            pools.append(PoolSpec(str(p["name"]), selector))
        provider = c.get("provider") or {}
        if not isinstance(provider, dict):
            raise InputError(f"cluster {name}: provider must be a mapping", where)
        clusters.append(
            ClusterSpec(
                name=name,
                distribution=dist,
                criticality=crit,
                snapshot=rel(c["snapshot"]) if c.get("snapshot") else None,
                context=_str(c.get("context")) or None,
                kubeconfig=rel(c["kubeconfig"]) if c.get("kubeconfig") else None,
                manifests=_str(c.get("manifests")) or None,
                current_version=_str(c.get("currentVersion")) or None,
                provider={str(k): _str(v) for k, v in provider.items()},
                pools=pools,
                location=where,
            )
        )
    return Fleet(path=path, clusters=clusters)
