"""The fast manifest loader (kubedra.sources.files: cached scalar resolution, direct node conversion)
yields exactly what PyYAML's own SafeLoader + SafeConstructor path yields."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubedra.audit import loader
from kubedra.errors import InputError, Location
from kubedra.sources import files, yamlread, yamlscalars

from .helpers import corpus


class _GoResolvingLoader(yaml.SafeLoader):
    """PyYAML's pure-Python loader with plain scalars resolved by go-yaml v2's rules (as kubectl reads them)."""

    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return yamlscalars.resolve_plain(value)
        return super().resolve(kind, value, implicit)


def reference(text: str, name: str) -> files.LoadResult:
    """The slow, obviously-right path: pure-Python SafeLoader nodes, PyYAML's constructor (with go-yaml's
    scalar rules), keys made strings afterwards."""
    stripped = text.lstrip()
    if name.endswith(".json") or (stripped.startswith(("{", "[")) and not name.endswith((".yaml", ".yml"))):
        return files.parse_text(text, name)
    result = files.LoadResult()
    display = "<stdin>" if name == files.STDIN else name
    try:
        for node in yaml.compose_all(text, Loader=_GoResolvingLoader):
            if node is None:
                continue
            try:
                obj = yamlread._json_keys(yamlread._Constructor().construct_document(node), node)
            except yamlread._NodeError as e:
                line = e.node.start_mark.line + 1
                result.errors.append(InputError(str(e), Location(file=display, line=line)))
                break
            files._expand(obj, node, display, node.start_mark.line + 1, result.documents, result.errors)
    except yaml.YAMLError as e:
        result.errors.append(yamlread._yaml_error(display, e))
    for i, d in enumerate(result.documents):
        d.index = i
    return result


def same(text: str, name: str = "m.yaml") -> None:
    a, b = reference(text, name), loader.parse_text(text, name)
    assert [d.obj for d in a.documents] == [d.obj for d in b.documents]
    assert [(d.file, d.line, d.index) for d in a.documents] == [
        (d.file, d.line, d.index) for d in b.documents
    ]
    # the C parser words syntax errors differently; where they are must agree. A value kubectl cannot turn
    # into JSON (.inf) is reported at the first such node in document order by the fast loader; PyYAML's
    # constructor (the reference) fills lists after mappings, so it may name a later one of the same
    # document: the fast loader's line is never after the reference's.
    assert len(a.errors) == len(b.errors)
    for ea, eb in zip(a.errors, b.errors, strict=True):
        if "cannot be represented in JSON" in str(ea):
            assert ea.location is not None
            assert eb.location is not None
            assert ea.location.file == eb.location.file
            assert (eb.location.line or 0) <= (ea.location.line or 0), (ea, eb)
        else:
            assert str(ea.location) == str(eb.location)
    for da, db in zip(a.documents, b.documents, strict=True):
        paths: list[list[str | int]] = [
            ["metadata", "name"],
            ["spec", "template", "spec", "containers", 0, "image"],
            ["nope"],
        ]
        for path in paths:
            assert da.line_of(path) == db.line_of(path)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: 1}\nc: *x\n",
        "<<: {a: 1}\nb: 2\n",
        "a: !!binary aGVsbG8=\n",
        "t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\n",
        "x: 0o17\ny: 0x1F\nz: 1_000\nn: ~\nb: yes\nB: NO\ne: 1e3\ng: 1.5e3\nh: -.5\ni: 08\nj: 1:20\n",
        "f: 1\ng: .inf\n",
        "y: y\nn: N\non: off\n1.5: x\n",
        "1: 2\nx: Y\n",
        "? [a, b]\n: c\n",
        "k: 1\nk: 2\n",
        "a: !custom x\n",
        "- 1\n- [2, {3: 4}]\n",
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- kind: Pod\n  metadata: {name: b}\n",
        "---\n---\napiVersion: v1\nkind: A\n...\n---\nkind: B\n",
        "a: [unclosed\n",
        'a: "quoted 1"\nb: \'2\'\nc: !!str 3\nd: !!int "4"\n',
        "set: !!set {a, b}\n",
    ],
)
def test_edge_cases(text: str) -> None:
    same(text)


def test_json_and_stdin_names() -> None:
    same('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}', "m.json")
    same("kind: Pod\n", files.STDIN)


def test_whole_corpus() -> None:
    for path in files.iter_manifest_files([str(corpus())]):
        with open(path, encoding="utf-8") as fh:
            same(fh.read(), path)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    st.sampled_from(["yes", "no", "on", "~", "null", "0x1F", "0o7", "1_0", "2001-12-14", ".inf", "1e3", "-"]),
)
keys = st.one_of(st.text(min_size=1, max_size=8), st.integers(0, 9), st.booleans())
trees = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4), max_leaves=25
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), trees, min_size=1, max_size=5), st.booleans())
@example({"1": float("inf"), "0": [float("inf")]}, False)
@example({"0": {"Y": None, 1: None}}, False)
@example({"1E100": None}, False)
def test_random_documents(doc: dict, flow: bool) -> None:
    """(Found {'1': inf, '0': [inf]}: the two readers name different .inf nodes of one document; and
    {'0': {'Y': None, 1: None}}: go-yaml keeps the keys true and 1 apart, a Python dict merged them.)"""
    same(yaml.safe_dump_all([doc, {"kind": "X", "v": doc}], default_flow_style=flow, allow_unicode=True))
