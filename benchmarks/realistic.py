"""Does each verb scale with the cluster, not its square? A snapshot shaped like a real mixed cluster at N and 2N.

Round two's figures held on the benchmark shapes but not on a snapshot like a real cluster's, where
simulate was quadratic (each DaemonSet pod, pinned to its node, was checked against every node) and verify
and plan spent most of their time in the cyclic collector. The shape is ``kubedra.testing.snapshotgen``:
half device-plugin, half DRA nodes (8 x H100-80GB), the DaemonSets a snapshot keeps and their pods, 20 running
pods per node with ``nodeName`` and cpu/memory requests, allocated ResourceClaims on the DRA nodes, and
``nodes // 20`` pending 8-GPU pods; a JSON List as ``kubedra snapshot -o FILE.json`` writes it.

For each size the file is written once, then each verb runs in a fresh process: ``simulate -f`` (both
modes), ``verify -f``, ``audit -f`` and ``plan`` of a one-cluster fleet naming the file. Printed: CPU (user +
system from wait4: not inflated by a busy machine), peak RSS and, from the second size on, the CPU ratio to
the previous size against the node ratio. A verb whose CPU grows more than ``--max-ratio`` (default 3.0)
times when the nodes double fails the run (exit 1): linear work doubles, quadratic quadruples.

The default sizes, 1,500 and 3,000 nodes (82 and 165 MiB), are both above 64 MiB, where every verb reads
the file as it reads a snapshot of a real fleet; each verb's figures are printed next to the anchor, the
same file's items streamed through the JSON decoder alone (what reading the snapshot back costs before any
verb's work), and, with two sizes or more, a least-squares line per verb extrapolated to ``--extrapolate``
nodes (default 100,000) next to the targets (< 10 min CPU, < 8 GiB peak RSS each).

``--preempt`` writes snapshotgen's preempt shape instead (every GPU busy with training pods, and ``nodes // 20``
more pending 8-GPU pods of a higher PriorityClass that can only be placed by preempting two of them; they
preempt in simulate's device-plugin view, and in the DRA view stay pending, as kube-scheduler leaves a pod short
of DRA devices): ``make bench`` runs it for simulate, whose preemption was quadratic in nodes.

Run: .venv/bin/python benchmarks/realistic.py [--nodes 1500,3000] [--keep DIR] [--verbs simulate,verify]
[--preempt]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

from simulate import _child
from snapshot import FLOOR, fit

from kubedra.testing import snapshotgen

VERBS = ("simulate", "verify", "audit", "plan")
TARGET_CPU_S = 600.0
TARGET_RSS_GIB = 8.0


def argv(verb: str, path: Path) -> list[str]:
    if verb == "plan":
        fleet = path.with_suffix(".fleet.yaml")
        fleet.write_text(
            "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
            f"- {{name: {path.stem}, snapshot: {path.name}, distribution: kubeadm}}\n"
        )
        return ["plan", "--fleet", str(fleet)]
    return [verb, "-f", str(path)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="1500,3000", help="comma-separated node counts (default 1500,3000)")
    ap.add_argument("--verbs", default=",".join(VERBS), help=f"comma-separated, of {', '.join(VERBS)}")
    ap.add_argument("--keep", metavar="DIR", help="write (and reuse) the snapshots here")
    ap.add_argument("--extrapolate", type=int, default=100_000, help="node count to extrapolate to")
    ap.add_argument("--max-ratio", type=float, default=3.0, help="CPU ratio per doubling that fails the run")
    ap.add_argument(
        "--preempt",
        action="store_true",
        help="the preempt shape: pending pods that must preempt running ones",
    )
    args = ap.parse_args()
    sizes = sorted(int(n) for n in args.nodes.split(","))
    verbs = [v for v in args.verbs.split(",") if v]
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(
        "shape: snapshotgen, mixed DP/DRA 8 x H100-80GB, DaemonSets, 20 running pods/node, nodes/20 pending"
        + (", every GPU busy, nodes/20 more pending that must preempt" if args.preempt else "")
    )
    failed = False
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        workdir = Path(args.keep or tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        last: dict[str, tuple[int, float]] = {}
        points: dict[str, list[tuple[int, float, float]]] = {v: [] for v in verbs}
        for n in sizes:
            path = workdir / f"{'preempt' if args.preempt else 'mixed'}-{n}.json"
            if not path.exists():
                snapshotgen.write(str(path), n, preempt=args.preempt)
            f_cpu, _, f_rss, _ = _child([sys.executable, "-c", FLOOR, str(path)])
            print(
                f"{n:,} nodes, {path.stat().st_size / 2**20:,.1f} MiB of JSON; anchor, its items through the JSON "
                f"decoder alone: {f_cpu:.2f} s CPU, {f_rss:,.0f} MiB peak RSS",
                flush=True,
            )
            for verb in verbs:
                cmd = [sys.executable, "-m", "kubedra", *argv(verb, path), "-o", "json"]
                cpu, wall, rss, _ = _child(cmd)
                points[verb].append((n, cpu, rss))
                line = f"  {verb:<9} {cpu:7.2f} s CPU {wall:7.2f} s wall {rss:8,.0f} MiB peak RSS"
                line += f"   {cpu / f_cpu:4.1f}x the anchor's CPU" if f_cpu else ""
                if verb in last:
                    n0, cpu0 = last[verb]
                    ratio = cpu / cpu0 if cpu0 else 0.0
                    per_doubling = ratio ** (1 / math.log2(n / n0)) if n >= 2 * n0 else ratio
                    bad = n >= 2 * n0 and per_doubling > args.max_ratio
                    failed |= bad
                    line += f"   x{ratio:.2f} CPU for x{n / n0:.1f} nodes" + (" TOO STEEP" if bad else "")
                last[verb] = (n, cpu)
                print(line, flush=True)
    extrapolate(points, args.extrapolate)
    return 1 if failed else 0


def extrapolate(points: dict[str, list[tuple[int, float, float]]], n: int) -> None:
    """Each verb's least-squares line over the sizes measured, at ``n`` nodes, next to the targets."""
    for verb, rows in points.items():
        if len(rows) < 2:
            continue
        xs = [float(r[0]) for r in rows]
        a, b = fit(xs, [r[1] for r in rows])
        c, d = fit(xs, [r[2] for r in rows])
        cpu, rss = a + b * n, (c + d * n) / 1024
        print(
            f"  {verb:<9} extrapolated to {n:,} nodes: {cpu:6,.0f} s CPU (target < {TARGET_CPU_S:.0f} s: "
            f"{'met' if cpu < TARGET_CPU_S else 'NOT met'}), {rss:5.1f} GiB peak RSS (target < "
            f"{TARGET_RSS_GIB:.0f} GiB: {'met' if rss < TARGET_RSS_GIB else 'NOT met'}); {b * 1000:.2f} ms and "
            f"{d * 1024:.0f} KiB per node"
        )


if __name__ == "__main__":
    sys.exit(main())
