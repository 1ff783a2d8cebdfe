"""Which pods of a snapshot use a GPU, with the release whose reading of a GPU request verify uses (the baseline
check compares them across snapshots)."""

from __future__ import annotations

from typing import Any

from kubedra.k8s import versions
from kubedra.model.snapshot import Snapshot
from kubedra.vendors.gpurequest import asks_for_a_gpu


def meta(o: dict[str, Any]) -> dict[str, Any]:
    m = o.get("metadata")
    return m if isinstance(m, dict) else {}


def ref(o: dict[str, Any]) -> str:
    m = meta(o)
    ns = f"{m['namespace']}/" if m.get("namespace") else ""
    return f"{o.get('kind', '')} {ns}{m.get('name', '')}"


def reading_release(state: Snapshot, release: str | None) -> tuple[str, str | None]:
    """(the release whose reading of a GPU request verify uses, what it says when it assumes one): the
    ``--target-version``, else the cluster's own (the snapshot's server version), else kubedra's default target.
    That assumption is said where it matters, where a pod's request is a different count per release
    (:func:`kubedra.vendors.gpurequest.device_count`: past int64, ``1e20`` is no GPU at 1.36/1.37)."""
    if release is not None:
        return release, None
    own = state.header.server_version
    if versions.Version.maybe(own):
        return own, None
    assumed = versions.DEFAULT_TARGET
    depends = [
        ref(p)
        for p in state.kind("Pod")
        if any(uses_gpu(p, r) != uses_gpu(p, assumed) for r in versions.testbed())
    ]
    if not depends:
        return assumed, None
    return assumed, (
        f"the snapshot names no Kubernetes version ({own or 'none'}), and whether {depends[0]}"
        f"{f' (and {len(depends) - 1} more)' if len(depends) > 1 else ''} asks for a GPU depends on the release: "
        f"read as {assumed} reads it (--target-version picks another)"
    )


def uses_gpu(pod: dict[str, Any], release: str) -> bool:
    """DRA claims, or a container asking for a device-plugin GPU as ``release`` reads it (``nvidia.com/gpu: "0"``
    is none, and ``1e20`` at 1.36/1.37)."""
    spec = pod.get("spec") or {}
    if spec.get("resourceClaims"):
        return True
    containers = spec.get("containers")
    listed = containers if isinstance(containers, list) else []  # an edited snapshot: null, a string...
    return any(asks_for_a_gpu(c.get("resources"), release) for c in listed if isinstance(c, dict))
