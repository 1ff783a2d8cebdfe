"""Read the items of a large JSON ``List`` one at a time (``kubectl get -o json``, ``kubedra snapshot -o json``).

A 65,000-node snapshot is gigabytes of JSON: parsing it whole keeps every object as Python dicts at once
(about ten times the text). :class:`JsonListStream` reads the file in chunks and decodes one item of the
top-level ``items`` array at a time with the C decoder (``json.JSONDecoder.raw_decode``), so the caller can
turn each into its compact model and drop the dict. Items are decoded like
:func:`kubedra.sources.yamlread.load_json` (int64 or float numbers, no NaN/Infinity, nested at most
``yamlbounds.MAX_DEPTH`` levels counting the List itself) and keep their 1-based line in the file.

Whether the object is a List is known only at its end (kubectl writes ``kind`` after ``items``): read
:attr:`JsonListStream.is_list` once the items are exhausted, and read the file whole when it is not one.
"""

from __future__ import annotations

import json
import marshal
import os
import re
from collections.abc import Iterator
from typing import IO, Any

from kubedra.errors import InputError, Location
from kubedra.sources import yamlbounds
from kubedra.sources.documents import Document, LazyNode
from kubedra.sources.reading import MAX_FILE_BYTES, STDIN
from kubedra.sources.yamlread import _json_constant, _json_int

CHUNK = 8 * 1024 * 1024  # characters read at a time
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_int=_json_int, parse_constant=_json_constant)
_ITEM_DEPTH = yamlbounds.MAX_DEPTH - 2  # the List and its items array are two levels


class NotAList(Exception):
    """The text does not start with an object: read it whole."""


class JsonListStream:
    """``for line, item in JsonListStream(f, name).items(): ...``; then ``top`` holds the other top-level keys
    (apiVersion, kind, metadata, a snapshot header...) and ``is_list`` says whether the object was a List."""

    def __init__(
        self,
        f: IO[str],
        display: str,
        chunk: int = CHUNK,
        keep_text: bool = False,
        share: bool = False,
        trees: bool = False,
    ) -> None:
        self.f = f
        # one copy of each key and short string across items (the decoder shares them within one item only):
        # for callers that keep every item whole (:func:`shared`)
        self.memo: dict[str, str] | None = {} if share else None
        # one copy of each equal mapping and list below the items too (:func:`shared_tree`): for callers that
        # keep every item whole and never change one
        self.trees: dict[Any, Any] | None = {} if trees else None
        self.keep_text = keep_text  # keep each item's text (``item_text``) to compose its lines on demand
        self.item_text: str | None = None
        self.display = display
        self.chunk = chunk
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line of ``counted``
        self.counted = 0  # buffer offset up to which newlines are counted
        self.top: dict[str, Any] = {}
        self.saw_items = False
        self.start = 0  # where the last value decoded starts in ``buf``

    @property
    def is_list(self) -> bool:
        kind = self.top.get("kind")
        return self.saw_items and isinstance(kind, str) and kind.endswith("List")

    # ------------------------------------------------------------------ buffer
    def _fill(self) -> bool:
        text = self.f.read(self.chunk)
        if not text:
            self.eof = True
            return False
        self._count(self.pos)
        self.buf = self.buf[self.pos :] + text
        self.counted -= self.pos
        self.pos = 0
        return True

    def _count(self, upto: int) -> None:
        self.line += self.buf.count("\n", self.counted, upto)
        self.counted = upto

    def _error(self, msg: str, at: int | None = None) -> InputError:
        at = self.pos if at is None else at
        line = self.line + self.buf.count("\n", self.counted, at) if at >= self.counted else self.line
        return InputError(f"invalid JSON: {msg}", Location(file=self.display, line=line))

    def _peek(self) -> str:
        """The next character that is not white space ("" at the end), without consuming it."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or not self._fill():
                return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def _expect(self, char: str) -> None:
        if self._peek() != char:
            got = self.buf[self.pos] if self.pos < len(self.buf) else "end of file"
            raise self._error(f"expected {char!r}, found {got!r}")
        self.pos += 1

    def _value(self) -> Any:
        self._peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                if self.eof:
                    raise self._error(e.msg, e.pos) from None
                if len(self.buf) - self.pos > MAX_FILE_BYTES:
                    raise self._error(f"one object is larger than {MAX_FILE_BYTES // 2**20} MiB") from None
                self._fill()
                continue
            except RecursionError:
                raise self._error(f"nesting deeper than {yamlbounds.MAX_DEPTH} levels") from None
            except ValueError as e:  # NaN, Infinity (parse_constant)
                raise self._error(str(e)) from None
            if end == len(self.buf) and not self.eof and self._fill():
                continue  # a number may go on in the next chunk
            self.start, self.pos = self.pos, end
            return obj

    # ------------------------------------------------------------------ the object
    def items(self) -> Iterator[tuple[int, Any]]:
        """(line, item) of each element of the top-level ``items`` array, in order."""
        if self._peek() != "{":
            raise NotAList
        self.pos += 1
        first = True
        while self._peek() != "}":
            if not first:
                self._expect(",")
            first = False
            if self._peek() != '"':
                raise self._error("expected a key")
            key = self._value()
            self._expect(":")
            if key == "items" and self._peek() == "[":
                self.pos += 1
                self.saw_items = True
                yield from self._array()
            else:
                self.top[key] = self._value()
        self.pos += 1
        if self._peek():
            raise self._error("extra data after the object")

    def _array(self) -> Iterator[tuple[int, Any]]:
        n = 0
        while self._peek() != "]":
            if n:
                self._expect(",")
                self._peek()
            self._count(self.pos)
            line = self.line
            item = self._value()
            buf, start, end = self.buf, self.start, self.pos
            if self.keep_text:
                self.item_text = buf[start:end]
            # only then can it be too deep (counted in the buffer: no copy of the item's text)
            if buf.count("{", start, end) + buf.count("[", start, end) > _ITEM_DEPTH:
                try:
                    yamlbounds.check_depth([[item]])
                except ValueError as e:
                    raise InputError(f"invalid JSON: {e}", Location(file=self.display, line=line)) from None
            if self.trees is not None:  # nested at most _ITEM_DEPTH levels here: the recursion is bounded
                if len(self.trees) > TREES_MAX:
                    self.trees.clear()  # bounded: what repeats is soon shared again
                item = shared_tree(item, self.trees)
            elif self.memo is not None:
                item = shared(item, self.memo)
            yield line, item
            n += 1
        self.pos += 1
        if self.trees is not None:
            self.trees.clear()  # the items keep what they share; the keys are no longer needed


SHARED_MAX_LEN = 32  # longer strings (uids, messages, images) are rarely repeated: not looked up


def shared(value: Any, memo: dict[str, str]) -> Any:
    """``value`` with each mapping key and each string of at most :data:`SHARED_MAX_LEN` characters replaced by
    its copy in ``memo`` (added when new): equal data, a fraction of the memory when many items repeat the same
    keys, names, labels and phases (about half of a fleet snapshot's decoded items, for 10% more CPU)."""
    get = memo.setdefault
    t = type(value)
    if t is dict:
        return _shared_dict(value, get)
    if t is list:
        return _shared_list(value, get)
    if t is str and len(value) <= SHARED_MAX_LEN:
        return get(value, value)
    return value


def _shared_dict(v: dict[str, Any], get: Any) -> dict[str, Any]:
    # scalars handled in line, not by a call each: they are most of a snapshot's values
    out = {}
    for k, x in v.items():
        t = type(x)
        if t is str:
            if len(x) <= SHARED_MAX_LEN:
                x = get(x, x)
        elif t is dict:
            x = _shared_dict(x, get)
        elif t is list:
            x = _shared_list(x, get)
        out[get(k, k)] = x
    return out


def _shared_list(v: list[Any], get: Any) -> list[Any]:
    out = []
    for x in v:
        t = type(x)
        if t is str:
            if len(x) <= SHARED_MAX_LEN:
                x = get(x, x)
        elif t is dict:
            x = _shared_dict(x, get)
        elif t is list:
            x = _shared_list(x, get)
        out.append(x)
    return out


TREES_MAX = 1 << 16  # entries of a :func:`shared_tree` memo (about 40 MB) before it starts afresh


def shared_tree(value: Any, memo: dict[Any, Any]) -> Any:
    """``value`` with each mapping and list below it replaced by its equal in ``memo`` (added when new), and each
    key and short string as in :func:`shared`: equal data (the same types, keys in the same order), about a
    third of the memory of :func:`shared` when many items repeat the same containers, labels, tolerations and
    conditions. The items then share those mappings: for callers that never change an item."""
    if type(value) is dict:  # the item itself is not looked up: it is seldom equal to another
        get = memo.setdefault
        out = {}
        for k, x in value.items():
            t = type(x)
            if t is dict or t is list:
                x = _tree(x, t, memo)
            elif t is str and len(x) <= SHARED_MAX_LEN:
                x = get(x, x)
            out[get(k, k)] = x
        return out
    t = type(value)
    if t is list:
        return _tree(value, t, memo)
    if t is str and len(value) <= SHARED_MAX_LEN:
        return memo.setdefault(value, value)
    return value


def _tree(v: Any, t: type, memo: dict[Any, Any]) -> Any:
    """The shared mapping or list ``v`` (of type ``t``) directly below an item (its metadata, spec, status:
    seldom equal to another item's), keyed by its parts: its keys and scalars (a str is its own part; a
    number's names its type, as ``1``, ``1.0`` and ``True`` are equal in Python, not here, and a float's its
    ``repr``, as ``-0.0 == 0.0``) and its shared mappings and lists (:func:`_below`) by their ``id``, the only
    bare int among the parts (equal content is one object, kept alive by ``memo``, which is emptied only
    between items). Scalars are handled in line, not by a call each: they are most of a snapshot's values."""
    get = memo.setdefault
    out: Any
    if t is dict:
        out = {}
        parts: list[Any] = ["d"]
        for k, x in v.items():
            k = get(k, k)
            tx = type(x)
            if tx is str:
                kx = x
                if len(x) <= SHARED_MAX_LEN:
                    x = get(x, x)
            elif tx is dict or tx is list:
                x = _below(x, tx, memo)
                kx = id(x)
            else:
                kx = (tx, repr(x) if tx is float else x)
            out[k] = x
            parts += (k, kx)
    else:
        out = []
        parts = ["l"]
        for x in v:
            tx = type(x)
            if tx is str:
                kx = x
                if len(x) <= SHARED_MAX_LEN:
                    x = get(x, x)
            elif tx is dict or tx is list:
                x = _below(x, tx, memo)
                kx = id(x)
            else:
                kx = (tx, repr(x) if tx is float else x)
            out.append(x)
            parts.append(kx)
    key = tuple(parts)
    hit = memo.get(key)
    if hit is None:
        memo[key] = hit = out
    return hit


def _below(v: Any, t: type, memo: dict[Any, Any]) -> Any:
    """The shared mapping or list ``v`` (of type ``t``) deeper in an item (labels, containers, tolerations,
    conditions: mostly equal to one read before), looked up whole before its parts, by its ``marshal`` form
    (format 2: no back-references, so the bytes depend on the content alone, as
    :func:`kubedra.model.facts.freeze` keys device facts: the built-in types each with its type, a float
    exactly, keys in their order), written in C: ``memo`` keys it by the form's hash (an int: no str or
    tuple key of ``memo`` equals one, and no form is kept) and a hit counts only when its own form is the
    same bytes. A hit is the object read before, whose strings are shared already; only a new one is rebuilt,
    part by part."""
    try:
        text = marshal.dumps(v, 2)
    except ValueError:  # not a JSON value (a caller's own data): keyed by its parts
        return _tree(v, t, memo)
    key = hash(text)
    hit = memo.get(key)
    if hit is not None and marshal.dumps(hit, 2) == text:
        return hit
    get = memo.setdefault
    out: Any
    if t is dict:
        out = {}
        for k, x in v.items():
            tx = type(x)
            if tx is str:
                if len(x) <= SHARED_MAX_LEN:
                    x = get(x, x)
            elif tx is dict or tx is list:
                x = _below(x, tx, memo)
            out[get(k, k)] = x
    else:
        out = []
        for x in v:
            tx = type(x)
            if tx is str:
                if len(x) <= SHARED_MAX_LEN:
                    x = get(x, x)
            elif tx is dict or tx is list:
                x = _below(x, tx, memo)
            out.append(x)
    if hit is None:
        memo[key] = out
    return out


def should_stream(name: str, min_bytes: int = 0) -> bool:
    """Whether ``name`` is a regular file read as JSON (``.json``, or ``{`` first outside ``.yaml``/``.yml``,
    as :func:`kubedra.sources.files.parse_text` decides) of at least ``min_bytes``."""
    if name == STDIN or name.endswith((".yaml", ".yml")):
        return False  # decided by the name: no stat (audit asks for each of 10,000 manifests)
    try:
        if not os.path.isfile(name) or os.path.getsize(name) < max(min_bytes, 1):
            return False
        if name.endswith(".json"):
            return True
        with open(name, "rb") as f:
            return f.read(4096).lstrip()[:1] == b"{"
    except OSError:
        return False


def stream_documents(stream: JsonListStream) -> Iterator[Document]:
    """The Documents of a streamed List, nested Lists expanded, each at its item's line. Without ``keep_text``
    there is no node tree (``line_of`` answers the item's line); with it, an item that is one object composes
    its lines from its own text when a line is asked for, as a file read whole does."""
    index = 0
    for line, item in stream.items():
        text, stream.item_text = stream.item_text, None
        for obj in _flatten(item, stream.display, line):
            lazy = (
                LazyNode(text=text, start=0, end=len(text), line=line - 1) if text and obj is item else None
            )
            yield Document(obj=obj, file=stream.display, line=line, index=index, node_source=lazy)
            index += 1


def _flatten(obj: Any, display: str, line: int) -> Iterator[dict[str, Any]]:
    if obj is None:
        return
    if not isinstance(obj, dict):
        raise InputError(
            f"expected a Kubernetes object (a mapping), found {type(obj).__name__}", Location(display, line)
        )
    kind, items = obj.get("kind"), obj.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for item in items:
            yield from _flatten(item, display, line)
        return
    yield obj
