"""YAML and JSON text into Python objects the way kubectl reads them: go-yaml v2 scalars, string keys, within
kubedra's bounds (:mod:`kubedra.sources.yamlbounds`).

Bulk reading uses PyYAML's C loader (``CSafeLoader``) when available: implicit tags are resolved with a cache and
the core tags are converted directly; anything else (other tags, merge keys, complex keys) goes through PyYAML's
SafeConstructor with go-yaml's scalar rules. Rewriting is done elsewhere with ruamel.yaml (see ``kubedra.migrate``).
"""

from __future__ import annotations

import functools
import gc
import json
import operator
import sys
from collections.abc import Iterator
from typing import Any

import yaml

from kubedra.errors import InputError, Location
from kubedra.gcpause import paused_gc
from kubedra.sources import yamlbounds, yamlfast
from kubedra.sources import yamlscalars as scalars

try:  # pragma: no cover - depends on how PyYAML was built
    SafeLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    SafeLoader = yaml.SafeLoader
_Loader: Any = SafeLoader
_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)

_STR = scalars.STR
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = scalars.MERGE


class _Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor for what the direct conversion does not handle (other tags, merge keys): scalars are
    resolved like go-yaml v2 (see :mod:`kubedra.sources.yamlscalars`), timestamps kept as strings."""

    def construct_go_scalar(self, node: yaml.ScalarNode) -> Any:
        return _scalar(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Keys become JSON strings as each is built: go-yaml keeps ``y`` (true) and ``1`` as two keys of a
        map[interface{}]interface{}, which sigs.k8s.io/yaml writes as "true" and "1"; a Python dict would
        merge them first (True == 1)."""
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            mapping[_key(key_node, key)] = self.construct_object(value_node, deep=deep)
        return mapping


for _tag in (scalars.BOOL, scalars.INT, scalars.FLOAT, scalars.NULL, _TIMESTAMP):
    _Constructor.add_constructor(_tag, _Constructor.construct_go_scalar)  # type: ignore[type-var]


class _Unusual(Exception):
    """The document needs the full constructor."""


_RESOLVER = yaml.resolver.Resolver()  # collections' default tags (no path resolvers are registered)


@functools.lru_cache(maxsize=1 << 16)
def _resolve(kind: Any, value: Any, implicit: Any) -> Any:
    """The tag of a node without an explicit one: go-yaml v2's for a plain scalar (kubectl), str for a quoted
    one, PyYAML's default for a collection (``value`` is None and ``implicit`` a bool there)."""
    if kind is yaml.ScalarNode:
        return scalars.resolve_plain(value) if implicit[0] else _STR
    return yaml.resolver.Resolver.resolve(_RESOLVER, kind, value, implicit)


class _FastLoader(_Loader):  # type: ignore[misc]  # the C loader when built, else the Python one
    """The C loader with implicit tags resolved like go-yaml v2 (kubectl), cached per (kind, value, implicit):
    manifests repeat the same keys and values over and over, and resolution is called from C for every node.
    The cache itself is the method (a static one), so a hit runs no Python code at all (10,000 manifests:
    0.56 -> 0.45 s to compose them, fastest of 5)."""

    resolve = staticmethod(_resolve)
    # The composer tells the resolver of every node it enters and leaves, for path resolvers, which kubedra
    # registers none of (PyYAML's methods then return at once): C callables that do nothing save a Python call
    # per node each way (10,000 manifests: 400,000 of each).
    descend_resolver = staticmethod(operator.is_)  # (parent, index): no effect
    ascend_resolver = staticmethod(int)  # (): no effect

    if _CParser is not None and _Loader is getattr(yaml, "CSafeLoader", None):

        def __init__(self, stream: str) -> None:
            """Only the C parser's state: nodes are composed here and converted elsewhere, so the constructor's
            and the path resolvers' state that CSafeLoader also sets up is never read (one loader per file)."""
            _CParser.__init__(self, stream)


# the value of a resolved non-string scalar: manifests repeat the same few numbers and booleans
_construct = functools.lru_cache(maxsize=1 << 12)(scalars.construct)


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    if tag in (_STR, _TIMESTAMP):
        return node.value
    if tag in (scalars.INT, scalars.FLOAT, scalars.BOOL, scalars.NULL):
        try:
            return _construct(tag, node.value)
        except scalars.ScalarError as e:
            raise _NodeError(str(e), node) from e
    raise _Unusual(tag)


class _NodeError(ValueError):
    """A value kubectl refuses, at ``node``."""

    def __init__(self, message: str, node: yaml.Node) -> None:
        super().__init__(message)
        self.node = node


def _key(node: yaml.Node, value: Any) -> str:
    try:
        return scalars.json_key(value)
    except scalars.ScalarError as e:
        raise _NodeError(str(e), node) from e


def _convert(node: yaml.Node, depth: int = 1) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return _scalar(node)
    if depth > yamlbounds.MAX_DEPTH:
        raise _NodeError(f"nesting deeper than {yamlbounds.MAX_DEPTH} levels", node)
    if isinstance(node, yaml.MappingNode):
        if node.tag != _MAP:
            raise _Unusual(node.tag)
        out: dict[Any, Any] = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode) or k.tag == _MERGE:
                raise _Unusual("complex or merge key")
            out[_key(k, _scalar(k))] = _convert(v, depth + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        if node.tag != _SEQ:
            raise _Unusual(node.tag)
        return [_convert(v, depth + 1) for v in node.value]
    raise _Unusual(type(node).__name__)


_ScalarNode, _MappingNode, _SequenceNode = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
_intern = sys.intern


def _convert_lines(node: yaml.Node, depth: int = 1) -> tuple[Any, tuple[Any, ...] | None]:
    """:func:`_convert` and the node's line table (:func:`kubedra.sources.documents.line_table`'s tuples) in
    one walk of a tree without aliases: audit reads 10,000 manifests' lines, and walking each tree twice cost
    a sixth of reading them. A string scalar (most keys and values) is taken in line, without a call."""
    cls = node.__class__
    if cls is _ScalarNode:
        value = _scalar(node)  # type: ignore[arg-type]
        return (_intern(value) if value.__class__ is str and len(value) < 64 else value), None
    if depth > yamlbounds.MAX_DEPTH:
        raise _NodeError(f"nesting deeper than {yamlbounds.MAX_DEPTH} levels", node)
    lines: list[int] = []
    kids: list[tuple[Any, ...] | None] = []
    table: tuple[Any, ...] | None
    if cls is _MappingNode:
        if node.tag != _MAP:
            raise _Unusual(node.tag)
        out: dict[Any, Any] = {}
        keys: list[str] = []
        for k, v in node.value:
            if k.__class__ is not _ScalarNode or k.tag == _MERGE:
                raise _Unusual("complex or merge key")
            if v.__class__ is _ScalarNode:
                value = v.value if v.tag == _STR else _scalar(v)
                if value.__class__ is str and len(value) < 64:
                    value = _intern(value)
                table = None
            else:
                value, table = _convert_lines(v, depth + 1)
            raw = _intern(k.value)  # one copy of each key across documents (as the JSON decoder keeps them)
            if k.tag == _STR:
                out[raw] = value
            else:
                key = _key(k, _scalar(k))
                out[raw if key == raw else key] = value
            keys.append(raw)
            lines.append(k.start_mark.line + 1)
            kids.append(table)
        return out, (0, *keys, *lines, *kids)
    if cls is _SequenceNode:
        if node.tag != _SEQ:
            raise _Unusual(node.tag)
        items = []
        for v in node.value:
            if v.__class__ is _ScalarNode:
                value = v.value if v.tag == _STR else _scalar(v)
                if value.__class__ is str and len(value) < 64:
                    value = _intern(value)
                table = None
            else:
                value, table = _convert_lines(v, depth + 1)
            items.append(value)
            lines.append(v.start_mark.line + 1)
            kids.append(table)
        return items, (1, *lines, *kids)
    raise _Unusual(type(node).__name__)


# one copy of each distinct line table: manifests written from one template have the same keys on the same lines
_TABLES: dict[tuple[Any, ...] | None, tuple[Any, ...] | None] = {}
_MAX_TABLES = 4096


def _shared_table(table: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """``table``, or an equal one kept from an earlier document (10,000 manifests: 8 MB of tables, most of
    them equal); at most :data:`_MAX_TABLES` are kept."""
    kept = _TABLES.get(table)
    if kept is not None:
        return kept
    if len(_TABLES) >= _MAX_TABLES:
        _TABLES.clear()
    _TABLES[table] = table
    return table


def _json_keys(obj: Any, node: yaml.Node) -> Any:
    """Mapping keys as strings, the way sigs.k8s.io/yaml converts them (for the full constructor's output)."""
    if isinstance(obj, dict):
        return {_key(node, k): _json_keys(v, node) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_json_keys(v, node) for v in obj]
    return obj


def construct(node: yaml.Node) -> Any:
    """Build the Python object of a document node the way kubectl sees it (go-yaml v2 scalars, string keys):
    a direct conversion for the core tags, PyYAML's SafeConstructor for anything else (other tags, merge
    keys, complex keys). Raises :class:`_NodeError` for what kubectl refuses (``.inf``, a null key)."""
    try:
        return _convert(node)
    except _Unusual:
        yamlbounds.check_node(node)  # depth, for the recursive constructor
        try:
            return _json_keys(_Constructor().construct_document(node), node)
        except TypeError as e:  # an unhashable (complex) key
            raise _NodeError(f"unsupported map key ({e})", node) from e


def _yaml_error(name: str, err: yaml.YAMLError, first_line: int = 1) -> InputError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line = mark.line + first_line if mark is not None else None
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    msg = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return InputError(msg, Location(file=name, line=line))


def plain_documents(text: str) -> list[tuple[int, Any, tuple[Any, ...] | None]] | None:
    """[(first line, object, line table)] of each document of a text :mod:`kubedra.sources.yamlfast` reads
    (plain block YAML; equal tables shared), or None: what :func:`iter_documents_lines` yields for such a text,
    without a node object made for each document only to say where it starts."""
    with paused_gc():  # building many small containers triggers needless collections
        quick = yamlfast.parse(text)
    if quick is None:
        return None
    return [(start, doc, _shared_table(table)) for start, doc, table in quick]


def iter_documents(text: str, display: str, first_line: int = 1) -> Iterator[tuple[yaml.Node, Any]]:
    """(node, value) of every YAML document in ``text``, read like kubectl (go-yaml v2 scalars, string keys)
    within kubedra's bounds (alias expansion as go-yaml allows it, node count, depth). A syntax error or a
    refused document raises InputError at ``display``:line (lines counted from ``first_line``)."""
    for node, obj, _table in iter_documents_lines(text, display, first_line, lines=False):
        yield node, obj


def iter_documents_lines(
    text: str, display: str, first_line: int = 1, *, lines: bool = True
) -> Iterator[tuple[yaml.Node, Any, tuple[Any, ...] | None]]:
    """:func:`iter_documents` with each document's line table built in the same walk (``lines``), or None
    where it is not (aliases, tags the direct conversion leaves to PyYAML, no ``lines``): build it from the
    node then. This is the full path, the reference :func:`plain_documents` (plain block YAML, read by
    :mod:`kubedra.sources.yamlfast`) is held to; a caller tries that first."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # building many small containers triggers needless collections (3-4x slower)
    try:
        loader = _FastLoader(text)
        # Without an alias the graph is a tree as large as the text (and _convert bounds its depth): the
        # expansion walk is needed only with aliases, or for text long enough to hold too many nodes. An
        # alias needs an anchor (the composer refuses an undefined one), so a text without "&" has none
        # (a cron schedule's "*" alone is no alias).
        walk = ("*" in text and "&" in text) or len(text) > 2 * yamlbounds.MAX_DOCUMENT_NODES
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                table = None
                try:
                    if walk:
                        yamlbounds.check_node(node)
                    if lines and not walk:
                        try:
                            obj, table = _convert_lines(node)
                            table = _shared_table(table)
                        except _Unusual:
                            obj = construct(node)
                    else:
                        obj = construct(node)
                except (yamlbounds.BoundsError, _NodeError) as e:
                    line = e.node.start_mark.line + first_line
                    raise InputError(str(e), Location(file=display, line=line)) from None
                yield node, obj, table
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        raise _yaml_error(display, e, first_line) from None
    finally:
        if gc_was_enabled:
            gc.enable()


def _json_int(text: str) -> int | float:
    """A JSON integer as the API machinery reads it: int64, else a float (Go's json falls back to float64)."""
    if len(text) > 20:
        return float(text)  # longer than any int64; float() has no digit limit (int() has 4,300)
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else float(value)


def _json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (Go's decoder and the API server refuse it)")


def load_json(text: str) -> Any:
    """JSON as the API machinery reads it (int64 or float numbers, no NaN/Infinity), nested at most
    ``yamlbounds.MAX_DEPTH``: ValueError or RecursionError otherwise (see :func:`json_problem`)."""
    obj = json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    yamlbounds.check_depth(obj)
    return obj


def json_problem(e: ValueError | RecursionError) -> str:
    """One line saying why :func:`load_json` refused a text."""
    if isinstance(e, RecursionError):
        return f"nesting deeper than {yamlbounds.MAX_DEPTH} levels"
    return str(e).splitlines()[0] if str(e) else type(e).__name__
