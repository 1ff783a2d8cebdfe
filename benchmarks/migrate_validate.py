"""`kubedra migrate` and `kubedra validate` speed on generated manifests; VAP evaluation speed.

Input shape: N Deployments with 1-3 containers, half of them requesting nvidia.com/gpu, each in its own
document with comments, plus one ResourceClaimTemplate and one ResourceSlice (8 devices) per 10 Deployments.
Prints documents/s for migrate (parse + rewrite + render, validation excluded), objects/s for validate
(strict schema + DRA rules + CEL + references), the per-object schema cost alone, and policy-test objects/s.
Run: .venv/bin/python benchmarks/migrate_validate.py [--count N]
"""

from __future__ import annotations

import argparse
import time

from kubedra.migrate.context import MigrateOptions
from kubedra.migrate.engine import Migrator, SourceFile
from kubedra.policy.evaluate import Evaluator
from kubedra.policy.generate import PolicyOptions, generate, render
from kubedra.sources.files import parse_text
from kubedra.sources.yamldoc import YamlFile
from kubedra.validate.engine import Validator
from kubedra.validate.schema import SchemaValidator


def manifests(count: int) -> str:
    docs = []
    for i in range(count):
        containers = []
        for c in range(1 + i % 3):
            gpu = "            nvidia.com/gpu: 1\n" if i % 2 == 0 and c == 0 else ""
            containers.append(
                f"      - name: c{c}\n        image: repo/app:{i}.{c}  # pinned\n        resources:\n"
                f"          limits:\n            memory: 1Gi\n{gpu}"
            )
        docs.append(
            f"# deployment {i}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n"
            f"  labels: {{app.kubernetes.io/name: app-{i}}}\nspec:\n  replicas: 2\n  template:\n    spec:\n"
            f"      containers:\n{''.join(containers)}"
        )
        if i % 10 == 0:
            docs.append(
                f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: t-{i}\nspec:\n"
                f"  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly:\n"
                f"          deviceClassName: gpu.nvidia.com\n          selectors:\n          - cel:\n"
                f"              expression: \"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0\"\n"
            )
            devices = "".join(
                f"  - name: gpu-{d}\n    attributes:\n      type: {{string: gpu}}\n"
                f"      productName: {{string: NVIDIA H100}}\n    capacity:\n      memory: {{value: 80Gi}}\n"
                for d in range(8)
            )
            docs.append(
                f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: s-{i}\nspec:\n"
                f"  driver: gpu.nvidia.com\n  nodeName: n-{i}\n  pool: {{name: n-{i}, generation: 1, "
                f"resourceSliceCount: 1}}\n  devices:\n{devices}"
            )
    return "---\n".join(docs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=2000)
    args = ap.parse_args()
    text = manifests(args.count)
    n_docs = text.count("\nkind: ") + (1 if text.startswith("kind") else 0)

    t = time.perf_counter()
    report = Migrator(MigrateOptions()).migrate(
        [SourceFile("bench.yaml", text, YamlFile(text, "bench.yaml"))]
    )
    dt = time.perf_counter() - t
    out = report.files[0].output
    print(
        f"migrate: {n_docs} documents in {dt:.2f} s = {n_docs / dt:,.0f} documents/s "
        f"({report.files[0].new_objects} claim templates written)"
    )

    docs = parse_text(out, "out.yaml").documents
    validator = Validator("1.37")
    validator.validate(docs[:20])  # warm the schema/CEL caches
    t = time.perf_counter()
    result = validator.validate(docs)
    dt = time.perf_counter() - t
    print(
        f"validate: {len(docs)} objects in {dt:.2f} s = {len(docs) / dt:,.0f} objects/s "
        f"({len(result.errors)} errors, {len(result.warnings)} warnings)"
    )

    schemas = SchemaValidator("1.37")
    t = time.perf_counter()
    for d in docs:
        schemas.errors(d.obj)
    dt = time.perf_counter() - t
    print(f"  of which strict schema only: {dt / len(docs) * 1e6:,.0f} us/object")

    policies = parse_text(render(generate(PolicyOptions())), "policies.yaml").documents
    ev = Evaluator(policies, "1.37")
    t = time.perf_counter()
    verdicts = ev.evaluate(docs)
    dt = time.perf_counter() - t
    print(
        f"policy test: {len(docs)} objects x {len(ev.policies)} policies in {dt:.2f} s = "
        f"{len(docs) / dt:,.0f} objects/s ({len(verdicts)} violations)"
    )


if __name__ == "__main__":
    main()
