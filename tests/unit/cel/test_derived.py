"""Derived-attribute expressions: allowed result types and the conversion to a device attribute
(k8s.io/dynamic-resource-allocation v0.37.2 cel/compile.go validateOutputType and valToDeviceAttribute)."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.cel import CELCompileError, CELRuntimeError, SelectorEnvironment
from kubedra.cel.derived import compile_derived
from kubedra.model.objects import Device, DeviceAttribute

ENV = SelectorEnvironment("1.37", stored=True)
DEVICE = Device(
    name="d0",
    attributes={
        "numa": DeviceAttribute("string", "numa-1"),
        "fw": DeviceAttribute("version", "1.2.3"),
        "lanes": DeviceAttribute("ints", [1, 2]),
    },
)


@pytest.mark.parametrize(
    ("expression", "kind", "value"),
    [
        ('device.attributes["drv"].numa', "string", "numa-1"),
        ("7", "int", 7),
        ("true", "bool", True),
        ('device.attributes["drv"].fw', "version", "1.2.3"),
        ('semver("1.0.0-rc.1")', "version", "1.0.0-rc.1"),
        ('device.attributes["drv"].lanes', "ints", [1, 2]),
        ('[dyn("a"), device.attributes["drv"].numa]', "strings", ["a", "numa-1"]),
        ('[semver("2.0.0")]', "versions", ["2.0.0"]),
        ("[]", "strings", []),
    ],
)
def test_result_becomes_an_attribute(expression: str, kind: str, value: Any) -> None:
    assert compile_derived(ENV, expression).evaluate(DEVICE, "drv") == DeviceAttribute(kind, value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expression", "found"), [("1.5", "double"), ("1u", "uint"), ('{"a": 1}', "map(string, int)")]
)
def test_other_result_types_do_not_compile(expression: str, found: str) -> None:
    with pytest.raises(CELCompileError) as info:
        compile_derived(ENV, expression)
    assert info.value.detail == (
        "must evaluate to a primitive scalar (string, integer, boolean, semver) or a list of these scalars, "
        f"not {found}"
    )


@pytest.mark.parametrize(
    ("expression", "detail"),
    [
        ('device.attributes["drv"].missing', "no such key: missing"),
        (
            '[device.attributes["drv"].numa, dyn(1)]',
            "expected list element at index 1 to be string, got int64",
        ),
        ("[dyn(1.5)]", "unsupported list element type: float64"),
        ("dyn(1.5)", "unsupported CEL return type: float64"),
    ],
)
def test_runtime_failures_as_upstream_words_them(expression: str, detail: str) -> None:
    with pytest.raises(CELRuntimeError) as info:
        compile_derived(ENV, expression).evaluate(DEVICE, "drv")
    assert info.value.detail == detail
