"""The simulator's records: nodes with their pods, per-node filter results, equivalence-class state, outcomes,
kube-scheduler's score constants and claim helpers (see :mod:`kubedra.scheduler.simulator`; node sampling is
:mod:`kubedra.scheduler.sampling`)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.model.objects import (
    AllocationResult,
    Node,
    ResourceClaim,
)
from kubedra.scheduler import filters
from kubedra.scheduler.pods import CPU, MEMORY, SimPod
from kubedra.scheduler.shortlist import Shortlist

MAX_SCORE = 100
DRA_FAILURE = "cannot allocate all claims"
MAX_CLASSES = 256  # pod equivalence classes whose per-node results are kept
# a node's version: a new number at each change, never used twice (across nodes and schedulers), so that a node
# put back as it was can take back its old version without matching a result kept for a state in between
VERSIONS = itertools.count(1)


@dataclass(eq=False)
class SimNode:
    node: Node
    index: int
    allocatable: dict[str, int]
    used: dict[str, int] = field(default_factory=dict)
    score_cpu: int = 0
    score_mem: int = 0
    pods: list[SimPod] = field(default_factory=list)
    version: int = 0
    # changes only with the devices of the node's own pools: the DRA filter's results are kept by this one
    devices_version: int = 0

    @property
    def name(self) -> str:
        return self.node.name

    def free(self) -> dict[str, int]:
        return {k: v - self.used.get(k, 0) for k, v in self.allocatable.items()}


class ClassState:
    """Per-node filter results and scores of one pod equivalence class, and its feasible nodes (sorted).

    A class whose required node affinity names its nodes (``pinned``: a DaemonSet's pod, pinned by
    ``metadata.name``) keeps results for those nodes only, in dicts; every other node fails its affinity,
    counted once in ``outside`` (reason -> nodes) for the pending message. Its cost is then its own nodes,
    not the cluster's."""

    __slots__ = (
        "base",
        "counts",
        "dra",
        "dra_claims",
        "dra_counts",
        "dra_failed",
        "dra_reason",
        "dra_stale",
        "fatal",
        "feasible",
        "fits",
        "log_pos",
        "outside",
        "pending",
        "pinned",
        "refs",
        "required",
        "static_fail",
        "with_dra",
    )

    def __init__(self, n: int, required: Any = None, pinned: list[int] | None = None) -> None:
        self.fits: list[Fit | None] | dict[int, Fit | None]
        self.base: list[int] | dict[int, int]  # int(NodeResourcesFit) + int(BalancedAllocation)
        self.dra: list[int] | dict[int, int]  # DynamicResources prioritized-list score
        if pinned is None:
            self.fits, self.base, self.dra = [None] * n, [0] * n, [0] * n
        else:
            self.fits, self.base, self.dra = (
                dict.fromkeys(pinned),
                dict.fromkeys(pinned, 0),
                dict.fromkeys(pinned, 0),
            )
        self.pinned = pinned  # the only nodes the class can be placed on (sorted indexes), None: any
        self.outside: dict[str, int] = {}  # reason -> count, for the nodes outside ``pinned``
        self.feasible: list[int] = []
        self.fatal: set[int] = set()
        self.static_fail: set[int] = set()  # nodes failing the node-only filters (affinity, taints...)
        # nodes failing DynamicResources' Filter (every filter before it passed): UnschedulableAndUnresolvable,
        # which preemption does not count among its potential nodes
        self.dra_failed: set[int] = set()
        self.with_dra: set[int] = set()  # feasible nodes with a non-zero DRA score
        self.log_pos = -1  # position in the scheduler's change log; -1: never synced
        self.required: Any = required  # the pods' required node affinity (a NodeSelector or None)
        # (change-log length, reason, the pod's claims it names) of the last failure
        self.pending: tuple[int, str, list[ResourceClaim]] | None = None
        self.refs: Any = None  # the objects whose ids are in the class key
        # for the pending message without a walk over every node: reason -> nodes among the results; of the
        # nodes failing on DRA, each one's allocator phrase (named for the claims ``dra_claims``) and their
        # counts, and those whose phrase is still to be found (new since the last message)
        self.counts: Counter[str] = Counter()
        self.dra_reason: dict[int, str] = {}
        self.dra_counts: Counter[str] = Counter()
        self.dra_stale: set[int] = set()
        self.dra_claims: list[ResourceClaim] | None = None

    def results(self) -> Iterable[Fit | None]:
        return self.fits.values() if isinstance(self.fits, dict) else self.fits

    def set_fit(self, i: int, fit: Fit, dra: bool = False) -> None:
        """Node ``i``'s result, counted for the pending message; ``dra``: it failed DynamicResources' Filter."""
        if dra:
            self.dra_failed.add(i)
        else:
            self.dra_failed.discard(i)
        old = self.fits[i]
        if old is not None:
            _uncount(self.counts, old.reason or "unknown")
            if old.reason == DRA_FAILURE:
                self.dra_stale.discard(i)
                phrase = self.dra_reason.pop(i, None)
                if phrase is not None:
                    _uncount(self.dra_counts, phrase)
        self.fits[i] = fit
        self.counts[fit.reason or "unknown"] += 1
        if fit.reason == DRA_FAILURE:
            self.dra_stale.add(i)


def _uncount(counts: Counter[str], key: str) -> None:
    if counts[key] <= 1:
        del counts[key]
    else:
        counts[key] -= 1


def new_class(sp: SimPod, nodes: Sequence[SimNode], by_name: dict[str, SimNode], cordoned: int) -> ClassState:
    """A class's state; one whose required affinity names its nodes looks at those nodes only. ``cordoned``:
    how many of ``nodes`` are unschedulable."""
    required = filters.required_affinity(sp.pod)
    names = filters.pinned_names(required)
    pinned = None if names is None else sorted(by_name[n].index for n in names if n in by_name)
    cls = ClassState(len(nodes), required, pinned)
    # the class key holds ids of claim specs: keep them alive as long as the class is kept
    cls.refs = (tuple(c.spec for c in sp.claims), sp.extra.get("ext_claim"))
    if pinned is None:
        return cls
    # every node outside fails the node-only filters: unschedulable first, then the affinity
    outside_cordoned = 0
    if cordoned and not filters.tolerates_unschedulable(sp.pod):
        outside_cordoned = cordoned - sum(1 for i in pinned if nodes[i].node.unschedulable)
    others = len(nodes) - len(pinned) - outside_cordoned
    counts = ((filters.UNSCHEDULABLE, outside_cordoned), (filters.AFFINITY_MISMATCH, others))
    cls.outside = {r: c for r, c in counts if c}
    return cls


def keep_recent(kept: dict[Any, ClassState], key: Any, cls: ClassState) -> None:
    """Keep ``cls`` as the most recently used of at most :data:`MAX_CLASSES`, dropping the least recent."""
    if len(kept) >= MAX_CLASSES:
        kept.pop(next(iter(kept)))
    kept[key] = cls


@dataclass
class Outcome:
    placed: bool
    node: str | None = None
    reason: str | None = None


@dataclass
class Fit:
    """Result of filtering one node for one pod."""

    ok: bool
    reason: str | None = None
    results: list[AllocationResult] | None = None  # for the pod's unallocated claims
    claims: list[ResourceClaim] = field(default_factory=list)  # the claims those results are for
    dra_score: int = 0
    fatal: str | None = None  # an allocator error: aborts the pod's scheduling attempt


def neg_key(s: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in s)


def prioritized_score(claims: Sequence[ResourceClaim], results: Sequence[AllocationResult]) -> int:
    """DynamicResources Score: Σ over firstAvailable requests of (8 − index of the chosen subrequest)."""
    score = 0
    for claim, res in zip(claims, results, strict=True):
        chosen = {r.request for r in res.results}
        for req in claim.spec.requests:
            if not req.first_available:
                continue
            for i, s in enumerate(req.first_available):
                if f"{req.name}/{s.name}" in chosen:
                    score += 8 - i
                    break
    return score


def fit_score(scoring: str, sp: SimPod, node: SimNode) -> tuple[float, float]:
    """NodeResourcesFit (``scoring``: LeastAllocated or MostAllocated) and BalancedAllocation on cpu/memory."""
    parts = []
    fractions = []
    for res, req, used in ((CPU, sp.score_cpu, node.score_cpu), (MEMORY, sp.score_mem, node.score_mem)):
        cap = node.allocatable.get(res, 0)
        if cap <= 0:
            parts.append(0.0)
            fractions.append(1.0)
            continue
        requested = used + req
        if scoring == "MostAllocated":
            parts.append(min(requested, cap) * MAX_SCORE / cap)
        else:
            parts.append(0.0 if requested > cap else (cap - requested) * MAX_SCORE / cap)
        fractions.append(min(requested / cap, 1.0))
    fit = sum(parts) / len(parts)
    std = abs(fractions[0] - fractions[1]) / 2
    balanced = (1 - std) * MAX_SCORE
    return fit, balanced


@dataclass(eq=False)
class Candidates:
    """Preemption's view of the nodes for one class of preemptor (equal pod spec, claims and priority).

    ``potential``: the nodes not failing a filter no eviction changes whatever the other pods (``unresolvable``:
    node-only filters, a request above allocatable); kube-scheduler's potential nodes are those of them whose
    status is Unschedulable at the attempt, which leaves out the nodes failing DynamicResources' Filter then
    (:class:`ClassState` ``dra_failed``); ``limit``: the candidates it stops at among those (numCandidates, at
    the last attempt). Nodes are tried in index order up to ``frontier``: per node index tried, the node's version
    after it was last tried and what preempting there takes (the rank of its victims and the victims, or None
    where nothing helps), and the candidates in ``shortlist``; ``log_pos``: where in the scheduler's change log
    it last looked (as :class:`ClassState`)."""

    entries: dict[int, tuple[int, tuple[int, int, int] | None, list[SimPod]]] = field(default_factory=dict)
    unresolvable: set[int] = field(default_factory=set)
    dra_blocked: set[int] = field(default_factory=set)  # tried nodes whose DRA filter blocks preemption
    potential: int = 0
    limit: int = 0
    frontier: int = 0
    untried: int = 0  # potential nodes from ``frontier`` on
    shortlist: Shortlist = field(default_factory=lambda: Shortlist(0))
    log_pos: int = -1
