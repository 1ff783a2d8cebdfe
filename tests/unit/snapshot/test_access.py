"""What makes a live result incomplete (kubedra.sources.access): each refused or failed read, named by
resource, verb and namespace, unless accepted with --allow-missing."""

from __future__ import annotations

from kubedra.sources.access import HELM_SECRETS, METRICS, Unread, allowed, cause, from_header, missing


def test_causes() -> None:
    assert cause("HTTP 403: pods is forbidden") == "forbidden"
    assert cause("HTTP 401: Unauthorized") == "unauthorised"
    assert cause("HTTP 404") == "not served"
    assert cause("HTTP 503: service unavailable") == "not served"
    assert cause("read timed out") == "failed"


def test_records_name_resource_verb_and_namespace() -> None:
    pods = Unread.of("pods", "HTTP 403: x")
    assert pods.to_dict() == {
        "resource": "pods",
        "verb": "list",
        "namespace": None,
        "cause": "forbidden",
        "reason": "HTTP 403: x",
    }
    assert pods.describe() == "list pods (cluster-wide): forbidden (HTTP 403: x)"
    assert Unread.of(METRICS, "HTTP 403").verb == "get"
    assert Unread.of("discovery of apps/v1", "HTTP 503").verb == "get"
    # snapshot headers written before verb/namespace were recorded still read back
    assert from_header([{"resource": "events", "reason": "HTTP 401"}, "junk"]) == [  # type: ignore[list-item]  # junk on purpose
        Unread("events", "HTTP 401")
    ]
    assert (
        Unread.from_dict({"resource": "pods", "reason": "r", "verb": "list", "namespace": "ml"}).namespace
        == "ml"
    )


def test_allow_missing_matches_names_aliases_and_wildcards() -> None:
    deploy = Unread.of("deployments.apps", "HTTP 403")
    helm = Unread.of(HELM_SECRETS, "HTTP 403")
    metrics = Unread.of(METRICS, "HTTP 403")
    assert allowed(deploy, ["deployments"])
    assert allowed(deploy, ["deployments.apps"])
    assert allowed(deploy, ["*.apps"])
    assert not allowed(deploy, ["pods", "daemonsets.apps"])
    assert allowed(helm, ["secrets"])
    assert allowed(metrics, ["metrics"])
    assert allowed(metrics, ["/metrics"])
    assert missing([deploy, helm, metrics], ["secrets"]) == [deploy, metrics]
    assert missing([deploy, helm, metrics], ["*"]) == []
