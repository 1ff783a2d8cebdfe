"""Quantity per release: apimachinery v0.37.2 ParseQuantity through 1.37, v0.38.0-beta.0's from 1.38
(``quantity.nineteenDigitInt64`` in data/versions.yaml): 19 digits within int64 take the int64 path, the inf.Dec
path keeps 29 significant digits (70 before a binary suffix), a DecimalSI exponent above E prints as ``e``."""

from __future__ import annotations

import pytest

from kubedra.k8s.quantity import Quantity, QuantityError, parse_quantity, quantity_rules
from kubedra.k8s.quantityread import round_up
from kubedra.k8s.versions import holds


def test_the_fact_is_1_38() -> None:
    assert not holds("quantity.nineteenDigitInt64", "1.37")
    assert holds("quantity.nineteenDigitInt64", "1.38")


@pytest.mark.parametrize(
    ("text", "v037", "v038"),
    [
        ("9223372036854775807", None, 9223372036854775807),
        ("-9223372036854775808", None, -(2**63)),  # math.MinInt64: v0.38 parses unsigned, then negates
        ("1234567890123456789", None, 1234567890123456789),
        ("1234567890123456789e0", None, 1234567890123456789),
        ("9223372036854775808", None, None),  # over int64: inf.Dec in both
        ("-9223372036854775809", None, None),
        ("123456789012345678", 123456789012345678, 123456789012345678),  # 18 digits: int64 in both
        ("1234567890123456789k", None, None),  # int64Amount{…, 3} at v0.38, but AsInt64 overflows
        ("123456789012345678.9", None, None),  # negative scale: never AsInt64
    ],
)
def test_as_int64_of_nineteen_digits(text: str, v037: int | None, v038: int | None) -> None:
    assert Quantity.parse(text, False).as_int64() == v037
    assert Quantity.parse(text, True).as_int64() == v038


def test_nineteen_digit_sum_stays_an_integer_at_1_38_only() -> None:
    one = Quantity.from_int(1, "DecimalExponent")
    assert Quantity.parse("1000000000000000000", False).add(one).as_int64() is None
    assert Quantity.parse("1000000000000000000", True).add(one).as_int64() == 10**18 + 1


@pytest.mark.parametrize(
    ("text", "v037", "v038"),
    [
        # 30 significant digits: v0.38 keeps 29 and rounds the rest away from zero
        (
            "123456789012345678901234567891",
            "123456789012345678901234567891",
            "123456789012345678901234567900",
        ),
        (
            "-123456789012345678901234567891",
            "-123456789012345678901234567891",
            "-123456789012345678901234567900",
        ),
        # int64 at nano precision is 28 digits: kept alike
        ("9223372036854775807.123456789", "9223372036854775807123456789n", "9223372036854775807123456789n"),
        (
            "1234567890123456789012.123456789",
            "1234567890123456789012123456789n",
            "1234567890123456789012123456800n",
        ),
        # trailing zeros are digits too, but dropping zeros does not round
        (
            "100000000000000000000000000000000",
            "100000000000000000000000000000000",
            "100000000000000000000000000000000",
        ),
        # a finer fraction is rounded up to 1n in both
        ("1.0000000001", "1000000001n", "1000000001n"),
    ],
)
def test_twenty_nine_significant_digits(text: str, v037: str, v038: str) -> None:
    assert Quantity.parse(text, False).exact == Quantity.parse(v037, False).exact
    assert Quantity.parse(text, True).exact == Quantity.parse(v038, False).exact


def test_binary_suffix_keeps_seventy_digits() -> None:
    text = "0." + "1" * 75 + "Ki"
    assert Quantity.parse(text, True).nanos == Quantity.parse(text, False).nanos  # nano rounding decides


def test_decimal_values_above_int64_are_kept_in_both() -> None:
    # Neither release caps a decimal quantity at 2^63-1 (only BinarySI, in both).
    for rules in (False, True):
        assert Quantity.parse("18446744073709551616", rules).value() == 2**64
        assert Quantity.parse("16Ei", rules).value() == 2**63 - 1


def test_exponent_above_exa_prints_as_e_at_1_38() -> None:
    q = Quantity.parse("1e21", False)
    q = Quantity(q.nanos, "DecimalSI", q.scale)
    assert q.canonical() == "1"  # v0.37 had no suffix for 10^21 and dropped the exponent
    with quantity_rules(True):
        assert q.canonical() == "1e21"
    assert Quantity.parse("1000E", False).canonical() == "1"


def test_at_rereads_the_source() -> None:
    q = parse_quantity("1234567890123456789")
    assert q.as_int64() is None
    assert q.at(True).as_int64() == 1234567890123456789
    assert q.at(True).at(False).as_int64() is None
    assert parse_quantity(1234567890123456789).at(True).as_int64() == 1234567890123456789
    assert Quantity.from_int(5).at(True) == Quantity.from_int(5)  # computed: nothing to re-read


def test_yaml_integer_parses_like_its_text() -> None:
    # A JSON number reaches UnmarshalJSON as its text, so 19 digits are an inf.Dec through v0.37 too.
    assert parse_quantity(1234567890123456789).as_int64() is None
    assert parse_quantity(123456789012345678).as_int64() == 123456789012345678


def test_rules_default_to_v037() -> None:
    assert Quantity.parse("9223372036854775807").as_int64() is None
    with quantity_rules(True):
        assert Quantity.parse("9223372036854775807").as_int64() == 2**63 - 1
    assert Quantity.parse("9223372036854775807").as_int64() is None


@pytest.mark.parametrize("text", ["Pi", "Ei", "-Ei", ".Pi", "e-10", ".e-10", "+Pi"])
@pytest.mark.parametrize("since_138", [False, True])
def test_no_digits_on_the_dec_path_is_err_numeric(text: str, since_138: bool) -> None:
    # v0.37 inf.Dec.SetString("") / ("-") / (".") read no digits; v0.38 checks defaultedNum: ErrNumeric in both.
    with pytest.raises(QuantityError, match=r"^unable to parse numeric part of quantity$"):
        Quantity.parse(text, since_138)


@pytest.mark.parametrize("text", ["Ki", "Ti", "-", ".", "E", "00Ei", "0.e-10"])
def test_no_digits_on_the_fast_path_or_zeros_is_zero(text: str) -> None:
    assert Quantity.parse(text, False).is_zero()
    assert Quantity.parse(text, True).is_zero()


def test_manifest_values_parse_by_v037_rules_whatever_the_context() -> None:
    # Model objects cache their parse; the release's view is Quantity.at, never the ambient rules.
    with quantity_rules(True):
        assert parse_quantity("9223372036854775807").as_int64() is None


# Add and Sub, each line checked against k8s.io/apimachinery v0.37.2 and v0.38.0-beta.0 (resource.ParseQuantity,
# Quantity.Add/Sub, AsDec().String()): v0.38 rounds an operand more than 29 orders of magnitude finer than the
# other (the base-10 exponents of their representations) away from zero to 10**(coarser - 29); v0.37 is exact.
@pytest.mark.parametrize(
    ("a", "op", "b", "v037", "v038"),
    [
        (
            "1e40",
            "add",
            "1n",
            "10000000000000000000000000000000000000000.000000001",
            "10000000000000000000000000000100000000000",
        ),
        (
            "1e40",
            "sub",
            "1n",
            "9999999999999999999999999999999999999999.999999999",
            "9999999999999999999999999999900000000000",
        ),
        (
            "1n",
            "sub",
            "1e40",
            "-9999999999999999999999999999999999999999.999999999",
            "-9999999999999999999999999999900000000000",
        ),
        (
            "1e39",
            "add",
            "-1",
            "999999999999999999999999999999999999999",
            "999999999999999999999999999990000000000",
        ),
        ("1e21", "add", "3n", "1000000000000000000000.000000003", "1000000000000000000000.00000001"),
        ("1e20", "add", "1n", "100000000000000000000.000000001", "100000000000000000000.000000001"),  # gap 29
        ("1.5e30", "add", "1m", "1500000000000000000000000000000.001", "1500000000000000000000000000001"),
        # parsing already rounded the 40 digits to 29 (exponent 11): 1n is 20 orders finer, added exactly
        (
            "1000000000000000000000000000000000000019",
            "add",
            "1n",
            "1000000000000000000000000000000000000019.000000001",
            "1000000000000000000000000000100000000000.000000001",
        ),
        (
            "1e40",
            "add",
            "0",
            "10000000000000000000000000000000000000000",
            "10000000000000000000000000000000000000000",
        ),
        (
            "0",
            "sub",
            "1e40",
            "-10000000000000000000000000000000000000000",
            "-10000000000000000000000000000000000000000",
        ),
    ],
)
def test_add_and_sub_bound_the_scale_gap_at_1_38(a: str, op: str, b: str, v037: str, v038: str) -> None:
    from fractions import Fraction

    for since_138, want in ((False, v037), (True, v038)):
        with quantity_rules(since_138):
            x, y = Quantity.parse(a), Quantity.parse(b)
            got = x.add(y) if op == "add" else x.sub(y)
            assert got.exact == Fraction(want), (since_138, got)


def test_sums_chain_on_the_exponent_they_leave() -> None:
    # (1n + 1e39) - 1e39: v0.38's sum has exponent 10 (1n rounded to 1e10), so 1e10 is left, where v0.37 gives 1n
    # back; the allocator's rollback of a shared device's capacity (ConsumedCapacity.Sub) does exactly this.
    for since_138, left in ((False, Quantity.parse("1n")), (True, Quantity.parse("1e10"))):
        with quantity_rules(since_138):
            big = Quantity.parse("1e39")
            assert Quantity.parse("1n").add(big).sub(big) == left


def test_parsed_values_are_re_read_by_the_release_that_adds_them() -> None:
    # 30 digits: a manifest value parses by v0.37's rules, and 1.38's Add reads it as v0.38 parses it
    thirty = parse_quantity("100000000000000000000000000011")
    with quantity_rules(True):
        assert thirty.add(Quantity.parse("0")).exact == 100000000000000000000000000020
    assert thirty.add(Quantity.parse("0")).exact == 100000000000000000000000000011


def test_an_exponent_of_min_int32_is_a_suffix_error_at_1_38() -> None:
    # v0.38 canInfScale: math.MinInt32 has no inf.Scale (v0.37 tries to compute it)
    with pytest.raises(QuantityError, match=r"^unable to parse quantity's suffix$"):
        Quantity.parse("1e-2147483648", True)


def test_round_up_to_milli_as_api_defaulting_does() -> None:
    # Quantity.RoundUp(Milli) (SetDefaults_ResourceList): away from zero where the representation is finer
    half = round_up(Quantity.parse("0.5m"), -3)
    assert (half.nanos, half.amount()) == (10**6, (1, -3))
    fine = round_up(Quantity.parse("1.0001"), -3)
    assert (str(fine), fine.amount()) == ("1001m", (1001, -3))
    assert str(round_up(Quantity.parse("-1.0001"), -3)) == "-1001m"
    two = Quantity.parse("2")
    assert round_up(two, -3) is two  # scale 0: unchanged
    big = round_up(
        Quantity.parse("1000000000000000000.9999"), -3
    )  # an inf.Dec (23 digits): exponent -9 -> -3
    assert (big.amount(), big.exponent(), big.nanos) == (None, -3, (10**18 + 1) * 10**9)
