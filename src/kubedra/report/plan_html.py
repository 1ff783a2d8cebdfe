"""The plan as a self-contained HTML page: summary, wave timeline, capacity per pool, blockers, runbook.

The page is ``data/templates/plan.html.j2``; this module hands it the plan and the rows and charts it shows.
"""

from __future__ import annotations

from typing import Any

from kubedra.plan.model import Plan, Wave
from kubedra.report import charts
from kubedra.report import html as h
from kubedra.text import count


def _wave_facts(w: Wave) -> list[tuple[str, Any]]:
    facts: list[tuple[str, Any]] = [
        ("Cluster", w.cluster),
        ("Node pool", w.pool or "control plane"),
        ("Nodes", ", ".join(w.nodes) or "-"),
        ("Blast radius", w.blast_radius),
        ("Duration", f"{w.duration_minutes} min"),
        ("Rollback", f"~{w.rollback_minutes} min ({w.rollback_note})"),
        ("Soak", f"{w.soak_hours} h" if w.soak_hours else "-"),
    ]
    if w.capacity is not None:
        c = w.capacity
        before = f"before {c.before}, " if c.first else ""
        facts.append(("Pool GPUs", f"{before}during {c.during}, after {c.after}; in use {c.demand:g}"))
    return facts


def _short(w: Wave) -> bool:
    return w.capacity is not None and w.capacity.short > 0


def _timeline(plan: Plan) -> h.Markup:
    entries = []
    soaks = []
    t = 0.0
    for w in plan.waves:
        dur = w.duration_minutes / 60 / 24
        entries.append(
            (
                f"{w.number} {w.cluster}/{w.pool or 'control plane'}",
                w.cluster,
                t,
                dur,
                "flagged" if _short(w) else w.kind,
            )
        )
        soaks.append(w.soak_hours / 24)
        t += dur + w.soak_hours / 24
    return charts.timeline(
        entries,
        title="Wave timeline (days)",
        unit="d",
        id="wave-timeline",
        soaks=soaks,
        legend=(
            ("soak", f"soak ({plan.soak_hours} h)"),
            *((("flagged", "short of GPUs"),) if any(_short(w) for w in plan.waves) else ()),
        ),
        group_noun="cluster",
    )


def _capacity_chart(plan: Plan) -> h.Markup:
    groups = [
        (
            f"{c.name}/{p['name']}",
            [
                ("device plugin", float(p["gpusDevicePlugin"])),
                ("DRA", float(p["gpusDRA"])),
                ("in use", float(p["gpusInUse"])),
            ],
        )
        for c in plan.clusters
        for p in c.pools
    ]
    return charts.bar_chart(groups, title="GPUs per node pool: device plugin vs DRA", id="capacity-chart")


def _object(o: dict[str, Any]) -> str:
    return f"{o.get('kind', '')} {o.get('namespace') or ''}/{o.get('name', '')}"


def render(plan: Plan) -> str:
    return h.template("plan.html.j2").render(
        Section=h.Section,
        count=count,
        plan=plan,
        s=plan.summary(),
        flagged=[str(w.number) for w in plan.flagged],
        unchecked=[str(w.number) for w in plan.unchecked],
        unplanned=[f"{c}/{n}" for c, n in plan.unplanned],
        unsupported=[f"{c}/{n}" for c, n, _ in plan.unsupported],
        unsupported_why="; ".join(sorted({why for _, _, why in plan.unsupported})),
        wave_facts=_wave_facts,
        cluster_rows=[
            (
                c.name,
                c.state.spec.distribution,
                c.state.spec.criticality,
                c.state.version,
                f"{c.change['risk']} ({c.change['riskReasons']})",
                c.change["blastRadius"],
                c.change["rollbackPlan"],
            )
            for c in plan.clusters
        ],
        timeline=_timeline(plan),
        wave_rows=[
            (
                w.number,
                w.cluster,
                w.pool or "control plane",
                len(w.nodes),
                w.gpus,
                f"{w.capacity.during}/{w.capacity.demand:g}" if w.capacity else "-",
                f"{w.rollback_minutes} min",
                "; ".join(w.warnings) or "-",
            )
            for w in plan.waves
        ],
        wave_flags=["flagged" if _short(w) else "" for w in plan.waves],
        capacity_chart=_capacity_chart(plan),
        pool_rows=[
            (c.name, p["name"], p["nodes"], p["gpusDevicePlugin"], p["gpusDRA"], p["gpusInUse"], p["gpuPods"])
            for c in plan.clusters
            for p in c.pools
        ],
        notes=[f"{c.name}: {n}" for c in plan.clusters for n in c.notes],
        blocker_rows=[
            (c.name, b["rule"], _object(b["object"]), b["message"], b["fix"])
            for c in plan.clusters
            for b in c.blockers
        ],
    )
