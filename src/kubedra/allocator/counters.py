"""Partitionable devices' counters during one search (upstream ``checkAvailableCounters``).

What each pool's counter sets have left once the allocated devices' consumption is taken off, and what the
devices the search is allocating consume of them (``deallocateCountersForDevice`` on rollback); a mixin of
:class:`kubedra.allocator.search.Search`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from kubedra.allocator.requests import Dev
from kubedra.k8s.quantity import Quantity
from kubedra.model.objects import CounterSet, Device, ResourceSlice

if TYPE_CHECKING:
    from kubedra.allocator.core import Allocator


C = TypeVar("C", bound=dict[str, Any])  # one counter set's counters: nano-units, or v0.38 Quantities


def consumed_from(device: Device, avail: Mapping[str, C]) -> Iterator[tuple[C, str, Quantity]]:
    """Each counter ``device`` consumes of a counter set in ``avail``, as (that set's counters, the counter's
    name, the quantity consumed), in the order the device lists them; a set or counter ``avail`` lacks is passed
    over, as upstream's checkAvailableCounters and its bookkeeping pass it over."""
    for cc in device.consumes_counters:
        cset = avail.get(cc.counter_set)
        if cset is None:
            continue
        for n, q in cc.counters.items():
            if n in cset:
                yield cset, n, q


class CounterTracking:
    """The counter bookkeeping of a search; ``a``, ``consumed_counters`` and ``consumed_wide`` are set by it."""

    a: Allocator
    consumed_counters: dict[str, dict[str, dict[str, int]]]
    consumed_wide: dict[str, dict[str, dict[str, Quantity]]]

    def _counter_key(self, dev: Dev) -> str:
        """The counter caches' key (:meth:`Allocator.counter_key`)."""
        return self.a.counter_key(dev.slice.driver, dev.slice.pool.name, dev.slice.name)

    def _scope(self, dev: Dev) -> tuple[Iterable[CounterSet], list[ResourceSlice]]:
        """The counter sets a device's consumption is checked against and the slices whose devices consume
        them (upstream: the pool's DeviceSlicesTargetingNode then DeviceSlicesNotTargetingNode)."""
        if self.a.pool_counters:
            return dev.pool.counter_sets.values(), [*dev.pool.slices, *dev.pool.slices_not_targeting_node]
        return dev.slice.shared_counters, [dev.slice]

    def _wide(self, dev: Dev) -> bool:
        """Whether this pool's counters must be summed with apimachinery v0.38's Quantity (1.38,
        quantity.nineteenDigitInt64), not as exact nano-units. v0.38's Add and Sub round an operand whose
        base-10 exponent is more than 29 below the other's (boundScaleGap), and every exponent is at least -9,
        so exact sums are upstream's while no counter or consumption has an exponent above 20 and each reads
        the same under v0.38's ParseQuantity (29 significant digits); a pool with one that does not is
        summed with :meth:`Quantity.add`/:meth:`Quantity.sub` in upstream's order."""
        if not self.a.quantity_since_138:
            return False
        key = self._counter_key(dev)
        hit = self.a._wide_counters.get(key)
        if hit is None:
            sets, scan = self._scope(dev)
            leaves = [q for cs in sets for q in cs.counters.values()]
            leaves += [
                q
                for sl in scan
                for d in sl.devices
                for cc in d.consumes_counters
                for q in cc.counters.values()
            ]
            hit = self.a._wide_counters[key] = any(
                (r := q.at(True)).nanos != q.nanos or r.exponent() > 20 for q in leaves
            )
        return hit

    def _available(self, dev: Dev) -> dict[str, dict[str, int]]:
        key = self._counter_key(dev)
        cache = self.a._available_counters
        avail = cache.get(key)
        if avail is not None:
            return avail
        sets, scan = self._scope(dev)
        avail = {cs.name: {n: q.nanos for n, q in cs.counters.items()} for cs in sets}
        for cset, n, q in self._consumed(scan, avail):
            cset[n] -= q.nanos
        cache[key] = avail
        if any(v < 0 for c in avail.values() for v in c.values()):
            self.a._overdrawn.add(key)
        else:
            self.a._overdrawn.discard(key)
        return avail

    def _consumed(
        self, scan: Iterable[ResourceSlice], avail: Mapping[str, C]
    ) -> Iterator[tuple[C, str, Quantity]]:
        """:func:`consumed_from` ``avail`` by every allocated device of ``scan``, in upstream's order (slices,
        devices, consumptions as listed)."""
        for s in scan:
            for d in s.devices:
                if d.consumes_counters and self.a.takes_counters((s.driver, s.pool.name, d.name)):
                    yield from consumed_from(d, avail)

    def _available_wide(self, dev: Dev) -> dict[str, dict[str, Quantity]]:
        """:meth:`_available` with v0.38's Quantity: each counter's value, minus (``Quantity.Sub``) what every
        allocated device consumes of it, in upstream's order (slices, devices, consumptions as listed)."""
        key = self._counter_key(dev)
        cache = self.a._available_wide
        avail = cache.get(key)
        if avail is not None:
            return avail
        sets, scan = self._scope(dev)
        avail = {cs.name: {n: q.at(True) for n, q in cs.counters.items()} for cs in sets}
        for wide, n, q in self._consumed(scan, avail):
            wide[n] = wide[n].sub(q.at(True))
        cache[key] = avail
        return avail

    def _take_counters(self, dev: Dev) -> bool:
        if self._wide(dev):
            return self._take_counters_wide(dev)
        avail = self._available(dev)
        consumed = self.consumed_counters.setdefault(self._counter_key(dev), {})
        for cc in dev.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for n, q in cc.counters.items():
                cset[n] = cset.get(n, 0) + q.nanos
        # every other counter set passed this check when its consumption last changed; without a counter
        # that was negative to begin with, only the sets this device consumes can fail now
        if self._counter_key(dev) in self.a._overdrawn:
            check: Iterable[str] = avail
        else:
            check = [cc.counter_set for cc in dev.device.consumes_counters if cc.counter_set in avail]
        for set_name in check:
            counters = avail[set_name]
            used = consumed.get(set_name, {})
            for n, v in counters.items():
                if v < used.get(n, 0):
                    self._release_counters(dev)
                    return False
        return True

    def _take_counters_wide(self, dev: Dev) -> bool:
        """upstream's checkAvailableCounters with v0.38's Quantity: the first consumption of a counter is
        stored as written, later ones added (``Quantity.Add``), then every counter of the pool compared."""
        avail = self._available_wide(dev)
        consumed = self.consumed_wide.setdefault(self._counter_key(dev), {})
        for cc in dev.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for n, q in cc.counters.items():
                cset[n] = cset[n].add(q.at(True)) if n in cset else q.at(True)
        for set_name, counters in avail.items():
            used = consumed.get(set_name, {})
            for n, v in counters.items():
                if v.nanos < (used[n].nanos if n in used else 0):
                    self._release_counters(dev)
                    return False
        return True

    def _release_counters(self, dev: Dev) -> None:
        if self._wide(dev):  # upstream's deallocateCountersForDevice: Quantity.Sub of each consumption
            wide = self.consumed_wide.get(self._counter_key(dev), {})
            for cc in dev.device.consumes_counters:
                wset = wide.setdefault(cc.counter_set, {})
                for n, q in cc.counters.items():
                    wset[n] = wset[n].sub(q.at(True)) if n in wset else Quantity(0).sub(q.at(True))
            return
        consumed = self.consumed_counters.get(self._counter_key(dev), {})
        for cc in dev.device.consumes_counters:
            cset = consumed.setdefault(cc.counter_set, {})
            for n, q in cc.counters.items():
                cset[n] = cset.get(n, 0) - q.nanos
