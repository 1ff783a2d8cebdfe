"""A snapshot's header and objects as data (:class:`Snapshot`); the file format is described, read and written
in :mod:`kubedra.model.snapshot`.

Apart from it so that a reader of snapshot headers (``kubedra audit``, which takes a snapshot file among its
inputs) does not import the model's inventory of typed objects, which only modelling a snapshot needs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.sources import files, jsonstream

FORMAT = "kubedra.io/snapshot/v1"
HEADER_KEY = "kubedra"
# JSON snapshots from this size on are read item by item (:func:`streamed`) instead of whole: every file
# that a whole read refuses (``files.MAX_FILE_BYTES``), so a smaller one reads exactly as it always has
STREAM_MIN_BYTES = files.MAX_FILE_BYTES + 1
# smaller JSON snapshots are read item by item too, each item keeping its text so that a field's line is
# composed only when asked for (:func:`kubedra.model.snapshot.load`): no node tree of the whole file, and memory
# per node that of the model and the item's text instead of about 1.7 MB (False: read them whole, as before)
STREAM_SMALL = True
# a streamed file is taken for a snapshot only when its header's format is within this much of its start or
# its end (``kubedra snapshot -o FILE.json`` writes the header last): a large JSON file of another kind is
# refused at once, never decoded whole to find out
MARK_WINDOW = files.MAX_FILE_BYTES
_MARK = FORMAT.rsplit("/", 1)[0].encode() + b"/"
NOT_A_SNAPSHOT = "not a kubedra snapshot (no 'kubedra' header; write one with `kubedra snapshot`)"


def should_stream(path: str) -> bool:
    """Whether the snapshot file ``path`` is JSON of at least :data:`STREAM_MIN_BYTES` (read item by item)."""
    return jsonstream.should_stream(path, STREAM_MIN_BYTES)


def has_mark(path: str) -> bool:
    """Whether a snapshot header's format (``kubedra.io/snapshot/``) is within :data:`MARK_WINDOW` bytes of
    the file's start or end (bounded: at most twice the window is read, in 1 MiB blocks)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            for start in (0, max(size - MARK_WINDOW, 0)):
                f.seek(start)
                tail = b""
                left = min(MARK_WINDOW, size - start)
                while left > 0:
                    block = f.read(min(1 << 20, left))
                    if not block:
                        break
                    left -= len(block)
                    if _MARK in tail + block:
                        return True
                    tail = block[-len(_MARK) :]
    except OSError:
        return False
    return False


@contextlib.contextmanager
def streamed(
    path: str, keep_text: bool = False, trees: bool = False, share: bool = True
) -> Iterator[jsonstream.JsonListStream]:
    """A large JSON snapshot read item by item: ``with streamed(p) as s: for line, item in s.items(): ...``,
    then :func:`streamed_header`. Every problem (not JSON, not UTF-8, truncated, an object over the size
    bound, no snapshot header near either end) is one InputError naming the file. ``keep_text``: each item
    keeps its text (:class:`kubedra.sources.jsonstream.JsonListStream`) to compose its lines on demand;
    ``trees``: equal mappings and lists are one object across items (for a caller that never changes one);
    ``share``: one copy of each key and short string across items (off for a caller that keeps a part of
    some items and shares what it keeps itself)."""
    if not has_mark(path):
        raise InputError(NOT_A_SNAPSHOT, Location(path))
    try:
        with open(path, encoding="utf-8") as f:
            # items are kept whole: one copy of keys
            yield jsonstream.JsonListStream(f, path, keep_text=keep_text, share=share, trees=trees)
    except jsonstream.NotAList:
        raise InputError(NOT_A_SNAPSHOT, Location(path)) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not a UTF-8 text file ({e.reason})", Location(file=path)) from e
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", Location(file=path)) from e


def streamed_header(stream: jsonstream.JsonListStream, path: str) -> Header:
    """The header of a snapshot whose items were all read; InputError when it has none or no items list."""
    head = stream.top.get(HEADER_KEY)
    if not isinstance(head, dict):
        raise InputError(NOT_A_SNAPSHOT, Location(path))
    header = Header.from_dict(head, path)
    if not stream.saw_items:
        raise InputError("snapshot has no items list", Location(path))
    return header


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
