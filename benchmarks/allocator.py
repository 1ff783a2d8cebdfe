"""Allocator speed: the per-node Filter equivalent (one Allocate call) on two shapes.

(a) upstream scheduler_perf's shape: 500 nodes x 10 simple devices, one-device claims (class selector on
    the driver), the cluster filling up as claims are allocated;
(b) one node with 8 H100-80GB in dynamic MIG mode (208 devices, 8 counter sets of 15 counters, as the
    NVIDIA DRA driver publishes them) and a mixed stream of MIG-profile claims until the node is full.

Prints allocations/s, the median/p90 time of one Allocate call (one node), and CEL evaluations/s.
Run: .venv/bin/python benchmarks/allocator.py
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from shapes import driver_class, scheduler_perf_node, scheduler_perf_slice

from kubedra.allocator import AllocatedState, Allocator
from kubedra.allocator.session import engine_config
from kubedra.model.objects import DeviceClaim, ObjectMeta, ResourceClaim
from kubedra.model.parse import parse_object
from kubedra.vendors.nvidia import dra as nvidia_dra


def _obj(d: dict[str, Any]) -> Any:
    parsed = parse_object(d)
    assert parsed is not None
    return parsed.obj


def simple_cluster(nodes: int, devices: int) -> tuple[list[Any], list[Any], Any]:
    slices = []
    node_objs = []
    for n in range(nodes):
        node_objs.append(_obj(scheduler_perf_node(n)))
        slices.append(_obj(scheduler_perf_slice(n, devices)))
    cls = _obj(driver_class())
    return node_objs, slices, cls


def claim(name: str, spec: DeviceClaim) -> ResourceClaim:
    return ResourceClaim(meta=ObjectMeta(name=name, namespace="bench"), spec=spec)


def one_device_spec(class_name: str, selector: str | None = None) -> DeviceClaim:
    req: dict[str, Any] = {"name": "gpu", "exactly": {"deviceClassName": class_name}}
    if selector:
        req["exactly"]["selectors"] = [{"cel": {"expression": selector}}]
    obj = _obj(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "x", "namespace": "bench"},
            "spec": {"devices": {"requests": [req]}},
        }
    )
    spec: DeviceClaim = obj.spec
    return spec


def bench_simple() -> None:
    cfg = engine_config("1.37")
    nodes, slices, cls = simple_cluster(500, 10)
    state = AllocatedState()
    alloc = Allocator(cfg.features, [cls], slices, state)
    spec = one_device_spec("test-class")
    times = []
    allocated = 0
    t0 = time.perf_counter()
    for i in range(5000):
        node = nodes[i % len(nodes)]
        c = claim(f"c{i}", spec)
        s = time.perf_counter()
        res = alloc.allocate(node, [c])
        times.append(time.perf_counter() - s)
        if res is not None:
            c.allocation = res[0]
            state.add_claim(c)
            alloc.invalidate_pool(res[0].results[0].pool, res[0].results[0].driver)
            allocated += 1
    total = time.perf_counter() - t0
    times.sort()
    print("(a) 500 nodes x 10 devices, 5,000 one-device claims (one Allocate per claim, round-robin nodes)")
    print(f"    allocated {allocated} claims in {total:.2f} s = {allocated / total:,.0f} allocations/s")
    print(
        f"    one Allocate (= one node's Filter): median {statistics.median(times) * 1e6:.0f} us, "
        f"p90 {times[int(len(times) * 0.9)] * 1e6:.0f} us, max {times[-1] * 1e3:.1f} ms"
    )
    print(
        f"    CEL evaluations run: {alloc.matcher.evaluations} (every other selector check was a cache hit)"
    )


def bench_mig() -> None:
    cfg = engine_config("1.37")
    objs = nvidia_dra.dra_objects("h100-0", "H100-80GB", 8, "mig-dynamic", "1.37")
    classes = [_obj(c) for c in nvidia_dra.device_classes("1.37")]
    slices = [_obj(o) for o in objs if o["kind"] == "ResourceSlice"]
    node = _obj({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "h100-0"}})
    devices = sum(len(s.devices) for s in slices)
    state = AllocatedState()
    alloc = Allocator(cfg.features, classes, slices, state)
    profiles = ["1g.10gb", "2g.20gb", "3g.40gb", "1g.20gb", "1g.10gb", "4g.40gb", "7g.80gb"]
    specs = {
        p: one_device_spec("mig.nvidia.com", f'device.attributes["gpu.nvidia.com"].profile == "{p}"')
        for p in profiles
    }
    times = []
    allocated = attempts = 0
    t0 = time.perf_counter()
    i = 0
    misses_in_a_row = 0
    while misses_in_a_row < len(profiles):
        p = profiles[i % len(profiles)]
        i += 1
        c = claim(f"c{i}", specs[p])
        s = time.perf_counter()
        res = alloc.allocate(node, [c])
        times.append(time.perf_counter() - s)
        attempts += 1
        if res is None:
            misses_in_a_row += 1
            continue
        misses_in_a_row = 0
        c.allocation = res[0]
        state.add_claim(c)
        alloc.invalidate_pool(res[0].results[0].pool, res[0].results[0].driver)
        allocated += 1
    total = time.perf_counter() - t0
    times.sort()
    print(
        f"(b) 1 node, 8x H100-80GB dynamic MIG ({devices} devices, 8 counter sets), mixed MIG-profile claims"
    )
    print(
        f"    {attempts} Allocate calls ({allocated} allocated until the node was full) in {total:.2f} s "
        f"= {attempts / total:,.0f} calls/s"
    )
    print(
        f"    one Allocate: median {statistics.median(times) * 1e3:.2f} ms, p90 {times[int(len(times) * 0.9)] * 1e3:.2f} ms, "
        f"max {times[-1] * 1e3:.1f} ms; CEL evaluations run: {alloc.matcher.evaluations}"
    )


def bench_cel() -> None:
    from kubedra.allocator.selectors import SelectorMatcher

    _, slices, _ = simple_cluster(100, 10)
    devices = [(d, s.driver) for s in slices for d in s.devices]
    m = SelectorMatcher()
    # upstream scheduler_perf's selector_empty_500nodes selector (dra/performance-config.yaml, v1.37.2)
    expr = (
        'device.attributes["test-driver.cdi.k8s.io"].driverVersion.major() >= 1 && '
        'device.capacity["test-driver.cdi.k8s.io"].memory.isGreaterThan(quantity("1Mi"))'
    )
    t0 = time.perf_counter()
    for d, drv in devices:
        m.matches(0, expr, d, drv)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(10):
        for d, drv in devices:
            m.matches(0, expr, d, drv)
    warm = time.perf_counter() - t0
    print(
        f"(c) upstream's two-clause selector (version major(), quantity isGreaterThan) over {len(devices)} devices"
    )
    print(
        f"    first pass {len(devices) / cold:,.0f} checks/s ({m.evaluations} CEL evaluations, the rest shared by "
        f"content), memoised {len(devices) * 10 / warm:,.0f} checks/s"
    )


if __name__ == "__main__":
    bench_simple()
    bench_mig()
    bench_cel()
