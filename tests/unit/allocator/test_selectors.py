"""Selector caching: results are shared only between devices that look the same to the expression."""

from __future__ import annotations

import pytest

from allocator.helpers import dev
from kubedra.allocator.selectors import SelectorError, SelectorMatcher, mentioned_names

EXPR = 'device.attributes["gpu.nvidia.com"].type == "mig"'


def test_devices_differing_only_in_unmentioned_attributes_share_one_evaluation():
    m = SelectorMatcher()
    a = dev("a", {"type": "mig", "uuid": "GPU-1"})
    b = dev("b", {"type": "mig", "uuid": "GPU-2"})
    c = dev("c", {"type": "gpu", "uuid": "GPU-3"})
    assert m.matches(0, EXPR, a, "gpu.nvidia.com") is True
    assert m.matches(0, EXPR, b, "gpu.nvidia.com") is True
    assert m.evaluations == 1
    assert m.matches(0, EXPR, c, "gpu.nvidia.com") is False
    assert m.evaluations == 2


def test_whole_map_expressions_are_never_shared():
    assert mentioned_names('device.attributes["gpu.nvidia.com"].all(k, k != "uuid")') is None
    m = SelectorMatcher()
    expr = 'size(device.attributes["gpu.nvidia.com"]) == 2'
    a = dev("a", {"type": "mig", "uuid": "GPU-1"})
    b = dev("b", {"type": "mig"})
    assert m.matches(0, expr, a, "gpu.nvidia.com") is True
    assert m.matches(0, expr, b, "gpu.nvidia.com") is False


def test_runtime_errors_are_raised_every_time_and_name_the_expression():
    m = SelectorMatcher()
    d = dev("a", {"type": "mig"})
    expr = 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'
    for _ in range(2):
        with pytest.raises(SelectorError) as e:
            m.matches(3, expr, d, "gpu.nvidia.com")
        assert e.value.runtime
        assert e.value.index == 3
        assert "no such key" in e.value.message


def test_domain_presence_is_part_of_the_key():
    m = SelectorMatcher()
    expr = '"example.com" in device.attributes'
    with_domain = dev("a", {"example.com/x": 1})
    without = dev("b", {"y": 1})
    assert m.matches(0, expr, with_domain, "gpu.nvidia.com") is True
    assert m.matches(0, expr, without, "gpu.nvidia.com") is False


def test_runtime_errors_are_worded_like_cel_go() -> None:
    # cel-go common/types/err.go errDivideByZero: "division by zero" (the upstream allocator's error text)
    m = SelectorMatcher(target_version="1.37")
    for expression, message in (("1 / 0 == 1", "division by zero"), ("1 % 0 == 1", "modulus by zero")):
        with pytest.raises(SelectorError) as e:
            m.all_match([expression], dev("d"), "driver-a")
        assert e.value.message == message
