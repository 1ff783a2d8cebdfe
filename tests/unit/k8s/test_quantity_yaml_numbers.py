"""An unquoted number reaches ``Quantity.UnmarshalJSON`` as the JSON text sigs.k8s.io/yaml writes for go-yaml v2's
value (kubedra.k8s.quantity.parse_quantity, go_json_float): both of kubedra's YAML readers give the same value, and
the quantity read from it has the representation the apiserver parses, which decides admission per release
(tests/integration/test_quantity_yaml.py holds these readings to each testbed release's apiserver)."""

from __future__ import annotations

import json
import math

import pytest

from kubedra.k8s.podadmission import integer_resource_value
from kubedra.k8s.quantity import QuantityError, QuantityNotModelled, parse_quantity
from kubedra.sources import yamlfast
from kubedra.sources.yamlread import iter_documents_lines
from kubedra.sources.yamlscalars import ScalarError, go_json_float

# plain scalar: (the JSON text Quantity.UnmarshalJSON parses, admitted as an extended resource at 1.37, at 1.38)
CASES: dict[str, tuple[str, bool, bool]] = {
    "1.5e3": ("1500", True, True),  # a float64 written %f: "1500"
    "1e20": (
        "100000000000000000000",
        False,
        True,
    ),  # 21 digits, an inf.Dec: 1.37's MilliValue does not wrap to 0
    "99999999999999999999": ("100000000000000000000", False, True),  # past uint64: go-yaml's float64
    "1e21": (
        "1e+21",
        True,
        True,
    ),  # from 1e21 encoding/json writes %e: int64Amount{1, 21}, MilliValue 0 at 1.37
    "0x10": ("16", True, True),
    "012": ("10", True, True),  # octal, Go's ParseInt base 0
    "08": ("8", True, True),  # no octal: go-yaml's float, 8
    "0o17": ("15", True, True),
    "1_000": ("1000", True, True),
    "1_0.5": ("10.5", False, False),
    ".5": ("0.5", False, False),
    "+1": ("1", True, True),
    "1.": ("1", True, True),
    "1e-7": ("1e-7", False, False),  # below 1e-6: %e, "e-07" cleaned to "e-7"
    "0.00001": ("0.00001", False, False),
    "123456789012345678901234567890": ("1.2345678901234568e+29", True, True),
}


def _read(text: str, fast: bool) -> object:
    if fast:
        docs = yamlfast.parse(text)
        assert docs is not None
        return docs[0][1]["v"]
    return next(iter_documents_lines(text, "t.yaml"))[1]["v"]


@pytest.mark.parametrize("plain", sorted(CASES))
def test_an_unquoted_number_reads_as_the_apiserver_parses_it(plain: str) -> None:
    text, at_137, at_138 = CASES[plain]
    fast, full = _read(f"v: {plain}\n", True), _read(f"v: {plain}\n", False)
    assert fast == full
    assert type(fast) is type(full)
    q = parse_quantity(fast)
    assert q == parse_quantity(text)
    assert q.amount() == parse_quantity(text).amount()
    assert q.format == parse_quantity(text).format
    assert (integer_resource_value(q, "1.37"), integer_resource_value(q, "1.38")) == (at_137, at_138)


def test_go_json_float_is_encoding_json() -> None:
    assert go_json_float(1e20) == "100000000000000000000"
    assert go_json_float(1e21) == "1e+21"
    assert go_json_float(1.5e-7) == "1.5e-7"
    assert go_json_float(1e-300) == "1e-300"  # only a leading zero of a two-digit exponent goes
    assert go_json_float(1e-6) == "0.000001"
    assert go_json_float(-0.0) == "-0"
    assert go_json_float(0.1 + 0.2) == "0.30000000000000004"
    for f in (1e20, 1.5e-7, 123.25, 1e300):
        assert float(go_json_float(f)) == f
        assert json.loads(go_json_float(f)) == f
    with pytest.raises(ScalarError):
        go_json_float(math.inf)
    with pytest.raises(QuantityError):  # what parse_quantity asks for
        parse_quantity(math.nan)


def test_an_integer_past_int64_is_refused_with_its_reason() -> None:
    # go-yaml keeps 12345678901234567890 a uint64 and a YAML POST keeps its digits, but kubectl's unstructured
    # object holds it as a float64 (sigs.k8s.io/json): which one the apiserver gets depends on the client
    with pytest.raises(QuantityNotModelled, match=r"12345678901234567000.*quote it"):
        parse_quantity(12345678901234567890)
    assert parse_quantity(9223372036854775807).value() == 9223372036854775807
    assert parse_quantity(-9223372036854775808).value() == -9223372036854775808


@pytest.mark.parametrize(
    ("text", "string"),
    [
        ("+1", "+1"),  # ParseQuantity's fast path found it canonical: String() is the text it was given
        ("1e+21", "1e+21"),
        ("1E3", "1E3"),
        ("0001", "0001"),
        ("+1Ki", "+1Ki"),
        ("2000m", "2"),  # ends in 000: computed
        ("8Ki", "8Ki"),  # a multiple of 8: computed, the same text
        ("1.0", "1"),  # scale -1
        ("1.5Gi", "1536Mi"),
    ],
)
def test_string_keeps_the_text_the_fast_path_found_canonical(text: str, string: str) -> None:
    # tests/integration/test_quantity_yaml.py: the stored object of each testbed apiserver says the same
    assert parse_quantity(text).canonical() == string
