"""Every catalogue object validates with kubernetes-validate (strict) and respects the API limits."""

from __future__ import annotations

import copy
import functools

import jsonschema
import pytest
from kubernetes_validate import utils as kv
from referencing import Registry, Resource

from kubedra.vendors.nvidia import dra, models, specs
from kubedra.vendors.nvidia import limits as nvidia_limits
from kubedra.vendors.nvidia.cluster import cluster

_SCHEMA_FILES = {
    "ResourceSlice": "resourceslice-resource-v1",
    "DeviceClass": "deviceclass-resource-v1",
    "Node": "node-v1",
}


@functools.cache
def _validator(version: str, kind: str) -> jsonschema.Draft202012Validator:
    # the stock kubernetes_validate.validate() re-reads the schema on every call; build it once
    folder = f"kubernetes-json-schema/v{version}.0-local-strict"
    defs = kv.schema_contents(f"{folder}/_definitions.json", version)
    schema = kv.schema_contents(f"{folder}/{_SCHEMA_FILES[kind]}.json", version)
    registry = Resource.from_contents(schema) @ (Resource.from_contents(defs) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_errors(obj, version="1.37"):
    return [
        f"{obj['kind']} {obj['metadata']['name']}: {'.'.join(map(str, e.path))}: {e.message[:200]}"
        for e in _validator(version, obj["kind"]).iter_errors(obj)
    ]


def test_validator_is_strict():
    (s,) = dra.dra_objects("n", "H100-80GB", 1)
    assert schema_errors(s) == []
    broken = copy.deepcopy(s)
    broken["spec"]["devices"][0]["basic"] = {}  # v1beta1 shape inside a v1 object
    assert schema_errors(broken)
    broken = copy.deepcopy(s)
    broken["spec"]["devices"][0]["attributes"]["type"] = {"integer": 0}
    assert schema_errors(broken)


CASES = [
    ("1x8xH100-80GB", "mig-dynamic", "1.37"),
    ("1x8xA100-40GB", "mig-dynamic", "1.35"),
    ("1x2xB200", "mig-dynamic", "1.34"),
    ("1x8xA100-80GB", "mig-static:all-balanced", "1.37"),
    ("1x8xH100-94GB", "mig-static:all-1g.12gb.me/all-7g.94gb", "1.36"),
    ("1x8xH200", "mig-static:1g.18gb*4,2g.35gb@4,1g.35gb@6", "1.37"),
    ("1x4xT4,1x8xL40S", "time-slicing:4", "1.37"),
    ("1x1xL4,1x4xA10G,1x4xA10,1x8xL40", "full", "1.37"),
    ("2x4xL4,1x4xA10G", "mps:2", "1.35"),
    ("1x8xH100-80GB", "full", "1.34"),
]


@pytest.mark.parametrize(("spec", "mode", "version"), CASES)
def test_dra_cluster_objects_validate(spec, mode, version):
    objs = cluster(spec, mode, version)
    problems = [p for o in objs for p in schema_errors(o, version)]
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    problems += [p for s in slices for p in nvidia_limits.slice_violations(s, specs.k8s_minor(version))]
    assert problems == []


@pytest.mark.parametrize(
    "mode", ["full", "mps:2", "mig-static:all-balanced", "mig-static:all-1g.10gb.me/all-disabled"]
)
def test_device_plugin_nodes_validate(mode):
    for obj in cluster("1x8xH100-80GB,1x8xA100-80GB", mode, device_plugin=True):
        assert schema_errors(obj) == []


@pytest.mark.parametrize("version", ["1.34", "1.36"])
def test_device_classes_validate(version):
    for obj in dra.device_classes(version, extended_resource=True):
        assert schema_errors(obj, version) == []


def test_dynamic_slices_respect_limits_on_every_model():
    for model in models.gpu_models().values():
        for version in ("1.34", "1.37"):
            slices = dra.dra_objects("n", model, 8, "mig-dynamic", version)
            minor = specs.k8s_minor(version)
            assert [p for s in slices for p in nvidia_limits.slice_violations(s, minor)] == []
            assert nvidia_limits.pool_violations(slices, minor) == []
            for s in slices:
                devs = s["spec"].get("devices", [])
                assert len(devs) <= 64
                assert len(s["spec"].get("sharedCounters", [])) <= 8
                for d in devs:
                    assert len(d.get("attributes", {})) + len(d.get("capacity", {})) <= 32
                    assert len(d.get("consumesCounters", [])) <= 2


# ----------------------------------------------------------------- the limit checker itself


def _dynamic_slice():
    return dra.dra_objects("n", "H100-80GB", 8, "mig-dynamic", "1.37")


def test_limit_checker_catches_too_many_counter_devices():
    s = copy.deepcopy(_dynamic_slice()[1])
    extra = copy.deepcopy(s["spec"]["devices"])
    for d in extra:
        d["name"] = d["name"].replace("gpu-0", "gpu-x")
    s["spec"]["devices"] += extra + copy.deepcopy(extra)
    for i, d in enumerate(s["spec"]["devices"]):
        d["name"] = f"dev-{i}"
    assert any("78 devices (max 64 with counters or taints)" in p for p in nvidia_limits.slice_violations(s))


def test_limit_checker_catches_mixed_slices_after_1_34():
    combined = dra.dra_objects("n", "H100-80GB", 1, "mig-dynamic", "1.34")[0]
    assert nvidia_limits.slice_violations(combined, 34) == []
    assert any("only one may be set since 1.35" in p for p in nvidia_limits.slice_violations(combined, 35))


def test_limit_checker_catches_names_and_counts():
    s = copy.deepcopy(_dynamic_slice()[0])
    s["spec"]["sharedCounters"].append(copy.deepcopy(s["spec"]["sharedCounters"][0]))
    s["spec"]["sharedCounters"][-1]["name"] = "Bad_Name"
    problems = nvidia_limits.slice_violations(s)
    assert any("9 counter sets (max 8)" in p for p in problems)
    assert any("'Bad_Name' is not a DNS label" in p for p in problems)
    dev = copy.deepcopy(_dynamic_slice()[1])
    dev["spec"]["devices"][0]["capacity"].update({f"extra{i}": {"value": "1"} for i in range(20)})
    assert any("attributes and capacities (max 32)" in p for p in nvidia_limits.slice_violations(dev))


def test_pool_checker_catches_missing_counter_sets():
    slices = _dynamic_slice()
    assert nvidia_limits.pool_violations(slices) == []
    broken = copy.deepcopy(slices[1:])  # device slices without the counters slice
    for s in broken:
        s["spec"]["pool"]["resourceSliceCount"] = len(broken)
    assert any(
        "counter set 'gpu-0-counter-set' missing from the pool" in p
        for p in nvidia_limits.pool_violations(broken)
    )
