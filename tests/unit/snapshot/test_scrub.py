"""The scrubber: nothing sensitive survives, and what kubedra needs does."""

from __future__ import annotations

import json

import yaml

from kubedra.snapshot.scrub import scrub


def _pod(env: list[dict], args: list[str] | None = None, annotations: dict | None = None) -> dict:
    c = {"name": "c", "image": "cuda:12", "env": env, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    if args is not None:
        c["args"] = args
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml", "annotations": annotations or {}, "managedFields": [{}]},
        "spec": {"containers": [c]},
    }


def test_secrets_are_never_captured() -> None:
    assert (
        scrub({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "djE="}})
        is None
    )


def test_env_values_dropped_except_gpu_variables() -> None:
    pod = _pod(
        [
            {"name": "DB_PASSWORD", "value": "hunter2"},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
            {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ]
    )
    out = scrub(pod)
    assert out is not None
    env = out["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "DB_PASSWORD"}
    assert env[1] == {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}
    assert env[2]["valueFrom"]["secretKeyRef"]["name"] == "s"
    assert "hunter2" not in json.dumps(out)
    # the input is not modified
    assert pod["spec"]["containers"][0]["env"][0]["value"] == "hunter2"


def test_flags_with_secrets_lose_their_value() -> None:
    out = scrub(_pod([], ["--token=abc123", "--api-key", "zzz", "--proxy-mode=ipvs", "--v=2"]))
    assert out is not None
    args = out["spec"]["containers"][0]["args"]
    assert args == ["--token=(scrubbed)", "--api-key", "(scrubbed)", "--proxy-mode=ipvs", "--v=2"]


def test_annotations_and_managed_fields() -> None:
    ann = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"secret":"x"}',
        "example.com/auth-token": "t0k3n",
        "gpu-fraction": "0.5",
    }
    out = scrub(_pod([], annotations=ann))
    assert out is not None
    assert out["metadata"]["annotations"] == {"gpu-fraction": "0.5"}
    assert "managedFields" not in out["metadata"]


def test_template_metadata_is_scrubbed_too() -> None:
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ml"},
        "spec": {
            "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
                "spec": {"containers": [{"name": "c", "env": [{"name": "X", "value": "y"}]}]},
            }
        },
    }
    out = scrub(dep)
    assert out is not None
    tmpl = out["spec"]["template"]
    assert "annotations" not in tmpl["metadata"]
    assert tmpl["spec"]["containers"][0]["env"] == [{"name": "X"}]


def test_sensitive_keys_anywhere() -> None:
    wh = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "w"},
        "webhooks": [{"name": "a.b", "clientConfig": {"caBundle": "LS0tLS1CRUdJTi...", "url": "https://x"}}],
    }
    out = scrub(wh)
    assert out is not None
    assert out["webhooks"][0]["clientConfig"] == {"caBundle": "(scrubbed)", "url": "https://x"}


def _cm(name: str, ns: str, data: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": data,
    }


def test_kube_proxy_configmap_keeps_only_the_mode() -> None:
    text = yaml.safe_dump(
        {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "mode": "ipvs",
            "clientConnection": {"kubeconfig": "/var/lib/kube-proxy/kubeconfig.conf"},
            "clusterCIDR": "10.0.0.0/8",
        }
    )
    out = scrub(
        _cm("kube-proxy", "kube-system", {"config.conf": text, "kubeconfig.conf": "apiVersion: v1\n"})
    )
    assert out is not None
    assert list(out["data"]) == ["config.conf"]
    assert yaml.safe_load(out["data"]["config.conf"]) == {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "ipvs",
    }


def test_device_plugin_sharing_config_is_kept_reduced() -> None:
    cfg = {
        "version": "v1",
        "flags": {"migStrategy": "mixed", "plugin": {"deviceListStrategy": "envvar"}},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    }
    out = scrub(_cm("time-slicing-config", "gpu-operator", {"a100": yaml.safe_dump(cfg), "other": "x: 1"}))
    assert out is not None
    assert yaml.safe_load(out["data"]["a100"]) == {
        "version": "v1",
        "flags": {"migStrategy": "mixed"},
        "sharing": cfg["sharing"],
    }
    assert "other" not in out["data"]


def test_other_configmaps_are_not_captured() -> None:
    assert scrub(_cm("app-settings", "ml", {"DATABASE_URL": "postgres://u:p@db/x"})) is None
    # coredns: metadata only
    out = scrub(_cm("coredns", "kube-system", {"Corefile": ".:53 { forward . 10.1.2.3 }"}))
    assert out is not None
    assert "data" not in out


def test_text_scrubbing_keeps_what_kubedra_reads() -> None:
    args = [
        "--feature-gates=DynamicResourceAllocation=true,DRADeviceTaints=false",
        "--kubeconfig=/etc/kubernetes/kubelet.conf",
        "--proxy-mode=ipvs",
        "--api_key=abc123",
        "--token",
        "tok456",
    ]
    pod = _pod([], args)
    pod["spec"]["containers"][0]["image"] = "registry.local:5000/nvidia/k8s-device-plugin:v0.17.0"
    pod["spec"]["containers"][0]["command"] = [
        "sh",
        "-c",
        "export HF_TOKEN=hf_xyz; curl -H 'Authorization: Bearer eyJ0' https://u:p4ss@h/x",
    ]
    pod["spec"]["containers"][0]["readinessProbe"] = {
        "httpGet": {
            "path": "/",
            "port": 80,
            "httpHeaders": [
                {"name": "Authorization", "value": "Basic dXNlcg=="},
                {"name": "X-Trace", "value": "1"},
            ],
        }
    }
    out = scrub(pod)
    assert out is not None
    c = out["spec"]["containers"][0]
    assert c["args"] == [*args[:3], "--api_key=(scrubbed)", "--token", "(scrubbed)"]
    assert c["image"] == "registry.local:5000/nvidia/k8s-device-plugin:v0.17.0"
    assert (
        c["command"][2]
        == "export HF_TOKEN=(scrubbed); curl -H 'Authorization: (scrubbed)' https://(scrubbed)@h/x"
    )
    assert c["readinessProbe"]["httpGet"]["httpHeaders"] == [
        {"name": "Authorization", "value": "(scrubbed)"},
        {"name": "X-Trace", "value": "1"},
    ]
