"""Derived attributes (1.37 alpha DRADerivedAttributes) in the allocator: the gate, constraints, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.allocator import AllocationError, Allocator, Features
from kubedra.cli import cli
from kubedra.model.objects import DeviceConstraint, DeviceDerivedAttribute, DeviceRequest
from kubedra.model.parse import parse_object
from kubedra.model.serialize import request_dict

from .helpers import claim, cls, dev, node, picked, req, slice_, sub

DATA = Path(__file__).parents[2] / "data" / "allocate" / "derived-attributes.yaml"
ON = Features(prioritized_list=True, derived_attributes=True, list_type_attributes=True)


def _derive(name: str, expression: str) -> list[DeviceDerivedAttribute]:
    return [DeviceDerivedAttribute(name, expression)]


def _alloc(features: Features = ON) -> Allocator:
    devices = [
        dev("d0", {"numa": 0, "pair": "a"}),
        dev("d1", {"numa": 1, "pair": "a"}),
        dev("d2", {"numa": 1}),
    ]
    return Allocator(features, [cls()], [slice_("s1", devices)], None)


def test_cli_gate_on_aligns_devices_of_two_drivers():
    r = CliRunner().invoke(
        cli,
        [
            "allocate",
            "-f",
            str(DATA),
            "--target-version",
            "1.37",
            "--feature-gates",
            "DRADerivedAttributes=true",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "req-0=pool-1/device-1, req-1=pool-2/device-3" in r.output


def test_cli_gate_off_refuses_the_request_instead_of_ignoring_it():
    r = CliRunner().invoke(cli, ["allocate", "-f", str(DATA), "--target-version", "1.37"])
    assert r.exit_code == 1
    assert "request req-0: cannot handle request with derived attributes, the feature is disabled" in r.output


def test_feature_off_refuses_a_subrequest_with_derived_attributes():
    first = DeviceRequest("req-0", first_available=[sub("a", derived_attributes=_derive("x/y", "1"))])
    with pytest.raises(AllocationError, match="request a: cannot handle request with derived attributes"):
        _alloc(Features(prioritized_list=True)).allocate(node(), [claim("c", first)])


def test_distinct_attribute_on_a_derived_value():
    # numa 1 and 1 give the same derived value: the second device must be d0 (numa 0)
    r = req(count=2, derived_attributes=_derive("x/numa", 'device.attributes["driver-a"].numa * 10'))
    res = _alloc().allocate(
        node(), [claim("c", r, constraints=[DeviceConstraint(distinct_attribute="x/numa")])]
    )
    assert picked(res) == [[("req-0", "d0"), ("req-0", "d1")]]
    r = req(count=3, derived_attributes=_derive("x/numa", 'device.attributes["driver-a"].numa'))
    res = _alloc().allocate(
        node(), [claim("c", r, constraints=[DeviceConstraint(distinct_attribute="x/numa")])]
    )
    assert res is None


def test_compile_error_names_the_attribute():
    r = req(derived_attributes=_derive("x/f", "1.5"))
    with pytest.raises(
        AllocationError, match=r"compile derived attribute x/f failed: must evaluate to a primitive"
    ):
        _alloc().allocate(node(), [claim("c", r, constraints=[DeviceConstraint(match_attribute="x/f")])])


def test_runtime_error_names_the_device_without_the_selector_hint():
    # d0 and d1 have "pair" and match; the third device, d2, has none: evaluating it fails the allocation
    r = req(count=3, derived_attributes=_derive("x/p", 'device.attributes["driver-a"].pair'))
    with pytest.raises(AllocationError) as info:
        _alloc().allocate(node(), [claim("c", r, constraints=[DeviceConstraint(match_attribute="x/p")])])
    assert (
        str(info.value)
        == "evaluate derived attribute x/p on device driver-a/pool-1/d2 failed: no such key: pair"
    )


def test_derived_attributes_parse_and_serialize():
    doc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "r",
                        "exactly": {
                            "deviceClassName": "k",
                            "derivedAttributes": [{"name": "x/n", "expression": "1"}],
                        },
                    }
                ]
            }
        },
    }
    parsed = parse_object(doc)
    assert parsed is not None
    (r,) = parsed.obj.spec.requests
    assert request_dict(r)["exactly"]["derivedAttributes"] == [{"name": "x/n", "expression": "1"}]
