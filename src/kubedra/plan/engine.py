"""Build the rollout plan: clusters by criticality (low first), a control-plane wave per cluster, then node
pools one at a time in waves of about ``wave_size`` percent of the cluster's GPU nodes, with a soak between
waves, go/no-go gates, exact commands per distribution, rollback with a time estimate, audit blockers and the
GPU capacity of each pool before, during and after every wave.

A device-plugin node and a DRA node are never the same node: a wave labels its nodes
``kubedra.io/gpu-stack=dra``; the DRA driver's kubelet plugin selects that label and the device plugin is kept off it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, UsageError
from kubedra.k8s.versions import require_supported
from kubedra.plan import templates
from kubedra.plan.fleet import CRITICALITY, ClusterSpec, Fleet
from kubedra.plan.inventory import ClusterState, GpuNode, PoolState, analyse
from kubedra.snapshot.format import Snapshot
from kubedra.sources.nvidia import driver_releases
from kubedra.text import count

_VERSION = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?")


@dataclass
class Step:
    title: str
    commands: list[str]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"title": self.title, "commands": self.commands}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class Capacity:
    pool: str
    before: int  # GPUs of the pool on the device plugin before the wave
    during: int  # GPUs the pool's workloads can use while the wave is drained
    after: int  # GPUs usable after the wave
    demand: float  # GPUs in use by the pool's workloads
    dra_after: int  # GPUs the pool publishes through DRA once fully migrated
    first: bool = True  # the pool's first wave (the runbook prints "before" there only)

    @property
    def short(self) -> float:
        return max(0.0, self.demand - self.during)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool,
            "gpusBefore": self.before,
            "gpusDuring": self.during,
            "gpusAfter": self.after,
            "gpusInUse": round(self.demand, 2),
            "gpusShort": round(self.short, 2),
        }


@dataclass
class Wave:
    number: int
    cluster: str
    kind: str  # "control-plane" | "nodes"
    title: str
    pool: str | None = None
    nodes: list[str] = field(default_factory=list)
    gpus: int = 0
    steps: list[Step] = field(default_factory=list)
    rollback: list[str] = field(default_factory=list)
    rollback_minutes: int = 0
    rollback_note: str = ""
    gate: list[str] = field(default_factory=list)
    soak_hours: int = 0
    duration_minutes: int = 0
    capacity: Capacity | None = None
    warnings: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    blast_radius: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "cluster": self.cluster,
            "kind": self.kind,
            "title": self.title,
        }
        if self.pool:
            out["pool"] = self.pool
        out.update(
            {
                "nodes": self.nodes,
                "gpus": self.gpus,
                "blastRadius": self.blast_radius,
                "durationMinutes": self.duration_minutes,
                "soakHours": self.soak_hours,
                "steps": [s.to_dict() for s in self.steps],
                "gate": self.gate,
                "rollback": {
                    "commands": self.rollback,
                    "estimatedMinutes": self.rollback_minutes,
                    "note": self.rollback_note,
                },
                "files": self.files,
                "warnings": self.warnings,
            }
        )
        if self.capacity is not None:
            out["capacity"] = self.capacity.to_dict()
        return out


@dataclass
class ClusterPlan:
    state: ClusterState
    hops: list[str]
    blockers: list[dict[str, Any]]
    audit_summary: dict[str, Any]
    pools: list[dict[str, Any]]
    change: dict[str, Any]
    notes: list[str]
    waves: list[Wave] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.state.spec.name

    def to_dict(self) -> dict[str, Any]:
        s = self.state
        return {
            "name": s.spec.name,
            "distribution": s.spec.distribution,
            "criticality": s.spec.criticality,
            "source": s.spec.snapshot or f"context {s.spec.context}",
            "currentVersion": s.version,
            "controlPlaneHops": self.hops,
            "gpuNodes": len(s.gpu_nodes),
            "hasWorkloads": s.has_workloads,
            "blockers": self.blockers,
            "audit": self.audit_summary,
            "pools": self.pools,
            "changeRecord": self.change,
            "notes": self.notes,
            "waves": [w.number for w in self.waves],
        }


@dataclass
class Plan:
    target: str
    wave_size: int
    soak_hours: int
    clusters: list[ClusterPlan]
    waves: list[Wave]

    @property
    def blocked(self) -> bool:
        return any(c.blockers for c in self.clusters)

    @property
    def flagged(self) -> list[Wave]:
        return [w for w in self.waves if w.capacity is not None and w.capacity.short > 0]

    def summary(self) -> dict[str, Any]:
        total_minutes = sum(w.duration_minutes for w in self.waves) + 60 * sum(
            w.soak_hours for w in self.waves[:-1]
        )
        return {
            "clusters": len(self.clusters),
            "waves": len(self.waves),
            "gpuNodes": sum(len(c.state.gpu_nodes) for c in self.clusters),
            "gpus": sum(n.gpus_before for c in self.clusters for n in c.state.gpu_nodes),
            "blockers": sum(len(c.blockers) for c in self.clusters),
            "flaggedWaves": [w.number for w in self.flagged],
            "estimatedCalendarDays": round(total_minutes / 60 / 24, 1),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "targetVersion": self.target,
            "waveSizePercent": self.wave_size,
            "soakHours": self.soak_hours,
            "summary": self.summary(),
            "clusters": [c.to_dict() for c in self.clusters],
            "waves": [w.to_dict() for w in self.waves],
        }


# ------------------------------------------------------------------------------------------------ versions


def parse_target(text: str) -> tuple[int, str]:
    """(minor, full version) of --target-version: ``1.37`` -> (37, "1.37.0"); ``1.37.3`` -> (37, "1.37.3")."""
    m = _VERSION.match(text.strip())
    if not m:
        raise UsageError(f"invalid --target-version {text!r} (expected e.g. 1.37)")
    minor = require_supported(text, what="--target-version").minor
    return minor, f"1.{minor}.{int(m.group(2) or 0)}"


def _minor(version: str) -> int | None:
    m = _VERSION.match(version.strip()) if version else None
    return int(m.group(1)) if m else None


def parse_pool_sizes(items: Sequence[str]) -> dict[str, int]:
    """``--pool-wave-size POOL=PERCENT`` (repeatable) → {pool: percent}."""
    out: dict[str, int] = {}
    for item in items:
        pool, sep, pct = item.partition("=")
        if not sep or not pool or not pct.strip().isdigit() or not 1 <= int(pct) <= 100:
            raise UsageError(
                f"--pool-wave-size wants POOL=PERCENT with a percentage from 1 to 100, not {item!r}"
            )
        out[pool.strip()] = int(pct)
    return out


def hops(current: str, target_minor: int) -> list[str]:
    cur = _minor(current)
    if cur is None or cur >= target_minor:
        return []
    return [f"1.{m}" for m in range(cur + 1, target_minor + 1)]


# ------------------------------------------------------------------------------------------------ values


def _values(state: ClusterState, target: str, target_patch: str) -> dict[str, str]:
    spec = state.spec
    common = templates.common()
    drv = common["driver"]
    ctx = spec.context or spec.name
    prov = spec.provider
    dp = state.device_plugin or ("kube-system", "nvidia-device-plugin-daemonset")
    cur_minor = _minor(state.version)
    label_key, _, _ = str(common["devicePlugin"]["operatorLabel"]).partition("=")
    return {
        "cluster": spec.name,
        "pool": "<node-pool>",
        "context": ctx,
        "kctx": f"--context {ctx}",
        "kctx_kubedra": f"--context {ctx}",
        "helm_ctx": f"--kube-context {ctx}",
        "target": target,
        "target_patch": target_patch,
        "current": f"1.{cur_minor}" if cur_minor else "<current>",
        "current_patch": state.version.lstrip("v") if state.version else "<current>",
        "stack_label": str(common["stackLabel"]),
        "stack_value": str(common["stackValue"]),
        "repo_name": str(drv["repoName"]),
        "repo_url": str(drv["repoUrl"]),
        "chart": str(drv["chart"]),
        "driver_version": str(drv["version"]),
        "release": str(drv["release"]),
        "driver_namespace": str(drv["namespace"]),
        "driver_daemonset": str(drv["kubeletPluginDaemonSet"]),
        "operator_label": str(common["devicePlugin"]["operatorLabel"]),
        "operator_label_key": label_key,
        "dp_namespace": dp[0],
        "dp_name": dp[1],
        "manifests": spec.manifests or f"manifests/{spec.name}",
        "cluster_name": prov.get("clusterName", spec.name),
        "region": prov.get("region", "<region>"),
        "location": prov.get("location", prov.get("region", "<location>")),
        "project": prov.get("project", "<project>"),
        "resource_group": prov.get("resourceGroup", "<resource-group>"),
        "state_store": prov.get("stateStore", "s3://<kops-state-store>"),
        "backup_plan": prov.get("backupPlan", "<backup-plan>"),
    }


# ------------------------------------------------------------------------------------------------ waves


def _control_plane_wave(
    state: ClusterState,
    values: dict[str, str],
    hop_list: list[str],
    number: int,
    config_steps: Sequence[Step] = (),
    gang_step: Step | None = None,
) -> Wave:
    dist = templates.distribution(state.spec.distribution)
    common = templates.common()
    v = {**values, "wave": str(number)}
    etcd = dist["etcd"]
    steps = [
        Step(
            "Capture the cluster and check it before the change",
            templates.render_all(
                [
                    "kubedra snapshot {{kctx_kubedra}} -o snapshots/{{cluster}}-before-wave-{{wave}}.yaml",
                    "kubedra audit --context {{context}} --target-version {{target}}   # no error findings left",
                ],
                v,
            ),
        ),
        *config_steps,
    ]
    cp = dist["controlPlane"]
    rollback_points: list[tuple[str, str, dict[str, str]]] = []  # (hop, version before it, values)
    previous = values["current"]
    each: list[str | None] = [*hop_list] or [None]
    for hop in each:
        # one backup and rollback point per minor: a multi-minor hop can be stopped (and undone) after any minor
        bv = {**v, "wave": f"{number}-before-{hop}" if hop and len(hop_list) > 1 else str(number)}
        what = f" (rollback point before {hop})" if hop and len(hop_list) > 1 else ""
        steps += [
            Step(
                ("Back up etcd" if not etcd.get("managed") else "Back up (etcd is managed by the provider)")
                + what,
                templates.render_all(etcd["backup"], bv),
                note="Managed control plane: the provider snapshots etcd; you cannot restore it yourself, so keep an "
                "object-level backup."
                if etcd.get("managed")
                else "",
            ),
            Step("Check the backup" + what, templates.render_all(etcd["verify"], bv)),
        ]
        if hop is None:
            break
        hv = {**v, "hop": hop, "hop_patch": values["target_patch"] if hop == values["target"] else f"{hop}.0"}
        steps.append(
            Step(
                f"Upgrade the control plane to {hop}", templates.render_all(cp["upgrade"] + cp["verify"], hv)
            )
        )
        rollback_points.append((hop, previous, bv))
        previous = hop
    if gang_step is not None:
        steps.append(gang_step)
    if not hop_list:
        steps.append(
            Step(
                "Control plane",
                [],
                note=f"already at {state.version or 'an unknown version'}; no control-plane upgrade in this wave",
            )
        )
    node_up = cp.get("nodeUpgrade") or []
    if hop_list and node_up:
        pools = [p.name for p in state.pools] or ["<node-pool>"]
        cmds: list[str] = []
        for pool in pools:
            cmds += templates.render_all(node_up, {**v, "pool": pool})
        steps.append(
            Step(
                f"Upgrade the GPU node pools' kubelets to {values['target']} (rolling, before any node moves)",
                cmds,
                note="kubelets may lag the API server by up to 3 minors, but the DRA kubelet plugin needs a kubelet "
                "that serves resource.k8s.io/v1 (1.34+); managed pools replace nodes, so do it before labelling",
            )
        )
    drv = common["driver"]
    values_file = templates.render(drv["values"], v)
    gates, why = driver_feature_gates(state)
    if gates:
        values_file += "featureGates:\n" + "".join(f"  {g}: true   # {why[g]}\n" for g in gates)
    install = templates.render_all(drv["install"] + drv["check"], v)
    preflight = driver_releases.preflight(str(drv["version"]), int(values["target"].split(".")[1]), gates)
    gate_note = ""
    if gates:
        excl = templates.common()["driverFeatureGates"]["exclusiveWith"]
        clash = sorted({x for g in gates for x in excl.get(g, [])})
        gate_note = f"; driver feature gates {', '.join(gates)} in the values (alpha)" + (
            f", which rule out {', '.join(clash)}" if clash else ""
        )
    steps.append(
        Step(
            "Install the NVIDIA DRA driver (kubelet plugin only on nodes labelled for DRA: none yet)",
            install,
            note="writes no ResourceSlice until a wave labels nodes" + gate_note,
        )
    )
    dp_note = ""
    if state.gpu_operator:
        dp_cmds: list[str] = []
        dp_note = (
            f"GPU Operator: each wave sets {values['operator_label']} on its nodes, which stops the operator's "
            "device plugin there"
        )
    else:
        dp_cmds = [templates.render(str(common["devicePlugin"]["excludePatch"]), v)]
        if state.device_plugin is None:
            dp_note = "no device-plugin DaemonSet found in the snapshot: adjust the namespace/name"
    steps.append(Step("Keep the device plugin off nodes labelled for DRA", dp_cmds, note=dp_note))
    if len(rollback_points) > 1:
        rollback_cmds = []
        for hop, before, bv in reversed(rollback_points):
            rollback_cmds.append(f"# undo {hop} (back to {before}): restore the backup taken before {hop}")
            rollback_cmds += templates.render_all(
                cp["rollback"], {**bv, "hop": hop, "hop_patch": f"{hop}.0", "current": before}
            )
    else:
        rollback_cmds = templates.render_all(
            cp["rollback"], {**v, "hop": values["target"], "hop_patch": values["target_patch"]}
        )
    rollback_cmds += templates.render_all(drv["rollback"], v)
    rollback_minutes = int(cp["rollbackMinutes"]) if hop_list else 15
    note = (
        "restores the etcd snapshot taken in this wave"
        if cp.get("downgradeSupported")
        else "the provider cannot downgrade the control plane: this is a fix-forward plus object restore"
    )
    return Wave(
        number=number,
        cluster=state.spec.name,
        kind="control-plane",
        title=f"{state.spec.name}: etcd backup, control plane {' → '.join(hop_list) or 'unchanged'}, DRA driver",
        steps=steps,
        rollback=rollback_cmds,
        rollback_minutes=rollback_minutes,
        rollback_note=note,
        gate=[
            "`kubectl get --raw=/readyz` ok and every control-plane component at the target version",
            "`kubedra verify` exits 0 (nothing moved yet: the device plugin still serves every GPU)",
            "the DRA driver's controller is Ready and the DeviceClasses gpu.nvidia.com / mig.nvidia.com exist",
        ],
        duration_minutes=45 + 60 * len(hop_list),
        files={f"dra-driver-values.yaml ({state.spec.name})": values_file},
        warnings=[f"driver preflight: {p}" for p in preflight],
        blast_radius="control plane and API of the whole cluster; no GPU node is drained",
    )


def driver_feature_gates(state: ClusterState) -> tuple[list[str], dict[str, str]]:
    """The NVIDIA DRA driver's feature gates the cluster's GPU sharing needs (from GFD's
    ``nvidia.com/gpu.sharing-strategy`` on its GPU nodes), and why."""
    table = templates.common()["driverFeatureGates"]["sharing"]
    why: dict[str, str] = {}
    for n in state.gpu_nodes:
        hit = table.get(n.labels.get("nvidia.com/gpu.sharing-strategy", ""))
        if hit:
            why[str(hit["gate"])] = str(hit["why"])
    return sorted(why), why


def canary_step(
    values: dict[str, str], pool: PoolState, anywhere: list[tuple[str, str, str]], v: dict[str, str]
) -> Step:
    """A migrated copy of one real workload of the pool, one replica, on the first wave's nodes, before the
    rest of the fleet moves (the smoke test proves a claim works; the canary proves *this* workload does)."""
    candidates = pool.workloads or anywhere
    if not candidates:
        return Step(
            "Canary: a migrated copy of one real GPU workload on the wave's nodes",
            [],
            note="no GPU Deployment or StatefulSet in the snapshot: pick a workload by hand",
        )
    kind, ns, name = sorted(candidates)[0]
    res = kind.lower()
    ctx = values["kctx"]
    file = f"canary-{name}.yaml"
    return Step(
        f"Canary: a migrated copy of {kind} {ns}/{name} (1 replica) on the wave's nodes",
        [
            f"kubectl {ctx} -n {ns} get {res} {name} -o yaml | kubedra migrate -f - --target-version {v['target']} > {file}",
            f"# edit {file}: metadata.name {name}-canary, spec.replicas 1, a pod label of its own in selector and "
            f"template, nodeSelector {v['stack_label']}: {v['stack_value']}; drop status and resourceVersion",
            f"kubectl {ctx} apply -f {file} && kubectl {ctx} -n {ns} rollout status {res}/{name}-canary --timeout=15m",
            f"kubectl {ctx} -n {ns} delete {res} {name}-canary   # when its own checks passed",
        ],
        note="the canary runs the workload's real image and requests through DRA before any of its replicas "
        "depends on it",
    )


def _smoke(values: dict[str, str], pool: PoolState, wave: int) -> str:
    extra = "\n".join(f"    {k}: {v}" for k, v in pool.selector.items() if k != values["stack_label"])
    return templates.render(
        templates.common()["smokeTest"], {**values, "wave": str(wave), "pool_selector_yaml": extra}
    )


def _node_wave(
    state: ClusterState,
    values: dict[str, str],
    pool: PoolState,
    batch: list[GpuNode],
    migrated: list[GpuNode],
    number: int,
    bridge: bool,
    last_of_pool: bool,
    canary: bool = False,
) -> Wave:
    common = templates.common()
    w = common["wave"]
    names = [n.name for n in batch]
    v = {**values, "wave": str(number), "nodes": " ".join(names), "pool": pool.name}
    steps = [
        Step("Before the wave", templates.render_all(w["before"], v)),
        Step("Cordon and drain the wave's nodes", templates.per_node(w["cordon"] + w["drain"], v, names)),
    ]
    steps += [
        Step("Switch the nodes from the device plugin to DRA", templates.per_node(w["switch"], v, names)),
        Step(
            "Wait for the DRA driver and the nodes' ResourceSlices", templates.per_node(w["driver"], v, names)
        ),
        Step("Uncordon", templates.render_all(w["uncordon"], v)),
    ]
    if last_of_pool:
        steps.append(
            Step(
                f"Apply the migrated manifests (pool {pool.name} is now all on DRA)",
                templates.render_all(w["migrate"], v),
                note="with DRAExtendedResource (on by default from 1.36) pods still asking for nvidia.com/gpu run "
                "on DRA nodes through the gpu.nvidia.com DeviceClass; claims are applied once the pool is complete"
                if bridge
                else "before 1.36, pods asking for nvidia.com/gpu cannot use DRA nodes: apply the pool's migrated "
                "manifests now",
            )
        )
    if canary:
        steps.append(canary_step(values, pool, state.gpu_workloads, v))
    steps += [
        Step(
            "Smoke test: one pod with a ResourceClaim on the wave's nodes",
            templates.render_all(w["smoke"], v),
        ),
        Step("Verify against the snapshot taken before the wave", templates.render_all(w["verify"], v)),
    ]
    rollback = templates.per_node(w["rollback"], v, names)
    rb_minutes = int(w["rollbackMinutes"]) + int(w["rollbackMinutesPerNode"]) * len(batch)

    # capacity while this wave is drained, and after it
    wave_set = set(names)
    others = [n for n in pool.nodes if n.name not in wave_set]
    migrated_set = {n.name for n in migrated}
    dp_left = sum(n.gpus_before for n in others if n.name not in migrated_set and n.stack == "device-plugin")
    dra_ready = sum(
        n.gpus_after or n.gpus_before for n in others if n.name in migrated_set or n.stack == "dra"
    )
    during = dp_left + (dra_ready if bridge else 0)
    after_dra = dra_ready + sum(n.gpus_after or n.gpus_before for n in batch)
    after = dp_left + after_dra if bridge or last_of_pool else dp_left
    first = not any(n.name in migrated_set for n in pool.nodes if n.stack == "device-plugin")
    cap = Capacity(pool.name, pool.gpus_before, during, after, pool.demand, pool.gpus_after, first)
    warnings = []
    if cap.short > 0:
        warnings.append(
            f"while wave {number} is drained pool {pool.name} keeps {during} GPUs for {cap.demand:g} in use: "
            f"about {math.ceil(cap.short)} GPUs of workloads would have no GPU (Pending). Make the wave smaller "
            "(--wave-size), add surge nodes to the pool, or scale the workloads down first."
        )
    unknown = [n.name for n in batch if n.gpus_after == 0]
    if unknown:
        warnings.append(
            f"no DRA inventory known for {', '.join(unknown)} (GPU model not in the catalogue or no GFD labels): "
            "check its ResourceSlices by hand in the driver step"
        )
    gpus = sum(n.gpus_before for n in batch)
    total = sum(n.gpus_before for n in state.gpu_nodes) or 1
    return Wave(
        number=number,
        cluster=state.spec.name,
        kind="nodes",
        title=f"{state.spec.name}/{pool.name}: {count(len(batch), 'node')} to DRA",
        pool=pool.name,
        nodes=names,
        gpus=gpus,
        steps=steps,
        rollback=rollback,
        rollback_minutes=rb_minutes,
        rollback_note="nodes go back to the device plugin; the control plane stays at the target version",
        gate=[str(g) for g in common["gate"]],
        duration_minutes=30 + 10 * len(batch),
        capacity=cap,
        warnings=warnings,
        files={f"smoke-{state.spec.name}-wave-{number}.yaml": _smoke(values, pool, number)},
        blast_radius=f"{count(len(batch), 'node')}, {count(gpus, 'GPU')} ({100 * gpus / total:.0f}% of the cluster's GPUs), "
        f"up to {count(pool.pods, 'GPU pod')} of pool {pool.name} rescheduled",
    )


# ------------------------------------------------------------------------------------------------ blockers


def _blockers(
    snap: Snapshot, target: str
) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """Audit errors (blockers), the audit summary, and the findings about the cluster's own configuration
    that become plan steps (``clusterSteps`` in data/plan/common.yaml)."""
    from kubedra.snapshot import audit as snapshot_audit

    report = snapshot_audit.run([snap], target)
    blockers = [f.to_dict() for f in report.findings if f.severity == "error"]
    wanted = templates.common().get("clusterSteps") or {}
    config = [f.to_dict() for f in report.findings if f.rule in wanted]
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
    from kubedra.k8s import workloads
    from kubedra.snapshot.capture import uses_gpu

    n = 0
    for obj in snap.items:
        templates_ = workloads.pod_templates(obj)
        if not templates_:
            continue
        gang = workloads.gang(obj, templates_, uses_gpu(obj))
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
    need = (templates.common().get("gangScheduling") or {}).get(f"1.{target_minor}")
    if need is None:
        return Step(
            f"Gang scheduling: {count(gangs, 'gang workload')} and no scheduling.k8s.io gang API in 1.{target_minor}",
            [],
            note="migrate writes no PodGroup for this target; keep the operator's own gang scheduler",
        )
    gates = ",".join(f"{g}=true" for g in need["gates"])
    api = str(need["api"])
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


def _risk(
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


def build(
    fleet: Fleet,
    snapshots: dict[str, Snapshot],
    target_version: str,
    wave_size: int = 10,
    soak_hours: int = 72,
    pool_wave_sizes: dict[str, int] | None = None,
) -> Plan:
    if not 1 <= wave_size <= 100:
        raise UsageError("--wave-size must be a percentage between 1 and 100")
    pool_sizes = dict(pool_wave_sizes or {})
    known_pools: set[str] = set()
    if soak_hours < 0:
        raise UsageError("--soak must not be negative")
    target_minor, target_patch = parse_target(target_version)
    target = f"1.{target_minor}"
    from kubedra.k8s import featuregates

    bridge = bool(featuregates.default_gates(target).get("DRAExtendedResource"))
    order = sorted(enumerate(fleet.clusters), key=lambda ic: (ic[1].rank, ic[0]))
    clusters: list[ClusterPlan] = []
    waves: list[Wave] = []
    number = 0
    for _, spec in order:
        snap = snapshots[spec.name]
        state = analyse(spec, snap, target)
        hop_list = hops(state.version, target_minor)
        values = _values(state, target, target_patch)
        blockers, audit_summary, config = _blockers(snap, target)
        cluster_waves: list[Wave] = []
        number += 1
        cluster_waves.append(
            _control_plane_wave(
                state,
                values,
                hop_list,
                number,
                config_steps=cluster_config_steps(config),
                gang_step=gang_gate_step(snap, target_minor, spec.distribution, values),
            )
        )
        total_nodes = len(state.gpu_nodes)
        size = max(1, math.ceil(total_nodes * wave_size / 100)) if total_nodes else 1
        for pool in sorted(state.pools, key=lambda p: (p.gpus_before, p.name)):
            todo = [n for n in pool.nodes if n.stack == "device-plugin"]
            done = [n for n in pool.nodes if n.stack == "dra"]
            migrated: list[GpuNode] = list(done)
            known_pools.add(pool.name)
            pool_size = size
            if pool.name in pool_sizes:
                pool_size = max(1, math.ceil(len(pool.nodes) * pool_sizes[pool.name] / 100))
            batches = [todo[i : i + pool_size] for i in range(0, len(todo), pool_size)]
            for bi, batch in enumerate(batches):
                number += 1
                first_node_wave = len(cluster_waves) == 1
                wv = _node_wave(
                    state,
                    values,
                    pool,
                    batch,
                    migrated,
                    number,
                    bridge,
                    bi == len(batches) - 1,
                    first_node_wave,
                )
                cluster_waves.append(wv)
                migrated += batch
        pools = [
            {
                "name": p.name,
                "selector": p.selector,
                "nodes": len(p.nodes),
                "onDRA": sum(1 for n in p.nodes if n.stack == "dra"),
                "models": p.models,
                "gpusDevicePlugin": p.gpus_before,
                "gpusDRA": p.gpus_after,
                "gpusInUse": round(p.demand, 2),
                "gpuPods": p.pods,
                "pendingGpuPods": p.pending,
            }
            for p in state.pools
        ]
        notes = list(state.notes)
        if not state.has_workloads:
            notes.append("the snapshot has no GPU workloads: capacity is shown, demand could not be checked")
        if state.unplaced_demand:
            notes.append(
                f"{state.unplaced_demand:g} GPUs of workloads are not tied to a pool (no nodeSelector, not running)"
            )
        if not state.gpu_nodes:
            notes.append("no GPU nodes found: only the control-plane wave is planned")
        for pool in state.pools:
            if pool.gpus_after and pool.gpus_after < pool.demand:
                notes.append(
                    f"pool {pool.name}: DRA would publish {pool.gpus_after} GPUs for {pool.demand:g} in use"
                )
        flagged = sum(1 for w in cluster_waves if w.capacity is not None and w.capacity.short > 0)
        dist = templates.distribution(spec.distribution)
        downgrade = bool(dist["controlPlane"].get("downgradeSupported"))
        risk, why = _risk(state, blockers, flagged, downgrade)
        node_waves = [w for w in cluster_waves if w.kind == "nodes"]
        biggest = max((w.gpus for w in node_waves), default=0)
        total_gpus = sum(n.gpus_before for n in state.gpu_nodes)
        change = {
            "risk": risk,
            "riskReasons": why,
            "testEvidence": [
                f"kubedra audit of snapshot {snap.header.captured_at or '(undated)'}: "
                f"{count(audit_summary['total'], 'finding')}, {count(len(blockers), 'blocking error')}",
                "capacity per pool before/after: "
                + (
                    ", ".join(f"{p['name']} {p['gpusDevicePlugin']}→{p['gpusDRA']} GPUs" for p in pools)
                    or "no GPU pools"
                ),
                "per wave: smoke-test pod with a ResourceClaim, `kubedra verify` against the pre-wave snapshot",
            ],
            "rollbackPlan": (
                f"node waves: relabel to the device plugin, ~{max((w.rollback_minutes for w in node_waves), default=0)} min "
                f"per wave; control plane: {cluster_waves[0].rollback_note} (~{cluster_waves[0].rollback_minutes} min)"
            ),
            "blastRadius": f"at most {biggest} of {total_gpus} GPUs ({100 * biggest / (total_gpus or 1):.0f}%) per wave, "
            f"one node pool at a time; cluster criticality {spec.criticality}",
            "schedule": f"{count(len(cluster_waves), 'wave')}, {soak_hours} h soak between waves",
        }
        for w in cluster_waves:
            w.soak_hours = soak_hours
        clusters.append(
            ClusterPlan(
                state=state,
                hops=hop_list,
                blockers=blockers,
                audit_summary=audit_summary,
                pools=pools,
                change=change,
                notes=notes + [str(n) for n in dist.get("notes") or []],
                waves=cluster_waves,
            )
        )
        waves += cluster_waves
    unknown = sorted(set(pool_sizes) - known_pools)
    if unknown:
        raise UsageError(
            f"--pool-wave-size names no node pool of the fleet: {', '.join(unknown)} "
            f"(pools: {', '.join(sorted(known_pools)) or 'none'})"
        )
    if waves:
        waves[-1].soak_hours = 0
    return Plan(target=target, wave_size=wave_size, soak_hours=soak_hours, clusters=clusters, waves=waves)


def load_snapshots(fleet: Fleet, timeout: float = 20.0) -> dict[str, Snapshot]:
    """Each cluster's snapshot: its file, or a live capture (read-only) of its context."""
    from kubedra.snapshot import capture
    from kubedra.snapshot import format as snapfmt

    out: dict[str, Snapshot] = {}
    for spec in fleet.clusters:
        if spec.snapshot:
            out[spec.name] = snapfmt.load(spec.snapshot)
            continue
        snap = capture.capture(spec.kubeconfig, spec.context, name=spec.name, timeout=timeout)
        # documents for audit/simulate: round-trip through the loader so every object has a place
        from kubedra.sources import files

        text = snapfmt.render(snap, "yaml")
        parsed = files.parse_text(text, f"<live {spec.name}>")
        if parsed.errors:
            raise InputError(
                f"cluster {spec.name}: captured objects could not be read back: {parsed.errors[0]}"
            )
        snap.documents = parsed.documents
        out[spec.name] = snap
    return out


def cluster_spec_for(name: str, fleet: Fleet) -> ClusterSpec:
    for c in fleet.clusters:
        if c.name == name:
            return c
    raise KeyError(name)
