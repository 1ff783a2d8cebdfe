"""GKE's own GPU sharing, selected by node labels while the pod still asks for nvidia.com/gpu: a MIG partition is
one slice (migrate claims a MIG device of that profile), time-sharing is a share (pods share claims of a TimeSlicing
class, or a manual item; never an exclusive claim per pod), MPS a manual item, and audit names both. The inputs are
GKE's documented samples."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kubedra.testing.cli import run

DATA = Path(__file__).parent / "data"
PARTITION = str(DATA / "gke-mig-partition.yaml")
TIME_SHARING = str(DATA / "gke-time-sharing.yaml")


def test_a_gke_mig_partition_becomes_a_mig_claim_of_that_profile() -> None:
    result = run("migrate", PARTITION, code=0)
    out = result.stdout
    assert "deviceClassName: mig.nvidia.com" in out
    assert "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'" in out
    assert "deviceClassName: gpu.nvidia.com" not in out
    assert "one MIG slice of profile 1g.5gb" in result.stderr


def _written(tmp_path: Path, *paths: str) -> tuple[list[dict], str]:
    out = tmp_path / "out"
    result = run("migrate", "--out", str(out), *paths, code=0)
    docs = [d for f in sorted(out.rglob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    return docs, result.stdout + result.stderr


def test_gke_time_sharing_becomes_one_shared_claim_for_the_jobs_pods(tmp_path: Path) -> None:
    """GKE's sample Job: 3 pods at a time on nodes where up to 3 containers share a GPU. All 3 reference one
    ResourceClaim of a TimeSlicing class (was a manual item, exit 1)."""
    docs, stderr = _written(tmp_path, TIME_SHARING)
    (dc,) = [d for d in docs if d["kind"] == "DeviceClass"]
    assert dc["metadata"]["name"] == "gpu-gke-time-sharing-3.gpu.nvidia.com"
    assert dc["spec"]["config"][0]["opaque"]["parameters"]["sharing"]["strategy"] == "TimeSlicing"
    (claim,) = [d for d in docs if d["kind"] == "ResourceClaim"]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == dc["metadata"]["name"]
    (job,) = [d for d in docs if d["kind"] == "Job"]
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    assert "nvidia.com/gpu" not in str(pod["containers"][0]["resources"])
    assert "3 pods at a time, up to 3 per GPU as GKE time-sharing allowed" in stderr
    assert "must carry the labels, or remove them from the nodeSelector" in stderr


def _gke_deployment(
    tmp_path: Path, replicas: int, gpus: int, clients: str | None = "2", name: str = "web"
) -> Path:
    selector = "        cloud.google.com/gke-gpu-sharing-strategy: time-sharing\n"
    if clients is not None:
        selector += f'        cloud.google.com/gke-max-shared-clients-per-gpu: "{clients}"\n'
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n"
        f"  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n"
        f"    spec:\n      containers:\n      - name: c\n        image: cuda\n        resources:\n"
        f"          limits:\n            nvidia.com/gpu: {gpus}\n      nodeSelector:\n{selector}"
    )
    return path


def test_a_gke_time_sharing_deployment_is_split_into_groups_sharing_claims(tmp_path: Path) -> None:
    web = _gke_deployment(tmp_path, 5, 1)
    api = _gke_deployment(tmp_path, 1, 1, name="api")
    docs, _ = _written(tmp_path, str(web), str(api))
    classes = [d["metadata"]["name"] for d in docs if d["kind"] == "DeviceClass"]
    assert classes == ["gpu-gke-time-sharing-2.gpu.nvidia.com"]  # written once, for both workloads
    deployments = {d["metadata"]["name"]: d["spec"]["replicas"] for d in docs if d["kind"] == "Deployment"}
    assert deployments == {"web": 2, "web-share-1": 2, "web-share-2": 1, "api": 1}
    # the partial groups of web (1 pod) and api (1 pod) share one claim, as GKE filled a GPU with both
    claims = {d["metadata"]["name"] for d in docs if d["kind"] == "ResourceClaim"}
    assert claims == {"web-gpu-0", "web-gpu-1", "gpu-gke-time-sharing-2-shared-0"}


def test_gke_time_sharing_that_cannot_be_written_is_a_manual_item(tmp_path: Path) -> None:
    two = run("migrate", str(_gke_deployment(tmp_path, 3, 2)), code=1)
    assert "GKE admits at most 1 nvidia.com/gpu per container on time-sharing nodes" in two.stderr
    unknown = run("migrate", str(_gke_deployment(tmp_path, 3, 1, clients=None, name="x")), code=1)
    assert "how many containers shared one GPU is not known" in unknown.stderr
    assert "ResourceClaim" not in unknown.stdout


def test_audit_reports_the_platform_sharing() -> None:
    result = run("audit", PARTITION, TIME_SHARING, "-o", "json", code=0)
    findings = json.loads(result.stdout)["findings"]
    assert sorted((f["rule"], f["object"]["kind"]) for f in findings) == [
        ("gpu.platform-sharing", "Deployment"),
        ("gpu.platform-sharing", "Job"),
    ]
