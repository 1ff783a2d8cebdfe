"""Build the rollout plan: clusters by criticality (low first), a control-plane wave per cluster, then node
pools one at a time in waves of about ``wave_size`` percent of the cluster's GPU nodes, with a soak between
waves, go/no-go gates, exact commands per distribution, rollback with a time estimate, audit blockers and the
GPU capacity of each pool before, during and after every wave.

A device-plugin node and a DRA node are never the same node: a wave labels its nodes
``kubedra.io/gpu-stack=dra``; the DRA driver's kubelet plugin selects that label and the device plugin is kept off it.
"""

from __future__ import annotations

import math
from typing import Any

from kubedra.errors import InputError, UsageError
from kubedra.k8s import featuregates
from kubedra.model import snapshot as snapfmt
from kubedra.model.snapshot import Snapshot
from kubedra.plan import templates
from kubedra.plan.blockers import audit_blockers, cluster_config_steps, gang_gate_step, rate_risk
from kubedra.plan.fleet import ClusterSpec, Fleet
from kubedra.plan.inventory import CAPACITY_KINDS, ClusterState, GpuNode, UnsupportedNode, analyse
from kubedra.plan.model import ClusterPlan, Plan, Wave
from kubedra.plan.versions import hops, parse_pool_sizes, parse_target
from kubedra.plan.waves import control_plane_wave, node_wave, wave_values
from kubedra.snapshot import capture
from kubedra.sources import files
from kubedra.text import count, some

__all__ = ["build", "cluster_spec_for", "load_snapshots", "parse_pool_sizes", "parse_target"]


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

    bridge = bool(featuregates.default_gates(target).get("DRAExtendedResource"))
    order = sorted(enumerate(fleet.clusters), key=lambda ic: (ic[1].rank, ic[0]))
    clusters: list[ClusterPlan] = []
    waves: list[Wave] = []
    number = 0
    for _, spec in order:
        snap = snapshots[spec.name]
        state = analyse(spec, snap, target)
        hop_list = hops(state.version, target_minor)
        values = wave_values(state, target, target_patch)
        blockers, audit_summary, config = audit_blockers(snap, target)
        number += 1
        cluster_waves = [
            control_plane_wave(
                state,
                values,
                hop_list,
                number,
                config_steps=cluster_config_steps(config),
                gang_step=gang_gate_step(snap, target_minor, spec.distribution, values),
            )
        ]
        number = _node_waves(state, values, cluster_waves, number, wave_size, pool_sizes, bridge)
        known_pools |= {p.name for p in state.pools}
        pools = _pool_summaries(state)
        dist = templates.distribution(spec.distribution)
        change = _change_record(state, snap, cluster_waves, pools, blockers, audit_summary, dist, soak_hours)
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
                notes=_cluster_notes(state) + [str(n) for n in dist.get("notes") or []],
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


def _node_waves(
    state: ClusterState,
    values: dict[str, str],
    cluster_waves: list[Wave],
    number: int,
    wave_size: int,
    pool_sizes: dict[str, int],
    bridge: bool,
) -> int:
    """Appends the node waves of each pool (smallest first) to ``cluster_waves``; returns the last number."""
    total_nodes = len(state.gpu_nodes)
    size = max(1, math.ceil(total_nodes * wave_size / 100)) if total_nodes else 1
    for pool in sorted(state.pools, key=lambda p: (p.gpus_before, p.name)):
        todo = [n for n in pool.nodes if n.stack == "device-plugin"]
        done = [n for n in pool.nodes if n.stack == "dra"]
        migrated: list[GpuNode] = list(done)
        pool_size = size
        if pool.name in pool_sizes:
            pool_size = max(1, math.ceil(len(pool.nodes) * pool_sizes[pool.name] / 100))
        rule = next((r for n in pool.nodes if (r := templates.platform_rule(n.labels))), None)
        if rule is not None and rule.get("waveUnit") == "pool":
            pool_size = max(
                1, len(todo)
            )  # the platform refuses both stacks on one node: the pool moves whole
        batches = [todo[i : i + pool_size] for i in range(0, len(todo), pool_size)]
        for bi, batch in enumerate(batches):
            number += 1
            first_node_wave = len(cluster_waves) == 1
            wv = node_wave(
                state,
                values,
                pool,
                batch,
                migrated,
                number,
                bridge,
                bi == len(batches) - 1,
                first_node_wave,
                platform_rule=rule,
            )
            cluster_waves.append(wv)
            migrated += batch
    return number


def _pool_summaries(state: ClusterState) -> list[dict[str, Any]]:
    return [
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


def _cluster_notes(state: ClusterState) -> list[str]:
    """What the plan of this cluster could not check or found short."""
    notes = list(state.notes)
    if not state.has_workloads:
        notes.append("the snapshot has no GPU workloads: capacity is shown, demand could not be checked")
    if state.unplaced_demand:
        notes.append(
            f"{state.unplaced_demand:g} GPUs of workloads are not tied to a pool (no nodeSelector, not running)"
        )
    for (vendor, why), names in _by_reason(state.unsupported).items():
        notes.append(
            f"{count(len(names), 'GPU node')} with {vendor} GPUs left out of the waves ({some(names)}): {why}"
        )
    if not state.gpu_nodes and not state.unsupported:
        notes.append("no GPU nodes found: only the control-plane wave is planned")
    for pool in state.pools:
        if pool.gpus_after and pool.gpus_after < pool.demand:
            notes.append(
                f"pool {pool.name}: DRA would publish {pool.gpus_after} GPUs for {pool.demand:g} in use"
            )
    return notes


def _by_reason(nodes: list[UnsupportedNode]) -> dict[tuple[str, str], list[str]]:
    """The nodes of vendors the plan has no steps for, by (vendor, reason), in their order."""
    out: dict[tuple[str, str], list[str]] = {}
    for u in nodes:
        out.setdefault((u.vendor, u.reason), []).append(u.name)
    return out


def _change_record(
    state: ClusterState,
    snap: Snapshot,
    cluster_waves: list[Wave],
    pools: list[dict[str, Any]],
    blockers: list[dict[str, Any]],
    audit_summary: dict[str, Any],
    dist: dict[str, Any],
    soak_hours: int,
) -> dict[str, Any]:
    """The change-request fields of one cluster: risk, evidence, rollback, blast radius, schedule."""
    flagged = sum(1 for w in cluster_waves if w.capacity is not None and w.capacity.short > 0)
    downgrade = bool(dist["controlPlane"].get("downgradeSupported"))
    risk, why = rate_risk(state, blockers, flagged, downgrade)
    node_waves = [w for w in cluster_waves if w.kind == "nodes"]
    biggest = max((w.gpus for w in node_waves), default=0)
    total_gpus = sum(n.gpus_before for n in state.gpu_nodes)
    return {
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
        f"one node pool at a time; cluster criticality {state.spec.criticality}",
        "schedule": f"{count(len(cluster_waves), 'wave')}, {soak_hours} h soak between waves",
    }


def load_snapshots(fleet: Fleet, timeout: float = 20.0) -> dict[str, Snapshot]:
    """Each cluster's snapshot: its file, or a live capture (read-only) of its context."""

    out: dict[str, Snapshot] = {}
    for spec in fleet.clusters:
        if spec.snapshot:
            # the plan reads every object and changes none: equal parts of them are one object
            out[spec.name] = snapfmt.load(spec.snapshot, trees=True, model_kinds=CAPACITY_KINDS)
            continue
        snap = capture.capture(spec.kubeconfig, spec.context, name=spec.name, timeout=timeout)
        # documents for audit/simulate: round-trip through the loader so every object has a place

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
