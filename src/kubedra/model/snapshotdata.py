"""A snapshot's header and objects as data (:class:`Snapshot`); the file format is described, read and written
in :mod:`kubedra.model.snapshot`.

Apart from it so that a reader of snapshot headers (``kubedra audit``, which takes a snapshot file among its
inputs) does not import the model's inventory of typed objects, which only modelling a snapshot needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location
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
    # (documents, their Inventory): kubedra.model.snapshot.inventory builds it once per list of documents
    built: tuple[list[files.Document], Any] | None = field(default=None, repr=False, compare=False)

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
