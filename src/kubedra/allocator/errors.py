"""What the allocator raises, and its result size limit (upstream's AllocationResultsMaxSize)."""

from __future__ import annotations

from typing import Any

MAX_RESULTS = 32  # AllocationResultsMaxSize


class AllocationError(Exception):
    """A fatal allocation problem (bad CEL, unknown class, All-mode on an incomplete pool, …).

    kube-scheduler reports these as an *error* status for the whole scheduling attempt, not as
    "unschedulable on this node".
    """


class FailedOnNodeError(AllocationError):
    """upstream ``ErrFailedAllocationOnNode``: an error that only fails this node; kube-scheduler marks the node
    unschedulable with the message and tries the others (DynamicResources Filter), unlike the fatal errors above.
    """


class InvalidPoolsError(FailedOnNodeError):
    """Allocation failed and invalid pools were seen ("invalid resource pools were encountered")."""


class UpstreamPanicError(AllocationError):
    """kubedra cannot model this input at the target release: upstream's allocator panics on it there, and
    kube-scheduler does not recover the panic (the process dies). ``panic`` is the Go runtime's message, as
    upstream's allocator would print it."""

    def __init__(self, release: str, where: str, panic: str) -> None:
        self.panic = panic
        super().__init__(
            f"kubedra cannot model this at Kubernetes {release}: upstream's allocator panics here ({where}: "
            f"{panic}), which stops kube-scheduler"
        )


# Where v0.34's capacity recheck panics (data/versions.yaml allocator.capacityRecheckReadsTheDevice).
RECHECK_PANIC = (
    "k8s.io/dynamic-resource-allocation v0.34 allocateDevice reads slice.Spec.Devices[r.deviceIndex]"
)


class PoolOrderPanicError(UpstreamPanicError):
    """Upstream's allocator panics in some of the orders it may walk the node's pools and slices in and not in
    others (:mod:`kubedra.allocator.orders`). ``answers``: every different answer an order gives (results, None
    for no fit, or the error, panics included), kubedra's order's first; None where telling the ``orders``
    apart takes more than ``limit`` searches (kubedra stops there)."""

    def __init__(
        self, release: str, where: str, panic: str, answers: list[Any] | None, orders: int, limit: int
    ) -> None:
        self.answers = answers
        super().__init__(release, where, panic)
        if answers is None:
            tried = (
                f"{orders} orders matter here, and telling them apart takes more than the {limit} searches "
                "kubedra tries (one for all the orders that are alike as far as the search reads)"
            )
        else:
            panics = sum(isinstance(a, UpstreamPanicError) for a in answers)
            tried = f"the {orders} orders that matter here give {len(answers)} different answers, {panics} of them panics"
        self.args = (
            f"kubedra cannot model this at Kubernetes {release}: upstream's allocator may panic here ({where}: "
            f"{panic}), which stops kube-scheduler, depending on the order it walks the node's resource pools and "
            f"their slices in (GatherPools ranges over a Go map; kube-scheduler lists slices from its informer "
            f"cache, a map too): {tried}",
        )


class AllocationTimeout(AllocationError):
    """The search ran past its deadline: upstream's allocateOne returns ``filter operation aborted: <the
    context's cause>`` once its context is done. kube-scheduler's DynamicResources filter bounds each node's
    allocation by ``DRASchedulerFilterTimeout`` (default 10 s) and then reports :data:`FILTER_TIMEOUT`."""

    def __init__(self) -> None:
        super().__init__("filter operation aborted: context deadline exceeded")


# What kube-scheduler's DynamicResources Filter returns (an Error status: the pod is retried with backoff,
# not marked unschedulable) when the allocation on a node hit the filter timeout.
FILTER_TIMEOUT = "node {node}: timed out trying to allocate devices"


class StopSearch(Exception):
    """errAllocationResultMaxSizeExceeded: prune the search (not fatal)."""
