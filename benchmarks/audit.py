"""`kubedra audit` speed on 10,000 generated manifests (mixed kinds, one object per file) next to the Go
deprecation scanners on the same folder, measured in the same run: Pluto (built by `make testbed` from its
source in ../shared/peers/pluto, or a `pluto` on PATH; the Go module proxy does not serve it as a program) and kubent (kube-no-trouble: `kubent` on PATH or in $GOBIN/~/go/bin, e.g. from
`go install github.com/doitintl/kube-no-trouble/cmd/kubent@latest`). Each tool runs in a fresh process; CPU
seconds (user + system, from wait4: not inflated by a busy machine) and peak RSS are the figures that count.

Run: .venv/bin/python benchmarks/audit.py [--count N] [--runs R]   (prints figures; not a timed test)
kubedra runs as installed: `pip install` compiles bytecode, so the benchmark compiles it once into a pycache
prefix in the cache dir (${KUBEDRA_CACHE:-~/.cache/kubedra}/pycache, outside the clone; PYTHONPYCACHEPREFIX,
with PYTHONDONTWRITEBYTECODE unset) with one untimed run, instead of timing a compile of every module per run
when the shell sets PYTHONDONTWRITEBYTECODE.
Targets: CPU <= Pluto's, peak RSS <= 2x Pluto's, both measured here. Without a pluto binary (a lone clone) there
is no ratio: the script says so instead of comparing with recalled figures.
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

RULE, NAME, KUBENT_NAME = '"rule":', '"name":', '"Name":'  # one per finding in each tool's JSON


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


def cache_dir() -> Path:
    """``$KUBEDRA_CACHE``, or ``~/.cache/kubedra`` (as kubedra.sources.binaries says, without importing it)."""
    env = os.environ.get("KUBEDRA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kubedra"


def installed_env() -> dict[str, str]:
    """The environment of a kubedra run as installed: its bytecode read from (and, on the first run, written
    to) a pycache prefix in the cache dir, whatever PYTHONDONTWRITEBYTECODE the calling shell sets."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache_dir() / "pycache")
    return env


def timed(
    argv: list[str], runs: int, env: dict[str, str] | None = None
) -> tuple[list[tuple[float, float, float]], int, str]:
    """[(CPU s, wall s, peak RSS MiB)] of ``runs`` fresh processes, the last exit code and stdout."""
    rows = []
    code, out = 0, ""
    for _ in range(runs):
        with tempfile.TemporaryFile() as buf:
            t0 = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=buf, stderr=subprocess.DEVNULL, env=env)
            _, status, ru = os.wait4(proc.pid, 0)
            rows.append((ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, ru.ru_maxrss / 1024))
            code = os.waitstatus_to_exitcode(status)
            buf.seek(0)
            out = buf.read().decode(errors="replace")
    return rows, code, out


def summary(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    cpu, wall, rss = (statistics.median(r[i] for r in rows) for i in range(3))
    return cpu, wall, rss


def find_kubent() -> str | None:
    found = shutil.which("kubent")
    if found:
        return found
    for d in (os.environ.get("GOBIN"), str(Path.home() / "go" / "bin")):
        if d and (Path(d) / "kubent").is_file():
            return str(Path(d) / "kubent")
    return None


def find_pluto() -> str | None:
    """The pluto `make testbed` built from ../shared/peers/pluto, else one on PATH."""
    try:
        from kubedra.testing import binaries

        path = binaries.find("pluto")
        if path:
            return str(path)
    except ImportError:
        pass
    return shutil.which("pluto")


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
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}, Python {sys.version.split()[0]}")
        argv, env = [kubedra, "audit", str(root), "-o", "json"], installed_env()
        timed(argv, 1, env)  # compiles what the run imports into the prefix, as `pip install` would have
        print(
            f"kubedra runs from compiled bytecode (PYTHONPYCACHEPREFIX={env['PYTHONPYCACHEPREFIX']}), as installed"
        )
        rows, code, out = timed(argv, args.runs, env)
        k_cpu, k_wall, k_rss = summary(rows)
        print(
            f"kubedra audit: {k_cpu:.2f} s CPU, {k_wall:.2f} s wall, peak RSS {k_rss:,.0f} MiB; median of "
            f"{args.runs} runs (exit {code}, {out.count(RULE)} findings)"
        )
        pluto = find_pluto()
        if pluto is None:
            # No recalled figures: a ratio is only reported against a Pluto measured here, in this run.
            print(
                "pluto: not built, no comparison. `make testbed` builds it from ../shared/peers/pluto (the "
                "developers' shared folder; a lone clone has none), or put a pluto on PATH"
            )
        else:
            rows, code, out = timed(
                [pluto, "detect-files", "-d", str(root), "-o", "json", "--target-versions", "k8s=v1.37.0"],
                args.runs,
            )
            p_cpu, p_wall, p_rss = summary(rows)
            print(
                f"pluto detect-files: {p_cpu:.2f} s CPU, {p_wall:.2f} s wall, peak RSS {p_rss:,.0f} MiB "
                f"(exit {code}, {out.count(NAME)} items)"
            )
            print(
                f"  kubedra / pluto: CPU {k_cpu / p_cpu:.2f}x (target <= 1), RSS {k_rss / p_rss:.2f}x (target <= 2)"
            )
        kubent = find_kubent()
        if kubent is None:
            print(
                "kubent: not found (`go install github.com/doitintl/kube-no-trouble/cmd/kubent@latest`, "
                "then put it on PATH; the Go module proxy here answers 403)"
            )
        else:
            files = [f"--filename={f}" for f in sorted(root.rglob("*.yaml"))]
            rows, code, out = timed(
                [kubent, "--cluster=false", "--helm3=false", "-o", "json", *files], args.runs
            )
            n_cpu, n_wall, n_rss = summary(rows)
            print(
                f"kubent: {n_cpu:.2f} s CPU, {n_wall:.2f} s wall, peak RSS {n_rss:,.0f} MiB "
                f"(exit {code}, {out.count(KUBENT_NAME)} items)"
            )
            print(f"  kubedra / kubent: CPU {k_cpu / n_cpu:.2f}x, RSS {k_rss / n_rss:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
