"""Conversion of generated v1beta1 objects to the model and back to v1 is stable."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubedra.model.convert import upgrade_to_v1
from kubedra.model.parse import parse_object
from kubedra.model.serialize import to_dict

names = st.from_regex(r"[a-z]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
quantities = st.sampled_from(["1", "80Gi", "1500m", "9984Mi", "2k", "1e3", "0", "40G"])
attr_values = st.one_of(
    st.builds(lambda v: {"int": v}, st.integers(-(2**40), 2**40)),
    st.builds(lambda v: {"bool": v}, st.booleans()),
    st.builds(lambda v: {"string": v}, names),
    st.builds(
        lambda a, b, c: {"version": f"{a}.{b}.{c}"},
        st.integers(0, 99),
        st.integers(0, 99),
        st.integers(0, 99),
    ),
)
qualified = st.one_of(names, st.builds(lambda d, n: f"{d}.example.com/{n}", names, names))


@st.composite
def beta_device(draw: st.DrawFn) -> dict[str, Any]:
    basic: dict[str, Any] = {}
    attrs = draw(st.dictionaries(qualified, attr_values, max_size=4))
    if attrs:
        basic["attributes"] = attrs
    caps = draw(st.dictionaries(qualified, quantities, max_size=3))
    if caps:
        basic["capacity"] = {k: {"value": v} for k, v in caps.items()}
    if draw(st.booleans()):
        basic["taints"] = [
            {
                "key": draw(names),
                "value": draw(names),
                "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "None"])),
            }
        ]
    dev: dict[str, Any] = {"name": draw(names)}
    if bool(basic) or draw(st.booleans()):
        dev["basic"] = basic
    return dev


@st.composite
def beta_slice(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": f"{draw(names)}.example.com",
        "pool": {
            "name": draw(names),
            "generation": draw(st.integers(0, 5)),
            "resourceSliceCount": draw(st.integers(1, 3)),
        },
    }
    if draw(st.booleans()):
        spec["nodeName"] = draw(names)
    else:
        spec["allNodes"] = True
    spec["devices"] = draw(st.lists(beta_device(), max_size=4, unique_by=lambda d: d["name"]))
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": draw(names)},
        "spec": spec,
    }


@st.composite
def beta_request(draw: st.DrawFn) -> dict[str, Any]:
    req: dict[str, Any] = {"name": draw(names)}
    if draw(st.integers(0, 3)) == 0:
        req["firstAvailable"] = [
            {"name": f"s{i}", "deviceClassName": draw(names), "count": draw(st.integers(1, 3))}
            for i in range(draw(st.integers(1, 3)))
        ]
        return req
    req["deviceClassName"] = draw(names)
    mode = draw(st.sampled_from(["ExactCount", "All", None]))
    if mode:
        req["allocationMode"] = mode
    if mode != "All" and draw(st.booleans()):
        req["count"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        req["selectors"] = [{"cel": {"expression": 'device.driver == "x.example.com"'}}]
    if draw(st.booleans()):
        req["adminAccess"] = draw(st.booleans())
    if draw(st.booleans()):
        req["tolerations"] = [{"key": draw(names), "operator": "Exists", "effect": "NoSchedule"}]
    return req


@st.composite
def beta_claim(draw: st.DrawFn) -> dict[str, Any]:
    reqs = draw(st.lists(beta_request(), min_size=1, max_size=3, unique_by=lambda r: r["name"]))
    return {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": draw(names), "namespace": "default"},
        "spec": {"devices": {"requests": reqs}},
    }


def roundtrip(obj: dict[str, Any]) -> dict[str, Any]:
    parsed = parse_object(obj)
    assert parsed is not None
    return to_dict(parsed.obj)


@settings(max_examples=60, deadline=None)
@given(st.one_of(beta_slice(), beta_claim()))
def test_v1beta1_to_model_to_v1_is_stable(obj: dict[str, Any]) -> None:
    original = copy.deepcopy(obj)
    once = roundtrip(obj)
    assert obj == original, "parsing must not modify its input"
    assert once["apiVersion"] == "resource.k8s.io/v1"
    # v1 in, v1 out: a second pass changes nothing
    assert roundtrip(once) == once
    # and it agrees with the in-place conversion used by `kubedra migrate`
    converted = copy.deepcopy(obj)
    upgrade_to_v1(converted)
    assert roundtrip(converted) == once


@settings(max_examples=60, deadline=None)
@given(beta_claim())
def test_flat_requests_move_under_exactly_with_defaults(obj: dict[str, Any]) -> None:
    out = roundtrip(obj)
    for before, after in zip(
        obj["spec"]["devices"]["requests"], out["spec"]["devices"]["requests"], strict=True
    ):
        if "firstAvailable" in before:
            assert "exactly" not in after
            assert len(after["firstAvailable"]) == len(before["firstAvailable"])
            continue
        ex = after["exactly"]
        assert ex["deviceClassName"] == before["deviceClassName"]
        assert ex["allocationMode"] == before.get("allocationMode") or (
            "allocationMode" not in before and ex["allocationMode"] == "ExactCount"
        )
        if ex["allocationMode"] == "ExactCount":
            assert ex["count"] == before.get("count", 1)
        if before.get("adminAccess") is not None:
            assert ex.get("adminAccess") == before["adminAccess"]


def test_a_null_item_in_a_list_of_structs_is_its_zero_value() -> None:
    """Found by the mutation fuzz: a null entry in a claim's devices.config (or constraints, a pod's
    tolerations, resourceClaims, a claim's reservedFor...) crashed parsing (AttributeError on None, exit 3 in
    simulate, allocate, explain). The API machinery decodes a JSON null in a list of structs as the struct's
    zero value; so does the model."""
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}],
                "config": [None],
                "constraints": [None],
            }
        },
        "status": {"reservedFor": [None]},
    }
    parsed = parse_object(claim)
    assert parsed is not None
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "tolerations": [None],
            "resourceClaims": [None],
        },
    }
    parsed_pod: Any = parse_object(pod)
    assert parsed_pod is not None
    assert [(t.key, t.operator) for t in parsed_pod.obj.tolerations] == [("", "Equal")]
