"""What the scheduler needs to know about a pod: effective requests, placement constraints and claims.

Effective requests follow ``k8s.io/component-helpers/resource.PodRequests``: the sum over containers and
restartable (sidecar) init containers, at least the largest regular init container plus the sidecars
started before it, plus pod overhead. Scoring uses "non-zero" requests (100m CPU / 200Mi memory for a
container without requests), like NodeResourcesFit does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s import namespaces
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import Container, Pod, ResourceClaim

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


def amount(name: str, q: Quantity) -> int:
    """Integer units the scheduler compares: millicores for CPU, units (rounded up) for the rest."""
    return q.milli_value() if name == CPU else q.value()


def _container_requests(c: Container) -> dict[str, int]:
    # requests default to limits when only limits are set (API defaulting)
    merged = dict(c.limits)
    merged.update(c.requests)
    return {k: amount(k, v) for k, v in merged.items()}


def _add(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for k, v in other.items():
        if v > into.get(k, 0):
            into[k] = v


def pod_requests(pod: Pod) -> dict[str, int]:
    reqs: dict[str, int] = {}
    for c in pod.containers:
        _add(reqs, _container_requests(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in pod.init_containers:
        r = _container_requests(c)
        if c.restart_policy == "Always":
            _add(reqs, r)
            _add(sidecars, r)
            _max(init_max, sidecars)
        else:
            peak = dict(sidecars)
            _add(peak, r)
            _max(init_max, peak)
    _max(reqs, init_max)
    for k, v in pod.overhead.items():
        reqs[k] = reqs.get(k, 0) + amount(k, v)
    return reqs


def nonzero_requests(pod: Pod) -> tuple[int, int]:
    """(milli CPU, memory bytes) for scoring, with upstream's defaults for containers without requests."""
    cpu = mem = 0
    for c in pod.containers:
        r = _container_requests(c)
        cpu += r.get(CPU, DEFAULT_MILLI_CPU) if CPU in r else DEFAULT_MILLI_CPU
        mem += r.get(MEMORY, DEFAULT_MEMORY) if MEMORY in r else DEFAULT_MEMORY
    for k, v in pod.overhead.items():
        if k == CPU:
            cpu += amount(k, v)
        elif k == MEMORY:
            mem += amount(k, v)
    return cpu, mem


@dataclass(eq=False, slots=True)
class SimPod:
    """A pod in the simulation. ``claims`` are its ResourceClaims in ``spec.resourceClaims`` order (those
    generated from templates are the pod's own; those referenced by name may be shared with other pods),
    with the claim generated for DRA extended resources last, like the scheduler orders them.

    Slotted, and ``requests`` shared between pods with equal requests (never changed in place): a large
    cluster's running pods are most of a simulation's objects."""

    pod: Pod
    order: int
    priority: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    score_cpu: int = 0
    score_mem: int = 0
    claims: list[ResourceClaim] = field(default_factory=list)
    gang: str | None = None  # PodGroup name (namespace-qualified)
    owner: str = ""  # workload the pod was expanded from, e.g. "Deployment/ns/name"
    node: str | None = None
    reason: str | None = None
    devices: Sequence[str] = ()  # driver/pool/device of its allocated devices, once bound
    preempted_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def namespace(self) -> str:
        return namespaces.effective(self.pod.meta.namespace)

    @property
    def name(self) -> str:
        return self.pod.meta.name
