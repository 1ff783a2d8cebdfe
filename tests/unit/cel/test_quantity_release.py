"""CEL's quantity library at 1.37 and 1.38: ``quantity()`` and device capacities are parsed by the release's
apimachinery (v0.38.0-beta.0 takes 19-digit values within int64 onto the int64 path, so ``isInteger()`` and
``asInteger()`` answer from it; ``quantity.nineteenDigitInt64`` in data/versions.yaml)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from cel_expr_python import cel

from kubedra.cel.env import build_env
from kubedra.cel.selector import CELRuntimeError, SelectorEnvironment
from kubedra.k8s.quantity import parse_quantity

DEVICE = SimpleNamespace(
    name="dev-0",
    attributes={},
    capacity={"units": SimpleNamespace(value=parse_quantity("1234567890123456789"))},
)


def _matches(version: str, expression: str) -> bool:
    return SelectorEnvironment(version, stored=True).compile(expression).matches(DEVICE, "driver-a")


@pytest.mark.parametrize(
    ("expression", "at_137", "at_138"),
    [
        ('quantity("9223372036854775807").isInteger()', False, True),
        ('quantity("-9223372036854775808").isInteger()', False, True),
        ('quantity("9223372036854775808").isInteger()', False, False),
        ('quantity("1000000000000000000").add(1).isInteger()', False, True),
        ('quantity("1000000000000000000").sub(quantity("1")).isInteger()', False, True),
        ('device.capacity["driver-a"].units.isInteger()', False, True),
        (
            'quantity("123456789012345678901234567891") == quantity("123456789012345678901234567900")',
            False,
            True,
        ),
    ],
)
def test_quantity_per_release(expression: str, at_137: bool, at_138: bool) -> None:
    assert _matches("1.37", expression) is at_137
    assert _matches("1.38", expression) is at_138


def test_as_integer_of_nineteen_digits() -> None:
    expression = 'device.capacity["driver-a"].units.asInteger() > 2'
    with pytest.raises(CELRuntimeError, match="cannot convert value to integer"):
        _matches("1.37", expression)
    assert _matches("1.38", expression)
    assert _matches("1.38", 'quantity("9223372036854775807").asInteger() == 9223372036854775807')


@pytest.mark.parametrize(("version", "expected"), [("1.37", False), ("1.38", True)])
def test_build_env_programs_parse_quantities_at_their_release(version: str, expected: bool) -> None:
    # The environment of ValidatingAdmissionPolicies and CRD validation rules (build_env) at a release.
    env = build_env({"self": cel.Type.DYN}, version)
    program = env.compile('quantity("1234567890123456789").isInteger()')
    assert program.eval(env.runtime.Activation({"self": 1})).value() is expected
