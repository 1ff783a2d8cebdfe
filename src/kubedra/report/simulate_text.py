"""``kubedra simulate``'s report as text or Markdown, rendered from ``data/templates/simulate.md.j2``.

Apart from :mod:`kubedra.report.simulate` so that ``-o json``/``yaml`` does not import Jinja2.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubedra.report import templating
from kubedra.report.output import markdown_table, plain_table
from kubedra.report.simulate import (
    WITH,
    density_line,
    evicted_rows,
    header_line,
    pending_groups,
    summary_rows,
)
from kubedra.simulate.results import TITLES, Simulation


def text(
    sim: Simulation, target: str, scoring: str, *, markdown: bool = False, extra: Sequence[str] = ()
) -> str:
    """The whole report as plain text (table) or Markdown (``data/templates/simulate.md.j2``)."""
    table = markdown_table if markdown else plain_table
    headers, rows = summary_rows(sim)
    return (
        templating.markdown()
        .get_template("simulate.md.j2")
        .render(
            markdown=markdown,
            tbl=lambda h, r: table(h, r)[:-1],
            title=header_line(sim, target, scoring),
            headers=headers,
            rows=rows,
            density=density_line(sim),
            modes=[
                {
                    "label": TITLES.get(mode, mode),
                    "with_": WITH.get(mode, "with " + mode),
                    "pending": pending_groups(r.pods),
                    "pending_count": r.pending,
                    "evicted": evicted_rows(r),
                }
                for mode, r in sim.results.items()
            ],
            skipped=[[str(s.location or ""), s.what, s.reason] for s in sim.skipped],
            notes=[*sim.notes, *extra],
        )
    )
