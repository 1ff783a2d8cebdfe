"""``kubedra audit`` against clusters (an in-process fake API): discovery, pagination, 403s, Helm releases,
metrics, several contexts, unreachable clusters."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from kubedra.sources import cluster as cluster_source
from kubedra.sources.helm import encode_release

from .fakeapi import FakeAPI, kubeconfig, serve
from .helpers import run

GPU_POD_TEMPLATE = {
    "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
}


def deployment(name: str, ns: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"template": GPU_POD_TEMPLATE},
    }


def helm_secret(name: str, ns: str, revision: int, status: str, manifest: str) -> dict[str, Any]:
    release = {
        "name": name,
        "namespace": ns,
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": "trainer", "version": "1.2.3"}},
        "manifest": manifest,
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": ns,
            "labels": {"owner": "helm", "name": name, "version": str(revision), "status": status},
        },
        "data": {"release": encode_release(release)},
    }


OLD_MANIFEST = "---\n# Source: trainer/templates/cj.yaml\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\n"
NEW_MANIFEST = (
    "---\n# Source: trainer/templates/claim.yaml\napiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaimTemplate\n"
    "metadata:\n  name: gpu\n  namespace: ml\nspec:\n  spec:\n    devices:\n      requests:\n      - name: g\n"
    "        deviceClassName: gpu.nvidia.com\n"
)

METRICS = (
    'kubernetes_feature_enabled{name="DRAExtendedResource",stage="BETA"} 0\n'
    'apiserver_requested_deprecated_apis{group="resource.k8s.io",removed_release="1.38",resource="resourceclaims",subresource="",version="v1beta1"} 1\n'
)


@pytest.fixture
def api() -> FakeAPI:
    a = FakeAPI(metrics=METRICS)
    a.add("deployments", *[deployment(f"trainer-{i}") for i in range(1203)])  # 3 pages of 500
    a.add(
        "nodes",
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "gpu-1"},
            "status": {
                "allocatable": {"nvidia.com/gpu": "8"},
                "nodeInfo": {"kubeletVersion": "v1.36.2", "kernelVersion": "6.8.0"},
            },
        },
    )
    a.add(
        "resourceslices",
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "gpu-1-slice"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": "gpu-1",
                "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1},
                "devices": [],
            },
        },
    )
    a.add(
        "pytorchjobs",
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "mnist", "namespace": "ml"},
            "spec": {"pytorchReplicaSpecs": {"Worker": {"template": GPU_POD_TEMPLATE}}},
        },
    )
    a.add(
        "secrets",
        helm_secret("trainer", "ml", 1, "superseded", OLD_MANIFEST),
        helm_secret("trainer", "ml", 2, "deployed", NEW_MANIFEST),
        helm_secret("trainer", "ml", 3, "failed", OLD_MANIFEST),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": "not-helm", "namespace": "ml"},
            "data": {},
        },
    )
    a.add(
        "widgets",
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ml"}},
    )
    return a


def _audit(kc: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    r = run("audit", "--kubeconfig", str(kc), *args, "-o", "json")
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr


def test_full_inventory(api: FakeAPI, tmp_path: Path) -> None:
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "admin")})
        code, out, _ = _audit(kc, "--cluster")
    assert code == 1  # dual advertisement is an error
    s = out["summary"]
    assert s["clusters"] == ["prod"] and s["notInspected"] == []
    rules = s["byRule"]
    assert (
        rules["gpu.device-plugin-request"] == 1203 + 1
    )  # every page was read, and the PyTorchJob (operator group)
    assert rules["gpu.dual-advertisement"] == 1
    assert rules["cluster.feature-gate"] == 1 and rules["api.deprecated-requested"] == 1
    # pagination: limit sent on every list, continue followed
    assert set(api.page_size_seen) == {cluster_source.PAGE_SIZE}
    assert sum("continue=" in r for r in api.requests if "/deployments" in r) == 2
    # Helm: only the deployed revision (2) is audited; failed rev 3 and superseded rev 1 are not
    helm = [f for f in out["findings"] if "Helm release" in f["message"]]
    assert {f["object"]["kind"] for f in helm} == {"ResourceClaimTemplate"}
    assert all("Helm release ml/trainer revision 2, chart trainer-1.2.3" in f["message"] for f in helm)
    assert all(f["source"] == {"cluster": "prod"} for f in out["findings"])
    # an unknown CRD group is not listed; only what the audit reads
    assert not any("/widgets" in r for r in api.requests)


def test_forbidden_resources_are_not_inspected_never_clean(api: FakeAPI, tmp_path: Path) -> None:
    api.forbidden["viewer"] = {"pods", "secrets", "/metrics", "pytorchjobs"}
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"restricted": (url, "viewer")})
        code, out, _ = _audit(kc, "--context", "restricted", "--ignore", "gpu.*")
    assert code == 1
    ni = {(x["resource"], x["reason"].split(":")[0]) for x in out["summary"]["notInspected"]}
    assert ni == {
        ("pods", "HTTP 403"),
        ("pytorchjobs.kubeflow.org", "HTTP 403"),
        (cluster_source.HELM_SECRETS, "HTTP 403"),
        (cluster_source.METRICS, "HTTP 403"),
    }
    findings = [f for f in out["findings"] if f["rule"] == "cluster.not-inspected"]
    assert len(findings) == 4
    pods = next(f for f in findings if f["object"]["name"] == "pods")
    assert pods["severity"] == "error" and "not inspected (forbidden" in pods["message"]
    metrics = next(f for f in findings if f["object"]["name"] == cluster_source.METRICS)
    assert metrics["severity"] == "warning"


def test_no_helm_releases_flag_skips_secrets(api: FakeAPI, tmp_path: Path) -> None:
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "admin")})
        _audit(kc, "--cluster", "--no-helm-releases")
    assert not any("/secrets" in r for r in api.requests)


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_unreachable_single_cluster_is_one_line_exit_2(tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path / "kc", {"down": (f"http://127.0.0.1:{_closed_port()}", "admin")})
    r = run("audit", "--kubeconfig", str(kc), "--cluster", "--timeout", "2")
    assert r.exit_code == 2
    assert r.stderr.startswith("kubedra: error: cannot reach cluster down at http://127.0.0.1:")
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_several_contexts_concurrently_one_down(api: FakeAPI, tmp_path: Path) -> None:
    with serve(api) as url:
        kc = kubeconfig(
            tmp_path / "kc",
            {
                "a": (url, "admin"),
                "b": (url, "admin"),
                "down": (f"http://127.0.0.1:{_closed_port()}", "admin"),
            },
        )
        code, out, _ = _audit(kc, "--all-contexts", "--timeout", "2", "--ignore", "gpu.device-plugin-request")
    assert code == 2  # part of the input could not be read: the report is printed, the exit says so
    assert out["summary"]["clusters"] == ["a", "b"]
    (down,) = [f for f in out["findings"] if f["rule"] == "cluster.unreachable"]
    assert down["source"] == {"cluster": "down"} and down["severity"] == "error"
    dual = [f["source"]["cluster"] for f in out["findings"] if f["rule"] == "gpu.dual-advertisement"]
    assert sorted(dual) == ["a", "b"]


def test_bad_credentials_and_unknown_context(api: FakeAPI, tmp_path: Path) -> None:
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "wrong-token")})
        r = run("audit", "--kubeconfig", str(kc), "--cluster")
        assert r.exit_code == 2 and "refused our credentials: HTTP 401" in r.stderr
        r = run("audit", "--kubeconfig", str(kc), "--context", "nope")
        assert r.exit_code == 2 and "no context 'nope'" in r.stderr
    r = run("audit", "--kubeconfig", str(tmp_path / "missing"), "--cluster")
    assert r.exit_code == 2 and r.stderr.startswith("kubedra: error: kubeconfig:")


def test_cluster_and_files_together(api: FakeAPI, tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n"
    )
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "admin")})
        _, out, _ = _audit(kc, "--cluster", str(tmp_path / "m.yaml"), "--ignore", "gpu.*")
    pdb = next(f for f in out["findings"] if f["object"]["kind"] == "PodDisruptionBudget")
    assert pdb["source"]["file"].endswith("m.yaml") and pdb["rule"] == "api.removed"
    assert out["summary"]["filesScanned"] == 1 and out["summary"]["clusters"] == ["prod"]


def test_progress_bar_does_not_change_results(api: FakeAPI, tmp_path: Path) -> None:
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"a": (url, "admin"), "b": (url, "admin")})
        plain = cluster_source.collect_many(str(kc), ["a", "b"], helm_releases=False)
        shown = cluster_source.collect_many(str(kc), ["a", "b"], helm_releases=False, progress=True)
    assert [r.context for r in shown] == ["a", "b"]
    assert [len(r.scope.items) for r in shown] == [len(r.scope.items) for r in plain]
