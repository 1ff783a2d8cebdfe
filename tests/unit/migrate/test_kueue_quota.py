"""Kueue: a queued workload rewritten to ResourceClaimTemplates is charged to its ClusterQueue only through Kueue's
deviceClassMappings (kubernetes-sigs/kueue v0.19.2 docs/concepts/dynamic_resource_allocation); migrate says so,
and a ClusterQueue's GPU quota is described as a quota, not as a resource kubedra cannot turn into pods."""

from __future__ import annotations

from pathlib import Path

from kubedra.testing.cli import run

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


def test_a_clusterqueue_is_a_quota_not_an_unknown_pod_creator() -> None:
    result = run("migrate", str(REALWORLD / "kueue--tas-sample-gpu-queues.yaml"), code=1)
    assert "a quota, not a pod creator" in result.stderr
    assert "does not know how this resource turns it into pods" not in result.stderr
    assert "resources.deviceClassMappings" in result.stderr


def test_a_queued_gpu_workload_rewritten_to_claims_names_the_kueue_mapping(tmp_path: Path) -> None:
    # Kueue's sample Job (tests/realworld/inputs/kueue--sample-job.yaml) asking for one GPU
    text = (REALWORLD / "kueue--sample-job.yaml").read_text()
    assert 'cpu: "1"\n' in text
    job = tmp_path / "job.yaml"
    job.write_text(text.replace('cpu: "1"\n', 'cpu: "1"\n            nvidia.com/gpu: 1\n', 1))
    result = run("migrate", str(job), code=0)
    assert "ResourceClaimTemplate" in result.stdout
    assert "queued in Kueue LocalQueue user-queue" in result.stderr
    assert "resources.deviceClassMappings" in result.stderr
    assert "--gpu-strategy extended-resource" in result.stderr
