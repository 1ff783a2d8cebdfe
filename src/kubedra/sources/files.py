"""Read Kubernetes manifests the way ``kubectl -f`` does: files, folders (recursive), ``-`` for stdin.

YAML (multi-document) and JSON are accepted; ``List`` kinds (``kind: List`` or any ``*List`` with
``items``) are expanded. Every document keeps its file and 1-based line, and ``Document.line_of(path)``
finds the line of any field inside it, so findings can point at ``file:line``.

Bulk reading uses PyYAML's C loader (``CSafeLoader``) when available; rewriting is done elsewhere
with ruamel.yaml (see ``kubedra.migrate``).
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from kubedra.errors import InputError, Location
from kubedra.safewrite import file_kind
from kubedra.sources import yamlbounds
from kubedra.sources import yamlscalars as scalars
from kubedra.text import count

try:  # pragma: no cover - depends on how PyYAML was built
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
TEMPLATE_SUFFIXES = (".yaml.tpl", ".yml.tpl", ".tpl")
STDIN = "-"
# kubedra reads at most this much of one file (or stdin): /dev/zero or a runaway pipe is refused, not read
# until memory runs out. Real manifests are far smaller (the API server takes 3 MiB per request).
MAX_FILE_BYTES = 64 * 1024 * 1024
HELM_TEMPLATE = "a Helm template: render it first with `helm template`"
_TEMPLATE_EXPR = re.compile(r"\{\{.*?\}\}")


class TemplateInput(InputError):
    """An unrendered Helm/Go template: not malformed YAML, just not a manifest yet (every verb says so)."""


def template_line(name: str, text: str) -> int | None:
    """The first line with a template expression when ``text`` is an unrendered Helm/Go template, else None.

    A ``.tpl`` file is one; so is a file with ``{{ ... }}`` outside comments that is not valid YAML. A valid
    YAML file that merely contains ``{{ }}`` in a string (an Argo parameter, a Go template in a ConfigMap) is
    an ordinary manifest.
    """
    first = next(
        (
            i
            for i, ln in enumerate(text.splitlines(), 1)
            if not ln.lstrip().startswith("#") and _TEMPLATE_EXPR.search(ln)
        ),
        None,
    )
    if name.endswith(TEMPLATE_SUFFIXES):
        return first or 1
    if first is None:
        return None
    try:  # parse events only: nothing is constructed, so aliases are not expanded (bounded, linear)
        for _ in yaml.parse(text, Loader=_Loader):
            pass
    except yaml.YAMLError:
        return first
    return None


def template_error(name: str, line: int) -> TemplateInput:
    return TemplateInput(
        f"{HELM_TEMPLATE} and give kubedra its output",
        Location(file=name, line=line),
    )


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


class _FastLoader(_Loader):
    """The C loader with implicit tags resolved like go-yaml v2 (kubectl), cached per (value, plain):
    manifests repeat the same keys and values over and over, and resolution is called from C for every
    scalar."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            return _resolve_scalar(value, bool(implicit[0]))
        return _Loader.resolve(self, kind, value, implicit)


@functools.lru_cache(maxsize=1 << 16)
def _resolve_scalar(value: str, plain: bool) -> str:
    return scalars.resolve_plain(value) if plain else _STR


def _scalar(node: yaml.ScalarNode) -> Any:
    tag = node.tag
    if tag in (_STR, _TIMESTAMP):
        return node.value
    if tag in (scalars.INT, scalars.FLOAT, scalars.BOOL, scalars.NULL):
        try:
            return scalars.construct(tag, node.value)
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


@dataclass(frozen=True)
class LazyNode:
    """Where a document's YAML node tree is in its file's text, to compose it again only when a line number is
    asked for. Keeping every document's node tree costs ~4x the memory of the objects themselves (marks,
    tags and styles of every scalar): 260 of the 340 MiB of a 5.6 MiB cluster file."""

    text: str
    start: int  # character offset of the document's root node
    end: int
    line: int  # 0-based line of ``start``
    items: tuple[int, ...] = ()  # List expansion: the index in ``items`` at each level

    def compose(self) -> yaml.Node | None:
        """The node tree with the same line numbers as the file (None when it cannot be composed alone)."""
        line_start = self.text.rfind("\n", 0, self.start) + 1
        # the root node's own line, with what precedes it on that line ("--- ") blanked, after as many empty
        # lines as precede it in the file: marks then carry the file's line numbers
        sub = "\n" * self.line + " " * (self.start - line_start) + self.text[self.start : self.end]
        try:
            node = yaml.compose(sub, Loader=_Loader)
        except yaml.YAMLError:
            return None
        for i in self.items:
            node = _list_items(node)[i] if i < len(_list_items(node)) else None
            if node is None:
                return None
        return node


def _lazy(node: yaml.Node, text: str) -> LazyNode:
    return LazyNode(
        text=text, start=node.start_mark.index, end=node.end_mark.index, line=node.start_mark.line
    )


def _list_items(node: yaml.Node | None) -> list[yaml.Node]:
    """The nodes of a List's ``items``, or [] when ``node`` is not a mapping with an ``items`` sequence."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "items" and isinstance(v, yaml.SequenceNode):
                return list(v.value)
    return []


@dataclass
class Document:
    """One Kubernetes object (a mapping) read from a file."""

    obj: dict[str, Any]
    file: str
    line: int
    index: int = 0  # position of the document in its file (after List expansion)
    # the YAML node tree (for line numbers), or where to compose it again when asked (keep_nodes="lazy")
    node_source: yaml.Node | LazyNode | None = field(default=None, repr=False, compare=False)

    @property
    def _node(self) -> yaml.Node | None:
        src = self.node_source
        if isinstance(src, LazyNode):
            src = self.node_source = src.compose()
        return src

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


# ``--skip-unreadable``: unreadable paths and special files inside folders are reported on stderr and
# skipped instead of stopping the command (set by the CLI option, see commands/_common.py).
SKIP_UNREADABLE = False


def _walk(root: Path, suffixes: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]]]:
    """(readable manifest files, [(path, why not read)]) under ``root``; nothing is opened."""
    found: list[str] = []
    problems: list[tuple[str, str]] = []

    def onerror(e: OSError) -> None:
        problems.append((e.filename or str(root), f"cannot read folder: {e.strerror}"))

    for folder, dirs, names in os.walk(root, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(names):
            if not f.endswith(suffixes) or f.startswith("."):
                continue
            full = os.path.join(folder, f)
            try:
                st = os.stat(full)  # follows a symlink to its target, like kubectl
            except OSError as e:
                problems.append((full, f"cannot read: {e.strerror}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                problems.append((full, f"{file_kind(st.st_mode)}, not read"))  # never opened: a FIFO blocks
            elif not os.access(full, os.R_OK):
                problems.append((full, "cannot read: permission denied"))
            else:
                found.append(full)
    return found, problems


def _report_unreadable(problems: list[tuple[str, str]]) -> None:
    """Entries of input folders that are not read: one InputError naming the first and counting the rest,
    or (``--skip-unreadable``) a warning for each."""
    if not problems:
        return
    if not SKIP_UNREADABLE:
        path, reason = problems[0]
        more = f"; {count(len(problems) - 1, 'more path')} not read" if len(problems) > 1 else ""
        raise InputError(f"{reason}{more} (pass --skip-unreadable to skip them)", Location(file=path))
    for path, reason in problems:
        sys.stderr.write(f"kubedra: warning: {path}: {reason}: skipped\n")


def iter_manifest_files(paths: Iterable[str], also: tuple[str, ...] = ()) -> Iterator[str]:
    """Expand files and folders (recursively, sorted, hidden entries skipped) into manifest paths.

    Inside folders, regular files ending in ``MANIFEST_SUFFIXES`` (or one of ``also``, e.g. Helm ``.tpl``
    templates a verb reports) are taken; a FIFO, device or socket there is never opened and, like an
    unreadable file or folder, is an InputError (a warning with ``--skip-unreadable``). Files named explicitly
    are always taken (``-f <(helm template ...)`` is a pipe); their reading is bounded by ``MAX_FILE_BYTES``."""
    suffixes = (*MANIFEST_SUFFIXES, *also)
    for p in paths:
        if p == STDIN:
            yield p
            continue
        path = Path(p)
        if path.is_dir():
            found, problems = _walk(path, suffixes)
            _report_unreadable(problems)
            yield from found
        elif path.exists():
            yield str(path)
        else:
            raise InputError(f"no such file or directory: {p}")


def read_bytes(name: str) -> bytes:
    """At most ``MAX_FILE_BYTES`` of a file (``-``: stdin); more is an InputError naming the file."""
    limit = MAX_FILE_BYTES
    if name == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        display = "<stdin>"
    else:
        display = name
        try:
            if os.path.isdir(name):
                raise InputError("is a folder, not a file", Location(file=name))
            with open(name, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", Location(file=name)) from e
    if len(data) > limit:
        raise InputError(
            f"larger than {limit // (1024 * 1024)} MiB: not read (no manifest is that large)",
            Location(file=display),
        )
    return data


def read_text(name: str, *, newline: str | None = None) -> str:
    """A manifest file's text (``-`` reads stdin), at most ``MAX_FILE_BYTES``; unreadable or non-UTF-8 files
    raise InputError. Line endings become ``\\n`` unless ``newline=""`` (keep them, for rewriting)."""
    data = read_bytes(name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        where = "<stdin>" if name == STDIN else name
        raise InputError(f"not a UTF-8 text file ({e.reason})", Location(file=where)) from e
    if newline is None and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _yaml_error(name: str, err: yaml.YAMLError, first_line: int = 1) -> InputError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    line = mark.line + first_line if mark is not None else None
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    msg = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return InputError(msg, Location(file=name, line=line))


def _expand(
    obj: Any,
    node: yaml.Node | None,
    name: str,
    line: int,
    out: list[Document],
    errors: list[InputError],
    lazy: LazyNode | None = None,
    keep: bool = True,
) -> None:
    """Append ``obj`` (or each item of a List) to ``out``; each Document keeps its ``lazy`` source if given, else
    its node when ``keep`` (``node`` also gives List items their own lines)."""
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
        item_nodes: list[yaml.Node | None] = [*_list_items(node)] or [None] * len(items)
        for i, (item, inode) in enumerate(zip(items, item_nodes, strict=False)):
            iline = inode.start_mark.line + 1 if inode is not None else line
            ilazy = dataclasses.replace(lazy, items=(*lazy.items, i)) if lazy is not None else None
            _expand(item, inode, name, iline, out, errors, ilazy, keep)
        return
    out.append(
        Document(obj=obj, file=name, line=line, index=len(out), node_source=lazy or (node if keep else None))
    )


def iter_documents(text: str, display: str, first_line: int = 1) -> Iterator[tuple[yaml.Node, Any]]:
    """(node, value) of every YAML document in ``text``, read like kubectl (go-yaml v2 scalars, string keys)
    within kubedra's bounds (alias expansion as go-yaml allows it, node count, depth). A syntax error or a
    refused document raises InputError at ``display``:line (lines counted from ``first_line``)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()  # building many small containers triggers needless collections (3-4x slower)
    try:
        loader = _FastLoader(text)
        # Without an alias the graph is a tree as large as the text (and _convert bounds its depth): the
        # expansion walk is needed only with aliases, or for text long enough to hold too many nodes.
        walk = "*" in text or len(text) > 2 * yamlbounds.MAX_DOCUMENT_NODES
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                try:
                    if walk:
                        yamlbounds.check_node(node)
                    obj = construct(node)
                except (yamlbounds.BoundsError, _NodeError) as e:
                    line = e.node.start_mark.line + first_line
                    raise InputError(str(e), Location(file=display, line=line)) from None
                yield node, obj
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


def parse_text(text: str, name: str, *, keep_nodes: bool | Literal["lazy"] = True) -> LoadResult:
    """Parse one file's text; errors are collected, never raised (a broken document stops its file).

    ``keep_nodes``: keep each document's YAML node tree (``Document.line_of``), drop it (line_of then gives the
    document's first line), or ``"lazy"``: keep only where it is and compose it again when asked."""
    result = LoadResult()
    display = "<stdin>" if name == STDIN else name
    stripped = text.lstrip()
    if name.endswith(".json") or (stripped.startswith(("{", "[")) and not name.endswith((".yaml", ".yml"))):
        try:
            obj = load_json(text)
        except json.JSONDecodeError as e:
            # JSON is also YAML; fall through to the YAML path only for YAML-looking stdin
            if name.endswith(".json"):
                result.errors.append(
                    InputError(f"invalid JSON: {e.msg}", Location(file=display, line=e.lineno))
                )
                return result
        except (ValueError, RecursionError) as e:
            msg = (
                str(e) if isinstance(e, ValueError) else f"nesting deeper than {yamlbounds.MAX_DEPTH} levels"
            )
            result.errors.append(InputError(f"invalid JSON: {msg}", Location(file=display)))
            return result
        else:
            docs = obj if isinstance(obj, list) else [obj]
            node = None
            if keep_nodes:
                try:
                    node = yaml.compose(text, Loader=_Loader)
                except yaml.YAMLError:
                    node = None
            whole = LazyNode(text=text, start=0, end=len(text), line=0) if keep_nodes == "lazy" else None
            for d in docs:
                one = len(docs) == 1
                _expand(
                    d,
                    node if one else None,
                    display,
                    1,
                    result.documents,
                    result.errors,
                    whole if one else None,
                    keep=whole is None,
                )
            return result
    try:
        for node, obj in iter_documents(text, display):
            is_lazy = keep_nodes == "lazy"
            _expand(
                obj,
                node,
                display,
                node.start_mark.line + 1,
                result.documents,
                result.errors,
                _lazy(node, text) if is_lazy else None,
                keep=bool(keep_nodes) and not is_lazy,
            )
    except InputError as e:
        line = template_line(name, text) if e.message.startswith("invalid YAML") else None
        result.errors.append(e if line is None else template_error(display, line))
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
