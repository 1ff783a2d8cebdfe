"""Audit a snapshot as the cluster it was taken from: its objects keep their file:line, and the header's
server version, served APIs, /metrics lines and Helm release objects become the cluster facts a live audit
would have had (feature gates, version skew, deprecated APIs in Helm releases)."""

from __future__ import annotations

from typing import Any

from kubedra.audit import engine
from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import Item, RuleBook
from kubedra.audit.scope import ClusterFacts, Scope
from kubedra.k8s.versions import Version
from kubedra.model.snapshotdata import Snapshot


def scope(snap: Snapshot) -> Any:
    """A :class:`kubedra.audit.engine.Scope` for the snapshot (live-like: it has ClusterFacts)."""

    h = snap.header
    facts = ClusterFacts(
        name=h.cluster,
        server_version=Version.maybe(h.server_version),
        git_version=h.server_version,
        metrics=h.metrics or None,
        served=set(h.served_apis),
        not_inspected=[(str(x.get("resource", "")), str(x.get("reason", ""))) for x in h.not_inspected],
    )
    sc = Scope(name=h.cluster, facts=facts)
    if snap.documents:
        sc.items.extend(Item(obj=d.obj, doc=d) for d in snap.documents)
    else:
        sc.items.extend(Item(obj=o, cluster=h.cluster) for o in snap.items)
    for rel in h.helm_releases:
        via = f"Helm release {rel.namespace}/{rel.name} revision {rel.revision}, chart {rel.chart}-{rel.version}"
        for ref in rel.objects:
            meta: dict[str, Any] = {"name": ref.get("name", "")}
            if ref.get("namespace"):
                meta["namespace"] = ref["namespace"]
            obj = {"apiVersion": ref.get("apiVersion", ""), "kind": ref.get("kind", ""), "metadata": meta}
            sc.items.append(Item(obj=obj, cluster=h.cluster, via=via))
    facts.objects = len(sc.items)
    return sc


def run(snaps: list[Snapshot], target: str) -> Any:
    """Audit findings for the snapshots: an :class:`kubedra.audit.engine.Report`."""

    rules = RuleBook.load()
    tv = Version.parse(target, what="--target-version")
    scopes = [scope(s) for s in snaps]
    findings, ignored = engine.run(scopes, target=tv, current=None, db=DeprecationDB.load(()), rules=rules)
    return engine.Report(
        target=tv,
        current=None,
        findings=findings,
        ignored=ignored,
        objects_scanned=sum(len(s.items) for s in scopes),
        clusters=[s.facts for s in scopes],
    )
