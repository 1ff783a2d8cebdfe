"""Quantity parsing against apimachinery TestQuantityParse data (tests/conformance/quantity/parse.yaml)."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.k8s.quantity import Quantity, QuantityError
from kubedra.k8s.quantityread import approximate_float

DATA = yaml.safe_load((Path(__file__).parents[1] / "conformance" / "quantity" / "parse.yaml").read_text())
FLOATS = yaml.safe_load(
    (Path(__file__).parents[1] / "conformance" / "quantity" / "approximate-float.yaml").read_text()
)
SCALED = yaml.safe_load(
    (Path(__file__).parents[1] / "conformance" / "quantity" / "scaled-value.yaml").read_text()
)


@pytest.mark.parametrize("case", DATA["parse"], ids=[c["input"] for c in DATA["parse"]])
def test_parse_value_and_format(case: dict[str, Any]) -> None:
    q = Quantity.parse(case["input"])
    assert q.exact == Fraction(case["value"])
    assert q.format == case["format"] or (q.nanos == 0 and case["format"] in ("DecimalSI", "BinarySI"))


@pytest.mark.parametrize("text", DATA["invalid"])
def test_invalid(text: str) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(text)


def test_corpus_is_not_empty() -> None:
    assert len(DATA["parse"]) > 50
    assert len(DATA["invalid"]) > 5


@pytest.mark.parametrize("case", SCALED["cases"], ids=[c["quantity"] for c in SCALED["cases"]])
def test_value_and_milli_value_per_release(case: dict[str, Any]) -> None:
    # v0.36/v0.37 wrap past int64, v0.38 saturates; each reads the value as its own ParseQuantity parsed it
    for since_138, want in ((False, case["v037"]), (True, case["v038"])):
        parsed = Quantity.parse(case["quantity"], since_138)
        assert [parsed.scaled_value(0, since_138), parsed.scaled_value(-3, since_138)] == want, since_138


def test_scaled_value_table_reaches_both_behaviours() -> None:
    wrapped = [c for c in SCALED["cases"] if c["v037"] != c["v038"]]
    assert len(SCALED["cases"]) > 150
    assert len(wrapped) > 40


@pytest.mark.parametrize("case", FLOATS["cases"], ids=[c["quantity"] for c in FLOATS["cases"]])
def test_approximate_float_per_release(case: dict[str, Any]) -> None:
    # the mantissa times Go's math.Pow10 (two roundings); v0.37 multiplies a zero mantissa by Inf (NaN)
    for since_138, want in ((False, case["v037"]), (True, case["v038"])):
        got = approximate_float(Quantity.parse(case["quantity"], since_138), since_138)
        assert ("nan" if math.isnan(got) else got) == ("nan" if want == "nan" else float(want)), since_138


def _nearest(text: str) -> float:
    try:
        return float(Quantity.parse(text).exact)
    except OverflowError:
        return math.inf


def test_approximate_float_table_is_not_the_nearest_float() -> None:
    # the nearest float64 to the exact value (kubedra's reading before) misses about a quarter of the table
    missed = [c for c in FLOATS["cases"] if c["v037"] == "nan" or float(c["v037"]) != _nearest(c["quantity"])]
    assert len(FLOATS["cases"]) > 150
    assert len(missed) > 20
