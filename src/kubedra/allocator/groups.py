"""DRADeviceCompatibilityGroups (1.37 alpha): devices drawing from one counter set may be allocated together
only when the ``compatibilityGroups`` of their counter consumptions intersect.

Upstream: k8s.io/dynamic-resource-allocation v0.37.2 ``structured/internal/experimental/compatibility_groups.go``
(``compatibilityGroupIntersection``) and ``allocator_experimental.go`` (``compatibilityGroupsBaselineForPool``,
``checkAndConsumeCompatibilityGroups``). The experimental allocator is the only one that enforces it (the
feature selects it); with the feature off every allocator ignores slices that use groups (``pools.py``).

A counter set's state is the intersection of the groups declared by every device placed on it: devices
already allocated in the cluster (the *baseline*, read from the pool's slices once per allocator, like the
available counters) and devices placed by the current search. A device declaring no groups only goes with
other devices declaring none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubedra.model.objects import Device


@dataclass(frozen=True)
class Intersection:
    """Upstream's ``compatibilityGroupIntersection``; immutable, so a saved value is a snapshot."""

    has_members: bool = False
    all_empty: bool = False
    groups: frozenset[str] = frozenset()

    def admits(self, groups: frozenset[str]) -> bool:
        if not self.has_members:
            return True
        if not groups:
            return self.all_empty
        if self.all_empty:
            return False
        return bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> Intersection:
        if not self.has_members:
            return Intersection(True, not groups, groups)
        if self.all_empty or not groups:
            return self
        return Intersection(True, False, self.groups & groups)


EMPTY = Intersection()
# per counter set name: the running intersection
Running = dict[str, Intersection]


def baseline(allocated_devices: Iterable[Device]) -> Running:
    """The intersection per counter set of the devices already allocated in the pool (every counter
    consumption of theirs counts, grouped or not)."""
    out: Running = {}
    for d in allocated_devices:
        for cc in d.consumes_counters:
            out[cc.counter_set] = out.get(cc.counter_set, EMPTY).add(frozenset(cc.compatibility_groups))
    return out


def check_and_consume(
    device: Device, running: Running, base: Running
) -> list[tuple[str, Intersection | None]] | None:
    """Fold ``device``'s groups into ``running`` (seeded from ``base`` per counter set). Returns what to
    restore (counter set, previous value or None when it was not in ``running``), or None, leaving
    ``running`` unchanged, when some counter set does not admit the device."""
    saved: list[tuple[str, Intersection | None]] = []
    for cc in device.consumes_counters:
        prev = running.get(cc.counter_set)
        cur = prev if prev is not None else base.get(cc.counter_set, EMPTY)
        groups = frozenset(cc.compatibility_groups)
        if not cur.admits(groups):
            restore(running, saved)
            return None
        saved.append((cc.counter_set, prev))
        running[cc.counter_set] = cur.add(groups)
    return saved


def restore(running: Running, saved: list[tuple[str, Intersection | None]]) -> None:
    for name, prev in reversed(saved):
        if prev is None:
            running.pop(name, None)
        else:
            running[name] = prev
