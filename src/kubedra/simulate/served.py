"""Workloads at an API version the target release no longer serves (``extensions/v1beta1`` DaemonSets and
Deployments, ``apps/v1beta2``...): the apiserver refuses them, so no controller ever creates their pods.

Without this they were silently left out (kubedra does not read pod templates at versions it does not serve),
and ``simulate`` said "0 pods simulated" with exit 0 on a file that cannot be applied at all."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubedra.errors import Location
from kubedra.k8s.featuregates import taint_rule_gates_off
from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import pod_templates
from kubedra.model.objects import DeviceTaintRule
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


def unread_taint_rules(
    rules: Sequence[DeviceTaintRule], release: str, gates: Mapping[str, bool]
) -> str | None:
    """The note for DeviceTaintRules the simulated kube-scheduler does not read: with the gates data/versions.yaml
    ``apis.deviceTaintRuleGates`` names off (the default at 1.34, 1.35 and 1.36) it lists no rule, and neither
    does kubedra; the note says so, what the API server needs to serve the kind at all, and the option that
    simulates a cluster that turned them on. None when there are no rules or they are read."""
    off = taint_rule_gates_off(release, gates)
    if not rules or not off:
        return None
    names = ", ".join(r.meta.name for r in rules[:5]) + (
        f" and {len(rules) - 5} more" if len(rules) > 5 else ""
    )
    entry = lifecycle_db().best_version("resource.k8s.io", "DeviceTaintRule", Version.parse(release))
    serve = (
        f"; the API server serves the kind only with {entry.enable_text()}"
        if entry is not None and entry.off_by_default
        else ""
    )
    wanted = ",".join(f"{g.split(' ')[0]}=true" for g in off)
    return (
        f"DeviceTaintRule {names}: not applied: kube-scheduler {release} reads DeviceTaintRules only with "
        f"{' and '.join(off)} on, off here{serve}; if the cluster turns them on, simulate with "
        f"--feature-gates {wanted}"
    )
