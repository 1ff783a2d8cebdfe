"""GPU Operator 26.7's GPUCluster (nvidia.com/v1alpha1): validate checks it against the operator's released CRD
(data/crds/nvidia.com_gpuclusters.json, from NVIDIA/gpu-operator v26.7.0), audit recognises it, and next to a
ClusterPolicy it is an error (each controller refuses to reconcile while the other kind exists:
controllers/gpucluster_controller.go, clusterpolicy_controller.go @v26.7.0)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kubedra.cli import cli

GPU_CLUSTER = """apiVersion: nvidia.com/v1alpha1
kind: GPUCluster
metadata:
  name: gpu-cluster
spec:
  draDriver:
    repository: registry.k8s.io/dra-driver-nvidia
    image: dra-driver-nvidia-gpu
    version: v0.4.1
    computeDomains:
      enabled: true
  hostPaths:
    driverInstallDir: /run/nvidia/driver
    kubeletRootDir: /var/lib/kubelet
"""
CLUSTER_POLICY = """apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
"""


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout, res.stderr


def _file(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_validate_checks_a_gpucluster_against_its_crd(tmp_path: Path) -> None:
    """Before: "not schema-checked (no schema: a custom resource)", exit 2."""
    code, out, err = run("validate", _file(tmp_path, "gc.yaml", GPU_CLUSTER))
    assert code == 0, out + err
    assert "valid, 0 errors" in out + err, out + err
    assert "not schema-checked" not in out + err, out + err
    # the operator's own v26.7.0 sample sets hostPaths.rootFS, which its CRD does not have (gpucluster_types.go:
    # "it has no RootFS")
    bad = GPU_CLUSTER.replace("    driverInstallDir:", '    rootFS: "/"\n    driverInstallDir:')
    code, out, _ = run("validate", _file(tmp_path, "bad.yaml", bad))
    assert code == 1, out
    assert 'unknown field "spec.hostPaths.rootFS"' in out, out
    assert "gpu-operator@v26.7.0" in out, out


def test_audit_recognises_a_gpucluster(tmp_path: Path) -> None:
    """Before: "No findings": the GPUCluster that deploys the DRA driver was not seen."""
    code, out, _ = run("audit", _file(tmp_path, "gc.yaml", GPU_CLUSTER), "-o", "wide")
    assert code == 0, out
    assert "gpu.operator" in out
    assert "GPUCluster (DRA driver v0.4.1, Technology Preview)" in out


def test_audit_flags_a_gpucluster_next_to_a_cluster_policy(tmp_path: Path) -> None:
    code, out, _ = run(
        "audit",
        _file(tmp_path, "gc.yaml", GPU_CLUSTER),
        _file(tmp_path, "cp.yaml", CLUSTER_POLICY),
        "-o",
        "wide",
    )
    assert code == 1, out
    line = next(ln for ln in out.splitlines() if "GPUCluster gpu-cluster" in ln)
    assert " error " in line, out
    assert "next to ClusterPolicy cluster-policy" in line, out
