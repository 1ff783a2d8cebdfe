"""The shipped ClusterRoles: the core role grants exactly what the live verbs read (audit, snapshot, verify,
plan), read-only and without Secrets; the Helm-release Secrets read is a second, opt-in role."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubedra.audit.model import load_data
from kubedra.k8s import clusterreads

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
CORE_FILE = DEPLOY / "kubedra-clusterrole.yaml"
HELM_FILE = DEPLOY / "kubedra-helm-releases-clusterrole.yaml"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _roles(path: Path) -> dict[str, list[dict]]:
    return {d["metadata"]["name"]: d["rules"] for d in _docs(path) if d["kind"] == "ClusterRole"}


def _allows(rules: list[dict], group: str, resource: str, verb: str = "list") -> bool:
    return any(
        (group in r.get("apiGroups", []) or "*" in r.get("apiGroups", []))
        and (resource in r.get("resources", []) or "*" in r.get("resources", []))
        and verb in r.get("verbs", [])
        for r in rules
    )


def test_core_role_covers_every_resource_the_verbs_read() -> None:
    rules = _roles(CORE_FILE)["kubedra"]
    for group, resource in {*clusterreads.resources("audit"), *clusterreads.resources("snapshot")}:
        assert _allows(rules, group, resource), (group, resource)
    # the ones the first role lacked (issue: events, admission policies and bindings, priority classes)
    for group, resource in (
        ("", "events"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicies"),
        ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"),
        ("scheduling.k8s.io", "priorityclasses"),
    ):
        assert _allows(rules, group, resource), (group, resource)
    for group in load_data("cluster-features.yaml")["gpuOperatorGroups"]:
        assert _allows(rules, group, "anything"), group
    urls = {u for r in rules for u in r.get("nonResourceURLs", [])}
    assert {"/metrics", "/version", "/api", "/apis", "/api/*", "/apis/*"} <= urls


def test_roles_are_read_only_and_secrets_are_opt_in() -> None:
    core = _roles(CORE_FILE)
    helm = _roles(HELM_FILE)
    assert set(core) == {"kubedra"}
    assert set(helm) == {"kubedra-helm-releases"}
    for rules in (*core.values(), *helm.values()):
        for r in rules:
            assert set(r["verbs"]) <= {"get", "list"}
    # the default role has no secrets at all, not even through a wildcard
    assert not any("secrets" in r.get("resources", []) for r in core["kubedra"])
    assert not _allows(core["kubedra"], "", "secrets")
    assert not _allows(core["kubedra"], "", "secrets", "get")
    assert _allows(helm["kubedra-helm-releases"], "", "secrets")
    # the default file binds only the core role; the Helm-release binding lives in the opt-in file
    bindings = {d["roleRef"]["name"] for d in _docs(CORE_FILE) if d["kind"] == "ClusterRoleBinding"}
    assert bindings == {"kubedra"}
    (helm_binding,) = [d for d in _docs(HELM_FILE) if d["kind"] == "ClusterRoleBinding"]
    assert helm_binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubedra", "namespace": "kubedra"}]
