"""NVIDIA DRA driver releases against a cluster: the preflight audit, plan and verify share
(data in ``data/nvidia-dra-driver.yaml``, with its sources)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from kubedra.k8s import datafiles

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("nvidia-dra-driver.yaml")
    return data


def normalise(version: str) -> str | None:
    """``25.12.0``, ``v25.12.0``, an image tag ``v25.12.0-ubi9`` → ``v25.12.0``; None when not a version."""
    m = _VERSION.search(version or "")
    return f"v{m.group(1)}.{m.group(2)}.{m.group(3)}" if m else None


def release(version: str) -> dict[str, Any] | None:
    v = normalise(version)
    return _data()["releases"].get(v) if v else None


def preflight(version: str, k8s_minor: int, gates: Iterable[str] = ()) -> list[str]:
    """Problems running driver ``version`` on Kubernetes 1.<k8s_minor> with driver ``gates`` on; an unknown
    release is itself a problem (kubedra cannot say)."""
    v = normalise(version)
    rel = release(version)
    if rel is None:
        known = ", ".join(_data()["releases"])
        return [
            f"NVIDIA DRA driver {version or '(unknown version)'} is not in kubedra's release table ({known}): "
            "check its Kubernetes and API support by hand"
        ]
    out: list[str] = []
    minimum = int(str(rel["minKubernetes"]).split(".")[1])
    if k8s_minor < minimum:
        out.append(f"NVIDIA DRA driver {v} needs Kubernetes {rel['minKubernetes']}+ (cluster: 1.{k8s_minor})")
    served = _data()["resourceAPIsServed"].get(f"1.{k8s_minor}", [])
    if served and not set(served) & set(rel["resourceAPIs"]):
        out.append(
            f"NVIDIA DRA driver {v} speaks resource.k8s.io {', '.join(rel['resourceAPIs'])}; Kubernetes 1.{k8s_minor} "
            f"serves {', '.join(served)} by default"
        )
    missing = [g for g in gates if g not in rel["featureGates"]]
    if missing:
        out.append(
            f"NVIDIA DRA driver {v} has no feature gate {', '.join(missing)} (it has: "
            f"{', '.join(rel['featureGates']) or 'none'})"
        )
    return out
