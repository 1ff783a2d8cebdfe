"""``kubedra snapshot`` against an in-process fake API (the audit tests' one): what is captured, what is not,
and that the file reads back through kubedra.sources.files and into audit as the cluster it came from."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import yaml
from audit.fakeapi import FakeAPI, kubeconfig, serve  # tests/unit/audit/fakeapi.py

from kubedra.snapshot import audit as snapshot_audit
from kubedra.snapshot import format as snapfmt
from kubedra.sources import files, nvidia
from kubedra.sources.helm import encode_release

from .helpers import run

METRICS = (
    "# HELP kubernetes_feature_enabled ...\n"
    'kubernetes_feature_enabled{name="DynamicResourceAllocation",stage=""} 1\n'
    'kubernetes_feature_enabled{name="DRADeviceTaints",stage="BETA"} 0\n'
    'apiserver_request_total{code="200"} 12\n'
)


def _deployment(name: str, ns: str, gpu: bool, env_value: str = "s3cr3t") -> dict[str, Any]:
    res = {"limits": {"nvidia.com/gpu": 2}} if gpu else {}
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"password":"p"}'},
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "img",
                            "resources": res,
                            "env": [{"name": "K", "value": env_value}],
                        }
                    ]
                }
            }
        },
    }


def _helm_secret() -> dict[str, Any]:
    release = {
        "name": "trainer",
        "namespace": "ml",
        "version": 3,
        "info": {"status": "deployed"},
        "chart": {
            "metadata": {"name": "trainer", "version": "1.2.3"},
            "values": {"apiKey": "VALUE-NOT-KEPT"},
        },
        "config": {"dbPassword": "VALUE-NOT-KEPT"},
        "manifest": "---\n# Source: trainer/templates/cj.yaml\napiVersion: batch/v1beta1\nkind: CronJob\n"
        "metadata:\n  name: nightly\n  namespace: ml\n",
    }
    return {
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": "sh.helm.release.v1.trainer.v3",
            "namespace": "ml",
            "labels": {"owner": "helm", "name": "trainer", "version": "3", "status": "deployed"},
        },
        "data": {"release": encode_release(release)},
    }


def fake_cluster() -> FakeAPI:
    api = FakeAPI(version="v1.36.2", metrics=METRICS)
    objs = nvidia.cluster("2x8xH100-80GB", "full", "1.36", device_plugin=False)
    for o in objs:
        resource = {"Node": "nodes", "ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses"}[
            o["kind"]
        ]
        api.add(resource, {k: v for k, v in o.items() if k not in ("apiVersion", "kind")})
    api.add("deployments", _deployment("train", "ml", gpu=True), _deployment("web", "shop", gpu=False))
    api.add(
        "configmaps",
        {
            "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
            "data": {"config.conf": "kind: KubeProxyConfiguration\nmode: ipvs\nclusterCIDR: 10.0.0.0/8\n"},
        },
        {"metadata": {"name": "app", "namespace": "shop"}, "data": {"DATABASE_URL": "postgres://u:pw@db"}},
    )
    api.add(
        "secrets",
        _helm_secret(),
        {"type": "Opaque", "metadata": {"name": "db", "namespace": "shop"}, "data": {"pw": "aHVudGVyMg=="}},
    )
    return api


def test_snapshot_captures_scrubbed_list(tmp_path: Path) -> None:
    api = fake_cluster()
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "admin")})
        out = tmp_path / "prod.yaml"
        res = run("snapshot", "--kubeconfig", str(kc), "--context", "prod", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert "written to" in res.stderr
    text = out.read_text()
    for secret in (
        "s3cr3t",
        "hunter2",
        "aHVudGVyMg==",
        "VALUE-NOT-KEPT",
        "postgres://",
        "last-applied",
        "pw@db",
    ):
        assert secret not in text, secret
    # only GETs were sent, and never to a plain secrets list
    assert all("secrets" not in r or "owner%3Dhelm" in r or "owner=helm" in r for r in api.requests)

    # a normal List for every reader
    loaded = files.load([str(out)])
    kinds = sorted({d.kind for d in loaded.documents})
    assert kinds == ["ConfigMap", "Deployment", "DeviceClass", "Node", "ResourceSlice"]
    names = {(d.kind, d.name) for d in loaded.documents}
    assert ("Deployment", "train") in names and ("Deployment", "web") not in names
    assert ("ConfigMap", "app") not in names

    snap = snapfmt.load(str(out))
    h = snap.header
    assert (h.cluster, h.server_version) == ("prod", "v1.36.2")
    assert h.feature_gates == {"DRADeviceTaints": False, "DynamicResourceAllocation": True}
    assert "apiserver_request_total" not in h.metrics
    assert [(r.name, r.chart, r.version, r.revision, r.status) for r in h.helm_releases] == [
        ("trainer", "trainer", "1.2.3", 3, "deployed")
    ]
    assert h.helm_releases[0].objects == [
        {"apiVersion": "batch/v1beta1", "kind": "CronJob", "name": "nightly", "namespace": "ml"}
    ]

    # audit sees the snapshot as the cluster: kube-proxy IPVS, the Helm release's removed CronJob API
    report = snapshot_audit.run([snap], "1.37")
    rules = {f.rule for f in report.findings}
    assert "cluster.kube-proxy-ipvs" in rules
    helm = [f for f in report.findings if "Helm release ml/trainer" in f.message]
    assert helm and helm[0].object.kind == "CronJob"
    # and findings point at the snapshot's lines
    proxy = next(f for f in report.findings if f.rule == "cluster.kube-proxy-ipvs")
    assert proxy.source.file == str(out) and proxy.source.line and proxy.source.line > 1


def test_snapshot_json_round_trip(tmp_path: Path) -> None:
    with serve(fake_cluster()) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "admin")})
        out = tmp_path / "prod.json"
        assert run("snapshot", "--kubeconfig", str(kc), "-o", str(out), "--name", "eu-1").exit_code == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "List" and data["kubedra"]["format"] == snapfmt.FORMAT
    assert snapfmt.load(str(out)).header.cluster == "eu-1"


def test_unreachable_cluster_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    kc = kubeconfig(tmp_path / "kc", {"down": (f"http://127.0.0.1:{port}", "admin")})
    out = tmp_path / "down.yaml"
    res = run("snapshot", "--kubeconfig", str(kc), "-o", str(out), "--timeout", "2")
    assert res.exit_code == 2
    assert "cannot reach cluster down" in res.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".kubedra-snapshot-*"))


def test_forbidden_metrics_are_recorded_not_hidden(tmp_path: Path) -> None:
    api = fake_cluster()
    api.forbidden["viewer"] = {"/metrics", "deployments"}
    with serve(api) as url:
        kc = kubeconfig(tmp_path / "kc", {"prod": (url, "viewer")})
        out = tmp_path / "s.yaml"
        assert run("snapshot", "--kubeconfig", str(kc), "-o", str(out)).exit_code == 0
    h = snapfmt.load(str(out)).header
    assert {x["resource"] for x in h.not_inspected} == {"deployments.apps", "kube-apiserver /metrics"}


def test_ordinary_manifest_is_not_a_snapshot(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": []}))
    assert not snapfmt.is_snapshot(str(p))
    try:
        snapfmt.load(str(p))
    except Exception as e:
        assert "not a kubedra snapshot" in str(e)
    else:
        raise AssertionError("load() accepted a plain List")
