"""What a plan is made of: steps, capacity, waves, one plan per cluster, the plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubedra.plan.inventory import ClusterState


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
    # nodes whose DRA GPUs the capacity counts without knowing them (no catalogue model or GFD labels): the
    # wave's capacity is not checked, which is not a clean plan
    unchecked: list[str] = field(default_factory=list)
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
                "capacityUncheckedNodes": self.unchecked,
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
            "gpuNodesNotPlanned": s.unplanned + [u.name for u in s.unsupported],
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

    @property
    def unplanned(self) -> list[tuple[str, str]]:
        """(cluster, node) of the GPU nodes in none of their cluster's node pools: no wave moves them."""
        return [(c.name, n) for c in self.clusters for n in c.state.unplanned]

    @property
    def unsupported(self) -> list[tuple[str, str, str]]:
        """(cluster, node, why) of the GPU nodes of a vendor the plan has no steps for: no wave moves them."""
        return [(c.name, u.name, u.reason) for c in self.clusters for u in c.state.unsupported]

    @property
    def unchecked(self) -> list[Wave]:
        """Waves whose capacity counts a node's DRA GPUs that kubedra could not derive (not decided)."""
        return [w for w in self.waves if w.unchecked]

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
            "capacityUncheckedWaves": [w.number for w in self.unchecked],
            "gpuNodesNotPlanned": [f"{c}/{n}" for c, n in self.unplanned]
            + [f"{c}/{n}" for c, n, _ in self.unsupported],
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
