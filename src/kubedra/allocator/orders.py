"""Where upstream's answer depends on the order it walks the node's pools and slices in, and that order is chance.

``allocator.poolOrderFree`` in data/versions.yaml names the variants whose GatherPools ranges over its pool map
(Go's random iteration order) and keeps a pool's slices in the order kube-scheduler lists them (its informer
cache, a map too). kubedra walks pools by (driver, name) and slices by name; the answer is the same for every
order unless something order-sensitive is reached. The one modelled here is v0.34's capacity recheck
(``allocator.capacityRecheckReadsTheDevice``): it reads the candidate slice's device at the request's device index
and panics past the slice's end, so which device comes at which index decides whether kube-scheduler dies.

Where a panic is possible at all (a request's device index can reach the length of a slice with a device some
request selects), :func:`allocate_every_order` considers every order of the pools and slices that matter (those
with such devices, and invalid pools, where the 1.34 search stops). v0.34.13's allocateOne scans the pools in
order and returns at the first error (a CEL runtime error, the invalid pool, the panic) or fit
(structured/internal/experimental/allocator_experimental.go:986-1067, incubating/allocator_incubating.go:869-937,
stable/allocator_stable.go:811-866), so a search decides every order that agrees with its own as far as it read: one search runs for each such
beginning, up to :data:`MAX_ORDERS` searches. If every order panics the same way, or none panics, the answer is
the one for kubedra's order, as before; otherwise :class:`PoolOrderPanicError` says that upstream may panic,
depending on its order, and lists every answer an order gives. Other order effects (which devices, the text of
the first error) stay kubedra's order's, as before.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kubedra.allocator.errors import (
    RECHECK_PANIC,
    AllocationError,
    AllocationTimeout,
    PoolOrderPanicError,
    UpstreamPanicError,
)
from kubedra.allocator.pools import Pool, binding_slices_last
from kubedra.allocator.requests import Dev, Req, ReqData
from kubedra.allocator.search import Search
from kubedra.allocator.taints import taint_blocks
from kubedra.k8s import versions
from kubedra.model.objects import AllocationResult, Node, ResourceClaim, ResourceSlice

if TYPE_CHECKING:
    from kubedra.allocator.core import Allocator

# The most searches kubedra runs to tell the orders apart, one for all the orders alike as far as a search reads
# (about 2 ms each for the generated scenarios on a loaded 2-core machine: 864 orders of four pools with 3, 1, 1
# and 3 slices that matter, all without a fit, so each search read every device, took 1.75 s).
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


class _Reads(list[Dev]):
    """A list that remembers the furthest index read from it (``most``; -1 before any read)."""

    most = -1

    def __getitem__(self, i: Any) -> Any:
        if type(i) is int and i > self.most:
            self.most = i
        return super().__getitem__(i)


class _Traced(Search):
    """A search that notes how far into its order of the node's devices it reads: the furthest candidate its
    scans took (``Search.candidates``), the furthest device of an ``All`` request it allocated, and the invalid pool
    where a 1.34 scan stops."""

    def __init__(self, a: Allocator, node: Node, claims: list[ResourceClaim], pools: list[Pool]) -> None:
        super().__init__(a, node, claims, pools)
        self._reads: list[_Reads] = []

    @property
    def candidates(self) -> list[Dev]:
        if self._candidates is None:
            self._candidates = _Reads(self.a._candidates(self.node, self.pools))
            self._reads.append(self._candidates)
        return self._candidates

    def _validate(self, ci: int, ri: int, si: int, r: Req) -> ReqData:
        rd = super()._validate(ci, ri, si, r)
        if rd.all_devices:
            rd.all_devices = _Reads(rd.all_devices)
            self._reads.append(rd.all_devices)
        return rd

    def read(self, got: Answer) -> list[tuple[Pool, ResourceSlice | None]]:
        """Where this search stopped reading: the slice of each furthest device read, and the invalid pool it
        stopped at (None: the pool itself). Whatever comes after is not read (a scan that ran to the end of
        the candidates read every device a request selects; those after it select none of them)."""
        out: list[tuple[Pool, ResourceSlice | None]] = [
            (dev.pool, dev.slice) for dev in (reads[reads.most] for reads in self._reads if reads.most >= 0)
        ]
        stop = self.invalid_stop
        if stop is not None and type(got) is AllocationError and str(got) == stop[1]:
            out += [(p, None) for p in self.pools if p.invalid][:1]
        return out


class _TooMany(Exception):
    """More searches than :data:`MAX_ORDERS` would be needed."""


def _first(items: Sequence[int], last: Callable[[int], bool], place: int, before: int) -> list[int]:
    """The items that may take place ``place`` of those left: the ones not kept last while ``place`` is among
    the first ``before`` places, the ones kept last after."""
    return [i for i in items if last(i) == (place >= before)]


class _Orders:
    """The orders that matter: the pools with a slice some request may take a device from, and invalid pools
    (the 1.34 search stops there), each with the orders of those slices; where the variant puts binding
    conditions last (:func:`~kubedra.allocator.pools.binding_slices_last`) they stay last. Other pools and
    slices keep their place: no request takes their devices.

    :meth:`walk` chooses an order one step at a time (the pool at each movable place, then which of its slices
    fills each of its slices' places) and searches once for all the orders that agree on the steps up to the
    last one the search read (:meth:`_Traced.read`): the search reads the same devices in the same places
    there, so it gives the same answer. A CEL error or a panic on the first devices decides thousands of
    orders with one search."""

    def __init__(self, pools: list[Pool], relevant: dict[int, list[ResourceSlice]], last: bool) -> None:
        self.pools = pools
        self.relevant = relevant
        self.last = last
        self.movable = [i for i, p in enumerate(pools) if i in relevant or p.invalid]
        # the places of each movable pool's slice list that its slices that matter fill
        self.slots = {
            i: [k for k, s in enumerate(pools[i].slices) if any(s is r for r in relevant.get(i, []))]
            for i in self.movable
        }

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

    def walk(self, visit: Callable[[list[Pool]], list[tuple[Pool, ResourceSlice | None]]], most: int) -> int:
        """Call ``visit`` with one order of each set of orders that agree as far as its search reads (``visit``
        returns where it stopped reading); raise :class:`_TooMany` past ``most`` calls. Returns the calls."""
        out = list(self.pools)
        chosen = [0] * len(self.movable)
        level_of = [0] * len(self.movable)  # the step that chooses the pool at each movable place
        firsts = [self._pool_last(i) for i in self.movable].count(False)
        calls = 0

        def needed(marks: list[tuple[Pool, ResourceSlice | None]], steps: int) -> int:
            """How many of the steps decide the devices up to each mark."""
            place = {id(p): k for k, p in enumerate(out)}
            need = 0
            for pool, s in marks:
                at = place.get(id(pool))
                if at is None:
                    return steps
                if at not in self.movable:  # a fixed pool: the steps of the movable places before it
                    later = [k for k, m in enumerate(self.movable) if m > at]
                    need = max(need, level_of[later[0]] if later else steps)
                    continue
                k = self.movable.index(at)
                n = 0 if s is None else sum(1 for x in self.slots[chosen[k]] if x <= _index(pool.slices, s))
                need = max(need, level_of[k] + 1 + n)
            return need

        def place(k: int, level: int) -> int:
            nonlocal calls
            if k == len(self.movable):
                calls += 1
                if calls > most:
                    raise _TooMany
                return needed(visit(out), level)
            for i in _first(left, self._pool_last, k, firsts):
                left.remove(i)
                chosen[k], level_of[k] = i, level
                mine = self.relevant.get(i, [])
                bound = [s for s in mine if self._bound(s)]
                d = fill(k, i, 0, level + 1, list(mine), list(self.pools[i].slices), len(mine) - len(bound))
                left.insert(0, i)
                left.sort()
                if d <= level:
                    return d
            return level

        def fill(
            k: int,
            i: int,
            j: int,
            level: int,
            mine: list[ResourceSlice],
            slices: list[ResourceSlice],
            before: int,
        ) -> int:
            slots = self.slots[i]
            if j == len(slots):
                out[self.movable[k]] = dataclasses.replace(self.pools[i], slices=list(slices))
                return place(k + 1, level)
            for s in [x for x in mine if self._bound(x) == (j >= before)]:
                slices[slots[j]] = s
                mine.remove(s)
                d = fill(k, i, j + 1, level + 1, mine, slices, before)
                mine.append(s)
                if d <= level:
                    return d
            return level

        left = list(self.movable)
        place(0, 0)
        return calls


def _index(items: Sequence[ResourceSlice], s: ResourceSlice) -> int:
    return next(k for k, x in enumerate(items) if x is s)


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
    answers: list[Answer] = [answer]

    def visit(pools_in_order: list[Pool]) -> list[tuple[Pool, ResourceSlice | None]]:
        other = _Traced(a, run.node, run.claims, pools_in_order)
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
        return other.read(got)

    reuse, a.reuse = a.reuse, None  # a result kept for kubedra's order must not answer another order
    try:
        orders.walk(visit, MAX_ORDERS)
    except _TooMany:
        panic = (
            answer.panic if isinstance(answer, UpstreamPanicError) else "runtime error: index out of range"
        )
        raise PoolOrderPanicError(a.target_version, RECHECK_PANIC, panic, None, n, MAX_ORDERS) from None
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
