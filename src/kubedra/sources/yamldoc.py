"""Round-trip editing of multi-document YAML files, one document at a time.

ruamel.yaml keeps comments, key order, quoting and block scalars, but on a whole multi-document
stream it drops a comment before the first ``---`` and applies one indentation style to every
document. So a file is split at its ``---`` lines into :class:`Chunk` objects:

* the separator line, the comment/blank lines before the body (``head``) and after it (``tail``)
  are kept verbatim;
* the body is parsed by ruamel only when a rewrite needs it, with the document's own mapping
  indent and sequence dash offset;
* a chunk nobody touched is written back byte for byte.

New documents (claim templates, PodGroups, DeviceClasses) are inserted as extra chunks.
"""

from __future__ import annotations

import difflib
import io
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator, MutableMapping, MutableSequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from kubedra.errors import InputError, Location

try:  # pragma: no cover - depends on how PyYAML was built
    _SafeLoader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _SafeLoader = yaml.SafeLoader

_SEPARATOR = re.compile(r"^---[ \t]*(#.*)?$")
_DOC_END = re.compile(r"^\.\.\.[ \t]*(#.*)?$")
_COMMENT_OR_BLANK = re.compile(r"^[ \t]*(#.*)?$")
_DASH = re.compile(r"^( *)- ")
_KEY_BLOCK = re.compile(r"^( *)(?:- )?[^\s#][^#]*:[ \t]*(#.*)?$")


@dataclass(frozen=True)
class Style:
    """Indentation of one document: mapping indent and the dash offset of block sequences."""

    mapping: int = 2
    offset: int = 0
    mixed: bool = False  # the document uses both dash offsets (0 and 2)

    @property
    def sequence(self) -> int:
        return self.offset + 2


@lru_cache(maxsize=16)
def _yaml(style: Style) -> YAML:
    y = YAML()  # round-trip
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)  # mixed: not ruamel's
    return y


def detect_style(body: str) -> Style:
    """The most common mapping indent and sequence dash offset in ``body`` (2 and 0 if none)."""
    lines = [ln for ln in body.splitlines() if not _COMMENT_OR_BLANK.match(ln)]
    offsets: Counter[int] = Counter()
    indents: Counter[int] = Counter()
    for prev, cur in itertools.pairwise(lines):
        m = _KEY_BLOCK.match(prev)
        if m is None or "{" in prev or "[" in prev:
            continue
        base = len(m.group(1))
        if prev.lstrip().startswith("- "):
            base += 2  # a key inside a sequence item: its nested content starts after "- "
        cur_indent = len(cur) - len(cur.lstrip(" "))
        if cur_indent < base:
            continue
        if _DASH.match(cur):
            offsets[cur_indent - base] += 1
        elif cur_indent > base:
            indents[cur_indent - base] += 1
    mapping = indents.most_common(1)[0][0] if indents else 2
    offset = offsets.most_common(1)[0][0] if offsets else 0
    return Style(mapping=mapping if mapping > 0 else 2, offset=offset, mixed=len(offsets) > 1)


@dataclass
class Chunk:
    """One document of a file, with its surroundings kept verbatim."""

    separator: str  # the '---' line with its newline, or '' (first document without one)
    head: str  # comment/blank lines before the body
    body: str  # the YAML content
    tail: str  # comment/blank lines (and '...') after the body
    line: int  # 1-based line of the first body line in the file (0 for new documents)
    data: Any = None  # ruamel object once loaded (or built for new documents)
    loaded: bool = False
    dirty: bool = False
    new: bool = False
    style: Style = field(default_factory=Style)
    plain: list[Any] | None = None  # PyYAML parse of the body (for indexing), cached

    @property
    def original(self) -> str:
        return self.separator + self.head + self.body + self.tail

    @property
    def is_empty(self) -> bool:
        return not self.body.strip()


def split_chunks(text: str) -> list[Chunk]:
    """Split a file into chunks at ``---`` lines; joining ``original`` gives ``text`` back exactly."""
    lines = text.splitlines(keepends=True)
    groups: list[tuple[str, list[str], int]] = []  # (separator, lines, first line number of lines)
    sep = ""
    cur: list[str] = []
    start = 1
    for i, ln in enumerate(lines, start=1):
        if _SEPARATOR.match(ln.rstrip("\r\n")):
            if cur or sep or groups:
                groups.append((sep, cur, start))
            elif not cur and not sep:
                pass  # file starts with '---': no empty leading chunk
            sep, cur, start = ln, [], i + 1
        else:
            cur.append(ln)
    groups.append((sep, cur, start))
    chunks: list[Chunk] = []
    for sep, group, first in groups:
        lo = 0
        while lo < len(group) and _COMMENT_OR_BLANK.match(group[lo].rstrip("\r\n")):
            lo += 1
        hi = len(group)
        while hi > lo and (
            _COMMENT_OR_BLANK.match(group[hi - 1].rstrip("\r\n"))
            or _DOC_END.match(group[hi - 1].rstrip("\r\n"))
        ):
            hi -= 1
        body = "".join(group[lo:hi])
        chunks.append(
            Chunk(
                separator=sep,
                head="".join(group[:lo]),
                body=body,
                tail="".join(group[hi:]),
                line=first + lo,
                style=detect_style(body),
            )
        )
    return chunks


class YamlFile:
    """A multi-document YAML file opened for round-trip editing."""

    def __init__(self, text: str, name: str) -> None:
        self.name = name
        self.text = text
        self.chunks = split_chunks(text)
        # a file written with CRLF line endings gets CRLF in what is rewritten or added too
        self.eol = "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"

    def _eol(self, piece: str) -> str:
        return piece if self.eol == "\n" else piece.replace("\r\n", "\n").replace("\n", "\r\n")

    def load(self, chunk: Chunk) -> Any:
        """The ruamel object of ``chunk`` (parsed on first use)."""
        if not chunk.loaded:
            try:
                chunk.data = _yaml(chunk.style).load(chunk.body) if chunk.body.strip() else None
            except YAMLError as e:
                mark = getattr(e, "problem_mark", None)
                line = chunk.line + mark.line if mark is not None else chunk.line
                raise InputError(
                    f"invalid YAML: {getattr(e, 'problem', None) or e}", Location(self.name, line)
                ) from e
            except (ValueError, RecursionError) as e:  # e.g. an integer of 4,300+ digits
                problem = str(e).splitlines()[0] if isinstance(e, ValueError) else "nesting too deep"
                raise InputError(
                    f"cannot rewrite this document: {problem}", Location(self.name, chunk.line)
                ) from e
            chunk.loaded = True
        return chunk.data

    def insert_before(self, anchor: Chunk, data: Any) -> Chunk:
        """Insert a new document before ``anchor``, written in ``anchor``'s style."""
        new = Chunk(separator="---\n", head="", body="", tail="", line=0, data=data, loaded=True)
        new.dirty = new.new = True
        new.style = anchor.style
        idx = self.chunks.index(anchor)
        if idx == 0 and not anchor.separator:
            # the first document had no '---': it needs one now, the new one goes first
            anchor.separator = "---\n"
            new.separator = ""
            new.head, anchor.head = anchor.head, ""
        self.chunks.insert(idx, new)
        return new

    def insert_after(self, anchor: Chunk, data: Any) -> Chunk:
        new = Chunk(separator="---\n", head="", body="", tail="", line=0, data=data, loaded=True)
        new.dirty = new.new = True
        new.style = anchor.style
        self.chunks.insert(self.chunks.index(anchor) + 1, new)
        return new

    @property
    def changed(self) -> bool:
        return any(c.dirty for c in self.chunks)

    def render(self) -> str:
        out: list[str] = []
        for c in self.chunks:
            if not c.dirty:
                piece = c.original
            else:
                body = dump(c.data, c.style) if c.new else minimal_dump(c.body, c.data, c.style)
                piece = self._eol(c.separator + c.head + body + c.tail)
            if out and not out[-1].endswith("\n") and piece:
                out.append(self.eol)
            out.append(piece)
        return "".join(out)


def dump(data: Any, style: Style = Style()) -> str:
    buf = io.StringIO()
    _yaml(style).dump(data, buf)
    return buf.getvalue()


def _norm(line: str) -> str:
    return " ".join(line.split())


def _restore(original: str, dumped: str) -> tuple[str, int]:
    """``dumped`` with every line that only differs from ``original`` in whitespace put back as it was.

    Returns the text and the number of lines that still differ from the original.
    """
    a = original.splitlines(keepends=True)
    b = dumped.splitlines(keepends=True)
    sm = difflib.SequenceMatcher(None, [_norm(x) for x in a], [_norm(x) for x in b], autojunk=False)
    out: list[str] = []
    changed = 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend(a[i1:i2])
        else:
            lines, n = _unfold(a[i1:i2], b[j1:j2])
            out.extend(lines)
            changed += n
    text = "".join(out)
    if text and not text.endswith("\n"):
        text += "\n"
    return text, changed


def _unfold(a: list[str], b: list[str]) -> tuple[list[str], int]:
    """``b`` with each line that ruamel joined from several original lines (a scalar the source folded over
    lines) put back as the original lines; the caller checks that the result parses the same. Returns the
    lines and how many of them differ from the original."""
    norm_a = [_norm(x) for x in a]
    out: list[str] = []
    changed = 0
    start = 0
    for line in b:
        want = _norm(line)
        found = None
        for i in range(start, len(a)):
            if not norm_a[i] or not want.startswith(norm_a[i]):
                continue
            acc = norm_a[i]
            for k in range(i, min(len(a), i + 64)):
                if k > i:
                    acc = f"{acc} {norm_a[k]}".strip()
                if acc == want:
                    found = (i, k + 1)
                    break
                if len(acc) > len(want):
                    break
            if found:
                break
        if found:
            out.extend(a[found[0] : found[1]])
            start = found[1]
        else:
            out.append(line)
            changed += 1
    return out, changed + max(0, len(a) - (len(out) - changed))


def _same(a: str, b: str) -> bool:
    try:
        return list(yaml.load_all(a, Loader=_SafeLoader)) == list(yaml.load_all(b, Loader=_SafeLoader))
    except yaml.YAMLError:
        return False


def _mixed(text: str) -> bool:
    return detect_style(text).mixed


def minimal_dump(original: str, data: Any, style: Style) -> str:
    """Dump ``data`` so that the text differs from ``original`` in as few lines as possible.

    ruamel applies one indentation style to a whole document; lines that only moved because of
    that are restored from the original, and the result is kept only if it still parses to
    exactly the same data. Both sequence dash offsets are tried.
    """
    best: tuple[int, str] | None = None
    style = Style(style.mapping, style.offset)
    candidates = [style]
    if original and _mixed(original):
        candidates.append(Style(style.mapping, 2 if style.offset == 0 else 0))
    for candidate in candidates:
        dumped = dump(data, candidate)
        restored, changed = _restore(original, dumped)
        if restored != dumped and not _same(restored, dumped):
            restored, changed = dumped, _restore(original, dumped)[1] + 10**6
        if best is None or changed < best[0]:
            best = (changed, restored)
    assert best is not None
    return best[1]


def iter_objects(data: Any) -> Iterator[tuple[tuple[str | int, ...], MutableMapping[str, Any]]]:
    """The Kubernetes objects in one document: the document itself, or the items of a ``*List``."""
    if not isinstance(data, MutableMapping):
        return
    kind = data.get("kind")
    items = data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, MutableSequence):
        for i, item in enumerate(items):
            if isinstance(item, MutableMapping):
                yield ("items", i), item
        return
    yield (), data


# --- comment-preserving edits -------------------------------------------------------------------


def _post_token(container: Any, key: Any) -> CommentToken | None:
    ca = getattr(container, "ca", None)
    if ca is None:
        return None
    entry = ca.items.get(key)
    if not entry:
        return None
    idx = 2 if isinstance(container, CommentedMap) else 0
    tok = entry[idx] if len(entry) > idx else None
    return tok if isinstance(tok, CommentToken) else None


def _last_slot(node: Any) -> tuple[Any, Any] | None:
    """(container, key) whose post-value comment is printed last inside ``node``."""
    while isinstance(node, CommentedMap | CommentedSeq) and len(node):
        key = next(reversed(node)) if isinstance(node, CommentedMap) else len(node) - 1
        child = node[key]
        if isinstance(child, CommentedMap | CommentedSeq) and len(child) and not child.fa.flow_style():
            node = child
            continue
        return node, key
    return None


def _trailing_lines(value: Any, container: Any, key: Any) -> str:
    """Full-line comments that follow ``container[key]`` (its end-of-line comment excluded)."""
    slot = _last_slot(value) if isinstance(value, CommentedMap | CommentedSeq) else None
    tok = _post_token(*slot) if slot else _post_token(container, key)
    if tok is None:
        return ""
    text = tok.value
    if "\n" not in text:
        return ""
    rest = text.split("\n", 1)[1]
    return rest if rest.strip() else ""


def _eol_line(value: Any, container: CommentedMap, key: Any) -> str:
    """The end-of-line comment of ``key: scalar`` as a full-line comment at the key's column ("" if none)."""
    if isinstance(value, CommentedMap | CommentedSeq):
        return ""
    tok = _post_token(container, key)
    if tok is None:
        return ""
    first = tok.value.split("\n", 1)[0].strip()
    if not first.startswith("#"):
        return ""
    try:
        column = int(container.lc.key(key)[1])
    except (AttributeError, KeyError, TypeError, IndexError):
        column = 0
    return " " * column + first + "\n"


def _append_post(container: Any, key: Any, lines: str) -> None:
    value = container[key]
    slot = _last_slot(value) if isinstance(value, CommentedMap | CommentedSeq) else None
    target, tkey = slot if slot else (container, key)
    idx = 2 if isinstance(target, CommentedMap) else 0
    entry = target.ca.items.setdefault(tkey, [None, None, None, None])
    while len(entry) <= idx:
        entry.append(None)
    tok = entry[idx]
    if isinstance(tok, CommentToken):
        text = tok.value if tok.value.endswith("\n") else tok.value + "\n"
        tok.value = text + lines
    else:
        entry[idx] = CommentToken("\n" + lines, CommentMark(0), None)


def remove_key(container: MutableMapping[str, Any], key: str) -> Any:
    """Delete ``container[key]`` keeping the comments that were on and after it.

    The end-of-line comment of a deleted scalar line stays as a full-line comment in the line's place
    (at the key's column); comment lines after it move to the previous sibling (or become the map's
    leading comment when the key was first).
    """
    if key not in container:
        return None
    value = container[key]
    if not isinstance(container, CommentedMap):
        return container.pop(key)
    carried = _eol_line(value, container, key) + _trailing_lines(value, container, key)
    keys = list(container.keys())
    pos = keys.index(key)
    value = container.pop(key)
    container.ca.items.pop(key, None)
    if carried:
        if pos > 0:
            _append_post(container, keys[pos - 1], carried)
        elif len(container):
            comment = container.ca.comment
            if comment is None:
                container.ca.comment = [None, []]
                comment = container.ca.comment
            while len(comment) < 2:
                comment.append(None)
            if comment[1] is None:
                comment[1] = []
            for ln in carried.splitlines(keepends=True):
                if ln.strip():
                    stripped = ln.lstrip(" ")
                    comment[1].append(CommentToken(stripped, CommentMark(len(ln) - len(stripped)), None))
    return value


def remove_empty(container: MutableMapping[str, Any], key: str) -> None:
    """Delete ``container[key]`` if it is an empty mapping or sequence."""
    value = container.get(key)
    if isinstance(value, MutableMapping | MutableSequence) and not len(value):
        remove_key(container, key)


def new_map(pairs: dict[str, Any] | None = None) -> CommentedMap:
    """A ruamel mapping (block style) built from plain data, recursively."""
    m = CommentedMap()
    for k, v in (pairs or {}).items():
        m[k] = to_ruamel(v)
    return m


def to_ruamel(value: Any) -> Any:
    if isinstance(value, CommentedMap | CommentedSeq):
        return value
    if isinstance(value, dict):
        return new_map(value)
    if isinstance(value, list):
        seq = CommentedSeq()
        seq.extend(to_ruamel(v) for v in value)
        return seq
    return value


def to_plain(value: Any) -> Any:
    """ruamel data as plain dicts/lists/str/int (for validation and JSON output)."""
    if isinstance(value, MutableMapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, MutableSequence):
        return [to_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def splice(container: MutableMapping[str, Any], key: str, items: list[tuple[str, Any]]) -> None:
    """Replace ``container[key]`` by ``items`` at the same position (key order kept)."""
    keys = list(container.keys())
    pos = keys.index(key)
    if isinstance(container, CommentedMap):
        remove_key(container, key)
        for i, (k, v) in enumerate(items):
            container.insert(pos + i, k, to_ruamel(v))
        return
    rest = [(k, container[k]) for k in keys[pos + 1 :]]
    for k in keys[pos:]:
        del container[k]
    for k, v in [*items, *rest]:
        container[k] = v


class JsonFile(YamlFile):
    """A JSON manifest: parsed like YAML (for line numbers), written back as JSON.

    New objects are added around the object: a single object becomes a ``v1`` ``List``.
    """

    def __init__(self, text: str, name: str) -> None:
        super().__init__(text, name)
        self.before: list[Any] = []
        self.after: list[Any] = []

    def insert_before(self, anchor: Chunk, data: Any) -> Chunk:
        self.before.append(data)
        return anchor

    def insert_after(self, anchor: Chunk, data: Any) -> Chunk:
        self.after.append(data)
        return anchor

    @property
    def changed(self) -> bool:
        return any(c.dirty for c in self.chunks) or bool(self.before or self.after)

    def render(self) -> str:
        if not self.changed:
            return self.text

        data = to_plain(self.chunks[0].data) if len(self.chunks) == 1 else None
        if data is None:  # pragma: no cover - JSON has no document separators
            return self.text
        if self.before or self.after:
            kind = data.get("kind") if isinstance(data, dict) else None
            if isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list):
                data["items"] = [*map(to_plain, self.before), *data["items"], *map(to_plain, self.after)]
            else:
                data = {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [*map(to_plain, self.before), data, *map(to_plain, self.after)],
                }
        return self._eol(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
