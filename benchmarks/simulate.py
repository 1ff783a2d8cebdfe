"""Whole-cluster scheduling speed of ``kubedra simulate`` (DRA mode), on two shapes.

(a) upstream scheduler_perf's ``SchedulingWithResourceClaimTemplate/5000pods_500nodes`` shape:
    500 nodes x 10 devices (one ResourceSlice per node, attributes model/family/driverVersion/numa,
    capacity memory 1Gi), 5,000 pods each with one claim from a template for one device of a class whose
    selector is ``device.driver == "..."``; the cluster fills to 100%.
    Upstream kube-scheduler: CI gate >= 40 pods/s, 40-470 pods/s measured on the same shape.
(b) 1,000 nodes x 8 H100-80GB with NVIDIA dynamic MIG (208 devices and 8 counter sets per node, as the
    DRA driver publishes them) and 20,000 pods: a mix of 1g.10gb / 2g.20gb / 3g.40gb MIG claims and
    whole GPUs; end to end (generate the cluster, parse it, expand and convert the workloads, schedule).

Prints pods/s of the scheduling loop, wall time and peak RSS (ru_maxrss) per shape, each the median of
``--runs`` runs (default 3). Run: .venv/bin/python benchmarks/simulate.py [--shape a|b] [--runs N]
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from shapes import driver_class, scheduler_perf_slice

DRIVER = "test-driver.cdi.k8s.io"


def shape_a(nodes: int = 500, devices: int = 10, pods: int = 5000) -> dict[str, float]:
    from kubedra.allocator.session import engine_config
    from kubedra.model.parse import parse_object
    from kubedra.scheduler.build import build_sim_pods
    from kubedra.scheduler.simulator import Scheduler

    def obj(d: dict[str, Any]) -> Any:
        parsed = parse_object(d)
        assert parsed is not None
        return parsed.obj

    t0 = time.perf_counter()
    c0 = time.process_time()
    node_objs = []
    slices = []
    for n in range(nodes):
        name = f"scheduler-perf-dra-{n}"
        node_objs.append(
            obj(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {"name": name},
                    "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
                }
            )
        )
        slices.append(obj(scheduler_perf_slice(name, devices, DRIVER)))
    cls = obj(driver_class("test-class", DRIVER))
    rct = obj(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "test-claim-template", "namespace": "default"},
            "spec": {
                "spec": {
                    "devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}]}
                }
            },
        }
    )
    pod_objs = [
        obj(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"test-dra-{i}", "namespace": "default"},
                "spec": {
                    "containers": [
                        {"name": "pause", "image": "pause", "resources": {"claims": [{"name": "resource"}]}}
                    ],
                    "resourceClaims": [
                        {"name": "resource", "resourceClaimTemplateName": "test-claim-template"}
                    ],
                },
            }
        )
        for i in range(pods)
    ]
    sched = Scheduler(engine_config("1.37"), node_objs, [cls], slices)
    sim_pods = build_sim_pods(pod_objs, [rct], [])
    t1 = time.perf_counter()
    c1 = time.process_time()
    sched.run(sim_pods)
    c2 = time.process_time()
    t2 = time.perf_counter()
    placed = sum(1 for p in sim_pods if p.node)
    assert placed == min(pods, nodes * devices), placed
    return {
        "pods": pods,
        "placed": placed,
        "loop_s": t2 - t1,
        "loop_cpu": c2 - c1,
        "total_s": t2 - t0,
        "total_cpu": time.process_time() - c0,
    }


def shape_b(nodes: int = 1000, pods: int = 20000) -> dict[str, float]:
    from kubedra.simulate.cluster import ClusterOptions
    from kubedra.simulate.inputs import Inputs
    from kubedra.simulate.run import SimulateOptions, simulate
    from kubedra.sources.files import Document

    mix = [  # (name, replicas share, resources)
        ("small", 8, {"nvidia.com/mig-1g.10gb": 1}),
        ("medium", 6, {"nvidia.com/mig-2g.20gb": 1}),
        ("large", 4, {"nvidia.com/mig-3g.40gb": 1}),
        ("whole", 2, {"nvidia.com/gpu": 1}),
    ]
    total = sum(m[1] for m in mix)
    docs = []
    for i, (name, share, res) in enumerate(mix):
        replicas = pods * share // total
        docs.append(
            Document(
                obj={
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": name, "namespace": "bench"},
                    "spec": {
                        "replicas": replicas,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "c",
                                        "image": "x",
                                        "resources": {"requests": {"cpu": "1"}, "limits": dict(res)},
                                    }
                                ]
                            }
                        },
                    },
                },
                file="<bench>",
                line=0,
                index=i,
            )
        )
    t0 = time.perf_counter()
    c0 = time.process_time()
    opts = SimulateOptions(
        modes=("dra",), cluster=ClusterOptions(nodes=f"{nodes}x8xH100-80GB", gpu_mode="mig-dynamic")
    )
    sim = simulate(Inputs(documents=docs), opts)
    t1 = time.perf_counter()
    c1 = time.process_time()
    r = sim.results["dra"]
    return {
        "pods": len(r.pods),
        "placed": r.placed,
        "loop_s": r.seconds,
        "loop_cpu": r.cpu_seconds,
        "total_s": t1 - t0,
        "total_cpu": c1 - c0,
    }


def _one(shape: str) -> None:
    gc.collect()
    out = shape_a() if shape == "a" else shape_b()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    fields = (
        out["pods"],
        out["placed"],
        out["loop_s"],
        out["loop_cpu"],
        out["total_s"],
        out["total_cpu"],
        rss,
    )
    print("\t".join(str(f) for f in fields), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=["a", "b", "both"], default="both")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--one", choices=["a", "b"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        _one(args.one)
        return
    shapes = ["a", "b"] if args.shape == "both" else [args.shape]
    titles = {
        "a": "(a) scheduler_perf shape: 500 nodes x 10 devices, 5,000 pods x 1 single-device claim",
        "b": "(b) 1,000 nodes x 8 H100-80GB dynamic MIG (208 devices/node), 20,000 mixed pods, end to end",
    }
    print(
        f"machine: {os.cpu_count()} cores; wall and CPU seconds (CPU time is not inflated by a busy machine)"
    )
    for shape in shapes:
        rows = []
        for _ in range(args.runs):  # a fresh process per run: peak RSS is per run
            res = subprocess.run(
                [sys.executable, __file__, "--one", shape], capture_output=True, text=True, check=True
            )
            rows.append([float(x) for x in res.stdout.strip().splitlines()[-1].split("\t")])
        pods, placed = int(rows[0][0]), int(rows[0][1])
        loop, loop_cpu, total, total_cpu, rss = (statistics.median(r[i] for r in rows) for i in range(2, 7))
        print(titles[shape])
        print(
            f"  scheduling loop: {pods / loop:,.0f} pods/s wall, {pods / loop_cpu:,.0f} pods/s CPU "
            f"({loop:.2f} s wall, {loop_cpu:.2f} s CPU for {pods:,} pods, {placed:,} placed)"
        )
        print(
            f"  end to end: {total:.2f} s wall, {total_cpu:.2f} s CPU; peak RSS {rss:,.0f} MiB; "
            f"median of {len(rows)} runs"
        )


if __name__ == "__main__":
    main()
