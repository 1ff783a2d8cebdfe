"""The plain-block reader (:mod:`kubedra.sources.yamlfast`) against the full path it stands in for
(``iter_documents_lines``: PyYAML's C composer, go-yaml's scalars, the one-walk line tables): for
every text it takes, the same documents, objects (``repr``: 1, 1.0 and True told apart), first lines and line
tables, and never a text the full path refuses. Texts from the corpora, generated manifests in every style it
reads (literal and folded block scalars among them), and the same texts mutated with what it must decline
(anchors, tags, tabs, escapes...)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.errors import InputError
from kubedra.sources import files, yamlfast
from kubedra.sources.documents import Lines, line_table
from kubedra.sources.files import parse_text
from kubedra.sources.yamlread import iter_documents_lines

ROOT = Path(__file__).resolve().parents[3]
# a sweep: KUBEDRA_FUZZ_EXAMPLES=20000 pytest -q tests/unit/sources/test_yamlfast.py
EXAMPLES = int(os.environ.get("KUBEDRA_FUZZ_EXAMPLES") or 150)


def _full(text: str) -> list[tuple[int, str, Any]] | str:
    """What the full path gives: a document's table is built from its node where the walk did not build it
    (aliases may be there: a "*" and a "&" anywhere in the text), as ``parse_text`` then does."""
    try:
        docs = iter_documents_lines(text, "t.yaml")
        return [
            (node.start_mark.line + 1, repr(obj), table if table is not None else line_table(node).root)
            for node, obj, table in docs
        ]
    except InputError as e:
        return str(e)


def _taken_alike(text: str) -> bool:
    """Whether the reader took ``text``; where it did, it gave what the full path gives."""
    quick = yamlfast.parse(text)
    if quick is None:
        return False
    full = _full(text)
    assert not isinstance(full, str), (text, full)
    assert [(line, repr(obj), table) for line, obj, table in quick] == full, text
    return True


def test_the_corpora_read_alike() -> None:
    files = [
        p
        for folder in ("tests/corpus", "tests/realworld", "tests/data", "tests/golden", "examples")
        for p in sorted((ROOT / folder).rglob("*"))
        if p.suffix in (".yaml", ".yml")
    ]
    taken = sum(_taken_alike(p.read_text(encoding="utf-8", errors="replace")) for p in files)
    assert len(files) > 300
    assert taken > len(files) // 3  # it reads most plain manifests, so the comparison is not empty


MANIFEST = """\
# a comment first
apiVersion: apps/v1   # trailing comment
kind: Deployment
metadata:
  name: web-1
  labels: {app: web-1, tier: "front"}

spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.05-py3
        args: ["python", 'train.py', --epochs, 10]
        ports: [{containerPort: 80}, {containerPort: 443, protocol: TCP}]
        resources:
          limits:
            nvidia.com/gpu: 1
            cpu: "8"
      -   name: side
          env:
            -
              name: A
              value: yes
      volumes: []
      nodeSelector: {}
  schedule: "0 2 * * *"
  paused:
---
apiVersion: v1
kind: Service
metadata: {name: s}
"""


def test_a_manifest_in_every_style_it_reads() -> None:
    assert _taken_alike(MANIFEST)
    ((line, obj, table), (line2, _, _)) = yamlfast.parse(MANIFEST) or []
    assert (line, line2) == (2, 31)
    assert obj["spec"]["template"]["spec"]["containers"][1]["env"][0] == {"name": "A", "value": True}
    assert obj["spec"]["paused"] is None
    assert table[0] == 0


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n  text\n",
        "a: >-\n  text\n",
        "a: |\n  x\n\n  y\n",
        "a: |+\n  x\n\n\nb: 1\n",
        "a: |-\n  x\n\nb: 1\n",
        "a: >\n  x\n  y\n\n  z\n   w\n  v\n",  # folded: lines, an empty line, a more-indented line
        "a: >-\n  a\n  b\n  \n  c\n",
        "a: |\n  x",  # no line break at the end of the text
        "a: |+\n  x\n\n",
        "a: |\n  x\n      \n  y\n",  # spaces past the indentation are text
        "a: >\n  x\n      \n  y\n",
        "a: |+\n  x\n   \n",
        "l:\n- |\n  x\n- b\n",
        "l:\n- k: |\n    x\n  j: 1\n",
        "l:\n  - - >\n      x\n      y\n",
        "a: |\n  # not a comment\n  x\n# comment\nb: 1\n",
        "a: |\n x\nb: |\n  y\n---\nc: >+\n  z\n\n---\nd: 1\n",
    ],
)
def test_block_scalars_read_alike(text: str) -> None:
    assert _taken_alike(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "a: !!str 1\n",  # tags
        "a: |2\n  text\n",  # a block scalar's indentation indicator
        "a: | # c\n  text\n",  # a comment after its header
        "a: |\n\n  text\n",  # an empty line before its first
        "a: |\n",  # an empty block scalar
        "a: >\n",
        "a: |\nb: 1\n",
        "a:\n  b: |\n  c: 1\n",
        "- |\n  text\n",  # a root that is not a mapping
        "a:\n  |\n   text\n",  # a block scalar on a line of its own
        "a: >\n   x\n  y\n",  # an error: less indented, not a key
        "a: b\n  c\n",  # a plain scalar continued on the next line
        "a: 'b\n  c'\n",
        "a:\n  b\n",  # a scalar on a line of its own
        "a: {b: 1,\n  c: 2}\n",  # a flow collection over several lines
        '"a": 1\n',  # a quoted key
        "a: 'it''s'\n",  # an escaped quote
        'a: "x\\ty"\n',  # an escape
        "a:\tb\n",  # a tab
        "a: b\r\nc: d\r\n",  # CR
        "a: caf\u00e9\n",  # not ASCII
        "%YAML 1.1\n---\na: 1\n",  # a directive
        "a: 1\n...\n",  # a document end
        "a: 1\n---\n",  # an empty document
        "--- # c\na: 1\n",  # something after the marker
        "- a\n- b\n",  # a root that is not a mapping
        "just text\n",
        "",
        "a: 1\n  b: 2\n",  # bad indentation
        "a:\n- b\n -c\n",
        "a:\n  -\n  - b\n",  # an empty item
        "? a\n: b\n",  # a complex key
        "<<: {a: 1}\n",  # a merge key
        "a: .inf\n",  # kubectl refuses it: the full path says so
        "a: b: c\n",  # an error
        "a: [b, c\n",
        "a: {b}\n",
        "a: {b: }\n",
        "a: [b: c]\n",
        "a: {b:c}\n",
        "a: [x]y\n",
        "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod}\n",  # a List: items' lines come from nodes
        "a: @x\n",
        "a: `x`\n",
        "a: [?x]\n",  # a key in a flow collection
        "a: {?x: 1}\n",
        "a: - b\n",
        "a #c: d\n",  # a comment where the key would be
        "k" * 1100 + ": v\n",  # a simple key longer than PyYAML reads
    ],
)
def test_what_it_declines(text: str) -> None:
    assert yamlfast.parse(text) is None


_KEYS = [
    "name",
    "y",
    "1",
    "on",
    "0x10",
    "1.5",
    "a b",
    "a:b",
    "a#b",
    "nvidia.com/gpu",
    "-x",
    "null",
    "~",
    "No",
]
_SCALARS = [
    "web",
    "1",
    "-1",
    "+1",
    "0x1F",
    "0o17",
    "010",
    "0b101",
    "1_000",
    "1e3",
    "1.5",
    ".5",
    "1:30",
    "12:30:00",
    "99999999999999999999",
    "y",
    "Yes",
    "no",
    "ON",
    "~",
    "null",
    "",
    "=",
    "2026-12-07",
    "0 2 * * *",
    "a  b",
    "a, b",
    "a#b",
    "a:b",
    "http://x:80/y",
    "-x",
    "?x",
    ":x",
    "---",
    "...",
    '"quoted: yes"',
    '""',
    "''",
    "'1'",
    "'a # b'",
    '"[x]"',
    "x" * 70,
]
_FLOW_SCALARS = [s for s in _SCALARS if s and ":" not in s and "#" not in s and "," not in s and s != "..."]


_COMMA = st.sampled_from([", ", ",", " , "])
_FLOW_KEYS = st.sampled_from([k for k in _KEYS if ":" not in k and "#" not in k])
_FLOW = st.recursive(
    st.sampled_from(_FLOW_SCALARS),
    lambda inner: (
        st.builds(lambda items, comma: "[" + comma.join(items) + "]", st.lists(inner, max_size=3), _COMMA)
        | st.builds(
            lambda pairs, comma: "{" + comma.join(f"{k}: {v}" for k, v in pairs) + "}",
            st.lists(st.tuples(_FLOW_KEYS, inner), max_size=3),
            _COMMA,
        )
    ),
    max_leaves=5,
)
_SCALAR = st.builds(
    lambda value, comment: f"{value}{comment}" if value else comment.lstrip(),
    st.sampled_from(_SCALARS) | _FLOW,
    st.sampled_from(["", "", " # c", "   #c: d", " #"]),
)
_KEY = st.sampled_from(_KEYS)
_STEP = st.sampled_from([2, 2, 4, 1, 3])
_GAP = st.sampled_from([" ", " ", "   "])
_FILLER = st.sampled_from(["", "# note", "  ", "#"])
_BLOCK_HEADER = st.sampled_from(["|", "|-", "|+", ">", ">-", ">+"])
_BLOCK_LINE = st.sampled_from(
    ["text", "a b", " more", "  x y", "# hash", "key: v", "- x", "x  ", "", "", "   ", "     "]
)


@st.composite
def _block(draw: st.DrawFn, indent: int) -> list[str]:
    """A block scalar's lines below its header, at ``indent`` (an empty line keeps its spaces, if any)."""
    pad = " " * indent
    return [
        line if not line.strip() else pad + line
        for line in draw(st.lists(_BLOCK_LINE, min_size=1, max_size=5))
    ]


@st.composite
def _mapping(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    pad = " " * indent
    step = draw(_STEP)
    lines: list[str] = []
    for key in draw(st.lists(_KEY, min_size=1, max_size=3)):
        shape = draw(
            st.sampled_from(["scalar", "scalar", "map", "seq", "block"] if depth < 3 else ["scalar"])
        )
        if draw(st.integers(0, 9)) == 0:
            lines.append(pad + draw(_FILLER))
        if shape == "scalar":
            lines.append(f"{pad}{key}: {draw(_SCALAR)}".rstrip() + draw(st.sampled_from(["", "", "  "])))
        elif shape == "map":
            lines.append(f"{pad}{key}:" + draw(st.sampled_from(["", " # c"])))
            lines += draw(_mapping(indent + step, depth + 1))
        elif shape == "block":
            lines.append(f"{pad}{key}: {draw(_BLOCK_HEADER)}")
            lines += draw(_block(indent + step))
        else:
            lines.append(f"{pad}{key}:")
            lines += draw(_sequence(indent + draw(st.sampled_from([0, step])), depth + 1))
    return lines


@st.composite
def _sequence(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 2))):
        shape = draw(st.sampled_from(["scalar", "map", "map-below", "seq", "block"]))
        gap = draw(_GAP)
        if shape == "scalar" or depth >= 3:
            lines.append(f"{pad}-{gap}{draw(_SCALAR)}".rstrip())
        elif shape == "block":
            lines.append(f"{pad}-{gap}{draw(_BLOCK_HEADER)}")
            lines += draw(_block(indent + draw(st.sampled_from([1, 2, 3]))))
        elif shape == "map":
            inner = draw(_mapping(indent + 1 + len(gap), depth + 1))
            lines += [f"{pad}-{gap}{inner[0].lstrip()}", *inner[1:]]
        elif shape == "map-below":
            lines.append(f"{pad}-")
            lines += draw(_mapping(indent + 2, depth + 1))
        else:
            inner = draw(_sequence(indent + 1 + len(gap), depth + 1))
            lines += [f"{pad}-{gap}{inner[0].lstrip()}", *inner[1:]]
    return lines


@st.composite
def _stream(draw: st.DrawFn) -> str:
    docs = [
        "\n".join(draw(_mapping(draw(st.sampled_from([0, 0, 2])), 1))) for _ in range(draw(st.integers(1, 2)))
    ]
    lead = draw(st.sampled_from(["", "---\n", "# Source: x\n---\n"]))
    return lead + "\n---\n".join(docs) + draw(st.sampled_from(["\n", "", "\n\n# end\n"]))


@settings(max_examples=EXAMPLES, deadline=None)
@given(_stream())
def test_generated_manifests_read_alike(text: str) -> None:
    _taken_alike(text)


_EDITS = [
    " ",
    "  ",
    "\n",
    "-",
    "- ",
    ":",
    ": ",
    "#",
    " #",
    "'",
    '"',
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "!t ",
]
_EDITS += [
    "|",
    ">",
    "? ",
    "---\n",
    "...",
    "\t",
    "\\",
    "%",
    "@",
    "`",
    "\n  ",
    "\n- ",
    "\u00e9",
    "\r",
    "~",
    "0",
]


@settings(max_examples=2 * EXAMPLES, deadline=None)
@given(
    _stream(), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(_EDITS), st.integers(0, 3)), max_size=4)
)
def test_mutated_manifests_read_alike(text: str, edits: list[tuple[float, str, int]]) -> None:
    """Edits at random places: what the reader still takes reads as the full path reads it, and what the full
    path refuses (an error at a line) the reader never takes."""
    for at, insert, delete in edits:
        i = int(at * len(text))
        text = text[:i] + insert + text[i + delete :]
    _taken_alike(text)


def test_parse_text_keeps_the_same_documents_and_lines() -> None:
    """Through ``parse_text(keep_nodes="lines")`` (what audit reads): the same documents, first lines and
    the line of every path as with node trees kept."""
    lines = parse_text(MANIFEST, "m.yaml", keep_nodes="lines")
    nodes = parse_text(MANIFEST, "m.yaml")
    assert [(d.obj, d.line) for d in lines.documents] == [(d.obj, d.line) for d in nodes.documents]
    assert lines.documents[0].line_of(("spec", "template", "spec", "containers", 1, "env", 0, "value")) == 25
    assert lines.documents[1].line_of(("metadata", "name")) == 33


# what sends a whole text to the full path at once, as a regex (what ``yamlfast._refused`` answers without one)
_REFUSE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f\\]")


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_refused_answers_what_the_regex_does(text: str) -> None:
    assert yamlfast._refused(text) == bool(_REFUSE.search(text))


@pytest.mark.parametrize("char", [chr(c) for c in range(128)])
def test_refused_answers_what_the_regex_does_for_each_character(char: str) -> None:
    for text in (char, f"a: b\n{char}\n", f"a: {char}b\nc: d", "\n" + char):
        assert yamlfast._refused(text) == bool(_REFUSE.search(text)), repr(text)


def _nested(flow: str, depth: int) -> str:
    """``flow`` as the value of a key ``depth`` mappings down (the root's keys at depth 1)."""
    return "".join(f"{'  ' * i}k{i}:\n" for i in range(depth - 1)) + f"{'  ' * (depth - 1)}f: {flow}\n"


@pytest.mark.parametrize("flow", ["{app: web}", "[1, {a: [x, y]}, []]", "{a: {b: {c: [d]}}}", "[[[[]]]]"])
def test_a_flow_kept_reads_alike_on_other_lines_and_depths(flow: str) -> None:
    """A flow collection is read once per text and kept: the same text again, on another line or at another
    depth (the bound included: declined where its deepest collection passes it), reads as the full path reads
    it, and as the reader reads it with nothing kept."""
    texts = [
        f"a: {flow}\nb:\n  c: {flow}\n  d:\n  - {flow}\n  - e: {flow}\n",
        *[_nested(flow, d) for d in (1, 2, 150, 195, 196, 197, 198, 199, 200, 201)],
    ]
    warm = []
    for text in texts:
        _taken_alike(text)
        warm.append(yamlfast.parse(text))
    for text, kept in zip(texts, warm, strict=True):
        yamlfast._FLOWS.clear()
        yamlfast._LINES.clear()
        assert yamlfast.parse(text) == kept, text[-60:]
    assert warm[0] is not None  # read at the top
    assert any(w is None for w in warm)  # declined past the bound


def _read(text: str) -> list[tuple[Any, ...]]:
    docs = parse_text(text, "m.yaml", keep_nodes="lines")
    assert docs.errors == []
    out = []
    for d in docs.documents:
        assert isinstance(d.node_source, Lines)
        out.append((repr(d.obj), d.file, d.line, d.index, d.node_source.root))
    return out


def test_parse_text_takes_what_the_reader_reads_as_the_node_path_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``parse_text(keep_nodes="lines")`` makes the documents of a text the reader takes directly
    (``plain_documents``): the same objects, files, lines, indexes and line tables as through
    ``iter_documents_lines`` and ``_expand``, on every corpus file the reader takes."""
    texts = [
        p.read_text(encoding="utf-8")
        for folder in ("tests/corpus", "tests/realworld", "examples")
        for p in sorted((ROOT / folder).rglob("*"))
        if p.suffix in (".yaml", ".yml")
    ]
    taken = [t for t in [*texts, MANIFEST] if yamlfast.parse(t) is not None]
    direct = [_read(t) for t in taken]
    monkeypatch.setattr(files, "plain_documents", lambda _text: None)
    assert [_read(t) for t in taken] == direct
    assert len(taken) > 100
    assert any(len(d) > 1 for d in direct)  # several documents in a file among them
