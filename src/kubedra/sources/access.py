"""What a live read could not see, and whether that leaves a result incomplete.

Every list/get a verb sends that is forbidden (403), unauthorised (401), not served (404, 503: an aggregated
API that is down) or fails on the wire is recorded as an :class:`Unread` (resource, verb, namespace, reason).
A result with an unread resource is *incomplete*: the verbs print what they could not read on stderr, put
it in their JSON output and exit 2, unless the user accepted that resource with ``--allow-missing``.
Incomplete is never clean.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Display names of the reads that are not a plain resource list (kept stable: they appear in snapshot headers).
HELM_SECRETS = "secrets (Helm 3 releases)"
METRICS = "kube-apiserver /metrics"
DISCOVERY_PREFIX = "discovery of "

# Aliases accepted by --allow-missing for those reads.
_ALIASES = {HELM_SECRETS: ("secrets", "helm-releases"), METRICS: ("metrics", "/metrics")}


def cause(reason: str) -> str:
    """``forbidden``, ``unauthorised``, ``not served`` or ``failed`` for a recorded reason."""
    if reason.startswith("HTTP 403"):
        return "forbidden"
    if reason.startswith("HTTP 401"):
        return "unauthorised"
    if reason.startswith(("HTTP 404", "HTTP 503")):
        return "not served"
    return "failed"


@dataclass(frozen=True)
class Unread:
    """One read that did not happen. ``namespace`` None: a cluster-wide read (every namespace)."""

    resource: str
    reason: str
    verb: str = "list"
    namespace: str | None = None

    @staticmethod
    def of(resource: str, reason: str) -> Unread:
        """The record for ``resource`` as kubedra names it (its lists are cluster-wide; discovery documents
        and /metrics are GETs of non-resource URLs)."""
        verb = "get" if resource == METRICS or resource.startswith(DISCOVERY_PREFIX) else "list"
        return Unread(resource=resource, reason=reason, verb=verb)

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Unread:
        base = Unread.of(str(d.get("resource", "")), str(d.get("reason", "")))
        ns = d.get("namespace")
        return Unread(base.resource, base.reason, str(d.get("verb") or base.verb), str(ns) if ns else None)

    @property
    def cause(self) -> str:
        return cause(self.reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "verb": self.verb,
            "namespace": self.namespace,
            "cause": self.cause,
            "reason": self.reason,
        }

    def describe(self) -> str:
        where = f"in namespace {self.namespace}" if self.namespace else "cluster-wide"
        return f"{self.verb} {self.resource} ({where}): {self.cause} ({self.reason})"

    def names(self) -> tuple[str, ...]:
        """What ``--allow-missing`` may call this read: its display name, the bare resource (``deployments``
        for ``deployments.apps``) and the aliases of the special reads."""
        if self.resource in _ALIASES:
            return (self.resource, *_ALIASES[self.resource])
        if self.resource.startswith(DISCOVERY_PREFIX):
            return (self.resource, self.resource[len(DISCOVERY_PREFIX) :])
        return (self.resource, self.resource.split(".", 1)[0])


def allowed(u: Unread, allow: Iterable[str]) -> bool:
    """Whether the user accepted ``u`` as missing (``--allow-missing NAME``; shell wildcards, ``*`` for all)."""
    names = u.names()
    return any(fnmatch.fnmatchcase(n, pattern) for pattern in allow for n in names)


def missing(unread: Iterable[Unread], allow: Sequence[str] = ()) -> list[Unread]:
    """The reads that make a result incomplete: every unread one the user did not accept."""
    return [u for u in unread if not allowed(u, allow)]


def from_header(rows: Iterable[dict[str, Any]]) -> list[Unread]:
    """The records of a snapshot header's ``notInspected`` list."""
    return [Unread.from_dict(r) for r in rows if isinstance(r, dict)]
