"""HTML pages for ``kubedra audit --html`` and ``kubedra simulate --html`` (plan has :mod:`kubedra.report.plan_html`).

The audit page reads the audit's JSON form (``{"targetVersion", "findings", "summary"}``); the simulation page
embeds the simulator's own SVG chart (:func:`kubedra.report.simulate_chart.svg`) next to a device plugin vs DRA density
chart per node pool.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kubedra.report import html as h
from kubedra.report import simulate as render
from kubedra.report.simulate_chart import svg
from kubedra.simulate.results import Simulation
from kubedra.text import count

POOL_LABELS = (
    "kubedra.io/node-pool",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "kops.k8s.io/instancegroup",
    "nvidia.com/gpu.product",
)


SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("info", "info")}


def audit_page(report: dict[str, Any], docs: dict[str, str] | None = None) -> str:
    """The audit page; ``docs`` maps a rule id to its documentation URL (the rule column links there)."""
    docs = docs or {}
    summary = report.get("summary") or {}
    sev = summary.get("bySeverity") or {}
    findings = report.get("findings") or []
    groups = [(rule, [("findings", float(n))]) for rule, n in sorted((summary.get("byRule") or {}).items())]
    per_severity = ", ".join(count(int(n), *SEVERITY_WORDS.get(k, (k, k))) for k, n in sev.items())
    scanned = [count(int(summary.get("objectsScanned") or 0), "object")]
    if summary.get("filesScanned"):
        scanned.insert(0, count(int(summary["filesScanned"]), "file"))
    head = h.para(
        f"Target {report.get('targetVersion')}: {count(int(summary.get('total', len(findings))), 'finding')}"
        + (f" ({per_severity})" if per_severity else "")
        + f"; {' and '.join(scanned)} scanned."
    )
    rows = []
    classes = []
    for f in findings:
        src = f.get("source") or {}
        where = (
            f"{src['file']}:{src.get('line') or ''}".rstrip(":")
            if src.get("file")
            else f"cluster {src.get('cluster')}"
        )
        obj = f.get("object") or {}
        ns = f"{obj['namespace']}/" if obj.get("namespace") else ""
        rule = str(f.get("rule") or "")
        rows.append(
            (
                h.badge(str(f.get("severity")), f"badge badge-{f.get('severity')}"),
                h.link(rule, docs[rule]) if docs.get(rule) else rule,
                f"{obj.get('kind', '')} {ns}{obj.get('name', '')}",
                where,
                f.get("message"),
                f.get("fix"),
            )
        )
        classes.append(f"sev-{f.get('severity')}")
    table = h.table(
        ("Severity", "Rule", "Object", "Where", "Finding", "Fix"), rows, id="findings", row_classes=classes
    )
    chart = h.bar_chart(groups, title="Findings per rule", id="rules-chart") if groups else ""
    not_inspected = summary.get("notInspected") or []
    extra = (
        h.table(
            ("Cluster", "Resource", "Reason"),
            [(x["cluster"], x["resource"], x["reason"]) for x in not_inspected],
        )
        if not_inspected
        else ""
    )
    sections = [
        h.Section("Summary", head + chart, id="summary"),
        h.Section("Findings", table, id="findings-section"),
    ]
    if extra:
        sections.append(h.Section("Not inspected", extra, id="not-inspected"))
    return h.render_report(f"kubedra audit: Kubernetes {report.get('targetVersion')}", sections)


def _pools(sim: Simulation) -> dict[str, str]:
    out: dict[str, str] = {}
    for view in sim.cluster.views.values():
        for n in view.nodes:
            labels = n.labels
            out.setdefault(n.name, next((labels[k] for k in POOL_LABELS if k in labels), "default"))
    return out


def simulation_page(
    sim: Simulation,
    title: str = "kubedra simulate: device plugin vs DRA",
    inputs: Sequence[tuple[str, str]] = (),
) -> str:
    """The simulation page; ``inputs`` is the record of the run (what, value): files, command, versions, time."""
    headers, rows = render.summary_rows(sim)
    pool_of = _pools(sim)
    per_pool: dict[str, dict[str, list[int]]] = defaultdict(dict)  # pool -> mode -> [pods, used, physical]
    for mode, res in sim.results.items():
        for node, use in res.nodes.items():
            acc = per_pool[pool_of.get(node, "default")].setdefault(mode, [0, 0, 0])
            acc[0] += use.pods
            acc[1] += use.used
            acc[2] += use.physical
    groups = []
    table_rows = []
    for pool, modes in sorted(per_pool.items()):
        bars = []
        for mode, (pods, used, physical) in modes.items():
            density = pods / physical if physical else 0.0
            bars.append((render.TITLES.get(mode, mode), round(density, 2)))
            table_rows.append(
                (pool, render.TITLES.get(mode, mode), pods, f"{used} / {physical}", f"{density:.2f}")
            )
        groups.append((pool, bars))
    density_html = h.bar_chart(groups, title="Pods per physical GPU, per node pool", id="density-chart")
    density_html += h.table(("Node pool", "Mode", "Pods", "GPUs used / physical", "Pods per GPU"), table_rows)
    savings, ratio = render.savings_line(sim), render.density_line(sim)
    headline = savings or ratio  # when every pod fits both ways, the pod ratio is 1.00x: GPUs saved lead
    summary = (
        (f'<p id="headline" class="headline">{h.esc(headline)}</p>' if headline else "")
        + h.table(headers, rows, id="summary-table", filterable=False)
        + (h.para(ratio) if savings and ratio else "")
    )
    notes = [*sim.notes, *(str(s) for s in sim.skipped)]
    pending = [
        (render.TITLES.get(mode, mode), *row)
        for mode, res in sim.results.items()
        for row in render.pending_groups(res.pods)
    ]
    sections = [
        h.Section("Summary", summary + (h.items(notes) if notes else ""), id="summary"),
        h.Section(
            "Pending pods",
            h.table(("Mode", "Namespace", "Pods", "Reason"), pending, id="pending")
            if pending
            else h.para("Every pod was placed in every mode.", "okbox"),
            id="pending-section",
        ),
        h.Section("Density per node pool", density_html, id="density"),
        h.Section("GPU use per node", h.raw_svg(svg(sim)), id="nodes"),
    ]
    evicted = [
        (render.TITLES.get(mode, mode), *row)
        for mode, res in sim.results.items()
        for row in render.evicted_rows(res)
    ]
    if evicted:
        sections.append(
            h.Section(
                "Evicted pods (preemption, NoExecute device taints)",
                h.table(("Mode", "Namespace", "Pod", "Reason"), evicted),
                id="evicted",
            )
        )
    if inputs:
        sections.append(
            h.Section("Inputs", h.table(("Input", "Value"), inputs, id="inputs"), id="inputs-section")
        )
    return h.render_report(title, sections)


def write_audit(path: str, report: dict[str, Any], docs: dict[str, str] | None = None) -> None:
    h.write_file(path, audit_page(report, docs))


def write_simulation(
    path: str,
    sim: Simulation,
    inputs: Sequence[tuple[str, str]] = (),
    title: str = "kubedra simulate: device plugin vs DRA",
) -> None:
    h.write_file(path, simulation_page(sim, title, inputs))
