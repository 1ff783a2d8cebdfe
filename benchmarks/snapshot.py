"""A fleet snapshot simulated whole: ``kubedra simulate -f fleet.json`` at 5,000 / 20,000 / 65,000 nodes.

Target: a 65,000-node snapshot (GKE's largest cluster), 20 pods per node, GPU nodes with the
ResourceSlices the NVIDIA DRA driver publishes, simulated in under 10 minutes and 16 GB peak RSS.

The snapshot is written once per size by ``shapes.write_fleet_snapshot`` as ``kubedra snapshot -o json``
writes one (a ``List`` with the kubedra header, ``json.dumps(indent=1)``): 8 x H100-80GB nodes as kubelet
and GPU Feature Discovery report them, one ResourceSlice each (8 GPUs), 20 running pods per node (6 DaemonSet
pods; on three nodes of four, 2 training pods holding 4 GPUs each through allocated ResourceClaims, and
service pods), and ``nodes // 20`` pending pods of a Job asking for 8 GPUs each, which the simulation places
on the free nodes. Then, each in a fresh process, ``kubedra simulate -f FILE --mode dra -o json`` and, as
the floor, a process that only streams the file's items through the JSON C decoder
(``kubedra.sources.jsonstream``, which simulate reads large JSON with). Printed: CPU seconds (user + system
from wait4, not inflated by a busy machine), wall seconds and peak RSS per size, per node and per pod, and,
with two sizes or more, a least-squares line extrapolated to ``--extrapolate`` nodes (default 65,000)
against the target.

Memory: the 65,000-node file is ~6.5 GB; measure smaller sizes first and read the extrapolation before
running a size whose predicted peak RSS does not fit the machine (``--max-rss-gb``, default 12, refuses it).

With ``--read-back``, the same file is also read back by the verbs that take a snapshot whole from 64 MiB on
item by item (``kubedra verify -f``, ``kubedra audit -f``, ``kubedra plan`` of a one-cluster fleet naming it):
CPU and peak RSS of each, one run.

Run: .venv/bin/python benchmarks/snapshot.py [--nodes 2000,5000,20000] [--keep DIR] [--runs N] [--read-back]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from shapes import FLEET_PODS_PER_NODE, write_fleet_snapshot
from simulate import _child

TARGET_CPU_S = 600.0
TARGET_RSS_GB = 16.0
FLOOR = (
    "import sys; from kubedra.sources.jsonstream import JsonListStream\n"
    "n = 0\n"
    "with open(sys.argv[1], encoding='utf-8') as f:\n"
    "    for _ in JsonListStream(f, sys.argv[1]).items():\n"
    "        n += 1\n"
    "print(n)"
)


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through the points."""
    if len(xs) < 2:
        return 0.0, ys[0] / xs[0]
    slope, intercept = statistics.linear_regression(xs, ys)
    return intercept, slope


def read_back(path: Path, nodes: int) -> None:
    """CPU and peak RSS of verify -f, audit -f and plan reading the snapshot back (one run each)."""
    fleet = path.with_suffix(".fleet.yaml")
    fleet.write_text(
        f"apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        f"- {{name: fleet-{nodes}, snapshot: {path.name}, distribution: kubeadm}}\n"
    )
    verbs = {
        "verify -f": ["verify", "-f", str(path)],
        "audit -f": ["audit", "-f", str(path)],
        "plan": ["plan", "--fleet", str(fleet)],
    }
    for label, argv in verbs.items():
        cpu, wall, rss, _ = _child([sys.executable, "-m", "kubedra", *argv, "-o", "json"])
        print(
            f"    kubedra {label}: {cpu:,.1f} s CPU, {wall:,.1f} s wall, peak RSS {rss:,.0f} MiB", flush=True
        )


def run_size(nodes: int, pods_per_node: int, runs: int, workdir: Path) -> dict[str, float]:
    path = workdir / f"fleet-{nodes}-{pods_per_node}.json"
    if not path.exists():
        t0 = time.process_time()
        items = write_fleet_snapshot(str(path), nodes, pods_per_node)
        print(f"  wrote {path.name}: {items:,} objects in {time.process_time() - t0:.0f} s CPU", flush=True)
    size = path.stat().st_size
    kubedra = [sys.executable, "-m", "kubedra", "simulate", "-f", str(path), "--mode", "dra", "-o", "json"]
    floor = [sys.executable, "-c", FLOOR, str(path)]
    ks, fs = [], []
    placed = pending = 0
    for _ in range(runs):
        cpu, wall, rss, out = _child(kubedra)
        dra = json.loads(out)["modes"]["dra"]
        placed, pending = dra["placed"], dra["pending"]
        ks.append((cpu, wall, rss))
        fs.append(_child(floor)[:3])
    k_cpu, k_wall, k_rss = (statistics.median(r[i] for r in ks) for i in range(3))
    f_cpu, _, f_rss = (statistics.median(r[i] for r in fs) for i in range(3))
    pods = nodes * pods_per_node
    print(
        f"  {nodes:,} nodes, {pods:,} running pods, {nodes // 20:,} pending ({placed:,} placed, {pending:,} "
        f"left pending); {size / 2**20:,.0f} MiB of JSON"
    )
    print(
        f"    kubedra simulate -f: {k_cpu:,.1f} s CPU, {k_wall:,.1f} s wall, peak RSS {k_rss:,.0f} MiB"
        f" = {k_cpu / nodes * 1000:.2f} ms and {k_rss / nodes * 1024:,.0f} KiB per node"
    )
    print(
        f"    floor, the items streamed through the JSON decoder alone: {f_cpu:,.1f} s CPU, peak RSS "
        f"{f_rss:,.0f} MiB; ratio {k_cpu / f_cpu:.1f}x (median of {runs})",
        flush=True,
    )
    return {"nodes": nodes, "cpu": k_cpu, "rss": k_rss, "floor": f_cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="2000,5000", help="comma-separated node counts (default 2000,5000)")
    ap.add_argument("--pods-per-node", type=int, default=FLEET_PODS_PER_NODE)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--extrapolate", type=int, default=65_000, help="node count to extrapolate to")
    ap.add_argument(
        "--keep", metavar="DIR", help="write (and reuse) the snapshots here instead of a temp dir"
    )
    ap.add_argument("--max-rss-gb", type=float, default=12.0, help="refuse a size predicted to need more")
    ap.add_argument(
        "--read-back", action="store_true", help="also time verify -f, audit -f and plan on each file"
    )
    args = ap.parse_args()
    sizes = sorted(int(n) for n in args.nodes.split(","))
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (CPU seconds are not inflated "
        "by load)"
    )
    print(f"fleet snapshot: 8 x H100-80GB nodes, {args.pods_per_node} running pods per node")
    results: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        workdir = Path(args.keep or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for n in sizes:
            if len(results) >= 2:
                a, b = fit([r["nodes"] for r in results], [r["rss"] for r in results])
                if (a + b * n) / 1024 > args.max_rss_gb:
                    print(
                        f"  {n:,} nodes skipped: predicted peak RSS {(a + b * n) / 1024:.1f} GB > --max-rss-gb"
                    )
                    continue
            results.append(run_size(n, args.pods_per_node, args.runs, workdir))
            if args.read_back:
                read_back(workdir / f"fleet-{n}-{args.pods_per_node}.json", n)
    if len(results) >= 2:
        xs = [r["nodes"] for r in results]
        a, b = fit(xs, [r["cpu"] for r in results])
        c, d = fit(xs, [r["rss"] for r in results])
        n = args.extrapolate
        cpu, rss = a + b * n, (c + d * n) / 1024
        print(
            f"extrapolated to {n:,} nodes ({n * args.pods_per_node:,} pods), least squares over {len(xs)} sizes: "
            f"CPU {a:.1f} s + {b * 1000:.2f} ms/node = {cpu:,.0f} s (target < {TARGET_CPU_S:.0f} s: "
            f"{'met' if cpu < TARGET_CPU_S else 'NOT met'}); peak RSS {c:.0f} MiB + {d * 1024:.0f} KiB/node = "
            f"{rss:.1f} GB (target < {TARGET_RSS_GB:.0f} GB: {'met' if rss < TARGET_RSS_GB else 'NOT met'})"
        )


if __name__ == "__main__":
    main()
