"""Quantity parsing against apimachinery TestQuantityParse data (tests/conformance/quantity/parse.yaml)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.k8s.quantity import Quantity, QuantityError

DATA = yaml.safe_load((Path(__file__).parents[1] / "conformance" / "quantity" / "parse.yaml").read_text())


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
