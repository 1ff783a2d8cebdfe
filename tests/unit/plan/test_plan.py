"""``kubedra plan`` on a fleet of three clusters from snapshots (tests/unit/plan/data, made by generate.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.plan import engine, fleet, templates

from .helpers import run

DATA = Path(__file__).parent / "data"
FLEET = str(DATA / "fleet.yaml")


@pytest.fixture(scope="module")
def plan_json() -> dict:
    res = run("plan", "--fleet", FLEET, "-o", "json")
    assert res.exit_code == 1, res.output  # prod has a blocker and waves short of GPUs
    return json.loads(res.stdout)


def test_clusters_ordered_by_criticality_and_waves_by_pool(plan_json: dict) -> None:
    waves = plan_json["waves"]
    assert [c["name"] for c in plan_json["clusters"]] == ["dev", "staging", "prod"]
    assert [w["number"] for w in waves] == list(range(1, len(waves) + 1))
    clusters_in_order = [w["cluster"] for w in waves]
    assert clusters_in_order == sorted(clusters_in_order, key=["dev", "staging", "prod"].index)
    # each cluster starts with its control-plane wave, then node pools one at a time (never interleaved)
    for name in ("dev", "staging", "prod"):
        mine = [w for w in waves if w["cluster"] == name]
        assert mine[0]["kind"] == "control-plane"
        pools = [w["pool"] for w in mine[1:]]
        assert pools == sorted(pools, key=pools.index)  # contiguous blocks
        assert len(set(pools)) == len([p for i, p in enumerate(pools) if i == 0 or pools[i - 1] != p])


def test_wave_size_is_ten_percent_of_gpu_nodes_at_least_one(plan_json: dict) -> None:
    prod = [w for w in plan_json["waves"] if w["cluster"] == "prod" and w["kind"] == "nodes"]
    assert len(prod) == 10
    assert all(len(w["nodes"]) == 1 for w in prod)
    every = [n for w in prod for n in w["nodes"]]
    assert sorted(every) == sorted(f"h100-80gb-{i}" for i in range(10))
    res = run("plan", "--fleet", FLEET, "-o", "json", "--wave-size", "50", code=1)
    prod50 = [w for w in json.loads(res.stdout)["waves"] if w["cluster"] == "prod" and w["kind"] == "nodes"]
    assert [len(w["nodes"]) for w in prod50] == [5, 5]


def test_already_migrated_node_is_not_planned(plan_json: dict) -> None:
    staging = [w for w in plan_json["waves"] if w["cluster"] == "staging" and w["kind"] == "nodes"]
    nodes = [n for w in staging for n in w["nodes"]]
    assert "h100-80gb-3" not in nodes
    assert sorted(nodes) == ["h100-80gb-0", "h100-80gb-1", "h100-80gb-2", "l40s-48gb-0", "l40s-48gb-1"]
    pools = {p["name"]: p for p in plan_json["clusters"][1]["pools"]}
    assert pools["h100"]["onDRA"] == 1


def test_blockers_come_from_audit_errors(plan_json: dict) -> None:
    prod = plan_json["clusters"][2]
    assert [b["rule"] for b in prod["blockers"]] == ["api.removed"]
    assert "Helm release sched/batch-scheduler" in prod["blockers"][0]["message"]
    assert all(b["severity"] == "error" for c in plan_json["clusters"] for b in c["blockers"])
    assert plan_json["clusters"][0]["blockers"] == []


def test_capacity_before_after_and_flagged_waves(plan_json: dict) -> None:
    prod = plan_json["clusters"][2]
    (pool,) = prod["pools"]
    assert (pool["gpusDevicePlugin"], pool["gpusDRA"], pool["gpusInUse"]) == (80, 80, 76)
    flagged = plan_json["summary"]["flaggedWaves"]
    prod_waves = [w for w in plan_json["waves"] if w["cluster"] == "prod" and w["kind"] == "nodes"]
    assert flagged == [w["number"] for w in prod_waves]
    cap = prod_waves[0]["capacity"]
    assert (cap["gpusDuring"], cap["gpusInUse"], cap["gpusShort"]) == (72, 76, 4)
    assert "would have no GPU" in prod_waves[0]["warnings"][0]
    # dev has room: nothing flagged there
    dev = [w for w in plan_json["waves"] if w["cluster"] == "dev" and w["kind"] == "nodes"]
    assert all(w["capacity"]["gpusShort"] == 0 and not w["warnings"] for w in dev)


def test_distribution_commands(plan_json: dict) -> None:
    def cmds(wave: dict) -> str:
        return "\n".join(c for s in wave["steps"] for c in s["commands"])

    cp = {w["cluster"]: w for w in plan_json["waves"] if w["kind"] == "control-plane"}
    dev = cmds(cp["dev"])
    assert "etcdctl" in dev
    assert "snapshot save" in dev
    assert "etcdutl snapshot status" in dev
    assert "kubeadm upgrade apply v1.37.0" in dev
    staging = cmds(cp["staging"])
    # two hops, one minor at a time, with the cluster's real name and region
    assert staging.index("--kubernetes-version 1.36") < staging.index("--kubernetes-version 1.37")
    assert "aws eks update-cluster-version --name staging-gpu" in staging
    assert "--region eu-west-1" in staging
    assert "velero backup create" in staging
    assert "etcdctl" not in staging
    prod = cmds(cp["prod"])
    assert "gcloud container clusters upgrade prod-gpu --master --cluster-version=1.37" in prod
    assert "--location=europe-west4 --project=acme-ml" in prod
    for w in cp.values():
        assert "helm --kube-context" in cmds(w)
        assert "nvidia-dra-driver-gpu" in cmds(w)
        assert any("dra-driver-values.yaml" in k for k in w["files"])
        values = yaml.safe_load(next(iter(w["files"].values())))
        assert values["kubeletPlugin"]["nodeSelector"] == {"kubedra.io/gpu-stack": "dra"}
    # the standalone device plugin DaemonSet is kept off DRA nodes
    assert "patch daemonset nvidia-device-plugin-daemonset" in dev


def test_node_wave_runbook_is_complete(plan_json: dict) -> None:
    wave = next(w for w in plan_json["waves"] if w["cluster"] == "dev" and w["kind"] == "nodes")
    text = "\n".join(c for s in wave["steps"] for c in s["commands"])
    node = wave["nodes"][0]
    for needle in (
        f"kubectl --context dev cordon {node}",
        f"kubectl --context dev drain {node} --ignore-daemonsets",
        f"label node {node} kubedra.io/gpu-stack=dra nvidia.com/gpu.deploy.device-plugin=false",
        f"resourceslices --field-selector=spec.nodeName={node}",
        f"uncordon {node}",
        "kubedra verify --context dev --baseline snapshots/dev-before-wave-",
        "kubedra snapshot --context dev -o snapshots/dev-before-wave-",
    ):
        assert needle in text, needle
    smoke = yaml.safe_load_all(next(v for k, v in wave["files"].items() if k.startswith("smoke-")))
    pod = next(d for d in smoke if d["kind"] == "Pod")
    assert pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == "one-gpu"
    assert pod["spec"]["nodeSelector"] == {
        "kubedra.io/gpu-stack": "dra",
        "kubedra.io/node-pool": "a100-80gb-x8",
    }
    rb = "\n".join(wave["rollback"]["commands"])
    assert "kubedra.io/gpu-stack-" in rb
    assert "nvidia.com/gpu.deploy.device-plugin-" in rb
    assert wave["rollback"]["estimatedMinutes"] == 15 + 4 * len(wave["nodes"])
    assert any("kubedra verify" in g for g in wave["gate"])
    assert wave["soakHours"] == 72
    # the pool's last wave applies the migrated manifests
    dev_waves = [w for w in plan_json["waves"] if w["cluster"] == "dev" and w["kind"] == "nodes"]
    last = "\n".join(c for s in dev_waves[-1]["steps"] for c in s["commands"])
    assert "kubedra migrate manifests/dev --target-version 1.37 --out migrated/dev" in last
    assert "kubedra migrate manifests/" not in text  # only the canary (one workload) is migrated before


def test_change_record_fields(plan_json: dict) -> None:
    for c in plan_json["clusters"]:
        rec = c["changeRecord"]
        assert set(rec) >= {"risk", "testEvidence", "rollbackPlan", "blastRadius"}
        assert rec["risk"] in ("low", "medium", "high")
    assert plan_json["clusters"][0]["changeRecord"]["risk"] == "low"
    assert plan_json["clusters"][2]["changeRecord"]["risk"] == "high"


def test_markdown_runbook() -> None:
    res = run("plan", "--fleet", FLEET, "--soak", "48")
    assert res.exit_code == 1
    md = res.stdout
    assert md.startswith("# GPU fleet migration to DRA (Kubernetes 1.37)")
    for head in (
        "## Waves",
        "## Blockers (fix before wave 1)",
        "## Cluster dev",
        "### Change record",
        "## Runbook",
    ):
        assert head in md
    assert (
        len(re.findall(r"^### Wave \d+:", md, re.M))
        == json.loads(run("plan", "--fleet", FLEET, "-o", "json", code=1).stdout)["summary"]["waves"]
    )
    assert "48 h soak" in md
    assert "{{" not in md  # every placeholder filled
    assert md.count("```") % 2 == 0


def test_no_workloads_is_said(tmp_path: Path) -> None:
    from kubedra.model.snapshot import Header, Snapshot, write
    from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster

    write(
        Snapshot(
            Header("empty", "v1.37.0"), nvidia_cluster("1x8xH100-80GB", "full", "1.37", device_plugin=True)
        ),
        str(tmp_path / "e.yaml"),
    )
    (tmp_path / "fleet.yaml").write_text(
        "clusters:\n- {name: e, snapshot: e.yaml, distribution: k3s, criticality: low}\n"
    )
    res = run("plan", "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert any("no GPU workloads" in n for n in data["clusters"][0]["notes"])
    assert data["clusters"][0]["controlPlaneHops"] == []
    assert "k3s etcd-snapshot save" in json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters: []\n", "non-empty 'clusters'"),
        ("clusters:\n- {name: a, snapshot: x.yaml, distribution: openshift}\n", "distribution 'openshift'"),
        ("clusters:\n- {name: a, distribution: eks}\n", "exactly one of 'snapshot' or 'context'"),
        (
            "clusters:\n- {name: a, snapshot: x.yaml, distribution: eks, criticality: extreme}\n",
            "criticality",
        ),
        (
            "clusters:\n- {name: a, snapshot: x.yaml, distribution: eks, colour: red}\n",
            "unknown cluster field",
        ),
        ("clusters:\n- {name: a, snapshot: missing.yaml, distribution: eks}\n", "no such snapshot file"),
        (
            "clusters:\n- {name: a, snapshot: x.yaml, distribution: eks, nodePools: [{name: p, label: novalue}]}\n",
            "KEY=VALUE",
        ),
    ],
)
def test_bad_fleet_files_exit_2(tmp_path: Path, text: str, message: str) -> None:
    shutil.copy(DATA / "dev.yaml", tmp_path / "x.yaml")
    f = tmp_path / "fleet.yaml"
    f.write_text(text)
    res = run("plan", "--fleet", str(f))
    assert res.exit_code == 2, res.output
    assert message in res.stderr
    assert str(f) in res.stderr or "missing.yaml" in res.stderr


def test_bad_flags_exit_2() -> None:
    assert run("plan", "--fleet", FLEET, "--target-version", "1.40").exit_code == 2
    assert run("plan", "--fleet", FLEET, "--wave-size", "0").exit_code == 2


def test_every_distribution_template_renders() -> None:
    fl = fleet.load_fleet(FLEET)
    snaps = engine.load_snapshots(fl)
    for dist in fleet.DISTRIBUTIONS:
        for c in fl.clusters:
            c.distribution = dist
        p = engine.build(fl, snaps, "1.37")
        text = json.dumps(p.to_dict())
        assert "{{" not in text, dist
        assert templates.distribution(dist)["name"] == dist


def test_html_report_written(tmp_path: Path) -> None:
    out = tmp_path / "plan.html"
    res = run("plan", "--fleet", FLEET, "--html", str(out), "-o", "json")
    assert res.exit_code == 1
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert 'id="wave-timeline"' in page
    assert 'id="capacity-chart"' in page
    assert 'id="blockers"' in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in re.sub(
        r"<pre><code>.*?</code></pre>", "", page, flags=re.S
    )  # commands may name URLs


def test_a_cluster_read_incompletely_makes_the_plan_incomplete(tmp_path: Path) -> None:
    for name in ("fleet.yaml", "prod.yaml", "dev.yaml", "staging.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    dev = yaml.safe_load((tmp_path / "dev.yaml").read_text())
    dev["kubedra"]["notInspected"] = [
        {"resource": "deployments.apps", "verb": "list", "namespace": None, "reason": "HTTP 403: forbidden"}
    ]
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(dev))
    res = run("plan", "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json")
    assert res.exit_code == 2, res.output
    out = json.loads(res.stdout)  # the plan is still printed
    assert out["waves"]
    assert [(r["cluster"], r["resource"], r["cause"]) for r in out["incomplete"]] == [
        ("dev", "deployments.apps", "forbidden")
    ]
    assert (
        "kubedra: incomplete: cluster dev: cannot list deployments.apps (cluster-wide): forbidden"
        in res.stderr
    )
    res = run("plan", "--fleet", str(tmp_path / "fleet.yaml"), "-o", "json", "--allow-missing", "deployments")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["incomplete"] == []


def test_a_node_whose_dra_gpus_are_unknown_leaves_its_waves_unchecked(tmp_path: Path) -> None:
    """A GPU model not in the catalogue gives its node no DRA view: the waves that count that node's DRA GPUs
    (as its device-plugin GPUs) have an unchecked capacity, which is not a clean plan (exit 1, was 0)."""
    shutil.copy(DATA / "dev.yaml", tmp_path / "dev.yaml")
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "clusters:\n- {name: dev, snapshot: dev.yaml, distribution: kubeadm, criticality: low}\n"
    )
    res = run("plan", "--fleet", str(fleet_file), "-o", "json")
    assert res.exit_code == 0, res.output  # the same cluster with known GPUs: a clean plan
    assert json.loads(res.stdout)["summary"]["capacityUncheckedWaves"] == []

    dev = yaml.safe_load((tmp_path / "dev.yaml").read_text())
    node = next(o for o in dev["items"] if o["kind"] == "Node" and o["metadata"]["name"] == "a100-80gb-0")
    node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-Zeta-Z900"  # in no catalogue
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(dev))
    res = run("plan", "--fleet", str(fleet_file), "-o", "json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    assert out["summary"]["flaggedWaves"] == []
    assert out["clusters"][0]["blockers"] == []
    unchecked = out["summary"]["capacityUncheckedWaves"]
    node_waves = [w for w in out["waves"] if w["kind"] == "nodes"]
    # the node's own wave and every later wave of its pool count its DRA GPUs
    assert unchecked == [w["number"] for w in node_waves]
    assert all(w["capacityUncheckedNodes"] == ["a100-80gb-0"] for w in node_waves)
    for n in unchecked:
        assert f"kubedra: plan: wave {n} (" in res.stderr
    assert "no DRA inventory known for a100-80gb-0" in res.stderr
    md = run("plan", "--fleet", str(fleet_file))
    assert md.exit_code == 1
    assert "**Capacity not checked:**" in md.stdout
    page = run("plan", "--fleet", str(fleet_file), "-o", "html")
    assert page.exit_code == 1
    assert "Capacity not checked in waves" in page.stdout
    assert "No blockers; every wave keeps enough GPUs" not in page.stdout


def test_a_gpu_node_in_no_pool_of_the_fleet_is_not_a_clean_plan(tmp_path: Path) -> None:
    """The fleet names its node pools and a GPU node is in none: no wave moves it. The plan said so in a
    note and exited 0 ('plan ready'); now the node is listed (JSON, stderr, runbook, HTML), exit 1."""
    shutil.copy(DATA / "staging.yaml", tmp_path / "staging.yaml")
    head = (
        "clusters:\n- name: staging\n  snapshot: staging.yaml\n  distribution: eks\n  criticality: medium\n"
        "  provider: {region: eu-west-1, clusterName: staging-gpu}\n  nodePools:\n"
        "  - name: h100\n    selector: {kubedra.io/node-pool: h100-80gb-x8}\n"
    )
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(head + "  - name: l40s\n    label: kubedra.io/node-pool=l40s-48gb-x4\n")
    res = run("plan", "--fleet", str(fleet_file), "-o", "json")
    assert res.exit_code == 0, res.output  # every GPU node in a pool: a clean plan
    assert json.loads(res.stdout)["summary"]["gpuNodesNotPlanned"] == []

    fleet_file.write_text(head)  # the L40S pool left out of the fleet file
    res = run("plan", "--fleet", str(fleet_file), "-o", "json")
    assert res.exit_code == 1, res.output
    out = json.loads(res.stdout)
    left = ["staging/l40s-48gb-0", "staging/l40s-48gb-1"]
    assert out["summary"]["gpuNodesNotPlanned"] == left
    assert out["clusters"][0]["gpuNodesNotPlanned"] == ["l40s-48gb-0", "l40s-48gb-1"]
    assert out["summary"]["flaggedWaves"] == []
    assert out["summary"]["blockers"] == 0
    assert not any(n.startswith("l40s") for w in out["waves"] for n in w["nodes"])
    assert (
        "kubedra: plan: cluster staging: GPU node l40s-48gb-0 matches none of the fleet's node pools"
        in res.stderr
    )
    md = run("plan", "--fleet", str(fleet_file))
    assert md.exit_code == 1
    assert "**Not planned:** GPU nodes staging/l40s-48gb-0, staging/l40s-48gb-1" in md.stdout
    page = run("plan", "--fleet", str(fleet_file), "-o", "html")
    assert page.exit_code == 1
    assert "Not planned: GPU nodes staging/l40s-48gb-0" in page.stdout
    assert "No blockers; every wave keeps enough GPUs" not in page.stdout


def _plans_the_edited_dev_snapshot(tmp_path: Path, snap: dict[str, Any]) -> None:
    """The dev cluster's snapshot, edited, planned alone: a plan (with or without flags), not a crash."""
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap))
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: dev, snapshot: dev.yaml, distribution: kubeadm, criticality: low}\n"
    )
    res = run("plan", "-f", str(fleet_file), "-o", "json")
    assert res.exit_code in (0, 1), res.output
    assert json.loads(res.stdout)["clusters"][0]["name"] == "dev"


@pytest.mark.parametrize("resources", [1.5, {"limits": [1]}, {"limits": {}, "requests": "x"}])
def test_a_snapshot_workload_with_malformed_resources_holds_no_gpu(tmp_path: Path, resources: object) -> None:
    """Found by the mutation fuzz: a workload in a snapshot whose container resources (or limits) are not a
    mapping crashed plan (AttributeError, exit 3). An API server never writes such an object; in an edited
    snapshot it holds no GPU, and the plan is made as for the same snapshot without that workload's GPUs."""
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    (deployment,) = [it for it in snap["items"] if it["kind"] == "Deployment"]  # the GPU notebook
    deployment["spec"]["template"]["spec"]["containers"][0]["resources"] = resources
    _plans_the_edited_dev_snapshot(tmp_path, snap)


@pytest.mark.parametrize("refs", [[""], [None], [1]])  # (a string for the list: the model says so, exit 2)
def test_a_snapshot_pod_with_malformed_owner_references_is_planned(tmp_path: Path, refs: object) -> None:
    """Found by the mutation fuzz: a GPU pod in a snapshot whose ownerReferences entry is a string crashed plan
    (AttributeError, exit 3); such a reference names no owner."""
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    pod = next(it for it in snap["items"] if it["kind"] == "Pod")
    pod["metadata"]["ownerReferences"] = refs
    _plans_the_edited_dev_snapshot(tmp_path, snap)


@pytest.mark.parametrize("template", [1.5, [1], {"spec": "x"}])
def test_a_snapshot_workload_whose_template_is_not_a_mapping_holds_no_gpu(
    tmp_path: Path, template: object
) -> None:
    """Found by the mutation fuzz: a Deployment in a snapshot whose spec.template (or its spec) is a number or
    list crashed plan (AttributeError, exit 3); such a workload holds no GPU."""
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    (deployment,) = [it for it in snap["items"] if it["kind"] == "Deployment"]
    deployment["spec"]["template"] = template
    _plans_the_edited_dev_snapshot(tmp_path, snap)


def _plan_dev_with(tmp_path: Path, *objects: dict[str, Any]) -> dict[str, Any]:
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    snap["items"] += list(objects)
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap))
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: dev, snapshot: dev.yaml, distribution: kubeadm, criticality: low}\n"
    )
    res = run("plan", "-f", str(fleet_file), "-o", "json")
    assert res.exit_code in (0, 1), res.output
    plan: dict[str, Any] = json.loads(res.stdout)
    return plan


def _control_plane_steps(plan: dict[str, Any]) -> list[dict[str, Any]]:
    wave = next(w for w in plan["waves"] if w["kind"] == "control-plane")
    return list(wave["steps"])


CLUSTER_POLICY = {
    "apiVersion": "nvidia.com/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "cluster-policy"},
    "spec": {"devicePlugin": {"enabled": True}},
}


def test_a_cluster_policy_cluster_gets_the_helm_chart_and_the_reason(tmp_path: Path) -> None:
    """Before: the plan installed the Helm chart next to a ClusterPolicy without saying why not a GPUCluster."""
    steps = _control_plane_steps(_plan_dev_with(tmp_path, CLUSTER_POLICY))
    install = next(s for s in steps if s["title"].startswith("Install the NVIDIA DRA driver"))
    assert any("helm" in c and "upgrade --install" in c for c in install["commands"])
    assert "ClusterPolicy cluster-policy: the operator keeps the GPU driver stack" in install["note"]
    assert "GPUCluster is for new clusters and cannot exist next to a ClusterPolicy" in install["note"]


def test_a_gpu_cluster_cluster_gets_no_second_driver(tmp_path: Path) -> None:
    """A GPUCluster (GPU Operator 26.7) deploys the DRA driver: before, the plan Helm-installed a second one and
    waited on the chart's DaemonSet name."""
    gpu_cluster = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "GPUCluster",
        "metadata": {"name": "gpu-cluster"},
        "spec": {"draDriver": {"version": "v0.4.1"}},
    }
    plugin = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-dra-driver-kubelet-plugin", "namespace": "gpu-operator"},
        "spec": {
            "selector": {"matchLabels": {"app": "nvidia-dra-driver-kubelet-plugin"}},
            "template": {
                "metadata": {"labels": {"app": "nvidia-dra-driver-kubelet-plugin"}},
                "spec": {
                    "containers": [{"name": "gpus", "image": "nvcr.io/nvidia/k8s-dra-driver-gpu:v0.4.1"}]
                },
            },
        },
    }
    plan = _plan_dev_with(tmp_path, gpu_cluster, plugin)
    steps = _control_plane_steps(plan)
    assert not any("helm" in c for s in steps for c in s["commands"])
    check = next(s for s in steps if "GPUCluster" in s["title"])
    assert "gpu-cluster deploys the DRA driver" in check["note"]
    text = json.dumps(plan)
    assert "daemonset/nvidia-dra-driver-kubelet-plugin" in text
    assert "-n gpu-operator rollout status" in text


def test_eks_auto_mode_pools_move_whole_and_the_plan_says_why(tmp_path: Path) -> None:
    """Before: Auto Mode nodes were planned in 10% waves with an in-place label switch, which EKS refuses (a DRA
    driver and a device plugin for the same device type on one node; Auto Mode's device plugin is not a DaemonSet
    kubedra can keep off a node). Now each such pool moves in one wave, naming the rule and its sources."""
    snap = yaml.safe_load((DATA / "prod.yaml").read_text())
    pools: dict[str, list[str]] = {}
    for o in snap["items"]:
        if o["kind"] == "Node" and "kubedra.io/node-pool" in o["metadata"].get("labels", {}):
            pools.setdefault(o["metadata"]["labels"]["kubedra.io/node-pool"], []).append(
                o["metadata"]["name"]
            )
    auto_pool, auto_nodes = max(pools.items(), key=lambda kv: len(kv[1]))
    assert len(auto_nodes) > 1
    for o in snap["items"]:
        if o["kind"] == "Node" and o["metadata"]["name"] in auto_nodes:
            o["metadata"]["labels"]["eks.amazonaws.com/compute-type"] = "auto"
    (tmp_path / "prod.yaml").write_text(yaml.safe_dump(snap))
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: prod, snapshot: prod.yaml, distribution: eks, criticality: high}\n"
    )
    res = run("plan", "-f", str(fleet_file), "-o", "json", "--wave-size", "10")
    plan = json.loads(res.stdout)
    waves = [w for w in plan["waves"] if w["kind"] == "nodes" and w["pool"] == auto_pool]
    assert len(waves) == 1, [w["title"] for w in waves]
    assert sorted(waves[0]["nodes"]) == sorted(n for n in auto_nodes)
    assert "the whole pool: EKS Auto Mode" in waves[0]["title"]
    step = next(s for s in waves[0]["steps"] if s["title"].startswith("EKS Auto Mode"))
    assert "refuses a DRA driver and a device plugin for the same device type on one node" in step["note"]
    assert "https://docs.aws.amazon.com/eks/latest/userguide/device-management.html" in step["note"]
    others = [w for w in plan["waves"] if w["kind"] == "nodes" and w["pool"] != auto_pool]
    assert all("the whole pool" not in w["title"] for w in others)
