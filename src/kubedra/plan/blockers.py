"""What holds a cluster's plan back: audit blockers, cluster configuration steps, the gang-scheduling gate,
the risk rating."""

from __future__ import annotations

from typing import Any

from kubedra.audit import snapshot as snapshot_audit
from kubedra.audit.model import finding_dict
from kubedra.k8s import versions, workloads
from kubedra.k8s.versions import Version
from kubedra.model.snapshot import Snapshot
from kubedra.plan import templates
from kubedra.plan.fleet import CRITICALITY
from kubedra.plan.inventory import ClusterState
from kubedra.plan.model import Step
from kubedra.text import count


def audit_blockers(
    snap: Snapshot, target: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """Audit errors (blockers), the audit summary, and the findings about the cluster's own configuration
    that become plan steps (``clusterSteps`` in data/plan/common.yaml)."""

    report = snapshot_audit.run([snap], target)
    blockers = [finding_dict(f) for f in report.findings if f.severity == "error"]
    wanted = templates.common().get("clusterSteps") or {}
    config = [finding_dict(f) for f in report.findings if f.rule in wanted]
    return blockers, report.summary(), config


def cluster_config_steps(findings: list[dict[str, Any]]) -> list[Step]:
    """One step per audit rule about the cluster's configuration (kube-dns, IPVS, kernels, cgroup v1),
    titled with the release that forces it."""
    table = templates.common().get("clusterSteps") or {}
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        by_rule.setdefault(str(f["rule"]), []).append(f)
    steps = []
    for rule, found in by_rule.items():
        info = table[rule]
        lines = [f"# {f['message']}" for f in found]
        fixes = list(dict.fromkeys(str(f["fix"]) for f in found if f.get("fix")))
        steps.append(
            Step(
                f"{info['title']} ({info['deadline']})",
                lines,
                note=" ".join(fixes) + f" (audit rule {rule})",
            )
        )
    return steps


def _gang_count(snap: Snapshot) -> int:
    """Workloads whose migration writes a scheduling.k8s.io PodGroup (or Workload): operator gangs that are
    not per group, not already grouped, and can start (see kubedra.migrate.gang)."""

    n = 0
    for obj in snap.items:
        templates_ = workloads.pod_templates(obj)
        if not templates_:
            continue
        gang = workloads.gang(obj, templates_)
        if gang is None or gang.problem or gang.per_group:
            continue
        grouped = any(
            isinstance(sp := workloads.get_path(obj, t.spec), dict)
            and (sp.get("schedulingGroup") or sp.get("workloadRef"))
            for t in templates_
        )
        if not grouped:
            n += 1
    return n


def gang_gate_step(
    snap: Snapshot, target_minor: int, distribution: str, values: dict[str, str]
) -> Step | None:
    """Gates and --runtime-config the migrated PodGroups need (before the migrated manifests are applied)."""
    gangs = _gang_count(snap)
    if not gangs:
        return None
    need = versions.api("gang", Version(1, target_minor))  # data/versions.yaml apis.gang
    if need is None:
        return Step(
            f"Gang scheduling: {count(gangs, 'gang workload')} and no scheduling.k8s.io gang API in 1.{target_minor}",
            [],
            note="migrate writes no PodGroup for this target; keep the operator's own gang scheduler",
        )
    gates = ",".join(f"{g}=true" for g in need["gates"])
    api = str(need["apiVersion"])
    cmds = [
        f"# kube-apiserver: --feature-gates={gates} --runtime-config={api}=true",
        f"# kube-scheduler and kube-controller-manager: --feature-gates={gates}",
        f"kubectl {values['kctx']} api-resources --api-group=scheduling.k8s.io   # podgroups served at {api}",
    ]
    managed = bool(templates.distribution(distribution)["etcd"].get("managed"))
    return Step(
        f"Enable the gang-scheduling API for {count(gangs, 'migrated gang workload')} (PodGroups, {api})",
        cmds,
        note="migrate writes PodGroups for these workloads; without the gates and the API version the apiserver "
        "rejects them"
        + (
            "; a managed control plane does not let you set alpha/off-by-default gates: ask the provider, or "
            "keep the operator's own gang scheduler (migrate --no-gang)"
            if managed
            else ""
        ),
    )


def rate_risk(
    state: ClusterState, blockers: list[dict[str, Any]], flagged: int, downgrade: bool
) -> tuple[str, str]:
    level = CRITICALITY.index(state.spec.criticality)
    reasons = [f"criticality {state.spec.criticality}"]
    if blockers:
        level += 1
        reasons.append(f"{count(len(blockers), 'audit blocker')} to fix first")
    if flagged:
        level += 1
        reasons.append(f"{count(flagged, 'wave')} short of GPUs")
    if not downgrade:
        reasons.append("control plane cannot be downgraded (fix-forward)")
    if not state.has_workloads:
        reasons.append("no GPU workloads in the snapshot: capacity not checked against demand")
    names = ("low", "medium", "high", "high")
    return names[min(level, 3)], "; ".join(reasons)
