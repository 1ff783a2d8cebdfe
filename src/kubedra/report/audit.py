"""Human and machine renderings of an audit report (JSON/YAML go through kubedra.report.output directly):
the table, CSV and SARIF; Markdown is :mod:`kubedra.report.audit_markdown` (a template)."""

from __future__ import annotations

import sys
from typing import Any

import click

from kubedra.audit.engine import Report
from kubedra.audit.model import SEVERITIES
from kubedra.k8s.findings import Finding
from kubedra.report import output, table
from kubedra.text import count

HEADERS = ("Severity", "Rule", "Object", "Where", "Message", "Fix")


def finding_row(f: Finding) -> list[Any]:
    where = f.where
    if f.source.cluster is not None and f.namespace:
        where = f"{where} ns/{f.namespace}"
    return [f.severity, f.rule, str(f.object), where, f.message, f.fix]


def summary_line(report: Report) -> str:
    s = report.summary()
    sev = s["bySeverity"]
    parts = [
        f"{count(s['total'], 'finding')}: {count(sev['error'], 'error')}, {count(sev['warning'], 'warning')}, "
        f"{sev['info']} info"
    ]
    scanned = []
    if report.files_scanned:
        scanned.append(count(report.files_scanned, "file"))
    if report.clusters:
        scanned.append(count(len(report.clusters), "cluster"))
    scanned.append(count(report.objects_scanned, "object"))
    parts.append("scanned " + ", ".join(scanned))
    if s["notInspected"]:
        parts.append(f"{count(len(s['notInspected']), 'resource type')} NOT inspected")
    if report.ignored:
        parts.append(f"{report.ignored} ignored")
    return f"target {report.target}: " + "; ".join(parts)


SEVERITY_COLOURS = {"error": "red", "warning": "yellow", "info": "blue"}


def short_message(message: str) -> str:
    """The message's first sentence (the table's default column; -o wide and the other formats keep it all)."""
    for stop in (". ", "; "):
        head, sep, _ = message.partition(stop)
        if sep:
            return head
    return message


TABLE = (
    3,
    0,
    1,
    2,
    4,
    5,
)  # the table's columns: where (file:line) first, then severity, rule, object, message, fix


def print_table(report: Report, *, wide: bool = False) -> None:
    """One row per finding, errors first: file:line (whole), severity (in colour on a terminal), rule, object
    and the short message; ``wide`` has the whole message and the fix (:mod:`kubedra.report.table` lays it
    out for the terminal's width)."""
    if not report.findings:
        click.echo(table.paragraph(f"No findings. {summary_line(report)}", table.terminal_width(sys.stdout)))
        return
    order = {sev: i for i, sev in enumerate(SEVERITIES)}
    findings = sorted(report.findings, key=lambda f: order.get(f.severity, len(order)))
    rows = [finding_row(f) for f in findings]
    if not wide:
        rows = [[*r[:4], short_message(r[4])] for r in rows]
    columns = TABLE[: len(rows[0])]
    output.print_table(
        [HEADERS[c] for c in columns],
        [[r[c] for c in columns] for r in rows],
        flex=range(4, len(columns)),
        colours={1: SEVERITY_COLOURS},
    )
    click.echo(table.paragraph(summary_line(report), table.terminal_width(sys.stdout)))


def csv(report: Report) -> str:
    return output.csv_table(HEADERS, [finding_row(f) for f in report.findings])
