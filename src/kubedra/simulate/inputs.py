"""Read the simulation's inputs: manifests like ``kubectl -f`` (files, folders, ``-``), plus the Helm/Go
templates found in folders, which are reported (never parsed) because their values are unknown.

A JSON List (a snapshot, ``kubectl get -o json``) is streamed; from :data:`STREAM_MIN_BYTES` on (a large
cluster) without a node tree for field lines (an error names the item's line): each item is modelled as it is read (:func:`kubedra.model.inventory.add_document`) and the
Document keeps only what the workload expansion reads of it (apiVersion, kind, name, namespace,
generateName, labels, spec.workloadRef), so the whole cluster is never in memory as dicts. The model built
on the way is :attr:`Inputs.inventory`, which :func:`kubedra.simulate.run.simulate` uses instead of
modelling the documents again."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from kubedra import vendors
from kubedra.errors import InputError, Location, UsageError
from kubedra.gcpause import paused_gc
from kubedra.model import convert
from kubedra.model.inventory import Inventory, add_document
from kubedra.model.objects import Container, Node, Pod, Toleration
from kubedra.scheduler.skipped import Skipped
from kubedra.sources import jsonstream
from kubedra.sources.files import (
    HELM_TEMPLATE,
    STDIN,
    Document,
    TemplateInput,
    iter_manifest_files,
    parse_text,
    read_text,
    template_line,
    with_advice,
)

# JSON files from this size on are streamed (below it, the whole-file reader keeps each field's line)
STREAM_MIN_BYTES = 8 * 1024 * 1024
# smaller JSON Lists are streamed too, each item keeping its text so its lines are composed only when asked
# (about half the CPU and a third of the memory of reading them whole: the node tree is never built)
STREAM_SMALL_LISTS = True
_T = TypeVar("_T")
# what the workload expansion reads of a modelled object's document (kubedra.scheduler.workloads)
_KEEP_META = ("name", "namespace", "generateName", "labels")


@dataclass
class Inputs:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    # the model of ``documents``, built while streaming (None: simulate models the documents itself)
    inventory: Inventory | None = None
    # inputs not read (Helm templates and charts, also in ``skipped``): the simulation is incomplete
    not_read: int = 0


def _paths(paths: Iterable[str]) -> Iterator[str]:
    return iter_manifest_files(paths)


def _template_reason(text: str) -> str:
    lines = text.splitlines()
    domains = tuple(v.resource_domain for v in vendors.all())
    gpu = next(
        (
            ln.strip()
            for ln in lines
            if "{{" in ln and any(d in ln for d in domains) and not ln.lstrip().startswith("#")
        ),
        None,
    )
    why = f"{HELM_TEMPLATE} and simulate its output (its values are unknown until rendered)"
    if gpu:
        why += f" (GPU request set by the template: {gpu})"
    return why


def load_inputs(paths: Iterable[str]) -> Inputs:
    """Every document under ``paths``; templates are reported in ``skipped``; bad YAML raises InputError."""
    paths = list(paths)
    if not paths:
        raise UsageError("no input: pass -f FILE (or -f - for stdin), or --nodes to generate a cluster")
    with paused_gc():  # many small acyclic documents (kubedra.gcpause)
        return _load(paths)


def _load(paths: list[str]) -> Inputs:
    out = Inputs()
    for name in _paths(paths):
        if jsonstream.should_stream(name):
            big = os.path.getsize(name) >= STREAM_MIN_BYTES
            try:
                if (big or STREAM_SMALL_LISTS) and _stream(name, out, lazy_lines=not big):
                    continue
            except InputError:
                if big:
                    raise
                # a small file is read whole again, so its error reads as it always has (nothing was added)
        try:
            text = read_text(name)
        except TemplateInput as e:  # a Helm chart folder
            if not e.chart:
                raise
            out.not_read += 1
            why = with_advice(e, "simulate").message
            out.skipped.append(Skipped(Location(name), os.path.basename(name), why, not_read=True))
            continue
        display = "<stdin>" if name == STDIN else name
        line = template_line(name, text)
        if line is not None:
            why = _template_reason(text)
            out.not_read += 1
            out.skipped.append(
                Skipped(Location(display, line), os.path.basename(display), why, not_read=True)
            )
            continue
        one = parse_text(text, name, keep_nodes="lazy")
        if one.errors:
            raise one.errors[0]
        for d in one.documents:
            reason = _not_simulated(d)
            if reason is not None:
                out.skipped.append(Skipped(d.location, d.describe().strip() or "document", reason))
                continue
            d.index = len(out.documents)
            out.documents.append(d)
            if out.inventory is not None:
                add_document(out.inventory, d)
    if out.inventory is not None:
        out.inventory.facts.clear()  # as build_inventory does: the objects stay shared, the table goes
    return out


def _stream(name: str, out: Inputs, lazy_lines: bool = False) -> bool:
    """Read a JSON List item by item into ``out``; False (nothing added) when the file is not a List. With
    ``lazy_lines`` each item keeps its text, so a line inside it is found as for a file read whole (small
    files); without, a field's line is its item's (the gigabyte snapshots)."""
    inv = Inventory()
    docs: list[Document] = []
    skipped: list[Skipped] = []
    shared: dict[Any, Any] = {}
    parts: dict[Any, Any] = {}  # the pods' containers and tolerations by content (interned below anyway)
    try:
        with open(name, encoding="utf-8") as f:
            stream = jsonstream.JsonListStream(f, name, keep_text=lazy_lines)
            for d in jsonstream.stream_documents(stream):
                reason = _not_simulated(d)
                if reason is not None:
                    skipped.append(Skipped(d.location, d.describe().strip() or "document", reason))
                    continue
                obj = add_document(inv, d, parts)
                if isinstance(obj, Pod):
                    _intern_pod(obj, shared)
                    pd = _PodDocument.made(d, obj)
                    if pd is not None:  # what _slim then _PodDocument.of give, without the slim dicts
                        inv.sources[id(obj)] = d = pd
                        docs.append(d)
                        continue
                elif isinstance(obj, Node):
                    _intern_node(obj)
                if obj is not None:
                    d.obj = _slim(d.obj, obj)
                    if isinstance(obj, Pod):
                        d = _PodDocument.of(d)
                        inv.sources[id(obj)] = d
                docs.append(d)
    except jsonstream.NotAList:
        return False
    except UnicodeDecodeError as e:
        raise InputError(f"not a UTF-8 text file ({e.reason})", Location(file=name)) from e
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", Location(file=name)) from e
    if not stream.is_list:
        return False
    if out.inventory is None:  # model what came before, in order
        out.inventory = Inventory()
        for d in out.documents:
            add_document(out.inventory, d)
    _merge(out.inventory, inv)
    for d in docs:
        d.index = len(out.documents)
        out.documents.append(d)
    out.skipped += skipped
    return True


def _intern_pod(pod: Pod, shared: dict[Any, Any]) -> None:
    """One copy of what repeats across a cluster's running pods: strings (namespaces, node names, labels),
    and the labels, owner references, tolerations, containers, claims and affinity of the pods of one
    workload, each list and map whole (never changed once modelled: a view's version of a pod is a new
    Pod, a field set later is set to a new value). Most of a large cluster's objects are such pods."""
    i = sys.intern
    m = pod.meta
    m.namespace, m.generate_name = i(m.namespace), i(m.generate_name)
    m.creation_timestamp = i(m.creation_timestamp)
    m.uid = ""  # no part of the simulation reads a pod's uid (a unique string per pod)
    m.labels = _one(shared, "labels", m.labels, tuple(m.labels.items()))
    m.annotations = _one(shared, "annotations", m.annotations, tuple(m.annotations.items()))
    refs = m.owner_references
    for n, ref in enumerate(refs):
        with contextlib.suppress(TypeError):  # a value that is not hashable: keep it as it is
            refs[n] = shared.setdefault(tuple(ref.items()), ref)
    m.owner_references = _one(shared, "owners", refs, tuple(id(r) for r in refs))
    pod.node_name, pod.phase = i(pod.node_name), i(pod.phase)
    pod.scheduler_name, pod.priority_class_name = i(pod.scheduler_name), i(pod.priority_class_name)
    pod.tolerations = _seen(shared, "tolerations", pod.tolerations, _tolerations)
    pod.containers = _seen(shared, "containers", pod.containers, _containers)
    pod.init_containers = _seen(shared, "init", pod.init_containers, _containers)
    pod.overhead = _one(shared, "overhead", pod.overhead, tuple((k, id(q)) for k, q in pod.overhead.items()))
    pod.node_selector = _one(shared, "selector", pod.node_selector, tuple(pod.node_selector.items()))
    pod.claim_statuses = _one(shared, "statuses", pod.claim_statuses, tuple(pod.claim_statuses.items()))
    pod.resource_claims = _one(
        shared,
        "claims",
        pod.resource_claims,
        tuple((r.name, r.resource_claim_name, r.resource_claim_template_name) for r in pod.resource_claims),
    )
    if pod.affinity:
        with contextlib.suppress(TypeError, ValueError):  # not JSON data: kept as it is
            pod.affinity = shared.setdefault(("affinity", json.dumps(pod.affinity)), pod.affinity)


def _intern_node(node: Node) -> None:
    """One copy of the keys of a Node's labels, capacity and allocatable, and of its label values, across the
    nodes of a cluster (the JSON decoder shares them within one item only; a GPU node has dozens of labels)."""
    i = sys.intern
    m = node.meta
    with contextlib.suppress(TypeError):  # a key or value that is not a string: kept as it is
        m.labels = {i(k): i(v) for k, v in m.labels.items()}
    with contextlib.suppress(TypeError):
        node.capacity = {i(k): q for k, q in node.capacity.items()}
    with contextlib.suppress(TypeError):
        node.allocatable = {i(k): q for k, q in node.allocatable.items()}


_ABSENT: Any = object()  # a key the slim mapping does not have
_REPLACED: Any = object()  # _PodDocument: its mapping was set (kept in Document's slot)
_OBJ: Any = Document.__dict__["obj"]  # Document's own slot for ``obj``


class _PodDocument(Document):
    """A streamed v1 Pod's document whose slim mapping (:func:`_slim`: apiVersion, kind and four metadata fields)
    is kept as those values, not as two dicts per pod (most of a large cluster's documents are its running
    pods); ``obj`` makes the same mapping again, keys in the same order, each time it is read (a mapping set
    in its place is kept and read back instead)."""

    __slots__ = ("_generate_name", "_labels", "_name", "_namespace")
    _name: Any  # metadata.name (_REPLACED once a mapping is set)
    _namespace: Any
    _generate_name: Any
    _labels: Any

    @classmethod
    def of(cls, d: Document) -> Document:
        """``d`` as a _PodDocument when its slim mapping is one it makes again exactly, else ``d``."""
        slim = d.obj
        meta = slim.get("metadata")
        if (
            list(slim) != ["apiVersion", "kind", "metadata"]
            or slim["apiVersion"] != "v1"
            or slim["kind"] != "Pod"
            or type(slim["apiVersion"]) is not str
            or type(slim["kind"]) is not str
            or type(meta) is not dict
        ):
            return d
        out = cls.__new__(cls)
        out.file, out.line, out.index, out.node_source = d.file, d.line, d.index, d.node_source
        out._name, out._namespace, out._generate_name, out._labels = (
            meta.get(k, _ABSENT) for k in _KEEP_META
        )
        if list(out.obj["metadata"].items()) != list(meta.items()):
            return d
        return out

    @classmethod
    def made(cls, d: Document, pod: Pod) -> _PodDocument | None:
        """``_PodDocument.of(d)`` once ``d.obj`` is ``_slim(d.obj, pod)``, made from the item itself (``pod``: its
        model, interned): None where ``of`` would keep the slim document (no metadata mapping, a
        ``spec.workloadRef``). The item is a v1 Pod, as ``pod`` is its model."""
        raw = d.obj
        meta = raw.get("metadata")
        spec = raw.get("spec")
        if type(meta) is not dict or (isinstance(spec, dict) and "workloadRef" in spec):
            return None
        out = cls.__new__(cls)
        out.file, out.line, out.index, out.node_source = d.file, d.line, d.index, d.node_source
        get = meta.get
        out._name = get("name", _ABSENT)
        out._namespace = _interned(get("namespace", _ABSENT))
        out._generate_name = _interned(get("generateName", _ABSENT))
        out._labels = pod.meta.labels if "labels" in meta else _ABSENT
        return out

    @property
    def name(self) -> str:
        if self._name is _REPLACED:
            return super().name
        v = self._name if self._name is not _ABSENT else None
        return str(v or (self._generate_name if self._generate_name is not _ABSENT else None) or "")

    @property
    def namespace(self) -> str | None:
        if self._name is _REPLACED:
            return super().namespace
        ns = self._namespace if self._namespace is not _ABSENT else None
        return str(ns) if ns else None

    @property
    def obj(self) -> dict[str, Any]:
        if self._name is _REPLACED:
            return cast("dict[str, Any]", _OBJ.__get__(self))
        values = (self._name, self._namespace, self._generate_name, self._labels)
        meta = {k: v for k, v in zip(_KEEP_META, values, strict=True) if v is not _ABSENT}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}

    @obj.setter
    def obj(self, value: dict[str, Any]) -> None:
        _OBJ.__set__(self, value)
        self._name = _REPLACED

    @property
    def api_version(self) -> str:
        return "v1" if self._name is not _REPLACED else super().api_version

    @property
    def kind(self) -> str:
        return "Pod" if self._name is not _REPLACED else super().kind


def _one(shared: dict[Any, Any], what: str, value: _T, key: tuple[Any, ...]) -> _T:
    """The first ``value`` seen with this ``key`` (``what`` keeps the kinds of keys apart). A key that holds
    ids names objects ``shared`` keeps alive, so it stands for their content."""
    try:
        return cast("_T", shared.setdefault((what, key), value))
    except TypeError:  # a value that is not hashable: kept as it is
        return value


def _seen(
    shared: dict[Any, Any], what: str, value: _T, intern: Callable[[dict[Any, Any], str, _T], _T]
) -> _T:
    """``intern(shared, what, value)``, once per list: the parser gives the pods of a workload one list of
    equal containers or tolerations (:meth:`kubedra.model.fields.ParseContext.alike`). The entry keeps
    ``value``, so its id is not reused while ``shared`` lives."""
    key = (what, id(value))
    hit = shared.get(key)
    if hit is not None and hit[0] is value:
        return cast("_T", hit[1])
    out = intern(shared, what, value)
    shared[key] = (value, out)
    return out


def _tolerations(shared: dict[Any, Any], what: str, tols: list[Toleration]) -> list[Toleration]:
    """One copy of each equal toleration, and of each list of them."""
    for n, t in enumerate(tols):
        tols[n] = shared.setdefault((t.key, t.operator, t.value, t.effect, t.toleration_seconds), t)
    return _one(shared, what, tols, tuple(id(t) for t in tols))


def _containers(shared: dict[Any, Any], what: str, containers: list[Container]) -> list[Container]:
    """Names interned, one copy of each list of equal containers."""
    for c in containers:
        c.name = sys.intern(c.name)
    return _one(shared, what, containers, _containers_key(containers))


def _containers_key(containers: list[Container]) -> tuple[Any, ...]:
    """Equal containers have equal keys: their names, the ids of their (shared) quantities, claims, policy."""
    return tuple(
        (
            c.name,
            tuple((k, id(q)) for k, q in c.requests.items()),
            tuple((k, id(q)) for k, q in c.limits.items()),
            tuple(c.claims),
            c.restart_policy,
        )
        for c in containers
    )


def _slim(obj: dict[str, Any], model: Any) -> dict[str, Any]:
    """What the workload expansion reads of a modelled object (the model has the rest)."""
    slim: dict[str, Any] = {
        "apiVersion": _interned(obj.get("apiVersion")),
        "kind": _interned(obj.get("kind")),
    }
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        slim["metadata"] = {
            k: _interned(meta[k]) if k != "name" else meta[k] for k in _KEEP_META if k in meta
        }
        own = getattr(getattr(model, "meta", None), "labels", None)
        if "labels" in meta and own is not None and (isinstance(model, Pod) or own == meta["labels"]):
            slim["metadata"]["labels"] = own  # the model's copy (a Pod's interned one), not a second one
    spec = obj.get("spec")
    if isinstance(spec, dict) and "workloadRef" in spec:
        slim["spec"] = {"workloadRef": spec["workloadRef"]}
    return slim


def _interned(v: Any) -> Any:
    return sys.intern(v) if type(v) is str else v


def _merge(into: Inventory, part: Inventory) -> None:
    into.classes += part.classes
    into.slices += part.slices
    into.taint_rules += part.taint_rules
    into.nodes += part.nodes
    into.claims += part.claims
    into.templates += part.templates
    into.pods += part.pods
    into.others += part.others
    into.skipped.update(part.skipped)
    into.notes += part.notes
    into.sources.update(part.sources)


def _not_simulated(d: Document) -> str | None:
    """Documents that are not objects the simulation can use (reported, not fatal)."""

    if not d.api_version or not d.kind:
        return "not a Kubernetes object (no apiVersion/kind): a fragment or a tool's own configuration"
    if convert.is_classic(d.api_version):
        return (
            f"classic DRA ({d.api_version}) was removed in Kubernetes 1.32 and has no mechanical conversion "
            "to structured DRA; rewrite it (kubedra migrate reports what to do)"
        )
    return None
