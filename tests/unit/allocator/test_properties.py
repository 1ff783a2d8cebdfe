"""Property tests: every allocation is valid, and the search is complete (it finds a solution whenever a
brute-force enumeration does) on small random problems.

Completeness is only asserted where upstream's allocator is complete: without device taints combined with
counters or constraints (upstream keeps counters taken by a device that a taint or constraint rejected,
see test_allocator.test_quirk_counters_not_released_when_taint_rejects_device), and without
distinctAttribute on requests with more than two devices (its per-request memory is a known quirk).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubedra.allocator import Allocator, Features
from kubedra.model.objects import DeviceConstraint, DeviceRequest

from .helpers import claim, cls, consumes, counter_set, dev, node, req, slice_, sub

FEATURES = Features(prioritized_list=True, partitionable_devices=True, device_taints=True)


@dataclass
class Problem:
    devices: list[tuple[str, int, int]]  # name, numa, memory units (0 = no counters)
    capacity: int  # counter "mem" of the single counter set; 0 = no counters at all
    claims: list[list[tuple[int, ...]]]  # per claim, per request: the count of each alternative
    match: list[bool]  # per claim: matchAttribute numa over all requests


@st.composite
def problems(draw: st.DrawFn) -> Problem:
    n = draw(st.integers(1, 5))
    use_counters = draw(st.booleans())
    devices = [
        (f"d{i}", draw(st.integers(0, 1)), draw(st.integers(1, 4)) if use_counters else 0) for i in range(n)
    ]
    nclaims = draw(st.integers(1, 2))
    claims = []
    for _ in range(nclaims):
        nreq = draw(st.integers(1, 2))
        claims.append([tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))) for _ in range(nreq)])
    match = [draw(st.booleans()) and not use_counters for _ in claims]
    return Problem(devices, draw(st.integers(2, 8)) if use_counters else 0, claims, match)


def build(p: Problem) -> tuple[Allocator, list]:
    devices = []
    for name, numa, mem in p.devices:
        kw = {"consumes_counters": consumes("set", mem=str(mem))} if mem else {}
        devices.append(dev(name, {"numa": numa}, **kw))
    if p.capacity:
        slices = [
            slice_("a", [], counters=[counter_set("set", mem=str(p.capacity))], count=2),
            slice_("b", devices, count=2),
        ]
    else:
        slices = [slice_("b", devices)]
    claims = []
    for ci, reqs in enumerate(p.claims):
        requests = []
        for ri, alts in enumerate(reqs):
            if len(alts) == 1:
                requests.append(req(f"r{ri}", count=alts[0]))
            else:
                requests.append(
                    DeviceRequest(
                        name=f"r{ri}", first_available=[sub(f"s{k}", c) for k, c in enumerate(alts)]
                    )
                )
        cons = [DeviceConstraint(match_attribute="driver-a/numa")] if p.match[ci] else []
        claims.append(claim(f"c{ci}", *requests, constraints=cons))
    return Allocator(FEATURES, [cls()], slices), claims


def brute_force(p: Problem) -> bool:
    names = [d[0] for d in p.devices]
    numa = {d[0]: d[1] for d in p.devices}
    mem = {d[0]: d[2] for d in p.devices}
    slots = [(ci, alts) for ci, reqs in enumerate(p.claims) for alts in reqs]
    for counts in itertools.product(*[alts for _, alts in slots]):
        total = sum(counts)
        if total > len(names):
            continue
        for perm in itertools.permutations(names, total):
            pos = 0
            ok = True
            per_claim: dict[int, list[str]] = {}
            for (ci, _), c in zip(slots, counts, strict=True):
                per_claim.setdefault(ci, []).extend(perm[pos : pos + c])
                pos += c
            for ci, picked in per_claim.items():
                if p.match[ci] and len({numa[d] for d in picked}) > 1:
                    ok = False
            if p.capacity and sum(mem[d] for d in perm) > p.capacity:
                ok = False
            if ok:
                return True
    return False


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_search_is_complete_and_results_are_valid(p: Problem) -> None:
    a, claims = build(p)
    results = a.allocate(node(), claims)
    assert (results is not None) == brute_force(p)
    if results is None:
        return
    used: list[str] = []
    for ci, (c, res) in enumerate(zip(claims, results, strict=True)):
        devices = [r.device for r in res.results]
        used += devices
        # every request got exactly the count of the alternative it reports
        for ri, r in enumerate(c.spec.requests):
            mine = [x for x in res.results if x.request.split("/")[0] == r.name]
            if r.exactly is not None:
                assert len(mine) == r.exactly.count
            else:
                alt = mine[0].request.split("/")[1]
                want = next(s.count for s in r.first_available if s.name == alt)
                assert len(mine) == want
                assert all(x.request == f"r{ri}/{alt}" for x in mine)
        if p.match[ci]:
            assert len({next(d[1] for d in p.devices if d[0] == x) for x in devices}) == 1
    assert len(used) == len(set(used)), "a device was given to two requests"
    if p.capacity:
        assert sum(next(d[2] for d in p.devices if d[0] == x) for x in used) <= p.capacity


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(1, 5))
def test_single_prioritized_request_takes_the_first_alternative_that_fits(alts: list[int], n: int) -> None:
    a = Allocator(FEATURES, [cls()], [slice_("s", [dev(f"d{i}") for i in range(n)])])
    r = DeviceRequest(name="r", first_available=[sub(f"s{k}", c) for k, c in enumerate(alts)])
    res = a.allocate(node(), [claim("c", r)])
    fitting = [k for k, c in enumerate(alts) if c <= n]
    if not fitting:
        assert res is None
        return
    assert res is not None
    assert {x.request for x in res[0].results} == {f"r/s{fitting[0]}"}
    assert len(res[0].results) == alts[fitting[0]]
