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

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kubedra.k8s import namespaces, versions
from kubedra.k8s.podadmission import MILLI
from kubedra.k8s.quantity import NANO, Quantity, quantity_rules
from kubedra.k8s.quantityread import round_up
from kubedra.model.objects import Container, Node, Pod, ResourceClaim

CPU = "cpu"
MEMORY = "memory"
PODS = "pods"
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024
V = TypeVar("V")


_MAX_INT64 = (1 << 63) - 1
MAX_NODE_SCORE = 100  # fwk.MaxNodeScore: LeastAllocated/MostAllocated multiply an int64 by it
_DEFAULTS = {
    CPU: Quantity(DEFAULT_MILLI_CPU * NANO // 1000, "DecimalSI", -3),
    MEMORY: Quantity.from_int(DEFAULT_MEMORY),
}


@functools.lru_cache(maxsize=64)
def _rules(release: str) -> bool:
    return versions.holds("quantity.nineteenDigitInt64", release)


_MILLI_NANOS = NANO // 1000
# Below 10^15 units and not negative, every release parses, rounds, sums and reads a value alike, far inside int64
# (milli-units too, for thousands of containers): exact nano-units then stand for the quantities.
_SMALL = 10**15 * NANO


def _small(q: Quantity) -> int | None:
    """``q`` in nano-units as API defaulting leaves it (rounded up to milli-units), when it is small."""
    n = q.nanos
    return -(-n // _MILLI_NANOS) * _MILLI_NANOS if 0 <= n < _SMALL else None


def _read_small(name: str, nanos: int) -> int:
    return nanos // _MILLI_NANOS if name == CPU else -(-nanos // NANO)  # MilliValue() / Value(), rounded up


def amount(name: str, q: Quantity, release: str = versions.DEFAULT_TARGET) -> int:
    """Integer units the scheduler compares, as ``release``'s kube-scheduler reads ``q``: ``MilliValue()`` for
    CPU, ``Value()`` for the rest, rounded up; past int64 1.36/1.37 wrap or read 0, 1.38 saturates
    (:meth:`Quantity.scaled_value`, tests/conformance/quantity/scaled-value.yaml), of the value API defaulting
    rounded up to milli-units (:func:`kubedra.k8s.podadmission.admitted`)."""
    n = _small(q)
    if n is not None:
        return _read_small(name, n)
    since = _rules(release)
    return round_up(q.at(since), MILLI).scaled_value(MILLI if name == CPU else 0, since)


def allocatable(node: Node, release: str = versions.DEFAULT_TARGET) -> dict[str, int]:
    """The node's allocatable as ``release``'s kube-scheduler reads it (``NewResource``: :func:`amount` each)."""
    return {k: amount(k, q, release) for k, q in node.allocatable.items()}


class _Sum(Generic[V]):
    """How ``PodRequests`` combines one kind of value: a leaf as API defaulting leaves it, ``Add``, ``Cmp``."""

    def __init__(self, leaf: Callable[[Quantity], V], add: Callable[[V, V], V], gt: Callable[[V, V], bool]):
        self.leaf, self.add, self.gt = leaf, add, gt

    def container(self, c: Container, fill: bool) -> dict[str, V]:
        # requests default to limits when only limits are set (API defaulting); ``fill``: NonMissingContainerRequests
        merged = dict(c.limits)
        merged.update(c.requests)
        if fill:
            for k, v in _DEFAULTS.items():
                merged.setdefault(k, v)
        return {k: self.leaf(v) for k, v in merged.items()}

    def add_to(self, into: dict[str, V], other: dict[str, V]) -> None:
        for k, v in other.items():  # addResourceList: Quantity.Add
            into[k] = self.add(into[k], v) if k in into else v

    def max_to(self, into: dict[str, V], other: dict[str, V]) -> None:
        for k, v in other.items():  # maxResourceList: Cmp
            if k not in into or self.gt(v, into[k]):
                into[k] = v

    def pod(self, pod: Pod, fill: bool = False) -> dict[str, V]:
        """``PodRequests`` (component-helpers resource/helpers.go AggregateContainerRequests)."""
        reqs: dict[str, V] = {}
        for c in pod.containers:
            self.add_to(reqs, self.container(c, fill))
        sidecars: dict[str, V] = {}
        init_max: dict[str, V] = {}
        for c in pod.init_containers:
            r = self.container(c, fill)
            if c.restart_policy == "Always":
                self.add_to(reqs, r)
                self.add_to(sidecars, r)
                self.max_to(init_max, sidecars)
            else:
                peak = dict(r)
                self.add_to(peak, sidecars)
                self.max_to(init_max, peak)
        self.max_to(reqs, init_max)
        self.add_to(reqs, {k: self.leaf(v) for k, v in pod.overhead.items()})
        return reqs


class _NotSmall(Exception):
    pass


def _small_leaf(q: Quantity) -> int:
    n = _small(q)
    if n is None:
        raise _NotSmall
    return n


_SMALL_SUM: _Sum[int] = _Sum(_small_leaf, operator.add, operator.gt)


def _defaulted(since_138: bool) -> Callable[[Quantity], Quantity]:
    def leaf(
        q: Quantity,
    ) -> Quantity:  # as the release parses it, rounded up to milli-units by API defaulting
        return round_up(q.at(since_138), MILLI)

    return leaf


def _greater(a: Quantity, b: Quantity) -> bool:
    return a.cmp(b) > 0


_QUANTITY_SUM = {since: _Sum(_defaulted(since), Quantity.add, _greater) for since in (False, True)}


def _requests(pod: Pod, release: str, fill: bool = False) -> dict[str, int]:
    """The pod's requests per resource, read as ``release``'s kube-scheduler reads the summed quantities."""
    try:
        return {k: _read_small(k, n) for k, n in _SMALL_SUM.pod(pod, fill).items()}
    except _NotSmall:
        pass
    since = _rules(release)
    with quantity_rules(since):  # Quantity.Add of the release
        summed = _QUANTITY_SUM[since].pod(pod, fill)
    return {k: amount(k, q, release) for k, q in summed.items()}


def pod_requests(pod: Pod, release: str = versions.DEFAULT_TARGET) -> dict[str, int]:
    """The pod's requests per resource as ``release``'s NodeResourcesFit reads them (``PodRequests``, then
    ``Resource.SetMaxResource``)."""
    return _requests(pod, release)


def nonzero_requests(pod: Pod, release: str = versions.DEFAULT_TARGET) -> tuple[int, int]:
    """(milli CPU, memory bytes) for scoring, with upstream's defaults for containers without requests."""
    s: _Sum[Any] = _SMALL_SUM
    try:
        cpu, mem = _nonzero(s, pod)
        return _read_small(CPU, cpu), _read_small(MEMORY, mem)
    except _NotSmall:
        pass
    since = _rules(release)
    with quantity_rules(since):
        qcpu, qmem = _nonzero(_QUANTITY_SUM[since], pod)
    return amount(CPU, qcpu, release), amount(MEMORY, qmem, release)


def _nonzero(s: _Sum[Any], pod: Pod) -> tuple[Any, Any]:
    cpu = mem = None
    for c in pod.containers:
        r = s.container(c, fill=True)
        cpu = r[CPU] if cpu is None else s.add(cpu, r[CPU])
        mem = r[MEMORY] if mem is None else s.add(mem, r[MEMORY])
    for k, v in pod.overhead.items():
        if k == CPU:
            cpu = s.leaf(v) if cpu is None else s.add(cpu, s.leaf(v))
        elif k == MEMORY:
            mem = s.leaf(v) if mem is None else s.add(mem, s.leaf(v))
    zero = s.leaf(Quantity(0, "DecimalSI", 0))
    return (zero if cpu is None else cpu), (zero if mem is None else mem)


def unmodelled(pod: Pod, release: str = versions.DEFAULT_TARGET) -> str | None:
    """Why kubedra cannot simulate ``pod`` at ``release``, or None: a request that ``release`` reads as a
    negative int64 (1.36/1.37 wrap past it): the node's int64 sums of requests would then wrap too, which
    kubedra's do not."""
    try:
        _SMALL_SUM.pod(pod)
        return None  # small values read alike everywhere, far inside int64
    except _NotSmall:
        pass
    since = _rules(release)
    with quantity_rules(since):
        summed = _QUANTITY_SUM[since].pod(pod)
    for k, q in summed.items():
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
