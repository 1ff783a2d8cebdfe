"""Plain scalars and keys read exactly as kubectl (go-yaml v2 via sigs.k8s.io/yaml) reads them."""

from __future__ import annotations

import math

import pytest

from kubedra.sources import files, yamlscalars


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # go.yaml.in/yaml/v2 v2.4.4 resolve.go (Kubernetes 1.37's sigs.k8s.io/yaml v1.6.0): resolveMapList
        *[(w, True) for w in ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"]],
        *[(w, False) for w in ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"]],
        *[(w, w) for w in ["yES", "oN", "nO", "tRUE", "Nope", "yess"]],
        *[(w, None) for w in ["~", "null", "Null", "NULL", ""]],
        ("0o17", 15),
        ("0x1F", 31),
        ("017", 15),
        ("1_000", 1000),
        ("08", 8),  # not octal: go-yaml falls back to a float, the API machinery reads 8 back
        ("1e3", 1000),  # v2.4.4: the exponent sign is optional; whole floats come back as ints
        ("1e18", 10**18),
        ("1.", 1),
        ("1.e3", 1000),
        ("1e", "1e"),
        ("1.5e-3", 0.0015),
        ("1e+3", 1000),
        ("1.5", 1.5),
        (".5", 0.5),
        ("1:20", "1:20"),  # no base 60 in go-yaml
        ("-0b101", -5),
        ("18446744073709551615", 18446744073709551615),
        ("123456789012345678901234", 1.2345678901234568e23),
        ("2024-01-01", "2024-01-01"),
        ("+", "+"),
        ("1.0", 1),
    ],
)
def test_plain_scalars(text: str, value: object) -> None:
    got = files.parse_text(f"kind: X\nv: {text}\n", "s.yaml").documents[0].obj["v"]
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize("quoted", ['"y"', "'no'", "!!str on"])
def test_quoted_stay_strings(quoted: str) -> None:
    doc = files.parse_text(f"kind: X\nv: {quoted}\n", "s.yaml").documents[0]
    assert isinstance(doc.obj["v"], str)


def test_keys_become_json_strings() -> None:
    doc = files.parse_text("kind: X\non: 1\nn: 2\n3: c\n1.5: d\n", "k.yaml").documents[0]
    assert doc.obj == {"kind": "X", "true": 1, "false": 2, "3": "c", "1.5": "d"}


def test_null_key_and_inf_are_refused_like_kubectl() -> None:
    [err] = files.parse_text("kind: X\n~: 1\n", "k.yaml").errors
    assert "unsupported map key" in str(err)
    assert str(err).startswith("k.yaml:")
    [err] = files.parse_text("kind: X\nv: .inf\n", "k.yaml").errors
    assert str(err).startswith("k.yaml:2:")


def test_float_key_formatting_is_gos() -> None:
    assert [yamlscalars.json_key(x) for x in (1.5, 1e6, 123456.0, 1e-5, -2.25, math.inf, 1e100, -1e39)] == [
        "1.5",
        "1e+06",
        "123456",
        "1e-05",
        "-2.25",
        ".inf",
        ".inf",  # beyond float32: FormatFloat(f, 'g', -1, 32) of float32(f) is +Inf
        "-.inf",
    ]


def test_merge_and_tags_use_the_same_rules() -> None:
    doc = files.parse_text("kind: X\nb: &b {on: y}\nm:\n  <<: *b\n  k: !!bool Y\n", "m.yaml").documents[0]
    assert doc.obj["m"] == {"true": True, "k": True}
