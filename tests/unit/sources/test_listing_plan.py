"""Which resource types a live read lists (kubedra.sources.cluster.listing_plan): a wanted resource the group's
preferred version does not serve is found at another served version. Before 1.37 resource.k8s.io/v1 is preferred
and DeviceTaintRule is served only at v1beta2 or v1alpha3 (with --runtime-config): snapshot, verify and audit
--cluster listed only the preferred version and never saw the rules, and said nothing."""

from __future__ import annotations

from typing import Any, cast

from kubedra.sources import cluster as cs

# kube-apiserver 1.36 with resource.k8s.io/v1beta2 and v1alpha3 enabled: discovery documents
DOCS: dict[str, Any] = {
    "/api": {"versions": ["v1"]},
    "/apis": {
        "groups": [
            {
                "name": "resource.k8s.io",
                "versions": [{"version": "v1"}, {"version": "v1beta2"}, {"version": "v1alpha3"}],
                "preferredVersion": {"version": "v1"},
            }
        ]
    },
    "/api/v1": {"resources": [{"name": "nodes", "kind": "Node", "verbs": ["get", "list"]}]},
    "/apis/resource.k8s.io/v1": {
        "resources": [{"name": "resourceslices", "kind": "ResourceSlice", "verbs": ["list"]}]
    },
    "/apis/resource.k8s.io/v1beta2": {
        "resources": [
            {"name": "resourceslices", "kind": "ResourceSlice", "verbs": ["list"]},
            {"name": "devicetaintrules", "kind": "DeviceTaintRule", "verbs": ["list"]},
        ]
    },
    "/apis/resource.k8s.io/v1alpha3": {
        "resources": [{"name": "devicetaintrules", "kind": "DeviceTaintRule", "verbs": ["list"]}]
    },
}


class Stub:
    def __init__(self, docs: dict[str, Any]) -> None:
        self.docs = docs
        self.asked: list[str] = []

    def get_json(self, path: str) -> Any:
        self.asked.append(path)
        return self.docs[path]


def _plan(docs: dict[str, Any], wanted: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    stub = Stub(docs)
    client = cast(cs.Client, stub)
    recorded: list[tuple[str, str]] = []
    plan = cs.listing_plan(client, cs.discover(client), wanted, [], lambda r, why: recorded.append((r, why)))
    assert recorded == []
    return [f"{rt.group_version} {rt.resource}" for rt in plan], stub.asked


def test_a_resource_missing_at_the_preferred_version_is_listed_at_the_next_served_one() -> None:
    plan, _ = _plan(
        DOCS, [("", "nodes"), ("resource.k8s.io", "resourceslices"), ("resource.k8s.io", "devicetaintrules")]
    )
    assert (
        plan
        == [
            "v1 nodes",
            "resource.k8s.io/v1 resourceslices",  # the preferred version only, never twice
            "resource.k8s.io/v1beta2 devicetaintrules",  # the server's order of preference: v1beta2 before v1alpha3
        ]
    )


def test_nothing_more_is_asked_when_the_preferred_version_has_it_all() -> None:
    plan, asked = _plan(DOCS, [("resource.k8s.io", "resourceslices")])
    assert plan == ["resource.k8s.io/v1 resourceslices"]
    assert asked == ["/api", "/apis", "/apis/resource.k8s.io/v1"]
