"""cel.attributeValuesLazy (data/versions.yaml): from 1.38 an attribute k8s.io/dynamic-resource-allocation cannot
represent (an empty list, a version semver rejects) fails only a selector that reads it; answers checked against
the 1.37 and 1.38 oracles in tests/differential/test_release_changes.py."""

from __future__ import annotations

import pytest

from kubedra.cel import CELRuntimeError, CELUndecidedError, SelectorEnvironment

from .stubs import Attr, Dev

DRIVER = "gpu.example.com"
BAD = "99999999999999999999.0.0"
ATTRS = f'device.attributes["{DRIVER}"]'


def _eval(release: str, attrs: dict[str, Attr], expression: str) -> bool:
    return (
        SelectorEnvironment(release, stored=True).compile(expression).matches(Dev(attributes=attrs), DRIVER)
    )


def test_empty_list_read_fails_at_138_only() -> None:
    attrs = {"x": Attr("strings", []), "y": Attr("int", 1)}
    assert _eval("1.37", attrs, f"{ATTRS}.x.size() == 0")
    with pytest.raises(CELRuntimeError) as e:
        _eval("1.38", attrs, f"{ATTRS}.x.size() == 0")
    assert e.value.detail == "attribute x: value is invalid or its type is not supported by this version"
    assert _eval("1.38", attrs, f"{ATTRS}.y == 1")


@pytest.mark.parametrize(("release", "present"), [("1.37", True), ("1.38", False)])
def test_empty_list_presence(release: str, present: bool) -> None:
    assert _eval(release, {"x": Attr("strings", [])}, f'"x" in {ATTRS}') is present


def test_bad_version_fails_the_device_at_137_only() -> None:
    attrs = {"v": Attr("versions", ["1.0.0", BAD]), "y": Attr("int", 1)}
    with pytest.raises(CELRuntimeError, match="parse semantic version"):
        _eval("1.37", attrs, f"{ATTRS}.y == 1")
    assert _eval("1.38", attrs, f"{ATTRS}.y == 1")
    with pytest.raises(CELRuntimeError, match="attribute v: value is invalid"):
        _eval("1.38", attrs, f"{ATTRS}.v.size() == 2")


@pytest.mark.parametrize(
    "expression",
    [f"has({ATTRS}.x)", f'{ATTRS}[?"x"].hasValue()', f"{ATTRS}.size() == 2", f'{ATTRS}.exists(k, k == "x")'],
)
def test_unmodelled_observations_cannot_decide(expression: str) -> None:
    """Upstream keeps the key (has() errors, size() and iteration count it): kubedra says it cannot decide."""
    attrs = {"x": Attr("strings", []), "y": Attr("int", 1)}
    with pytest.raises(
        CELUndecidedError, match=f"device device-0 at Kubernetes 1.38: its attribute {DRIVER}/x"
    ):
        _eval("1.38", attrs, expression)
    assert _eval("1.37", attrs, expression)


def test_read_of_the_same_name_elsewhere_cannot_decide() -> None:
    """``no such key: x`` names no domain: a read of x in a domain where it is not invalid (upstream: no such
    key) or through a variable cannot be told from the invalid one's."""
    attrs = {"x": Attr("strings", [])}
    for expression in ['device.attributes["other.example.com"].x == 1', f"cel.bind(m, {ATTRS}, m.x == 1)"]:
        with pytest.raises(CELUndecidedError, match=f"its attribute {DRIVER}/x is an empty list"):
            _eval("1.38", attrs, expression)
    with pytest.raises(CELRuntimeError, match="attribute x: value is invalid"):
        _eval("1.38", attrs, f'{ATTRS}["x"] == 1 || {ATTRS}.x == 2')
