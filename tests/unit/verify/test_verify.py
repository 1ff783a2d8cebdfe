"""``kubedra verify -f SNAPSHOT``: each check passes on a healthy state and fails with a clear message."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from kubedra.model.snapshot import Header, Snapshot, write
from kubedra.testing import gpunodes

from .helpers import run

NOW = "2026-06-01T10:00:00Z"
NODE = "gpu-0"


def _ready_pod(name: str, ns: str, node: str, **extra: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "creationTimestamp": "2026-06-01T09:00:00Z",
        },
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "cuda"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    for k, v in extra.items():
        pod[k].update(v)
    return pod


def healthy() -> list[dict[str, Any]]:
    node = gpunodes.node(NODE, "h100-80gb")
    node["status"] = gpunodes.node_status(NODE, "h100-80gb")
    slices = gpunodes.resource_slices(NODE, "h100-80gb")
    plugin = _ready_pod(
        "nvidia-dra-driver-gpu-kubelet-plugin-abcde",
        "nvidia-dra-driver-gpu",
        NODE,
        metadata={
            "ownerReferences": [
                {"kind": "DaemonSet", "name": "nvidia-dra-driver-gpu-kubelet-plugin", "controller": True}
            ]
        },
    )
    workload = _ready_pod(
        "train-7f9c-x1",
        "ml",
        NODE,
        metadata={
            "labels": {"pod-template-hash": "7f9c"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "train-7f9c", "controller": True}],
        },
        spec={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]},
        status={"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-7f9c-x1-gpu-abc"}]},
    )
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train-7f9c-x1-gpu-abc", "namespace": "ml"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0"}
                    ]
                }
            },
            "reservedFor": [{"resource": "pods", "name": "train-7f9c-x1", "uid": "uid-train-7f9c-x1"}],
        },
    }
    return [node, *slices, plugin, workload, claim]


def snap(
    tmp_path: Path,
    items: list[dict[str, Any]],
    name: str = "s.yaml",
    server_version: str = "v1.37.2",
    gates: dict[str, bool] | None = None,
) -> str:
    p = tmp_path / name
    write(Snapshot(Header("testbed", server_version, NOW, feature_gates=gates or {}), items), str(p))
    return str(p)


# The gates under which a cluster reads DeviceTaintRules (data/versions.yaml apis.deviceTaintRuleGates), as its
# kube-apiserver /metrics reports them: off by default before 1.37 (test_taint_rule_gates.py)
RULES_ON = {"DRADeviceTaints": True, "DRADeviceTaintRules": True}


def verify(*args: str) -> tuple[int, dict[str, Any]]:
    res = run("verify", *args, "-o", "json")
    data = json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}
    return res.exit_code, data


def by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in data["checks"]}


def test_healthy_state_passes(tmp_path: Path) -> None:
    code, data = verify("-f", snap(tmp_path, healthy()))
    assert code == 0, data
    checks = by_id(data)
    # a check with nothing to look at said PASS; no DRA error event and no --baseline here
    nothing = {"events", "baseline"}
    assert {i: c["status"] for i, c in checks.items() if i in nothing} == dict.fromkeys(
        nothing, "nothing-to-check"
    )
    assert all(c["status"] == "pass" and c["checked"] for i, c in checks.items() if i not in nothing), data
    assert data["summary"] == {"passed": 5, "warnings": 0, "failed": 0, "nothingToCheck": 2}
    assert checks["slices"]["checked"] == 1
    assert checks["driver"]["checked"] == 1
    assert checks["claims"]["checked"] == 1


def test_table_output_and_verdict(tmp_path: Path) -> None:
    res = run("verify", "-f", snap(tmp_path, healthy()))
    assert res.exit_code == 0
    assert "OK: 5 passed, 0 with warnings, 0 failed, 2 with nothing to check\n" in res.stdout
    rows = {line.split("  ")[0] for line in res.stdout.splitlines()[2:-1]}
    assert rows == {"PASS", "nothing to check"}, res.stdout


def _mutate(items: list[dict[str, Any]], kind: str, fn: Any, name: str | None = None) -> list[dict[str, Any]]:
    items = copy.deepcopy(items)
    for o in items:
        if o["kind"] == kind and (name is None or name in o["metadata"]["name"]):
            fn(o)
    return items


@pytest.mark.parametrize(
    ("change", "check", "needle"),
    [
        (
            lambda i: _mutate(i, "ResourceClaim", lambda c: c["status"].pop("allocation")),
            "claims",
            "is not allocated, but Pod ml/train-7f9c-x1 needs it",
        ),
        (
            lambda i: _mutate(i, "ResourceClaim", lambda c: c["status"].pop("reservedFor")),
            "claims",
            "allocated but not reserved for Pod ml/train-7f9c-x1",
        ),
        (
            lambda i: _mutate(
                i,
                "Pod",
                lambda p: p["status"].update(
                    phase="Pending",
                    conditions=[
                        {
                            "type": "PodScheduled",
                            "status": "False",
                            "reason": "Unschedulable",
                            "message": "cannot allocate all claims",
                        }
                    ],
                ),
                "train",
            ),
            "claim-pods",
            "Pod ml/train-7f9c-x1 is Pending: Unschedulable cannot allocate all claims",
        ),
        (
            lambda i: _mutate(
                i,
                "Pod",
                lambda p: p["status"].update(
                    phase="Pending",
                    conditions=[{"type": "Ready", "status": "False"}],
                    containerStatuses=[
                        {"name": "gpus", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
                    ],
                ),
                "kubelet-plugin",
            ),
            "driver",
            "kubelet-plugin-abcde on node gpu-0 is not Ready (Pending, CrashLoopBackOff)",
        ),
        (
            lambda i: (
                [o for o in i if "kubelet-plugin" not in o["metadata"]["name"]]
                + [
                    _ready_pod(
                        "nvidia-dra-driver-gpu-kubelet-plugin-zz",
                        "d",
                        "other",
                        metadata={
                            "ownerReferences": [
                                {"kind": "DaemonSet", "name": "nvidia-dra-driver-gpu-kubelet-plugin"}
                            ]
                        },
                    )
                ]
            ),
            "driver",
            "GPU node gpu-0 is on DRA but runs no DRA driver kubelet-plugin pod",
        ),
        (
            lambda i: _mutate(i, "ResourceSlice", lambda s: s["spec"]["devices"].pop()),
            "slices",
            "labels say 8 GPUs (nvidia.com/gpu.count), its slices publish 7",
        ),
        (
            lambda i: _mutate(i, "ResourceSlice", lambda s: s["spec"]["pool"].update(resourceSliceCount=2)),
            "slices",
            "is incomplete (1 of 2 slices)",
        ),
        (
            lambda i: [o for o in i if o["kind"] != "ResourceSlice"],
            "slices",
            "Node gpu-0 is on DRA but publishes no gpu.nvidia.com ResourceSlice",
        ),
        (
            lambda i: _mutate(
                i,
                "Node",
                lambda n: n["metadata"]["labels"].update({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}),
            ),
            "slices",
            "slices say NVIDIA-H100-80GB-HBM3",
        ),
        (
            lambda i: [
                *i,
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": "e1", "namespace": "ml"},
                    "reason": "FailedPrepareDynamicResources",
                    "message": "prepare claim: NVML error",
                    "involvedObject": {"kind": "Pod", "namespace": "ml", "name": "train-7f9c-x1"},
                    "lastTimestamp": "2026-06-01T09:55:00Z",
                    "count": 3,
                },
            ],
            "events",
            "FailedPrepareDynamicResources on Pod ml/train-7f9c-x1 (3x): prepare claim: NVML error",
        ),
        (
            lambda i: _mutate(
                i,
                "ResourceSlice",
                lambda s: s["spec"]["devices"][0].update(
                    taints=[{"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"}]
                ),
            ),
            "health",
            "holds gpu-0 of pool gpu-0, tainted gpu.nvidia.com/xid=79:NoExecute by ResourceSlice",
        ),
        (
            lambda i: _mutate(
                i,
                "ResourceClaim",
                lambda c: c["status"].update(
                    devices=[
                        {
                            "driver": "gpu.nvidia.com",
                            "pool": NODE,
                            "device": "gpu-0",
                            "conditions": [
                                {
                                    "type": "Ready",
                                    "status": "False",
                                    "reason": "XidError",
                                    "message": "Xid 79",
                                }
                            ],
                        }
                    ]
                ),
            ),
            "health",
            "device gpu-0 condition Ready is False (XidError: Xid 79)",
        ),
    ],
)
def test_broken_states_fail_with_clear_messages(tmp_path: Path, change: Any, check: str, needle: str) -> None:
    code, data = verify("-f", snap(tmp_path, change(healthy())))
    assert code == 1
    c = by_id(data)[check]
    assert c["status"] == "fail", c
    assert any(needle in m for m in c["messages"]), c["messages"]


def test_old_events_are_outside_the_window(tmp_path: Path) -> None:
    ev = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ml"},
        "reason": "FailedPrepareDynamicResources",
        "message": "x",
        "involvedObject": {"kind": "Pod", "name": "p"},
        "lastTimestamp": "2026-06-01T08:00:00Z",
    }
    path = snap(tmp_path, [*healthy(), ev])
    assert verify("-f", path)[0] == 0
    code, data = verify("-f", path, "--since", "3h")
    assert code == 1
    assert by_id(data)["events"]["status"] == "fail"


def test_baseline_lost_workload_and_pending(tmp_path: Path) -> None:
    base = snap(tmp_path, healthy(), "base.yaml")
    # after: the Deployment's new ReplicaSet pod (new hash) runs: same workload, nothing lost
    moved = _mutate(
        healthy(),
        "Pod",
        lambda p: p["metadata"].update(
            name="train-5b6d-q2",
            labels={"pod-template-hash": "5b6d"},
            ownerReferences=[{"kind": "ReplicaSet", "name": "train-5b6d", "controller": True}],
        ),
        "train",
    )
    moved = _mutate(
        moved,
        "ResourceClaim",
        lambda c: c["status"].update(
            reservedFor=[{"resource": "pods", "name": "train-5b6d-q2", "uid": "uid-train-7f9c-x1"}]
        ),
    )
    assert verify("-f", snap(tmp_path, moved, "after.yaml"), "--baseline", base)[0] == 0
    # after: the workload's pod is gone
    lost = [o for o in healthy() if not o["metadata"]["name"].startswith("train")]
    code, data = verify("-f", snap(tmp_path, lost, "lost.yaml"), "--baseline", base)
    assert code == 1
    assert (
        "Deployment ml/train: 1 GPU pod Running in the baseline, 0 now" in by_id(data)["baseline"]["messages"]
    )
    # a GPU pod Pending for long
    pend = [
        *healthy(),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-06-01T09:00:00Z"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
            "status": {"phase": "Pending"},
        },
    ]
    code, data = verify("-f", snap(tmp_path, pend, "pend.yaml"))
    assert code == 1
    assert "GPU pod ml/p is Pending for 60 min" in by_id(data)["baseline"]["messages"]


@pytest.mark.parametrize(
    ("resources", "gpu_pod"),
    [
        (
            {"limits": {"nvidia.com/gpu": "0"}},
            False,
        ),  # no GPU (was a GPU pod stuck Pending: any nvidia.com/ key)
        ({"limits": {"nvidia.com/gpu": "00"}}, False),
        ({"limits": {"nvidia.com/gpu": 0}, "requests": {"nvidia.com/gpu": "0"}}, False),
        ({"limits": {"nvidia.com/gpu": "1000m"}}, True),
        ({"requests": {"nvidia.com/gpu": "1"}}, True),  # not admitted, but it names a GPU: still checked
        ({"limits": {"cpu": "1"}}, False),
    ],
)
def test_a_pending_pod_is_a_gpu_pod_by_the_one_request_model(
    tmp_path: Path, resources: dict[str, Any], gpu_pod: bool
) -> None:
    pend = [
        *healthy(),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-06-01T09:00:00Z"},
            "spec": {"containers": [{"name": "c", "resources": resources}]},
            "status": {"phase": "Pending"},
        },
    ]
    code, data = verify("-f", snap(tmp_path, pend, "pend.yaml"))
    stuck = "GPU pod ml/p is Pending for 60 min" in by_id(data)["baseline"]["messages"]
    assert (code, stuck) == ((1, True) if gpu_pod else (0, False))


def test_bad_input_exits_2(tmp_path: Path) -> None:
    assert run("verify", "-f", str(tmp_path / "missing.yaml")).exit_code == 2
    plain = tmp_path / "plain.yaml"
    plain.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    res = run("verify", "-f", str(plain))
    assert res.exit_code == 2
    assert "not a kubedra snapshot" in res.stderr
    assert run("verify", "-f", snap(tmp_path, healthy()), "--since", "ten").exit_code == 2
    assert run("verify", "-f", snap(tmp_path, healthy()), "--context", "x").exit_code == 2


def _rule(effect: str = "NoExecute", **selector: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-gpu-0"},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "example.com/drain", "value": "rma", "effect": effect},
        },
    }


def _tolerate(items: list[dict[str, Any]], *tolerations: dict[str, Any]) -> list[dict[str, Any]]:
    """The claim's request and its allocation result carry the tolerations (the allocator copies them)."""

    def add(c: dict[str, Any]) -> None:
        c["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = list(tolerations)
        c["status"]["allocation"]["devices"]["results"][0]["tolerations"] = list(tolerations)

    return _mutate(items, "ResourceClaim", add)


GPU0 = {"driver": "gpu.nvidia.com", "pool": NODE, "device": "gpu-0"}


def test_noexecute_rule_over_an_allocated_device_fails(tmp_path: Path) -> None:
    code, data = verify("-f", snap(tmp_path, [*healthy(), _rule(**GPU0)]))
    assert code == 1
    health = by_id(data)["health"]
    assert health["status"] == "fail"
    assert any(
        "tainted example.com/drain=rma:NoExecute by DeviceTaintRule drain-gpu-0: not tolerated; the device-taint "
        "eviction controller evicts Pod ml/train-7f9c-x1" in m
        for m in health["messages"]
    ), health["messages"]


@pytest.mark.parametrize(
    "selector",
    [
        {"driver": "gpu.nvidia.com"},
        {"pool": NODE},
        {"device": "gpu-0"},
        {"driver": "gpu.nvidia.com", "pool": NODE},
    ],
)
def test_partial_selectors_match_like_upstream(tmp_path: Path, selector: dict[str, str]) -> None:
    assert verify("-f", snap(tmp_path, [*healthy(), _rule(**selector)]))[0] == 1


@pytest.mark.parametrize(
    "selector",
    [{"device": "gpu-1"}, {"pool": "other-node"}, {"driver": "other.example.com", "device": "gpu-0"}],
)
def test_rule_for_another_device_does_not_fail(tmp_path: Path, selector: dict[str, str]) -> None:
    code, data = verify("-f", snap(tmp_path, [*healthy(), _rule(**selector)]))
    assert code == 0, data["checks"]


def test_rule_without_selector_taints_nothing(tmp_path: Path) -> None:
    rule = _rule()
    del rule["spec"]["deviceSelector"]
    code, data = verify("-f", snap(tmp_path, [*healthy(), rule]))
    assert code == 0
    assert by_id(data)["health"]["messages"] == [
        "DeviceTaintRule drain-gpu-0 has no deviceSelector: it taints no device"
    ]


@pytest.mark.parametrize("server_version", ["v1.36.6", "v1.37.0", "v1.34.13"])
def test_rule_without_selector_taints_every_device_before_1_37_1(tmp_path: Path, server_version: str) -> None:
    # k8s.io/dynamic-resource-allocation resourceslice/tracker derefs a nil deviceSelector to an empty one
    # (every device) through v0.37.0; "No selector matches no devices" from v0.37.1
    rule = _rule()
    del rule["spec"]["deviceSelector"]
    gates = (
        {"DRADeviceTaints": True} if server_version.startswith("v1.34.") else RULES_ON
    )  # no other gate at 1.34
    code, data = verify("-f", snap(tmp_path, [*healthy(), rule], server_version=server_version, gates=gates))
    assert code == 1
    messages = by_id(data)["health"]["messages"]
    assert (
        f"DeviceTaintRule drain-gpu-0 has no deviceSelector: at Kubernetes {server_version} it taints every device"
        in messages
    )
    assert any("by DeviceTaintRule drain-gpu-0: not tolerated" in m for m in messages), messages


def test_rule_without_selector_on_an_unknown_release_is_not_judged(tmp_path: Path) -> None:
    rule = _rule()
    del rule["spec"]["deviceSelector"]
    code, data = verify("-f", snap(tmp_path, [*healthy(), rule], server_version=""))
    assert code == 0
    assert by_id(data)["health"]["messages"] == [
        "DeviceTaintRule drain-gpu-0 has no deviceSelector: it taints every device before Kubernetes 1.37.1 "
        "and none from then, and the cluster's version is unknown; its taint is not judged"
    ]


def test_tolerated_noexecute_rule_warns(tmp_path: Path) -> None:
    items = _tolerate(healthy(), {"key": "example.com/drain", "operator": "Exists", "effect": "NoExecute"})
    code, data = verify("-f", snap(tmp_path, [*items, _rule(**GPU0)]))
    assert code == 0
    health = by_id(data)["health"]
    assert health["status"] == "warn"
    assert "(tolerated: not evicted)" in health["messages"][0]


def test_toleration_seconds_only_delay_the_eviction(tmp_path: Path) -> None:
    items = _tolerate(
        healthy(),
        {"key": "example.com/drain", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    )
    code, data = verify("-f", snap(tmp_path, [*items, _rule(**GPU0)]))
    assert code == 1
    assert "Pod ml/train-7f9c-x1 300 s after the taint was added" in by_id(data)["health"]["messages"][0]


def test_toleration_without_noexecute_effect_does_not_stop_eviction(tmp_path: Path) -> None:
    # upstream claimEvictionTime only counts tolerations whose effect is NoExecute
    items = _tolerate(healthy(), {"key": "example.com/drain", "operator": "Exists"})
    assert verify("-f", snap(tmp_path, [*items, _rule(**GPU0)]))[0] == 1


@pytest.mark.parametrize("effect", ["NoSchedule", "None"])
def test_non_evicting_rule_warns(tmp_path: Path, effect: str) -> None:
    code, data = verify("-f", snap(tmp_path, [*healthy(), _rule(effect, **GPU0)]))
    assert code == 0
    assert by_id(data)["health"]["status"] == "warn"


def test_noexecute_on_a_claim_no_bound_pod_holds_warns(tmp_path: Path) -> None:
    items = [i for i in healthy() if not (i["kind"] == "Pod" and i["metadata"]["name"].startswith("train"))]
    code, data = verify("-f", snap(tmp_path, [*items, _rule(**GPU0)]))
    assert code == 0, data
    health = by_id(data)["health"]
    assert health["status"] == "warn"
    assert "no bound pod uses the claim yet" in health["messages"][0]


def test_unhealthy_allocated_resource_fails(tmp_path: Path) -> None:
    # kubelet's allocatedResourcesStatus as the NVIDIA driver's health monitor feeds it (ResourceHealthStatus gate)
    status = [
        {
            "name": "claim:gpu",
            "resources": [
                {
                    "health": "Unhealthy",
                    "message": "critical XID 79 reported by NVML",
                    "resourceID": "k8s.gpu.nvidia.com/claim=a85e5873-gpu-0",
                }
            ],
        }
    ]

    def sick(p: dict[str, Any]) -> None:
        if p["metadata"]["name"].startswith("train"):
            p["status"]["containerStatuses"] = [{"name": "c", "allocatedResourcesStatus": status}]

    code, data = verify("-f", snap(tmp_path, _mutate(healthy(), "Pod", sick)))
    assert code == 1
    assert by_id(data)["health"]["messages"] == [
        "Pod ml/train-7f9c-x1 container c: claim:gpu device k8s.gpu.nvidia.com/claim=a85e5873-gpu-0 is Unhealthy"
    ]


def test_class_for_a_driver_no_slice_publishes_is_hinted(tmp_path: Path) -> None:
    cls = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "fpga.example.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'fpga.example.com'"}}]},
    }
    code, data = verify("-f", snap(tmp_path, [*healthy(), cls]))
    assert code == 0
    assert by_id(data)["slices"]["messages"] == [
        "DeviceClass fpga.example.com selects driver fpga.example.com, but no ResourceSlice publishes it: the driver "
        "is not installed, not running, or its kubelet plugin runs on no node yet"
    ]


@pytest.mark.parametrize(("tag", "warned"), [("v25.12.0", False), ("v25.8.1-ubi9", False), ("v7.0.0", True)])
def test_driver_release_preflight(tmp_path: Path, tag: str, warned: bool) -> None:
    def image(p: dict[str, Any]) -> None:
        if "kubelet-plugin" in p["metadata"]["name"]:
            p["spec"]["containers"][0]["image"] = f"nvcr.io/nvidia/k8s-dra-driver-gpu:{tag}"

    code, data = verify("-f", snap(tmp_path, _mutate(healthy(), "Pod", image)))
    assert code == 0
    msgs = by_id(data)["driver"]["messages"]
    assert any("not in kubedra's release table" in m for m in msgs) == warned, msgs


def test_a_snapshot_that_could_not_read_everything_is_incomplete(tmp_path: Path) -> None:
    """7/7 checks passing on objects that could not be listed is not a pass: exit 2, named, unless accepted."""
    header = Header("testbed", "v1.37.2", NOW)
    header.not_inspected = [
        {"resource": "pods", "verb": "list", "namespace": None, "reason": "HTTP 403: pods is forbidden"},
        {"resource": "events", "reason": "HTTP 401: Unauthorized"},  # a header from before verb/namespace
    ]
    path = tmp_path / "partial.yaml"
    write(Snapshot(header, healthy()), str(path))
    res = run("verify", "-f", str(path))
    assert res.exit_code == 2
    assert "INCOMPLETE: 5 passed" in res.stdout
    assert res.stderr.splitlines()[:2] == [
        "kubedra: incomplete: cluster testbed: cannot list pods (cluster-wide): forbidden (HTTP 403: pods is forbidden)",
        "kubedra: incomplete: cluster testbed: cannot list events (cluster-wide): unauthorised (HTTP 401: Unauthorized)",
    ]
    code, data = verify("-f", str(path), "--allow-missing", "pods")
    assert code == 2
    assert [r["resource"] for r in data["incomplete"]] == ["events"]
    assert data["incomplete"][0] == {
        "cluster": "testbed",
        "resource": "events",
        "verb": "list",
        "namespace": None,
        "cause": "unauthorised",
        "reason": "HTTP 401: Unauthorized",
    }
    code, data = verify("-f", str(path), "--allow-missing", "pods", "--allow-missing", "events")
    assert code == 0
    assert data["incomplete"] == []


# GPU Feature Discovery under the single MIG strategy counts MIG devices in nvidia.com/gpu.count
# (NVIDIA/k8s-device-plugin internal/lm/mig-strategy.go, newMigStrategySingleLabeler): 8 H100 in all-3g.40gb are
# labelled 16. verify read that as 16 GPUs against the 8 the slices publish and failed a healthy node.
SINGLE_3G = {
    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb",
    "nvidia.com/gpu.count": "16",
    "nvidia.com/mig.strategy": "single",
    "nvidia.com/mig.config": "all-3g.40gb",
}


def test_single_strategy_labels_count_gpus_through_the_layout(tmp_path: Path) -> None:
    items = _mutate(healthy(), "Node", lambda n: n["metadata"]["labels"].update(SINGLE_3G))
    code, data = verify("-f", snap(tmp_path, items))
    assert code == 0, by_id(data)["slices"]
    items = _mutate(items, "ResourceSlice", lambda s: s["spec"]["devices"].pop())
    code, data = verify("-f", snap(tmp_path, items, "short.yaml"))
    slices = by_id(data)["slices"]
    assert code == 1, slices
    assert any(
        "labels say 8 GPUs (nvidia.com/gpu.count of 3g.40gb MIG devices, over its mig.config layout), its slices "
        "publish 7" in m
        for m in slices["messages"]
    ), slices


def test_single_strategy_labels_without_a_layout_warn_instead_of_comparing(tmp_path: Path) -> None:
    labels = {**SINGLE_3G, "nvidia.com/mig.config": "custom"}
    items = _mutate(healthy(), "Node", lambda n: n["metadata"]["labels"].update(labels))
    code, data = verify("-f", snap(tmp_path, items))
    slices = by_id(data)["slices"]
    assert code == 0, slices
    assert slices["status"] == "warn", slices
    assert any(
        "cannot be compared with its labels" in m and "counts MIG devices" in m for m in slices["messages"]
    )


def test_nothing_to_check_is_not_ok(tmp_path: Path) -> None:
    # a cluster still wholly on the device plugin (or the wrong context): every check had nothing to look at;
    # verify said 'OK: 7 passed'. Not a failure (the chart runs verify on a schedule from before the first wave),
    # but not OK either
    dev = str(
        Path(__file__).resolve().parents[1] / "plan" / "data" / "dev.yaml"
    )  # device-plugin nodes and pods
    res = run("verify", "-f", dev)
    assert res.exit_code == 0, res.output
    assert "NOTHING CHECKED: 0 passed, 0 with warnings, 0 failed, 7 with nothing to check" in res.stdout
    assert "OK" not in res.stdout
    assert "PASS" not in res.stdout
    assert res.stderr.strip().splitlines() == [
        "kubedra: warning: nothing to verify in dev: no GPU node on DRA, no ResourceClaim, no Pending GPU pod "
        "and no --baseline to compare with (is this the right --context or snapshot?)"
    ]
    code, data = verify("-f", dev)
    assert code == 0
    assert data["nothingChecked"] is True
    code, data = verify("-f", snap(tmp_path, healthy(), "h.yaml"))
    assert code == 0
    assert "nothingChecked" not in data


@pytest.mark.parametrize("refs", [[["a"]], [None, "x"], [[{"kind": "DaemonSet", "name": "d"}]]])
def test_owner_references_that_are_not_references_name_no_owner(refs: Any) -> None:
    """Found by the mutation fuzz: a snapshot pod whose ownerReferences held a list (an anchor shared into it)
    crashed verify -f (AttributeError, exit 3). Such entries name no owner: the pod is its own workload."""
    from kubedra.verify.checks import workload_key

    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "ownerReferences": refs},
    }
    assert workload_key(pod) == workload_key({**pod, "metadata": {"name": "p", "namespace": "ml"}})


@pytest.mark.parametrize("containers", [[None], "x", [{"resources": [1]}], [{"resources": {"limits": "x"}}]])
def test_containers_that_are_not_containers_use_no_gpu(containers: Any) -> None:
    """Found by the mutation fuzz: a snapshot truncated inside a pod's containers list (``- `` then the end:
    a null container) crashed verify -f's baseline check (AttributeError, exit 3). Such a container asks for
    no GPU."""
    from kubedra.verify.gpupods import uses_gpu

    assert uses_gpu({"spec": {"containers": containers}}, "1.37") is False
    assert (
        uses_gpu({"spec": {"containers": [None, {"resources": {"limits": {"nvidia.com/gpu": 1}}}]}}, "1.37")
        is True
    )


def _gpu_pod(name: str, gpus: str, phase: str = "Running") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "nodeName": "n1",
            "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
        },
        "status": {"phase": phase},
    }


@pytest.mark.parametrize(
    ("server", "target", "lost"),
    [
        ("v1.38.0", None, True),  # 1.38's Value() saturates: the pod holds MaxInt64 GPUs, so it used one
        ("v1.37.2", None, False),  # 1.37's reads 0: no GPU pod, nothing lost
        ("v1.37.2", "1.38", True),  # --target-version decides
    ],
)
def test_the_baseline_reads_gpu_requests_as_the_clusters_release(
    server: str, target: str | None, lost: bool
) -> None:
    """A request past int64 is a GPU or none by the release (kubedra.vendors.gpurequest.device_count): verify
    reads a snapshot at its own server version, or at --target-version."""
    from kubedra.verify.checks import check_baseline

    base = Snapshot(Header("c", server, NOW), [_gpu_pod("p", "1e20")])
    now = Snapshot(Header("c", server, NOW), [])
    chk = check_baseline(now, base, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), dt.timedelta(minutes=5), target)
    assert (chk.status == "fail") is lost, chk.messages


def test_the_baseline_says_which_release_it_assumes() -> None:
    from kubedra.k8s import versions
    from kubedra.verify.checks import check_baseline

    quiet = check_baseline(
        Snapshot(Header("c", "", NOW), [_gpu_pod("p", "1")]), None, dt.datetime.now(dt.UTC), dt.timedelta(0)
    )
    assert not quiet.messages  # 1 is one GPU at every release: nothing assumed that matters
    loud = check_baseline(
        Snapshot(Header("c", "", NOW), [_gpu_pod("p", "1e20")]),
        None,
        dt.datetime.now(dt.UTC),
        dt.timedelta(0),
    )
    assert loud.status == "warn"
    assert f"read as {versions.DEFAULT_TARGET}" in loud.messages[0], loud.messages


def test_a_failed_check_wins_over_an_incomplete_snapshot(tmp_path: Path) -> None:
    """a failed check in a snapshot that could not read everything exited 2 ('input error'), hiding
    the failure; now a failed check is exit 1, and the missing reads are still named."""
    header = Header("testbed", "v1.37.2", NOW)
    header.not_inspected = [{"resource": "events", "verb": "list", "namespace": None, "reason": "HTTP 403"}]
    items = _mutate(healthy(), "ResourceSlice", lambda s: s["spec"]["devices"].pop())
    path = tmp_path / "partial.yaml"
    write(Snapshot(header, items), str(path))
    res = run("verify", "-f", str(path))
    assert res.exit_code == 1, res.output
    assert "FAILED: " in res.stdout
    assert "kubedra: incomplete: cluster testbed: cannot list events" in res.stderr


def _operator_install(items: list[dict[str, Any]], plugin_ready: bool) -> list[dict[str, Any]]:
    """The DRA driver as GPU Operator 26.7's GPUCluster deploys it (manifests/state-dra-driver/0500_daemonset.yaml
    and state-dra-validation/0500_daemonset.yaml @v26.7.0): DaemonSet nvidia-dra-driver-kubelet-plugin in the
    operator's namespace, and the nvidia-dra-validator, whose pod stays unready until the driver allocates."""
    owner = {"kind": "DaemonSet", "name": "nvidia-dra-driver-kubelet-plugin", "controller": True}
    plugin = _ready_pod(
        "nvidia-dra-driver-kubelet-plugin-x7k2p",
        "gpu-operator",
        NODE,
        metadata={
            "labels": {
                "app": "nvidia-dra-driver-kubelet-plugin",
                "app.kubernetes.io/name": "nvidia-dra-driver",
            },
            "ownerReferences": [owner],
        },
        spec={
            "containers": [
                {"name": "gpus", "image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1"}
            ]
        },
    )
    if not plugin_ready:
        plugin["status"] = {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]}
    validator = _ready_pod(
        "nvidia-dra-validator-q9z8w",
        "gpu-operator",
        NODE,
        metadata={
            "labels": {"app": "nvidia-operator-validator", "app.kubernetes.io/name": "nvidia-dra-validator"},
            "ownerReferences": [{"kind": "DaemonSet", "name": "nvidia-dra-validator", "controller": True}],
        },
        spec={
            "containers": [
                {"name": "nvidia-dra-validator", "image": "nvcr.io/nvidia/gpu-operator-validator:v26.7.0"}
            ]
        },
        status={"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]},
    )
    rest = [o for o in items if "kubelet-plugin" not in o["metadata"]["name"]]
    return [*rest, plugin, validator]


def test_the_driver_from_the_gpu_operator_is_found(tmp_path: Path) -> None:
    """verify finds the kubelet plugin whether the Helm chart or a GPUCluster installed it, and does not take the
    operator's DRA validator for it."""
    code, data = verify("-f", snap(tmp_path, _operator_install(healthy(), plugin_ready=True)))
    assert code == 0, data
    assert by_id(data)["driver"]["checked"] == 1, data
    code, data = verify("-f", snap(tmp_path, _operator_install(healthy(), plugin_ready=False), "bad.yaml"))
    driver = by_id(data)["driver"]
    assert code == 1, data
    assert driver["status"] == "fail", data
    assert any("nvidia-dra-driver-kubelet-plugin-x7k2p" in m for m in driver["messages"]), driver
    assert not any("validator" in m for m in driver["messages"]), driver


@pytest.mark.parametrize(
    ("target", "code", "fragment"),
    [("1.36", 1, "at Kubernetes 1.36 it taints every device"), ("1.38", 0, "it taints no device")],
)
def test_target_version_judges_a_rule_without_selector_at_that_release(
    tmp_path: Path, target: str, code: int, fragment: str
) -> None:
    """--target-version: the release-dependent checks as at the release an upgrade (or rollback) goes to; the
    cluster itself is v1.37.2, where the rule taints nothing."""
    rule = _rule()
    del rule["spec"]["deviceSelector"]
    got, data = verify("-f", snap(tmp_path, [*healthy(), rule], gates=RULES_ON), "--target-version", target)
    assert got == code
    assert any(fragment in m for m in by_id(data)["health"]["messages"]), by_id(data)["health"]["messages"]
    assert (data["serverVersion"], data["targetVersion"]) == ("v1.37.2", target)


def test_target_version_is_checked_and_absent_means_the_cluster_version(tmp_path: Path) -> None:
    path = snap(tmp_path, healthy())
    res = run("verify", "-f", path, "--target-version", "1.12", "-o", "json")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert "unsupported --target-version" in res.stderr
    code, data = verify("-f", path)
    assert code == 0
    assert "targetVersion" not in data
