"""The plan as a self-contained HTML page: summary, wave timeline, capacity per pool, blockers, runbook."""

from __future__ import annotations

from kubedra.plan.model import Plan, Wave
from kubedra.report import html as h
from kubedra.text import count


def _wave_body(w: Wave) -> str:
    facts = [
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
    out = [h.table(("Field", "Value"), facts, filterable=False)]
    out += [f'<div class="warnbox">{h.esc(x)}</div>' for x in w.warnings]
    for i, s in enumerate(w.steps, 1):
        out.append(f"<h4>{i}. {h.esc(s.title)}</h4>")
        if s.note:
            out.append(h.para(s.note, "note"))
        if s.commands:
            out.append(h.code(s.commands))
    for name, text in w.files.items():
        out.append(h.details(name, h.code(text.rstrip("\n").splitlines())))
    out.append("<h4>Go / no-go gate</h4>" + h.items(w.gate))
    out.append(f"<h4>Rollback (~{w.rollback_minutes} min)</h4>" + h.code(w.rollback))
    return "".join(out)


def sections(plan: Plan) -> list[h.Section]:
    s = plan.summary()
    summary = [
        h.para(
            f"{count(s['clusters'], 'cluster')}, {count(s['gpuNodes'], 'GPU node')}, {count(s['gpus'], 'GPU')}, "
            f"{count(s['waves'], 'wave')}, "
            f"{plan.soak_hours} h soak between waves: about {s['estimatedCalendarDays']} days end to end."
        )
    ]
    if plan.blocked:
        summary.append(
            f'<div class="warnbox">Blocked: {count(s["blockers"], "audit error")} to fix before wave 1.</div>'
        )
    if plan.flagged:
        summary.append(
            '<div class="warnbox">Waves '
            + h.esc(", ".join(str(w.number) for w in plan.flagged))
            + " would leave GPU workloads without GPUs.</div>"
        )
    if not plan.blocked and not plan.flagged:
        summary.append(
            '<div class="okbox">No blockers; every wave keeps enough GPUs for the workloads.</div>'
        )
    summary.append(
        h.table(
            ("Cluster", "Distribution", "Criticality", "Version", "Risk", "Blast radius", "Rollback plan"),
            [
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
            id="clusters",
        )
    )

    entries = []
    soaks = []
    t = 0.0
    for w in plan.waves:
        dur = w.duration_minutes / 60 / 24
        cls = "flagged" if w.capacity is not None and w.capacity.short > 0 else w.kind
        entries.append((f"{w.number} {w.cluster}/{w.pool or 'control plane'}", w.cluster, t, dur, cls))
        soaks.append(w.soak_hours / 24)
        t += dur + w.soak_hours / 24
    timeline = h.timeline(
        entries,
        title="Wave timeline (days)",
        unit="d",
        id="wave-timeline",
        soaks=soaks,
        legend=(
            ("nodes", "wave (work)"),
            ("soak", f"soak ({plan.soak_hours} h)"),
            ("flagged", "short of GPUs"),
        ),
    )
    wave_rows = [
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
    ]
    flags = ["flagged" if w.capacity is not None and w.capacity.short > 0 else "" for w in plan.waves]
    waves_body = timeline + h.table(
        ("Wave", "Cluster", "Pool", "Nodes", "GPUs", "GPUs during/in use", "Rollback", "Warnings"),
        wave_rows,
        id="waves",
        row_classes=flags,
    )

    groups = []
    for c in plan.clusters:
        for p in c.pools:
            groups.append(
                (
                    f"{c.name}/{p['name']}",
                    [
                        ("device plugin", float(p["gpusDevicePlugin"])),
                        ("DRA", float(p["gpusDRA"])),
                        ("in use", float(p["gpusInUse"])),
                    ],
                )
            )
    capacity = h.bar_chart(groups, title="GPUs per node pool: device plugin vs DRA", id="capacity-chart")
    pool_rows = [
        (c.name, p["name"], p["nodes"], p["gpusDevicePlugin"], p["gpusDRA"], p["gpusInUse"], p["gpuPods"])
        for c in plan.clusters
        for p in c.pools
    ]
    capacity += h.table(
        ("Cluster", "Pool", "Nodes", "GPUs (DP)", "GPUs (DRA)", "In use", "GPU pods"), pool_rows
    )
    notes = [f"{c.name}: {n}" for c in plan.clusters for n in c.notes]
    if notes:
        capacity += h.items(notes)

    blockers = h.table(
        ("Cluster", "Rule", "Object", "Finding", "Fix"),
        [
            (
                c.name,
                b["rule"],
                f"{b['object'].get('kind', '')} {b['object'].get('namespace') or ''}/{b['object'].get('name', '')}",
                b["message"],
                b["fix"],
            )
            for c in plan.clusters
            for b in c.blockers
        ],
        id="blockers",
        row_classes=["error" for c in plan.clusters for _ in c.blockers],
    )
    runbook = "".join(
        h.details(f"Wave {w.number}: {w.title}", _wave_body(w), open_=False) for w in plan.waves
    )
    return [
        h.Section("Summary", "".join(summary), id="summary"),
        h.Section("Waves", waves_body, id="waves-section"),
        h.Section("Capacity", capacity, id="capacity"),
        h.Section("Blockers", blockers, id="blockers-section"),
        h.Section("Runbook", runbook, id="runbook"),
    ]


def render(plan: Plan) -> str:
    return h.render_report(
        f"kubedra plan: GPU fleet to DRA (Kubernetes {plan.target})",
        sections(plan),
        subtitle=f"waves of ~{plan.wave_size}% of GPU nodes, {plan.soak_hours} h soak",
    )
