"""``kubedra snapshot`` against the real 1.37 control plane from the testbed: what is captured and what is
scrubbed (Secrets, env values, tokens in flags, last-applied annotations, ConfigMap data, Helm values), that
only GETs are sent, that the file reads back through kubedra.sources.files and audits as the cluster it was
taken from, and that what the credentials cannot read is recorded, not hidden.

The control plane is shared by the session: our objects are prefixed ``snap-it-`` and removed again
(the GPU node from the ``gpu_cluster`` fixture stays, like every test's nodes); assertions look at our own.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from helpers import Objects, Request, kubedra_inprocess, record_requests, sa_kubeconfig

from kubedra.audit import snapshot as snapshot_audit
from kubedra.model import snapshot as snapfmt
from kubedra.snapshot.scrub import rules as scrub_rules
from kubedra.sources import cluster as cluster_source
from kubedra.sources import files
from kubedra.sources.helm import encode_release
from kubedra.testing.controlplane import ControlPlane

pytestmark = pytest.mark.integration

PREFIX = f"snap-it-{uuid.uuid4().hex[:6]}"
NS = PREFIX
SHOP = f"{PREFIX}-shop"
PROXY_CM = f"kube-proxy-{PREFIX}"  # kube-system ConfigMaps are recognised by name prefix

# values that must never reach a snapshot file
ENV_SECRET = "env-s3cr3t-value"
FLAG_SECRET = "flag-t0ken-value"
ANNOTATION_SECRET = "annotation-t0ken-value"
LAST_APPLIED_SECRET = "last-applied-passw0rd"
SECRET_VALUE = "hunter2-secret-value"
CONFIGMAP_SECRET = "postgres://u:cm-passw0rd@db"
PROXY_CIDR = "10.123.0.0/16"
HELM_VALUE = "helm-VALUE-NOT-KEPT"
NEVER = (ENV_SECRET, FLAG_SECRET, ANNOTATION_SECRET, LAST_APPLIED_SECRET, SECRET_VALUE, CONFIGMAP_SECRET)


def deployment(name: str, namespace: str, gpu: bool) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "main",
        "image": "cuda",
        "args": [f"--token={FLAG_SECRET}", "--v=2"],
        "env": [
            {"name": "DB_URL", "value": ENV_SECRET},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},  # on the allow-list: kept
        ],
    }
    if gpu:
        container["resources"] = {"limits": {"nvidia.com/gpu": "2"}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                    {"password": LAST_APPLIED_SECRET}
                ),
                "example.com/api-token": ANNOTATION_SECRET,
                "example.com/team": "ml",
            },
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}},
        },
    }


def helm_secret() -> dict[str, Any]:
    release = {
        "name": "trainer",
        "namespace": NS,
        "version": 3,
        "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "trainer", "version": "1.2.3"}, "values": {"apiKey": HELM_VALUE}},
        "config": {"dbPassword": HELM_VALUE},
        "manifest": "---\n# Source: trainer/templates/cj.yaml\napiVersion: batch/v1beta1\nkind: CronJob\n"
        f"metadata:\n  name: {PREFIX}-nightly\n  namespace: {NS}\n",
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": "sh.helm.release.v1.trainer.v3",
            "namespace": NS,
            "labels": {"owner": "helm", "name": "trainer", "version": "3", "status": "deployed"},
        },
        "data": {"release": encode_release(release)},
    }


@dataclass
class World:
    cp: ControlPlane
    gpu_node: str


@pytest.fixture(scope="module")
def world(controlplane: ControlPlane, gpu_cluster: Any) -> Iterator[World]:
    (node,) = gpu_cluster("h100-80gb", 1)  # a DRA node: Node, its ResourceSlices, the NVIDIA DeviceClasses
    objects = Objects(controlplane.api)
    add = objects.add
    for ns in (NS, SHOP):
        add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    add(deployment(f"{PREFIX}-train", NS, gpu=True))
    add(deployment(f"{PREFIX}-web", SHOP, gpu=False))  # not a GPU workload, not kube-system: not captured
    add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": PROXY_CM, "namespace": "kube-system"},
            "data": {
                "config.conf": f"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
                f"mode: ipvs\nclusterCIDR: {PROXY_CIDR}\n"
            },
        }
    )
    add(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{PREFIX}-app", "namespace": SHOP},
            "data": {"DATABASE_URL": CONFIGMAP_SECRET},
        }
    )
    add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": f"{PREFIX}-db", "namespace": SHOP},
            "data": {"pw": base64.b64encode(SECRET_VALUE.encode()).decode()},
        }
    )
    add(helm_secret())
    # a request to a deprecated API: the apiserver's apiserver_requested_deprecated_apis metric remembers it
    controlplane.api.get("/apis/resource.k8s.io/v1beta1/deviceclasses")
    # a ServiceAccount that may list what a snapshot reads, except Deployments, and may not GET /metrics
    add({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "viewer", "namespace": NS}})
    role = f"{PREFIX}-no-deployments"
    add(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["nodes", "pods", "configmaps", "events", "secrets"],
                    "verbs": ["list"],
                },
                {"apiGroups": ["apps"], "resources": ["daemonsets", "statefulsets"], "verbs": ["list"]},
                {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": ["list"]},
                {
                    "apiGroups": [
                        "admissionregistration.k8s.io",
                        "apiextensions.k8s.io",
                        "resource.k8s.io",
                        "scheduling.k8s.io",
                    ],
                    "resources": ["*"],
                    "verbs": ["list"],
                },
            ],
        }
    )
    add(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer", "namespace": NS}],
        }
    )
    try:
        yield World(controlplane, node)
    finally:
        objects.cleanup()


@dataclass
class Capture:
    path: Path
    result: Result
    requests: list[Request]


@pytest.fixture(scope="module")
def captured(world: World, tmp_path_factory: pytest.TempPathFactory) -> Capture:
    """One snapshot of the cluster, taken in-process so the requests it sent are recorded."""
    out = tmp_path_factory.mktemp("snapshot") / "testbed.yaml"
    with pytest.MonkeyPatch.context() as mp:
        requests = record_requests(mp)
        res = kubedra_inprocess("snapshot", "--kubeconfig", str(world.cp.kubeconfig), "-o", str(out))
    return Capture(out, res, requests)


def ours(docs: list[files.Document]) -> set[tuple[str, str]]:
    return {(d.kind, d.name) for d in docs if PREFIX in d.name or (d.namespace or "").startswith(PREFIX)}


def test_capture_is_read_only_and_scrubbed(captured: Capture) -> None:
    assert captured.result.exit_code == 0, captured.result.output
    assert "snapshot of kubedra-testbed (v1.37." in captured.result.stderr
    assert f"written to {captured.path}" in captured.result.stderr
    # only GETs, and Secrets only as Helm release secrets (by label and type), never a plain list
    assert captured.requests
    assert {r.method for r in captured.requests} == {"GET"}
    secrets = [r for r in captured.requests if r.path.endswith("/secrets")]
    assert [(r.query["labelSelector"], r.query["fieldSelector"]) for r in secrets] == [
        (["owner=helm"], ["type=helm.sh/release.v1"])
    ]
    text = captured.path.read_text()
    for secret in (*NEVER, base64.b64encode(SECRET_VALUE.encode()).decode(), HELM_VALUE, PROXY_CIDR):
        assert secret not in text, secret
    assert "last-applied-configuration" not in text
    assert "managedFields" not in text
    assert f"--token={scrub_rules().redacted}" in text


def test_snapshot_reads_back_as_manifests(captured: Capture, world: World) -> None:
    loaded = files.load([str(captured.path)])
    assert not loaded.errors
    assert "Secret" not in {d.kind for d in loaded.documents}
    assert ours(loaded.documents) == {
        ("Deployment", f"{PREFIX}-train"),  # GPU workload: kept
        ("ConfigMap", PROXY_CM),  # kube-system configuration kubedra reads: kept, reduced
    }
    train = next(d.obj for d in loaded.documents if d.name == f"{PREFIX}-train")
    (container,) = train["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [{"name": "DB_URL"}, {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    assert train["metadata"]["annotations"] == {"example.com/team": "ml"}
    proxy = next(d.obj for d in loaded.documents if d.name == PROXY_CM)
    assert proxy["data"] == {
        "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n"
    }
    # the GPU node and what the DRA driver publishes for it
    names = {(d.kind, d.name) for d in loaded.documents}
    assert ("Node", world.gpu_node) in names
    assert ("DeviceClass", "gpu.nvidia.com") in names
    slices = [d.obj for d in loaded.documents if d.kind == "ResourceSlice"]
    assert any(s["spec"].get("nodeName") == world.gpu_node for s in slices)


def test_header_records_versions_gates_and_helm_metadata(captured: Capture) -> None:
    snap = snapfmt.load(str(captured.path))
    h = snap.header
    assert h.cluster == "kubedra-testbed"
    assert h.server_version.startswith("v1.37.")
    assert "resource.k8s.io/v1" in h.served_apis
    assert "resource.k8s.io/v1beta1" in h.served_apis
    assert h.feature_gates.get("DynamicResourceAllocation") is True  # from the real /metrics
    lines = h.metrics.splitlines()
    assert lines
    assert all(
        ln.startswith(("kubernetes_feature_enabled{", "apiserver_requested_deprecated_apis{")) for ln in lines
    )
    rel = next(r for r in h.helm_releases if r.namespace == NS)
    assert (rel.name, rel.chart, rel.version, rel.revision, rel.status) == (
        "trainer",
        "trainer",
        "1.2.3",
        3,
        "deployed",
    )
    assert rel.objects == [
        {"apiVersion": "batch/v1beta1", "kind": "CronJob", "name": f"{PREFIX}-nightly", "namespace": NS}
    ]
    assert h.not_inspected == []


def test_snapshot_audits_as_the_cluster_it_was_taken_from(captured: Capture) -> None:
    snap = snapfmt.load(str(captured.path))
    report = snapshot_audit.run([snap], "1.37")
    assert [c.name for c in report.clusters] == ["kubedra-testbed"]
    proxy = [f for f in report.findings if f.rule == "cluster.kube-proxy-ipvs" and f.object.name == PROXY_CM]
    assert len(proxy) == 1
    assert proxy[0].source.file == str(captured.path)
    assert (proxy[0].source.line or 0) > 1
    helm = [f for f in report.findings if f"Helm release {NS}/trainer revision 3" in f.message]
    assert [(f.rule, f.object.kind, f.object.name) for f in helm] == [
        ("api.removed", "CronJob", f"{PREFIX}-nightly")
    ]
    gpu = [f for f in report.findings if f.rule == "gpu.device-plugin-request" and f.object.namespace == NS]
    assert [f.object.name for f in gpu] == [f"{PREFIX}-train"]


def test_json_snapshot_with_a_name(world: World, captured: Capture, tmp_path: Path) -> None:
    """JSON is written item by item (header after the items): the same objects and header as the YAML."""
    out = tmp_path / "eu-1.json"
    res = kubedra_inprocess(
        "snapshot", "--kubeconfig", str(world.cp.kubeconfig), "-o", str(out), "--name", "eu-1"
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["kind"] == "List"
    assert data["kubedra"]["format"] == snapfmt.FORMAT
    assert data["kubedra"]["cluster"] == "eu-1"
    assert list(data)[-1] == "kubedra"
    assert ours(files.load([str(out)]).documents) == {
        ("Deployment", f"{PREFIX}-train"),
        ("ConfigMap", PROXY_CM),
    }
    as_json, as_yaml = snapfmt.load(str(out)), snapfmt.load(str(captured.path))
    as_json.header.cluster, as_json.header.captured_at = as_yaml.header.cluster, as_yaml.header.captured_at
    assert as_json.header == as_yaml.header
    assert ours(as_json.documents) == ours(as_yaml.documents)


def test_what_cannot_be_read_is_recorded_not_hidden(world: World, tmp_path: Path) -> None:
    kc = sa_kubeconfig(world.cp, tmp_path, NS, "viewer")
    out = tmp_path / "viewer.yaml"
    res = kubedra_inprocess("snapshot", "--kubeconfig", str(kc), "-o", str(out))
    assert res.exit_code == 2, res.output  # incomplete: written, with what is missing named
    assert "not inspected: " in res.stderr
    assert (
        "kubedra: incomplete: cluster viewer: cannot list deployments.apps (cluster-wide): forbidden"
        in res.stderr
    )
    snap = snapfmt.load(str(out))
    ni = {x["resource"]: x["reason"] for x in snap.header.not_inspected}
    assert ni["deployments.apps"].startswith("HTTP 403")
    assert ni[cluster_source.METRICS].startswith("HTTP 403")
    for readable in ("nodes", "pods", "configmaps", "daemonsets.apps", "resourceslices.resource.k8s.io"):
        assert readable not in ni
    assert snap.header.metrics == ""
    assert snap.header.feature_gates == {}
    assert snap.header.cluster == "viewer"
    assert not snap.kind("Deployment")
    assert ("ConfigMap", PROXY_CM) in {(o["kind"], o["metadata"]["name"]) for o in snap.items}


def test_audit_of_the_snapshot_matches_the_live_audit(captured: Capture, world: World) -> None:
    """``kubedra audit -f SNAPSHOT`` reports our objects like ``kubedra audit --cluster`` does, as the cluster."""
    snap = kubedra_inprocess("audit", "-f", str(captured.path), "-o", "json")
    live = kubedra_inprocess("audit", "--kubeconfig", str(world.cp.kubeconfig), "--cluster", "-o", "json")
    assert snap.exit_code == live.exit_code == 1, snap.stderr + live.stderr
    from_snapshot, from_cluster = json.loads(snap.stdout), json.loads(live.stdout)

    def found(report: dict[str, Any]) -> set[tuple[str, str, str, str]]:
        return {
            (f["rule"], f["object"]["kind"], f["object"]["name"], json.dumps(f["source"]))
            for f in report["findings"]
            if PREFIX in f["object"]["name"] or (f["object"]["namespace"] or "").startswith(PREFIX)
        }

    source = json.dumps({"cluster": "kubedra-testbed"})
    expected = {
        ("gpu.device-plugin-request", "Deployment", f"{PREFIX}-train", source),
        ("cluster.kube-proxy-ipvs", "ConfigMap", PROXY_CM, source),
        ("api.removed", "CronJob", f"{PREFIX}-nightly", source),  # from the Helm release
    }
    assert found(from_snapshot) == found(from_cluster) == expected
    assert from_snapshot["summary"]["clusters"] == ["kubedra-testbed"]

    # what the snapshot's header carries: the feature gates and deprecated-API requests of /metrics
    def cluster_level(report: dict[str, Any], rule: str) -> set[tuple[str, str, str]]:
        return {
            (f["object"]["apiVersion"], f["object"]["kind"], f["object"]["name"])
            for f in report["findings"]
            if f["rule"] == rule
        }

    assert cluster_level(from_snapshot, "cluster.feature-gate") == cluster_level(
        from_cluster, "cluster.feature-gate"
    )
    requested = cluster_level(from_snapshot, "api.deprecated-requested")
    assert ("resource.k8s.io/v1beta1", "deviceclasses", "") in requested
    assert requested <= cluster_level(from_cluster, "api.deprecated-requested")  # the live audit came later
