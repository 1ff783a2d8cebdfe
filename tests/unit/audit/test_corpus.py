"""``kubedra audit`` on the test corpus of real public manifests (tests/corpus): specific findings with file:line."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from .helpers import corpus, run


def _findings(*args: str) -> tuple[int, dict]:
    r = run("audit", *args, "-o", "json")
    return r.exit_code, json.loads(r.stdout)


def _index(report: dict) -> set[tuple[str, str, int, str, str]]:
    """(rule, file basename, line, kind, name) of every finding."""
    out = set()
    for f in report["findings"]:
        src = f["source"]
        out.add(
            (f["rule"], os.path.basename(src["file"]), src["line"], f["object"]["kind"], f["object"]["name"])
        )
    return out


def _templates(report: dict) -> set[str]:
    """Basenames of the Helm templates the report names (a folder's ``.tpl`` files are reported, not read)."""
    return {
        os.path.basename(f["source"]["file"])
        for f in report["findings"]
        if f["rule"] == "input.helm-template"
    }


@pytest.fixture(scope="module")
def legacy() -> dict:
    code, report = _findings(str(corpus() / "legacy-gpu"))
    # only warnings (device-plugin workloads are not errors at 1.37), but the folder's Helm template was not
    # read: incomplete is exit 2
    assert code == 2
    assert _templates(report) == {"triton-gcp-helm-deployment-template.yaml.tpl"}
    assert {f["severity"] for f in report["findings"] if f["rule"] != "input.helm-template"} == {"warning"}
    return report


@pytest.fixture(scope="module")
def dra() -> dict:
    code, report = _findings(str(corpus() / "dra"))
    # classic DRA and the 1.36 PodGroup alpha are errors at 1.37: exit 1, though the folder's Helm template was
    # not read (what was found wins over incomplete)
    assert code == 1
    assert _templates(report) == {"nvidia-helm-deviceclass-templates.yaml.tpl"}
    return report


def test_gpu_requests_in_every_pod_template_kind(legacy: dict) -> None:
    got = _index(legacy)
    expected = {
        ("gpu.device-plugin-request", "device-plugin-testdata-job.yaml", 22, "Job", "j-e2e-1"),
        ("gpu.device-plugin-request", "kai-batch-job.yaml", 26, "Job", "batch-job"),
        # PyTorchJob Master and Worker templates, each pointing at its own nvidia.com/gpu line
        (
            "gpu.device-plugin-request",
            "kai-kubeflow-pytorchjob.yaml",
            27,
            "PyTorchJob",
            "pytorch-dist-mnist-nccl",
        ),
        (
            "gpu.device-plugin-request",
            "kai-kubeflow-pytorchjob.yaml",
            41,
            "PyTorchJob",
            "pytorch-dist-mnist-nccl",
        ),
        ("gpu.device-plugin-request", "kubeflow-tfjob-multi-worker.yaml", 23, "TFJob", "multi-worker"),
        (
            "gpu.device-plugin-request",
            "kuberay-rayjob-pytorch-distributed.yaml",
            44,
            "RayJob",
            "pytorch-text-classifier-",
        ),
        ("gpu.device-plugin-request", "kuberay-rayservice-llm-serve.yaml", 86, "RayService", "ray-serve-llm"),
        (
            "gpu.device-plugin-request",
            "vllm-production-stack-gpu-deployment.yaml",
            146,
            "Deployment",
            "vllm-llama3-1b-instruct",
        ),
        (
            "gpu.device-plugin-request",
            "volcano-vcjob-tf-benchmark-gpu.yaml",
            85,
            "Job",
            "tensorflow-benchmark-gpu",
        ),
        ("gpu.fraction-annotation", "kai-gpu-fraction-pod.yaml", 13, "Pod", "gpu-sharing"),
        (
            "gpu.fraction-annotation",
            "kuberay-raycluster-kai-gpu-fraction.yaml",
            95,
            "RayCluster",
            "raycluster-half-gpu",
        ),
    }
    assert expected <= got, expected - got


def test_one_finding_per_container_not_per_requests_and_limits(legacy: dict) -> None:
    # the RayJob head asks for nvidia.com/gpu in limits (line 44) and requests (line 48): one finding, at limits
    lines = [f["source"]["line"] for f in legacy["findings"] if f["object"]["kind"] == "RayJob"]
    assert lines == [44]


def test_cpu_only_objects_and_gpu_zero_are_clean(legacy: dict) -> None:
    kinds = Counter(f["object"]["kind"] for f in legacy["findings"])
    assert "Queue" not in kinds
    assert "Secret" not in kinds
    assert "ConfigMap" not in kinds
    # RayService head has num-gpus "0" and no GPU resource: only the worker group is reported
    ray = [f for f in legacy["findings"] if f["object"]["kind"] == "RayService"]
    assert len(ray) == 1
    assert "workerGroupSpecs[0]" in ray[0]["message"]


def test_classic_dra_is_flagged_for_a_human(dra: dict) -> None:
    got = _index(dra)
    assert (
        "dra.classic",
        "nvidia-classic-dra-v1alpha2-gpu-test1.yaml",
        13,
        "ResourceClaimTemplate",
        "gpu.nvidia.com",
    ) in got
    classic = [f for f in dra["findings"] if f["rule"] == "dra.classic"]
    assert len(classic) == 3
    assert all(f["severity"] == "error" and "No mechanical conversion" in f["fix"] for f in classic)
    # classic objects get one finding, not a second api.removed on top
    assert not [
        f
        for f in dra["findings"]
        if f["rule"] == "api.removed"
        and "v1alpha2" in f["object"]["apiVersion"]
        and f["object"]["kind"] == "ResourceClaimTemplate"
    ]


def test_pod_claim_source_points_at_source_and_says_how_to_fix(dra: dict) -> None:
    f = next(
        f for f in dra["findings"] if f["rule"] == "dra.pod-claim-source" and f["object"]["name"] == "pod1"
    )
    assert f["source"]["line"] == 41
    assert "resourceClaims[0].resourceClaimTemplateName: gpu.nvidia.com" in f["fix"]


def test_dra_v1beta1_deprecated_not_removed_at_137(dra: dict) -> None:
    # upstream markers: v1beta1 deprecated 1.35, removed 1.38 (Pluto wrongly says removed 1.36)
    beta = [f for f in dra["findings"] if f["object"]["apiVersion"] == "resource.k8s.io/v1beta1"]
    rules = {f["rule"] for f in beta}
    assert rules == {"api.deprecated", "dra.v1beta1-shape"}
    dep = next(f for f in beta if f["rule"] == "api.deprecated" and f["object"]["kind"] == "DeviceClass")
    assert "off by default), deprecated since 1.35, removal planned for 1.38" in dep["message"]
    assert dep["fix"].startswith("Move to resource.k8s.io/v1 DeviceClass before 1.38 with `kubedra migrate`")


def test_v1beta1_shape_points_at_the_field(dra: dict) -> None:
    got = _index(dra)
    assert (
        "dra.v1beta1-shape",
        "nvidia-quickstart-v1beta1-gpu-test4-mig.yaml",
        24,
        "ResourceClaimTemplate",
        "mig-devices",
    ) in got
    assert (
        "dra.v1beta1-shape",
        "kwok-doc-v1beta1-deviceclass-resourceslice-rct.yaml",
        19,
        "ResourceSlice",
        "kwok-node-0.internal-gpu.kwok.copc4l8",
    ) in got


def test_podgroup_alpha_churn(dra: dict) -> None:
    pg = [f for f in dra["findings"] if f["object"]["kind"] == "PodGroup"]
    by_version = {(f["object"]["apiVersion"], f["rule"]) for f in pg}
    # v1alpha2 is gone at 1.37; v1alpha3 is served there, but only with GenericWorkload and --runtime-config
    assert by_version == {
        ("scheduling.k8s.io/v1alpha2", "api.removed"),
        ("scheduling.k8s.io/v1alpha3", "api.off-by-default"),
    }
    assert all("scheduling.k8s.io/v1beta1 PodGroup" in f["fix"] for f in pg if f["rule"] == "api.removed")
    # the same PodGroups are served when the target is 1.36 (v1alpha2), when enabled: a warning, exit 0
    code, at36 = _findings(
        str(corpus() / "dra" / "example-driver-podgroup-rct-v1alpha2.yaml"), "--target-version", "1.36"
    )
    assert code == 0
    assert {f["rule"] for f in at36["findings"] if f["object"]["kind"] == "PodGroup"} == {
        "api.off-by-default"
    }
    # and the 1.37 v1alpha3 PodGroup is not served at 1.36
    code, v3 = _findings(
        str(corpus() / "dra" / "k8s-scheduler-perf-podgroup-v1alpha3.yaml"), "--target-version", "1.36"
    )
    assert code == 1
    assert {f["rule"] for f in v3["findings"] if f["object"]["kind"] == "PodGroup"} == {"api.not-yet-served"}


def test_device_taint_rules_reported_with_effect(dra: dict) -> None:
    taints = [f for f in dra["findings"] if f["rule"] == "dra.device-taint-rule"]
    assert {f["object"]["name"] for f in taints} == {"example", "taint-all-devices"}
    assert all(":NoSchedule" in f["message"] and f["severity"] == "warning" for f in taints)
    # v1alpha3 DeviceTaintRule: deprecated at 1.37 with v1 as the replacement
    dep = next(
        f
        for f in dra["findings"]
        if f["rule"] == "api.deprecated" and f["object"]["kind"] == "DeviceTaintRule"
    )
    assert "resource.k8s.io/v1 DeviceTaintRule" in dep["fix"]


def test_extended_resource_mapping_lowers_severity(dra: dict) -> None:
    mig = next(f for f in dra["findings"] if f["rule"] == "gpu.mig-request")
    assert mig["severity"] == "info"
    assert "mig-1g-12gb.gpu.nvidia.com" in mig["message"]
    assert "'1g.12gb'" in mig["fix"]


def test_v1_target_state_is_clean(dra: dict) -> None:
    v1_files = {
        "nvidia-quickstart-v1-gpu-test1-rct.yaml",
        "nvidia-quickstart-v1-gpu-test4-mig.yaml",
        "example-driver-resourceslice-v1-kubectl-output.yaml",
        "k8s-scheduler-perf-resourceslice-partitionable-countersets-v1.yaml",
        "k8s-scheduler-perf-resourceslice-partitionable-devices-v1.yaml",
    }
    # the folder holds the same quickstart at several API versions: the copies are one object each (reported
    # once as input.duplicate-object, at the first definition), and nothing else is found in the v1 files
    found = [f for f in dra["findings"] if os.path.basename(f["source"]["file"]) in v1_files]
    assert {f["rule"] for f in found} == {"input.duplicate-object"}
    assert any(
        f["object"]["kind"] == "Deployment"
        and "nvidia-quickstart-v1beta1-gpu-test4-mig.yaml:49" in f["message"]
        and f["source"]["file"].endswith("nvidia-quickstart-v1-gpu-test4-mig.yaml")
        for f in found
    )


def test_v1_manifests_are_not_served_before_134() -> None:
    code, report = _findings(
        str(corpus() / "dra" / "nvidia-quickstart-v1-gpu-test1-rct.yaml"), "--target-version", "1.33"
    )
    assert code == 1
    rct = next(f for f in report["findings"] if f["object"]["kind"] == "ResourceClaimTemplate")
    assert rct["rule"] == "api.not-yet-served"
    assert "first served in 1.34" in rct["message"]
    assert "resource.k8s.io/v1beta2" in rct["fix"]
