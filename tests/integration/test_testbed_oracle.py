"""kubedra-oracle: the upstream structured allocator (k8s.io/dynamic-resource-allocation v0.37) on JSON."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from kubedra.testing import gpunodes
from kubedra.testing.oracle import DEFAULT_FEATURES, FIXED_SHARE_ID, Oracle, OracleError, scenario

pytestmark = pytest.mark.integration

DRIVER = "gpu.nvidia.com"
FEATURES = DEFAULT_FEATURES["1.37"]
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
}
PINNED = {
    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
}


def _device(name: str, product: str = "NVIDIA H100 80GB HBM3", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"type": {"string": "gpu"}, "productName": {"string": product}},
        "capacity": {"memory": {"value": "80Gi"}},
        **extra,
    }


def _slice(devices: list[dict[str, Any]], node: str = "n1") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": {
            "driver": DRIVER,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "nodeName": node,
            "devices": devices,
        },
    }


def _claim(name: str, requests: list[dict[str, Any]], **devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": requests, **devices}},
    }


def _exactly(
    name: str, cls: str = "gpu.nvidia.com", count: int = 1, cel: str | None = None
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {"name": name, "exactly": exactly}


CLASSES = gpunodes.device_classes()
TWO_GPUS = [_slice([_device("gpu-0"), _device("gpu-1")])]


def _devices(result: dict[str, Any]) -> list[list[str]]:
    return [[r["device"] for r in c["results"]] for c in result["claims"]]


def test_simple_allocation(oracle: Oracle) -> None:
    result = oracle.run(
        scenario(NODE, [_claim("c1", [_exactly("gpu")])], TWO_GPUS, CLASSES, features=FEATURES)
    )
    assert result == {
        "node": "n1",
        "allocated": True,
        "error": None,
        "claims": [
            {
                "namespace": "default",
                "name": "c1",
                "results": [{"request": "gpu", "driver": DRIVER, "pool": "n1", "device": "gpu-0"}],
                "nodeSelector": PINNED,
                "config": [],
            }
        ],
    }


def test_devices_in_use_by_other_claims_are_skipped(oracle: Oracle) -> None:
    doc = scenario(
        NODE,
        [_claim("c1", [_exactly("gpu")])],
        TWO_GPUS,
        CLASSES,
        features=FEATURES,
        allocated_devices=[f"{DRIVER}/n1/gpu-0"],
    )
    assert _devices(oracle.run(doc)) == [["gpu-1"]]


def test_unsatisfiable_is_not_an_error(oracle: Oracle) -> None:
    result = oracle.run(
        scenario(NODE, [_claim("c1", [_exactly("gpu", count=3)])], TWO_GPUS, CLASSES, features=FEATURES)
    )
    assert result == {"node": "n1", "allocated": False, "error": None, "claims": []}


def test_first_available_takes_the_first_subrequest_that_fits(oracle: Oracle) -> None:
    a100 = _slice([_device("gpu-0", "NVIDIA A100-SXM4-80GB"), _device("gpu-1", "NVIDIA A100-SXM4-80GB")])
    claim = _claim(
        "c1",
        [
            {
                "name": "gpu",
                "firstAvailable": [
                    {
                        "name": "h100",
                        "deviceClassName": "gpu.nvidia.com",
                        "selectors": [
                            {
                                "cel": {
                                    "expression": "device.attributes['gpu.nvidia.com'].productName.contains('H100')"
                                }
                            }
                        ],
                    },
                    {
                        "name": "any-two",
                        "deviceClassName": "gpu.nvidia.com",
                        "allocationMode": "ExactCount",
                        "count": 2,
                    },
                ],
            }
        ],
    )
    result = oracle.run(scenario(NODE, [claim], [a100], CLASSES, features=FEATURES))
    assert result["allocated"] is True
    assert [(r["request"], r["device"]) for r in result["claims"][0]["results"]] == [
        ("gpu/any-two", "gpu-0"),
        ("gpu/any-two", "gpu-1"),
    ]
    # Without the feature the allocator refuses firstAvailable outright.
    off = oracle.run(
        scenario(NODE, [claim], [a100], CLASSES, features={**FEATURES, "PrioritizedList": False})
    )
    assert off["allocated"] is False


def test_counters_of_dynamic_mig_partitions(oracle: Oracle) -> None:
    slices = gpunodes.resource_slices("n1", "h100-80gb-dynamic-mig")
    four_g = "device.attributes['gpu.nvidia.com'].profile == '4g.40gb'"
    three_g = "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
    claims = [
        _claim("a", [_exactly("mig", "mig.nvidia.com", cel=four_g)]),
        _claim("b", [_exactly("mig", "mig.nvidia.com", cel=three_g)]),
        _claim("c", [_exactly("mig", "mig.nvidia.com", cel=four_g)]),
    ]
    # gpu-0 as a whole is taken: every counter of its set is consumed, so no partition of it fits.
    doc = scenario(NODE, claims, slices, CLASSES, features=FEATURES, allocated_devices=[f"{DRIVER}/n1/gpu-0"])
    result = oracle.run(doc)
    assert result["error"] is None
    # 4g.40gb only at placement 0 (slices 0-3); a 3g.40gb fits beside it at 4 (slices 4-7) on the same GPU.
    assert _devices(result) == [["gpu-1-mig-4g40gb-5-0"], ["gpu-1-mig-3g40gb-9-4"], ["gpu-2-mig-4g40gb-5-0"]]

    nine = _claim("d", [_exactly("mig", "mig.nvidia.com", count=9, cel=four_g)])
    assert oracle.run(scenario(NODE, [nine], slices, CLASSES, features=FEATURES))["allocated"] is False
    # Without PartitionableDevices the allocator does not understand counters: it must not allocate.
    off = oracle.run(
        scenario(NODE, [claims[0]], slices, CLASSES, features={**FEATURES, "PartitionableDevices": False})
    )
    assert off["allocated"] is False


def test_device_taint_rules_apply_like_the_scheduler_tracker(oracle: Oracle) -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "broken"},
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": "n1", "device": "gpu-0"},
            "taint": {"key": "example.com/broken", "effect": "NoSchedule"},
        },
    }
    doc = scenario(NODE, [_claim("c1", [_exactly("gpu")])], TWO_GPUS, CLASSES, features=FEATURES)
    assert _devices(oracle.run({**doc, "deviceTaintRules": [rule]})) == [["gpu-1"]]
    # A rule for another pool matches nothing.
    other = json.loads(json.dumps(rule))
    other["spec"]["deviceSelector"]["pool"] = "n2"
    assert _devices(oracle.run({**doc, "deviceTaintRules": [other]})) == [["gpu-0"]]


def test_consumable_capacity_share_ids_can_be_fixed(oracle: Oracle) -> None:
    shared = _device(
        "gpu-0",
        allowMultipleAllocations=True,
        capacity={
            "memory": {"value": "80Gi", "requestPolicy": {"default": "10Gi", "validRange": {"min": "1Gi"}}}
        },
    )
    claim = _claim("c1", [_exactly("gpu")])
    claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": "20Gi"}}
    doc = scenario(
        NODE,
        [claim],
        [_slice([shared])],
        CLASSES,
        features=FEATURES,
        allocated_capacity={f"{DRIVER}/n1/gpu-0": {"memory": "70Gi"}},
    )
    assert oracle.run(doc)["allocated"] is False  # 70Gi + 20Gi > 80Gi
    doc["allocatedCapacity"] = {f"{DRIVER}/n1/gpu-0": {"memory": "60Gi"}}
    (result,) = oracle.run(doc)["claims"][0]["results"]
    assert result["shareID"] == FIXED_SHARE_ID
    assert result["consumedCapacity"] == {"memory": "20Gi"}
    random_id = oracle.run({**doc, "fixedShareID": False})["claims"][0]["results"][0]["shareID"]
    assert random_id != FIXED_SHARE_ID
    assert len(random_id) == 36


def test_cel_runtime_error_is_reported(oracle: Oracle) -> None:
    bad = _claim("c1", [_exactly("gpu", cel="device.attributes['gpu.nvidia.com'].noSuchAttribute == 'x'")])
    result = oracle.run(scenario(NODE, [bad], TWO_GPUS, CLASSES, features=FEATURES))
    assert result["allocated"] is False
    assert result["error"]
    assert "noSuchAttribute" in result["error"]


def test_batch_keeps_order_and_matches_single_runs(oracle: Oracle) -> None:
    docs = [
        scenario(NODE, [_claim("c1", [_exactly("gpu", count=n)])], TWO_GPUS, CLASSES, features=FEATURES)
        for n in (1, 3, 2, 1)
    ]
    batch = oracle.run_batch(docs)
    assert [r["allocated"] for r in batch] == [True, False, True, True]
    assert batch == [oracle.run(d) for d in docs]
    # A JSON array on stdin works too.
    proc = subprocess.run(
        [str(oracle.path), "--batch"], input=json.dumps(docs).encode(), capture_output=True, check=True
    )
    assert json.loads(proc.stdout) == batch


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b"{not json", "malformed input"),
        (b"", "no scenario"),
        (json.dumps({"claims": []}).encode(), 'missing "node"'),
        (json.dumps({"node": NODE, "features": {"NoSuchFeature": True}}).encode(), "unknown feature"),
        (json.dumps({"node": NODE, "allocatedDevices": ["a/b"]}).encode(), "want 3 parts"),
    ],
)
def test_malformed_input_exits_2_with_one_line(oracle: Oracle, stdin: bytes, message: str) -> None:
    proc = subprocess.run([str(oracle.path)], input=stdin, capture_output=True, check=False)
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert message in err
    assert err.count("\n") == 1
    with pytest.raises(OracleError, match="malformed input"):
        oracle.run(json.loads(stdin) if stdin.startswith(b'{"') else {"node": None})
