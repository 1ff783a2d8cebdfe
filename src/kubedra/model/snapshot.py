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

YAML is written when the file name ends in ``.yaml``/``.yml`` (or for ``-``), JSON for ``.json``. JSON puts the
header after ``items`` (:class:`JsonWriter` writes the items as they are captured; the header is complete only
at the end): every reader takes the keys in any order. Both read back
through :func:`kubedra.sources.files.load` as a normal List, so audit, simulate and validate accept a snapshot
like any manifest file; :func:`load` also returns the header. The header and the :class:`Snapshot` data class
are in :mod:`kubedra.model.snapshotdata` (no model inventory behind them); :func:`inventory` models a snapshot.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Sequence
from typing import Any

import yaml

from kubedra.errors import InputError, Location
from kubedra.model import snapshotdata
from kubedra.model.inventory import Inventory, add_document, build_inventory, check_document
from kubedra.model.snapshotdata import FORMAT, HEADER_KEY, NOT_A_SNAPSHOT, Header, HelmRelease, Snapshot
from kubedra.safewrite import AtomicFile, write_atomic
from kubedra.sources import files, jsonstream

__all__ = [  # the data classes are in model.snapshotdata, re-exported here
    "FORMAT",
    "HEADER_KEY",
    "Header",
    "HelmRelease",
    "JsonWriter",
    "Snapshot",
    "inventory",
    "is_snapshot",
    "load",
    "load_many",
    "read_header",
    "render",
    "write",
]


def inventory(snap: Snapshot) -> Inventory:
    """The snapshot's documents as the model reads them, built once per list of documents (load() builds it to
    check them; plan's capacity check reuses it instead of modelling the same documents again)."""
    if snap.built is None or snap.built[0] is not snap.documents:
        snap.built = (snap.documents, build_inventory(snap.documents))
    built: Inventory = snap.built[1]
    return built


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(str, _str)


def render(snap: Snapshot, fmt: str = "yaml") -> str:
    data = snap.to_dict()
    if fmt == "json":  # the header after the items, as JsonWriter writes it (known only at the end)
        data[HEADER_KEY] = data.pop(HEADER_KEY)
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


class JsonWriter:
    """Writes a snapshot as JSON one item at a time (``kubedra snapshot -o FILE.json``), the same text as
    :func:`render` (``json``) without holding the items: the List's opening, each item as it is added, and the
    header (whose ``notInspected`` is known only at the end) after ``items``. ``mark``/``rollback`` drop what
    was added since the mark (a listing that failed halfway is left out whole, as an in-memory capture does)."""

    def __init__(self, out: AtomicFile) -> None:
        self.out = out
        self.count = 0
        self.kinds: dict[str, int] = {}
        self._mark = (0, 0, dict[str, int]())
        out.write(b'{\n "apiVersion": "v1",\n "kind": "List",\n "metadata": {},\n "items": [')

    def mark(self) -> None:
        self._mark = (self.out.tell(), self.count, dict(self.kinds))

    def rollback(self) -> None:
        pos, self.count, self.kinds = self._mark
        self.out.seek(pos)
        self.out.truncate()

    def add(self, obj: dict[str, Any]) -> None:
        text = json.dumps(obj, indent=1, ensure_ascii=False).replace("\n", "\n  ")
        self.out.write((",\n  " if self.count else "\n  ").encode() + text.encode())
        self.count += 1
        kind = str(obj.get("kind"))
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def finish(self, header: Header) -> None:
        text = json.dumps(header.to_dict(), indent=1, ensure_ascii=False).replace("\n", "\n ")
        self.out.write(
            ("\n ]" if self.count else "]").encode() + f',\n "{HEADER_KEY}": {text}\n}}\n'.encode()
        )


def read_header(path: str) -> Header | None:
    """The header of a snapshot file, or None when ``path`` is an ordinary manifest file. A large JSON file
    (:func:`kubedra.model.snapshotdata.should_stream`) is read item by item, none of them kept."""
    if snapshotdata.should_stream(path):
        if not snapshotdata.has_mark(path):
            return None
        with snapshotdata.streamed(path) as stream:
            for _ in stream.items():
                pass
        return snapshotdata.streamed_header(stream, path)
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


Slim = Callable[[dict[str, Any]], dict[str, Any]]


def load(
    path: str,
    kinds: Collection[str] | None = None,
    slim: Slim | None = None,
    *,
    trees: bool = False,
    model_kinds: Collection[str] | None = None,
) -> Snapshot:
    """Read a snapshot file: header plus its objects (as Documents with file:line, through sources.files).

    A JSON file of :data:`kubedra.model.snapshotdata.STREAM_MIN_BYTES` or more (larger than a whole read
    takes) is read item by item (:func:`_load_streamed`), and so is a smaller JSON file, whose items keep their
    text so that a field's line is composed only when asked for (the same lines as a whole read, without the
    node tree of the whole file: about 1.7 MB per node of a real cluster's snapshot); ``kinds``, when given, are the only kinds it keeps
    (every object is still checked): the caller reads no other, and ``slim`` makes of each kept object what
    the caller reads of it and shares its keys and strings (a JSON file's items are then not shared as they
    are read: most of what a decoded item holds is dropped); ``trees``: a JSON file's items share their equal mappings and lists
    (:func:`kubedra.sources.jsonstream.shared_tree`), for a caller that never changes an object;
    ``model_kinds``: of a JSON file read with every kind kept, the kinds whose model :func:`inventory` keeps (every
    object is still modelled and checked). A larger YAML file is refused."""
    if not os.path.isfile(path):
        raise InputError("no such snapshot file", Location(path))
    if snapshotdata.should_stream(path):
        return _load_streamed(path, kinds, slim, trees=trees, model_kinds=model_kinds)
    if snapshotdata.STREAM_SMALL and jsonstream.should_stream(path):
        try:
            return _load_streamed(path, kinds, slim, lazy_lines=True, trees=trees, model_kinds=model_kinds)
        except InputError:
            pass  # read whole again below, so that its error reads exactly as it always has
    if os.path.getsize(path) > files.MAX_FILE_BYTES:
        raise InputError(
            f"a YAML snapshot is read whole, at most {files.MAX_FILE_BYTES // 2**20} MiB: capture large clusters "
            "as JSON (`kubedra snapshot -o snapshot.json`), which is read item by item",
            Location(path),
        )
    header = read_header(path)
    if header is None:
        raise InputError(NOT_A_SNAPSHOT, Location(path))
    result = files.load([path], strict=True)
    for d in result.documents:
        if HEADER_KEY in d.obj:  # a List with items is expanded into them: this one has no items list
            raise InputError("snapshot has no items list", d.location)
    # every object as the model reads it: a malformed one is one line with file:line (exit 2), not a crash
    # of a check that trusts the API's shapes
    snap = Snapshot(
        header=header, items=[d.obj for d in result.documents], documents=result.documents, path=path
    )
    inventory(snap)
    return snap


def _load_streamed(
    path: str,
    kinds: Collection[str] | None,
    slim: Slim | None,
    lazy_lines: bool = False,
    trees: bool = False,
    model_kinds: Collection[str] | None = None,
) -> Snapshot:
    """A large JSON snapshot, item by item: each object is modelled as it is read (a malformed one is one line
    naming its item's line, exit 2) and its dict kept only when its kind is wanted; without ``kinds`` the model
    is kept too (:func:`inventory` reuses it). A field's line is its item's (no node tree is built), or, with
    ``lazy_lines``, composed from the item's text when asked for."""
    inv = Inventory()
    docs: list[files.Document] = []
    checked = False
    share = slim is None or kinds is None  # a slim function shares what it keeps itself
    # the objects only checked share their equal parts (trees): each part parsed once (parse_object's ``seen``)
    seen: dict[tuple[int, str], tuple[Any, Any]] | None = {} if trees else None
    with snapshotdata.streamed(path, keep_text=lazy_lines, trees=trees, share=share) as stream:
        for d in jsonstream.stream_documents(stream):
            if not checked and HEADER_KEY in stream.top:  # written before the items: checked before them
                head = stream.top[HEADER_KEY]
                if not isinstance(head, dict):
                    raise InputError(NOT_A_SNAPSHOT, Location(path))
                Header.from_dict(head, path)
                checked = True
            if HEADER_KEY in d.obj:
                raise InputError("snapshot has no items list", d.location)
            modelled = kinds is None and (model_kinds is None or d.kind in model_kinds)
            if seen is not None and len(seen) > jsonstream.TREES_MAX:
                seen.clear()  # bounded, as the reader's own table
            if modelled:
                add_document(inv, d)
            else:
                check_document(d, seen)
            if kinds is None or d.kind in kinds:
                if slim is not None and kinds is not None:  # the model, when kept, has the documents whole
                    d.obj = slim(d.obj)
                d.index = len(docs)
                docs.append(d)
    header = snapshotdata.streamed_header(stream, path)
    inv.facts.clear()
    snap = Snapshot(header=header, items=[d.obj for d in docs], documents=docs, path=path)
    if kinds is None:
        snap.built = (docs, inv)
    return snap


def load_many(paths: Sequence[str]) -> list[Snapshot]:
    return [load(p) for p in paths]
