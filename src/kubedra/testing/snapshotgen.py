"""A snapshot shaped like a real mixed GPU cluster, as ``kubedra snapshot -o FILE.json`` writes one.

For the scaling checks of simulate, verify, plan and audit (``benchmarks/realistic.py`` and the unit test that
pins that no step grows with the square of the cluster). The fleet is half device plugin, half DRA:

- ``nodes`` Nodes of 8 x H100-80GB as kubelet and GPU Feature Discovery report them (the model's vendor's
  catalogue, through :mod:`kubedra.vendors`); even-numbered ones run the vendor's DRA driver (one ResourceSlice
  each, the driver's DeviceClasses), odd-numbered ones the device plugin (``nvidia.com/gpu: 8`` in capacity and
  allocatable). A label says which.
- The DaemonSets a snapshot keeps (kube-system and GPU infrastructure): kube-proxy and dcgm-exporter on every
  node, the device plugin on the device-plugin nodes, the DRA driver's kubelet plugin on the DRA nodes (by
  nodeSelector), and their running pods, each with ``nodeName`` and the ``metadata.name`` affinity the
  DaemonSet controller writes.
- ``pods_per_node`` running pods per node in all (``nodeName``, cpu/memory requests, Running status): the
  DaemonSet pods; on three nodes of four, 2 training pods of a Job holding 4 GPUs each (on a DRA node through
  a ResourceClaim generated from a template and allocated on that node, reserved for the pod; on a
  device-plugin node through ``nvidia.com/gpu: 4``); service pods for the rest. The fourth node's 8 GPUs are
  free.
- ``nodes // 20`` pending pods (no ``nodeName``) of a Job asking for a whole node's 8 GPUs, half through
  ``nvidia.com/gpu``, half through a ResourceClaimTemplate.
- With ``preempt``, the shape of a cluster whose urgent work evicts running work: every node runs its 2
  training pods (no GPU is free, so the pending pods above stay pending), and ``nodes // 20`` more pending
  8-GPU pods of a higher PriorityClass (``PREEMPT_CLASS``, admitted with its value in ``spec.priority``), half
  through ``nvidia.com/gpu``, half through a ResourceClaimTemplate, each of which can only be placed by
  preempting the two training pods of a node of its kind. kube-scheduler does not preempt for DRA devices, so
  in simulate's DRA view they stay pending (each node tried and found blocked by the DRA filter).

Everything is generated lazily, so a file of any size is written item by item (:func:`write`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

from kubedra import vendors

MODEL = "H100-80GB"


def _vendor(model: str) -> vendors.Vendor:
    vendor = vendors.for_model(model)
    assert vendor is not None, model
    return vendor


VENDOR = _vendor(MODEL)  # the vendor whose catalogue the nodes, slices and classes come from
GPUS = 8
PODS_PER_NODE = 20
TARGET = "1.37"
TRAIN_NS = "ml"
MODE_LABEL = "example.com/gpu-stack"  # "dra" or "device-plugin"
# (namespace, DaemonSet, cpu, memory, nodeSelector value of MODE_LABEL or None for every node)
# The GPU DaemonSets are told apart by their names' words only (plan: a "dra-driver" namespace or name and a
# "kubelet-plugin" name), as for any vendor; their images are placeholders.
DAEMONS = (
    ("kube-system", "kube-proxy", "100m", "128Mi", None),
    ("gpu-operator", "gpu-metrics-exporter", "100m", "512Mi", None),
    ("gpu-operator", "gpu-device-plugin-daemonset", "50m", "64Mi", "device-plugin"),
    ("gpu-dra-driver", "gpu-dra-driver-kubelet-plugin", "100m", "256Mi", "dra"),
)
TRAIN_IMAGE = "registry.example.com/ml/pytorch:25.10-py3"
T = "2026-11-30T08:00:00Z"
PREEMPT_CLASS = ("urgent-training", 100000)  # the PriorityClass of the preempting pods and its value


def uid(*parts: object) -> str:
    """A stable object UID made of ``parts``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def _is_dra(index: int) -> bool:
    return index % 2 == 0


def node_name(index: int) -> str:
    return f"{'dra' if _is_dra(index) else 'dp'}-h100-{index:05d}"


def _pin(node: str) -> dict[str, Any]:
    """The affinity the DaemonSet controller writes on each of its pods."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def _pod_spec(
    image: str, cpu: str, memory: str, gpus: int = 0, claim: str | None = None, selector: str | None = None
) -> dict[str, Any]:
    limits: dict[str, Any] = {"memory": memory}
    if gpus:
        limits[VENDOR.gpu_resource] = str(gpus)
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}, "limits": limits}
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                "resources": resources,
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists"},
        ],
    }
    if selector is not None:
        spec["nodeSelector"] = {MODE_LABEL: selector}
    if claim is not None:
        resources["claims"] = [{"name": "gpus"}]
        spec["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": claim}]
    if gpus or claim is not None:
        spec["tolerations"].append({"effect": "NoSchedule", "key": VENDOR.gpu_resource, "operator": "Exists"})
    return spec


def _pod(
    name: str,
    namespace: str,
    owner: tuple[str, str],
    spec: dict[str, Any],
    node: str | None,
    labels: dict[str, str],
    claim_name: str | None = None,
) -> dict[str, Any]:
    """A pod as the API server returns it (managedFields scrubbed as ``kubedra snapshot`` does)."""
    spec = json.loads(json.dumps(spec))  # each pod its own objects, as decoded from a real file
    status: dict[str, Any] = {"phase": "Pending", "qosClass": "Burstable"}
    if node is not None:
        spec["nodeName"] = node
        status = {
            "conditions": [
                {"lastTransitionTime": T, "status": "True", "type": c}
                for c in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "hostIP": "10.0.0.1",
            "phase": "Running",
            "podIP": "10.128.0.1",
            "qosClass": "Burstable",
            "startTime": T,
        }
        if claim_name is not None:
            status["resourceClaimStatuses"] = [{"name": "gpus", "resourceClaimName": claim_name}]
    api = "batch/v1" if owner[0] == "Job" else "apps/v1"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": T,
            "generateName": name.rsplit("-", 1)[0] + "-",
            "labels": labels,
            "name": name,
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": api,
                    "controller": True,
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": uid(*owner),
                }
            ],
            "uid": uid("pod", namespace, name),
        },
        "spec": spec,
        "status": status,
    }


def claim_spec(count: int) -> dict[str, Any]:
    return {
        "devices": {
            "requests": [
                {
                    "name": "gpus",
                    "exactly": {
                        "deviceClassName": VENDOR.gpu_class,
                        "allocationMode": "ExactCount",
                        "count": count,
                    },
                }
            ]
        }
    }


def allocated_claim(
    pod: str, node: str, devices: list[str], name: str, *, block_owner_deletion: bool = False
) -> dict[str, Any]:
    """The ResourceClaim the resourceclaim controller generated for ``pod`` (namespace ``TRAIN_NS``), allocated
    on ``node`` (its pool) and reserved for the pod."""
    pod_uid = uid("pod", TRAIN_NS, pod)
    owner: dict[str, Any] = {"apiVersion": "v1"}
    if block_owner_deletion:
        owner["blockOwnerDeletion"] = True
    owner.update({"controller": True, "kind": "Pod", "name": pod, "uid": pod_uid})
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "annotations": {"resource.kubernetes.io/pod-claim-name": "gpus"},
            "generateName": f"{pod}-gpus-",
            "name": name,
            "namespace": TRAIN_NS,
            "ownerReferences": [owner],
            "uid": uid("claim", name),
        },
        "spec": claim_spec(len(devices)),
        "status": {
            "allocation": {
                "devices": {
                    "results": [
                        {"device": d, "driver": VENDOR.driver, "pool": node, "request": "gpus"}
                        for d in devices
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                    ]
                },
            },
            "reservedFor": [{"name": pod, "resource": "pods", "uid": pod_uid}],
        },
    }


def claim_templates() -> Iterator[dict[str, Any]]:
    """The training Jobs' ResourceClaimTemplates: 4 and 8 GPUs."""
    for tmpl, count in (("train-4gpu", 4), ("train-8gpu", 8)):
        yield {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": tmpl, "namespace": TRAIN_NS},
            "spec": {"spec": claim_spec(count)},
        }


def snapshot_header(cluster: str) -> dict[str, Any]:
    """The ``kubedra`` header of a snapshot of ``cluster`` (a 1.37 cluster with DRA on)."""
    return {
        "format": "kubedra.io/snapshot/v1",
        "cluster": cluster,
        "serverVersion": "v1.37.0",
        "capturedAt": "2026-12-01T00:00:00Z",
        "kubedraVersion": "0.1.0",
        "servedAPIs": ["apps/v1", "batch/v1", "resource.k8s.io/v1", "v1"],
        "featureGates": {"DynamicResourceAllocation": True},
        "metrics": "",
        "helmReleases": [],
        "notInspected": [],
    }


def _daemonset(namespace: str, name: str, cpu: str, memory: str, selector: str | None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace, "uid": uid("DaemonSet", name)},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": _pod_spec(f"registry.example.com/{name}:v1.4.2", cpu, memory, selector=selector),
            },
        },
        "status": {"desiredNumberScheduled": 0, "numberReady": 0},
    }


def _train_pod(i: int, k: int) -> tuple[str, str]:
    pod = f"train-{i // 4:05d}-{i % 4 * 2 + k}"
    return pod, f"{pod}-gpus-{uid(pod)[:5]}"


def _trained(i: int, preempt: bool) -> bool:
    """Whether node ``i`` runs training pods (all but every fourth, or all with ``preempt``)."""
    return preempt or i % 4 != 3


def _priority_class() -> dict[str, Any]:
    name, value = PREEMPT_CLASS
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name, "uid": uid("PriorityClass", name)},
        "value": value,
        "preemptionPolicy": "PreemptLowerPriority",
        "description": "training that may evict other training",
    }


def _pending(prefix: str, count: int, priority: tuple[str, int] | None) -> Iterator[dict[str, Any]]:
    """``count`` pending pods of Job ``prefix`` asking for a whole node's GPUs, alternately through the
    device plugin's resource and a ResourceClaimTemplate."""
    for k in range(count):
        if k % 2:
            spec = _pod_spec(TRAIN_IMAGE, "64", "512Gi", claim="train-8gpu")
        else:
            spec = _pod_spec(TRAIN_IMAGE, "64", "512Gi", gpus=8)
        if priority is not None:
            spec["priorityClassName"], spec["priority"] = priority
        yield _pod(f"{prefix}-{k}", TRAIN_NS, ("Job", prefix), spec, None, {"job-name": prefix})


def items(nodes: int, pods_per_node: int = PODS_PER_NODE, preempt: bool = False) -> Iterator[dict[str, Any]]:
    """Every object, in the order ``kubedra snapshot`` lists them (nodes, workloads, pods, DRA objects)."""
    names = [node_name(i) for i in range(nodes)]
    for i, name in enumerate(names):
        stack = "dra" if _is_dra(i) else "device-plugin"
        dp = not _is_dra(i)
        yield VENDOR.simulated_node(
            name, MODEL, GPUS, "full", TARGET, device_plugin=dp, labels={MODE_LABEL: stack}
        )[0]
    for ns, ds, cpu, mem, sel in DAEMONS:
        yield _daemonset(ns, ds, cpu, mem, sel)
    if preempt:
        yield _priority_class()
    for i, name in enumerate(names):
        stack = "dra" if _is_dra(i) else "device-plugin"
        daemons = [d for d in DAEMONS if d[4] in (None, stack)][:pods_per_node]
        for ns, ds, cpu, mem, sel in daemons:
            spec = _pod_spec(f"registry.example.com/{ds}:v1.4.2", cpu, mem, selector=sel)
            spec["affinity"] = _pin(name)
            yield _pod(f"{ds}-{i:05x}", ns, ("DaemonSet", ds), spec, name, {"app": ds})
        service = max(pods_per_node - len(daemons), 0)
        train = 2 if _trained(i, preempt) and service >= 2 else 0
        for k in range(train):
            pod, claim = _train_pod(i, k)
            image = TRAIN_IMAGE
            if _is_dra(i):
                spec = _pod_spec(image, "32", "256Gi", claim="train-4gpu")
            else:
                spec = _pod_spec(image, "32", "256Gi", gpus=4)
            job = f"train-{i // 4:05d}"
            yield _pod(
                pod, TRAIN_NS, ("Job", job), spec, name, {"job-name": job}, claim if _is_dra(i) else None
            )
        for k in range(service - train):
            app = f"svc-{(i * 7 + k) % 400:03d}"
            spec = _pod_spec(f"registry.example.com/{app}:2.3.1", "500m", "1Gi")
            labels = {"app": app, "pod-template-hash": "7d9c"}
            yield _pod(f"{app}-7d9c-{i:05x}{k:x}", "apps", ("ReplicaSet", f"{app}-7d9c"), spec, name, labels)
    yield from _pending("pretrain", nodes // 20, None)
    if preempt:
        yield from _pending("urgent", nodes // 20, PREEMPT_CLASS)
    yield from VENDOR.simulated_device_classes(TARGET)
    for i, name in enumerate(names):
        if _is_dra(i):
            yield from VENDOR.simulated_node(name, MODEL, GPUS, "full", TARGET, device_plugin=False)[1:]
    for i, name in enumerate(names):
        if not _is_dra(i) or not _trained(i, preempt) or pods_per_node - len(DAEMONS) + 1 < 2:
            continue
        for k in range(2):
            pod, claim = _train_pod(i, k)
            yield allocated_claim(pod, name, [f"gpu-{g}" for g in range(4 * k, 4 * k + 4)], claim)
    yield from claim_templates()


def write(path: str, nodes: int, pods_per_node: int = PODS_PER_NODE, preempt: bool = False) -> int:
    """Write the snapshot as ``kubedra snapshot -o FILE.json`` does (a ``List``, ``json.dumps(indent=1)``,
    the ``kubedra`` header after the items); returns the number of items."""
    header = snapshot_header(f"mixed-{nodes}")
    if preempt:
        header["servedAPIs"] = sorted([*header["servedAPIs"], "scheduling.k8s.io/v1"])
    count = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write('{\n "apiVersion": "v1",\n "kind": "List",\n "metadata": {},\n "items": [')
        for obj in items(nodes, pods_per_node, preempt):
            f.write(("\n  " if not count else ",\n  ") + json.dumps(obj, indent=1).replace("\n", "\n  "))
            count += 1
        f.write('\n ],\n "kubedra": ' + json.dumps(header, indent=1).replace("\n", "\n ") + "\n}\n")
    return count
