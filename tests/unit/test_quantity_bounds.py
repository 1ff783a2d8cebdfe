"""Hostile quantities stay bounded: Go keeps ``1e10000000`` as int64Amount{1, 10000000} and a value far below
1n rounds up to 1n, but kubedra's exact nano-unit integers grow with the magnitude. A value finer than 1n is
answered exactly without the big power; a zero is zero at any exponent; values up to 10^10000 with up to 4,000
digits are modelled exactly (``1e1001``, a 1,100-digit integer); past that kubedra cannot check the value: validate
warns (the apiserver may accept it), a reading verb exits 2 in one line, instead of never finishing."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli, main
from kubedra.k8s.quantity import (
    DEC,
    MAX_MODELLED_ORDER,
    NANO,
    Quantity,
    QuantityError,
    QuantityNotModelled,
    parse_quantity,
    quantity_rules,
)
from kubedra.k8s.quantityread import unmodelled_string


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


@pytest.mark.parametrize("text", ["1e10000000", "1e999999999", "-9e999999", "1e2147483647"])
def test_a_value_past_the_modelled_magnitude_cannot_be_checked(text: str) -> None:
    with pytest.raises(QuantityNotModelled, match=r"cannot check .* kubedra models values up to 10\^10000"):
        parse_quantity(text)
    assert issubclass(QuantityNotModelled, QuantityError)  # every reader reports it as this value's error


@pytest.mark.parametrize(
    ("text", "v037", "v038"),
    [
        (
            "1e1000",
            "10e999",
            "10e999",
        ),  # int64Amount{1, 1000}: AsCanonicalBytes makes the exponent a multiple of 3
        ("1e1001", "100e999", "100e999"),
        ("-1e9999", "-1e9999", "-1e9999"),
        ("123.4567e9000", "123456700e8994", "123456700e8994"),  # int64Amount{1234567, 8996}
        ("123.456e9000", "123.456e9000", "123.456e9000"),  # a scale that is a multiple of 3: the text is kept
        ("1" * 20 + "e9000", "1" * 20 + "e9000", "1" * 20 + "e9000"),  # the inf.Dec path
        ("1" * 30 + ".5e8000", "1" * 30 + "50e7998", "1" * 28 + "2e8001"),  # v0.38: 29 digits, rounded up
        ("1" * 1100, "1" * 1100, "11111111111111111111111111112e1071"),  # v0.38 keeps 29 digits, rounded up
        ("1000E", "1", "1e21"),  # no SI suffix past E: v0.37 drops the exponent
        ("0." + "0" * 1100 + "1", "1n", "1n"),
        ("1e-1000", "1e-9", "1e-9"),  # DecimalExponent keeps its format
    ],
)
def test_values_up_to_the_bound_are_modelled(text: str, v037: str, v038: str) -> None:
    with quantity_rules(False):
        assert Quantity.parse(text).canonical() == v037
    with quantity_rules(True):
        assert Quantity.parse(text).canonical() == v038
    assert parse_quantity(f"1e{MAX_MODELLED_ORDER - 1}").nanos == 10 ** (MAX_MODELLED_ORDER + 8)


def test_more_digits_than_modelled_cannot_be_checked() -> None:
    with pytest.raises(QuantityNotModelled, match="4001 digits"):
        parse_quantity("1" * 4001)
    assert parse_quantity("1" * 4000).nanos == int("1" * 4000) * NANO


def test_a_wrapping_v037_scale_cannot_be_checked() -> None:
    """v0.37 adds the exponent to the inf.Dec's int32 scale: ``1e-2147483648`` wraps to a value of about 2^31
    digits, which the apiserver builds to round it; v0.38 refuses MinInt32 (ErrSuffix) and rounds the rest to 1n."""
    for text in ("1e-2147483648", "0.1e-2147483647"):
        with pytest.raises(QuantityNotModelled, match="wraps int32"):
            Quantity.parse(text, False)
    with pytest.raises(QuantityError, match="suffix"):
        Quantity.parse("1e-2147483648", True)
    assert Quantity.parse("0.1e-2147483647", True).nanos == 1


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


def test_validate_warns_it_cannot_check_the_value(tmp_path: Path) -> None:
    f = tmp_path / "pod.yaml"
    f.write_text(POD)
    r = CliRunner().invoke(cli, ["validate", "-o", "json", str(f)])
    assert r.exit_code == 0  # a warning: the apiserver may accept it
    assert "cannot check quantity '1e10000000'" in r.output
    assert "ParseQuantity accepts it, as '10e9999999'" in r.output  # int64Amount{1, 10000000}


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
    assert "cannot check quantity '1e10000000'" in lines[0]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("100.035k", True),
        ("+1.5k", False),
        ("+1.255k", True),
        ("05Gi", True),
        ("8192Mi", False),
        ("1000", False),
        ("1.2e3", False),
        ("0.5k", False),
    ],
)
def test_the_fast_path_keeps_a_canonical_text(text: str, kept: bool) -> None:
    """ParseQuantity caches the input as String() where its fast path finds it canonical (quantity.go "reuse the
    string"), so the apiserver stores ``100.035k`` as written; v0.38 recanonicalizes 19 digits."""
    for since_138 in (False, True):
        q = Quantity.parse(text, since_138)
        assert q.kept is kept
        assert (q.canonical() == text) is kept
    assert Quantity.parse("123456789012345678", True).kept  # 18 digits: kept at both
    assert Quantity.parse("1234567890123456789", True).kept is False  # v0.38 forceRecanonicalize: 19 digits


@pytest.mark.parametrize(
    "text",
    [
        "1e1001",
        "-1e1000",
        "1.5e9000",
        "123.456e9000",
        "1" * 20 + "e9000",
        "1" * 30 + ".5e8000",
        "100.035k",
        "+1.255k",
        "1000E",
        "1e21",
        "1000000E",
        "1.5e-3",
        "1" * 35,
        "1" * 40 + "00000",
        "0.5e1200",
        "7" * 3000,
        "1" * 30 + "00E",
        "1" * 30 + "00m",
        "2" * 50 + ".5",
        "1.5u",
    ],
)
@pytest.mark.parametrize("since_138", [False, True])
def test_the_unmodelled_string_reading_agrees_with_the_model(text: str, since_138: bool) -> None:
    """unmodelled_string reads String() from the text alone; inside the modelled range it gives the model's."""
    with quantity_rules(since_138):
        assert unmodelled_string(text, since_138) == Quantity.parse(text).canonical()


@pytest.mark.parametrize(
    ("text", "v037", "v038"),
    [
        ("1e999999999", "1e999999999", "1e999999999"),  # int64Amount{1, 999999999}: no billion-digit number
        ("1.5e99999999", "1500e99999996", "1500e99999996"),
        ("-1e999999999", "-1e999999999", "-1e999999999"),
        ("1" * 5000, "1" * 5000, "1" * 28 + "2e4971"),  # v0.38 keeps 29 digits, rounded away from zero
        ("1" + "0" * 10010 + "E", "100", "100e10026"),  # no SI suffix past E: v0.37 drops the exponent
        ("1" * 5000 + "Ki", str(2**63 - 1), str(2**63 - 1)),  # BinarySI is capped at 2^63-1
        ("1e-2147483648", None, None),  # v0.37 wraps; v0.38 refuses it before (ErrSuffix)
        ("1" * 4001 + ".1", "1" * 4002 + "00m", "1" * 28 + "2e3972"),
        ("1" * 4001 + ".1e-9", None, "1" * 28 + "2e3963"),  # v0.37 would round 4,002 digits finer than 1n up
    ],
)
def test_an_unmodelled_value_still_has_its_stored_string(
    text: str, v037: str | None, v038: str | None
) -> None:
    with pytest.raises(QuantityNotModelled):
        parse_quantity(text)
    assert unmodelled_string(text, False) == v037
    if v038 is not None:
        assert unmodelled_string(text, True) == v038


SLICE = """apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: d
    capacity:
      memory: {value: "1.5e99999999"}
"""


def test_validate_names_the_string_the_apiserver_stores(tmp_path: Path) -> None:
    f = tmp_path / "slice.yaml"
    f.write_text(SLICE)
    r = CliRunner().invoke(cli, ["validate", "--target-version", "1.37", "-o", "json", str(f)])
    assert r.exit_code == 0, r.output
    assert "ParseQuantity accepts it, as '1500e99999996'" in r.output


def test_a_huge_negative_request_is_refused_from_its_text(tmp_path: Path) -> None:
    """Nothing is built, but the value is non-zero and its sign is the text's: ValidateResourceQuantityValue
    refuses it at every release (each testbed apiserver does, tests/integration/test_quantity_admission.py)."""
    f = tmp_path / "pod.yaml"
    f.write_text(POD.replace('"1e10000000"', '"-1e999999999"'))
    r = CliRunner().invoke(cli, ["validate", "-o", "json", str(f)])
    assert r.exit_code == 1
    assert "'-1e999999999': must be greater than or equal to 0" in r.output
    assert "cannot check" not in r.output
