"""Read Kubernetes manifests the way ``kubectl -f`` does: files, folders (recursive), ``-`` for stdin.

YAML (multi-document) and JSON are accepted; ``List`` kinds (``kind: List`` or any ``*List`` with
``items``) are expanded. Every document keeps its file and 1-based line, and ``Document.line_of(path)``
finds the line of any field inside it, so findings can point at ``file:line``.

Bulk reading uses PyYAML's C loader (``CSafeLoader``) when available; rewriting is done elsewhere
with ruamel.yaml (see ``kubedra.migrate``).
"""

from __future__ import annotations

import functools
import gc
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubedra.errors import InputError, Location

try:  # pragma: no cover - depends on how PyYAML was built
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor that keeps timestamps as strings, like kubectl (JSON has no timestamps)."""


# Kubernetes objects carry RFC 3339 strings, not YAML timestamps; keep them as text.
_Constructor.add_constructor(  # type: ignore[type-var]
    "tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_str
)


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_BOOLS = {"yes": True, "no": False, "true": True, "false": False, "on": True, "off": False}


class _Unusual(Exception):
    """The document needs the full constructor."""


class _FastLoader(_Loader):
    """The C loader with implicit tag resolution cached per (value, plain): manifests repeat the same keys
    and values over and over, and resolution is called from C for every scalar."""

    _resolver = _Loader(" ")  # a stock resolver instance, for cache misses

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            return _resolve_scalar(value, bool(implicit[0]))
        return _Loader.resolve(self, kind, value, implicit)


@functools.lru_cache(maxsize=1 << 16)
def _resolve_scalar(value: str, plain: bool) -> str:
    tag: str = _Loader.resolve(_FastLoader._resolver, yaml.ScalarNode, value, (plain, not plain))
    return tag


_scalar_constructor = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    if tag in (_STR, _TIMESTAMP):
        return node.value
    if tag == _INT:
        return _scalar_constructor.construct_yaml_int(node)
    if tag == _BOOL:
        return _BOOLS[node.value.lower()]
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        return _scalar_constructor.construct_yaml_float(node)
    raise _Unusual(tag)


def _convert(node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if isinstance(node, yaml.MappingNode):
        if node.tag != _MAP:
            raise _Unusual(node.tag)
        out: dict[Any, Any] = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or k.tag == _MERGE:
                raise _Unusual("complex or merge key")
            out[_scalar(k)] = _convert(v)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise _Unusual(node.tag)
        return [_convert(v) for v in node.value]
    raise _Unusual(type(node).__name__)


def construct(node: yaml.Node) -> Any:
    """Build the Python object of a document node: a direct conversion for the core tags (str, int, float,
    bool, null; timestamps stay strings), PyYAML's SafeConstructor for anything else (other tags, merge keys,
    complex keys), so results are identical to ``yaml.safe_load`` apart from timestamps."""
    try:
        return _convert(node)
    except _Unusual:
        return _Constructor().construct_document(node)


@dataclass
class Document:
    """One Kubernetes object (a mapping) read from a file."""

    obj: dict[str, Any]
    file: str
    line: int
    index: int = 0  # position of the document in its file (after List expansion)
    _node: yaml.Node | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> Location:
        return Location(file=self.file, line=self.line)

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def name(self) -> str:
        meta = self.obj.get("metadata") or {}
        return str(meta.get("name") or meta.get("generateName") or "") if isinstance(meta, dict) else ""

    @property
    def namespace(self) -> str | None:
        meta = self.obj.get("metadata") or {}
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        return str(ns) if ns else None

    def describe(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"

    def line_of(self, path: Sequence[str | int]) -> int:
        """1-based line of the value at ``path`` (keys and list indexes); the closest ancestor if absent."""
        node = self._node
        line = self.line
        if node is None:
            return line
        for step in path:
            nxt: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode) and isinstance(step, str):
                for k, v in node.value:
                    if isinstance(k, yaml.ScalarNode) and k.value == step:
                        nxt = v
                        line = k.start_mark.line + 1
                        break
            elif (
                isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value)
            ):
                nxt = node.value[step]
                line = nxt.start_mark.line + 1
            if nxt is None:
                return line
            node = nxt
        return line


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def iter_manifest_files(paths: Iterable[str], also: tuple[str, ...] = ()) -> Iterator[str]:
    """Expand files and folders (recursively, sorted, hidden entries skipped) into manifest paths.

    Inside folders, files ending in ``MANIFEST_SUFFIXES`` (or one of ``also``, e.g. Helm ``.tpl`` templates
    a verb reports) are taken; files named explicitly are always taken."""
    suffixes = (*MANIFEST_SUFFIXES, *also)
    for p in paths:
        if p == STDIN:
            yield p
            continue
        path = Path(p)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for f in sorted(files):
                    if f.endswith(suffixes) and not f.startswith("."):
                        yield os.path.join(root, f)
        elif path.exists():
            yield str(path)
        else:
            raise InputError(f"no such file or directory: {p}")


def read_text(name: str) -> str:
    """A manifest file's text (``-`` reads stdin); unreadable or non-UTF-8 files raise InputError."""
    if name == STDIN:
        return sys.stdin.read()
    try:
        with open(name, encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError as e:
        raise InputError(f"not a UTF-8 text file ({e.reason})", Location(file=name)) from e
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", Location(file=name)) from e


def _yaml_error(name: str, err: yaml.YAMLError) -> InputError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    msg = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return InputError(msg, Location(file=name, line=line))


def _expand(
    obj: Any, node: yaml.Node | None, name: str, line: int, out: list[Document], errors: list[InputError]
) -> None:
    if obj is None:  # empty document (e.g. trailing '---')
        return
    if not isinstance(obj, dict):
        errors.append(
            InputError(
                f"expected a Kubernetes object (a mapping), found {type(obj).__name__}",
                Location(file=name, line=line),
            )
        )
        return
    kind = obj.get("kind")
    items = obj.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        item_nodes: list[yaml.Node | None] = [None] * len(items)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == "items" and isinstance(v, yaml.SequenceNode):
                    item_nodes = list(v.value)
        for item, inode in zip(items, item_nodes, strict=False):
            iline = inode.start_mark.line + 1 if inode is not None else line
            _expand(item, inode, name, iline, out, errors)
        return
    out.append(Document(obj=obj, file=name, line=line, index=len(out), _node=node))


def parse_text(text: str, name: str, *, keep_nodes: bool = True) -> LoadResult:
    """Parse one file's text; errors are collected, never raised (a broken document stops its file)."""
    result = LoadResult()
    display = "<stdin>" if name == STDIN else name
    stripped = text.lstrip()
    if name.endswith(".json") or (stripped.startswith(("{", "[")) and not name.endswith((".yaml", ".yml"))):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            # JSON is also YAML; fall through to the YAML path only for YAML-looking stdin
            if name.endswith(".json"):
                result.errors.append(
                    InputError(f"invalid JSON: {e.msg}", Location(file=display, line=e.lineno))
                )
                return result
        else:
            docs = obj if isinstance(obj, list) else [obj]
            node = None
            if keep_nodes:
                try:
                    node = yaml.compose(text, Loader=_Loader)
                except yaml.YAMLError:
                    node = None
            for d in docs:
                _expand(d, node if len(docs) == 1 else None, display, 1, result.documents, result.errors)
            return result
    gc_was_enabled = gc.isenabled()
    gc.disable()  # building many small containers triggers needless collections (3-4x slower)
    try:
        loader = _FastLoader(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                obj = construct(node)
                _expand(
                    obj,
                    node if keep_nodes else None,
                    display,
                    node.start_mark.line + 1,
                    result.documents,
                    result.errors,
                )
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        result.errors.append(_yaml_error(display, e))
    finally:
        if gc_was_enabled:
            gc.enable()
    for i, d in enumerate(result.documents):
        d.index = i
    return result


def load(paths: Iterable[str], *, strict: bool = True, keep_nodes: bool = True) -> LoadResult:
    """Load every manifest under ``paths``.

    With ``strict`` the first error is raised as :class:`InputError` (the caller prints one line and exits 2);
    otherwise errors are collected so a scan can report malformed files and go on.
    """
    result = LoadResult()
    for name in iter_manifest_files(paths):
        try:
            text = read_text(name)
        except InputError as e:
            if strict:
                raise
            result.errors.append(e)
            continue
        one = parse_text(text, name, keep_nodes=keep_nodes)
        if strict and one.errors:
            raise one.errors[0]
        result.documents.extend(one.documents)
        result.errors.extend(one.errors)
    return result


_read_text = read_text  # older name, still used by a few modules


def load_each(paths: Iterable[str], *, keep_nodes: bool = True) -> Iterator[tuple[str, LoadResult]]:
    """(file, its documents and errors) for every manifest under ``paths``; unreadable files become errors.
    For scans that report per file and go on (audit)."""
    for name in iter_manifest_files(paths):
        try:
            text = read_text(name)
        except InputError as e:
            yield name, LoadResult(errors=[e])
            continue
        yield name, parse_text(text, name, keep_nodes=keep_nodes)
