"""A reader of the plain block YAML most manifests are written in: the objects and line tables of
:mod:`kubedra.sources.yamlread`'s full path, without PyYAML's node trees.

Audit reads thousands of manifests, and libyaml composing a Python node and two marks for every scalar, then
the walk that turns them into objects, was most of its time.

It takes block mappings and sequences, plain scalars on one line, single- and double-quoted scalars without
escapes, one-line flow mappings and sequences of those, literal and folded block scalars (``|``, ``>``, with
``-`` or ``+``) that start on the line after their header, comments, and ``---`` between documents. Anything else
(anchors, aliases, tags, a block scalar's indentation indicator, multi-line flow scalars, quoted keys, directives, tabs, backslashes,
non-ASCII or control characters, ``...``, a List, a root that is not a mapping, deep nesting, an error of any
kind) makes :func:`parse` answer None, and the caller reads the text with the full path: when in doubt, this
reader declines. ``tests/unit/sources/test_yamlfast.py`` holds it to the full path (objects, lines, tables).
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Any

from kubedra.sources import yamlbounds
from kubedra.sources import yamlscalars as scalars

_intern = sys.intern
_STR = scalars.STR
_CONSTRUCTED = (scalars.INT, scalars.FLOAT, scalars.BOOL, scalars.NULL)
# where a plain scalar may not start (PyYAML's scanner: these indicators, and "-", "?", ":" before a space)
_NOT_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_FLOW_TOKEN = re.compile(r" *(?:([\[\]{},])|(\"[^\"]*\"|'[^']*')|([^\[\]{},\"']+)|(.))")
_FlowToken = tuple[str, str, str, str]  # (indicator, quoted, plain, anything else)
_MAX_KEY = 1000  # PyYAML refuses a simple key longer than 1024 characters


def _refused(text: str) -> bool:
    """Whether an ASCII ``text`` goes to the full path at once: it holds a control character other than the
    line feed (the only characters of ASCII that ``isprintable`` refuses; the reader refuses most of them,
    tabs and CR included) or a backslash (escapes). The regex ``[\\x00-\\x09\\x0b-\\x1f\\x7f\\\\]`` answered
    the same with a step of the regex engine per character (``test_yamlfast`` holds the two together).
    Anchors, aliases, tags, block scalars and directives are refused where a token starts (``_plain_ok``), as
    are document ends ("..." is no key)."""
    return "\\" in text or not (text if "\n" not in text else text.replace("\n", "")).isprintable()


class _Decline(Exception):
    """Not for this reader: the full path reads the text."""


def _plain_ok(text: str) -> bool:
    first = text[:1]
    if not first:
        return False
    if first in _NOT_PLAIN_START:
        return first in "-?:" and len(text) > 1 and text[1] != " "
    return True


@functools.lru_cache(maxsize=1 << 12)
def _plain(text: str) -> Any:
    """The value of a plain scalar as the full path gives it (go-yaml v2's resolution, the same construction)."""
    tag = scalars.resolve_plain(text)
    if tag == _STR:
        value: Any = text
    elif tag in _CONSTRUCTED:
        try:
            value = scalars.construct(tag, text)
        except scalars.ScalarError:
            raise _Decline from None  # the full path says why, at its line
    else:
        raise _Decline  # a merge key or another tag
    return _intern(value) if value.__class__ is str and len(value) < 64 else value


@functools.lru_cache(maxsize=1 << 12)
def _plain_key(text: str) -> str:
    """A plain key as a JSON object key (sigs.k8s.io/yaml's string of a non-string key)."""
    if len(text) > _MAX_KEY or not _plain_ok(text) or " #" in text or text != text.strip(" "):
        raise _Decline
    tag = scalars.resolve_plain(text)
    raw = _intern(text)
    if tag == _STR:
        return raw
    if tag not in _CONSTRUCTED:
        raise _Decline
    try:
        key = scalars.json_key(scalars.construct(tag, text))
    except scalars.ScalarError:
        raise _Decline from None
    return raw if key == raw else key


def _quoted(text: str) -> tuple[str, str]:
    """(value, what follows the closing quote) of a quoted scalar at the start of ``text`` (no escapes)."""
    q = text[0]
    end = text.find(q, 1)
    if end < 0 or (q == "'" and text[end + 1 : end + 2] == "'"):
        raise _Decline  # continued on the next line, or an escaped quote
    value = text[1:end]
    return (_intern(value) if len(value) < 64 else value), text[end + 1 :]


def _end_of_line(rest: str) -> None:
    """Nothing but blanks and a comment may follow a complete value."""
    stripped = rest.lstrip(" ")
    if stripped and (stripped[0] != "#" or stripped == rest):
        raise _Decline


_FLOWS: dict[str, tuple[Any, tuple[Any, ...] | None, bool, int, int]] = {}
_MAX_FLOWS = 2048  # like _MAX_LINES: a manifest's flow collections repeat (labels, ports, resources)


def _flow(text: str, line: int, depth: int) -> tuple[Any, tuple[Any, ...] | None]:
    """A one-line flow collection (at ``depth``) and its line table: read once per text and kept, then a fresh
    copy of its value each time (a caller may keep or change what it gets; tables are tuples). The same text
    on another line (a Deployment's labels, written three times) gets its table with that line; at another
    depth it is declined where reading it there would be (its deepest collection past the bound)."""
    kept = _FLOWS.get(text)
    if kept is None:
        value, table = _read_flow(text, line, depth)
        height = _height(value)
        kept = value, table, height == 0, height, line
        if len(_FLOWS) >= _MAX_FLOWS:
            _FLOWS.clear()
        _FLOWS[text] = kept
    value, table, flat, height, at = kept
    if depth + height > yamlbounds.MAX_DEPTH:
        raise _Decline
    if at != line and table is not None:
        table = _relined(table, line)
    return (value.copy() if flat else _fresh(value)), table


def _height(value: Any) -> int:
    """How many levels of collections a flow collection holds below itself (0: scalars only, or none)."""
    items = value.values() if value.__class__ is dict else value
    kids = [_height(v) for v in items if v.__class__ is dict or v.__class__ is list]
    return 1 + max(kids) if kids else 0


def _relined(table: tuple[Any, ...], line: int) -> tuple[Any, ...]:
    """The line table of a one-line flow collection read on another line: every line ``line``."""
    if table[0] == 0:  # a mapping: (0, *keys, *lines, *kids)
        n = (len(table) - 1) // 3
        kids = table[1 + 2 * n :]
        return (0, *table[1 : 1 + n], *[line] * n, *[None if k is None else _relined(k, line) for k in kids])
    n = (len(table) - 1) // 2  # a sequence: (1, *lines, *kids)
    kids = table[1 + n :]
    return (1, *[line] * n, *[None if k is None else _relined(k, line) for k in kids])


def _fresh(value: Any) -> Any:
    """A copy of a flow collection's value: new mappings and lists, the same scalars."""
    if value.__class__ is dict:
        return {k: _fresh(v) if v.__class__ is dict or v.__class__ is list else v for k, v in value.items()}
    return [_fresh(v) if v.__class__ is dict or v.__class__ is list else v for v in value]


def _read_flow(text: str, line: int, depth: int) -> tuple[Any, tuple[Any, ...] | None]:
    """A one-line flow collection (at ``depth``) and its line table."""
    if "#" in text:  # maybe a comment after it: find where each token starts
        tokens: list[_FlowToken] = []
        starts: list[int] = []
        pos = 0
        while pos < len(text):
            m = _FLOW_TOKEN.match(text, pos)
            if m is None:
                raise _Decline
            tokens.append(m.groups(""))  # type: ignore[arg-type]
            starts.append(pos)
            pos = m.end()
    else:
        tokens = _FLOW_TOKEN.findall(text)
        starts = []
    value, table, at = _flow_node(tokens, 0, line, depth)
    if at < len(tokens):  # after the collection: blanks and a comment only
        if not starts:
            raise _Decline
        _end_of_line(text[starts[at] :])
    return value, table


def _flow_scalar(token: _FlowToken) -> Any:
    _, quoted, plain, bad = token
    if bad:
        raise _Decline
    if quoted:
        value = quoted[1:-1]
        if quoted[0] == "'" and "'" in value:
            raise _Decline
        return _intern(value) if len(value) < 64 else value
    text = plain.strip(" ")
    if not _plain_ok(text) or text[0] == "?" or ":" in text or "#" in text:
        raise _Decline  # "?" starts a key in a flow collection, whatever follows
    return _plain(text)


def _flow_node(tokens: list[_FlowToken], i: int, line: int, depth: int) -> tuple[Any, Any, int]:
    """(value, line table, next token) of the flow collection that opens at ``tokens[i]``."""
    if depth > yamlbounds.MAX_DEPTH:
        raise _Decline
    if tokens[i][0] == "[":
        return _flow_sequence(tokens, i + 1, line, depth)
    if tokens[i][0] == "{":
        return _flow_mapping(tokens, i + 1, line, depth)
    raise _Decline


def _flow_sequence(tokens: list[_FlowToken], i: int, line: int, depth: int) -> tuple[Any, Any, int]:
    n = len(tokens)
    items: list[Any] = []
    lines: list[int] = []
    kids: list[Any] = []
    while True:
        if i >= n:
            raise _Decline
        ind = tokens[i][0]
        if ind == "]" and not items:
            return items, (1,), i + 1
        if ind == "[" or ind == "{":
            value, table, i = _flow_node(tokens, i, line, depth + 1)
        elif ind:
            raise _Decline
        else:
            value, table = _flow_scalar(tokens[i]), None
            i += 1
        items.append(value)
        lines.append(line)
        kids.append(table)
        if i >= n:
            raise _Decline
        if tokens[i][0] == "]":
            return items, (1, *lines, *kids), i + 1
        if tokens[i][0] != ",":
            raise _Decline
        i += 1


def _flow_mapping(tokens: list[_FlowToken], i: int, line: int, depth: int) -> tuple[Any, Any, int]:
    n = len(tokens)
    out: dict[str, Any] = {}
    keys: list[str] = []
    lines: list[int] = []
    kids: list[Any] = []
    while True:
        if i >= n:
            raise _Decline
        ind, quoted, plain, bad = tokens[i]
        if ind == "}" and not keys:
            return out, (0,), i + 1
        key_text, sep, rest = plain.partition(": ")
        key_text = key_text.strip(" ")
        if ind or quoted or bad or not sep or ":" in key_text or "#" in key_text or key_text[:1] == "?":
            raise _Decline  # a complex or quoted key, a key without ": ", "?" (a key's indicator here)
        key = _plain_key(key_text)
        i += 1
        if rest.strip(" "):
            value, table = _flow_scalar(("", "", rest, "")), None
        elif i < n and tokens[i][0] in ("[", "{"):
            value, table, i = _flow_node(tokens, i, line, depth + 1)
        elif i < n and tokens[i][1]:
            value, table = _flow_scalar(tokens[i]), None
            i += 1
        else:
            raise _Decline  # a key without a value
        out[key] = value
        keys.append(_intern(key_text))
        lines.append(line)
        kids.append(table)
        if i >= n:
            raise _Decline
        if tokens[i][0] == "}":
            return out, (0, *keys, *lines, *kids), i + 1
        if tokens[i][0] != ",":
            raise _Decline
        i += 1


# kinds of token (a line is a dash per "- " it starts with, then at most one of the others); _BLOCK is a block
# scalar's header (its key, if any, and the header): its value is read from the lines below it (_block)
_DASH, _KEY, _KEY_SCALAR, _KEY_FLOW, _SCALAR, _FLOW, _BLOCK = range(7)
_BLOCK_HEADERS = frozenset(("|", "|-", "|+", ">", ">-", ">+"))
_Token = tuple[int, int, Any, Any, Any]  # (column, kind, key as written, key, value or flow text)
_LINES: dict[str, tuple[_Token, ...] | None] = {}  # a line's tokens (None: declined); manifests repeat lines
_MAX_LINES = 2048  # more kept lines cost more memory than they save time (10,000 manifests: 1,024 to 16,384)
_MAX_KEPT_LINE = 200


def _scalar(text: str) -> Any:
    """A scalar written on its key's or dash's line, up to a comment."""
    first = text[0]
    if first == '"' or first == "'":
        value, rest = _quoted(text)
        _end_of_line(rest)
        return value
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut].rstrip(" ")
    if not _plain_ok(text) or ": " in text or text.endswith(":"):
        raise _Decline
    return _plain(text)


def _line_tokens(raw: str) -> tuple[_Token, ...]:
    """The tokens of one line, which do not depend on where the line is: kept per distinct line."""
    text = raw.lstrip(" ")
    col = len(raw) - len(text)
    text = text.rstrip(" ")
    out: list[_Token] = []
    while text[0] == "-" and (len(text) == 1 or text[1] == " "):
        out.append((col, _DASH, None, None, None))
        rest = text[1:].lstrip(" ")
        if not rest or rest[0] == "#":
            return tuple(out)
        col += len(text) - len(rest)
        text = rest
    first = text[0]
    if first == "[" or first == "{":
        out.append((col, _FLOW, None, None, text))
        return tuple(out)
    if text in _BLOCK_HEADERS:
        out.append((col, _BLOCK, None, None, text))
        return tuple(out)
    if first != '"' and first != "'":
        cut = text.find(": ")
        if cut >= 0 or text[-1] == ":":
            key_text = text[:cut] if cut >= 0 else text[:-1]
            rest = text[cut + 2 :].lstrip(" ") if cut >= 0 else ""
            key = _plain_key(key_text)
            raw_key = _intern(key_text)
            if not rest or rest[0] == "#":
                out.append((col, _KEY, raw_key, key, None))
            elif rest[0] == "[" or rest[0] == "{":
                out.append((col, _KEY_FLOW, raw_key, key, rest))
            elif rest in _BLOCK_HEADERS:
                out.append((col, _BLOCK, raw_key, key, rest))
            else:
                out.append((col, _KEY_SCALAR, raw_key, key, _scalar(rest)))
            return tuple(out)
    out.append((col, _SCALAR, None, None, _scalar(text)))
    return tuple(out)


class _Block:
    """One document's tokens (``lines[i]`` is the line of ``tokens[i]``), comments and blank lines gone."""

    __slots__ = ("lines", "tokens")

    def __init__(self, lines: list[int], tokens: list[_Token]) -> None:
        self.lines = lines
        self.tokens = tokens

    def node(self, i: int, depth: int) -> tuple[Any, Any, int]:
        """(value, line table, next token) of the block collection whose first token is ``tokens[i]``."""
        if depth > yamlbounds.MAX_DEPTH:
            raise _Decline
        kind = self.tokens[i][1]
        if kind == _DASH:
            return self.sequence(i, depth)
        if kind in (_SCALAR, _FLOW):
            raise _Decline  # a value on a line of its own, maybe continued
        return self.mapping(i, depth)

    def mapping(self, i: int, depth: int) -> tuple[Any, Any, int]:
        tokens = self.tokens
        numbers = self.lines
        n = len(tokens)
        col = tokens[i][0]
        out: dict[str, Any] = {}
        keys: list[str] = []
        lines: list[int] = []
        kids: list[Any] = []
        while i < n:
            c, kind, raw, key, value = tokens[i]
            if c != col:
                if c > col:
                    raise _Decline  # a continued scalar, or bad indentation
                break
            keys.append(raw)
            lines.append(numbers[i])
            i += 1
            if kind == _KEY_SCALAR:
                out[key] = value
                kids.append(None)
            elif kind == _KEY:
                table = None
                value = None
                if i < n:
                    below = tokens[i]
                    c = below[0]
                    if c > col or (c == col and below[1] == _DASH):
                        if depth >= yamlbounds.MAX_DEPTH:
                            raise _Decline
                        kind = below[1]
                        if kind == _DASH:
                            value, table, i = self.sequence(i, depth + 1)
                        elif kind in (_SCALAR, _FLOW):
                            raise _Decline  # a value on a line of its own, maybe continued
                        else:
                            value, table, i = self.mapping(i, depth + 1)
                out[key] = value
                kids.append(table)
            elif kind == _KEY_FLOW:
                out[key], table = _flow(value, numbers[i - 1], depth + 1)
                kids.append(table)
            else:
                raise _Decline
        return out, (0, *keys, *lines, *kids), i

    def sequence(self, i: int, depth: int) -> tuple[Any, Any, int]:
        tokens = self.tokens
        numbers = self.lines
        n = len(tokens)
        col = tokens[i][0]
        items: list[Any] = []
        lines: list[int] = []
        kids: list[Any] = []
        while i < n:
            token = tokens[i]
            c = token[0]
            if c != col or token[1] != _DASH:
                if c > col:
                    raise _Decline
                break
            i += 1
            if i >= n:
                raise _Decline  # an empty item
            token = tokens[i]
            if token[0] <= col:
                raise _Decline  # an empty item
            line = numbers[i]
            kind = token[1]
            if kind in (_SCALAR, _FLOW):
                if numbers[i - 1] != line:
                    raise _Decline  # a value on a line of its own, maybe continued
                if kind == _SCALAR:
                    value, table = token[4], None
                else:
                    value, table = _flow(token[4], line, depth + 1)
                i += 1
            else:
                value, table, i = self.node(i, depth + 1)
            items.append(value)
            lines.append(line)
            kids.append(table)
        return items, (1, *lines, *kids), i


def _block(header: str, lines: list[str], k: int, owner: int, last: int) -> tuple[str, int]:
    """(value, index of the first line after it) of the block scalar whose header ends the line before
    ``lines[k]``, as PyYAML's scanner reads it (``scan_block_scalar``: libyaml's rules). ``owner``: the
    column of its key or dash (the block's content must be indented more); ``lines[last]``, if any, is the
    end of the text, with no line break after it. Declined: no content on the line after the header (leading
    blank lines, an empty scalar), content not indented past ``owner``."""
    n = len(lines)
    if k >= n:
        raise _Decline
    line = lines[k]
    body = line.lstrip(" ")
    indent = len(line) - len(body)
    if not body or indent <= owner:
        raise _Decline
    folded = header[0] == ">"
    chunks: list[str] = []
    breaks = 0  # empty lines (each a line break) since the last content line
    while True:  # lines[k] is a content line: a character at column ``indent``
        if breaks:
            chunks.append("\n" * breaks)
        content = lines[k][indent:]
        chunks.append(content)
        line_break = "" if k == last else "\n"
        k += 1
        breaks = 0
        more = False  # another content line follows the empty lines
        while line_break and k < n:
            line = lines[k]
            spaces = len(line) - len(line.lstrip(" "))
            if spaces == len(line) and len(line) <= indent:  # an empty line (or the end of the text)
                if k == last:
                    break
                breaks += 1
                k += 1
                continue
            more = spaces >= indent  # else less indented: the scalar ends
            break
        if not more:
            break
        if folded and content[0] != " " and lines[k][indent] != " ":
            if not breaks:
                chunks.append(" ")  # a line break between two lines of text folds into a space
        else:
            chunks.append(line_break)
    if header[-1] != "-":
        chunks.append(line_break)
        if header[-1] == "+":
            chunks.append("\n" * breaks)
    value = "".join(chunks)
    return (_intern(value) if len(value) < 64 else value), k


def _tokens(lines: list[str], first: int, last: int) -> tuple[list[int], list[_Token]]:
    """The tokens of a document's lines (numbered from ``first``; ``lines[last]``, if any, ends the text)."""
    numbers: list[int] = []
    tokens: list[_Token] = []
    known = _LINES
    j = 0
    n = len(lines)
    while j < n:
        raw = lines[j]
        number = first + j
        j += 1
        found = known.get(raw)
        if found is None:
            text = raw.lstrip(" ")
            if not text or text[0] == "#":
                continue  # blank lines and comments are not kept
            if raw in known:
                raise _Decline
            try:
                found = _line_tokens(raw)
            except _Decline:
                found = None
            if found is not None and found[-1][1] == _BLOCK:  # not kept: its value is on the lines below
                found, j = _block_tokens(found, lines, j, last)
            else:
                if len(raw) <= _MAX_KEPT_LINE:
                    if len(known) >= _MAX_LINES:
                        known.clear()
                    known[raw] = found
                if found is None:
                    raise _Decline
        if len(found) == 1:
            numbers.append(number)
            tokens.append(found[0])
        else:
            numbers.extend([number] * len(found))
            tokens.extend(found)
    return numbers, tokens


def _block_tokens(
    found: tuple[_Token, ...], lines: list[str], j: int, last: int
) -> tuple[tuple[_Token, ...], int]:
    """The tokens of a block scalar's header line (``lines[j - 1]``), its value read from the lines below, and
    the index of the first line after it."""
    col, _, raw_key, key, header = found[-1]
    if raw_key is None and len(found) == 1:
        raise _Decline  # a value on a line of its own
    owner = col if raw_key is not None else found[-2][0]  # its key's column, else its dash's
    value, after = _block(header, lines, j, owner, last)
    return (*found[:-1], (col, _SCALAR if raw_key is None else _KEY_SCALAR, raw_key, key, value)), after


def parse(text: str) -> list[tuple[int, Any, tuple[Any, ...]]] | None:
    """[(first line, object, line table)] of each document of ``text`` (lines from 1), or None when the text
    is not for this reader (the caller then reads it with the full path)."""
    if not text.isascii() or len(text) > 2 * yamlbounds.MAX_DOCUMENT_NODES or _refused(text):
        return None
    try:
        return _documents(text)
    except (_Decline, RecursionError):
        return None


def _documents(text: str) -> list[tuple[int, Any, tuple[Any, ...]]]:
    lines = text.split("\n")
    bounds: list[tuple[int, int]] = []
    begin = 0
    if "\n---" in text or text.startswith("---"):
        for s, line in enumerate(lines):
            if line[:3] == "---":
                if line.rstrip(" ") != "---":
                    raise _Decline  # content or a comment after the marker
                bounds.append((begin, s))
                begin = s + 1
    bounds.append((begin, len(lines)))
    out: list[tuple[int, Any, tuple[Any, ...]]] = []
    for n, (begin, end) in enumerate(bounds):
        last = end - begin - 1 if end == len(lines) else -1  # the end of the text: no line break after it
        numbers, tokens = _tokens(lines[begin:end], begin + 1, last)
        if not tokens:
            if n == 0 and len(bounds) > 1:
                continue  # comments or nothing before the first marker: no document
            raise _Decline  # an empty document: left to the full path
        if tokens[0][1] not in (_KEY, _KEY_SCALAR, _KEY_FLOW):
            raise _Decline  # a root that is not a block mapping
        obj, table, at = _Block(numbers, tokens).mapping(0, 1)
        if at != len(tokens):
            raise _Decline
        kind, items = obj.get("kind"), obj.get("items")
        if kind.__class__ is str and kind.endswith("List") and items.__class__ is list:
            raise _Decline  # a List: its items' nodes give their lines
        out.append((numbers[0], obj, table))
    return out
