"""Data-driven run of apiserver TestQuantity / TestSemver (tests/conformance/cel/{quantity,semver}_test.yaml)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from cel_expr_python import cel

from kubedra.cel import CELCompileError, build_env
from kubedra.cel.checks import clean_status

CORPUS = Path(__file__).parents[2] / "conformance" / "cel"
QUANTITY = yaml.safe_load((CORPUS / "quantity_test.yaml").read_text())["cases"]
SEMVER = yaml.safe_load((CORPUS / "semver_test.yaml").read_text())["cases"]

# Upstream's test envs hold only the libraries under test; the stored 1.37 base env is a superset and
# declares nothing that changes these expressions.
ENV = build_env({}, "1.37", stored=True)


def _expected_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and "quantity" in value:
        return f'quantity("{value["quantity"]}")'
    if isinstance(value, dict) and "semver" in value:
        return f'semver("{value["semver"]}")'
    return repr(value)


def _run(case: dict[str, Any]) -> None:
    try:
        program = ENV.compile(case["expr"])
    except CELCompileError as e:
        assert case.get("expectedCompileErr"), f"unexpected compile error {e}"  # noqa: PT017  the table case says if an error is expected
        for pattern in case["expectedCompileErr"]:
            assert re.search(pattern, str(e)), (pattern, str(e))  # noqa: PT017  the table case says if an error is expected
        return
    assert not case.get("expectedCompileErr"), "expected a compile error"
    result = program.eval(ENV.runtime.Activation({}))
    if case.get("expectedRuntimeErr"):
        assert result.type() == cel.Type.ERROR, "expected a runtime error"
        assert re.search(case["expectedRuntimeErr"], clean_status(str(result.value())))
        return
    assert result.type() != cel.Type.ERROR, result.value()
    # Compare like upstream (res.Equal(expect)): evaluate `<expr> == <expected>` in CEL.
    check = ENV.compile(f"({case['expr']}) == {_expected_literal(case['expectValue'])}")
    assert check.eval(ENV.runtime.Activation({})).value() is True


def test_corpus_sizes() -> None:
    assert (len(QUANTITY), len(SEMVER)) == (34, 33)


@pytest.mark.parametrize("case", QUANTITY, ids=[f"{i:02d}-{c['name']}" for i, c in enumerate(QUANTITY)])
def test_quantity(case: dict[str, Any]) -> None:
    _run(case)


@pytest.mark.parametrize("case", SEMVER, ids=[f"{i:02d}-{c['name']}" for i, c in enumerate(SEMVER)])
def test_semver(case: dict[str, Any]) -> None:
    _run(case)
