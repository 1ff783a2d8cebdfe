"""``kubedra audit -o markdown``: the findings per severity (``data/templates/audit.md.j2``).

Apart from :mod:`kubedra.report.audit` so that the table, JSON and SARIF outputs do not load Jinja2.
"""

from __future__ import annotations

from kubedra.audit.engine import Report
from kubedra.audit.model import SEVERITIES
from kubedra.report import output, templating
from kubedra.report.audit import HEADERS, finding_row, summary_line


def markdown(report: Report) -> str:
    """The findings per severity in Markdown (``data/templates/audit.md.j2``)."""
    sections = []
    for sev in SEVERITIES:
        rows = [finding_row(f)[1:] for f in report.findings if f.severity == sev]
        if rows:
            sections.append((f"{sev.capitalize()} ({len(rows)})", rows))
    return (
        templating.markdown()
        .get_template("audit.md.j2")
        .render(
            target=report.target,
            summary=summary_line(report),
            sections=sections,
            headers=HEADERS[1:],
            tbl=lambda h, r: output.markdown_table(h, r)[:-1],
        )
    )
