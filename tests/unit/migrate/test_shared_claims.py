"""Time-slicing/MPS fleets: Deployments become groups of `replicas` pods sharing one ResourceClaim; workloads
whose controller cannot do that are manual items."""

from __future__ import annotations

import textwrap

from .helpers import by_kind, migrate_text
from .test_sharing_scope import OPERATOR  # GPU Operator e2e config: time-slicing, replicas 10, default on


def workload(kind: str, replicas: int, api: str = "apps/v1", extra: str = "") -> str:
    return (
        textwrap.dedent(
            f"""\
        apiVersion: {api}
        kind: {kind}
        metadata: {{name: w, namespace: ml}}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: w}}}}
          template:
            metadata: {{labels: {{app: w}}}}
            spec:
              containers:
              - name: c
                image: cuda
                resources:
                  requests: {{cpu: "1"}}
                  limits: {{nvidia.com/gpu: 1, memory: 2Gi}}
        """
        )
        + extra
    )


def test_deployment_split_into_groups_sharing_claims():
    rep = migrate_text(OPERATOR + "---\n" + workload("Deployment", 25))
    out = rep.files[0].output
    claims = by_kind(out, "ResourceClaim")
    assert [c["metadata"]["name"] for c in claims] == ["w-gpu-0", "w-gpu-1", "w-gpu-2"]
    assert {c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] for c in claims} == {
        "gpu-time-slicing.gpu.nvidia.com"
    }
    deps = {d["metadata"]["name"]: d for d in by_kind(out, "Deployment")}
    assert {n: d["spec"]["replicas"] for n, d in deps.items()} == {"w": 10, "w-share-1": 10, "w-share-2": 5}
    assert deps["w"]["spec"]["selector"] == {"matchLabels": {"app": "w"}}  # immutable: unchanged
    assert deps["w-share-2"]["spec"]["selector"]["matchLabels"] == {"app": "w", "kubedra.io/gpu-share": "2"}
    for name, d in deps.items():
        pod = d["spec"]["template"]["spec"]
        assert pod["resourceClaims"] == [
            {"name": "gpu", "resourceClaimName": f"w-gpu-{name[-1] if name != 'w' else 0}"}
        ]
        assert pod["containers"][0]["resources"]["limits"] == {"memory": "2Gi"}
        assert pod["containers"][0]["resources"]["claims"] == [{"name": "gpu"}]
    assert not [f for f in rep.findings if f.level == "manual"]
    assert any("3 groups of up to 10 pods" in f.message for f in rep.findings)


def test_small_deployment_shares_one_claim():
    out = migrate_text(OPERATOR + "---\n" + workload("Deployment", 3)).files[0].output
    assert len(by_kind(out, "ResourceClaim")) == 1
    assert len(by_kind(out, "Deployment")) == 1
    assert not by_kind(out, "ResourceClaimTemplate")


def test_statefulset_and_autoscaled_deployment_are_manual():
    rep = migrate_text(OPERATOR + "---\n" + workload("StatefulSet", 12))
    (msg,) = [f.message for f in rep.findings if f.level == "manual"]
    assert "StatefulSet's controller cannot point groups" in msg
    assert "groups of 10 pods" in msg
    assert not by_kind(rep.files[0].output, "ResourceClaim")
    hpa = textwrap.dedent(
        """\
        ---
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: w, namespace: ml}
        spec:
          scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
          minReplicas: 2
          maxReplicas: 20
        """
    )
    rep = migrate_text(OPERATOR + "---\n" + workload("Deployment", 8, extra=hpa))
    assert any("HorizontalPodAutoscaler" in f.message for f in rep.findings if f.level == "manual")


def test_a_statefulset_or_job_that_fits_one_group_shares_one_claim():
    """8 pods where 10 shared a GPU: one group, so every pod references one ResourceClaim (was a manual item);
    the StatefulSet is not split (pod identity and volumes stay)."""
    rep = migrate_text(OPERATOR + "---\n" + workload("StatefulSet", 8))
    assert not [f for f in rep.findings if f.level == "manual"]
    out = rep.files[0].output
    (claim,) = by_kind(out, "ResourceClaim")
    (sts,) = by_kind(out, "StatefulSet")
    assert sts["spec"]["replicas"] == 8
    refs = sts["spec"]["template"]["spec"]["resourceClaims"]
    assert refs == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    job = workload("Job", 1, api="batch/v1").replace(
        "  replicas: 1\n", "  parallelism: 4\n  completions: 40\n"
    )
    (claim,) = by_kind(migrate_text(OPERATOR + "---\n" + job).files[0].output, "ResourceClaim")


def test_daemonset_and_single_pod_keep_a_claim_per_pod():
    ds = workload("DaemonSet", 1).replace("  replicas: 1\n", "")
    out = migrate_text(OPERATOR + "---\n" + ds).files[0].output
    assert by_kind(out, "ResourceClaimTemplate")
    assert not by_kind(out, "ResourceClaim")


def test_migrating_the_output_again_changes_nothing():
    once = migrate_text(OPERATOR + "---\n" + workload("Deployment", 25)).files[0].output
    assert migrate_text(once).files[0].output == once


def test_partial_groups_of_several_deployments_share_a_claim():
    a = workload("Deployment", 13)
    b = workload("Deployment", 5).replace("name: w,", "name: v,").replace("app: w", "app: v")
    c = workload("Deployment", 1).replace("name: w,", "name: u,").replace("app: w", "app: u")
    rep = migrate_text(OPERATOR + "---\n" + a + "---\n" + b + "---\n" + c)
    out = rep.files[0].output
    claims = sorted(x["metadata"]["name"] for x in by_kind(out, "ResourceClaim"))
    # w: 10 + 3; v: 5; u: 1 -> the partial groups (5, 3, 1) fill one GPU of 10 together
    assert claims == ["gpu-time-slicing-shared-0", "w-gpu-0"]
    used = {
        d["metadata"]["name"]: d["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimName"]
        for d in by_kind(out, "Deployment")
    }
    assert used == {
        "w": "w-gpu-0",
        "w-share-1": "gpu-time-slicing-shared-0",
        "v": "gpu-time-slicing-shared-0",
        "u": "gpu-time-slicing-shared-0",
    }
    assert migrate_text(out).files[0].output == out


def test_extended_resource_strategy_on_shared_gpus_is_manual():
    rep = migrate_text(OPERATOR + "---\n" + workload("Deployment", 4), gpu_strategy="extended-resource")
    (msg,) = [f.message for f in rep.findings if f.level == "manual"]
    assert "each pod gets a device of its own" in msg
    assert "10 pods share one GPU" in msg
