"""``kubedra audit`` against the real 1.37 control plane from the testbed: discovery, what a restricted
ServiceAccount cannot see, the shipped read-only ClusterRole, Helm release secrets, managedFields, metrics.

The control plane is shared by the session: everything here lives in namespaces/names prefixed
``audit-it-`` and cluster-scoped objects are deleted again; assertions only look at our own objects.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.sources.helm import encode_release
from kubedra.testing.controlplane import ControlPlane
from kubedra.testing.kubeapi import ApiError, KubeAPI

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
PREFIX = f"audit-it-{uuid.uuid4().hex[:6]}"
NS = PREFIX

# plural paths for what these tests create (kubeapi knows only the DRA/testbed kinds)
PATHS = {
    "Namespace": "/api/v1/namespaces",
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "Secret": "/api/v1/namespaces/{ns}/secrets",
    "Node": "/api/v1/nodes",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "ResourceSlice": "/apis/{gv}/resourceslices",
    "DeviceClass": "/apis/{gv}/deviceclasses",
}


def collection(obj: dict[str, Any]) -> str:
    return PATHS[obj["kind"]].format(ns=obj["metadata"].get("namespace", ""), gv=obj["apiVersion"])


def create(api: KubeAPI, obj: dict[str, Any]) -> dict[str, Any]:
    try:
        result: dict[str, Any] = api.request("POST", collection(obj), obj)
        return result
    except ApiError as e:
        if e.status == 409:
            return obj
        raise


def delete(api: KubeAPI, obj: dict[str, Any]) -> None:
    try:
        api.request("DELETE", f"{collection(obj)}/{obj['metadata']['name']}")
    except ApiError as e:
        if e.status != 404:
            raise


def audit(kubeconfig: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubedra",
            "audit",
            "--kubeconfig",
            str(kubeconfig),
            "--cluster",
            "-o",
            "json",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, out, proc.stderr


def mine(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        f
        for f in report["findings"]
        if (f["object"]["namespace"] or "").startswith(PREFIX) or f["object"]["name"].startswith(PREFIX)
    ]


def token_kubeconfig(cp: ControlPlane, tmp: Path, namespace: str, sa: str) -> Path:
    req = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    tok = cp.api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{sa}/token", req)["status"][
        "token"
    ]
    path = tmp / f"{sa}.kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": "tb",
                        "cluster": {"server": cp.url, "certificate-authority": str(cp.certs / "ca.crt")},
                    }
                ],
                "users": [{"name": sa, "user": {"token": tok}}],
                "contexts": [{"name": sa, "context": {"cluster": "tb", "user": sa}}],
                "current-context": sa,
            }
        )
    )
    return path


GPU_TEMPLATE = {
    "metadata": {"labels": {"app": "trainer"}},
    "spec": {
        "containers": [{"name": "main", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]
    },
}


@pytest.fixture(scope="module")
def world(controlplane: ControlPlane) -> Iterator[ControlPlane]:
    api = controlplane.api
    created: list[dict[str, Any]] = []

    def add(obj: dict[str, Any]) -> None:
        create(api, obj)
        created.append(obj)

    add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"audit-it": PREFIX}}})
    add(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"{PREFIX}-trainer", "namespace": NS},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "trainer"}},
                "template": GPU_TEMPLATE,
            },
        }
    )
    # a node that advertises GPUs through the device plugin AND has a DRA slice (tainted: nothing lands on it)
    node = f"{PREFIX}-dual"
    add(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {"nvidia.com/gpu.present": "true"}},
            "spec": {"taints": [{"key": "audit-it", "effect": "NoSchedule"}]},
        }
    )
    api.request(
        "PATCH",
        f"/api/v1/nodes/{node}/status",
        {
            "status": {
                "capacity": {"nvidia.com/gpu": "8"},
                "allocatable": {"nvidia.com/gpu": "8"},
                "nodeInfo": {"kubeletVersion": "v1.33.0"},
            }
        },
        content_type="application/merge-patch+json",
    )
    add(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{PREFIX}-slice"},
            "spec": {
                "driver": "gpu.nvidia.com",
                "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 2},  # only one slice exists
                "devices": [{"name": "gpu-0"}],
            },
        }
    )
    # written through the deprecated v1beta1 API: managedFields remember it, and so does the apiserver metric
    add(
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "DeviceClass",
            "metadata": {"name": f"{PREFIX}-class"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]},
        }
    )
    add(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": f"{PREFIX}-hook"},
            "webhooks": [
                {
                    "name": "gpu.audit-it.example.com",
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        }
                    ],
                    # only our namespace, and Ignore: other tests' pods are unaffected
                    "namespaceSelector": {"matchLabels": {"audit-it": PREFIX}},
                    "failurePolicy": "Ignore",
                    "timeoutSeconds": 2,
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://127.0.0.1:9/validate"},
                }
            ],
        }
    )
    manifest = (
        "---\n# Source: legacy/templates/cronjob.yaml\napiVersion: batch/v1beta1\nkind: CronJob\n"
        f"metadata:\n  name: {PREFIX}-nightly\n  namespace: {NS}\n"
    )
    release = {
        "name": "legacy",
        "namespace": NS,
        "version": 4,
        "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "legacy", "version": "0.9.0"}},
        "manifest": manifest,
    }
    add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "helm.sh/release.v1",
            "metadata": {
                "name": "sh.helm.release.v1.legacy.v4",
                "namespace": NS,
                "labels": {"owner": "helm", "name": "legacy", "version": "4", "status": "deployed"},
            },
            "data": {"release": encode_release(release)},
        }
    )
    # a ServiceAccount that may only list nodes and read discovery
    add({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "restricted", "namespace": NS}})
    add(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": f"{PREFIX}-nodes-only"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}],
        }
    )
    add(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"{PREFIX}-nodes-only"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"{PREFIX}-nodes-only",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "restricted", "namespace": NS}],
        }
    )
    try:
        yield controlplane
    finally:
        for obj in reversed(created):
            if obj["kind"] not in (
                "Secret",
                "ServiceAccount",
                "Deployment",
            ):  # namespaced: go with the namespace
                delete(api, obj)


def test_admin_inventory(world: ControlPlane) -> None:
    code, report, err = audit(world.kubeconfig)
    assert code == 1, err  # dual advertisement and the incomplete pool are errors
    s = report["summary"]
    assert s["clusters"] == ["kubedra-testbed"] and s["notInspected"] == []
    got = {(f["rule"], f["object"]["kind"], f["object"]["name"]) for f in mine(report)}
    assert ("gpu.device-plugin-request", "Deployment", f"{PREFIX}-trainer") in got
    assert ("gpu.dual-advertisement", "Node", f"{PREFIX}-dual") in got
    assert ("dra.pool-inconsistent", "ResourceSlice", f"{PREFIX}-slice") in got
    assert ("cluster.kubelet-skew", "Node", f"{PREFIX}-dual") in got  # v1.33 kubelet, target 1.37
    assert ("webhook.matches-gpu-workloads", "ValidatingWebhookConfiguration", f"{PREFIX}-hook") in got
    assert ("webhook.vap-candidate", "ValidatingWebhookConfiguration", f"{PREFIX}-hook") in got
    # stored as v1, but written as v1beta1 by the test's client: managedFields tell
    dc = [f for f in mine(report) if f["object"]["kind"] == "DeviceClass"]
    assert [f["rule"] for f in dc] == ["api.deprecated"]
    assert "as resource.k8s.io/v1beta1 DeviceClass" in dc[0]["message"]
    # Helm 3 release secret: decoded, its manifest audited
    helm = next(f for f in mine(report) if f["object"]["kind"] == "CronJob")
    assert (
        helm["rule"] == "api.removed"
        and f"Helm release {NS}/legacy revision 4, chart legacy-0.9.0" in helm["message"]
    )
    assert helm["source"] == {"cluster": "kubedra-testbed"}
    # kube-apiserver /metrics: the v1beta1 request above shows up as a deprecated API request
    requested = [f for f in report["findings"] if f["rule"] == "api.deprecated-requested"]
    assert any(f["object"]["apiVersion"] == "resource.k8s.io/v1beta1" for f in requested)
    # feature gates come from the same metrics: the 1.37 testbed runs 1.37 defaults, so nothing DRA differs
    assert not [
        f for f in report["findings"] if f["rule"] == "cluster.feature-gate" and f["severity"] == "error"
    ]


def test_restricted_service_account_sees_forbidden_groups(world: ControlPlane, tmp_path: Path) -> None:
    kc = token_kubeconfig(world, tmp_path, NS, "restricted")
    code, report, err = audit(kc)
    assert code == 1, err
    not_inspected = {x["resource"] for x in report["summary"]["notInspected"]}
    for resource in (
        "pods",
        "deployments.apps",
        "resourceslices.resource.k8s.io",
        "customresourcedefinitions.apiextensions.k8s.io",
    ):
        assert resource in not_inspected
    assert "secrets (Helm 3 releases)" in not_inspected and "kube-apiserver /metrics" in not_inspected
    assert "nodes" not in not_inspected
    forbidden = [f for f in report["findings"] if f["rule"] == "cluster.not-inspected"]
    assert all("not inspected (forbidden" in f["message"] for f in forbidden)
    # nodes were readable: the node check still ran; slices were not, so no DRA verdict is invented
    got = {(f["rule"], f["object"]["name"]) for f in report["findings"]}
    assert ("cluster.kubelet-skew", f"{PREFIX}-dual") in got
    assert ("gpu.dual-advertisement", f"{PREFIX}-dual") not in got


def test_shipped_clusterrole_is_enough(world: ControlPlane, tmp_path: Path) -> None:
    api = world.api
    docs = [
        d for d in yaml.safe_load_all((REPO / "deploy" / "kubedra-audit-clusterrole.yaml").read_text()) if d
    ]
    for d in docs:
        create(api, d)
    try:
        kc = token_kubeconfig(world, tmp_path, "kubedra", "kubedra-audit")
        code, report, err = audit(kc)
        assert code == 1 and report, err
        assert report["summary"]["notInspected"] == []
        got = {(f["rule"], f["object"]["name"]) for f in mine(report)}
        assert ("gpu.dual-advertisement", f"{PREFIX}-dual") in got
        assert ("api.removed", f"{PREFIX}-nightly") in got  # Helm releases readable with the second role
        # without the Helm role binding, secrets are reported as not inspected
        delete(
            api,
            next(
                d
                for d in docs
                if d["kind"] == "ClusterRoleBinding"
                and d["metadata"]["name"] == "kubedra-audit-helm-releases"
            ),
        )
        _, report, _ = audit(kc)
        assert {x["resource"] for x in report["summary"]["notInspected"]} == {"secrets (Helm 3 releases)"}
        _, report, _ = audit(kc, "--no-helm-releases")
        assert report["summary"]["notInspected"] == []
    finally:
        for d in reversed(docs):
            if d["kind"] in ("ClusterRole", "ClusterRoleBinding", "Namespace"):
                delete(api, d)


def test_unreachable_context_among_several(world: ControlPlane, tmp_path: Path) -> None:
    kc = yaml.safe_load(world.kubeconfig.read_text())
    kc["clusters"].append(
        {"name": "down", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}
    )
    kc["contexts"].append({"name": "down", "context": {"cluster": "down", "user": kc["users"][0]["name"]}})
    path = tmp_path / "two.kubeconfig"
    path.write_text(yaml.safe_dump(kc))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubedra",
            "audit",
            "--kubeconfig",
            str(path),
            "--all-contexts",
            "-o",
            "json",
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 2
    report = json.loads(proc.stdout)
    assert report["summary"]["clusters"] == ["kubedra-testbed"]
    assert [f["source"] for f in report["findings"] if f["rule"] == "cluster.unreachable"] == [
        {"cluster": "down"}
    ]
