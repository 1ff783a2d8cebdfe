"""Builders for simulation tests: manifests as text, run through kubedra.simulate."""

from __future__ import annotations

from kubedra.simulate.cluster import ClusterOptions
from kubedra.simulate.inputs import Inputs
from kubedra.simulate.run import SimulateOptions, simulate
from kubedra.sources.files import parse_text

MIB = 2**20
GI = 2**30


def inputs(text: str) -> Inputs:
    parsed = parse_text(text, "test.yaml")
    assert not parsed.errors, parsed.errors
    return Inputs(documents=parsed.documents)


def run(text: str, nodes: str | None = "1x2xA100-80GB", gpu_mode: str | None = None, **kw):
    cluster = ClusterOptions(nodes=nodes, gpu_mode=gpu_mode, dp_gpu_mode=kw.pop("dp_gpu_mode", None))
    opts = SimulateOptions(cluster=cluster, **kw)
    return simulate(inputs(text), opts)


def deployment(
    name: str,
    replicas: int,
    resources: str = "nvidia.com/gpu: 1",
    memory: str | None = None,
    extra_spec: str = "",
    namespace: str = "default",
) -> str:
    ann = f"\n      annotations: {{kubedra.io/gpu-memory: {memory}}}" if memory else ""
    return f"""---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  replicas: {replicas}
  template:
    metadata:
      labels: {{app: {name}}}{ann}
    spec:{extra_spec}
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "1"}}
          limits: {{{resources}}}
---
"""
