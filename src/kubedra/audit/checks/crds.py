"""CustomResourceDefinitions: deprecated versions still served or stored, and operators that handle GPUs."""

from __future__ import annotations

from collections import defaultdict

from kubedra.audit.model import Item
from kubedra.audit.scope import Context, Scope, check
from kubedra.k8s.gpuschemes import operator_groups


@check("crd.deprecated-version")
def crd_deprecated_versions(ctx: Context, scope: Scope) -> None:
    for crd in scope.kind("CustomResourceDefinition"):
        versions = crd.spec.get("versions")
        if not isinstance(versions, list):
            continue
        stored = set(crd.status.get("storedVersions") or [])
        live = [v for v in versions if isinstance(v, dict) and v.get("served", True)]
        good = [str(v.get("name")) for v in live if not v.get("deprecated")]
        for i, v in enumerate(versions):
            if not isinstance(v, dict) or not v.get("deprecated") or not v.get("served", True):
                continue
            name = str(v.get("name"))
            notes = []
            if v.get("storage"):
                notes.append("it is the storage version")
            if name in stored:
                notes.append("objects are stored in it (status.storedVersions)")
            warning = v.get("deprecationWarning")
            ctx.emit(
                "crd.deprecated-version",
                crd,
                f"{crd.spec.get('group')}/{name} is served and marked deprecated"
                + (f" ({'; '.join(notes)})" if notes else "")
                + (f": {warning}" if warning else ""),
                path=("spec", "versions", i, "deprecated"),
                severity="error" if v.get("storage") else None,
                crd=crd.name,
                versions=", ".join(good) or "none served",
            )


def _gpu_group(group: str, groups: list[str]) -> str | None:
    for g in groups:
        if group == g or group.endswith("." + g):
            return g
    return None


@check("crd.gpu-operator")
def gpu_operator_crds(ctx: Context, scope: Scope) -> None:
    crds = scope.kind("CustomResourceDefinition")
    if not crds:
        return
    groups = list(operator_groups())
    by_group: dict[str, list[Item]] = defaultdict(list)
    for crd in crds:
        group = str(crd.spec.get("group") or "")
        if _gpu_group(group, groups):
            by_group[group].append(crd)
    for group, items in sorted(by_group.items()):
        kinds = sorted({str((c.spec.get("names") or {}).get("kind", c.name)) for c in items})
        ctx.emit(
            "crd.gpu-operator",
            items[0],
            f"operator group {group} defines {', '.join(kinds)}",
            path=("spec", "group"),
            group=group,
        )
