"""Cluster configuration the upgrade depends on: DNS, kube-proxy mode, kernels, cgroups, feature gates, skew."""

from __future__ import annotations

import re
from typing import Any

import yaml

from kubedra.audit.model import Item, load_data
from kubedra.audit.scope import Context, Scope, check
from kubedra.k8s.featuregates import gate_histories, merged_into, parse_feature_metrics, removed_between
from kubedra.k8s.findings import ObjectRef
from kubedra.k8s.versions import Version

SYSTEM = "kube-system"


def _features() -> dict[str, Any]:
    data: dict[str, Any] = load_data("cluster-features.yaml")
    return data


def _in_system(item: Item) -> bool:
    return (item.namespace or "") == SYSTEM


@check("cluster.kube-dns")
def kube_dns(ctx: Context, scope: Scope) -> None:
    data = _features()["kubeDns"]
    deprecated = Version.parse(data["deprecated"])
    for item in scope.kind("Deployment"):
        if item.name != "kube-dns" or not _in_system(item):
            continue
        images = [
            str(c.get("image") or "")
            for at in item.pod_specs
            for c in at.spec.get("containers") or []
            if isinstance(c, dict)
        ]
        if images and all("coredns" in i for i in images):
            continue  # CoreDNS deployed under the historic name
        state = "deprecated" if ctx.target >= deprecated else f"deprecated from {deprecated}"
        ctx.emit(
            "cluster.kube-dns",
            item,
            f"kube-dns ({', '.join(images) or 'no image'}) is {state} (target {ctx.target})",
            deprecated=deprecated,
        )


def _kube_proxy_mode(item: Item) -> tuple[str, tuple[str | int, ...]] | None:
    if item.kind == "ConfigMap":
        data = item.obj.get("data")
        if not isinstance(data, dict):
            return None
        for key, text in data.items():
            if not isinstance(text, str) or "mode" not in text:
                continue
            try:
                cfg = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if (
                isinstance(cfg, dict)
                and str(cfg.get("kind", "KubeProxyConfiguration")) == "KubeProxyConfiguration"
            ):
                mode = cfg.get("mode")
                if mode:
                    return str(mode), ("data", key)
        return None
    for at in item.pod_specs:
        for i, c in enumerate(at.spec.get("containers") or []):
            if not isinstance(c, dict):
                continue
            args = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
            for j, a in enumerate(args):
                m = re.match(r"--proxy-mode(?:=(\S+))?$", a)
                if m:
                    mode = m.group(1) or (args[j + 1] if j + 1 < len(args) else "")
                    return mode, (*at.path, "containers", i)
    return None


def ipvs_sources(scope: Scope) -> list[tuple[Item, tuple[str | int, ...]]]:
    out = []
    for item in scope.kind("ConfigMap", "DaemonSet"):
        if "kube-proxy" not in item.name:
            continue
        hit = _kube_proxy_mode(item)
        if hit and hit[0].lower() == "ipvs":
            out.append((item, hit[1]))
    return out


@check("cluster.kube-proxy-ipvs")
def kube_proxy_ipvs(ctx: Context, scope: Scope) -> None:
    data = _features()["kubeProxyIPVS"]
    disabled, removed = Version.parse(data["disabledByDefault"]), Version.parse(data["removed"])
    for item, path in ipvs_sources(scope):
        if ctx.target >= removed:
            state, severity = f"removed in {removed}", "error"
        elif ctx.target >= disabled:
            state, severity = f"disabled by default from {disabled} (gate {data['gate']})", "error"
        else:
            state, severity = f"deprecated since {data['deprecated']}", None
        ctx.emit(
            "cluster.kube-proxy-ipvs",
            item,
            f"kube-proxy runs in IPVS mode, {state} (target {ctx.target})",
            path=path,
            severity=severity,
            disabled=disabled,
            removed=removed,
        )


def _kernel(version: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


@check("cluster.nftables-kernel")
def nftables_kernel(ctx: Context, scope: Scope) -> None:
    if not ipvs_sources(scope):
        return
    minimum = _kernel(str(_features()["nftablesMinKernel"]))
    assert minimum is not None
    for node in scope.kind("Node"):
        info = node.status.get("nodeInfo")
        kernel = str(info.get("kernelVersion") or "") if isinstance(info, dict) else ""
        k = _kernel(kernel)
        if k is not None and k < minimum:
            ctx.emit(
                "cluster.nftables-kernel",
                node,
                f"kernel {kernel} is older than {minimum[0]}.{minimum[1]}, which kube-proxy nftables mode needs",
                path=("status", "nodeInfo", "kernelVersion"),
                node=node.name,
                kernel=kernel,
            )


@check("cluster.cgroup-v1")
def cgroup_v1(ctx: Context, scope: Scope) -> None:
    for item in scope.kind("ConfigMap"):
        if not item.name.startswith("kubelet-config") or not _in_system(item):
            continue
        data = item.obj.get("data")
        for key, text in (data or {}).items() if isinstance(data, dict) else ():
            if not isinstance(text, str) or "failCgroupV1" not in text:
                continue
            try:
                cfg = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(cfg, dict) and cfg.get("failCgroupV1") is False:
                ctx.emit(
                    "cluster.cgroup-v1",
                    item,
                    f"kubelet configuration {key!r} sets failCgroupV1: false, so kubelets keep running on cgroup v1 hosts",
                    path=("data", key),
                )


def _gate_at(spec: dict[str, str], v: Version) -> str | None:
    """'stage:default[:locked]' at version v; nearest earlier release if v is past the table; None if unknown."""
    known = sorted((Version.parse(k), val) for k, val in spec.items())
    if not known or v < known[0][0]:
        return None
    best = None
    for ver, val in known:
        if ver <= v:
            best = val
    return best


@check("cluster.feature-gate")
def feature_gates(ctx: Context, scope: Scope) -> None:
    facts = scope.facts
    if facts is None or not facts.metrics:
        return
    gates = parse_feature_metrics(facts.metrics)
    if not gates:
        return
    merged = merged_into()
    now_version = facts.server_version or ctx.current
    for name, spec in sorted(gate_histories().items()):
        if name not in gates:
            continue
        enabled, stage = gates[name]
        at_target = _gate_at(spec, ctx.target)
        if at_target is None:
            continue
        parts = at_target.split(":")
        now_default_on = False
        if now_version is not None:
            now_spec = _gate_at(spec, now_version)
            now_default_on = bool(now_spec and now_spec.split(":")[1:2] == ["on"])
        msg: str | None = None
        severity = "warning"
        fix = ""
        if parts[0] == "absent":
            if not enabled:
                continue
            if name in merged:
                msg = f"{name} is enabled; at {ctx.target} it no longer exists (merged into {merged[name]})"
                fix = f"Enable {merged[name]} instead and drop {name} from --feature-gates before upgrading."
            else:
                msg = f"{name} is enabled; it does not exist at {ctx.target}"
                severity = "error"
                fix = f"Remove {name} from --feature-gates (unknown gates stop components from starting) and stop using its API."
        elif parts[1] == "on" and not enabled:
            locked = len(parts) > 2 and parts[2] == "locked"
            msg = f"{name} is disabled ({stage.lower() or 'unknown stage'}); at {ctx.target} it is {parts[0].upper()}, on by default{' and locked' if locked else ''}"
            severity = "warning" if locked else "info"
            fix = (
                f"Remove {name}=false from every component's --feature-gates: a locked gate cannot be turned off at {ctx.target}."
                if locked
                else f"{name} turns on at {ctx.target} unless you keep {name}=false; decide before the upgrade."
            )
        elif parts[1] == "off" and enabled and now_default_on:
            msg = f"{name} is on by default now; at {ctx.target} it is {parts[0].upper()} and off by default"
            fix = f"Set --feature-gates={name}=true explicitly on apiserver, scheduler, controller-manager and kubelets if you rely on it."
        if msg:
            ctx.emit(
                "cluster.feature-gate",
                None,
                msg,
                severity=severity,
                source=scope.location(),
                obj=ObjectRef("", "FeatureGate", None, name),
                gate_fix=fix,
            )


@check("cluster.kubelet-skew")
def kubelet_skew(ctx: Context, scope: Scope) -> None:
    skew = int(_features().get("kubeletMaxSkew", 3))
    facts = scope.facts
    apiserver = facts.server_version if facts else None
    minimum = Version(ctx.target.major, max(0, ctx.target.minor - skew))
    for node in scope.kind("Node"):
        info = node.status.get("nodeInfo")
        kubelet = Version.maybe(info.get("kubeletVersion")) if isinstance(info, dict) else None
        if kubelet is None:
            continue
        raw = str(info.get("kubeletVersion")) if isinstance(info, dict) else ""
        if apiserver is not None and kubelet > apiserver:
            msg = f"kubelet {raw} is newer than the apiserver {apiserver}"
        elif kubelet < minimum:
            msg = f"kubelet {raw} is more than {skew} minors older than the target {ctx.target}"
        else:
            continue
        ctx.emit(
            "cluster.kubelet-skew",
            node,
            msg,
            path=("status", "nodeInfo", "kubeletVersion"),
            node=node.name,
            kubelet=raw,
            minimum=minimum,
        )


@check("cluster.upgrade-path")
def upgrade_path(ctx: Context, scope: Scope) -> None:
    start = scope.facts.server_version if scope.facts else ctx.current
    if start is None:
        return
    steps = ctx.target.minor - start.minor
    if start.major != ctx.target.major or steps <= 1:
        return
    route = " -> ".join(str(Version(start.major, start.minor + i)) for i in range(steps + 1))
    ctx.emit(
        "cluster.upgrade-path",
        None,
        f"{'cluster runs' if scope.facts else 'current version'} {start}, target {ctx.target}: {steps} minor upgrades",
        source=scope.location(),
        route=route,
    )


_COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet")
_KUBEADM_ARGS = {
    "apiServer": "kube-apiserver",
    "controllerManager": "kube-controller-manager",
    "scheduler": "kube-scheduler",
}


def _flag_gates(words: list[Any]) -> str | None:
    """The value of ``--feature-gates`` in a command line, or None."""
    for i, word in enumerate(words):
        if not isinstance(word, str):
            continue
        if word.startswith("--feature-gates="):
            return word.split("=", 1)[1]
        if word == "--feature-gates" and i + 1 < len(words) and isinstance(words[i + 1], str):
            return str(words[i + 1])
    return None


def _parse_gates(text: str) -> list[str]:
    return [p.split("=", 1)[0].strip() for p in text.split(",") if "=" in p and p.split("=", 1)[0].strip()]


def _config_gates(cfg: dict[str, Any]) -> list[tuple[str, list[str], tuple[str | int, ...]]]:
    """(component, gate names, path) set by a kubeadm ClusterConfiguration or a KubeletConfiguration."""
    out: list[tuple[str, list[str], tuple[str | int, ...]]] = []
    if cfg.get("kind") == "KubeletConfiguration" and isinstance(cfg.get("featureGates"), dict):
        out.append(("kubelet", [str(k) for k in cfg["featureGates"]], ("featureGates",)))
    if cfg.get("kind") == "ClusterConfiguration":
        for key, component in _KUBEADM_ARGS.items():
            section = cfg.get(key)
            args = section.get("extraArgs") if isinstance(section, dict) else None
            value = None
            if isinstance(args, dict):  # kubeadm v1beta3
                value = args.get("feature-gates")
            elif isinstance(args, list):  # kubeadm v1beta4: [{name, value}]
                value = next(
                    (
                        a.get("value")
                        for a in args
                        if isinstance(a, dict) and a.get("name") == "feature-gates"
                    ),
                    None,
                )
            if isinstance(value, str):
                out.append((component, _parse_gates(value), (key, "extraArgs")))
    return out


def _gate_settings(scope: Scope) -> list[tuple[Item, str, list[str], tuple[str | int, ...]]]:
    found: list[tuple[Item, str, list[str], tuple[str | int, ...]]] = []
    for pod in scope.kind("Pod"):
        for at in pod.pod_specs:
            for i, c in enumerate(at.spec.get("containers") or []):
                if not isinstance(c, dict):
                    continue
                words = [*(c.get("command") or []), *(c.get("args") or [])]
                first = str(words[0]).rsplit("/", 1)[-1] if words else ""
                component = first if first in _COMPONENTS else str(c.get("name") or "")
                value = _flag_gates(words)
                if value is not None:
                    found.append((pod, component, _parse_gates(value), (*at.path, "containers", i)))
    for item in scope.kind("KubeletConfiguration", "ClusterConfiguration"):
        found += [(item, comp, gates, path) for comp, gates, path in _config_gates(item.obj)]
    for item in scope.kind("ConfigMap"):
        data = item.obj.get("data")
        for key, text in data.items() if isinstance(data, dict) else ():
            if not isinstance(text, str) or "Configuration" not in text:
                continue
            try:
                docs = list(yaml.safe_load_all(text))
            except yaml.YAMLError:
                continue
            for cfg in docs:
                if isinstance(cfg, dict):
                    found += [(item, comp, gates, ("data", key)) for comp, gates, _ in _config_gates(cfg)]
    return found


@check("cluster.removed-gate")
def removed_gates(ctx: Context, scope: Scope) -> None:
    """A component whose feature gates name a gate the target no longer registers does not start there
    ("unrecognized feature gate"; data/feature-gates.yaml ``removed``, generated from each release's source)."""
    settings = _gate_settings(scope)
    if not settings:
        return
    start = (scope.facts.server_version if scope.facts else None) or ctx.current
    removed = removed_between(start if start is not None else Version(1, 0), ctx.target)
    for item, component, gates, path in settings:
        for gate in gates:
            if gate not in removed:
                continue
            ctx.emit(
                "cluster.removed-gate",
                item,
                f"{component or 'a component'} sets feature gate {gate}, which Kubernetes {removed[gate]} removed: "
                f"at {ctx.target} it does not start (unrecognized feature gate)",
                path=path,
                gate=gate,
                component=component or "the component",
                removed=removed[gate],
            )
