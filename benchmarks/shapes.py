"""Input shapes shared by the benchmark scripts (plain Kubernetes objects as dicts).

``scheduler_perf_*`` reproduce upstream kube-scheduler's DRA benchmark exactly as Kubernetes v1.37.2 writes
it: kubernetes/kubernetes test/integration/scheduler_perf/dra/performance-config.yaml, workload
``SchedulingWithResourceClaimTemplate/5000pods_500nodes`` (threshold ``dra: 56``, "typically above 70"), and
the templates it names in dra/templates/ (node-with-dra-test-driver.yaml, resourceslice-basic-devices.yaml,
deviceclass.yaml, resourceclaim.yaml, resourceclaimtemplate.yaml, pod-with-claim-template.yaml), Apache-2.0.
"""

from __future__ import annotations

from typing import Any

DRIVER = "test-driver.cdi.k8s.io"
CLASS = "test-class"


def scheduler_perf_node(index: int) -> dict[str, Any]:
    """templates/node-with-dra-test-driver.yaml, with allocatable = capacity as a kubelet would report it
    (the template writes capacity only)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"scheduler-perf-dra-{index}", "labels": {"node-with-dra": "true"}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"status": "True", "type": "Ready"}],
            "phase": "Running",
        },
    }


def scheduler_perf_slice(index: int, devices: int = 10, pci_roots: int = 2) -> dict[str, Any]:
    """templates/resourceslice-basic-devices.yaml: one slice per node, ``devices`` devices with the 13
    attributes of an Intel Arc Pro B60 and 2 capacities (memory 24480Mi, millicores 1k)."""
    return {
        "kind": "ResourceSlice",
        "apiVersion": "resource.k8s.io/v1",
        "metadata": {"name": f"resourceslice-{index}"},
        "spec": {
            "pool": {"name": f"resourceslice-{index}", "generation": 1, "resourceSliceCount": 1},
            "driver": DRIVER,
            "nodeName": f"scheduler-perf-dra-{index}",
            "devices": [
                {
                    "name": f"basic-device-{i}",
                    "attributes": {
                        "driver": {"string": "xe"},
                        "driverVersion": {"version": "1.2.3"},
                        "resource.k8s.io/pciRoot": {"string": f"{i % pci_roots}"},
                        "family": {"string": "Arc Pro B-Series"},
                        "health": {"string": "Healthy"},
                        "model": {"string": "B60"},
                        "pciAddress": {"string": f"0000:0{i}:00.0"},
                        "pciId": {"string": "0xe211"},
                        "pciRoot": {"string": f"0{i % pci_roots}"},
                        "resource.kubernetes.io/pciBusID": {"string": f"0000:0{i}:00.0"},
                        "resource.kubernetes.io/pciRoot": {"string": f"pci0000:0{i % pci_roots}"},
                        "sriov": {"bool": True},
                        "type": {"string": "gpu"},
                    },
                    "capacity": {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}},
                }
                for i in range(devices)
            ],
        },
    }


def driver_class(name: str = CLASS, driver: str = DRIVER) -> dict[str, Any]:
    """templates/deviceclass.yaml: a DeviceClass selecting every device of ``driver``."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def _claim_spec() -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": CLASS}}]}}


def scheduler_perf_allocated_claim(index: int, nodes: int) -> dict[str, Any]:
    """templates/resourceclaim.yaml in namespace ``init``, allocated as the ``allocResourceClaims`` op leaves
    it. Upstream picks a random node per claim; here claim ``i`` takes device ``i // nodes`` of node
    ``i % nodes``, so 2,500 claims on 500 nodes use 5 of every node's 10 devices (same total, deterministic)."""
    node = index % nodes
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": f"test-claim-{index}", "namespace": "init"},
        "spec": _claim_spec(),
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {
                            "request": "req-0",
                            "driver": DRIVER,
                            "pool": f"resourceslice-{node}",
                            "device": f"basic-device-{index // nodes}",
                        }
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {
                                    "key": "metadata.name",
                                    "operator": "In",
                                    "values": [f"scheduler-perf-dra-{node}"],
                                }
                            ]
                        }
                    ]
                },
            }
        },
    }


def scheduler_perf_claim_template() -> dict[str, Any]:
    """templates/resourceclaimtemplate.yaml with numRequests 1, no selectors or constraints, namespace test."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template", "namespace": "test"},
        "spec": {"spec": _claim_spec()},
    }


def scheduler_perf_pod(index: int) -> dict[str, Any]:
    """templates/pod-with-claim-template.yaml (upstream uses generateName ``test-dra``; a file needs names)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"test-dra{index}", "namespace": "test"},
        "spec": {
            "containers": [
                {
                    "image": "registry.k8s.io/pause:3.10.1",
                    "name": "pause",
                    "resources": {"claims": [{"name": "resource"}]},
                }
            ],
            "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}],
        },
    }


def scheduler_perf_objects(
    nodes: int = 500, devices: int = 10, init_claims: int = 2500, measure_pods: int = 2500
) -> list[dict[str, Any]]:
    """Every object of ``SchedulingWithResourceClaimTemplate/5000pods_500nodes`` (v1.37.2 params:
    nodesWithDRA 500, numDevices 10, initClaims 2500, measurePods 2500), in upstream's creation order."""
    out: list[dict[str, Any]] = [scheduler_perf_node(i) for i in range(nodes)]
    out += [scheduler_perf_slice(i, devices) for i in range(nodes)]
    out.append(driver_class())
    out += [scheduler_perf_allocated_claim(i, nodes) for i in range(init_claims)]
    out.append(scheduler_perf_claim_template())
    out += [scheduler_perf_pod(i) for i in range(measure_pods)]
    return out
