"""The plan as a runbook a team pastes into its change process: Markdown, and sections for the HTML report."""

from __future__ import annotations

from typing import Any

from kubedra.plan.model import Plan, Wave
from kubedra.report.output import markdown_table
from kubedra.text import count, noun


def _code(lines: list[str], lang: str = "sh") -> str:
    return f"```{lang}\n" + "\n".join(lines) + "\n```\n"


def _hours(minutes: int) -> str:
    return f"{minutes} min" if minutes < 120 else f"{minutes / 60:.1f} h"


def wave_markdown(w: Wave) -> str:
    out = [f"### Wave {w.number}: {w.title}\n"]
    facts = [
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
    out.append(markdown_table(("Field", "Value"), facts))
    for warn in w.warnings:
        out.append(f"\n> **WARNING:** {warn}\n")
    for i, s in enumerate(w.steps, 1):
        out.append(f"\n**{i}. {s.title}**\n")
        if s.note:
            out.append(f"\n_{s.note}_\n")
        if s.commands:
            out.append("\n" + _code(s.commands))
    for name, text in w.files.items():
        out.append(
            f"\n<details open><summary>{name}</summary>\n\n" + _code(text.rstrip("\n").splitlines(), "yaml")
        )
        out.append("\n</details>\n")
    out.append("\n**Go / no-go gate**\n\n" + "".join(f"- [ ] {g}\n" for g in w.gate))
    out.append(f"\n**Rollback** (about {_hours(w.rollback_minutes)})\n\n" + _code(w.rollback))
    return "".join(out)


def markdown(plan: Plan) -> str:
    s = plan.summary()
    out = [
        f"# GPU fleet migration to DRA (Kubernetes {plan.target})\n\n",
        f"{count(s['clusters'], 'cluster')}, {count(s['gpuNodes'], 'GPU node')}, {count(s['gpus'], 'GPU')}, "
        f"{count(s['waves'], 'wave')} of about "
        f"{plan.wave_size}% of a cluster's GPU nodes, {plan.soak_hours} h soak between waves "
        f"(about {s['estimatedCalendarDays']} days end to end). Clusters go from low to high criticality; inside a "
        "cluster one node pool at a time. A node runs either the device plugin or the DRA driver, never both.\n",
    ]
    if plan.blocked:
        out.append(f"\n**Blocked:** {count(s['blockers'], 'audit error')} must be fixed before wave 1.\n")
    if plan.flagged:
        out.append(
            f"\n**Capacity:** {noun(len(plan.flagged), 'wave')} "
            + ", ".join(str(w.number) for w in plan.flagged)
            + " would leave GPU workloads without GPUs.\n"
        )
    out.append("\n## Waves\n\n")
    out.append(
        markdown_table(
            ("Wave", "Cluster", "Pool", "Nodes", "GPUs", "Gate", "Rollback", "Soak"),
            [
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
        )
    )
    out.append("\n## Blockers (fix before wave 1)\n\n")
    rows = [(c.name, b["rule"], _where(b), b["message"], b["fix"]) for c in plan.clusters for b in c.blockers]
    out.append(markdown_table(("Cluster", "Rule", "Where", "Finding", "Fix"), rows) if rows else "None.\n")
    for c in plan.clusters:
        out.append(f"\n## Cluster {c.name}\n\n")
        st = c.state
        out.append(
            markdown_table(
                ("Field", "Value"),
                [
                    ("Distribution", st.spec.distribution),
                    ("Criticality", st.spec.criticality),
                    ("Source", st.spec.snapshot or f"context {st.spec.context}"),
                    ("Captured", st.snapshot.header.captured_at or "-"),
                    ("Current version", st.version or "unknown"),
                    ("Control-plane hops", " → ".join(c.hops) or "none"),
                    ("GPU nodes", len(st.gpu_nodes)),
                ],
            )
        )
        out.append("\n### Change record\n\n")
        ch = c.change
        out.append(
            markdown_table(
                ("Field", "Value"),
                [
                    ("Risk", f"{ch['risk']} ({ch['riskReasons']})"),
                    ("Test evidence", "<br>".join(ch["testEvidence"])),
                    ("Rollback plan", ch["rollbackPlan"]),
                    ("Blast radius", ch["blastRadius"]),
                    ("Schedule", ch["schedule"]),
                ],
            )
        )
        out.append("\n### Node pools: simulated GPU capacity\n\n")
        if c.pools:
            out.append(
                markdown_table(
                    (
                        "Pool",
                        "Nodes",
                        "Models",
                        "GPUs (device plugin)",
                        "GPUs (DRA)",
                        "GPUs in use",
                        "GPU pods",
                    ),
                    [
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
                )
            )
        else:
            out.append("No GPU node pools.\n")
        if c.notes:
            out.append("\n" + "".join(f"- {n}\n" for n in c.notes))
    out.append("\n## Runbook\n\n")
    for w in plan.waves:
        out.append(wave_markdown(w) + "\n")
    out.append(
        "\n## After the last wave\n\n- Remove the device plugin (Helm release or GPU Operator `devicePlugin.enabled=false`) "
        "once no node needs it.\n- Keep the snapshots of every wave until the post-mortem is written.\n"
        "- Post-mortem: what the gates caught, rollback rehearsals, time per wave, capacity seen vs planned.\n"
    )
    return "".join(out)


def _where(b: dict[str, Any]) -> str:
    src = b.get("source") or {}
    if src.get("file"):
        return f"{src['file']}:{src.get('line') or ''}".rstrip(":")
    obj = b.get("object") or {}
    return f"{obj.get('kind', '')} {obj.get('namespace') or ''}/{obj.get('name', '')}".strip()
