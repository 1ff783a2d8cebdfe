"""Device plugin -> DRA rewrites of pod templates, sharing options and manual cases."""

from __future__ import annotations

import textwrap

import pytest

from kubedra import vendors
from kubedra.errors import UsageError
from kubedra.migrate.context import MigrateOptions, Sharing
from kubedra.vendors.base import GpuResource
from kubedra.vendors.nvidia.resources import classify

from .helpers import by_kind, docs, migrate_text, output

DEPLOYMENT = textwrap.dedent(
    """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: trainer
      namespace: ml
    spec:
      replicas: 2
      template:
        spec:
          containers:
          - name: main
            image: cuda:12
            resources:
              limits:
                nvidia.com/gpu: 2
                memory: 8Gi
              requests:
                nvidia.com/gpu: "2"
    """
)


def _rct(text: str) -> dict:
    (rct,) = by_kind(text, "ResourceClaimTemplate")
    return rct


def known(name: str) -> GpuResource:
    r = classify(name)
    assert r is not None, name
    return r


def test_classify_resource_names() -> None:
    assert known("nvidia.com/gpu").kind == "gpu"
    assert known("nvidia.com/gpu.shared").kind == "shared"
    mig = known("nvidia.com/mig-1g.10gb")
    assert (mig.kind, mig.profile) == ("mig", "1g.10gb")
    assert known("nvidia.com/mig-1g.10gb+me").profile == "1g.10gb+me"
    assert known("nvidia.com/mig-3g.20gb.shared").shared
    assert known("nvidia.com/gpumem").kind == "manual"
    assert classify("cpu") is None
    assert classify("example.com/gpu") is None


def test_deployment_becomes_template_claim_and_references() -> None:
    out = output(DEPLOYMENT)
    rct = _rct(out)
    assert rct["metadata"] == {"name": "trainer-gpu", "namespace": "ml"}
    assert rct["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
    ]
    (dep,) = by_kind(out, "Deployment")
    pod = dep["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "trainer-gpu"}]
    res = pod["containers"][0]["resources"]
    assert res == {"limits": {"memory": "8Gi"}, "claims": [{"name": "gpu"}]}
    # the template comes first, so kubectl apply creates it before the pods
    assert [d["kind"] for d in docs(out)] == ["ResourceClaimTemplate", "Deployment"]


def test_requests_different_from_limits_is_manual() -> None:
    text = DEPLOYMENT.replace('nvidia.com/gpu: "2"', 'nvidia.com/gpu: "1"')
    rep = migrate_text(text)
    assert rep.files[0].output == text
    (m,) = rep.manual
    assert "requests 1 != limits 2" in m.message
    assert m.line == 15


def test_helm_expression_in_count_is_manual_with_line() -> None:
    text = DEPLOYMENT.replace("nvidia.com/gpu: 2", 'nvidia.com/gpu: "{{ .Values.gpus }}"')
    rep = migrate_text(text)
    assert rep.files[0].output == text
    assert any("template expression" in m.message and m.line == 15 for m in rep.manual)


def test_multi_container_pod_gets_one_request_per_container() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: a
            resources: {limits: {nvidia.com/gpu: 1}}
          - name: b
            resources: {limits: {nvidia.com/mig-1g.10gb: 2}}
          - name: c
        """
    )
    out = output(text)
    reqs = _rct(out)["spec"]["spec"]["devices"]["requests"]
    assert reqs == [
        {"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
        {
            "name": "b",
            "exactly": {
                "deviceClassName": "mig.nvidia.com",
                "selectors": [
                    {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}
                ],
                "count": 2,
            },
        },
    ]
    (pod,) = by_kind(out, "Pod")
    assert pod["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpu", "request": "a"}]}
    assert pod["spec"]["containers"][1]["resources"] == {"claims": [{"name": "gpu", "request": "b"}]}
    assert "resources" not in pod["spec"]["containers"][2]


def test_init_container_shares_the_main_request_when_it_fits() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          initContainers:
          - name: warmup
            resources: {limits: {nvidia.com/gpu: 1}}
          containers:
          - name: main
            resources: {limits: {nvidia.com/gpu: 2}}
        """
    )
    rep = migrate_text(text)
    out = rep.files[0].output
    assert _rct(out)["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}
    ]
    (pod,) = by_kind(out, "Pod")
    assert pod["spec"]["initContainers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    assert any("shares request" in f.message for f in rep.findings)


def test_init_container_needing_more_gets_its_own_request() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          initContainers:
          - name: warmup
            resources: {limits: {nvidia.com/gpu: 4}}
          containers:
          - name: main
            resources: {limits: {nvidia.com/gpu: 1}}
        """
    )
    names = [r["name"] for r in _rct(output(text))["spec"]["spec"]["devices"]["requests"]]
    assert names == ["warmup", "main"]


def test_existing_claim_names_are_not_reused() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          resourceClaims:
          - {name: gpu, resourceClaimName: nic}
          containers:
          - name: main
            resources: {limits: {nvidia.com/gpu: 1}}
        """
    )
    (pod,) = by_kind(output(text), "Pod")
    assert [c["name"] for c in pod["spec"]["resourceClaims"]] == ["gpu", "gpu-2"]


@pytest.mark.parametrize(
    ("sharing", "expected_class", "params"),
    [
        ("exclusive", "gpu.nvidia.com", None),
        (
            "time-slicing",
            "gpu.nvidia.com",
            {
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "GpuConfig",
                "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}},
            },
        ),
        (
            "mps",
            "gpu.nvidia.com",
            {
                "apiVersion": "resource.nvidia.com/v1beta1",
                "kind": "GpuConfig",
                "sharing": {"strategy": "MPS"},
            },
        ),
        ("mig:3g.40gb", "mig.nvidia.com", None),
    ],
)
def test_sharing_modes(sharing: str, expected_class: str, params: dict | None) -> None:
    devices = _rct(output(DEPLOYMENT, sharing=sharing))["spec"]["spec"]["devices"]
    assert devices["requests"][0]["exactly"]["deviceClassName"] == expected_class
    if params is None:
        assert "config" not in devices
    else:
        assert devices["config"] == [
            {"requests": ["gpu"], "opaque": {"driver": "gpu.nvidia.com", "parameters": params}}
        ]
    if sharing.startswith("mig:"):
        assert devices["requests"][0]["exactly"]["selectors"] == [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}
        ]


def test_min_memory_and_prefer_become_first_available() -> None:
    devices = _rct(output(DEPLOYMENT, min_memory="40Gi", prefer=("H100", "A100")))["spec"]["spec"]["devices"]
    (req,) = devices["requests"]
    assert req["name"] == "gpu"
    assert "exactly" not in req
    mem = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    assert req["firstAvailable"] == [
        {
            "name": "h100",
            "deviceClassName": "gpu.nvidia.com",
            "selectors": [
                {
                    "cel": {
                        "expression": "device.attributes['gpu.nvidia.com'].productName.upperAscii().contains('H100')"
                    }
                },
                {"cel": {"expression": mem}},
            ],
            "count": 2,
        },
        {
            "name": "a100",
            "deviceClassName": "gpu.nvidia.com",
            "selectors": [
                {
                    "cel": {
                        "expression": "device.attributes['gpu.nvidia.com'].productName.upperAscii().contains('A100')"
                    }
                },
                {"cel": {"expression": mem}},
            ],
            "count": 2,
        },
    ]


@pytest.mark.parametrize(
    "opts",
    [
        {"gpu_strategy": "extended-resource", "prefer": ("H100",)},
        {"min_memory": "lots"},
        {"prefer": tuple(f"m{i}" for i in range(9))},
        {"target_version": "1.33"},
    ],
)
def test_bad_option_combinations_are_usage_errors(opts: dict) -> None:
    with pytest.raises(UsageError):
        MigrateOptions(**opts).check()


def test_sharing_parse() -> None:
    assert Sharing.parse("mig:1g.10gb") == Sharing("mig", "1g.10gb")
    with pytest.raises(UsageError):
        Sharing.parse("mig:big")
    with pytest.raises(UsageError):
        Sharing.parse("fractional")


def test_kai_fraction_annotation_is_manual() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
          annotations:
            gpu-fraction: "0.5"
        spec:
          containers: [{name: a}]
        """
    )
    rep = migrate_text(text)
    (m,) = rep.manual
    assert "gpu-fraction" in m.message
    assert m.line == 6


def test_hami_resources_block_the_whole_template() -> None:
    text = DEPLOYMENT.replace("memory: 8Gi", "nvidia.com/gpumem: 4000")
    rep = migrate_text(text)
    assert rep.files[0].output == text
    assert any("HAMi" in m.message for m in rep.manual)


@pytest.mark.parametrize(
    ("resource", "says"),
    [
        ("gpu.intel.com/i915: 1", "gpu.intel.com"),
        ("aliyun.com/gpu-mem: 2", "Alibaba"),
        ("nvidia.com/gpucores: 30", "HAMi"),
    ],
)
def test_other_vendors_and_schemes_are_manual_never_silent(resource: str, says: str) -> None:
    """Another vendor's GPU or a sharing scheme the NVIDIA driver cannot express is a manual item with
    a reason (exit 1), never 0 manual items; the file is left as it is."""
    text = DEPLOYMENT.replace("memory: 8Gi", resource)
    rep = migrate_text(text)
    assert rep.files[0].output == text
    (m,) = [m for m in rep.manual if resource.split(":")[0] in m.message]
    assert says in m.message
    assert "by hand" in m.message


def test_a_scheme_manual_item_names_the_drivers_kubedra_migrates_to() -> None:
    """The words are the vendors' (k8s.gpuschemes spells none): an Intel GPU names every driver kubedra writes
    claims for; a sharing scheme gets what the drivers with sharing offer instead."""
    rep = migrate_text(DEPLOYMENT.replace("memory: 8Gi", "gpu.intel.com/i915: 1"))
    (m,) = [m for m in rep.manual if "gpu.intel.com/i915" in m.message]
    titles = [v.title for v in vendors.all()]
    assert "kubedra migrates to " + " and ".join(f"{t}'s" for t in titles) + " DRA drivers only" in m.message
    rep = migrate_text(DEPLOYMENT.replace("memory: 8Gi", "aliyun.com/gpu-mem: 2"))
    (m,) = [m for m in rep.manual if "aliyun.com/gpu-mem" in m.message]
    offers = [a for v in vendors.all() if (a := v.scheme_alternatives)]
    assert offers
    assert m.message.endswith(f"(Alibaba Cloud gpushare): {'; '.join(offers)} and rewrite by hand")


def test_zero_other_vendor_gpus_are_quiet() -> None:
    text = DEPLOYMENT.replace("memory: 8Gi", "amd.com/gpu: 0")
    assert not [m for m in migrate_text(text).manual if "amd.com" in m.message]


def test_unknown_crd_with_gpu_field_is_manual() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: example.com/v1
        kind: ModelServer
        metadata: {name: m}
        spec:
          resources:
            gpu: "2"
            gpuType: nvidia.com/gpu
          queue:
            gpu: {quota: -1}
        """
    )
    rep = migrate_text(text)
    assert [(m.line, m.path) for m in rep.manual] == [
        (6, "spec.resources.gpu"),
        (7, "spec.resources.gpuType"),
    ]


def test_extended_resource_strategy_keeps_pods_and_emits_classes() -> None:
    text = (
        DEPLOYMENT
        + "---\n"
        + DEPLOYMENT.replace("trainer", "mig").replace("nvidia.com/gpu", "nvidia.com/mig-1g.10gb")
    )
    rep = migrate_text(text, gpu_strategy="extended-resource", target_version="1.35")
    out = rep.files[0].output
    classes = {c["metadata"]["name"]: c["spec"] for c in by_kind(out, "DeviceClass")}
    assert classes["gpu.nvidia.com"]["extendedResourceName"] == "nvidia.com/gpu"
    mig = classes["mig-1g-10gb.gpu.nvidia.com"]
    assert mig["extendedResourceName"] == "nvidia.com/mig-1g.10gb"
    assert "profile == '1g.10gb'" in mig["selectors"][0]["cel"]["expression"]
    assert all(
        d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        for d in by_kind(out, "Deployment")
    )
    assert any("alpha and OFF in 1.35" in f.message for f in rep.findings)
    # idempotent: the classes now exist in the input
    assert output(out, gpu_strategy="extended-resource", target_version="1.35") == out


TS_CONFIGMAP = textwrap.dedent(
    """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: time-slicing-config
      namespace: gpu-operator
    data:
      any: |-
        version: v1
        sharing:
          timeSlicing:
            resources:
            - name: nvidia.com/gpu
              replicas: 4
    """
)


# the GPU Operator docs' setup: its ClusterPolicy names the ConfigMap and its default config
TS_POLICY = textwrap.dedent(
    """\
    apiVersion: nvidia.com/v1
    kind: ClusterPolicy
    metadata: {name: cluster-policy}
    spec:
      devicePlugin:
        config: {name: time-slicing-config, default: any}
    """
)


def test_time_slicing_configmap_becomes_device_class_used_by_workloads() -> None:
    one_gpu = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1").replace('"2"', '"1"')
    rep = migrate_text(TS_CONFIGMAP + "---\n" + TS_POLICY + "---\n" + one_gpu)
    out = rep.files[0].output
    (cm_class,) = by_kind(out, "DeviceClass")
    assert cm_class["metadata"]["name"] == "gpu-time-slicing.gpu.nvidia.com"
    assert cm_class["spec"]["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "TimeSlicing",
        "timeSlicingConfig": {"interval": "Default"},
    }
    (claim,) = by_kind(out, "ResourceClaim")  # both pods share one GPU, as 4 could with the device plugin
    assert (
        claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
        == "gpu-time-slicing.gpu.nvidia.com"
    )
    assert any("replicas: 4" in f.message for f in rep.findings if f.level == "warning")
    # the ConfigMap itself is kept for pools still on the device plugin
    assert by_kind(out, "ConfigMap")[0] == docs(TS_CONFIGMAP)[0]


def test_mps_configmap_sets_thread_percentage() -> None:
    text = TS_CONFIGMAP.replace("timeSlicing:", "mps:")
    (cls,) = by_kind(output(text), "DeviceClass")
    assert cls["metadata"]["name"] == "gpu-mps.gpu.nvidia.com"
    assert cls["spec"]["config"][0]["opaque"]["parameters"]["sharing"] == {
        "strategy": "MPS",
        "mpsConfig": {"defaultActiveThreadPercentage": 25},
    }


def test_renamed_shared_resource_maps_to_the_configmap_class() -> None:
    cm = TS_CONFIGMAP.replace("timeSlicing:\n", "timeSlicing:\n        renameByDefault: true\n")
    pod = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1").replace('"2"', '"1"')
    out = output(cm + "---\n" + pod.replace("nvidia.com/gpu", "nvidia.com/gpu.shared"))
    (claim,) = by_kind(out, "ResourceClaim")
    assert (
        claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
        == "gpu-time-slicing.gpu.nvidia.com"
    )


def test_ray_groups_keep_their_gpu_count() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: ray.io/v1
        kind: RayCluster
        metadata: {name: rc}
        spec:
          headGroupSpec:
            rayStartParams: {}
            template:
              spec:
                containers: [{name: head, image: ray:2}]
          workerGroupSpecs:
          - groupName: gpu
            replicas: 2
            rayStartParams:
              num-cpus: "8"
            template:
              spec:
                containers:
                - name: worker
                  image: ray:2
                  resources: {limits: {nvidia.com/gpu: 4}}
        """
    )
    rep = migrate_text(text)
    (rc,) = by_kind(rep.files[0].output, "RayCluster")
    assert rc["spec"]["workerGroupSpecs"][0]["rayStartParams"] == {"num-cpus": "8", "num-gpus": "4"}
    assert rc["spec"]["headGroupSpec"]["rayStartParams"] == {}
    assert 'num-gpus: "4"' in rep.files[0].output


def test_sharing_mig_on_a_multi_gpu_pod_warns() -> None:
    """--sharing mig turns 8 whole GPUs into 8 slices; say so."""
    eight = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 8").replace(
        'nvidia.com/gpu: "2"', "nvidia.com/gpu: 8"
    )
    rep = migrate_text(eight, sharing="mig:1g.10gb")
    warnings = [f.message for f in rep.files[0].findings if f.level == "warning"]
    assert any("8 whole GPUs become 8 MIG devices of profile 1g.10gb" in w for w in warnings), warnings
    one = DEPLOYMENT.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1").replace(
        'nvidia.com/gpu: "2"', "nvidia.com/gpu: 1"
    )
    rep = migrate_text(one, sharing="mig:1g.10gb")
    assert not any("MIG devices of profile" in f.message for f in rep.files[0].findings)
