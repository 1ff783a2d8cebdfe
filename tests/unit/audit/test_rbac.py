"""The shipped ClusterRole grants exactly what the live audit reads (and nothing that writes)."""

from __future__ import annotations

from pathlib import Path

import yaml

from kubedra.audit.model import load_data
from kubedra.sources import cluster

ROLE_FILE = Path(__file__).resolve().parents[3] / "deploy" / "kubedra-audit-clusterrole.yaml"


def _roles() -> dict[str, list[dict]]:
    docs = [d for d in yaml.safe_load_all(ROLE_FILE.read_text()) if d]
    return {d["metadata"]["name"]: d["rules"] for d in docs if d["kind"] == "ClusterRole"}


def _allows(rules: list[dict], group: str, resource: str, verb: str = "list") -> bool:
    return any(
        (group in r.get("apiGroups", []) or "*" in r.get("apiGroups", []))
        and (resource in r.get("resources", []) or "*" in r.get("resources", []))
        and verb in r.get("verbs", [])
        for r in rules
    )


def test_role_covers_every_listed_resource() -> None:
    rules = _roles()["kubedra-audit"]
    for group, resource in cluster.BUILTIN_RESOURCES:
        assert _allows(rules, group, resource), (group, resource)
    for group in load_data("cluster-features.yaml")["gpuOperatorGroups"]:
        assert _allows(rules, group, "anything"), group
    urls = {u for r in rules for u in r.get("nonResourceURLs", [])}
    assert {"/metrics", "/version", "/api", "/apis"} <= urls


def test_roles_are_read_only_and_secrets_are_separate() -> None:
    roles = _roles()
    for rules in roles.values():
        for r in rules:
            assert set(r["verbs"]) <= {"get", "list"}
    assert not _allows(roles["kubedra-audit"], "", "secrets")
    assert _allows(roles["kubedra-audit-helm-releases"], "", "secrets")
