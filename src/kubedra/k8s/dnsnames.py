"""The apiserver's name checks (k8s.io/apimachinery pkg/util/validation IsDNS1123Label, IsDNS1123Subdomain):
each returns why a value is not such a name, or None."""

from __future__ import annotations

import re
from typing import Any

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def dns_label(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "must be a non-empty DNS label"
    if len(v) > 63:
        return f"must be no more than 63 characters (DNS label), got {len(v)}"
    if not _DNS_LABEL.match(v):
        return (
            f"{v!r} is not a DNS label (lower-case alphanumerics and '-', starting and ending alphanumeric)"
        )
    return None


def dns_subdomain(v: Any) -> str | None:
    if not isinstance(v, str) or not v:
        return "must be a non-empty DNS subdomain"
    if len(v) > 253:
        return f"must be no more than 253 characters, got {len(v)}"
    if not _DNS_SUBDOMAIN.match(v):
        return f"{v!r} is not a DNS subdomain (lower-case alphanumerics, '-' and '.')"
    return None


def as_dns_label(text: str, limit: int = 63) -> str:
    """``text`` made a DNS label (for names kubedra writes): lower case, runs of other characters as one ``-``,
    at most ``limit`` characters; ``x`` when nothing is left."""
    s = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    s = re.sub(r"-{2,}", "-", s)[:limit].strip("-")
    return s or "x"
