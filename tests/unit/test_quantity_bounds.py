"""Hostile quantities stay bounded: Go keeps ``1e10000000`` as int64Amount{1, 10000000} and a value far below
1n rounds up to 1n, but kubedra's exact nano-unit integers grow with the magnitude. A value finer than 1n is
answered exactly without the big power; a zero is zero at any exponent; a value past 10^1000 or with more than
1,000 digits is refused as not modelled (one error, exit 2 from a reading verb) instead of never finishing."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli, main
from kubedra.k8s.quantity import (
    DEC,
    MAX_MODELLED_DIGITS,
    NANO,
    Quantity,
    QuantityError,
    QuantityNotModelled,
    parse_quantity,
)


@pytest.mark.parametrize("since_138", [False, True])
@pytest.mark.parametrize(
    "text", ["1e-65", "-1e-65", "9.99e-70", "123.456e-200", "0.0001e-100", "-7e-300", "1e-2147483647"]
)
def test_far_below_a_nano_rounds_up_to_one_nano(text: str, since_138: bool) -> None:
    q = Quantity.parse(text, since_138)
    assert q.nanos == (-1 if text.startswith("-") else 1)
    assert q.scale is DEC
    if "2147483647" not in text:  # the reference: the exact value in nano-units, rounded away from zero
        mantissa, _, exp = text.lstrip("-").partition("e")
        exact = Fraction(mantissa) * Fraction(10) ** int(exp) * NANO
        assert abs(q.nanos) == math.ceil(exact)


@pytest.mark.parametrize("text", ["0e2147483647", "0e-2147483647", "-0.000e2000000000", "0.0Ki"])
def test_zero_is_zero_at_any_exponent(text: str) -> None:
    assert parse_quantity(text).nanos == 0


def test_a_value_past_the_modelled_magnitude_is_refused() -> None:
    with pytest.raises(
        QuantityNotModelled, match=r"about 10\^10000001: kubedra models values up to 10\^1000"
    ):
        parse_quantity("1e10000000")
    assert issubclass(QuantityNotModelled, QuantityError)  # every reader reports it as this value's error
    assert parse_quantity(f"1e{MAX_MODELLED_DIGITS - 1}").canonical() == f"1e{MAX_MODELLED_DIGITS - 1}"


def test_more_digits_than_modelled_are_refused() -> None:
    with pytest.raises(QuantityNotModelled, match="has 1001 digits"):
        parse_quantity("1" * 1001)
    assert parse_quantity("1" * 1000).nanos == int("1" * 1000) * NANO


POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: busybox
    resources:
      requests: {cpu: "1e10000000"}
"""


def test_validate_says_the_value_is_not_modelled(tmp_path: Path) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(POD)
    r = CliRunner().invoke(cli, ["validate", str(f)])
    assert r.exit_code == 1
    assert "kubedra models values up to 10^1000" in r.output


def test_simulate_refuses_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(POD)
    with pytest.raises(SystemExit) as e:
        main(["simulate", "-f", str(f), "--nodes", "1x8xH100-80GB"])
    captured = capsys.readouterr()
    assert e.value.code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "kubedra models values up to 10^1000" in lines[0]
