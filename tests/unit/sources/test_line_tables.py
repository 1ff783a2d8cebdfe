"""keep_nodes="lines" keeps only what Document.line_of reads from a node tree (scalar keys as written, the line of
each key and item): it must give the same line as the kept node tree for every path, including the odd ones
(duplicate keys, keys that resolve to other strings, aliases, flow style, Lists, JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.sources.paths import all_paths

from kubedra.errors import InputError
from kubedra.sources.documents import line_table
from kubedra.sources.files import Lines, parse_text, read_text
from kubedra.sources.yamlread import construct, iter_documents, iter_documents_lines

ROOT = Path(__file__).resolve().parents[3]

ODD = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: odd
  labels: &l {a: "1", b: "2"}
  annotations: *l
data:
  dup: first
  dup: second
  y: yes-key
  1: one
  "quoted": q
spec:
  list:
  - a
  - {x: 1,
     y: 2}
  - - nested
    - seq
  - &m
    k: v
  - *m
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: p1}, spec: {containers: [{name: c, image: x}]}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p2
"""


def _probes(obj: Any) -> list[tuple[Any, ...]]:
    extra = [("absent",), ("spec", "absent", 0), ("metadata", 0), ("spec", "list", -1), ("spec", "list", 99)]
    extra += [("data", "y"), ("data", "true"), ("data", "1"), ("data", 1), ("spec", "list", True)]
    extra += [(*p, "deeper", 0) for p in all_paths(obj)[:50]]
    return all_paths(obj) + extra


def _same_lines(text: str, name: str) -> int:
    eager = parse_text(text, name)
    lines = parse_text(text, name, keep_nodes="lines")
    assert [(d.obj, d.line) for d in lines.documents] == [(d.obj, d.line) for d in eager.documents]
    assert [str(e) for e in lines.errors] == [str(e) for e in eager.errors]
    checked = 0
    for e, z in zip(eager.documents, lines.documents, strict=True):
        assert isinstance(z.node_source, Lines) or z.node_source is e.node_source is None
        for path in _probes(e.obj):
            assert z.line_of(path) == e.line_of(path), (name, e.describe(), path)
            checked += 1
    return checked


def test_odd_yaml_gives_the_same_lines() -> None:
    assert _same_lines(ODD, "odd.yaml") > 40
    doc = parse_text(ODD, "odd.yaml", keep_nodes="lines").documents[0]
    assert doc.line_of(["data", "dup"]) == 8  # the first of two equal keys, as the node walk finds
    assert doc.line_of(["spec", "list", 1, "y"]) == 17


def test_json_gives_the_same_lines() -> None:
    text = (
        '{"apiVersion": "v1", "kind": "List",\n "items": [\n  {"kind": "Pod", "metadata": {"name": "a"}}]}\n'
    )
    assert _same_lines(text, "list.json") > 3


@pytest.mark.parametrize("folder", ["tests/realworld/inputs", "tests/corpus"])
def test_corpus_gives_the_same_lines(folder: str) -> None:
    files = sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    assert files
    assert sum(_same_lines(read_text(str(p)), str(p)) for p in files) > 1000


@pytest.mark.parametrize("folder", ["tests/corpus", "tests/realworld"])
def test_tables_built_with_the_objects_equal_tables_of_the_nodes(folder: str) -> None:
    """Without aliases the line table is built in the walk that makes the object (one walk, not two): the
    same tuples as line_table of the node, and the same object as iter_documents."""
    built = 0
    for p in sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".yaml", ".yml")):
        text = read_text(str(p))
        try:
            docs = list(iter_documents_lines(text, str(p)))
        except InputError:
            continue
        plain = list(iter_documents(text, str(p)))
        assert [obj for _, obj, _ in docs] == [obj for _, obj in plain]
        for node, _obj, table in docs:
            if table is not None:
                built += 1
                assert table == line_table(node).root, p
    assert built > 20


def test_equal_documents_share_keys_values_and_tables() -> None:
    """What repeats across manifests is kept once (audit of 10,000 manifests: 127 -> 92 MiB peak RSS with the
    streamed report): mapping keys and short string values are interned, and a line table equal to an earlier
    document's is that one. Objects and lines are unchanged (the tests above)."""
    text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels: {{app: web}}\n"
    docs = [parse_text(text.format(name=n), f"{n}.yaml", keep_nodes="lines").documents[0] for n in ("a", "b")]
    a, b = docs[0], docs[1]
    assert a.obj == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "a", "labels": {"app": "web"}},
    }
    ka, kb = list(a.obj["metadata"]), list(b.obj["metadata"])
    assert ka[0] is kb[0]
    assert ka[1] is kb[1]
    assert a.obj["kind"] is b.obj["kind"]
    assert a.obj["metadata"]["labels"]["app"] is b.obj["metadata"]["labels"]["app"]
    assert isinstance(a.node_source, Lines)
    assert isinstance(b.node_source, Lines)
    assert a.node_source.root is b.node_source.root
    assert b.line_of(("metadata", "labels", "app")) == 5


# Scalars the one-walk reader takes in line (strings) or through the resolver (everything else), keys that
# resolve to other strings, explicit tags, and a cron schedule's "*" (no alias without an anchor).
_SCALARS = [
    "web",
    '"quoted: yes"',
    "'1'",
    "1",
    "0x1F",
    "010",
    "1_000",
    "1e3",
    "1.5",
    ".5",
    "y",
    "no",
    "~",
    "null",
    "",
    "2026-12-07",
    "'0 2 * * *'",
    "0 2 * * *",
    "!!str 7",
    "!!int '8'",
    "!!float 2",
    "99999999999999999999",
    "x" * 70,
]
_KEYS = ["name", "y", "1", "on", "'quoted'", "image", "0x10", "1.5"]


@st.composite
def _block_yaml(draw: st.DrawFn, indent: int = 0, depth: int = 0) -> str:
    """A block mapping of scalars, nested mappings and sequences (flow ones too), as manifests are written."""
    pad = " " * indent
    lines = []
    for key in draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=4)):
        shape = draw(st.sampled_from(["scalar", "map", "seq", "flow"] if depth < 3 else ["scalar", "flow"]))
        if shape == "scalar":
            lines.append(f"{pad}{key}: {draw(st.sampled_from(_SCALARS))}".rstrip())
        elif shape == "flow":
            items = draw(st.lists(st.sampled_from(_SCALARS[:16]), max_size=3))
            lines.append(f"{pad}{key}: [{', '.join(i or '~' for i in items)}]")
        elif shape == "map":
            lines.append(f"{pad}{key}:")
            lines.append(draw(_block_yaml(indent + 2, depth + 1)))
        else:
            lines.append(f"{pad}{key}:")
            for _ in range(draw(st.integers(1, 3))):
                if draw(st.booleans()):
                    lines.append(f"{pad}- {draw(st.sampled_from(_SCALARS))}".rstrip())
                else:
                    inner = draw(_block_yaml(indent + 2, depth + 1))
                    lines.append(f"{pad}- {inner.lstrip()}")
    return "\n".join(lines)


def _read(text: str, *, lines: bool) -> tuple[list[Any] | None, str | None]:
    try:
        return list(iter_documents_lines(text, "gen.yaml", lines=lines)), None
    except InputError as e:
        return None, str(e)


def _walked_like_the_reference(text: str) -> int:
    """Objects and line tables of the one-walk reader equal those of the reference: the full constructor's
    conversion (``lines=False``) and line_table of the node tree, the same error where either refuses the
    text; returns how many tables the walk built."""
    docs, err = _read(text, lines=True)
    reference, ref_err = _read(text, lines=False)
    assert err == ref_err
    if docs is None or reference is None:
        return 0
    built = 0
    assert len(docs) == len(reference)
    for (node, obj, table), (_, ref_obj, _) in zip(docs, reference, strict=True):
        assert obj == ref_obj == construct(node)
        assert repr(obj) == repr(ref_obj)  # 1 and 1.0, True and 1 are told apart
        if table is not None:
            assert table == line_table(node).root
            built += 1
    return built


@settings(max_examples=300, deadline=None)
@given(_block_yaml())
def test_generated_documents_read_in_one_walk_as_the_reference(text: str) -> None:
    _walked_like_the_reference("apiVersion: v1\nkind: ConfigMap\n" + text + "\n")


def test_a_cron_schedule_is_no_alias() -> None:
    """A "*" without any "&" in the text cannot be an alias (the composer refuses an undefined one): the
    table is built in the walk; with an anchor, the alias is expanded and the table read from the nodes."""
    cron = 'apiVersion: batch/v1\nkind: CronJob\nspec:\n  schedule: "0 2 * * *"\n  suspend: no\n'
    assert _walked_like_the_reference(cron) == 1
    aliased = cron + "metadata:\n  labels: &l {a: b}\n  annotations: *l\n"
    assert _walked_like_the_reference(aliased) == 0
    ((_, obj, _),) = iter_documents_lines(aliased, "a.yaml")
    assert obj["metadata"]["annotations"] == {"a": "b"}
    doc = parse_text(aliased, "a.yaml", keep_nodes="lines").documents[0]
    assert doc.line_of(("metadata", "annotations", "a")) == 7  # the anchored node's own line
