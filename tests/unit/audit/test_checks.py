"""Each rule on small synthetic inputs: what fires, what stays quiet, and the edge cases from upstream."""

from __future__ import annotations

from typing import Any

import pytest

from kubedra.audit import engine
from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import Item, RuleBook
from kubedra.audit.scope import CHECKS, ClusterFacts, Scope
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.versions import Version
from kubedra.sources.files import parse_text

DB = DeprecationDB.load()
RULES = RuleBook.load()


def audit(
    objs: list[dict[str, Any]] | str,
    *,
    target: str = "1.37",
    current: str | None = None,
    live: bool = False,
    metrics: str | None = None,
    server: str | None = None,
) -> list[Finding]:
    facts = None
    if live:
        facts = ClusterFacts(name="prod", server_version=Version.maybe(server), metrics=metrics)
    scope = Scope(name="prod" if live else None, facts=facts)
    if isinstance(objs, str):
        parsed = parse_text(objs, "in.yaml")
        assert not parsed.errors
        scope.items = [Item(obj=d.obj, doc=d) for d in parsed.documents]
    else:
        scope.items = [Item(obj=o, cluster="prod" if live else None) for o in objs]
    findings, _ = engine.run(
        [scope],
        target=Version.parse(target),
        current=Version.parse(current) if current else None,
        db=DB,
        rules=RULES,
    )
    return findings


def rules_of(findings: list[Finding]) -> list[str]:
    return [f.rule for f in findings]


def obj(f: Finding) -> ObjectRef:
    """The object a finding is about (a test's finding always has one)."""
    assert f.object is not None, f
    return f.object


def only(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


# --- GPUs --------------------------------------------------------------------------------------------------------


def pod(resources: dict[str, Any], annotations: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "ml",
            **({"annotations": annotations} if annotations else {}),
            **meta,
        },
        "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": resources}}]},
    }


@pytest.mark.parametrize(
    ("resource", "rule"),
    [
        ("nvidia.com/gpu", "gpu.device-plugin-request"),
        ("nvidia.com/gpu.shared", "gpu.shared-request"),
        ("nvidia.com/mig-1g.5gb", "gpu.mig-request"),
        ("nvidia.com/mig-3g.40gb", "gpu.mig-request"),
        ("nvidia.com/gpumem", "gpu.hami-request"),
        ("nvidia.com/gpucores", "gpu.hami-request"),
        ("volcano.sh/vgpu-memory", "gpu.hami-request"),
        (
            "amd.com/gpu",
            "gpu.device-plugin-request",
        ),  # the ROCm device plugin: a vendor behind kubedra.vendors
        ("amd.com/cpx_nps4", "gpu.partition-request"),
        ("gpu.intel.com/i915", "gpu.other-vendor-request"),
        ("gpu.intel.com/xe", "gpu.other-vendor-request"),
        ("aliyun.com/gpu-mem", "gpu.memory-share-request"),
        ("nvidia.com/gpumem-percentage", "gpu.hami-request"),
    ],
)
def test_gpu_resources(resource: str, rule: str) -> None:
    (f,) = audit([pod({resource: 1})])
    assert f.rule == rule
    assert resource in f.message


def test_gpu_zero_and_other_resources_are_quiet() -> None:
    assert audit([pod({"nvidia.com/gpu": 0, "cpu": "2", "example.com/foo": 1})]) == []


def test_other_vendor_fix_names_driver() -> None:
    (f,) = audit([pod({"gpu.intel.com/i915": 1})])
    assert "gpu.intel.com" in f.fix


def test_amd_gpu_fix_names_amd_device_class() -> None:
    (f,) = audit([pod({"amd.com/gpu": 1})])
    assert "gpu.amd.com" in f.fix


def test_init_containers_and_deep_templates() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "template": {
                        "spec": {
                            "template": {
                                "spec": {
                                    "initContainers": [
                                        {
                                            "name": "warm",
                                            "image": "x",
                                            "resources": {"requests": {"nvidia.com/gpu": 1}},
                                        }
                                    ],
                                    "containers": [{"name": "main", "image": "x"}],
                                }
                            }
                        }
                    },
                }
            ]
        },
    }
    (f,) = audit([jobset])
    assert f.rule == "gpu.device-plugin-request"
    assert "spec.replicatedJobs[0].template.spec.template.spec" in f.message
    assert "warm" in f.message


def test_fraction_annotations() -> None:
    (f,) = audit([pod({}, {"gpu-memory": "4000"})])
    assert f.rule == "gpu.fraction-annotation"
    assert "KAI" in f.message


@pytest.mark.parametrize(
    ("key", "scheme"),
    [("gpu-fraction", "KAI"), ("nvidia.com/use-gputype", "HAMi"), ("hami.io/gpu-scheduler-policy", "HAMi")],
)
def test_scheduler_gpu_annotations_are_the_ones_migrate_cannot_rewrite(key: str, scheme: str) -> None:
    """audit and migrate read the same table (data/gpu-schemes.yaml): what migrate leaves manual, audit reports."""
    (f,) = audit([pod({}, {key: "x"})])
    assert f.rule == "gpu.fraction-annotation"
    assert scheme in f.message


def test_live_pods_owned_by_a_listed_controller_are_reported_once() -> None:
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "namespace": "ml",
            "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}],
        },
        "spec": {"template": pod({"nvidia.com/gpu": 1})},
    }
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ml"},
        "spec": {"template": pod({"nvidia.com/gpu": 1})},
    }
    owned_pod = pod(
        {"nvidia.com/gpu": 1}, ownerReferences=[{"kind": "ReplicaSet", "name": "web-1", "controller": True}]
    )
    orphan = pod(
        {"nvidia.com/gpu": 1}, ownerReferences=[{"kind": "PyTorchJob", "name": "gone", "controller": True}]
    )
    orphan["metadata"]["name"] = "orphan"
    found = only(audit([dep, rs, owned_pod, orphan], live=True), "gpu.device-plugin-request")
    assert sorted(obj(f).kind + "/" + obj(f).name for f in found) == ["Deployment/web", "Pod/orphan"]


@pytest.mark.parametrize("ref", [{"kind": [1], "name": "web"}, {"kind": "Deployment", "name": {"a": "web"}}])
def test_an_owner_reference_whose_kind_or_name_is_not_a_string_owns_nothing(ref: dict[str, Any]) -> None:
    """Found by the mutation fuzz (a snapshot with a duplicated ``kind:`` key holding a list): a controller
    ownerReference whose kind or name is a list or mapping was looked up in a set of owners (TypeError:
    unhashable, exit 3 in audit and plan). Such a reference names no object: the pod is reported itself."""
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ml"},
        "spec": {"template": pod({"nvidia.com/gpu": 1})},
    }
    owned = pod({"nvidia.com/gpu": 1}, ownerReferences=[{**ref, "controller": True}])
    found = only(audit([dep, owned], live=True), "gpu.device-plugin-request")
    assert sorted(obj(f).kind + "/" + obj(f).name for f in found) == [
        "Deployment/web",
        f"Pod/{owned['metadata']['name']}",
    ]


def test_extended_resource_classes_lower_the_severity() -> None:
    dc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"extendedResourceName": "nvidia.com/gpu"},
    }
    (f,) = audit([dc, pod({"nvidia.com/gpu": 1})])
    assert f.severity == "info"
    assert "DeviceClass gpu.nvidia.com maps nvidia.com/gpu" in f.message


DEVICE_PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: kube-system
spec:
  template:
    spec:
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: kube-system
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin:
    enabled: true
"""


def test_device_plugin_daemonset_config_and_operator() -> None:
    found = {f.rule: f for f in audit(DEVICE_PLUGIN)}
    assert found["gpu.device-plugin-daemonset"].source.line == 11  # the image line
    ts = found["gpu.time-slicing-config"]
    assert "nvidia.com/gpu x4" in ts.message
    assert "nvidia.com/gpu.shared" in ts.message
    assert ts.source.line == 19
    assert found["gpu.operator"].severity == "warning"  # device plugin enabled in the ClusterPolicy


def node(
    name: str, gpus: int | None = None, kernel: str = "6.8.0", kubelet: str = "v1.36.2", **labels: str
) -> dict[str, Any]:
    alloc = {"cpu": "64"} | ({"nvidia.com/gpu": str(gpus)} if gpus is not None else {})
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": alloc, "nodeInfo": {"kernelVersion": kernel, "kubeletVersion": kubelet}},
    }


def rslice(
    name: str,
    node_name: str | None,
    driver: str = "gpu.nvidia.com",
    pool: str | None = None,
    gen: int = 1,
    count: int = 1,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool or node_name or name, "generation": gen, "resourceSliceCount": count},
        "devices": [{"name": "gpu-0"}],
    }
    if node_name:
        spec["nodeName"] = node_name
    else:
        spec["allNodes"] = True
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name, "creationTimestamp": "x"},
        "spec": spec,
    }


GPU_PRESENT: dict[str, Any] = {"nvidia.com/gpu.present": "true"}


def test_dual_advertisement_and_nodes_without_slices() -> None:
    objs = [
        node("both", gpus=8),
        node("dp-only", gpus=8),
        node("dra-only", **GPU_PRESENT),
        node("labelled-no-slices", **GPU_PRESENT),
        node("cpu"),
        rslice("s1", "both"),
        rslice("s2", "dra-only"),
    ]
    found = audit(objs, live=True)
    (dual,) = only(found, "gpu.dual-advertisement")
    assert obj(dual).name == "both"
    assert dual.severity == "error"
    missing = {obj(f).name: f.severity for f in only(found, "dra.gpu-node-without-slices")}
    assert missing == {"dp-only": "info", "labelled-no-slices": "warning"}


def test_no_dual_advertisement_for_other_drivers() -> None:
    assert not only(
        audit([node("n", gpus=8), rslice("s", "n", driver="gpu.example.com")], live=True),
        "gpu.dual-advertisement",
    )


# --- DRA health ------------------------------------------------------------------------------------------------


def test_pool_consistency() -> None:
    # generation 2 is current: 1 slice at gen 2 but resourceSliceCount 2 -> incomplete; older gen ignored
    objs = [
        rslice("a", None, pool="p", gen=1, count=1),
        rslice("b", None, pool="p", gen=2, count=2),
        rslice("c", None, pool="q", gen=1, count=2),
        rslice("d", None, pool="q", gen=1, count=2),
    ]
    (f,) = only(audit(objs, live=True), "dra.pool-inconsistent")
    assert "pool p" in f.message
    assert "1 slice at generation 2, resourceSliceCount says 2" in f.message
    # a manifest folder may hold part of a pool: fewer slices than announced is fine there, more is not
    partial = [dict(rslice("b", None, pool="p", gen=2, count=2), metadata={"name": "b"})]
    assert not only(audit(partial), "dra.pool-inconsistent")
    too_many = [dict(rslice(n, None, pool="p", count=1), metadata={"name": n}) for n in ("x", "y")]
    assert only(audit(too_many), "dra.pool-inconsistent")


def test_pools_disagreeing_on_count() -> None:
    objs = [rslice("a", None, pool="p", count=2), rslice("b", None, pool="p", count=3)]
    (f,) = only(audit(objs, live=True), "dra.pool-inconsistent")
    assert "disagree" in f.message


def test_mixed_counter_slices_only_from_135() -> None:
    s = rslice("s", "n")
    s["spec"]["sharedCounters"] = [{"name": "gpu-0-counters", "counters": {"memory": {"value": "80Gi"}}}]
    assert only(audit([s]), "dra.mixed-counter-slice")
    assert not only(audit([s], target="1.34"), "dra.mixed-counter-slice")


def test_driver_not_ready_and_claims() -> None:
    ds: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "namespace": "nvidia-dra"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0"}]
                }
            }
        },
        "status": {"desiredNumberScheduled": 2, "numberReady": 1},
    }
    bad_pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "plugin-x",
            "namespace": "nvidia-dra",
            "ownerReferences": [{"kind": "DaemonSet", "name": ds["metadata"]["name"]}],
        },
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "p", "image": "i"}]},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {"devices": {"requests": []}},
        "status": {},
    }
    waiting = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {
            "containers": [{"name": "c", "image": "i"}],
            "resourceClaims": [{"name": "g", "resourceClaimName": "c"}],
        },
        "status": {"phase": "Pending"},
    }
    found = audit([ds, bad_pod, claim, waiting], live=True)
    (nr,) = only(found, "dra.driver-not-ready")
    assert "ready 1/2" in nr.message
    assert "plugin-x on gpu-1" in nr.message
    (c,) = only(found, "dra.claim-unallocated")
    assert c.severity == "warning"
    assert "trainer" in c.message
    # hand-written manifests have no status: no health findings from them
    assert not only(audit([claim | {"status": None}]), "dra.claim-unallocated")


def test_device_taint_rule_effect_sets_severity() -> None:
    rule = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "maint"},
        "spec": {
            "deviceSelector": {"driver": "gpu.nvidia.com", "pool": "node-1"},
            "taint": {"key": "maint", "effect": "None"},
        },
    }
    (f,) = audit([rule])
    assert f.severity == "info"
    assert "driver=gpu.nvidia.com, pool=node-1" in f.message


# --- webhooks ------------------------------------------------------------------------------------------------


def webhook(kind: str = "ValidatingWebhookConfiguration", **hook: Any) -> dict[str, Any]:
    base = {
        "name": "check.example.com",
        "rules": [
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "s", "namespace": "x"}},
    }
    base.update(hook)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": "w"},
        "webhooks": [base],
    }


def test_webhook_defaults_fail_closed_and_no_system_exclusion() -> None:
    found = audit([webhook()])
    assert set(rules_of(found)) == {
        "webhook.matches-gpu-workloads",
        "webhook.fail-closed-slow",  # v1 default: Fail, 10s
        "webhook.no-system-exclusion",
        "webhook.vap-candidate",
    }
    assert "timeoutSeconds 10 (default)" in only(found, "webhook.fail-closed-slow")[0].message


def test_webhook_excluding_kube_system_and_ignore_policy() -> None:
    sel = {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}
        ]
    }
    found = audit([webhook(namespaceSelector=sel, failurePolicy="Ignore", timeoutSeconds=30)])
    assert set(rules_of(found)) == {"webhook.matches-gpu-workloads", "webhook.vap-candidate"}
    cond = [{"name": "skip", "expression": "request.namespace != 'kube-system'"}]
    assert not only(audit([webhook(matchConditions=cond)]), "webhook.no-system-exclusion")


def test_mutating_webhook_on_dra_objects_is_a_warning_and_not_a_vap() -> None:
    rules = [
        {
            "apiGroups": ["resource.k8s.io"],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["resourceclaims"],
        }
    ]
    found = audit([webhook("MutatingWebhookConfiguration", rules=rules, timeoutSeconds=3)])
    (m,) = only(found, "webhook.matches-gpu-workloads")
    assert m.severity == "warning"
    assert "resourceclaims.resource.k8s.io" in m.message
    assert not only(found, "webhook.vap-candidate")
    assert not only(found, "webhook.fail-closed-slow")


def test_wildcard_or_side_effect_webhooks_are_not_vap_candidates() -> None:
    rules = [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]
    assert not only(audit([webhook(rules=rules)]), "webhook.vap-candidate")
    assert not only(audit([webhook(sideEffects="Some")]), "webhook.vap-candidate")


# --- CRDs ---------------------------------------------------------------------------------------------------


def test_crd_deprecated_versions_and_gpu_operator_groups() -> None:
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "pytorchjobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org",
            "names": {"kind": "PyTorchJob"},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "deprecationWarning": "use v1",
                },
                {"name": "v1", "served": True, "storage": True},
                {"name": "v1alpha1", "served": False, "deprecated": True},
            ],
        },
        "status": {"storedVersions": ["v1beta1", "v1"]},
    }
    found = audit([crd])
    (d,) = only(found, "crd.deprecated-version")
    assert "kubeflow.org/v1beta1" in d.message
    assert "storedVersions" in d.message
    assert ": use v1" in d.message
    assert d.severity == "warning"
    assert "(v1)" in d.fix
    (g,) = only(found, "crd.gpu-operator")
    assert "PyTorchJob" in g.message
    crd["spec"]["versions"][0]["storage"] = True
    assert only(audit([crd]), "crd.deprecated-version")[0].severity == "error"


def test_v1beta1_crd_api_removed() -> None:
    (f,) = audit(
        [
            {
                "apiVersion": "apiextensions.k8s.io/v1beta1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "x"},
                "spec": {"group": "example.com"},
            }
        ]
    )
    assert f.rule == "api.removed"
    assert "removed 1.22" in f.message


# --- cluster configuration -----------------------------------------------------------------------------------


KUBE_SYSTEM = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-proxy
  namespace: kube-system
data:
  config.conf: |-
    apiVersion: kubeproxy.config.k8s.io/v1alpha1
    kind: KubeProxyConfiguration
    mode: ipvs
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kube-dns
  namespace: kube-system
spec:
  template:
    spec:
      containers:
      - name: kubedns
        image: registry.k8s.io/dns/k8s-dns-kube-dns:1.22.28
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kubelet-config
  namespace: kube-system
data:
  kubelet: |
    apiVersion: kubelet.config.k8s.io/v1beta1
    kind: KubeletConfiguration
    failCgroupV1: false
"""


def test_kube_system_configuration() -> None:
    found = {f.rule: f for f in audit(KUBE_SYSTEM + "---\n" + _node_yaml("old-kernel", "5.4.0-150-generic"))}
    ipvs = found["cluster.kube-proxy-ipvs"]
    assert ipvs.severity == "warning"
    assert ipvs.source.line == 7
    assert "1.40" in ipvs.fix
    assert "1.43" in ipvs.fix
    assert obj(found["cluster.kube-dns"]).name == "kube-dns"
    assert found["cluster.cgroup-v1"].source.line == 30
    k = found["cluster.nftables-kernel"]
    assert "5.4.0-150-generic" in k.message
    assert k.source.line is not None


def _node_yaml(name: str, kernel: str) -> str:
    return (
        f"apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\nstatus:\n  nodeInfo:\n"
        f"    kernelVersion: {kernel}\n    kubeletVersion: v1.36.1\n"
    )


def test_ipvs_becomes_an_error_when_disabled_by_default() -> None:
    (f,) = only(audit(KUBE_SYSTEM, target="1.40"), "cluster.kube-proxy-ipvs")
    assert f.severity == "error"
    assert "disabled by default from 1.40" in f.message


def test_kube_proxy_mode_flag_and_coredns_named_kube_dns() -> None:
    ds: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "kp",
                            "image": "kube-proxy",
                            "command": ["kube-proxy", "--proxy-mode", "ipvs"],
                        }
                    ]
                }
            }
        },
    }
    coredns = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "kube-dns", "namespace": "kube-system"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "coredns", "image": "registry.k8s.io/coredns/coredns:v1.12.0"}]
                }
            }
        },
    }
    found = audit([ds, coredns])
    assert rules_of(found) == ["cluster.kube-proxy-ipvs"]


def test_nftables_kernel_only_matters_with_ipvs() -> None:
    assert not audit(_node_yaml("n", "4.19.0"))


def test_kubelet_skew() -> None:
    objs = [node("ok", kubelet="v1.34.9"), node("old", kubelet="v1.33.5"), node("newer", kubelet="v1.37.0")]
    found = only(audit(objs, live=True, server="v1.36.2"), "cluster.kubelet-skew")
    assert {obj(f).name: f.message for f in found} == {
        "old": "kubelet v1.33.5 is more than 3 minors older than the target 1.37",
        "newer": "kubelet v1.37.0 is newer than the apiserver 1.36",
    }


METRICS = """\
# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="DynamicResourceAllocation",stage=""} 1
kubernetes_feature_enabled{name="DRADeviceTaintRules",stage="BETA"} 0
kubernetes_feature_enabled{name="DRAExtendedResource",stage="BETA"} 0
kubernetes_feature_enabled{name="GangScheduling",stage="ALPHA"} 1
kubernetes_feature_enabled{name="WorkloadAwarePreemption",stage="ALPHA"} 0
kubernetes_feature_enabled{name="DRAPartitionableDevices",stage="BETA"} 1
# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="resource.k8s.io",removed_release="1.38",resource="resourceclaims",subresource="",version="v1beta1"} 1
apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",removed_release="1.32",resource="flowschemas",subresource="status",version="v1beta3"} 1
"""


def test_feature_gates_from_metrics() -> None:
    found = only(audit([], live=True, metrics=METRICS, server="v1.36.1"), "cluster.feature-gate")
    by_gate = {obj(f).name: f for f in found}
    assert set(by_gate) == {"DRADeviceTaintRules", "DRAExtendedResource", "GangScheduling"}
    # GA+locked at 1.37: an explicit =false stops components from starting
    assert by_gate["DRAExtendedResource"].severity == "warning"
    assert "locked" in by_gate["DRAExtendedResource"].message
    assert "cannot be turned off" in by_gate["DRAExtendedResource"].fix
    # GA but not locked: it just turns on
    assert by_gate["DRADeviceTaintRules"].severity == "info"
    # merged into GenericWorkload in 1.37
    assert "GenericWorkload" in by_gate["GangScheduling"].fix
    assert all(f.source.cluster == "prod" for f in found)


def test_removed_gate_enabled_is_an_error() -> None:
    m = 'kubernetes_feature_enabled{name="DRAControlPlaneController",stage="ALPHA"} 1\n'
    (f,) = only(audit([], live=True, metrics=m, server="1.31.0"), "cluster.feature-gate")
    assert f.severity == "error"
    assert "does not exist at 1.37" in f.message


def test_deprecated_api_requests_from_metrics() -> None:
    found = only(audit([], live=True, metrics=METRICS, server="v1.36.1"), "api.deprecated-requested")
    sev = {obj(f).kind: f.severity for f in found}
    assert sev == {"resourceclaims": "warning", "flowschemas": "error"}
    assert any("flowcontrol.apiserver.k8s.io/v1beta3 flowschemas/status" in f.message for f in found)


# --- live objects and authored versions ------------------------------------------------------------------------


def test_live_objects_are_judged_by_how_they_were_written() -> None:
    applied = '{"apiVersion":"resource.k8s.io/v1beta1","kind":"DeviceClass","metadata":{"name":"gpu"}}'
    dc = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {
            "name": "gpu",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "apiVersion": "resource.k8s.io/v1beta1"},
                {"manager": "operator", "apiVersion": "resource.k8s.io/v1beta2"},
            ],
        },
        "spec": {},
    }
    found = audit([dc], live=True, server="v1.36.0")
    msgs = sorted(f.message for f in only(found, "api.deprecated"))
    assert len(msgs) == 2
    assert msgs[0].startswith("last applied with kubectl as resource.k8s.io/v1beta1 DeviceClass")
    assert msgs[1].startswith("written by field manager 'operator' as resource.k8s.io/v1beta2 DeviceClass")


def test_live_single_version_alpha_objects_do_not_survive() -> None:
    pg = {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ml"},
        "spec": {},
    }
    (f,) = only(audit([pg], live=True, server="v1.36.0"), "api.removed")
    assert "unreadable after the upgrade" in f.message
    assert f.source.cluster == "prod"


# --- data ----------------------------------------------------------------------------------------------------


def test_rule_data_is_complete_and_every_rule_has_a_check() -> None:
    from kubedra.audit import checks  # noqa: F401

    checked = {r for ids, _ in CHECKS for r in ids}
    emitted_elsewhere = {
        "input.malformed",
        "input.helm-template",
        "input.helm-render-failed",
        "cluster.unreachable",
        "cluster.not-inspected",
    }
    assert checked | emitted_elsewhere == set(RULES.rules)
    for r in RULES.rules.values():
        assert r.severity in ("error", "warning", "info")
        assert r.title
        assert r.fix
        assert r.docs.startswith("https://")


def test_live_current_version_defaults_to_the_apiserver() -> None:
    dc = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "DeviceClass",
        "metadata": {
            "name": "gpu",
            "managedFields": [{"manager": "helm", "apiVersion": "resource.k8s.io/v1beta1"}],
        },
        "spec": {},
    }
    found = audit([dc], live=True, server="v1.33.4", target="1.38")
    removed = next(f for f in only(found, "api.removed") if "field manager 'helm'" in f.message)
    assert "still served by the current version 1.33" in removed.message
    (two_step,) = only(found, "api.replacement-not-in-current")
    assert "resource.k8s.io/v1 is first served in 1.34" in two_step.message
    (path,) = only(found, "cluster.upgrade-path")
    assert "1.33 -> 1.34 -> 1.35 -> 1.36 -> 1.37 -> 1.38" in path.fix


@pytest.mark.parametrize(
    ("api_version", "kind", "replacement"),
    [
        ("resource.k8s.io/v1alpha4", "ResourceClaim", "resource.k8s.io/v1 ResourceClaim"),
        ("apps/v1beta3", "Deployment", "apps/v1 Deployment"),
    ],
)
def test_a_version_no_release_served_is_an_error(api_version: str, kind: str, replacement: str) -> None:
    """Like validate: the apiserver has no such resource."""
    findings = audit([{"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}])
    assert rules_of(findings) == ["api.never-served"]
    assert findings[0].severity == "error"
    assert replacement in findings[0].fix


def test_unknown_versions_of_crd_groups_are_not_judged() -> None:
    objs = [
        {"apiVersion": "kubeflow.org/v9", "kind": "PyTorchJob", "metadata": {"name": "x"}},
        {"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": {"name": "y"}},
    ]
    assert "api.never-served" not in rules_of(audit(objs))


def _driver_ds(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "nvidia-dra-driver-gpu-kubelet-plugin", "namespace": "nvidia-dra-driver-gpu"},
        "spec": {"template": {"spec": {"containers": [{"name": "plugin", "image": image}]}}},
    }


@pytest.mark.parametrize(
    ("image", "target", "message"),
    [
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.12.0", "1.37", None),
        ("registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.0", "1.34", None),
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.1", "1.31", "needs Kubernetes 1.32+ (cluster: 1.31)"),
        ("nvcr.io/nvidia/k8s-dra-driver-gpu:v24.1.0", "1.37", "is not in kubedra's release table"),
    ],
)
def test_nvidia_driver_release_preflight(image: str, target: str, message: str | None) -> None:
    hits = only(audit([_driver_ds(image)], target=target), "dra.driver-release")
    if message is None:
        assert hits == []
    else:
        assert len(hits) == 1, [h.message for h in hits]
        assert message in hits[0].message, [h.message for h in hits]


def test_gpus_in_custom_resource_fields_but_not_tolerations() -> None:
    """GPUs named in a CR's own fields are reported (the fields migrate leaves manual and simulate
    skips); a toleration or node selector naming nvidia.com/gpu places pods, it requests nothing."""
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t"},
        "spec": {"trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}},
    }
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": {
            "nodeLabels": {"nvidia.com/gpu.present": "true"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    findings = audit([trainjob, flavor])
    assert [(f.rule, obj(f).kind) for f in findings] == [("gpu.custom-resource-request", "TrainJob")]
    assert "spec.trainer.resourcesPerNode.limits" in findings[0].message


def _dp_image_ds(name: str, command: list[str] | None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}
    if command is not None:
        container["command"] = command
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


def test_gfd_and_mps_control_daemonsets_are_not_the_device_plugin() -> None:
    """The k8s-device-plugin image also runs GFD and the MPS control daemon."""
    findings = audit(
        [
            _dp_image_ds("plugin", None),
            _dp_image_ds("gfd", ["/usr/bin/gpu-feature-discovery"]),
            _dp_image_ds("mps", ["mps-control-daemon"]),
        ]
    )
    assert sorted((f.rule, obj(f).name) for f in findings) == [
        ("gpu.device-plugin-daemonset", "plugin"),
        ("gpu.mps-sharing", "mps"),
    ]


def test_mps_sharing_config_gets_a_finding() -> None:
    config = "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dp"}, "data": {"mps-10": config}}
    (f,) = audit([cm])
    assert f.rule == "gpu.mps-sharing"
    assert "nvidia.com/gpu x10" in f.message
    assert "MPS" in f.fix


_RCT_TOLERATIONS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          tolerations:
          - {key: k, operator: Exists}
"""


@pytest.mark.parametrize(
    ("target", "expected"), [("1.34", []), ("1.35", ["dra.field-dropped-at-target"]), ("1.36", [])]
)
def test_claim_fields_the_target_drops(target: str, expected: list[str]) -> None:
    """Request tolerations need DRADeviceTaints (off by default before 1.36): dropped silently at 1.35; the 1.34
    apiserver keeps (and validates) them with the gate off (data/dropped-fields.yaml)."""
    findings = audit(_RCT_TOLERATIONS, target=target)
    assert rules_of(findings) == expected
    if expected:
        assert "exactly.tolerations" in findings[0].message
        assert "DRADeviceTaints" in findings[0].fix


def test_pod_group_annotation_has_no_effect_from_136() -> None:
    p = pod({}, {"scheduling.k8s.io/pod-group": "g"})
    assert rules_of(audit([p], target="1.36")) == ["scheduling.pod-group-annotation"]
    assert rules_of(audit([p], target="1.35")) == []
