"""Data-driven run of upstream DRA TestCEL (tests/conformance/cel/compile_test.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.cel import CELCompileError, CELRuntimeError, SelectorEnvironment

from .stubs import device_from_case

CORPUS = Path(__file__).parents[2] / "conformance" / "cel" / "compile_test.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text())["cases"]

_ENVS: dict[tuple[bool, bool, bool], SelectorEnvironment] = {}


def _env(consumable: bool, list_type: bool, stored: bool) -> SelectorEnvironment:
    key = (consumable, list_type, stored)
    if key not in _ENVS:
        _ENVS[key] = SelectorEnvironment(
            "1.37", consumable_capacity=consumable, list_type_attributes=list_type, stored=stored
        )
    return _ENVS[key]


def _params() -> list[Any]:
    out = []
    for case in CASES:
        variants = [case["enableListTypeAttributes"]] if "enableListTypeAttributes" in case else [False, True]
        for lt in variants:
            out.append(pytest.param(case, lt, id=f"{case['name']}/list-type-attributes={str(lt).lower()}"))
    return out


def test_corpus_has_every_upstream_case() -> None:
    assert len(CASES) == 71
    assert len({c["name"] for c in CASES}) == 71


@pytest.mark.parametrize(("case", "list_type"), _params())
def test_cel(case: dict[str, Any], list_type: bool) -> None:
    stored = case.get("envType", "StoredExpressions") == "StoredExpressions"
    env = _env(bool(case.get("enableConsumableCapacity", False)), list_type, stored)
    try:
        selector = env.compile(case["expression"])
    except CELCompileError as e:
        assert case.get("expectCompileError"), f"unexpected compile error: {e}"  # noqa: PT017  the table case says if an error is expected
        assert case["expectCompileError"] in str(e)  # noqa: PT017  the table case says if an error is expected
        return
    assert not case.get("expectCompileError"), "expected a compile error"
    if "expectCost" in case:
        assert selector.max_cost == case["expectCost"]
    device = device_from_case(case)
    try:
        matched = selector.matches(device, case.get("driver", ""))
    except CELRuntimeError as e:
        assert case.get("expectMatchError"), f"unexpected runtime error: {e}"  # noqa: PT017  the table case says if an error is expected
        assert case["expectMatchError"] in str(e)  # noqa: PT017  the table case says if an error is expected
        return
    assert not case.get("expectMatchError"), "expected a runtime error"
    assert matched is case["expectMatch"]
