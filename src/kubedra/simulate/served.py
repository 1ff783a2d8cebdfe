"""Workloads at an API version the target release no longer serves (``extensions/v1beta1`` DaemonSets and
Deployments, ``apps/v1beta2``...): the apiserver refuses them, so no controller ever creates their pods.

Without this they were silently left out (kubedra does not read pod templates at versions it does not serve),
and ``simulate`` said "0 pods simulated" with exit 0 on a file that cannot be applied at all."""

from __future__ import annotations

from collections.abc import Iterable

from kubedra.errors import Location
from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import pod_templates
from kubedra.model.served import lifecycle_db, not_served
from kubedra.scheduler.skipped import Skipped
from kubedra.sources.files import Document


def unserved_workloads(documents: Iterable[Document], target_version: str) -> list[Skipped]:
    """A refused :class:`Skipped` for each workload whose apiVersion ``target_version`` does not serve."""
    minor = Version.parse(target_version).minor
    db = lifecycle_db()
    out = []
    for d in documents:
        why = not_served(d.api_version, d.kind, minor)
        if why is None:
            continue
        entry = db.lookup(d.api_version, d.kind)
        best = db.replacement(entry, Version(1, minor))[0] if entry is not None else None
        if best is None or pod_templates({**d.obj, "apiVersion": best}) is None:
            continue  # not a workload (an Ingress, a classic DRA claim: reported elsewhere)
        out.append(
            Skipped(
                Location(d.file, d.line_of(["apiVersion"])),
                d.describe(),
                f"the apiserver refuses it: {why}; its pods are never created",
                refused=True,
            )
        )
    return out
