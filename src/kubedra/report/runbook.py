"""The plan as a runbook a team pastes into its change process: Markdown.

The document is ``data/templates/runbook.md.j2``; this module hands it the plan and the rows of its tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedra.plan.model import ClusterPlan, Plan, Wave
from kubedra.report import templating
from kubedra.report.output import markdown_table
from kubedra.text import count, noun


def _hours(minutes: int) -> str:
    return f"{minutes} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return markdown_table(headers, rows)[:-1]  # the template's line ends it


def _wave_facts(w: Wave) -> list[tuple[str, Any]]:
    facts: list[tuple[str, Any]] = [
        ("Cluster", w.cluster),
        ("Kind", w.kind),
        ("Node pool", w.pool or "-"),
        ("Nodes", ", ".join(w.nodes) or "-"),
        ("Blast radius", w.blast_radius),
        ("Estimated duration", _hours(w.duration_minutes)),
        ("Rollback estimate", f"{_hours(w.rollback_minutes)} ({w.rollback_note})"),
        ("Soak before the next wave", f"{w.soak_hours} h" if w.soak_hours else "-"),
    ]
    if w.capacity is not None:
        c = w.capacity
        facts.append(
            (
                "Pool capacity (GPUs)",
                (f"before {c.before}, " if c.first else "")
                + f"during the wave {c.during}, after {c.after}; in use {c.demand:g}",
            )
        )
    return facts


def _cluster(c: ClusterPlan) -> dict[str, Any]:
    st, ch = c.state, c.change
    return {
        "name": c.name,
        "facts": [
            ("Distribution", st.spec.distribution),
            ("Criticality", st.spec.criticality),
            ("Source", st.spec.snapshot or f"context {st.spec.context}"),
            ("Captured", st.snapshot.header.captured_at or "-"),
            ("Current version", st.version or "unknown"),
            ("Control-plane hops", " → ".join(c.hops) or "none"),
            ("GPU nodes", len(st.gpu_nodes)),
        ],
        "change": [
            ("Risk", f"{ch['risk']} ({ch['riskReasons']})"),
            ("Test evidence", "<br>".join(ch["testEvidence"])),
            ("Rollback plan", ch["rollbackPlan"]),
            ("Blast radius", ch["blastRadius"]),
            ("Schedule", ch["schedule"]),
        ],
        "pools": [
            (
                p["name"],
                p["nodes"],
                ", ".join(p["models"]) or "-",
                p["gpusDevicePlugin"],
                p["gpusDRA"],
                p["gpusInUse"],
                p["gpuPods"],
            )
            for p in c.pools
        ],
        "notes": c.notes,
    }


def markdown(plan: Plan) -> str:
    return (
        templating.markdown()
        .get_template("runbook.md.j2")
        .render(
            count=count,
            noun=noun,
            hours=_hours,
            md_table=_md_table,
            wave_facts=_wave_facts,
            plan=plan,
            s=plan.summary(),
            flagged=", ".join(str(w.number) for w in plan.flagged),
            unchecked=", ".join(str(w.number) for w in plan.unchecked),
            unplanned=", ".join(f"{c}/{n}" for c, n in plan.unplanned),
            unsupported=", ".join(f"{c}/{n}" for c, n, _ in plan.unsupported),
            unsupported_why="; ".join(sorted({why for _, _, why in plan.unsupported})),
            wave_rows=[
                (
                    w.number,
                    w.cluster,
                    w.pool or "control plane",
                    len(w.nodes),
                    w.gpus,
                    "verify + no pending GPU pods + SLOs",
                    _hours(w.rollback_minutes),
                    f"{w.soak_hours} h" if w.soak_hours else "-",
                )
                for w in plan.waves
            ],
            blocker_rows=[
                (c.name, b["rule"], _where(b), b["message"], b["fix"])
                for c in plan.clusters
                for b in c.blockers
            ],
            clusters=[_cluster(c) for c in plan.clusters],
        )
    )


def _where(b: dict[str, Any]) -> str:
    src = b.get("source") or {}
    if src.get("file"):
        return f"{src['file']}:{src.get('line') or ''}".rstrip(":")
    obj = b.get("object") or {}
    return f"{obj.get('kind', '')} {obj.get('namespace') or ''}/{obj.get('name', '')}".strip()
