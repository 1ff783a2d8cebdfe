"""A turned-down device keeps what it reserved: upstream's allocateDevice before v0.36.3, step for step.

``allocator.rollsBackRejectedDevice`` in data/versions.yaml: v0.34.13, v0.35.4/v0.35.10 and v0.36.0-v0.36.2,
structured/internal/{stable,incubating,experimental}/allocator_*.go allocateDevice.

A device turned down after part of it was reserved keeps what was reserved for the rest of the search: the
counters checkAvailableCounters took (after a taint, a claim constraint or too little capacity), the constraints
added before (after too little capacity; a failing constraint removes those before it), the in-use mark. The
undo of an allocated device removes every constraint and, for an exclusive device, its counters; a device that
allows multiple allocations keeps its counters. The later searches see all of it, which is why the search also
tries every permutation there (``allocator.triesEachCombinationOnce``): the attempts themselves change the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kubedra.allocator import capacity as cap
from kubedra.allocator.errors import AllocationError
from kubedra.allocator.requests import Dev, DeviceResult, claim_ref
from kubedra.allocator.state import device_id_str
from kubedra.allocator.taints import taint_blocks
from kubedra.k8s.quantity import Quantity

if TYPE_CHECKING:
    from kubedra.allocator.search import Search


def allocate_device_kept(  # noqa: C901 - port of upstream allocateDevice (v0.35.10), kept step for step
    s: Search, ci: int, ri: int, si: int, dev: Dev, must: bool, di: int = 0
) -> Callable[[], None] | None:
    """:meth:`Search._allocate_device` as v0.35.10 does it: the device's undo function, or None when it cannot be
    used here (what it reserved before that stays reserved)."""
    claim = s.claims[ci]
    r = s.req_data[(ci, ri, si)].req
    did = dev.id
    d = dev.device
    f = s.f
    multi = bool(f.consumable_capacity and d.allow_multiple_allocations)
    if not multi and r.admin and ci in s.allocating.get(did, ()):
        return None
    if not r.admin and s._in_use(did):
        return None
    if not f.partitionable_devices and d.consumes_counters:
        return None
    # 1.35 takes a shared device's counters once; 1.34 at every allocation (allocator.sharedDeviceCountersOnce)
    once = multi and s.a.shared_device_counters_once and s._capacity_in_use(did)
    if not once and d.consumes_counters and not s._take_counters(dev):
        return None  # checkAvailableCounters gives back what it took when the counters do not suffice
    base = r.parent or r.name
    sub = r.name if r.parent else ""
    if f.device_taints and taint_blocks(d, r.tolerations) is not None:
        return None  # the counters stay taken
    cons = s.constraints[ci]
    for i, c in enumerate(cons):
        if not c.add(base, sub, d, did[0]):
            if must:
                raise AllocationError(
                    f"claim {claim_ref(claim)}, request {r.name}: cannot add device {device_id_str(did)} "
                    "because a claim constraint would not be satisfied"
                )
            for e in range(i):
                cons[e].remove(base, sub, d, did[0])
            return None  # the counters stay taken
    if not multi:
        s.allocating.setdefault(did, set()).add(ci)
    consumed: dict[str, Quantity] = {}
    share_id = None
    if f.consumable_capacity:
        # CmpRequestOverCapacity: an error only skips the device there, and before 1.37 it has none of its own;
        # what kubedra raises is upstream's division by zero (a step that reads 0), which it cannot model
        # 1.34 rechecks the device at the request's index in the slice (allocator.capacityRecheckReadsTheDevice)
        cdid, cd = (did, d) if s.a.capacity_recheck_reads_device else s.device_at(dev, di)
        try:
            if not s._capacity_fits(r, cdid, cd):
                return None  # the constraints, the in-use mark and the counters stay
            if multi:
                consumed = cap.consumed_from_request(r.capacity, d.capacity, checked=s.a.capacity_checked)
        except cap.CapacityError as e:
            raise AllocationError(
                f"claim {claim_ref(claim)}, request {r.name}: checking capacity for device {device_id_str(did)}: {e}"
            ) from None
        if multi:
            share_id = s.a.share_id_factory()
            agg = s.allocating_capacity.setdefault(did, {})
            for k, q in consumed.items():
                agg[k] = agg[k].add(q) if k in agg else q
    results = s.results[ci]
    n_before = len(results)
    results.append(DeviceResult(r, dev, share_id, consumed or None, True if r.admin else None))

    def undo() -> None:
        for c in cons:
            c.remove(base, sub, d, did[0])
        if did in s.allocating:
            s.allocating[did].discard(ci)
        if multi:
            agg = s.allocating_capacity.get(did)
            if (
                consumed and agg is not None
            ):  # ConsumedCapacityCollection.Remove: Sub, then drop when all zero
                for k, q in consumed.items():
                    if k in agg:
                        agg[k] = agg[k].sub(q)
                if all(v.is_zero() for v in agg.values()):
                    del s.allocating_capacity[did]
        elif f.partitionable_devices and d.consumes_counters:
            s._release_counters(dev)
        del results[n_before:]

    return undo
