"""Regenerate the plan fixtures: three cluster snapshots built from the NVIDIA catalogue plus workloads.

    .venv/bin/python tests/unit/plan/data/generate.py

dev (kubeadm, 1.36, 2 A100 nodes, light load), staging (EKS, 1.35, 4 H100 + 2 L40S nodes, one node already on
DRA), prod (GKE, 1.36, 10 H100 nodes nearly full so a 10% wave cannot be drained, a Helm release with a removed
API: an audit blocker).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kubedra.model.snapshot import Header, HelmRelease, Snapshot, write
from kubedra.vendors.nvidia import dra as nvidia_dra
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster

HERE = Path(__file__).parent
CAPTURED = "2026-06-01T08:00:00Z"


def gpu_pod(name: str, ns: str, node: str, gpus: int, owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "controller": True}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "main", "image": "trainer:1", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
            ],
        },
        "status": {"phase": "Running"},
    }


def deployment(name: str, ns: str, replicas: int, gpus: int, pool: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "server:1", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
        ]
    }
    if pool:
        spec["nodeSelector"] = {"kubedra.io/node-pool": pool}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}}, "spec": spec}},
    }


def device_plugin_ds() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "nvidia-device-plugin-ctr",
                            "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
                        }
                    ]
                }
            }
        },
    }


def nodes(spec: str, k8s: str, dra_nodes: int = 0) -> list[dict[str, Any]]:
    out = nvidia_cluster(spec, "full", k8s, device_plugin=True)
    if dra_nodes:
        # the last nodes are already on DRA: no extended resources, their slices published
        for node in out[-dra_nodes:]:
            node["metadata"]["labels"]["kubedra.io/gpu-stack"] = "dra"
            for part in ("capacity", "allocatable"):
                node["status"][part].pop("nvidia.com/gpu", None)
    return out


def dev() -> Snapshot:
    items = nodes("2x8xA100-80GB", "1.36")
    items.append(device_plugin_ds())
    items.append(deployment("notebook", "research", 3, 1))
    items += [
        gpu_pod(f"notebook-7d9f-{i}", "research", f"a100-80gb-{i % 2}", 1, "notebook-7d9f") for i in range(3)
    ]
    return Snapshot(
        Header("dev", "v1.36.2", CAPTURED, "0.1.0", ["v1", "apps/v1", "resource.k8s.io/v1"]), items
    )


def staging() -> Snapshot:
    items = nodes("4x8xH100-80GB,2x4xL40S-48GB", "1.35", dra_nodes=0)
    # one H100 node already moved to DRA in an earlier test: its label, no nvidia.com/gpu, and its slices
    h100_3 = next(n for n in items if n["metadata"]["name"] == "h100-80gb-3")
    h100_3["metadata"]["labels"]["kubedra.io/gpu-stack"] = "dra"
    for part in ("capacity", "allocatable"):
        h100_3["status"][part].pop("nvidia.com/gpu", None)
    items += nvidia_dra.device_classes("1.35")
    items += nvidia_dra.dra_objects("h100-80gb-3", "H100-80GB", 8, "full", "1.35")
    items.append(device_plugin_ds())
    items += [gpu_pod(f"train-{i}", "ml", f"h100-80gb-{i % 3}", 4) for i in range(3)]
    items += [gpu_pod(f"infer-{i}", "ml", f"l40s-48gb-{i % 2}", 1) for i in range(4)]
    return Snapshot(
        Header("staging", "v1.35.4", CAPTURED, "0.1.0", ["v1", "apps/v1", "resource.k8s.io/v1"]), items
    )


def prod() -> Snapshot:
    items = nodes("10x8xH100-80GB", "1.36")
    items.append(device_plugin_ds())
    # 76 of 80 GPUs busy: draining one 8-GPU node leaves 72
    items += [gpu_pod(f"llm-{i}", "serving", f"h100-80gb-{i % 10}", 4) for i in range(19)]
    items.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
            "data": {
                "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n"
            },
        }
    )
    header = Header("prod", "v1.36.1", CAPTURED, "0.1.0", ["v1", "apps/v1", "resource.k8s.io/v1"])
    header.helm_releases = [
        HelmRelease(
            "batch-scheduler",
            "sched",
            "batch-scheduler",
            "0.9.0",
            4,
            "deployed",
            [
                {
                    "apiVersion": "resource.k8s.io/v1alpha3",
                    "kind": "DeviceClass",
                    "name": "legacy-gpu",
                    "namespace": "",
                }
            ],
        )
    ]
    return Snapshot(header, items)


def main() -> int:
    for name, build in (("dev", dev), ("staging", staging), ("prod", prod)):
        write(build(), str(HERE / f"{name}.yaml"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
