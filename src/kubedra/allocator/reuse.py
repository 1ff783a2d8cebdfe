"""Allocation results reused between nodes that look the same to the claims (the simulator's fleets).

A search's outcome depends on the node only through its candidate devices, in order: which of them the
requests' selectors accept, their capacity, counter consumption, taints and binding conditions, the pools'
counter sets, and which of them are in use. Two nodes built from the same hardware (a generated fleet's
copies share every one of these objects; only names and the GPUs' UUIDs differ) that agree on all of that
get the same picks, by position, from the same claim specs: the second node's results are the first's
picks applied to its own devices, without searching again. Nodes read from files share those objects too: the
parser hands out one object per distinct fact (:mod:`kubedra.model.facts`).

Only the plain case is reused, which keeps the equivalence exact:
- every pool of the node is complete, valid and local to it (all its slices name the node, none selects
  nodes per device), so what is in use there is decided by this node's devices alone;
- no slice asks to skip node operations (the node's declared features decide those);
- nothing in the cluster is shared or consumes capacity (shareIDs), and the claims have no constraints
  and no ``All``-mode requests;
- device facts are compared by object identity (equal objects are the same object), selector results by
  the positions each request accepts, computed for the whole node without a CEL runtime error;
- failures (None) are reused too; errors and timeouts are not (they are recomputed, as before).

Nothing is kept for a node whose shape no other node has (the simulator already caches per node), and when
the first 256 nodes are all different (every node its own hardware, or objects built one by one without
sharing), reuse turns itself off instead of paying for shapes and keys on every node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from kubedra.allocator.errors import AllocationError
from kubedra.allocator.pools import Pool
from kubedra.allocator.requests import Dev, DeviceResult, ReqData
from kubedra.allocator.selectors import mentioned_names
from kubedra.model.objects import ALLOCATION_MODE_EXACT, DeviceClaim, Node

if TYPE_CHECKING:
    from kubedra.allocator.search import Search

# nodes looked at before reuse gives up when no two of them were alike
GIVE_UP_AFTER = 256

# (request key (claim, request, subrequest), candidate position) per result, in result order, per claim
Picks = tuple[tuple[tuple[tuple[int, int, int], int], ...], ...]


@dataclass(slots=True)
class Shape:
    """One node's candidates as the search sees them, minus selectors and use: an interned id."""

    node: Node
    pools: list[Pool]
    shape: int | None  # None: this node is never reused (see the module docstring)
    groups: int = -1  # interned: per candidate, what a selector sees besides attribute and capacity values
    # per group: its candidates' attribute and capacity maps, in candidate order
    by_group: list[tuple[int, list[dict[str, Any]], list[dict[str, Any]]]] = field(default_factory=list)


@dataclass(slots=True)
class Layout:
    """What nodes of one shape have in common: where each candidate is, and each device's position."""

    where: list[tuple[int, int, int]]  # position -> (pool, slice in the pool, device in the slice)
    position: dict[tuple[int, str], int]  # (pool, device name) -> position


@dataclass(slots=True)
class Outcome:
    specs: tuple[DeviceClaim, ...]  # kept alive: the key holds their ids
    picks: Picks | None  # None: the claims do not fit
    subs: tuple[tuple[tuple[int, int], int], ...]  # firstAvailable: (claim, request) -> chosen subrequest


class Reuse:
    def __init__(self) -> None:
        self._shapes: dict[str, Shape] = {}
        self._layouts: dict[int, Layout] = {}
        self._interned: dict[tuple[Any, ...], int] = {}
        self._groups: list[tuple[Any, ...]] = []
        self._readers: dict[tuple[int, frozenset[str]], tuple[Callable[[Any], Any] | None, bool, bool]] = {}
        self._selected: dict[tuple[Any, ...], tuple[int, ...]] = {}
        self._orders: dict[tuple[Any, ...], tuple[Node, tuple[int, ...] | None]] = {}
        self._outcomes: dict[tuple[Any, ...], Outcome] = {}
        self.hits = 0
        self.off = False
        self._nodes_of: dict[int, int] = {}  # shape -> nodes seen with it
        self._nodes = 0
        self._repeats = 0

    def _intern(self, key: tuple[Any, ...]) -> int:
        n = self._interned.get(key)
        if n is None:
            n = self._interned[key] = len(self._groups)
            self._groups.append(key)
        return n

    def shape(self, node: Node, pools: list[Pool]) -> Shape:
        hit = self._shapes.get(node.name)
        if hit is not None and hit.node is node and hit.pools is pools:
            return hit
        s = Shape(node, pools, self._shape_of(node, pools))
        if hit is None and s.shape is not None:  # a node seen for the first time
            n = self._nodes_of[s.shape] = self._nodes_of.get(s.shape, 0) + 1
            self._nodes += 1
            self._repeats += n > 1
            if self._nodes >= GIVE_UP_AFTER and not self._repeats:
                # no two nodes alike (each its own hardware, or devices built without sharing): stop
                # paying for shapes and keys
                self.off = True
                self._shapes.clear()
                self._interned.clear()
                self._groups.clear()
                self._layouts.clear()
                self._nodes_of.clear()
                return s
        if s.shape is not None:
            intern = self._intern
            devices = [(sl.driver, d) for p in pools for sl in p.slices for d in sl.devices]
            # what a selector can see of a device besides its attribute and capacity values
            groups = [
                intern(
                    (
                        driver,
                        tuple(d.attributes),
                        tuple(d.capacity),
                        d.allow_multiple_allocations,
                        bool(d.binding_conditions),
                    )
                )
                for driver, d in devices
            ]
            s.groups = intern(tuple(groups))
            members: dict[int, list[int]] = {}
            for i, g in enumerate(groups):
                members.setdefault(g, []).append(i)
            s.by_group = [
                (g, [devices[i][1].attributes for i in pos], [devices[i][1].capacity for i in pos])
                for g, pos in members.items()
            ]
        self._shapes[node.name] = s
        return s

    def _shape_of(self, node: Node, pools: list[Pool]) -> int | None:
        """The interned shape of the node's candidates (the same order as Allocator._candidates)."""
        head: list[Any] = []
        devices: list[Any] = []
        where: list[tuple[int, int, int]] = []
        for pi, p in enumerate(pools):
            if p.incomplete or p.invalid or p.slices_not_targeting_node:
                return None
            head.append((p.driver, tuple((n, id(cs)) for n, cs in p.counter_sets.items())))
            for si, sl in enumerate(p.slices):
                if sl.node_name != node.name or sl.per_device_node_selection:
                    return None
                head.append((sl.driver, id(sl.shared_counters)))
                for di, d in enumerate(sl.devices):
                    where.append((pi, si, di))
                    devices.append(
                        (
                            d.name,
                            id(d.capacity),
                            id(d.consumes_counters),
                            id(d.taints),
                            id(d.binding_conditions),
                            id(d.binding_failure_conditions),
                            d.binds_to_node,
                            d.allow_multiple_allocations,
                        )
                    )
        # the objects behind the ids stay alive with the allocator's slices
        shape = self._intern((tuple(head), tuple(where), tuple(devices)))
        if shape not in self._layouts:
            position = {(pi, devices[i][0]): i for i, (pi, _, _) in enumerate(where)}
            self._layouts[shape] = Layout(where, position)
        return shape

    def _reader(self, group: int, names: frozenset[str]) -> tuple[Callable[[Any], Any] | None, bool, bool]:
        """For devices of ``group``: a getter of the attributes whose name is in ``names``, whether it
        returns a tuple, and whether a capacity name is in ``names`` (SelectorMatcher's shared key)."""
        key = (group, names)
        hit = self._readers.get(key)
        if hit is not None:
            return hit
        _, attrs, caps, _, _ = self._groups[group]
        wanted = [q for q in attrs if q.rpartition("/")[2] in names]
        getter = itemgetter(*wanted) if wanted else None
        hit = self._readers[key] = (getter, len(wanted) > 1, any(q.rpartition("/")[2] in names for q in caps))
        return hit

    def _order(
        self, run: Search, shape: Shape, ci: int, ri: int, si: int, rd: ReqData
    ) -> tuple[int, ...] | None:
        """Positions of the candidates the request selects, or None when a selector errs on one of them.

        Nodes whose devices look the same to the request's selectors (same groups in the same places, the
        same attribute objects for the names they mention, the same capacity maps when they mention a
        capacity) get the same answer, computed once."""
        node = run.node
        sel_key = rd.sel_key or run.sel_key(rd)
        key = (sel_key, node.name)
        hit = self._orders.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        names: set[str] | None = set()
        for e in [*(rd.cls.selectors if rd.cls is not None else ()), *rd.req.selectors]:
            m = mentioned_names(e)
            if m is None or names is None:  # an expression that may look at whole maps: device by device
                names = None
                break
            names |= m
        seen: tuple[Any, ...] | None = None
        if names is not None:
            frozen = frozenset(names)
            parts: list[Any] = [sel_key, shape.groups]
            for group, attrs, caps in shape.by_group:
                getter, many, by_cap = self._reader(group, frozen)
                if getter is not None:
                    got = map(getter, attrs)
                    parts.append(tuple(map(id, chain.from_iterable(got) if many else got)))
                if by_cap:
                    parts.append(tuple(map(id, caps)))
            # the objects behind the ids stay alive with the allocator's slices
            seen = tuple(parts)
            order = self._selected.get(seen)
            if order is not None:
                self._orders[key] = (node, order)
                return order
        try:
            order = tuple(
                i for i, dev in enumerate(run.candidates) if run.selectable_now(ci, ri, si, rd, dev)
            )
        except AllocationError:
            order = None
        if seen is not None and order is not None:
            self._selected[seen] = order
        self._orders[key] = (node, order)
        return order

    def key(self, run: Search) -> tuple[Any, ...] | None:
        """The key under which this call's outcome is kept, or None when it must be searched."""
        a = run.a
        if self.off or a.allocated.capacity or a.shared_ids_in_use():
            return None
        if any(run.constraints):
            return None
        if run.experimental and any(s.skip_node_operations for p in run.pools for s in p.slices):
            return None  # the outcome depends on the node's declared features too
        shape = self.shape(run.node, run.pools)
        if shape.shape is None or self._nodes_of.get(shape.shape, 0) < 2:
            return None  # a node like no other: nothing to share (the simulator caches per node)
        orders = []
        for (ci, ri, si), rd in run.req_data.items():
            if rd.req.mode != ALLOCATION_MODE_EXACT:
                return None
            order = self._order(run, shape, ci, ri, si, rd)
            if order is None:
                return None
            rd.order = list(order)
            orders.append(order)
        position = self._layouts[shape.shape].position
        by_pool = a.allocated.by_pool
        used = tuple(
            sorted(
                position[(pi, name)]
                for pi, p in enumerate(run.pools)
                for name in by_pool.get((p.driver, p.name), ())
                if (pi, name) in position
            )
        )
        specs = tuple(id(c.spec) for c in run.claims)
        return (shape.shape, specs, tuple(orders), used)

    def replay(self, key: tuple[Any, ...], run: Search) -> bool | None:
        shape = key[0]
        """True/False: the kept outcome was applied to ``run`` (fits / does not); None: nothing kept."""
        out = self._outcomes.get(key)
        if out is None or any(s is not c.spec for s, c in zip(out.specs, run.claims, strict=True)):
            return None
        self.hits += 1
        if out.picks is None:
            return False
        assert shape is not None
        where = self._layouts[shape].where
        pools = run.pools
        for ci, picks in enumerate(out.picks):
            results = run.results[ci]
            for rkey, pos in picks:
                r = run.req_data[rkey].req
                pi, si, di = where[pos]
                p = pools[pi]
                sl = p.slices[si]
                d = sl.devices[di]
                dev = Dev((p.driver, p.name, d.name), d, sl, p)
                results.append(DeviceResult(r, dev, None, None, True if r.admin else None))
        for (ci, ri), sub in out.subs:
            run.req_data[(ci, ri, 0)].selected_sub = sub
        return True

    def keep(self, key: tuple[Any, ...], run: Search, done: bool) -> None:
        specs = tuple(c.spec for c in run.claims)
        if not done:
            self._outcomes[key] = Outcome(specs, None, ())
            return
        position = {id(dev): i for i, dev in enumerate(run.candidates)}
        rkeys = {id(rd.req): k for k, rd in run.req_data.items()}
        picks: list[tuple[tuple[tuple[int, int, int], int], ...]] = []
        for results in run.results:
            one = []
            for res in results:
                pos = position.get(id(res.dev))
                rkey = rkeys.get(id(res.req))
                if pos is None or rkey is None or res.share_id is not None or res.consumed:
                    return
                one.append((rkey, pos))
            picks.append(tuple(one))
        subs = tuple(
            ((ci, ri), rd.selected_sub) for (ci, ri, si), rd in run.req_data.items() if si == 0 and rd.is_sub
        )
        self._outcomes[key] = Outcome(specs, tuple(picks), subs)
