"""``kubedra simulate``'s report as text or Markdown, rendered from ``data/templates/simulate.md.j2``; its
tables are :mod:`kubedra.report.table`'s, at the terminal's width (one line per row in a pipe).

Apart from :mod:`kubedra.report.simulate` so that ``-o json``/``yaml`` does not import Jinja2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from kubedra.report import table as aligned
from kubedra.report import templating
from kubedra.report.output import markdown_table
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
    width = None if markdown else aligned.terminal_width(sys.stdout)  # a pipe or a file: one line per row

    def table(h: Sequence[str], r: Sequence[Sequence[str]], flex: Sequence[int] | None = None) -> str:
        return markdown_table(h, r) if markdown else aligned.render(h, r, width=width, flex=flex)

    headers, rows = summary_rows(sim)
    return (
        templating.markdown()
        .get_template("simulate.md.j2")
        .render(
            markdown=markdown,
            tbl=lambda h, r, flex=None: table(h, r, flex)[:-1],
            para=lambda text, hang="": aligned.paragraph(text, width, hang),
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
