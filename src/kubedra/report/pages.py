"""HTML pages for ``kubedra audit --html FILE`` and ``kubedra simulate --html FILE`` (plan has :mod:`kubedra.report.plan_html`).

The audit page reads the audit's JSON form (``{"targetVersion", "findings", "summary"}``); the simulation page
embeds the simulator's own SVG chart (:func:`kubedra.report.simulate_chart.svg`) next to a device plugin vs DRA density
chart per node pool.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kubedra import vendors
from kubedra.report import charts
from kubedra.report import html as h
from kubedra.report import simulate as render
from kubedra.report.simulate_chart import svg
from kubedra.simulate.results import TITLES, Simulation
from kubedra.text import count

# the node labels that name a node's pool, in order; then each vendor's GPU product label (GPU feature discovery's)
POOL_LABELS = (
    "kubedra.io/node-pool",
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "kops.k8s.io/instancegroup",
)


def _pool_labels() -> tuple[str, ...]:
    return (*POOL_LABELS, *(v.labels.product for v in vendors.all() if v.labels.product))


SEVERITY_WORDS = {"error": ("error", "errors"), "warning": ("warning", "warnings"), "info": ("info", "info")}


def audit_page(report: dict[str, Any], docs: dict[str, str] | None = None) -> str:
    """The audit page (``data/templates/audit.html.j2``); ``docs`` maps a rule id to its documentation URL
    (the rule column links there)."""
    docs = docs or {}
    summary = report.get("summary") or {}
    sev = summary.get("bySeverity") or {}
    findings = report.get("findings") or []
    scanned = [count(int(summary.get("objectsScanned") or 0), "object")]
    if summary.get("filesScanned"):
        scanned.insert(0, count(int(summary["filesScanned"]), "file"))
    rows = []
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
    return h.template("audit.html.j2").render(
        Section=h.Section,
        count=count,
        bar_chart=charts.bar_chart,
        target=str(report.get("targetVersion")),
        total=int(summary.get("total", len(findings))),
        per_severity=", ".join(count(int(n), *SEVERITY_WORDS.get(k, (k, k))) for k, n in sev.items()),
        scanned=" and ".join(scanned),
        groups=[(rule, [("finding", float(n))]) for rule, n in sorted((summary.get("byRule") or {}).items())],
        rows=rows,
        row_classes=[f"sev-{f.get('severity')}" for f in findings],
        not_inspected=[(x["cluster"], x["resource"], x["reason"]) for x in summary.get("notInspected") or []],
    )


def _pools(sim: Simulation) -> dict[str, str]:
    out: dict[str, str] = {}
    keys = _pool_labels()
    for view in sim.cluster.views.values():
        for n in view.nodes:
            labels = n.labels
            out.setdefault(n.name, next((labels[k] for k in keys if k in labels), "default"))
    return out


def simulation_page(
    sim: Simulation,
    title: str = "kubedra simulate: device plugin vs DRA",
    inputs: Sequence[tuple[str, str]] = (),
) -> str:
    """The simulation page (``data/templates/simulation.html.j2``); ``inputs`` is the record of the run
    (what, value): files, command, versions, time."""
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
            bars.append((TITLES.get(mode, mode), round(density, 2)))
            table_rows.append((pool, TITLES.get(mode, mode), pods, f"{used} / {physical}", f"{density:.2f}"))
        groups.append((pool, bars))
    savings, ratio = render.savings_line(sim), render.density_line(sim)
    return h.template("simulation.html.j2").render(
        Section=h.Section,
        bar_chart=charts.bar_chart,
        title=title,
        headline=savings or ratio,  # when every pod fits both ways, the pod ratio is 1.00x: GPUs saved lead
        savings=savings,
        ratio=ratio,
        summary_headers=headers,
        summary_rows=rows,
        notes=list(sim.notes),
        # folded under a count: one line per object would push the pending pods below the fold
        skipped=[str(s) for s in sim.skipped],
        skipped_summary=count(len(sim.skipped), "object") + " not simulated",
        pending=[
            (TITLES.get(mode, mode), *row)
            for mode, res in sim.results.items()
            for row in render.pending_groups(res.pods)
        ],
        density_groups=groups,
        density_rows=table_rows,
        node_chart=svg(sim),
        evicted=[
            (TITLES.get(mode, mode), *row)
            for mode, res in sim.results.items()
            for row in render.evicted_rows(res)
        ],
        inputs=inputs,
    )


def write_audit(path: str, report: dict[str, Any], docs: dict[str, str] | None = None) -> None:
    h.write_file(path, audit_page(report, docs))


def write_simulation(
    path: str,
    sim: Simulation,
    inputs: Sequence[tuple[str, str]] = (),
    title: str = "kubedra simulate: device plugin vs DRA",
) -> None:
    h.write_file(path, simulation_page(sim, title, inputs))
