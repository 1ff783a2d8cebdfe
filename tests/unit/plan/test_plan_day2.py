"""``kubedra plan`` steps a cluster needs beyond the waves: one etcd snapshot and rollback point per minor on a
multi-minor hop, the gates and --runtime-config for the PodGroups migrate writes, and audit's cluster findings
(kube-dns, IPVS) as steps with the release that forces them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import run

DATA = Path(__file__).parent / "data"

KUBE_DNS = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kube-dns", "namespace": "kube-system"},
    "spec": {
        "selector": {"matchLabels": {"k8s-app": "kube-dns"}},
        "template": {
            "metadata": {"labels": {"k8s-app": "kube-dns"}},
            "spec": {
                "containers": [{"name": "kubedns", "image": "registry.k8s.io/dns/k8s-dns-kube-dns:1.22.28"}]
            },
        },
    },
}
KUBE_PROXY = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
    "data": {
        "config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n"
    },
}
JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "pretrain", "namespace": "ml"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "workers",
                "replicas": 2,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "completions": 2,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "w",
                                        "image": "trainer",
                                        "resources": {"limits": {"nvidia.com/gpu": 8}},
                                    }
                                ]
                            }
                        },
                    }
                },
            }
        ]
    },
}


def fleet(tmp_path: Path, version: str, *extra: dict[str, Any]) -> str:
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    snap["kubedra"]["serverVersion"] = version
    snap["items"] += list(extra)
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap))
    (tmp_path / "fleet.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubedra.io/v1alpha1",
                "kind": "Fleet",
                "clusters": [
                    {"name": "dev", "snapshot": "dev.yaml", "distribution": "kubeadm", "criticality": "low"}
                ],
            }
        )
    )
    return str(tmp_path / "fleet.yaml")


def control_plane(path: str, code: int = 0) -> dict[str, Any]:
    res = run("plan", "--fleet", path, "-o", "json", code=code)
    return next(w for w in json.loads(res.stdout)["waves"] if w["kind"] == "control-plane")


def test_one_etcd_snapshot_and_rollback_point_per_minor(tmp_path: Path) -> None:
    # exit 1: the snapshot's kubelets (v1.36.0) are newer than a 1.34 apiserver, a blocker (cluster.kubelet-skew)
    cp = control_plane(fleet(tmp_path, "v1.34.5"), code=1)
    titles = [s["title"] for s in cp["steps"]]
    for hop in ("1.35", "1.36", "1.37"):
        backup = titles.index(f"Back up etcd (rollback point before {hop})")
        assert titles.index(f"Check the backup (rollback point before {hop})") == backup + 1
        assert titles.index(f"Upgrade the control plane to {hop}") == backup + 2
    saves = [c for s in cp["steps"] for c in s["commands"] if "snapshot save" in c]
    assert [s.split("etcd-dev-wave-")[1].split(".db")[0] for s in saves] == [
        "1-before-1.35",
        "1-before-1.36",
        "1-before-1.37",
    ]
    rollback = cp["rollback"]["commands"]
    undo = [c for c in rollback if c.startswith("# undo")]
    assert undo == [
        "# undo 1.37 (back to 1.36): restore the backup taken before 1.37",
        "# undo 1.36 (back to 1.35): restore the backup taken before 1.36",
        "# undo 1.35 (back to 1.34): restore the backup taken before 1.35",
    ]
    assert any("etcd-dev-wave-1-before-1.35.db" in c for c in rollback)


def test_single_minor_keeps_one_backup(tmp_path: Path) -> None:
    cp = control_plane(fleet(tmp_path, "v1.36.2"))
    titles = [s["title"] for s in cp["steps"]]
    assert titles.count("Back up etcd") == 1
    assert not any("rollback point" in t for t in titles)


def test_podgroups_need_gate_and_runtime_config(tmp_path: Path) -> None:
    cp = control_plane(fleet(tmp_path, "v1.36.2", JOBSET))
    (step,) = [s for s in cp["steps"] if s["title"].startswith("Enable the gang-scheduling API")]
    assert "1 migrated gang workload (PodGroups, scheduling.k8s.io/v1beta1)" in step["title"]
    assert step["commands"][0] == (
        "# kube-apiserver: --feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true"
    )
    assert "--feature-gates=GenericWorkload=true" in step["commands"][1]
    # and nothing without a gang
    assert not any("gang" in s["title"] for s in control_plane(fleet(tmp_path, "v1.36.2"))["steps"])


@pytest.mark.parametrize(
    ("obj", "title"),
    [
        (KUBE_DNS, "Replace kube-dns with CoreDNS (deprecated in 1.37 (no removal announced))"),
        (KUBE_PROXY, "Move kube-proxy from IPVS to nftables (IPVS off by default in 1.40, removed in 1.43)"),
    ],
)
def test_audit_cluster_findings_become_steps(tmp_path: Path, obj: dict[str, Any], title: str) -> None:
    cp = control_plane(fleet(tmp_path, "v1.36.2", obj))
    (step,) = [s for s in cp["steps"] if s["title"] == title]
    assert step["commands"]
    assert step["commands"][0].startswith("# ")
    assert "audit rule cluster." in step["note"]


FLEET = str(DATA / "fleet.yaml")


def test_pool_capacity_before_is_printed_once_per_pool() -> None:
    res = run("plan", "--fleet", FLEET, "-o", "markdown", code=1)
    lines = [ln for ln in res.stdout.splitlines() if "Pool capacity (GPUs)" in ln]
    prod = [ln for ln in lines if "in use 76" in ln]
    assert len(prod) == 10  # one per wave of prod's pool
    assert sum("before 80" in ln for ln in prod) == 1
    assert "before 80" in prod[0]


def test_timeline_in_days_with_soak_and_legend(tmp_path: Path) -> None:
    import itertools
    import re

    out = tmp_path / "plan.html"
    run("plan", "--fleet", FLEET, "--html", str(out), "-o", "json", code=1)
    page = out.read_text()
    svg = page[page.index('id="wave-timeline"') : page.index("</svg>", page.index('id="wave-timeline"'))]
    assert "Wave timeline (days)" in svg
    ticks = re.findall(r'class="tick">([0-9.]+)d<', svg)
    steps = {round(float(b) - float(a), 6) for a, b in itertools.pairwise(ticks)}
    assert len(ticks) <= 9
    assert len(steps) == 1
    assert steps.pop() in (1, 2, 5, 7, 14, 30, 60, 90)
    assert svg.count('class="soak"') >= 10
    assert ": soak 3d" in svg
    assert "soak (72 h)" in svg
    assert "short of GPUs" in svg
    assert re.search(
        r"data-legend=\"[^\"]+\"/>\s*<text [^>]*>cluster ", svg
    )  # the bars are coloured per cluster


def test_driver_feature_gates_follow_the_nodes_sharing(tmp_path: Path) -> None:
    path = fleet(tmp_path, "v1.36.2")
    snap = yaml.safe_load((tmp_path / "dev.yaml").read_text())
    for o in snap["items"]:
        if o["kind"] == "Node":
            o["metadata"]["labels"]["nvidia.com/gpu.sharing-strategy"] = "mps"
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap))
    cp = control_plane(path)
    (values,) = [v for k, v in cp["files"].items() if k.startswith("dra-driver-values.yaml")]
    assert "featureGates:\n  MPSSupport: true" in values
    assert yaml.safe_load(values)["featureGates"] == {"MPSSupport": True}
    (install,) = [s for s in cp["steps"] if s["title"].startswith("Install the NVIDIA DRA driver")]
    assert (
        "driver feature gates MPSSupport in the values (alpha), which rule out NVMLDeviceHealthCheck"
        in install["note"]
    )
    # nothing shared: no featureGates
    plain = control_plane(fleet(tmp_path, "v1.36.2"))
    assert "featureGates" not in next(
        v for k, v in plain["files"].items() if k.startswith("dra-driver-values")
    )


def test_canary_on_the_first_node_wave_runs_as_printed() -> None:
    res = run("plan", "--fleet", FLEET, "-o", "json", code=1)
    waves = json.loads(res.stdout)["waves"]
    dev = [w for w in waves if w["cluster"] == "dev" and w["kind"] == "nodes"]
    canaries = [s for w in dev for s in w["steps"] if s["title"].startswith("Canary")]
    assert len(canaries) == 1
    assert canaries[0] is next(s for s in dev[0]["steps"] if s["title"].startswith("Canary"))
    step = canaries[0]
    assert (
        step["title"]
        == "Canary: a migrated copy of Deployment research/notebook (1 replica) on the wave's nodes"
    )
    get, _, migrate_to = step["commands"][0].partition(" | ")
    assert get == "kubectl --context dev -n research get deployment notebook -o yaml"
    # the kubedra half of the pipe, fed what kubectl would print
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    (dep,) = [o for o in snap["items"] if o["kind"] == "Deployment" and o["metadata"]["name"] == "notebook"]
    args = migrate_to.split(" > ")[0].split()[1:]
    migrated = run(*args, input=yaml.safe_dump(dep))
    assert migrated.exit_code in (0, 1), migrated.output
    kinds = [d["kind"] for d in yaml.safe_load_all(migrated.stdout) if d]
    assert "ResourceClaimTemplate" in kinds
    assert "Deployment" in kinds


def test_printed_runbook_has_every_section_open(tmp_path: Path) -> None:
    md = run("plan", "--fleet", FLEET, "-o", "markdown", code=1).stdout
    assert "<details open><summary>" in md
    assert "<details><summary>" not in md
    out = tmp_path / "plan.html"
    run("plan", "--fleet", FLEET, "--html", str(out), "-o", "json", code=1)
    page = out.read_text()
    assert 'addEventListener("beforeprint"' in page
    assert "d.open = true" in page


def test_pool_wave_size_overrides_the_cluster_size() -> None:
    res = run("plan", "--fleet", FLEET, "-o", "json", "--pool-wave-size", "h100-80gb-x8=50")
    assert res.exit_code in (0, 1), res.output
    prod = [w for w in json.loads(res.stdout)["waves"] if w["cluster"] == "prod" and w["kind"] == "nodes"]
    assert [len(w["nodes"]) for w in prod] == [5, 5]  # 10 nodes, 50% of the pool per wave
    for bad in ("nope=10", "h100-80gb-x8", "h100-80gb-x8=0", "h100-80gb-x8=abc"):
        r = run("plan", "--fleet", FLEET, "-o", "json", "--pool-wave-size", bad)
        assert r.exit_code == 2, (bad, r.output)
        assert "--pool-wave-size" in r.stderr, (bad, r.output)
