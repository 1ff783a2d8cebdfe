"""Quantity parsing against apimachinery TestQuantityParse data (tests/conformance/quantity/parse.yaml)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.k8s.quantity import Quantity, QuantityError

DATA = yaml.safe_load((Path(__file__).parents[1] / "conformance" / "quantity" / "parse.yaml").read_text())
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
