"""report.jsontext.dumps_indented must write what json.dumps(indent=2, ensure_ascii=False) writes, byte for byte,
for any data, and raise what it raises."""

from __future__ import annotations

import enum
import json
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.report.jsontext import dumps_indented, pieces_indented

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
data = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(), inner, max_size=4)
        | st.dictionaries(keys, inner, max_size=3)
    ),
    max_leaves=30,
)


def _std(obj: Any) -> str:
    return json.dumps(obj, indent=2, sort_keys=False, ensure_ascii=False)


@settings(max_examples=400)
@given(data)
def test_same_text_as_json_dumps(obj: Any) -> None:
    assert dumps_indented(obj) == _std(obj)


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


@pytest.mark.parametrize(
    "obj",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [{}], "d": [[]]},
        {
            "nan": float("nan"),
            "inf": [float("inf"), float("-inf")],
            "neg0": -0.0,
            "big": 1e300,
            "tiny": 5e-324,
        },
        {"é": 'ü\u2028\x00"\\/\n\t', "emoji": "\U0001f600", "lone": "\ud800"},
        {Name("k"): Name("v"), "enum": Colour.RED, "ordered": OrderedDict(b=1, a=2)},
        {1: "int key", False: "bool key", None: "null key", 2.5: "float key"},
        (1, (2, [3])),
        [10**30, -(10**30), True, False, None],
    ],
)
def test_edge_cases(obj: Any) -> None:
    assert dumps_indented(obj) == _std(obj)


def test_what_json_refuses_is_refused_the_same_way() -> None:
    for bad in ({"a": {1, 2}}, {(1, 2): "tuple key"}, [object()]):
        with pytest.raises(TypeError) as mine:
            dumps_indented(bad)
        with pytest.raises(TypeError) as theirs:
            _std(bad)
        assert str(mine.value) == str(theirs.value)
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indented(loop)


@settings(max_examples=300)
@given(st.dictionaries(st.text(), data, max_size=5) | data)
def test_pieces_are_the_same_text(obj: Any) -> None:
    """pieces_indented: the same text as json.dumps, in pieces (each item of a top-level list its own)."""
    assert "".join(pieces_indented(obj)) == _std(obj)


def _wrap(item: Any) -> Any:
    return {"item": item, "pair": [item, item]}


@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from(["findings", "other", "x"]), data, max_size=3) | data)
def test_pieces_convert_each_item_as_written(obj: Any) -> None:
    """``each``: a named top-level list's items written as what the function makes of each, the text that of
    the data converted first (also where the fast path hands the data to json.dumps), other values untouched."""
    each = {"findings": _wrap}
    converted = (
        {
            k: [_wrap(x) for x in v] if k == "findings" and isinstance(v, list | tuple) else v
            for k, v in obj.items()
        }
        if isinstance(obj, dict)
        else obj
    )
    assert "".join(pieces_indented(obj, each)) == _std(converted)


def test_audit_report_is_written_in_pieces(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``audit -o json`` writes its report a finding at a time, never as one string of the whole report (5,500
    findings: about 15 MB of copies of a 3.6 MB text), and the text is json.dumps' of the same data."""
    from kubedra.report import output
    from kubedra.testing.cli import run

    for i in range(3):
        (tmp_path / f"d{i}.yaml").write_text(
            f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}}}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: c\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
        )

    def whole(data: Any) -> str:
        raise AssertionError("the whole report built as one string")

    monkeypatch.setattr(output, "to_json", whole)
    res = run("audit", str(tmp_path), "-o", "json")
    assert res.exit_code in (0, 1), res.stderr
    report = json.loads(res.stdout)
    assert len(report["findings"]) >= 3, report
    assert res.stdout == _std(report) + "\n"
