"""What the scheduler needs to know about a pod: effective requests, placement constraints and claims.

Effective requests follow ``k8s.io/component-helpers/resource.PodRequests``: the sum over containers and
restartable (sidecar) init containers, at least the largest regular init container plus the sidecars
started before it, plus pod overhead. Scoring uses "non-zero" requests (100m CPU / 200Mi memory for a
container without requests), like NodeResourcesFit does.

Like kube-scheduler, the sums are of quantities (``Quantity.Add``, the larger by ``Cmp``) as API defaulting
left them (each rounded up to milli-units), read as integers once per resource (``Resource.SetMaxResource``:
``MilliValue()`` for CPU, ``Value()`` for the rest), so two containers of ``0.5`` bytes of memory ask for 1 byte,
not 2 (two of ``0.5m`` CPU ask for 2 millicores: each was rounded up to ``1m``); each release reads past int64 as
its apimachinery does (:func:`amount`). A pod whose reading the release's int64 arithmetic would misuse (:func:`unmodelled`) is not
simulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s import namespaces, versions
from kubedra.k8s.podadmission import MILLI
from kubedra.k8s.quantity import NANO, Quantity, quantity_rules
from kubedra.model.objects import Container, Node, Pod, ResourceClaim

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024


_MAX_INT64 = (1 << 63) - 1
MAX_NODE_SCORE = 100  # fwk.MaxNodeScore: LeastAllocated/MostAllocated multiply an int64 by it
_DEFAULTS = {
    CPU: Quantity(DEFAULT_MILLI_CPU * NANO // 1000, "DecimalSI", -3),
    MEMORY: Quantity.from_int(DEFAULT_MEMORY),
}


def _rules(release: str) -> bool:
    return versions.holds("quantity.nineteenDigitInt64", release)


def amount(name: str, q: Quantity, release: str = versions.DEFAULT_TARGET) -> int:
    """Integer units the scheduler compares, as ``release``'s kube-scheduler reads ``q``: ``MilliValue()`` for
    CPU, ``Value()`` for the rest, rounded up; past int64 1.36/1.37 wrap or read 0, 1.38 saturates
    (:meth:`Quantity.scaled_value`, tests/conformance/quantity/scaled-value.yaml), of the value API defaulting
    rounded up to milli-units (:func:`kubedra.k8s.podadmission.admitted`)."""
    since = _rules(release)
    return q.at(since).round_up(MILLI).scaled_value(MILLI if name == CPU else 0, since)


def _container_quantities(c: Container, since_138: bool, fill: bool = False) -> dict[str, Quantity]:
    # requests default to limits when only limits are set (API defaulting); ``fill``: NonMissingContainerRequests
    merged = dict(c.limits)
    merged.update(c.requests)
    if fill:
        for k, v in _DEFAULTS.items():
            merged.setdefault(k, v)
    return {k: v.at(since_138).round_up(MILLI) for k, v in merged.items()}  # as API defaulting left them


def _add(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
    for k, v in other.items():  # addResourceList: Quantity.Add, in the release's rules (quantity_rules)
        into[k] = into[k].add(v) if k in into else v


def _max(into: dict[str, Quantity], other: dict[str, Quantity]) -> None:
    for k, v in other.items():  # maxResourceList: Cmp
        if k not in into or v.cmp(into[k]) > 0:
            into[k] = v


def _pod_quantities(pod: Pod, since_138: bool, fill: bool = False) -> dict[str, Quantity]:
    """``PodRequests`` (component-helpers resource/helpers.go AggregateContainerRequests) as quantities."""
    reqs: dict[str, Quantity] = {}
    with quantity_rules(since_138):
        for c in pod.containers:
            _add(reqs, _container_quantities(c, since_138, fill))
        sidecars: dict[str, Quantity] = {}
        init_max: dict[str, Quantity] = {}
        for c in pod.init_containers:
            r = _container_quantities(c, since_138, fill)
            if c.restart_policy == "Always":
                _add(reqs, r)
                _add(sidecars, r)
                _max(init_max, sidecars)
            else:
                peak = dict(r)
                _add(peak, sidecars)
                _max(init_max, peak)
        _max(reqs, init_max)
        _add(reqs, {k: v.at(since_138).round_up(MILLI) for k, v in pod.overhead.items()})
    return reqs


def pod_requests(pod: Pod, release: str = versions.DEFAULT_TARGET) -> dict[str, int]:
    """The pod's requests per resource as ``release``'s NodeResourcesFit reads them (:func:`amount` of the
    summed quantities)."""
    return {k: amount(k, q, release) for k, q in _pod_quantities(pod, _rules(release)).items()}


def nonzero_requests(pod: Pod, release: str = versions.DEFAULT_TARGET) -> tuple[int, int]:
    """(milli CPU, memory bytes) for scoring, with upstream's defaults for containers without requests."""
    since = _rules(release)
    cpu = mem = Quantity(0, "DecimalSI", 0)
    with quantity_rules(since):
        for c in pod.containers:
            r = _container_quantities(c, since, fill=True)
            cpu, mem = cpu.add(r[CPU]), mem.add(r[MEMORY])
        for k, v in pod.overhead.items():
            if k == CPU:
                cpu = cpu.add(v.at(since).round_up(MILLI))
            elif k == MEMORY:
                mem = mem.add(v.at(since).round_up(MILLI))
    return amount(CPU, cpu, release), amount(MEMORY, mem, release)


def unmodelled(pod: Pod, release: str = versions.DEFAULT_TARGET) -> str | None:
    """Why kubedra cannot simulate ``pod`` at ``release``, or None: a request that ``release`` reads as a
    negative int64 (1.36/1.37 wrap past it): the node's int64 sums of requests would then wrap too, which
    kubedra's do not."""
    since = _rules(release)
    for k, q in _pod_quantities(pod, since).items():
        n = amount(k, q, release)
        if n < 0 <= q.sign():
            unit = "milli-units" if k == CPU else "units"
            return (
                f"its {k} request {q} reads as {n} {unit} at {release} (Quantity past int64 wraps there): "
                "kube-scheduler's int64 sums would wrap too, which kubedra does not model"
            )
    return None


def node_unmodelled(node: Node, release: str = versions.DEFAULT_TARGET) -> str | None:
    """Why kubedra cannot simulate pods on ``node`` at ``release``, or None: an allocatable the release reads as
    a negative int64 (free = allocatable - requested then wraps in kube-scheduler), or CPU or memory past
    ``MaxInt64 / MaxNodeScore``, where NodeResourcesFit's LeastAllocated/MostAllocated scores multiply by 100 in
    int64 and wrap (kubedra scores without overflow)."""
    for k, q in node.allocatable.items():
        n = amount(k, q, release)
        unit = "milli-units" if k == CPU else "units"
        if n < 0 <= q.sign():
            return (
                f"its allocatable {k} {q} reads as {n} {unit} at {release} (Quantity past int64 wraps there)"
            )
        if k in (CPU, MEMORY) and n > _MAX_INT64 // MAX_NODE_SCORE:
            return (
                f"its allocatable {k} {q} reads as {n} {unit} at {release}: past MaxInt64/{MAX_NODE_SCORE}, "
                "where kube-scheduler's int64 resource scores overflow, which kubedra does not model"
            )
    return None


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
