"""Semver parsing/ordering, cases from blang/semver v4 and apiserver's semver library (normalize)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubedra.model.semver import Semver, SemverError, parse_semver

VALID = {
    "1.2.3": (1, 2, 3, "", ()),
    "0.0.1": (0, 0, 1, "", ()),
    "0.0.1-alpha.preview+123.456": (0, 0, 1, "alpha.preview", ("123", "456")),
    "1.2.3-alpha.1+123.456": (1, 2, 3, "alpha.1", ("123", "456")),
    "1.2.3+123.456": (1, 2, 3, "", ("123", "456")),
    "1.2.3-alpha.b-eta+123.b-uild": (1, 2, 3, "alpha.b-eta", ("123", "b-uild")),
    "18446744073709551615.0.0": (18446744073709551615, 0, 0, "", ()),
}

INVALID = {
    "": "Version string empty",
    ".": "No Major.Minor.Patch elements found",
    "1.": "No Major.Minor.Patch elements found",
    ".1": "No Major.Minor.Patch elements found",
    "a.b.c": 'Invalid character(s) found in major number "a"',
    "1.a.b": 'Invalid character(s) found in minor number "a"',
    "1.1.a": 'Invalid character(s) found in patch number "a"',
    "..": 'strconv.ParseUint: parsing "": invalid syntax',
    "1..1": 'strconv.ParseUint: parsing "": invalid syntax',
    "1.1.+123": 'strconv.ParseUint: parsing "": invalid syntax',
    "1.1.-beta": 'strconv.ParseUint: parsing "": invalid syntax',
    "-1.1.1": 'Invalid character(s) found in major number "-1"',
    "20000000000000000000.1.1": 'strconv.ParseUint: parsing "20000000000000000000": value out of range',
    "1.1.1-20000000000000000000": "value out of range",
    "01.1.1": 'Major number must not contain leading zeroes "01"',
    "1.01.1": 'Minor number must not contain leading zeroes "01"',
    "1.1.01": 'Patch number must not contain leading zeroes "01"',
    "1.1.1-01": 'Numeric PreRelease version must not contain leading zeroes "01"',
    "1.1.1-beta.001": "Numeric PreRelease version must not contain leading zeroes",
    "0.0.0-!": 'Invalid character(s) found in prerelease "!"',
    "0.0.0+!": 'Invalid character(s) found in build meta data "!"',
    "0.0.0-.alpha": "Prerelease is empty",
    "0.0.0-alpha+": "Build meta data is empty",
    "0.0.0-alpha+test.": "Build meta data is empty",
    "v1.0.0": 'Invalid character(s) found in major number "v1"',
    " 1.0.0": "Invalid character(s) found in major number",
    "1.0.0 ": "Invalid character(s) found in patch number",
    "535.129.03": 'Patch number must not contain leading zeroes "03"',
    "1": "No Major.Minor.Patch elements found",
}


@pytest.mark.parametrize("text", sorted(VALID))
def test_strict_parse_valid(text: str) -> None:
    v = Semver.parse(text)
    major, minor, patch, pre, build = VALID[text]
    assert (v.major, v.minor, v.patch, v.prerelease, v.build) == (major, minor, patch, pre, build)
    assert str(v) == text


@pytest.mark.parametrize("text", sorted(INVALID))
def test_strict_parse_errors_match_upstream(text: str) -> None:
    with pytest.raises(SemverError) as info:
        Semver.parse(text)
    assert INVALID[text] in str(info.value)
    assert not Semver.is_valid(text)


NORMALIZED = {
    "v1.2.3": "1.2.3",
    "1.2.0-alpha": "1.2.0-alpha",
    "1.2.00": "1.2.0",
    "01.02.03": "1.2.3",
    "00.0.03": "0.0.3",
    "000.0.03": "0.0.3",
    "1.2": "1.2.0",
    "1": "1.0.0",
    "v01.01": "1.1.0",
    "535.129.03": "535.129.3",
    "v1.0.0-rc.1+b": "1.0.0-rc.1+b",
}


@pytest.mark.parametrize("text", sorted(NORMALIZED))
def test_normalize(text: str) -> None:
    assert str(Semver.parse(text, normalize=True)) == NORMALIZED[text]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'strconv.ParseUint: parsing "": invalid syntax'),  # "" pads to ".0.0"
        (" 1.0.0", "Invalid character(s) found in major number"),  # no TrimSpace, unlike ParseTolerant
        ("1.0.0 ", "Invalid character(s) found in patch number"),
        ("1. 0.0", "Invalid character(s) found in minor number"),
        ("1.2-beta", "short version cannot contain PreRelease/Build meta data"),
        ("1+b", "short version cannot contain PreRelease/Build meta data"),
        ("vv1.0.0", "Invalid character(s) found in major number"),
    ],
)
def test_normalize_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as info:
        Semver.parse(text, normalize=True)
    assert message in str(info.value)


ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
    "2.1.0",
    "2.1.1",
]


def test_precedence_follows_semver_spec() -> None:
    parsed = [Semver.parse(s) for s in ORDER]
    for i, a in enumerate(parsed):
        for j, b in enumerate(parsed):
            assert a.compare(b) == (i > j) - (i < j), (ORDER[i], ORDER[j])
    assert sorted(reversed(parsed)) == parsed


def test_build_metadata_has_no_precedence() -> None:
    assert Semver.parse("1.0.0+1.2.3") == Semver.parse("1.0.0")
    assert Semver.parse("1.0.0+a").compare(Semver.parse("1.0.0+b")) == 0
    assert hash(Semver.parse("1.0.0+a")) == hash(Semver.parse("1.0.0"))


def test_alphanumeric_identifiers_compare_bytewise() -> None:
    assert Semver.parse("1.0.0-B") < Semver.parse("1.0.0-a")  # 'B' (0x42) < 'a' (0x61)
    assert Semver.parse("1.0.0-1") < Semver.parse("1.0.0-a")  # numeric below alphanumeric


def test_module_alias() -> None:
    assert parse_semver("v2", normalize=True) == Semver(2, 0, 0)


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_roundtrip_any_uint64_triple(a: int, b: int, c: int) -> None:
    v = Semver.parse(f"{a}.{b}.{c}")
    assert (v.major, v.minor, v.patch) == (a, b, c)
    assert Semver.parse(str(v)) == v


@given(st.from_regex(r"\A(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\Z"))
def test_normalize_is_identity_on_strict_versions(text: str) -> None:
    assert Semver.parse(text, normalize=True) == Semver.parse(text)
