"""Read Kubernetes manifests the way ``kubectl -f`` does: files, folders (recursive), ``-`` for stdin.

YAML (multi-document) and JSON are accepted; ``List`` kinds (``kind: List`` or any ``*List`` with
``items``) are expanded. Every document keeps its file and 1-based line, and ``Document.line_of(path)``
finds the line of any field inside it, so findings can point at ``file:line``.

This module splits a file's text into documents and names the whole reading path; its parts live beside it:
:mod:`kubedra.sources.reading` (finding files, bounded reads), :mod:`kubedra.sources.yamlread` (YAML and JSON
text into objects, as kubectl reads them) and :mod:`kubedra.sources.documents` (:class:`Document`, line numbers).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Literal

import yaml

from kubedra.errors import InputError, Location
from kubedra.sources import yamlbounds
from kubedra.sources.documents import Document, LazyNode, Lines, LoadResult, lazy_node, line_table, list_items
from kubedra.sources.reading import (
    MANIFEST_SUFFIXES,
    MAX_FILE_BYTES,
    STDIN,
    TEMPLATE_SUFFIXES,
    TemplateInput,
    chart_advice,
    chart_error,
    is_chart,
    iter_manifest_files,
    read_bytes,
    read_text,
    with_advice,
)
from kubedra.sources.yamlread import (
    SafeLoader,
    construct,
    iter_documents,
    iter_documents_lines,
    json_problem,
    load_json,
    plain_documents,
)

__all__ = [
    "HELM_TEMPLATE",
    "MANIFEST_SUFFIXES",
    "MAX_FILE_BYTES",
    "STDIN",
    "TEMPLATE_SUFFIXES",
    "Document",
    "LazyNode",
    "Lines",
    "LoadResult",
    "TemplateInput",
    "chart_advice",
    "chart_error",
    "construct",
    "is_chart",
    "iter_documents",
    "iter_manifest_files",
    "json_problem",
    "load",
    "load_each",
    "load_json",
    "parse_text",
    "read_bytes",
    "read_text",
    "template_error",
    "template_line",
    "with_advice",
]

HELM_TEMPLATE = "a Helm template: render it first with `helm template`"
_TEMPLATE_EXPR = re.compile(r"\{\{.*?\}\}")


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
        previous = None
        for event in yaml.parse(text, Loader=SafeLoader):
            if _nested_flow_mapping(previous, event):
                # `{{` unquoted: a flow mapping whose first key is a flow mapping. Valid YAML, but no manifest
                # has a mapping as a key (`name: {{ include "x" . }}`, the commonest Helm line): a template
                at = event.start_mark.line if event.start_mark is not None else -1
                lines = text.splitlines()
                return at + 1 if 0 <= at < len(lines) and _TEMPLATE_EXPR.search(lines[at]) else first
            previous = event
    except yaml.YAMLError:
        return first
    return None


def _nested_flow_mapping(previous: object, event: object) -> bool:
    return (
        isinstance(previous, yaml.MappingStartEvent)
        and isinstance(event, yaml.MappingStartEvent)
        and bool(previous.flow_style)
        and bool(event.flow_style)
        and previous.end_mark is not None
        and event.start_mark is not None
        and previous.end_mark.index + 1 >= event.start_mark.index
    )


def template_error(name: str, line: int) -> TemplateInput:
    return TemplateInput(
        f"{HELM_TEMPLATE} and give kubedra its output",
        Location(file=name, line=line),
    )


def _expand(
    obj: Any,
    node: yaml.Node | None,
    name: str,
    line: int,
    out: list[Document],
    errors: list[InputError],
    lazy: LazyNode | Lines | None = None,
    keep: bool | Literal["lines"] = True,
) -> None:
    """Append ``obj`` (or each item of a List) to ``out``; each Document keeps its ``lazy`` source if given, else
    its node when ``keep`` (only the node's lines when ``keep="lines"``, ``lazy`` when they were built with
    ``obj``; ``node`` also gives List items their own lines)."""
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
        item_nodes: list[yaml.Node | None] = [*list_items(node)] or [None] * len(items)
        for i, (item, inode) in enumerate(zip(items, item_nodes, strict=False)):
            iline = inode.start_mark.line + 1 if inode is not None else line
            ilazy = dataclasses.replace(lazy, items=(*lazy.items, i)) if isinstance(lazy, LazyNode) else None
            _expand(item, inode, name, iline, out, errors, ilazy, keep)
        return
    source: yaml.Node | LazyNode | Lines | None = (
        lazy if isinstance(lazy, LazyNode) else node if keep else None
    )
    if keep == "lines" and node is not None:
        source = lazy if isinstance(lazy, Lines) else line_table(node)  # built with obj, or now
    out.append(Document(obj=obj, file=name, line=line, index=len(out), node_source=source))


def parse_text(text: str, name: str, *, keep_nodes: bool | Literal["lazy", "lines"] = True) -> LoadResult:
    """Parse one file's text; errors are collected, never raised (a broken document stops its file).

    ``keep_nodes``: keep each document's YAML node tree (``Document.line_of``), drop it (line_of then gives the
    document's first line), ``"lazy"``: keep only where it is and compose it again when asked, or ``"lines"``:
    keep only what line_of reads from it (:class:`Lines`, a tenth of the memory, the same lines)."""
    result = LoadResult()
    display = "<stdin>" if name == STDIN else name
    if name.endswith(TEMPLATE_SUFFIXES):  # a template, whatever its text parses to
        result.errors.append(template_error(display, template_line(name, text) or 1))
        return result
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
                    node = yaml.compose(text, Loader=SafeLoader)
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
                    keep="lines" if keep_nodes == "lines" else whole is None,
                )
            return result
    lines = keep_nodes == "lines"
    quick = plain_documents(text) if lines else None
    if quick is not None:  # plain block YAML (no List, every root a mapping): what _expand makes of it
        result.documents = [
            Document(obj=obj, file=display, line=start, index=i, node_source=Lines(table))
            for i, (start, obj, table) in enumerate(quick)
        ]
        return result
    try:
        for node, obj, table in iter_documents_lines(text, display, lines=lines):
            is_lazy = keep_nodes == "lazy"
            _expand(
                obj,
                node,
                display,
                node.start_mark.line + 1,
                result.documents,
                result.errors,
                lazy_node(node, text) if is_lazy else Lines(table) if table is not None else None,
                keep="lines" if lines else bool(keep_nodes) and not is_lazy,
            )
    except InputError as e:
        line = template_line(name, text)  # invalid YAML, or valid YAML no object can be built from
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


def load_reporting_templates(paths: Iterable[str], verb: str, *, keep_nodes: bool = True) -> LoadResult:
    """Like ``load(strict=True)``, except that Helm templates and charts are not an error: they are kept in
    ``errors`` (with the command that renders them for ``verb``) for the caller to name and count as not read,
    as audit, simulate and migrate do; any other error is raised."""
    result = load(paths, strict=False, keep_nodes=keep_nodes)
    for e in result.errors:
        if not isinstance(e, TemplateInput):
            raise e
    result.errors = [with_advice(e, verb) for e in result.errors]
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
