"""CEL fidelity at the CEL level: optional chaining, type(), quantity representations, string(quantity)
and RE2 find/findAll; every expectation was checked against kubedra-oracle
(k8s.io/dynamic-resource-allocation v0.37.2), see tests/conformance/allocator/diff-*.yaml for the allocator
cases."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from kubedra.cel import CELCompileError, CELRuntimeError, SelectorEnvironment
from kubedra.k8s.quantity import Quantity

D = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"
ENV = SelectorEnvironment("1.37", stored=True)


def _device(capacity: str = "80Gi", model: str = "NVIDIA H100 80GB HBM3") -> SimpleNamespace:
    attrs = {
        "gpu.nvidia.com/model": SimpleNamespace(kind="string", value=model),
        "gpu.nvidia.com/index": SimpleNamespace(kind="int", value=3),
    }
    return SimpleNamespace(
        name="gpu-0",
        attributes=attrs,
        capacity={"memory": SimpleNamespace(value=Quantity.parse(capacity))},
        allow_multiple_allocations=False,
    )


def _matches(expression: str, capacity: str = "80Gi", model: str = "NVIDIA H100 80GB HBM3") -> bool:
    return ENV.compile(expression).matches(_device(capacity, model), "gpu.nvidia.com")


@pytest.mark.parametrize(
    "expression",
    [
        f"{D}.?model.orValue('').contains('H100')",
        f"{D}[?'model'].orValue('').contains('NVIDIA')",
        f"{D}.?model.value().matches('H1.0')",
        f"{D}.?model.orValue('x').matches('HBM3$')",
        f"type({D}.index) == int && type({D}.model) == string",
    ],
)
def test_actual_cost_of_optionals_and_types_is_small(expression: str) -> None:
    # the static estimate is unbounded, like cel-go's; the run-time cost uses the actual sizes
    assert ENV.compile(expression).max_cost > 1_000_000
    assert _matches(expression) is True


def test_absent_optional_value_is_a_runtime_error() -> None:
    with pytest.raises(CELRuntimeError, match=r"optional.none\(\) dereference"):
        _matches(f"{D}.?nope.value().matches('x')")


# (quantity text, AsInt64 succeeds): apimachinery's representation, not the maths.
REPRESENTATIONS = [
    ("2", True),
    ("2000m", False),
    ("1.0", False),
    ("0.0", False),
    ("1.5Gi", False),
    ("0.5Gi", False),
    ("1k", True),
    ("1e3", True),
    ("1e-3", False),
    ("123456789012345678", True),
    ("1234567890123456789", False),
    ("1Ti", True),
    ("1Pi", False),
    ("12345Gi", True),
    ("100000Gi", False),
]


@pytest.mark.parametrize(("text", "integer"), REPRESENTATIONS)
def test_is_integer_follows_the_representation(text: str, integer: bool) -> None:
    assert (Quantity.parse(text).as_int64() is not None) is integer
    assert _matches(f"{C}.memory.isInteger()", capacity=text) is integer
    assert _matches(f"quantity('{text}').isInteger()") is integer
    if not integer:
        with pytest.raises(CELRuntimeError, match="cannot convert value to integer"):
            _matches(f"{C}.memory.asInteger() > 0", capacity=text)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("quantity('1500m').add(quantity('500m')).isInteger()", False),
        ("quantity('1500m').add(quantity('500m')) == quantity('2')", True),
        ("quantity('1500m').add(quantity('500m')) != quantity('2')", False),
        ("quantity('1k').add(1).asInteger() == 1001", True),
        ("quantity('2').sub(quantity('2')).isInteger()", True),
        ("quantity('0.0').add(1).isInteger()", True),
        ("quantity('1.0').add(1).isInteger()", False),
        (f"{C}.memory == quantity('2')", True),
    ],
)
def test_quantity_arithmetic_keeps_the_representation(expression: str, expected: bool) -> None:
    assert _matches(expression, capacity="2000m") is expected


def test_string_of_a_capacity_is_a_compile_error() -> None:
    with pytest.raises(CELCompileError, match=r"found no matching overload for 'string' applied to"):
        ENV.compile(f"string({C}.memory) == '80Gi'")
    with pytest.raises(CELCompileError, match=r"'startsWith' applied to 'kubernetes.Quantity.\(string\)'"):
        ENV.compile(f"{C}['memory'].startsWith('8')")


def test_find_is_linear_time_re2() -> None:
    started = time.perf_counter()
    assert _matches(f"{D}.model.find('^(a+)+$') == ''", model="a" * 40 + "b") is True
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("pattern", "detail"),
    [
        ("(a)\\\\1", "invalid escape sequence: `\\1`"),
        ("a(?=b)", "invalid or unsupported Perl syntax: `(?=`"),
        ("a(?<!b)", "invalid named capture: `(?<!b)`"),
        ("a++", "invalid nested repetition operator: `++`"),
        ("\\\\C", "invalid escape sequence: `\\C`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("x{2,1}", "invalid repeat count: `{2,1}`"),
    ],
)
def test_find_rejects_what_re2_rejects(pattern: str, detail: str) -> None:
    with pytest.raises(CELCompileError) as info:
        ENV.compile(f"{D}.model.find('{pattern}') == ''")
    assert str(info.value) == f"program instantiation failed: error parsing regexp: {detail}"
    with pytest.raises(CELCompileError, match="invalid matches argument"):
        ENV.compile(f"{D}.model.matches('{pattern}')")


def test_find_all_follows_go() -> None:
    assert _matches("'baaa'.findAll('a*') == ['', 'aaa']") is True
    assert _matches("'abacad'.findAll('a.', 2) == ['ab', 'ac']") is True
