"""The simulator's records: nodes with their pods, per-node filter results, equivalence-class state, outcomes,
kube-scheduler's score constants and claim helpers (see :mod:`kubedra.scheduler.simulator`; node sampling is
:mod:`kubedra.scheduler.sampling`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.model.objects import (
    AllocationResult,
    Node,
    ResourceClaim,
)
from kubedra.scheduler.pods import SimPod

MAX_SCORE = 100
DRA_FAILURE = "cannot allocate all claims"
MAX_CLASSES = 256  # pod equivalence classes whose per-node results are kept


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

    @property
    def name(self) -> str:
        return self.node.name

    def free(self) -> dict[str, int]:
        return {k: v - self.used.get(k, 0) for k, v in self.allocatable.items()}


class ClassState:
    """Per-node filter results and scores of one pod equivalence class, and its feasible nodes (sorted)."""

    __slots__ = (
        "base",
        "dra",
        "fatal",
        "feasible",
        "fits",
        "log_pos",
        "pending",
        "refs",
        "required",
        "static_fail",
        "with_dra",
    )

    def __init__(self, n: int) -> None:
        self.fits: list[Fit | None] = [None] * n
        self.base = [0] * n  # int(NodeResourcesFit) + int(BalancedAllocation)
        self.dra = [0] * n  # DynamicResources prioritized-list score
        self.feasible: list[int] = []
        self.fatal: set[int] = set()
        self.static_fail: set[int] = set()  # nodes failing the node-only filters (affinity, taints...)
        self.with_dra: set[int] = set()  # feasible nodes with a non-zero DRA score
        self.log_pos = -1  # position in the scheduler's change log; -1: never synced
        self.required: tuple[Any] | None = None  # the pods' required node affinity, once computed
        self.pending: tuple[int, str] | None = None  # (change-log length, reason) of the last failure
        self.refs: Any = None  # the objects whose ids are in the class key


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
