"""The snapshot file: a Kubernetes ``List`` with a ``kubedra`` header.

::

    apiVersion: v1
    kind: List
    metadata: {}
    kubedra:                       # ignored by kubectl-style readers (kubedra.sources.files expands items)
      format: kubedra.io/snapshot/v1
      cluster: prod-eu             # kubeconfig context (or --name)
      serverVersion: v1.36.2       # /version gitVersion
      capturedAt: "2026-05-01T10:00:00Z"
      kubedraVersion: 0.1.0
      servedAPIs: [v1, apps/v1, resource.k8s.io/v1, ...]
      featureGates: {DynamicResourceAllocation: true, ...}   # from kube-apiserver /metrics
      metrics: |                    # only the kubernetes_feature_enabled and deprecated-API lines of /metrics
        kubernetes_feature_enabled{name="...",stage="BETA"} 1
      helmReleases:                 # metadata of Helm 3 releases (never values or the manifest text)
      - {name, namespace, chart, version, revision, status, objects: [{apiVersion, kind, namespace, name}]}
      notInspected: [{resource, verb, namespace, reason}]   # reads refused or failed: the capture is incomplete
    items: [...]                   # scrubbed objects, in their served (preferred) API version

YAML is written when the file name ends in ``.yaml``/``.yml`` (or for ``-``), JSON for ``.json``. Both read back
through :func:`kubedra.sources.files.load` as a normal List, so audit, simulate and validate accept a snapshot
like any manifest file; :func:`load` also returns the header.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubedra.errors import InputError, Location
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.safewrite import write_atomic
from kubedra.sources import files

FORMAT = "kubedra.io/snapshot/v1"
HEADER_KEY = "kubedra"


@dataclass
class HelmRelease:
    name: str
    namespace: str
    chart: str
    version: str
    revision: int
    status: str
    objects: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "chart": self.chart,
            "version": self.version,
            "revision": self.revision,
            "status": self.status,
            "objects": self.objects,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> HelmRelease:
        return HelmRelease(
            name=str(d.get("name", "")),
            namespace=str(d.get("namespace", "")),
            chart=str(d.get("chart", "")),
            version=str(d.get("version", "")),
            revision=int(d.get("revision") or 0),
            status=str(d.get("status", "")),
            objects=[dict(o) for o in d.get("objects") or [] if isinstance(o, dict)],
        )


@dataclass
class Header:
    cluster: str
    server_version: str = ""
    captured_at: str = ""
    kubedra_version: str = ""
    served_apis: list[str] = field(default_factory=list)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    metrics: str = ""
    helm_releases: list[HelmRelease] = field(default_factory=list)
    not_inspected: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "cluster": self.cluster,
            "serverVersion": self.server_version,
            "capturedAt": self.captured_at,
            "kubedraVersion": self.kubedra_version,
            "servedAPIs": sorted(self.served_apis),
            "featureGates": dict(sorted(self.feature_gates.items())),
            "metrics": self.metrics,
            "helmReleases": [h.to_dict() for h in self.helm_releases],
            "notInspected": self.not_inspected,
        }

    @staticmethod
    def from_dict(d: dict[str, Any], where: str) -> Header:
        if d.get("format") != FORMAT:
            raise InputError(
                f"unsupported snapshot format {d.get('format')!r} (expected {FORMAT})", Location(where)
            )
        for key, typ, what in _HEADER_FIELDS:
            if d.get(key) is not None and not isinstance(d[key], typ):
                raise InputError(f"snapshot header: {key} must be {what}", Location(where))
        for i, x in enumerate(d.get("notInspected") or []):
            if not isinstance(x, dict) or not isinstance(x.get("resource"), str) or not x["resource"]:
                raise InputError(
                    f"snapshot header: notInspected[{i}] must be a mapping naming its resource",
                    Location(where),
                )
        gates = d.get("featureGates") or {}
        return Header(
            cluster=str(d.get("cluster") or ""),
            server_version=str(d.get("serverVersion") or ""),
            captured_at=str(d.get("capturedAt") or ""),
            kubedra_version=str(d.get("kubedraVersion") or ""),
            served_apis=[str(s) for s in d.get("servedAPIs") or []],
            feature_gates={str(k): bool(v) for k, v in gates.items()} if isinstance(gates, dict) else {},
            metrics=str(d.get("metrics") or ""),
            helm_releases=[
                HelmRelease.from_dict(h) for h in d.get("helmReleases") or [] if isinstance(h, dict)
            ],
            not_inspected=[dict(x) for x in d.get("notInspected") or [] if isinstance(x, dict)],
        )


_HEADER_FIELDS = (
    ("cluster", str, "a string"),
    ("serverVersion", str, "a string"),
    ("capturedAt", str, "a string"),
    ("kubedraVersion", str, "a string"),
    ("servedAPIs", list, "a list"),
    ("featureGates", dict, "a mapping"),
    ("metrics", str, "a string"),
    ("helmReleases", list, "a list"),
    ("notInspected", list, "a list"),
)


@dataclass
class Snapshot:
    header: Header
    items: list[dict[str, Any]] = field(default_factory=list)
    documents: list[files.Document] = field(default_factory=list)  # set by load(): items with file:line
    path: str | None = None
    built: tuple[list[files.Document], Inventory] | None = field(default=None, repr=False, compare=False)

    def inventory(self) -> Inventory:
        """The documents as the model reads them, built once per list of documents (load() builds it to check
        them; plan's capacity check reuses it instead of modelling the same documents again)."""
        if self.built is None or self.built[0] is not self.documents:
            self.built = (self.documents, build_inventory(self.documents))
        return self.built[1]

    def kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [o for o in self.items if o.get("kind") in kinds]

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {},
            HEADER_KEY: self.header.to_dict(),
            "items": self.items,
        }


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _str)


def render(snap: Snapshot, fmt: str = "yaml") -> str:
    data = snap.to_dict()
    if fmt == "json":
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    head = f"# kubedra snapshot of {snap.header.cluster} ({snap.header.server_version}) at {snap.header.captured_at}\n"
    return head + yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096
    )


def write(snap: Snapshot, path: str) -> None:
    """Write atomically (a temporary file renamed over ``path``): nothing half-written on error."""
    fmt = "json" if path.endswith(".json") else "yaml"
    text = render(snap, fmt)
    if path == "-":
        sys.stdout.write(text)
        return
    write_atomic(path, text)


def read_header(path: str) -> Header | None:
    """The header of a snapshot file, or None when ``path`` is an ordinary manifest file."""
    text = files.read_text(path)
    data: Any
    if path.endswith(".json") or text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise InputError(f"cannot read snapshot: {str(e).splitlines()[0]}", Location(path)) from e
    else:
        try:
            first = next(files.iter_documents(text, path), None)  # bounded like every manifest read
        except InputError as e:
            raise InputError(f"cannot read snapshot: {e.message}", e.location) from e
        data = first[1] if first is not None else None
    if not isinstance(data, dict) or not isinstance(data.get(HEADER_KEY), dict):
        return None
    return Header.from_dict(data[HEADER_KEY], path)


def is_snapshot(path: str) -> bool:
    try:
        return os.path.isfile(path) and read_header(path) is not None
    except InputError:
        return False


def load(path: str) -> Snapshot:
    """Read a snapshot file: header plus its objects (as Documents with file:line, through sources.files)."""
    if not os.path.isfile(path):
        raise InputError("no such snapshot file", Location(path))
    header = read_header(path)
    if header is None:
        raise InputError(
            "not a kubedra snapshot (no 'kubedra' header; write one with `kubedra snapshot`)", Location(path)
        )
    result = files.load([path], strict=True)
    for d in result.documents:
        if HEADER_KEY in d.obj:  # a List with items is expanded into them: this one has no items list
            raise InputError("snapshot has no items list", d.location)
    # every object as the model reads it: a malformed one is one line with file:line (exit 2), not a crash
    # of a check that trusts the API's shapes
    snap = Snapshot(
        header=header, items=[d.obj for d in result.documents], documents=result.documents, path=path
    )
    snap.inventory()
    return snap


def load_many(paths: Sequence[str]) -> list[Snapshot]:
    return [load(p) for p in paths]
