"""Where upstream's answer depends on the order it walks the node's pools and slices in, and that order is chance.

``allocator.poolOrderFree`` in data/versions.yaml names the variants whose GatherPools ranges over its pool map
(Go's random iteration order) and keeps a pool's slices in the order kube-scheduler lists them (its informer
cache, a map too). kubedra walks pools by (driver, name) and slices by name; the answer is the same for every
order unless something order-sensitive is reached. The one modelled here is v0.34's capacity recheck
(``allocator.capacityRecheckReadsTheDevice``): it reads the candidate slice's device at the request's device index
and panics past the slice's end, so which device comes at which index decides whether kube-scheduler dies.

Where a panic is possible at all (a request's device index can reach the length of a slice with a device some
request selects), :func:`allocate_every_order` runs the search for every order of the pools and slices that
matter (those with such devices, and invalid pools, where the 1.34 search stops), up to :data:`MAX_ORDERS`. If
every order panics the same way, or none panics, the answer is the one for kubedra's order, as before; otherwise
:class:`PoolOrderPanicError` says that upstream may panic, depending on its order, and lists every answer an
order gives. Other order effects (which devices, the text of the first error) stay kubedra's order's, as before.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from kubedra.allocator.errors import (
    RECHECK_PANIC,
    AllocationError,
    AllocationTimeout,
    PoolOrderPanicError,
    UpstreamPanicError,
)
from kubedra.allocator.pools import Pool, binding_slices_last
from kubedra.allocator.search import Search
from kubedra.allocator.taints import taint_blocks
from kubedra.k8s import versions
from kubedra.model.objects import AllocationResult, ResourceSlice

if TYPE_CHECKING:
    from kubedra.allocator.core import Allocator

# The most orders kubedra tries: a search each (about 2 ms for the generated scenarios on a loaded 2-core machine,
# 864 orders of four pools with 3, 1, 1 and 3 slices that matter in 1.75 s).
MAX_ORDERS = 2000

# What one order gives: the results (None: no fit), or the error it raised.
Answer = list[AllocationResult] | None | AllocationError


def order_free(a: Allocator) -> bool:
    """Whether the variant ``a`` runs walks pools in map order and panics past a slice's end (v0.34 with
    ConsumableCapacity): the only case where the order decides more than which devices are picked."""
    if a.capacity_recheck_reads_device or not a.features.consumable_capacity:
        return False
    free: list[str] = versions.behaviour("allocator.poolOrderFree", a.target_version) or []
    return a.features.variant(a.target_version) in free


def _relevant(run: Search, s: ResourceSlice) -> bool:
    """Whether some request of ``run`` may take a device of ``s`` in some order: one its selectors select (a
    selector that errs counts as may) and that none of the checks of allocateDevice which do not depend on the
    order turns down (kept.allocate_device_kept: in use by an earlier allocation, counters without
    PartitionableDevices, a taint the request does not tolerate, a claim constraint on an attribute the device
    lacks)."""
    for (ci, ri, si), rd in run.req_data.items():
        r = rd.req
        base, sub = r.parent or r.name, r.name if r.parent else ""
        constraints = (
            [c for c in run.constraints[ci] if c.applies(base, sub)] if ci < len(run.constraints) else []
        )
        for d in s.devices:
            did = (s.driver, s.pool.name, d.name)
            try:
                if not run._selectable(ci, ri, si, rd, s, d, did):
                    continue
            except AllocationError:
                return True
            if not r.admin and did in run.a.allocated.devices:
                continue
            if (not run.f.partitionable_devices and d.consumes_counters) or (
                run.f.device_taints and taint_blocks(d, r.tolerations) is not None
            ):
                continue
            if any(c.lookup(base, sub, d, s.driver, c.attribute) is None for c in constraints):
                continue
            return True
    return False


def _may_panic(run: Search) -> bool:
    """Whether a request's device index can reach the end of a slice some request may take a device from."""
    most = max((rd.num for rd in run.req_data.values()), default=0) - 1
    return any(len(s.devices) <= most and _relevant(run, s) for p in run.pools for s in p.slices)


def _permutations(last: Sequence[bool]) -> Iterator[tuple[int, ...]]:
    """Orders of as many items as ``last`` has (as indices) that keep those marked last after the others."""
    first = [i for i, g in enumerate(last) if not g]
    after = [i for i, g in enumerate(last) if g]
    for a in itertools.permutations(first):
        for b in itertools.permutations(after):
            yield a + b


class _Orders:
    """The orders that matter: the pools with a slice some request may take a device from, and invalid pools
    (the 1.34 search stops there), each with the orders of those slices; where the variant puts binding
    conditions last (:func:`~kubedra.allocator.pools.binding_slices_last`) they stay last. Other pools and
    slices keep their place: no request takes their devices."""

    def __init__(self, pools: list[Pool], relevant: dict[int, list[ResourceSlice]], last: bool) -> None:
        self.pools = pools
        self.relevant = relevant
        self.last = last
        self.movable = [i for i, p in enumerate(pools) if i in relevant or p.invalid]

    def _bound(self, s: ResourceSlice) -> bool:
        return self.last and any(d.binding_conditions for d in s.devices)

    def _pool_last(self, i: int) -> bool:
        return self.pools[i].last

    def count(self) -> int:
        groups = [self._pool_last(i) for i in self.movable]
        n = math.factorial(groups.count(False)) * math.factorial(groups.count(True))
        for i in self.movable:
            kinds = [self._bound(s) for s in self.relevant.get(i, [])]
            n *= math.factorial(kinds.count(False)) * math.factorial(kinds.count(True))
        return n

    def _slice_orders(self, i: int) -> list[list[ResourceSlice]]:
        mine = self.relevant.get(i, [])
        ids = {id(s) for s in mine}
        out = []
        for order in _permutations([self._bound(s) for s in mine]):
            it = iter([mine[k] for k in order])
            out.append([next(it) if id(s) in ids else s for s in self.pools[i].slices])
        return out

    def __iter__(self) -> Iterator[list[Pool]]:
        slice_orders = {i: self._slice_orders(i) for i in self.movable}
        for perm in _permutations([self._pool_last(i) for i in self.movable]):
            chosen = [self.movable[k] for k in perm]
            for combo in itertools.product(*(slice_orders[i] for i in chosen)):
                out = list(self.pools)
                for place, i, slices in zip(self.movable, chosen, combo, strict=True):
                    out[place] = dataclasses.replace(self.pools[i], slices=slices)
                yield out


def _same(x: Answer, y: Answer) -> bool:
    if isinstance(x, AllocationError) or isinstance(y, AllocationError):
        return type(x) is type(y) and str(x) == str(y)
    if x is None or y is None:
        return x is y
    return [sorted((r.request, r.driver, r.pool, r.device) for r in a.results) for a in x] == [
        sorted((r.request, r.driver, r.pool, r.device) for r in a.results) for a in y
    ]


def allocate_every_order(a: Allocator, run: Search, answer: Answer) -> list[AllocationResult] | None:
    """``answer`` (kubedra's order's, from ``run``, which ``a`` ran) if no order panics or every order gives it,
    else :class:`PoolOrderPanicError`."""
    # refused before the search (validating the requests: the same in every order), or out of time
    if not run.searched or isinstance(answer, AllocationTimeout):
        return _give(answer)
    if not _may_panic(run):
        return _give(answer)
    pools = run.pools
    relevant = {i: [s for s in p.slices if _relevant(run, s)] for i, p in enumerate(pools)}
    relevant = {i: slices for i, slices in relevant.items() if slices}
    orders = _Orders(pools, relevant, binding_slices_last(a.features, a.target_version))
    n = orders.count()
    if n <= 1:
        return _give(answer)
    if n > MAX_ORDERS:
        panic = (
            answer.panic if isinstance(answer, UpstreamPanicError) else "runtime error: index out of range"
        )
        raise PoolOrderPanicError(a.target_version, RECHECK_PANIC, panic, None, n, MAX_ORDERS)
    answers: list[Answer] = [answer]
    reuse, a.reuse = a.reuse, None  # a result kept for kubedra's order must not answer another order
    try:
        for pools_in_order in orders:
            other = Search(a, run.node, run.claims, pools_in_order)
            other.deadline = run.deadline
            got: Answer
            try:
                got = other.allocate()
            except AllocationTimeout:
                raise
            except AllocationError as e:
                got = e
            if not any(_same(got, x) for x in answers):
                answers.append(got)
    finally:
        a.reuse = reuse
    panics = [x for x in answers if isinstance(x, UpstreamPanicError)]
    if not panics or len(answers) == 1:
        return _give(answer)
    first = answer if isinstance(answer, UpstreamPanicError) else panics[0]
    raise PoolOrderPanicError(a.target_version, RECHECK_PANIC, first.panic, answers, n, MAX_ORDERS)


def _give(answer: Answer) -> list[AllocationResult] | None:
    if isinstance(answer, AllocationError):
        raise answer
    return answer
