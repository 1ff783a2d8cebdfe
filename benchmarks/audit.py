"""`kubedra audit` speed on 10,000 generated manifests (mixed kinds, one object per file), and Pluto on the same
folder when its binary is available (the testbed builds it; or `pluto` on PATH).

Run: .venv/bin/python benchmarks/audit.py [--count N] [--runs R]   (prints figures; not a timed test)
Target: under 5 s for 10,000 manifests on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer-{i}
  namespace: team-{ns}
  labels: {{app: trainer-{i}}}
spec:
  replicas: 2
  selector:
    matchLabels: {{app: trainer-{i}}}
  template:
    metadata:
      labels: {{app: trainer-{i}}}
    spec:
      containers:
      - name: main
        image: nvcr.io/nvidia/pytorch:24.05-py3
        args: ["python", "train.py", "--epochs", "10"]
        resources:
          limits:
            cpu: "8"
            memory: 64Gi
            nvidia.com/gpu: {gpus}
        env:
        - {{name: NCCL_DEBUG, value: INFO}}
"""

CPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: team-{ns}
spec:
  selector:
    matchLabels: {{app: web-{i}}}
  template:
    metadata:
      labels: {{app: web-{i}}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{{containerPort: 80}}]
        resources: {{requests: {{cpu: 100m, memory: 128Mi}}}}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web-{i}
  namespace: team-{ns}
spec:
  selector: {{app: web-{i}}}
  ports: [{{port: 80, targetPort: 80}}]
"""

OLD_INGRESS = """\
apiVersion: networking.k8s.io/v1beta1
kind: Ingress
metadata:
  name: web-{i}
  namespace: team-{ns}
spec:
  rules:
  - host: web-{i}.example.com
    http:
      paths:
      - path: /
        backend: {{serviceName: web-{i}, servicePort: 80}}
"""

CRONJOB = """\
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly-{i}
  namespace: team-{ns}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: job
            image: busybox
"""

CLAIM_TEMPLATE = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: gpu-{i}
  namespace: team-{ns}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")
"""

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ddp-{i}
  namespace: team-{ns}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch
            resources: {{limits: {{nvidia.com/gpu: 1}}}}
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch
            resources: {{limits: {{nvidia.com/mig-3g.40gb: 1}}}}
"""

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings-{i}
  namespace: team-{ns}
data:
  app.properties: |
    color=blue
    size=large
"""

# (template, weight): roughly a real repository, mostly ordinary objects
MIX = [
    (GPU_DEPLOYMENT, 20),
    (CPU_DEPLOYMENT, 20),
    (SERVICE, 20),
    (CONFIGMAP, 15),
    (OLD_INGRESS, 8),
    (CRONJOB, 7),
    (CLAIM_TEMPLATE, 5),
    (PYTORCHJOB, 5),
]


def generate(root: Path, count: int) -> None:
    cycle = [t for t, w in MIX for _ in range(w)]
    for i in range(count):
        tmpl = cycle[i % len(cycle)]
        sub = root / f"team-{i % 40}"
        sub.mkdir(exist_ok=True)
        (sub / f"m{i:05d}.yaml").write_text(tmpl.format(i=i, ns=i % 40, gpus=1 + i % 8))


def timed(argv: list[str], runs: int) -> tuple[list[float], subprocess.CompletedProcess[str]]:
    times = []
    proc: subprocess.CompletedProcess[str] | None = None
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - t0)
    assert proc is not None
    return times, proc


def find_pluto() -> str | None:
    found = shutil.which("pluto")
    if found:
        return found
    try:
        from kubedra.testing import binaries

        path = binaries.find("pluto")
        return str(path) if path else None
    except ImportError:
        return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    kubedra = str(Path(sys.executable).with_name("kubedra"))
    with tempfile.TemporaryDirectory(prefix="kubedra-audit-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        generate(root, args.count)
        size = sum(f.stat().st_size for f in root.rglob("*.yaml"))
        print(
            f"generated {args.count} manifests ({size / 1e6:.1f} MB, 40 folders) in {time.perf_counter() - t0:.1f} s"
        )
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        times, proc = timed([kubedra, "audit", str(root), "-o", "json"], args.runs)
        findings = proc.stdout.count('"rule":')
        print(
            f"kubedra audit: median {statistics.median(times):.2f} s, min {min(times):.2f} s over {args.runs} runs "
            f"(exit {proc.returncode}, {findings} findings)"
        )
        pluto = find_pluto()
        if pluto is None:
            print("pluto: not found (build it with `make testbed`, or put pluto on PATH)")
        else:
            times, proc = timed(
                [pluto, "detect-files", "-d", str(root), "-o", "json", "--target-versions", "k8s=v1.37.0"],
                args.runs,
            )
            found = proc.stdout.count('"name":')
            print(
                f"pluto detect-files: median {statistics.median(times):.2f} s, min {min(times):.2f} s over {args.runs} runs "
                f"(exit {proc.returncode}, {found} items)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
