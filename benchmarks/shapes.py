"""Input shapes shared by the benchmark scripts (plain Kubernetes objects as dicts).

``scheduler_perf_*`` reproduce upstream kube-scheduler's DRA benchmark exactly as Kubernetes v1.37.2 writes
it: kubernetes/kubernetes test/integration/scheduler_perf/dra/performance-config.yaml, workload
``SchedulingWithResourceClaimTemplate/5000pods_500nodes`` (threshold ``dra: 56``, "typically above 70"), and
the templates it names in dra/templates/ (node-with-dra-test-driver.yaml, resourceslice-basic-devices.yaml,
deviceclass.yaml, resourceclaim.yaml, resourceclaimtemplate.yaml, pod-with-claim-template.yaml), Apache-2.0.
"""

from __future__ import annotations

from typing import Any

from kubedra.testing import snapshotgen

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


# ---------------------------------------------------------------------------------------------------------
# A fleet snapshot: ``kubedra snapshot -o json`` of a large GPU training cluster (a performance target, docs/performance.md).

FLEET_MODEL = "H100-80GB"
FLEET_GPUS = 8
FLEET_PODS_PER_NODE = 20
# DaemonSet pods on every node: (namespace, DaemonSet, cpu, memory)
FLEET_DAEMONS = (
    ("kube-system", "kube-proxy", "100m", "128Mi"),
    ("kube-system", "node-local-dns", "25m", "32Mi"),
    ("monitoring", "node-exporter", "100m", "180Mi"),
    ("monitoring", "dcgm-exporter", "100m", "512Mi"),
    ("logging", "fluent-bit", "100m", "256Mi"),
    ("nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-kubelet-plugin", "100m", "256Mi"),
)
TRAIN_NS = snapshotgen.TRAIN_NS
_uid = snapshotgen.uid


def _fleet_pod(  # noqa: PLR0913 - one pod's fields, as the fleet shape lists them
    name: str,
    namespace: str,
    node: str | None,
    owner: tuple[str, str],
    cpu: str,
    memory: str,
    image: str,
    labels: dict[str, str],
    claim: tuple[str, str | None] | None = None,  # (template, generated claim name or None while pending)
) -> dict[str, Any]:
    """A pod as the API server returns it (kubectl get -o json, managedFields scrubbed as snapshot does)."""
    uid = _uid("pod", namespace, name)
    container: dict[str, Any] = {
        "name": "main",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": [
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {
                "name": "NODE_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
            },
            {"name": "LOG_LEVEL", "value": "info"},
        ],
        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access",
                "readOnly": True,
            }
        ],
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always" if owner[0] != "Job" else "Never",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": "default",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
            {
                "effect": "NoExecute",
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "tolerationSeconds": 300,
            },
        ],
        "volumes": [
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                "name": "kube-root-ca.crt",
                            }
                        },
                    ],
                },
            }
        ],
    }
    status: dict[str, Any] = {"phase": "Pending", "qosClass": "Burstable"}
    if claim is not None:
        container["resources"]["claims"] = [{"name": "gpus"}]
        spec["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": claim[0]}]
        spec["tolerations"].append({"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"})
    if node is not None:
        spec["nodeName"] = node
        t = "2026-11-30T08:00:00Z"
        status = {
            "conditions": [
                {"lastTransitionTime": t, "status": "True", "type": c}
                for c in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{uid.replace('-', '')}",
                    "image": image,
                    "imageID": f"{image.split(':')[0]}@sha256:{uid.replace('-', '')}",
                    "lastState": {},
                    "name": "main",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": t}},
                }
            ],
            "hostIP": "10.0.0.1",
            "phase": "Running",
            "podIP": "10.128.0.1",
            "qosClass": "Burstable",
            "startTime": t,
        }
        if claim is not None and claim[1] is not None:
            status["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": claim[1]}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2026-11-30T08:00:00Z",
            "generateName": name.rsplit("-", 1)[0] + "-",
            "labels": labels,
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1" if owner[0] == "Job" else "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": _uid(owner[0], namespace, owner[1]),
                }
            ],
            "resourceVersion": "1",
            "uid": uid,
        },
        "spec": spec,
        "status": status,
    }


def fleet_snapshot_items(nodes: int, pods_per_node: int = FLEET_PODS_PER_NODE, target: str = "1.37") -> Any:
    """Every object of the fleet, in the order ``kubedra snapshot`` lists them (nodes, pods, DRA objects).

    Each node is an 8 x H100-80GB node as kubelet and GPU Feature Discovery report it, with the ResourceSlice
    the NVIDIA DRA driver publishes (8 GPUs, 10 attributes and a memory capacity each). Every node runs
    ``pods_per_node`` pods: the 6 DaemonSet pods of ``FLEET_DAEMONS``; on three nodes of four, 2 training
    pods of a Job, each holding 4 GPUs through a ResourceClaim generated from a template (allocated, reserved
    for the pod), and CPU service pods for the rest; on the fourth node only service pods, so its 8 GPUs are
    free. Then ``nodes // 20`` pending pods of a second Job ask for 8 GPUs each (a whole node): the
    simulation places them on the free nodes. All generated lazily: the file is written item by item."""
    from kubedra.vendors.nvidia import dra as nvidia_dra
    from kubedra.vendors.nvidia import nodes as nvidia_nodes

    names = [f"h100-80gb-{i}" for i in range(nodes)]
    for name in names:
        yield nvidia_nodes.dra_node(name, FLEET_MODEL, FLEET_GPUS, "full", k8s_version=target)
    service = max(pods_per_node - len(FLEET_DAEMONS), 0)
    for i, name in enumerate(names):
        for ns, ds, cpu, mem in FLEET_DAEMONS[:pods_per_node]:
            yield _fleet_pod(
                f"{ds}-{i:05x}",
                ns,
                name,
                ("DaemonSet", ds),
                cpu,
                mem,
                f"registry.example.com/{ds}:v1.4.2",
                {"app": ds},
            )
        train = 2 if i % 4 != 3 and service >= 2 else 0
        for k in range(train):
            pod = f"train-{i // 4:05d}-{i % 4 * 2 + k}"
            claim = f"{pod}-gpus-{_uid(pod)[:5]}"
            yield _fleet_pod(
                pod,
                TRAIN_NS,
                name,
                ("Job", f"train-{i // 4:05d}"),
                "32",
                "256Gi",
                "nvcr.io/nvidia/pytorch:25.10-py3",
                {"job-name": f"train-{i // 4:05d}"},
                ("train-4gpu", claim),
            )
        for k in range(service - train):
            app = f"svc-{(i * 7 + k) % 400:03d}"
            yield _fleet_pod(
                f"{app}-{_uid(i, k)[:10]}-{i:05x}{k:x}",
                "apps",
                name,
                ("ReplicaSet", f"{app}-7d9c"),
                "500m",
                "1Gi",
                f"registry.example.com/{app}:2.3.1",
                {"app": app, "pod-template-hash": "7d9c"},
            )
    for k in range(nodes // 20):
        yield _fleet_pod(
            f"pretrain-0-{k}",
            TRAIN_NS,
            None,
            ("Job", "pretrain"),
            "64",
            "512Gi",
            "nvcr.io/nvidia/pytorch:25.10-py3",
            {"job-name": "pretrain"},
            ("train-8gpu", None),
        )
    yield from nvidia_dra.device_classes(target)
    for name in names:
        yield from nvidia_dra.dra_objects(name, FLEET_MODEL, FLEET_GPUS, "full", target)
    for i, name in enumerate(names):
        if i % 4 == 3 or service < 2:
            continue
        for k in range(2):
            pod = f"train-{i // 4:05d}-{i % 4 * 2 + k}"
            devices = [f"gpu-{g}" for g in range(4 * k, 4 * k + 4)]
            claim = f"{pod}-gpus-{_uid(pod)[:5]}"
            yield snapshotgen.allocated_claim(pod, name, devices, claim, block_owner_deletion=True)
    yield from snapshotgen.claim_templates()


def write_fleet_snapshot(path: str, nodes: int, pods_per_node: int = FLEET_PODS_PER_NODE) -> int:
    """Write the fleet as ``kubedra snapshot -o fleet.json`` does (a ``List`` with the ``kubedra`` header,
    ``json.dumps(indent=1)``), one item at a time; returns the number of items."""
    import json

    header = snapshotgen.snapshot_header(f"fleet-{nodes}")
    head = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "kubedra": header}, indent=1)
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(head[:-2] + ',\n "items": [')
        for obj in fleet_snapshot_items(nodes, pods_per_node):
            f.write(
                ("\n  " if not count else ",\n  ")
                + json.dumps(obj, indent=1, ensure_ascii=False).replace("\n", "\n  ")
            )
            count += 1
        f.write("\n ]\n}\n")
    return count
