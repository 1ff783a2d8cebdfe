"""Kueue: a queued workload rewritten to ResourceClaimTemplates is charged to its ClusterQueue only through Kueue's
deviceClassMappings (kubernetes-sigs/kueue v0.19.2 docs/concepts/dynamic_resource_allocation); migrate says so,
and a ClusterQueue's GPU quota is described as a quota, not as a resource kubedra cannot turn into pods."""

from __future__ import annotations

from pathlib import Path

from kubedra.testing.cli import run

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


def test_a_clusterqueue_is_a_quota_not_an_unknown_pod_creator() -> None:
    # kueue's TAS sample: a Topology, a ResourceFlavor tolerating nvidia.com/gpu, a ClusterQueue with
    # nvidia.com/gpu nominalQuota 16 and a LocalQueue. None creates pods or requests a GPU.
    path = str(REALWORLD / "kueue--tas-sample-gpu-queues.yaml")
    migrated = run("migrate", path, code=0)  # was a manual item (exit 1): nothing in it is to be changed
    assert "Kueue ClusterQueue quota for nvidia.com/gpu: 16 (flavor tas-flavor)" in migrated.stderr
    assert "resources.deviceClassMappings" in migrated.stderr
    assert "MANUAL" not in migrated.stderr
    assert "does not know how this resource turns it into pods" not in migrated.stderr
    audited = run("audit", path, "-o", "json", code=0)
    assert '"rule": "gpu.kueue-quota"' in audited.stdout
    assert "gpu.custom-resource-request" not in audited.stdout
    # was exit 2: the quota was "a GPU request hidden in a field of the custom resource", not simulated
    simulated = run("simulate", path, "--nodes", "2x8xH100-80GB", code=0)
    assert "Not simulated" not in simulated.stdout
    assert "ClusterQueue tas-cluster-queue is a Kueue quota (nvidia.com/gpu: 16" in simulated.stdout
    run("validate", path, code=0)


def test_a_cohort_quota_is_a_quota_too(tmp_path: Path) -> None:
    cohort = tmp_path / "cohort.yaml"
    cohort.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: shared\nspec:\n"
        "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: h100\n"
        '      resources:\n      - name: nvidia.com/gpu\n        nominalQuota: "8"\n'
    )
    result = run("migrate", str(cohort), code=0)
    assert "Kueue Cohort quota for nvidia.com/gpu: 8 (flavor h100)" in result.stderr


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
