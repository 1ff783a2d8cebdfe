"""Label selectors: one implementation (kubedra.model.labelselector) with apimachinery's semantics and errors,
used by node affinity (scheduler, allocator, migrate's sharing scope) and admission policies."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.model.labelselector import (
    NODE_OPERATORS,
    SelectorError,
    label_selector_matches,
    parse_int64,
    requirement,
)
from kubedra.model.nodeaffinity import NodeSelectorError, node_selector_matches
from kubedra.model.objects import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
)
from kubedra.scheduler import filters


@pytest.mark.parametrize(
    ("op", "values", "labels", "want"),
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("In", ["a"], {"k": "c"}, False),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {}, True),  # absent: NotIn holds
        ("NotIn", ["a"], {"k": "a"}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("Exists", [], {"k": ""}, True),
        ("Exists", [], {}, False),
        ("DoesNotExist", [], {}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("Gt", ["5"], {"k": "6"}, True),
        ("Gt", ["5"], {"k": "5"}, False),
        ("Lt", ["5"], {"k": "-1"}, True),
        ("Gt", ["5"], {}, False),  # absent: no match
        ("Gt", ["5"], {"k": "six"}, False),  # a label value that is no integer: no match
        ("Gt", ["5"], {"k": "1_0"}, False),  # ParseInt refuses what Python's int() takes
        ("Gt", ["5"], {"k": "9223372036854775808"}, False),  # beyond int64
    ],
)
def test_requirement_matches(op: str, values: list[str], labels: dict[str, str], want: bool) -> None:
    assert requirement("k", op, values, operators=NODE_OPERATORS).matches(labels) is want


@pytest.mark.parametrize(
    ("key", "op", "values", "why"),
    [
        ("k", "Gt", ["1"], "'Gt' is not a valid label selector operator"),  # metav1: no Gt/Lt
        ("k", "Equals", ["1"], "is not a valid label selector operator"),
        ("k", "In", [], "values must be non-empty"),
        ("k", "NotIn", [], "values must be non-empty"),
        ("k", "Exists", ["x"], "values must be empty"),
        ("k", "DoesNotExist", ["x"], "values must be empty"),
        ("bad key", "Exists", [], "invalid label key"),
        ("Example.com/k", "Exists", [], "the prefix must be a DNS subdomain"),
        ("k", "In", ["not a value"], "invalid label value"),
    ],
)
def test_label_selector_requirement_errors(key: str, op: str, values: list[str], why: str) -> None:
    with pytest.raises(SelectorError, match=why):
        requirement(key, op, values)


@pytest.mark.parametrize(
    ("values", "why"), [([], "exactly one value"), (["1", "2"], "exactly one"), (["x"], "integer")]
)
def test_gt_lt_need_one_integer(values: list[str], why: str) -> None:
    with pytest.raises(SelectorError, match=why):
        requirement("k", "Lt", values, operators=NODE_OPERATORS)


def test_parse_int64_is_go_parseint() -> None:
    assert parse_int64("+7") == 7
    assert parse_int64("-9223372036854775808") == -(2**63)
    assert parse_int64(" 7") is None
    assert parse_int64("1_000") is None
    assert parse_int64("") is None


def test_metav1_label_selector() -> None:
    sel: dict[str, Any] = {
        "matchLabels": {"a": "1"},
        "matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["x"]}],
    }
    assert label_selector_matches(sel, {"a": "1"})
    assert label_selector_matches(sel, {"a": "1", "b": "y"})
    assert not label_selector_matches(sel, {"a": "1", "b": "x"})
    assert not label_selector_matches(sel, {})
    assert label_selector_matches({}, {"z": "1"})
    with pytest.raises(SelectorError) as exc:
        label_selector_matches({"matchExpressions": [{"key": "b", "operator": "Lt", "values": ["1"]}]}, {})
    assert exc.value.path == ("matchExpressions", 0, "operator")
    with pytest.raises(SelectorError) as exc:
        label_selector_matches({"matchLabels": {"a": 1}}, {})  # the apiserver cannot decode a number here
    assert exc.value.path == ("matchLabels", "a")


def _node(**labels: str) -> Node:
    return Node(meta=ObjectMeta(name="n", labels=labels))


def _required(op: str, *values: str) -> NodeSelector:
    return NodeSelector([NodeSelectorTerm([NodeSelectorRequirement("gpu-mem", op, list(values))])])


def test_node_affinity_filter_parses_integers_like_go() -> None:
    """The scheduler's NodeAffinity filter: Python's int() took '1_0' as 10 (a match, and a valid Gt value);
    strconv.ParseInt refuses both, so the node does not match."""
    pod = Pod(meta=ObjectMeta(name="p"))
    assert filters.node_affinity(pod, _node(**{"gpu-mem": "10"}), _required("Gt", "5")) is None
    assert filters.node_affinity(pod, _node(**{"gpu-mem": "1_0"}), _required("Gt", "5")) is not None
    assert filters.node_affinity(pod, _node(**{"gpu-mem": "10"}), _required("Gt", "0_5")) is not None
    with pytest.raises(NodeSelectorError, match="must be an integer"):
        node_selector_matches(_required("Gt", "0_5"), "n", {"gpu-mem": "10"})
