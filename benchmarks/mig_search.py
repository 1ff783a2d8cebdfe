"""Search speed next to upstream's: the dense dynamic-MIG family, kubedra vs kubedra-oracle.

One node with 8 H100-80GB in dynamic MIG mode as the NVIDIA DRA driver publishes it (every MIG profile in
every placement: 208 devices over 8 counter sets) and claims for several MIG devices of one or two profiles
with a ``matchAttribute`` constraint (``gpu.nvidia.com/parentUUID``: all on one GPU, or the PCIe root), some
satisfiable, some not (the search then tries every combination upstream's pruning leaves). Each scenario is
allocated by kubedra in this process (objects parsed, allocator built, one Allocate) and by upstream's
structured allocator (k8s.io/dynamic-resource-allocation v0.37.2, ``kubedra-oracle``, one process per
scenario, its start-up measured on an empty scenario and subtracted). Both get the same 10 s limit
kube-scheduler's DRASchedulerFilterTimeout gives a node. The outcomes must agree.

Prints one line per scenario (the best of 3 runs on each side: kubedra s, upstream s, outcome) and the
totals.
Run: .venv/bin/python benchmarks/mig_search.py   (needs ``make testbed`` for the oracle)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.differential.compare import kubedra_outcome, oracle_outcome

from kubedra.testing import binaries
from kubedra.testing.oracle import DEFAULT_FEATURES, scenario
from kubedra.vendors.nvidia import dra

LIMIT = 10.0  # seconds: DRASchedulerFilterTimeout's default filterTimeout
REPEAT = 3
NODE = "h100-0"


def _claim(name: str, requests: list[tuple[str, str, int]], match: str | None) -> dict[str, Any]:
    reqs = []
    for req, profile, count in requests:
        expr = f'device.attributes["gpu.nvidia.com"].profile == "{profile}"'
        reqs.append(
            {
                "name": req,
                "exactly": {
                    "deviceClassName": "mig.nvidia.com",
                    "allocationMode": "ExactCount",
                    "count": count,
                    "selectors": [{"cel": {"expression": expr}}],
                },
            }
        )
    devices: dict[str, Any] = {"requests": reqs}
    if match:
        devices["constraints"] = [{"matchAttribute": match}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "bench", "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def family() -> list[tuple[str, dict[str, Any]]]:
    objs = dra.dra_objects(NODE, "H100-80GB", 8, "mig-dynamic", "1.37")
    slices = [o for o in objs if o["kind"] == "ResourceSlice"]
    classes = dra.device_classes("1.37")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}
    parent, root = "gpu.nvidia.com/parentUUID", "resource.kubernetes.io/pcieRoot"
    shapes: list[tuple[str, list[list[tuple[str, str, int]]], str | None]] = [
        ("7x1g.10gb same GPU", [[("r", "1g.10gb", 7)]], parent),
        ("8x1g.10gb same GPU (no)", [[("r", "1g.10gb", 8)]], parent),
        ("4x1g.20gb same GPU", [[("r", "1g.20gb", 4)]], parent),
        ("3x2g.20gb same GPU", [[("r", "2g.20gb", 3)]], parent),
        ("2x3g.40gb + 1g.10gb same GPU", [[("a", "3g.40gb", 2), ("b", "1g.10gb", 1)]], parent),
        ("3g.40gb + 4g.40gb same GPU", [[("a", "3g.40gb", 1), ("b", "4g.40gb", 1)]], parent),
        ("4g.40gb x2 same GPU (no)", [[("a", "4g.40gb", 2)]], parent),
        ("2x 4x1g.10gb claims, same GPU each", [[("r", "1g.10gb", 4)], [("r", "1g.10gb", 4)]], parent),
        ("3 claims 3x2g.20gb same GPU each", [[("r", "2g.20gb", 3)]] * 3, parent),
        ("8x7g.80gb same PCIe root", [[("r", "7g.80gb", 8)]], root),
        ("9x7g.80gb (no)", [[("r", "7g.80gb", 9)]], None),
        ("16x3g.40gb, 2 per GPU", [[("r", "3g.40gb", 16)]], None),
        ("17x3g.40gb (no)", [[("r", "3g.40gb", 17)]], None),
    ]
    out = []
    for name, claims, match in shapes:
        docs = [_claim(f"c{i}", reqs, match) for i, reqs in enumerate(claims)]
        out.append((name, scenario(node, docs, slices, classes, features=DEFAULT_FEATURES["1.37"])))
    return out


def _oracle_seconds(oracle: Path, doc: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    t = time.perf_counter()
    proc = subprocess.run(
        [str(oracle), f"--timeout={LIMIT}s"], input=json.dumps(doc).encode(), capture_output=True, check=True
    )
    return time.perf_counter() - t, json.loads(proc.stdout)


def main() -> int:
    oracle = binaries.find(binaries.ORACLE, "1.37")
    if oracle is None:
        print(f"{binaries.ORACLE} is not built: run `make testbed`", file=sys.stderr)
        return 2
    cases = family()
    empty = scenario({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}, [], features={})
    startup = min(_oracle_seconds(oracle, empty)[0] for _ in range(5))
    print(f"dense dynamic MIG: 1 node, 8x H100-80GB, {sum(1 for _ in cases)} scenarios, limit {LIMIT:.0f} s")
    print(f"{'scenario':40} {'kubedra s':>10} {'upstream s':>11}  outcome")
    kubedra_outcome(cases[0][1], timeout=LIMIT)  # warm-up: imports, parsing the driver's objects, CEL
    total_ours = total_theirs = 0.0
    disagreements = 0
    for name, doc in cases:
        mine = theirs_s = float("inf")
        for _ in range(REPEAT):  # the best of a few runs on each side: a shared machine is noisy
            t = time.perf_counter()
            ours = kubedra_outcome(doc, timeout=LIMIT)
            mine = min(mine, time.perf_counter() - t)
            seconds, answer = _oracle_seconds(oracle, doc)
            theirs_s = min(theirs_s, max(seconds - startup, 0.0))
        theirs = oracle_outcome(answer)
        agree = ours["kind"] == theirs["kind"] or (
            ours["kind"] == "timeout" and "deadline" in str(theirs["error"])
        )
        disagreements += not agree
        total_ours += mine
        total_theirs += theirs_s
        print(
            f"{name:40} {mine:10.3f} {theirs_s:11.3f}  {theirs['kind']}"
            + ("" if agree else f"  DISAGREE: kubedra {ours['kind']}")
        )
    print(
        f"{'total':40} {total_ours:10.3f} {total_theirs:11.3f}  (oracle start-up {startup * 1e3:.0f} ms subtracted)"
    )
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
