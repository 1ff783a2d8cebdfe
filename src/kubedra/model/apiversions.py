"""API version names (``v1beta2``) ranked and split; Kubernetes releases are :mod:`kubedra.k8s.versions`."""

from __future__ import annotations

import re

_STABILITY = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_rank(api_version: str) -> tuple[int, int, int]:
    """Sort key for a Kubernetes API version name: GA > beta > alpha, then by number (v1 > v1beta2 > v1alpha3)."""
    m = _STABILITY.match(api_version)
    if not m:
        return (-1, 0, 0)
    major, level, n = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    stability = {"alpha": 0, "beta": 1, None: 2}[level]
    return (stability, major, n)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> (``apps``, ``v1``); ``v1`` -> (``""``, ``v1``)."""
    if "/" in api_version:
        group, _, version = api_version.rpartition("/")
        return group, version
    return "", api_version
