"""What the allocator raises, and its result size limit (upstream's AllocationResultsMaxSize)."""

from __future__ import annotations

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
