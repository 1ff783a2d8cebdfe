"""``kubedra audit`` against the real 1.37 control plane from the testbed: discovery, pagination, what a
restricted ServiceAccount cannot see, the shipped read-only ClusterRole, Helm release secrets, operator CRDs,
managedFields, metrics, several contexts, bad credentials, clusters and files together.

The control plane is shared by the session: everything here lives in namespaces/names prefixed
``audit-it-`` and cluster-scoped objects are deleted again; assertions only look at our own objects.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import (
    Objects,
    crd,
    create,
    delete,
    establish_crd,
    kubedra_inprocess,
    kubedra_json,
    mine,
    record_requests,
    sa_kubeconfig,
    token_kubeconfig,
    with_contexts,
)

from kubedra.audit import cluster as audit_cluster
from kubedra.sources import cluster as cluster_source
from kubedra.sources.helm import encode_release
from kubedra.testing.controlplane import ControlPlane

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
PREFIX = f"audit-it-{uuid.uuid4().hex[:6]}"
NS = PREFIX
WIDGET_GROUP = f"{PREFIX}.example.com"  # a CRD group kubedra has no reason to list


INCOMPLETE_RULES = ("input.", "cluster.unreachable", "cluster.not-inspected")


def incomplete_exit(report: dict[str, Any]) -> int:
    """What an incomplete audit exits with (docs/exit-codes.md): what was found wins, so 1 with an error
    finding (other than the ones saying what was not read), else 2; never 0."""
    found = [
        f
        for f in report["findings"]
        if f["severity"] == "error" and not f["rule"].startswith(INCOMPLETE_RULES)
    ]
    return 1 if found else 2


def audit(kubeconfig: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    return kubedra_json("audit", "--kubeconfig", str(kubeconfig), "--cluster", *args)


GPU_TEMPLATE = {
    "metadata": {"labels": {"app": "trainer"}},
    "spec": {
        "containers": [{"name": "main", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]
    },
}


def gpu_deployment(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "trainer"}}, "template": GPU_TEMPLATE},
    }


def helm_secret(name: str, revision: int, status: str, manifest: str) -> dict[str, Any]:
    release = {
        "name": name,
        "namespace": NS,
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": name, "version": "0.9.0"}},
        "manifest": manifest,
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": NS,
            "labels": {"owner": "helm", "name": name, "version": str(revision), "status": status},
        },
        "data": {"release": encode_release(release)},
    }


def cronjob_manifest(name: str) -> str:
    return (
        "---\n# Source: chart/templates/cronjob.yaml\napiVersion: batch/v1beta1\nkind: CronJob\n"
        f"metadata:\n  name: {name}\n  namespace: {NS}\n"
    )


CLAIM_TEMPLATE_MANIFEST = (
    "---\n# Source: trainer/templates/claim.yaml\napiVersion: resource.k8s.io/v1beta1\n"
    f"kind: ResourceClaimTemplate\nmetadata:\n  name: {PREFIX}-gpu\n  namespace: {NS}\n"
    "spec:\n  spec:\n    devices:\n      requests:\n      - name: g\n        deviceClassName: gpu.nvidia.com\n"
)


@pytest.fixture(scope="module")
def world(controlplane: ControlPlane) -> Iterator[ControlPlane]:
    api = controlplane.api
    objects = Objects(api)
    add = objects.add

    add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"audit-it": PREFIX}}})
    add(gpu_deployment(f"{PREFIX}-trainer", NS))
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
    # Helm 3 releases: "legacy" has one deployed revision; of "trainer", only revision 2 is deployed (1 was
    # superseded, 3 failed), and only its manifest may be audited
    add(helm_secret("legacy", 4, "deployed", cronjob_manifest(f"{PREFIX}-nightly")))
    add(helm_secret("trainer", 1, "superseded", cronjob_manifest(f"{PREFIX}-old-nightly")))
    add(helm_secret("trainer", 2, "deployed", CLAIM_TEMPLATE_MANIFEST))
    add(helm_secret("trainer", 3, "failed", cronjob_manifest(f"{PREFIX}-failed-nightly")))
    add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": f"{PREFIX}-not-helm", "namespace": NS, "labels": {"owner": "helm"}},
            "data": {"release": "bm90IGEgcmVsZWFzZQ=="},
        }
    )
    # an operator group kubedra reads (kubeflow.org), and a CRD group it has no reason to list
    establish_crd(objects, crd("kubeflow.org", "PyTorchJob", "pytorchjobs"))
    add(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": f"{PREFIX}-mnist", "namespace": NS},
            "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 2, "template": GPU_TEMPLATE}}},
        }
    )
    establish_crd(objects, crd(WIDGET_GROUP, "Widget", "widgets"))
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
        objects.cleanup()


def test_admin_inventory(world: ControlPlane) -> None:
    code, report, err = audit(world.kubeconfig)
    assert code == 1, err  # dual advertisement and the incomplete pool are errors
    s = report["summary"]
    assert s["clusters"] == ["kubedra-testbed"]
    assert s["notInspected"] == []
    got = {(f["rule"], f["object"]["kind"], f["object"]["name"]) for f in mine(report, PREFIX)}
    assert ("gpu.device-plugin-request", "Deployment", f"{PREFIX}-trainer") in got
    assert ("gpu.dual-advertisement", "Node", f"{PREFIX}-dual") in got
    assert ("dra.pool-inconsistent", "ResourceSlice", f"{PREFIX}-slice") in got
    assert ("cluster.kubelet-skew", "Node", f"{PREFIX}-dual") in got  # v1.33 kubelet, target 1.37
    assert ("webhook.matches-gpu-workloads", "ValidatingWebhookConfiguration", f"{PREFIX}-hook") in got
    assert ("webhook.vap-candidate", "ValidatingWebhookConfiguration", f"{PREFIX}-hook") in got
    # operator CRs (kubeflow.org) are listed through discovery and their pod templates checked
    assert ("gpu.device-plugin-request", "PyTorchJob", f"{PREFIX}-mnist") in got
    assert all(f["source"] == {"cluster": "kubedra-testbed"} for f in report["findings"])
    # stored as v1, but written as v1beta1 by the test's client: managedFields tell
    dc = [f for f in mine(report, PREFIX) if f["object"]["kind"] == "DeviceClass"]
    assert [f["rule"] for f in dc] == ["api.deprecated"]
    assert "as resource.k8s.io/v1beta1 DeviceClass" in dc[0]["message"]
    # Helm 3 release secrets: decoded, the deployed revision's manifest audited
    helm = [f for f in mine(report, PREFIX) if "Helm release" in f["message"]]
    legacy = [f for f in helm if f"Helm release {NS}/legacy" in f["message"]]
    assert [(f["rule"], f["object"]["kind"]) for f in legacy] == [("api.removed", "CronJob")]
    assert f"Helm release {NS}/legacy revision 4, chart legacy-0.9.0" in legacy[0]["message"]
    trainer = [f for f in helm if f"Helm release {NS}/trainer" in f["message"]]
    assert trainer
    assert {f["object"]["kind"] for f in trainer} == {"ResourceClaimTemplate"}
    assert all(f"Helm release {NS}/trainer revision 2, chart trainer-0.9.0" in f["message"] for f in trainer)
    assert not [f for f in helm if "nightly" in f["object"]["name"] and "legacy" not in f["message"]]
    assert not [f for f in mine(report, PREFIX) if f["object"]["name"] == f"{PREFIX}-not-helm"]
    # kube-apiserver /metrics: the v1beta1 request above shows up as a deprecated API request
    requested = [f for f in report["findings"] if f["rule"] == "api.deprecated-requested"]
    assert any(f["object"]["apiVersion"] == "resource.k8s.io/v1beta1" for f in requested)
    # feature gates come from the same metrics: the 1.37 testbed runs 1.37 defaults, so nothing DRA differs
    assert not [
        f for f in report["findings"] if f["rule"] == "cluster.feature-gate" and f["severity"] == "error"
    ]


def test_lists_page_by_page_and_only_what_the_audit_reads(
    world: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists longer than a page: every list asks for the page size, the apiserver's continue tokens are
    followed to the end, nothing but GETs is sent, and groups the audit does not read are never listed.
    The page size is lowered to 5 so that a dozen Deployments span three pages (the apiserver's pagination
    is the same at any limit)."""
    page = 5
    count = 2 * page + 2
    for i in range(count):
        create(world.api, gpu_deployment(f"{PREFIX}-page-{i:02d}", NS))
    monkeypatch.setattr(cluster_source, "PAGE_SIZE", page)
    requests = record_requests(monkeypatch)
    res = kubedra_inprocess("audit", "--kubeconfig", str(world.kubeconfig), "--cluster", "-o", "json")
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    bulk = [
        f
        for f in report["findings"]
        if f["rule"] == "gpu.device-plugin-request" and f["object"]["name"].startswith(f"{PREFIX}-page-")
    ]
    assert len({f["object"]["name"] for f in bulk}) == count  # every page was read
    assert {r.method for r in requests} == {"GET"}
    lists = [r for r in requests if r.path.endswith("/deployments")]
    assert lists
    assert all(r.query.get("limit") == [str(page)] for r in lists)
    assert len([r for r in lists if "continue" in r.query]) >= 2
    assert any(r.path == "/apis/kubeflow.org/v1/pytorchjobs" for r in requests)
    assert not any(WIDGET_GROUP in r.path for r in requests)  # not even its discovery document
    # Helm releases: one list of the release secrets by label and type, never all secrets
    secrets = [r for r in requests if r.path.endswith("/secrets")]
    assert [(r.query["labelSelector"], r.query["fieldSelector"]) for r in secrets] == [
        (["owner=helm"], ["type=helm.sh/release.v1"])
    ]


def test_no_helm_releases_sends_no_secrets_request(
    world: ControlPlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = record_requests(monkeypatch)
    res = kubedra_inprocess(
        "audit", "--kubeconfig", str(world.kubeconfig), "--cluster", "--no-helm-releases", "-o", "json"
    )
    assert res.exit_code == 1, res.output
    assert requests
    assert not [r for r in requests if "/secrets" in r.path]
    assert f"Helm release {NS}/legacy" not in res.stdout


def test_restricted_service_account_sees_forbidden_groups(world: ControlPlane, tmp_path: Path) -> None:
    kc = sa_kubeconfig(world, tmp_path, NS, "restricted")
    code, report, err = audit(kc)
    # incomplete: the report is printed, stderr says it is not the whole cluster, and what was found wins the exit
    assert code == incomplete_exit(report), err
    assert "kubedra: incomplete: " in err
    assert {r["resource"] for r in report["incomplete"]} == {
        x["resource"] for x in report["summary"]["notInspected"]
    }
    not_inspected = {x["resource"]: x["reason"] for x in report["summary"]["notInspected"]}
    for resource in (
        "pods",
        "deployments.apps",
        "resourceslices.resource.k8s.io",
        "customresourcedefinitions.apiextensions.k8s.io",
        "pytorchjobs.kubeflow.org",  # operator group, found by discovery, not readable
        cluster_source.HELM_SECRETS,
        cluster_source.METRICS,
    ):
        assert not_inspected[resource].startswith("HTTP 403"), resource
    assert "nodes" not in not_inspected
    forbidden = [f for f in report["findings"] if f["rule"] == "cluster.not-inspected"]
    assert len(forbidden) == len(not_inspected)  # one finding each: never reported as clean
    assert all("not inspected (forbidden" in f["message"] for f in forbidden)
    severity = {f["object"]["name"]: f["severity"] for f in forbidden}
    assert severity["pods"] == "error"
    assert severity[cluster_source.METRICS] == "warning"
    # nodes were readable: the node check still ran; slices were not, so no DRA verdict is invented
    got = {(f["rule"], f["object"]["name"]) for f in report["findings"]}
    assert ("cluster.kubelet-skew", f"{PREFIX}-dual") in got
    assert ("gpu.dual-advertisement", f"{PREFIX}-dual") not in got


def test_shipped_clusterroles_are_enough(world: ControlPlane, tmp_path: Path) -> None:
    api = world.api
    core = [d for d in yaml.safe_load_all((REPO / "deploy" / "kubedra-clusterrole.yaml").read_text()) if d]
    helm = [
        d
        for d in yaml.safe_load_all((REPO / "deploy" / "kubedra-helm-releases-clusterrole.yaml").read_text())
        if d
    ]
    for d in core + helm:
        create(api, d)
    try:
        kc = sa_kubeconfig(world, tmp_path, "kubedra", "kubedra")
        code, report, err = audit(kc)
        assert code == 1, err
        assert report, err
        assert report["summary"]["notInspected"] == []
        assert report["incomplete"] == []
        got = {(f["rule"], f["object"]["name"]) for f in mine(report, PREFIX)}
        assert ("gpu.dual-advertisement", f"{PREFIX}-dual") in got
        assert ("gpu.device-plugin-request", f"{PREFIX}-mnist") in got  # operator groups are in the role
        assert ("api.removed", f"{PREFIX}-nightly") in got  # Helm releases readable with the opt-in role
        # the core role alone: secrets are refused, reported as not inspected, and the audit is incomplete
        delete(api, next(d for d in helm if d["kind"] == "ClusterRoleBinding"))
        code, report, err = audit(kc)
        assert code == incomplete_exit(report) == 1, err  # the findings above still win the exit
        assert {x["resource"] for x in report["summary"]["notInspected"]} == {cluster_source.HELM_SECRETS}
        assert "cannot list secrets (Helm 3 releases) (cluster-wide): forbidden" in err
        # ... unless accepted
        code, report, err = audit(kc, "--allow-missing", "secrets")
        assert code == 1, err
        assert report["incomplete"] == [], err
        # --no-helm-releases: the secrets are not asked for, so there is nothing forbidden to report
        code, report, _ = audit(kc, "--no-helm-releases")
        assert code == 1
        assert report["summary"]["notInspected"] == []
        assert not [f for f in report["findings"] if f["rule"] == "cluster.not-inspected"]
    finally:
        for d in reversed(core + helm):
            if d["kind"] in ("ClusterRole", "ClusterRoleBinding", "Namespace"):
                delete(api, d)


def test_several_contexts_concurrently_one_unreachable(world: ControlPlane, tmp_path: Path) -> None:
    kc = with_contexts(world, tmp_path / "three.kubeconfig", ["a", "b"], down=["down"])
    code, report, err = kubedra_json(
        "audit",
        "--kubeconfig",
        str(kc),
        "--all-contexts",
        "--timeout",
        "5",
        "--ignore",
        "gpu.device-plugin-request",
    )
    # part of the input could not be read: the report is printed, stderr says so, and what was found wins
    assert code == incomplete_exit(report), err
    assert report["summary"]["clusters"] == ["a", "b"]
    (down,) = [f for f in report["findings"] if f["rule"] == "cluster.unreachable"]
    assert down["source"] == {"cluster": "down"}
    assert down["severity"] == "error"
    dual = [f["source"]["cluster"] for f in mine(report, PREFIX) if f["rule"] == "gpu.dual-advertisement"]
    assert sorted(dual) == ["a", "b"]


def test_bad_credentials(world: ControlPlane, tmp_path: Path) -> None:
    kc = str(token_kubeconfig(world, tmp_path / "wrong.kubeconfig", "not-a-valid-token", "prod"))
    res = kubedra_inprocess("audit", "--kubeconfig", kc, "--cluster", "-o", "json")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert (
        res.stderr
        == f"kubedra: error: cluster prod ({world.url}) refused our credentials: HTTP 401: Unauthorized\n"
    )


def test_cluster_and_files_together(world: ControlPlane, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n")
    code, report, err = audit(world.kubeconfig, str(manifest), "--ignore", "gpu.*")
    assert code == 1, err
    pdb = [f for f in report["findings"] if f["object"]["kind"] == "PodDisruptionBudget"]
    assert [(f["rule"], f["source"]) for f in pdb] == [("api.removed", {"file": str(manifest), "line": 1})]
    assert report["summary"]["filesScanned"] == 1
    assert report["summary"]["clusters"] == ["kubedra-testbed"]
    assert ("dra.pool-inconsistent", {"cluster": "kubedra-testbed"}) in [
        (f["rule"], f["source"]) for f in mine(report, PREFIX)
    ]


def test_progress_bar_does_not_change_results(world: ControlPlane, tmp_path: Path) -> None:
    kc = str(with_contexts(world, tmp_path / "two.kubeconfig", ["a", "b"]))

    def ours(results: list[audit_cluster.ClusterResult]) -> list[set[tuple[str, str, str]]]:
        return [
            {
                (it.kind, it.namespace or "", it.name)
                for it in r.scope.items
                if it.name.startswith(PREFIX) or (it.namespace or "").startswith(PREFIX)
            }
            for r in results
        ]

    plain = audit_cluster.collect_many(kc, ["a", "b"], helm_releases=False)
    shown = audit_cluster.collect_many(kc, ["a", "b"], helm_releases=False, progress=True)
    assert [r.context for r in shown] == ["a", "b"]
    assert [r.error for r in shown] == [None, None]
    assert ours(shown) == ours(plain)
    assert (("Node", "", f"{PREFIX}-dual")) in ours(shown)[0]
    assert [r.scope.facts.not_inspected for r in shown] == [r.scope.facts.not_inspected for r in plain]
