"""Whether a Kubernetes release serves an object's API version at all, from the API lifecycle data
(``data/deprecations/``, :mod:`kubedra.model.lifecycle`): the first thing the apiserver refuses, before any
schema. validate reports it as an error; simulate does not create the pods of such a workload."""

from __future__ import annotations

from functools import lru_cache

from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import api_group
from kubedra.model.lifecycle import DeprecationDB


@lru_cache(maxsize=1)
def lifecycle_db() -> DeprecationDB:
    return DeprecationDB.load()


def not_served(api: str, kind: str, minor: int) -> str | None:
    """Why the apiserver of 1.``minor`` has no such resource (removed, not yet served, never existed), with the
    version that removed it and what replaces it; None when the lifecycle data has nothing against it."""
    db = lifecycle_db()
    at = Version(1, minor)
    entry = db.lookup(api, kind)
    if entry is None:
        if not db.never_served(api, kind):
            return None
        best = db.best_version(api_group(api), kind, at)
        use = f"; use {best.api_version} {kind}" if best else ""
        return f"{api} {kind}: no Kubernetes release serves this version{use}"
    if entry.served(at):
        return None
    if not entry.is_introduced(at):
        best = db.best_version(entry.group, kind, at)
        use = f"; use {best.api_version} {kind}" if best else ""
        return f"{api} {kind} is first served in {entry.introduced}, after 1.{minor}{use}"
    repl_api, repl_kind = db.replacement(entry, at)
    if repl_api is None:
        use = "; nothing replaces it (remove the object or its feature)"
    else:
        convert = ", which `kubedra migrate` converts" if entry.convertible == "kubedra-migrate" else ""
        use = f"; use {repl_api} {repl_kind}{convert}"
    if entry.classic_dra:
        use += " (classic DRA: no mechanical conversion, redesign the claim)"
    return f"{api} {kind} is not served by Kubernetes 1.{minor}: removed in {entry.removed}{use}"
