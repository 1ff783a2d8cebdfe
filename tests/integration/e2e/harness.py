"""Run one scheduling scenario twice: on the testbed (the real kube-scheduler binds the pods and allocates
their claims) and in kubedra's simulation (:mod:`kubedra.scheduler`), and summarise both the same way.

Nodes, slices and DeviceClasses come from kubedra's NVIDIA catalogue (:mod:`kubedra.vendors.nvidia`) and
are created through the API; the simulation is then fed what the API server stored (nodes, slices,
classes, DeviceTaintRules read back), and the pods and ResourceClaimTemplates that were sent. Pods are
created in *phases*: each phase's pods are created in order and the next phase starts once every one of
them is bound or marked unschedulable; the simulation runs the same phases in the same order.

The real scheduler breaks ties between equally scored nodes at random, so the comparison is per node
*class* (a label each scenario gives its node groups): how many pods were bound, how many devices of
each kind (``gpu``, ``mig 3g.40gb``...) each class handed out, and which request or subrequest each
allocation satisfied. Classes with a single node are compared device by device.
"""

from __future__ import annotations

import copy
import itertools
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kubedra.allocator.session import engine_config
from kubedra.k8s.versions import Version
from kubedra.model.parse import parse_object
from kubedra.model.served import lifecycle_db
from kubedra.scheduler.build import build_sim_pods
from kubedra.scheduler.simulator import Scheduler
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.fakecluster import (
    GROUP_LABEL,
    create_ignore_exists,
    listed,
    pod_state,
    ready_node,
    wait_for_service_account,
)
from kubedra.testing.kubeapi import ApiError, KubeAPI, resource_path
from kubedra.vendors.nvidia.dra import device_classes, dra_objects
from kubedra.vendors.nvidia.nodes import dra_node

RESOURCE = "resource.k8s.io/v1"
CLASS_LABEL = "kubedra.dev/e2e-class"
_run_ids = itertools.count()


@dataclass(frozen=True)
class NodeGroup:
    """``count`` nodes of one catalogue model/mode, all labelled with node class ``cls``."""

    cls: str
    model: str
    gpus: int
    mode: str = "full"
    count: int = 1


@dataclass(frozen=True)
class PodSpec:
    name: str
    template: str  # ResourceClaimTemplate name


@dataclass
class Scenario:
    name: str
    groups: list[NodeGroup]
    templates: dict[str, dict[str, Any]]  # name -> ResourceClaimTemplate spec.spec (a ResourceClaim spec)
    phases: list[list[PodSpec]]
    # DeviceTaintRule specs; a pool written ``{<node class>}`` is the first node of that class
    taint_rules: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Summary:
    bound: int
    pending: int
    usage: Counter[tuple[str, str]]  # (node class, device kind) -> devices allocated
    requests: Counter[tuple[str, str]]  # (template, request name in the result) -> results
    per_class_pods: Counter[str]  # node class -> pods bound there
    devices: dict[str, list[str]]  # node class with one node -> allocated device names, sorted

    def comparable(self) -> dict[str, Any]:
        return {
            "bound": self.bound,
            "pending": self.pending,
            "usage": {f"{c}: {k}": n for (c, k), n in sorted(self.usage.items())},
            "requests": {f"{t}: {r}": n for (t, r), n in sorted(self.requests.items())},
            "podsPerClass": dict(sorted(self.per_class_pods.items())),
            "devices": self.devices,
        }


def taint_rule_api(release: str) -> str:
    """The apiVersion ``release`` serves DeviceTaintRule at: the most stable one kubedra's API lifecycle data
    (data/deprecations, :mod:`kubedra.model.lifecycle`) has served there (v1alpha3 at 1.34 and 1.35, v1beta2 at
    1.36, v1 from 1.37; the testbed's control plane enables the off-by-default ones with --runtime-config)."""
    entry = lifecycle_db().best_version("resource.k8s.io", "DeviceTaintRule", Version.parse(release))
    assert entry is not None, f"kubedra's API lifecycle data has no DeviceTaintRule served at {release}"
    return entry.api_version


# ----------------------------------------------------------------------------------------- the testbed


class Testbed:
    """One scenario's objects on the shared control plane: a namespace, its node groups, taint rules."""

    __test__ = False  # not a pytest test class

    def __init__(self, cp: ControlPlane, scenario: Scenario) -> None:
        self.cp = cp
        self.api: KubeAPI = cp.api
        self.scenario = scenario
        run = next(_run_ids)
        self.prefix = f"e2e{run}-{uuid.uuid4().hex[:4]}"
        self.namespace = self.prefix
        self.node_class: dict[str, str] = {}  # node name -> class
        self.slices: list[dict[str, Any]] = []
        self.rules: list[dict[str, Any]] = []
        self.pods: list[dict[str, Any]] = []

    def node_names(self, cls: str) -> list[str]:
        return [n for n, c in self.node_class.items() if c == cls]

    # -------------------------------------------------------------------------------------- set-up

    def create(self) -> None:
        for cls in device_classes(self.cp.version):
            create_ignore_exists(self.api, cls)
        for g in self.scenario.groups:
            for i in range(g.count):
                self._add_node(f"{self.prefix}-{g.cls}-{i}", g)
        for i, spec in enumerate(self.scenario.taint_rules):
            spec = copy.deepcopy(spec)
            sel = spec.get("deviceSelector") or {}
            if "pool" in sel:
                sel["pool"] = sel["pool"].format(
                    **{c: self.node_names(c)[0] for c in set(self.node_class.values())}
                )
            rule = {
                "apiVersion": taint_rule_api(self.cp.version),
                "kind": "DeviceTaintRule",
                "metadata": {"name": f"{self.prefix}-rule-{i}"},
                "spec": spec,
            }
            self.rules.append(self.api.create(rule))
        self.api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        wait_for_service_account(self.api, self.namespace)
        for name, spec in self.scenario.templates.items():
            self.api.create(
                {
                    "apiVersion": RESOURCE,
                    "kind": "ResourceClaimTemplate",
                    "metadata": {"name": name, "namespace": self.namespace},
                    "spec": {"spec": spec},
                }
            )
        if self.rules:
            # The scheduler learns about DeviceTaintRules through an informer: give it a moment before any
            # pod could be scheduled without them.
            time.sleep(2)

    def _add_node(self, name: str, g: NodeGroup) -> None:
        node = dra_node(name, g.model, g.gpus, g.mode, labels={GROUP_LABEL: self.prefix, CLASS_LABEL: g.cls})
        status = node.pop("status")
        node["metadata"].pop("uid", None)
        ready_node(self.api, self.api.create(node), status)
        for s in dra_objects(name, g.model, g.gpus, g.mode, self.cp.version):
            s["metadata"] = {"name": s["metadata"]["name"]}  # no ownerReference to a node UID we do not know
            self.slices.append(self.api.create(s))
        self.node_class[name] = g.cls

    def pod(self, p: PodSpec) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": p.name, "namespace": self.namespace},
            "spec": {
                "nodeSelector": {GROUP_LABEL: self.prefix},
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {
                            "requests": {"cpu": "10m", "memory": "10Mi"},
                            "claims": [{"name": "gpu"}],
                        },
                    }
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": p.template}],
            },
        }

    # -------------------------------------------------------------------------------------- running

    def run(self) -> Summary:
        for phase in self.scenario.phases:
            names = []
            for p in phase:
                pod = self.pod(p)
                self.pods.append(pod)
                self.api.create(pod)
                names.append(p.name)
            self._settle(names)
        # Pods left pending are retried on cluster events; none of the scenarios leaves room for them,
        # and a last look after a pause makes sure of it.
        time.sleep(1)
        self._settle([p["metadata"]["name"] for p in self.pods])
        return self._summary()

    def pending(self) -> list[str]:
        """The pods kube-scheduler left without a node, by name (after :meth:`run`)."""
        return sorted(n for n, p in self._pods().items() if not p["spec"].get("nodeName"))

    def manifests(self) -> list[dict[str, Any]]:
        """What ``kubedra simulate`` reads for this scenario: the cluster as the API server stored it (nodes, their
        slices, DeviceClasses, the scenario's DeviceTaintRules, its ResourceClaimTemplates) and the pods as they
        were sent, in the order they were created."""
        api = self.api
        names = set(self.node_class)
        return [
            *(api.get(resource_path("v1", "Node", n)) for n in self.node_class),
            *(s for s in listed(api, RESOURCE, "ResourceSlice") if s["spec"].get("nodeName") in names),
            *listed(api, RESOURCE, "DeviceClass"),
            *copy.deepcopy(self.rules),
            *listed(api, RESOURCE, "ResourceClaimTemplate", self.namespace),
            *copy.deepcopy(self.pods),
        ]

    def _pods(self) -> dict[str, dict[str, Any]]:
        return {p["metadata"]["name"]: p for p in self.api.list("v1", "Pod", namespace=self.namespace)}

    def _settle(self, names: list[str], timeout: float = 90) -> None:
        def settled() -> bool:
            pods = self._pods()
            return all(n in pods and pod_state(pods[n]) != "waiting" for n in names)

        try:
            self.api.wait_for(f"pods {names} to be bound or unschedulable", settled, timeout=timeout)
        except TimeoutError:
            states = {n: pod_state(p) for n, p in self._pods().items()}
            raise AssertionError(
                f"pods did not settle: {states}\nscheduler log:\n{self.cp.log_tail('kube-scheduler', 40)}"
            ) from None

    def _summary(self) -> Summary:
        kinds = _device_kinds(self.slices)
        pods = self._pods()
        usage: Counter[tuple[str, str]] = Counter()
        requests: Counter[tuple[str, str]] = Counter()
        per_class: Counter[str] = Counter()
        devices: dict[str, list[str]] = {}
        template_of = {
            p["metadata"]["name"]: p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
            for p in self.pods
        }
        bound = 0
        for name, pod in pods.items():
            node = pod["spec"].get("nodeName")
            if not node:
                continue
            bound += 1
            cls = self.node_class[node]
            per_class[cls] += 1
            for st in pod.get("status", {}).get("resourceClaimStatuses") or []:
                claim = self.api.get(
                    resource_path(RESOURCE, "ResourceClaim", st["resourceClaimName"], self.namespace)
                )
                for r in claim["status"]["allocation"]["devices"]["results"]:
                    usage[(cls, kinds[(r["pool"], r["device"])])] += 1
                    requests[(template_of[name], r["request"])] += 1
                    if len(self.node_names(cls)) == 1:
                        devices.setdefault(cls, []).append(r["device"])
        return Summary(
            bound, len(pods) - bound, usage, requests, per_class, {k: sorted(v) for k, v in devices.items()}
        )

    # -------------------------------------------------------------------------------------- kubedra

    def simulate(self) -> Summary:
        """kubedra's simulation of the same phases on the objects the API server stored."""
        api = self.api
        nodes = [_typed(api.get(resource_path("v1", "Node", n))) for n in self.node_class]
        names = set(self.node_class)
        raw_slices = [s for s in listed(api, RESOURCE, "ResourceSlice") if s["spec"].get("nodeName") in names]
        slices = [_typed(s) for s in raw_slices]
        classes = [_typed(c) for c in listed(api, RESOURCE, "DeviceClass")]
        mine = {r["metadata"]["name"] for r in self.rules}
        rules = (
            [
                _typed(r)
                for r in listed(api, taint_rule_api(self.cp.version), "DeviceTaintRule")
                if r["metadata"]["name"] in mine
            ]
            if mine
            else []
        )
        templates = [_typed(t) for t in listed(api, RESOURCE, "ResourceClaimTemplate", self.namespace)]
        # the feature gates the control plane runs with, so that kubedra simulates what its kube-scheduler does
        sim = Scheduler(engine_config(self.cp.version, self.cp.gates()), nodes, classes, slices, rules)
        order = 0
        sim_pods = []
        for phase in self.scenario.phases:
            pods = [_typed(self.pod(p)) for p in phase]
            batch = build_sim_pods(pods, templates, [], start_order=order)
            order += len(batch)
            sim.run(batch)
            sim_pods += batch
        kinds = _device_kinds(raw_slices)
        usage: Counter[tuple[str, str]] = Counter()
        requests: Counter[tuple[str, str]] = Counter()
        per_class: Counter[str] = Counter()
        devices: dict[str, list[str]] = {}
        template_of = {
            p["metadata"]["name"]: p["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
            for p in self.pods
        }
        for sp in sim_pods:
            if sp.node is None:
                continue
            cls = self.node_class[sp.node]
            per_class[cls] += 1
            for claim in sp.claims:
                assert claim.allocation is not None
                for r in claim.allocation.results:
                    usage[(cls, kinds[(r.pool, r.device)])] += 1
                    requests[(template_of[sp.name], r.request)] += 1
                    if len(self.node_names(cls)) == 1:
                        devices.setdefault(cls, []).append(r.device)
        bound = sum(1 for sp in sim_pods if sp.node)
        return Summary(
            bound,
            len(sim_pods) - bound,
            usage,
            requests,
            per_class,
            {k: sorted(v) for k, v in devices.items()},
        )

    # -------------------------------------------------------------------------------------- clean-up

    def delete(self) -> None:
        """Remove everything this scenario created (pods at once: there is no kubelet to confirm)."""
        api = self.api
        for pod in self.pods:
            path = resource_path("v1", "Pod", pod["metadata"]["name"], self.namespace)
            _ignore_missing(lambda path=path: api.request("DELETE", path, {"gracePeriodSeconds": 0}))
        _ignore_missing(lambda: api.request("DELETE", resource_path("v1", "Namespace", self.namespace)))
        for rule in self.rules:
            _ignore_missing(lambda rule=rule: api.delete(rule))
        for s in self.slices:
            _ignore_missing(lambda s=s: api.delete(s))
        for name in self.node_class:
            _ignore_missing(lambda name=name: api.request("DELETE", resource_path("v1", "Node", name)))


def _ignore_missing(call: Any) -> None:
    try:
        call()
    except ApiError as err:
        if err.status != 404:
            raise


def _typed(obj: dict[str, Any]) -> Any:
    parsed = parse_object(copy.deepcopy(obj))
    assert parsed is not None, f"kubedra does not parse {obj.get('kind')}"
    return parsed.obj


def _device_kinds(slices: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(pool, device) -> ``gpu`` or ``mig <profile>``, from the NVIDIA driver's attributes."""
    out = {}
    for s in slices:
        for d in s["spec"].get("devices") or []:
            attrs = d.get("attributes", {})
            kind = (attrs.get("type") or {}).get("string", "?")
            profile = (attrs.get("profile") or {}).get("string")
            out[(s["spec"]["pool"]["name"], d["name"])] = f"{kind} {profile}" if profile else kind
    return out


def exactly(cls: str, count: int = 1, cel: str | None = None, **extra: Any) -> dict[str, Any]:
    """An ``exactly`` request body: ``count`` devices of class ``cls``, with a CEL selector when given."""
    body: dict[str, Any] = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count, **extra}
    if cel:
        body["selectors"] = [{"cel": {"expression": cel}}]
    return body


def claim(*requests: dict[str, Any]) -> dict[str, Any]:
    """A ResourceClaimTemplate's spec.spec with these requests."""
    return {"devices": {"requests": list(requests)}}


Bed = TypeVar("Bed", bound=Testbed)


def beds(new: Callable[..., Bed]) -> Iterator[Callable[..., Bed]]:
    """The body of a bed fixture (``yield from beds(partial(Testbed, controlplane))``): yields a factory that
    builds a bed with ``new(*args)`` and creates it on the control plane; every bed it made is deleted when the
    test ends, whether it passed or not."""
    made: list[Bed] = []

    def make(*args: Any) -> Bed:
        tb = new(*args)
        made.append(tb)
        tb.create()
        return tb

    yield make
    for tb in made:
        tb.delete()
