"""Dense dynamic MIG, side by side: the whole ``kubedra simulate -f FILE`` process and the real kube-scheduler.

Shape (a performance target, docs/performance.md): 8 nodes x 8 H100-80GB with the NVIDIA DRA driver's DynamicMIG (every MIG profile in
every placement: 208 devices and 8 counter sets per node, as the driver publishes them; kubedra generates them
with ``--nodes 8x8xH100-80GB --gpu-mode mig-dynamic``), one ResourceClaimTemplate per kind of device (MIG
1g.10gb, 2g.20gb and 3g.40gb by a CEL selector on the profile, whole GPUs) and 160 Pods using them 8:6:4:2
(64, 48, 32 and 16 pods). The file holds the templates and the pods; the cluster comes from ``--nodes``.

- kubedra: ``--runs`` times (default 3), each in a fresh process, the whole
  ``kubedra simulate -f FILE --nodes 8x8xH100-80GB --gpu-mode mig-dynamic --mode dra -o json``; CPU (user +
  system of the child, from wait4), wall and peak RSS, medians. The process runs from compiled bytecode, as an
  installed kubedra does (a warm-up run writes it; ``PYTHONDONTWRITEBYTECODE`` is dropped for the children).
  Then the same with the cluster in the file instead (DeviceClasses, Nodes and 72 ResourceSlices as YAML, as
  a saved cluster gives them): there reading 2.3 MiB of YAML is most of the time. And once more from a JSON
  List, as ``kubectl get -o json`` or ``kubedra snapshot -o json`` writes one (streamed item by item).
- the real kube-scheduler of the testbed's default Kubernetes version (``make testbed``): the same DeviceClasses,
  Nodes and ResourceSlices (``kubedra.vendors.nvidia.cluster``, the objects ``--nodes`` builds) through a real
  API server (the DRA gates dynamic MIG needs, partitionable devices and consumable capacity, are on by default
  at that version), the templates, then the 160 pods 8 at a time; timed from the first pod created to the last
  one bound (polled every 0.25 s), after which every pod is bound or marked unschedulable.

Printed: both times, the pods each placed (they must agree), and the ratios: the real scheduler's wall time to
kubedra's whole-process wall time (target >= 20x), to kubedra's CPU time, and kube-scheduler's own CPU time to
kubedra's (the work each does, whatever the load). The machine's load average is printed too: wall time on a
shared machine is inflated by other jobs, for both sides.
Run: .venv/bin/python benchmarks/dense_mig.py [--runs N] [--no-real-scheduler]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.testing.fakecluster import pod_state
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster

NODES = "8x8xH100-80GB"
GPU_MODE = "mig-dynamic"
PODS = 160
NAMESPACE = "bench"
MIX = [  # (template, MIG profile or None for a whole GPU, share of the pods)
    ("mig-1g", "1g.10gb", 8),
    ("mig-2g", "2g.20gb", 6),
    ("mig-3g", "3g.40gb", 4),
    ("whole", None, 2),
]


def workload(pods: int = PODS) -> list[dict[str, Any]]:
    """The templates and the pods (what the file holds)."""
    out: list[dict[str, Any]] = []
    for name, profile, _ in MIX:
        exactly: dict[str, Any] = {"deviceClassName": "mig.nvidia.com" if profile else "gpu.nvidia.com"}
        if profile:
            cel = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
            exactly["selectors"] = [{"cel": {"expression": cel}}]
        out.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
            }
        )
    total = sum(share for _, _, share in MIX)
    for name, _, share in MIX:
        for i in range(pods * share // total):
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"{name}-{i}", "namespace": NAMESPACE},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {
                                    "requests": {"cpu": "10m", "memory": "10Mi"},
                                    "claims": [{"name": "gpu"}],
                                },
                            }
                        ],
                        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": name}],
                    },
                }
            )
    return out


def child(argv: list[str]) -> tuple[float, float, float, str]:
    """(CPU s, wall s, peak RSS MiB, stdout) of one child process, from wait4's rusage."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if code not in (0, 1):
            raise SystemExit(f"{argv[:4]}... exited {code}: {err.strip()[-2000:]}")
        out.seek(0)
        return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024, out.read().decode()


def _runs(argv: list[str], runs: int) -> tuple[float, float, float, set[int]]:
    """Medians of CPU, wall and peak RSS over ``runs`` fresh processes, and the pods each placed."""
    out = [child(argv) for _ in range(runs)]
    cpu = statistics.median(r[0] for r in out)
    wall = statistics.median(r[1] for r in out)
    rss = statistics.median(r[2] for r in out)
    return cpu, wall, rss, {json.loads(r[3])["modes"]["dra"]["placed"] for r in out}


def _bare(obj: dict[str, Any]) -> dict[str, Any]:
    """An object as a client creates it: no uid, no owner references to node UIDs the server does not know."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "ownerReferences", "generateName")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


class Real(NamedTuple):
    seconds: float  # from the first pod created to the last bound
    cpu: float  # kube-scheduler's own CPU seconds over the same stretch (until every pod settled)
    bound: int
    unschedulable: int


def real_scheduler(cluster: list[dict[str, Any]], objects: list[dict[str, Any]]) -> Real:
    """The testbed's kube-scheduler on ``cluster`` and ``objects``."""
    from concurrent.futures import ThreadPoolExecutor

    from kubedra.testing.controlplane import ControlPlane
    from kubedra.testing.kubeapi import resource_path

    with ControlPlane() as cp:
        api = cp.api
        for obj in cluster:
            stored = api.create(_bare(obj))
            for key in ("sharedCounters", "devices"):  # a gate that is off makes the API server drop fields
                sent = obj.get("spec", {}).get(key)
                if obj["kind"] == "ResourceSlice" and sent and stored["spec"].get(key) != sent:
                    raise SystemExit(f"the API server changed {key} of a ResourceSlice: a DRA gate is off")
            if obj["kind"] == "Node":
                api.apply_status(stored, obj["status"])
                # the apiserver taints new nodes not-ready; a kubelet would clear it
                taints = [t for t in stored["spec"].get("taints") or [] if "not-ready" not in t["key"]]
                api.merge_patch(stored, {"spec": {"taints": taints or None}})
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        api.wait_for(
            "the default ServiceAccount",
            lambda: api.get(resource_path("v1", "ServiceAccount", "default", NAMESPACE)),
            timeout=60,
        )
        pods = [o for o in objects if o["kind"] == "Pod"]
        for obj in objects:
            if obj["kind"] != "Pod":
                api.create(obj)
        assert cp.workdir is not None
        cpu0 = _cpu_seconds("kube-scheduler", cp.workdir)
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(api.create, pods))
        last = (0, t0)  # (pods bound, when that count was first seen)
        deadline = t0 + 900
        while time.monotonic() < deadline:
            states = Counter(pod_state(p) for p in api.list("v1", "Pod", NAMESPACE))
            now = time.monotonic()
            if states["bound"] > last[0]:
                last = (states["bound"], now)
            if sum(states.values()) == len(pods) and not states["waiting"]:
                # pods left unschedulable are retried on cluster events: a last look after a pause
                time.sleep(2)
                states = Counter(pod_state(p) for p in api.list("v1", "Pod", NAMESPACE))
                if states["bound"] == last[0] and not states["waiting"]:
                    cpu = _cpu_seconds("kube-scheduler", cp.workdir) - cpu0
                    return Real(last[1] - t0, cpu, states["bound"], states["unschedulable"])
            time.sleep(0.25)
        raise SystemExit(f"the real scheduler did not settle in 900 s: {dict(states)}")


def _cpu_seconds(component: str, workdir: Path) -> float:
    """User + system CPU seconds so far of the control plane's ``component`` (found by its command line)."""
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if Path(argv[0].decode()).name == component and str(workdir).encode() in b" ".join(argv):
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-real-scheduler", action="store_true", help="only kubedra's side")
    args = ap.parse_args()
    objects = workload()
    cluster = nvidia_cluster(NODES, GPU_MODE, DEFAULT_TARGET, device_plugin=False)
    with tempfile.TemporaryDirectory(prefix="kubedra-bench-") as tmp:
        path, whole = Path(tmp) / "dense-mig.yaml", Path(tmp) / "dense-mig-cluster.yaml"
        path.write_text(yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False))
        whole.write_text(yaml.dump_all(cluster + objects, Dumper=yaml.CSafeDumper, sort_keys=False))
        as_json = Path(tmp) / "dense-mig-cluster.json"  # a List, as `kubectl get -o json` writes one
        as_json.write_text(
            json.dumps({"apiVersion": "v1", "items": cluster + objects, "kind": "List"}, indent=4)
        )
        simulate = [sys.executable, "-m", "kubedra", "simulate", "--mode", "dra", "-o", "json"]
        generated = [*simulate, "-f", str(path), "--nodes", NODES, "--gpu-mode", GPU_MODE]
        child(generated)  # warm-up: writes the bytecode an installed kubedra has
        gen = _runs(generated, args.runs)
        read = _runs([*simulate, "-f", str(whole)], args.runs)
        read_json = _runs([*simulate, "-f", str(as_json)], args.runs)
        size = whole.stat().st_size / 2**20
        json_size = as_json.stat().st_size / 2**20
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    print(
        f"dense dynamic MIG: {NODES} ({GPU_MODE}: 208 devices, 8 counter sets per node), {PODS} pods "
        "(MIG 1g.10gb / 2g.20gb / 3g.40gb and whole GPUs, 8:6:4:2)"
    )
    for what, (cpu, wall, rss, placed) in (
        ("the cluster generated by --nodes", gen),
        (f"the cluster read from the file ({size:.1f} MiB)", read),
        (f"the cluster read from a JSON List ({json_size:.1f} MiB)", read_json),
    ):
        print(
            f"  kubedra simulate -f, {what}: {cpu:.2f} s CPU, {wall:.2f} s wall, peak RSS {rss:,.0f} MiB; "
            f"{'/'.join(map(str, sorted(placed)))} pods placed (median of {args.runs} runs)"
        )
    if args.no_real_scheduler:
        return
    from kubedra.testing import binaries

    try:
        real = real_scheduler(cluster, objects)
    except binaries.TestbedMissing as e:
        print(f"  the real kube-scheduler: not run ({e}; `make testbed` builds it)")
        return
    print(
        f"  real kube-scheduler {binaries.DEFAULT_VERSION} (testbed): {real.seconds:.2f} s from the first pod "
        f"created to the last bound = {real.bound / real.seconds:,.1f} pods/s, {real.cpu:.2f} s CPU of its own; "
        f"{real.bound} bound, {real.unschedulable} unschedulable (load average {os.getloadavg()[0]:.1f})"
    )
    same = gen[3] == read[3] == read_json[3] == {real.bound}
    for what, (cpu, wall, _, _) in (
        ("--nodes", gen),
        ("the cluster in the file", read),
        ("the cluster in a JSON List", read_json),
    ):
        print(
            f"  ratio with {what}: wall to wall {real.seconds / wall:,.1f}x (target >= 20x; both inflated by the "
            f"load), the real one's wall to kubedra's CPU {real.seconds / cpu:,.1f}x, CPU to CPU (kube-scheduler's "
            f"own, without the API server) {real.cpu / cpu:,.1f}x"
        )
    print(f"  same pods placed: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
