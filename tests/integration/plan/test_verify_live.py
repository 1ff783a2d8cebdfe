"""``kubedra snapshot`` and ``kubedra verify`` against the testbed: a real 1.37 apiserver, scheduler and
controller-manager with fake GPU nodes. No kubelet runs, so pod status (Running/Ready) is written through the
API the way a kubelet would."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kubedra import cli
from kubedra.testing import binaries, fakecluster
from kubedra.testing.controlplane import DEFAULT_CONTROLLERS, ControlPlane
from kubedra.testing.kubeapi import KubeAPI, resource_path
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

DRIVER_NS = "nvidia-dra-driver-gpu"
PLUGIN_DS = "nvidia-dra-driver-gpu-kubelet-plugin"


def kubedra(*args: str) -> Result:
    import click

    @click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.pass_context
    def entry(ctx: click.Context) -> None:
        cli.main(list(ctx.args))

    return CliRunner().invoke(entry, list(args), catch_exceptions=False)


def require_testbed(*names: str) -> None:
    """Skip without the testbed binaries (make testbed), fail under CI=true like the shared fixtures."""
    missing = [n for n in names if binaries.find(n) is None]
    if missing:
        unavailable(f"testbed binaries missing ({', '.join(missing)}): run `make testbed`")


@pytest.fixture(scope="module")
def cp() -> Iterator[ControlPlane]:
    """A control plane of its own: verify looks at the whole cluster, so other tests' objects must not leak in."""
    require_testbed(*binaries.KUBERNETES, binaries.LAUNCHER)
    # the DaemonSet controller creates the driver's kubelet-plugin pods, as on a real cluster
    plane = ControlPlane("1.37", controllers=(*DEFAULT_CONTROLLERS, "daemonset-controller"))
    plane.start()
    try:
        yield plane
    finally:
        plane.stop()


def _namespace(api: KubeAPI, name: str) -> None:
    fakecluster.create_ignore_exists(
        api, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    fakecluster.wait_for_service_account(api, name)


def _running(api: KubeAPI, pod: dict[str, Any], ready: bool = True) -> None:
    status = "True" if ready else "False"
    api.apply_status(
        pod,
        {
            "phase": "Running" if ready else "Pending",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Ready", "status": status},
                {"type": "ContainersReady", "status": status},
            ],
        },
    )


def _pods(api: KubeAPI, ns: str) -> list[dict[str, Any]]:
    # list items carry no apiVersion/kind
    return [{"apiVersion": "v1", "kind": "Pod", **p} for p in api.list("v1", "Pod", namespace=ns)]


@pytest.fixture(scope="module")
def healthy(cp: ControlPlane) -> dict[str, Any]:
    api = cp.api
    nodes = fakecluster.add_gpu_nodes(api, "h100-80gb", 2, prefix="vfy", dra=True)
    _namespace(api, DRIVER_NS)
    api.create(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": PLUGIN_DS, "namespace": DRIVER_NS},
            "spec": {
                "selector": {"matchLabels": {"app": PLUGIN_DS}},
                "template": {
                    "metadata": {"labels": {"app": PLUGIN_DS}},
                    "spec": {
                        "nodeSelector": {"nvidia.com/dra-kubelet-plugin": "true"},
                        "containers": [
                            {
                                "name": "gpus",
                                "image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v25.12.0",
                            }
                        ],
                    },
                },
            },
        }
    )
    plugin_pods = api.wait_for(
        "kubelet-plugin pods on both nodes",
        lambda: (lambda ps: ps if len({p["spec"].get("nodeName") for p in ps} - {None}) == 2 else None)(
            _pods(api, DRIVER_NS)
        ),
        timeout=90,
    )
    for p in plugin_pods:
        _running(api, p)
    ns = f"ml-{uuid.uuid4().hex[:6]}"
    _namespace(api, ns)
    api.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": ns},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]
                    }
                }
            },
        }
    )
    pod = api.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "train", "namespace": ns},
            "spec": {
                "nodeSelector": {fakecluster.GROUP_LABEL: "vfy"},
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "gpu"}]},
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            },
        }
    )
    path = resource_path("v1", "Pod", "train", ns)
    pod = api.wait_for(
        "pod train bound",
        lambda: (lambda p: p if p["spec"].get("nodeName") else None)(api.get(path)),
        timeout=60,
    )
    _running(api, pod)
    return {"nodes": nodes, "ns": ns}


def _verify(cp: ControlPlane, *extra: str) -> tuple[int, dict[str, Any]]:
    res = kubedra("verify", "--kubeconfig", str(cp.kubeconfig), "-o", "json", *extra)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def _checks(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in data["checks"]}


def test_verify_passes_on_a_healthy_cluster_and_snapshot_round_trips(
    cp: ControlPlane, healthy: dict[str, Any], tmp_path: Path
) -> None:
    code, data = _verify(cp)
    assert code == 0, json.dumps(data, indent=1)
    checks = _checks(data)
    assert checks["slices"]["checked"] == 2
    assert checks["driver"]["checked"] == 2
    assert checks["claims"]["checked"] == 1
    assert data["serverVersion"] == "v1.37.2"
    # the same from a snapshot, offline, and as its own baseline
    snap = tmp_path / "before.yaml"
    res = kubedra("snapshot", "--kubeconfig", str(cp.kubeconfig), "--name", "testbed", "-o", str(snap))
    assert res.exit_code == 0, res.output
    assert kubedra("verify", "-f", str(snap), "--baseline", str(snap)).exit_code == 0
    text = snap.read_text()
    assert "kind: ResourceSlice" in text
    assert "kind: ResourceClaim" in text
    assert "BEGIN CERTIFICATE" not in text


def test_verify_fails_clearly_on_a_broken_cluster(
    cp: ControlPlane, healthy: dict[str, Any], tmp_path: Path
) -> None:
    api = cp.api
    base = tmp_path / "base.yaml"
    assert kubedra("snapshot", "--kubeconfig", str(cp.kubeconfig), "-o", str(base)).exit_code == 0
    ns = healthy["ns"]
    # a claim nothing can satisfy (more GPUs than a node has), used by a pod: stays unallocated, pod Pending
    api.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "too-big", "namespace": ns},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "allocationMode": "ExactCount",
                                "count": 64,
                            },
                        }
                    ]
                }
            },
        }
    )
    api.create(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "greedy", "namespace": ns},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": [{"name": "gpus"}]},
                    }
                ],
                "resourceClaims": [{"name": "gpus", "resourceClaimName": "too-big"}],
            },
        }
    )
    # driver down on one node: its kubelet-plugin pod is not Ready
    victim = next(p for p in _pods(api, DRIVER_NS) if p["spec"].get("nodeName") == healthy["nodes"][0])
    _running(api, victim, ready=False)
    # a GPU workload is gone
    api.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": ns}})

    code, data = _verify(cp, "--baseline", str(base), "--pending-grace", "0s")
    assert code == 1
    checks = _checks(data)
    claims = " ".join(checks["claims"]["messages"])
    assert f"ResourceClaim {ns}/too-big is not allocated, but Pod {ns}/greedy needs it" in claims
    driver = " ".join(checks["driver"]["messages"])
    assert f"on node {healthy['nodes'][0]} is not Ready" in driver
    assert checks["claim-pods"]["status"] == "fail"
    assert any(
        f"Pod {ns}/train: 1 GPU pod Running in the baseline, 0 now" in m
        for m in checks["baseline"]["messages"]
    )
    res = kubedra("verify", "--kubeconfig", str(cp.kubeconfig))
    assert res.exit_code == 1
    assert "FAILED" in res.stdout
