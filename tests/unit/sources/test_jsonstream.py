"""kubedra.sources.jsonstream: a JSON List's items one at a time, the same objects as the whole-file reader."""

from __future__ import annotations

import io
import json
import os

import pytest

from kubedra.errors import InputError
from kubedra.sources import jsonstream
from kubedra.sources.jsonstream import JsonListStream, NotAList, should_stream, stream_documents
from kubedra.sources.yamlread import load_json


def _items(text: str, chunk: int = 7) -> tuple[list[tuple[int, object]], JsonListStream]:
    s = JsonListStream(io.StringIO(text), "f.json", chunk=chunk)
    return list(s.items()), s


LIST = {
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {},
    "kubedra": {"format": "kubedra.io/snapshot/v1"},
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"n": 12345678901234 + i},
        }
        for i in range(5)
    ]
    + [{"kind": "X", "big": 2**70, "f": 1.5e300, "s": 'a\u00e9"}]} \\ ['}],
}


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 1, 4])
def test_same_items_as_the_whole_file_reader(chunk, indent):
    text = json.dumps(LIST, indent=indent)
    got, s = _items(text, chunk)
    whole = load_json(text)
    assert [item for _, item in got] == whole["items"]
    assert s.is_list
    assert s.top == {k: v for k, v in whole.items() if k != "items"}


def test_lines_are_each_items_first_line():
    text = json.dumps(LIST, indent=1)
    lines = text.splitlines()
    got, _ = _items(text)
    for line, item in got:
        assert lines[line - 1].strip() == "{"
        assert json.dumps(item, indent=1).splitlines()[1].strip() in lines[line]


def test_kind_after_items_like_kubectl():
    text = '{"apiVersion": "v1", "items": [{"kind": "Pod"}], "kind": "List", "metadata": {"resourceVersion": ""}}'
    got, s = _items(text)
    assert got == [(1, {"kind": "Pod"})]
    assert s.is_list


def test_an_object_with_items_that_is_not_a_list():
    _, s = _items('{"kind": "Thing", "items": [1, 2]}')
    assert not s.is_list
    _, s = _items('{"kind": "List"}')
    assert not s.is_list  # no items array


def test_not_an_object_is_read_whole():
    with pytest.raises(NotAList):
        _items("[1, 2]")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{"kind": "List", "items": [\n{"a": 1},\n{"a": ', 3, "invalid JSON: Expecting value"),
        ('{"kind": "List", "items": [\n{"a": NaN}]}', 2, "NaN is not JSON"),
        ('{"kind": "List", "items": [{"a": 1}\n{"b": 2}]}', 2, "expected ','"),
        ('{"kind": "List", "items": []} x', 1, "extra data"),
        ('{"kind": "List", 3: []}', 1, "expected a key"),
    ],
)
def test_errors_name_the_line(text, line, message):
    with pytest.raises(InputError) as e:
        _items(text, chunk=5)
    assert message in e.value.message
    assert e.value.location is not None
    assert e.value.location.line == line


def test_nesting_bound_counts_the_list():
    deep = "[" * 198 + "]" * 198  # item at depth 3: 200 levels in all, the bound
    _items('{"kind": "List", "items": [' + deep + "]}")
    with pytest.raises(InputError, match="nesting deeper than 200"):
        _items('{"kind": "List", "items": [[' + deep + "]]}")


def test_documents_expand_nested_lists_and_refuse_scalars():
    text = json.dumps(
        {"kind": "List", "items": [{"kind": "PodList", "items": [{"kind": "Pod"}, {"kind": "Pod"}]}]}
    )
    docs = list(stream_documents(JsonListStream(io.StringIO(text), "f.json")))
    assert [(d.kind, d.index) for d in docs] == [("Pod", 0), ("Pod", 1)]
    with pytest.raises(InputError, match="expected a Kubernetes object"):
        list(stream_documents(JsonListStream(io.StringIO('{"kind": "List", "items": [3]}'), "f.json")))


def test_should_stream(tmp_path, monkeypatch):
    big = tmp_path / "a.json"
    big.write_text('{"kind": "List", "items": []}')
    assert should_stream(str(big), 10)
    assert not should_stream(str(big), 10_000)
    yml = tmp_path / "a.yaml"
    yml.write_text('{"kind": "List", "items": []}')
    assert not should_stream(str(yml))
    # a YAML name is decided without a system call: audit asks for each manifest it reads
    monkeypatch.setattr(os.path, "isfile", lambda _p: pytest.fail("stat of a .yaml file"))
    assert not should_stream(str(yml))
    assert not should_stream("b.yml")
    monkeypatch.undo()
    other = tmp_path / "snapshot"
    other.write_text('  {"kind": "List", "items": []}')
    assert should_stream(str(other))
    assert not should_stream("-")
    assert not should_stream(str(tmp_path))


def test_shared_tree_keeps_the_data_and_shares_equal_parts() -> None:
    """Equal mappings and lists below the item become one object; values equal in Python but not in JSON
    (``1``, ``1.0``, ``True``; ``0.0`` and ``-0.0``) and mappings with their keys in another order stay apart."""
    tricky: list[object] = [
        1,
        1.0,
        True,
        0.0,
        -0.0,
        None,
        2**70,
        "1",
        {"a": 1, "b": 2},
        {"b": 2, "a": 1},
        [],
        {},
    ]
    memo: dict[object, object] = {}
    items = [
        jsonstream.shared_tree({"kind": "Pod", "n": i, "spec": {"c": [{"x": "y"}]}, "t": tricky}, memo)
        for i in range(3)
    ]
    for i, item in enumerate(items):
        assert json.dumps(item) == json.dumps(
            {"kind": "Pod", "n": i, "spec": {"c": [{"x": "y"}]}, "t": tricky}
        )
        assert [type(v) for v in item["t"]] == [type(v) for v in tricky]
    assert items[0]["spec"] is items[2]["spec"]
    assert items[0] is not items[1]
    first = items[0]["t"]
    assert first[8] is not first[9]
    assert [type(first[i]) for i in (0, 1, 2)] == [int, float, bool]
    assert str(first[4]) == "-0.0"
    assert jsonstream.shared_tree(["a", {"b": "c"}], {}) == ["a", {"b": "c"}]


def test_shared_tree_equal_hashes_share_only_equal_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A part below an item is looked up by its marshal form's hash and shared only when the form is the same:
    were every hash equal, unequal parts (``1`` and ``True``, ``0.0`` and ``-0.0``, keys in another order) stay
    apart and equal ones are still one object."""
    monkeypatch.setattr(jsonstream, "hash", lambda _: 0, raising=False)
    memo: dict[object, object] = {}
    parts: list[object] = [[1], [True], [1.0], [0.0], [-0.0], {"a": 1, "b": 2}, {"b": 2, "a": 1}, [1]]
    items = [jsonstream.shared_tree({"spec": {"x": p}}, memo) for p in parts]
    got = [item["spec"]["x"] for item in items]
    assert json.dumps(got) == json.dumps(parts)
    assert [type(p[0]) for p in got[:5]] == [int, bool, float, float, float]
    assert str(got[4]) == "[-0.0]"
    assert got[7] is got[0]  # equal to the first one stored under the hash
    assert len({id(p) for p in got}) == 7


def test_shared_tree_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream's memo starts afresh past ``TREES_MAX`` entries (bounded memory for millions of items): the
    items read are the same either way, and the memo is emptied when the items end."""
    monkeypatch.setattr(jsonstream, "TREES_MAX", 5)
    text = json.dumps(LIST, indent=1)
    s = JsonListStream(io.StringIO(text), "f.json", chunk=64, trees=True)
    got = [item for _, item in s.items()]
    assert got == LIST["items"]
    assert s.trees == {}
