"""``kubedra audit`` on a ``kubedra snapshot`` file: audited as the cluster it captured (findings with
``source: {"cluster": name}``, the header's version, feature gates, deprecated-API metric, Helm release
objects and not-inspected resources), not as a plain List of manifests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.audit import engine, inputs
from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import RuleBook
from kubedra.k8s.versions import Version

from .helpers import DATA, run

SNAPSHOT = DATA / "snapshot-prod-eu.yaml"
CLUSTER = {"cluster": "prod-eu"}

# what only the header can tell: versions, /metrics lines, Helm releases, what could not be read
FROM_HEADER = {
    ("cluster.upgrade-path", ""),  # serverVersion v1.34.2 -> 1.37
    ("cluster.feature-gate", "DRAAdminAccess"),  # disabled, locked on at 1.37
    ("api.deprecated-requested", ""),  # resource.k8s.io/v1beta1 resourceclaims requested
    ("api.removed", "nightly"),  # batch/v1beta1 CronJob of Helm release ml/trainer
    ("cluster.not-inspected", "pods"),
}
FROM_ITEMS = {
    ("cluster.kubelet-skew", "gpu-1"),
    ("gpu.device-plugin-request", "train"),
    ("cluster.kube-proxy-ipvs", "kube-proxy"),
}


def _audit(*args: str, input: str | None = None) -> tuple[int, dict[str, Any], str]:
    r = run("audit", *args, "-o", "json", input=input)
    return r.exit_code, json.loads(r.stdout) if r.stdout.strip() else {}, r.stderr


def _got(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["rule"], f["object"]["name"]) for f in report["findings"]}


def test_load_files_makes_a_cluster_scope_of_a_snapshot() -> None:
    rules = RuleBook.load()
    loaded = inputs.load_files([str(SNAPSHOT)], rules)
    assert loaded.files == 1
    assert loaded.scope.items == []
    (scope,) = loaded.snapshots
    assert scope.name == "prod-eu"
    assert scope.facts is not None
    assert scope.facts.server_version == Version(1, 34)
    assert "resource.k8s.io/v1beta1" in scope.facts.served
    assert scope.facts.not_inspected == [
        (
            "pods",
            'HTTP 403: pods is forbidden: User "system:serviceaccount:kubedra:viewer" cannot list resource "pods"',
        )
    ]
    assert all(it.doc is None and it.cluster == "prod-eu" for it in scope.items)
    helm = [it for it in scope.items if it.via]
    assert [(it.kind, it.name, it.via) for it in helm] == [
        ("CronJob", "nightly", "Helm release ml/trainer revision 3, chart trainer-1.2.3")
    ]
    (not_inspected,) = loaded.findings
    assert not_inspected.rule == "cluster.not-inspected"
    assert not_inspected.severity == "error"
    assert not_inspected.source.cluster == "prod-eu"
    assert "pods not inspected (forbidden: HTTP 403" in not_inspected.message
    assert str(SNAPSHOT) in not_inspected.message  # says where the evidence comes from

    findings, _ = engine.run(
        loaded.snapshots,
        target=Version(1, 37),
        current=None,
        db=DeprecationDB.load(()),
        rules=rules,
        pre_findings=loaded.findings,
    )
    got = {(f.rule, f.object and f.object.name) for f in findings}
    assert got >= FROM_HEADER | FROM_ITEMS
    assert {f.source.cluster for f in findings} == {"prod-eu"}
    assert not any(f.source.file for f in findings)


def test_cli_audits_a_snapshot_as_its_cluster() -> None:
    code, report, err = _audit("-f", str(SNAPSHOT))
    # the snapshot could not list pods: incomplete, named on stderr and in the JSON; the removed Helm API
    # found is exit 1 all the same (what was found wins over incomplete)
    assert code == 1, err
    assert "kubedra: incomplete: cluster prod-eu: cannot list pods (cluster-wide): forbidden" in err
    assert [(r["cluster"], r["resource"], r["verb"]) for r in report["incomplete"]] == [
        ("prod-eu", "pods", "list")
    ]
    code, accepted, err = _audit("-f", str(SNAPSHOT), "--allow-missing", "pods")
    assert code == 1, err
    assert accepted["incomplete"] == [], err  # kubelet skew, removed Helm API, not-inspected pods
    assert _got(report) >= FROM_HEADER | FROM_ITEMS
    assert all(f["source"] == CLUSTER for f in report["findings"])
    s = report["summary"]
    assert s["clusters"] == ["prod-eu"]
    assert s["filesScanned"] == 1
    assert s["objectsScanned"] == 4
    assert [(x["cluster"], x["resource"]) for x in s["notInspected"]] == [("prod-eu", "pods")]
    helm = next(f for f in report["findings"] if f["object"]["name"] == "nightly")
    assert "(Helm release ml/trainer revision 3, chart trainer-1.2.3)" in helm["message"]
    # the current version is the captured apiserver's
    assert "already not served by the current version 1.34" in helm["message"]


def test_same_objects_without_the_header_are_plain_manifests(tmp_path: Path) -> None:
    data = yaml.safe_load(SNAPSHOT.read_text())
    del data["kubedra"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump(data))
    code, report, _ = _audit("-f", str(plain))
    assert code == 1
    assert FROM_ITEMS - {("cluster.kubelet-skew", "gpu-1")} <= _got(report)
    assert not FROM_HEADER & _got(report)
    assert all(f["source"]["file"] == str(plain) for f in report["findings"])
    assert report["summary"]["clusters"] == []


def test_snapshot_beside_manifests_in_a_folder_and_from_stdin(tmp_path: Path) -> None:
    (tmp_path / "snap.yaml").write_text(SNAPSHOT.read_text())
    (tmp_path / "m.yaml").write_text(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: x}\n"
    )
    code, report, _ = _audit(str(tmp_path), "--allow-missing", "pods")
    assert code == 1
    pdb = next(f for f in report["findings"] if f["object"]["kind"] == "PodDisruptionBudget")
    assert pdb["source"] == {"file": str(tmp_path / "m.yaml"), "line": 1}
    assert _got(report) >= FROM_HEADER
    assert report["summary"]["clusters"] == ["prod-eu"]
    assert report["summary"]["filesScanned"] == 2
    # stdin, and JSON
    code, report, _ = _audit("-f", "-", input=SNAPSHOT.read_text())
    assert code == 1
    assert _got(report) >= FROM_HEADER
    assert all(f["source"] == CLUSTER for f in report["findings"])
    as_json = tmp_path / "snap.json"
    as_json.write_text(json.dumps(yaml.safe_load(SNAPSHOT.read_text())))
    code, report, _ = _audit("-f", str(as_json))
    assert code == 1
    assert _got(report) >= FROM_HEADER | FROM_ITEMS


def test_a_manifest_that_only_mentions_the_format_is_a_manifest(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(
        "# exported with kubedra.io/snapshot/v1 in mind\napiVersion: policy/v1beta1\n"
        "kind: PodDisruptionBudget\nmetadata: {name: x}\n"
    )
    code, report, _ = _audit("-f", str(p), "--allow-missing", "pods")
    assert code == 1
    assert [(f["rule"], f["source"]) for f in report["findings"]] == [
        ("api.removed", {"file": str(p), "line": 2})
    ]


def test_unsupported_or_mixed_snapshot_files_are_malformed_input(tmp_path: Path) -> None:
    text = SNAPSHOT.read_text()
    v2 = tmp_path / "v2.yaml"
    v2.write_text(text.replace("kubedra.io/snapshot/v1", "kubedra.io/snapshot/v2"))
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(text + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n")
    code, report, _ = _audit("-f", str(v2), "-f", str(mixed))
    assert code == 2  # part of the input could not be read: the report is printed, the exit says so
    bad = {f["source"]["file"]: f["message"] for f in report["findings"] if f["rule"] == "input.malformed"}
    assert "unsupported snapshot format 'kubedra.io/snapshot/v2'" in bad[str(v2)]
    assert "must be the only document in its file" in bad[str(mixed)]
    assert report["summary"]["clusters"] == []


def _hostile_snapshot(kind: str) -> str:
    """The snapshot fixture with one hostile value in its first item's labels (found by the mutation fuzz)."""
    data = yaml.safe_load(SNAPSHOT.read_text())
    if kind == "deep-json":
        text = json.dumps(data)
        return text.replace('"labels": {', '"deep": ' + "[" * 100_000 + "]" * 100_000 + ', "labels": {', 1)
    text = yaml.safe_dump(data, sort_keys=False)
    if kind == "deep":
        return text.replace("  labels:\n", "  deep: " + "[" * 300 + "]" * 300 + "\n  labels:\n", 1)
    bomb = 'lol: &a0 ["lol"]\n' + "".join(
        f"b{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)
    )
    return bomb.replace("\n", "\n  ").join(["  ", ""]).join(["kubedra-bomb:\n", ""]) + text


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("deep", "nesting deeper than 200 levels"),
        ("deep-json", "invalid JSON: nesting deeper than 200 levels"),
        ("bomb", "document contains excessive aliasing (refused like kubectl)"),
    ],
)
def test_a_snapshot_too_deep_or_an_alias_bomb_is_malformed_input(
    tmp_path: Path, kind: str, message: str
) -> None:
    """audit read a snapshot file with a reader of its own, without kubedra's bounds: 300 levels of nesting
    escaped as an internal error (exit 3), a 100,000-level JSON one as a RecursionError, and an alias bomb was
    expanded until memory ran out (MemoryError, exit 3). Now the snapshot is read like every manifest, within
    the bounds, and refused as input.malformed with file:line (exit 2), as verify -f and plan refuse it."""
    from tests.hostile.runner import run as run_isolated

    f = tmp_path / ("snap.json" if kind == "deep-json" else "snap.yaml")
    f.write_text(_hostile_snapshot(kind))
    result = run_isolated(["audit", str(f), "-o", "json"], str(tmp_path), time_limit=60)
    assert result.code == 2, str(result)
    findings = json.loads(result.stdout)["findings"]
    assert [(x["rule"], x["message"]) for x in findings] == [("input.malformed", message)], findings
    assert result.stderr == "kubedra: error: 1 input could not be read (see input.malformed in the report)\n"
