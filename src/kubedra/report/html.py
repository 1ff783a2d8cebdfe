"""Self-contained HTML reports (``--html FILE`` on audit, simulate and plan).

One file, no network: the CSS and JavaScript are inlined from ``data/report/`` and charts are inline SVG.
The API is small::

    from kubedra.report.html import Section, render_report, table
    html = render_report("kubedra audit", [Section("Findings", table(headers, rows), id="findings")])

The page is ``data/templates/page.html.j2`` and the building blocks (table, paragraph, list, code, details,
link, badge) are the macros of ``macros.html.j2``; pages are templates that import them (``plan.html.j2``,
``audit.html.j2``, ``simulation.html.j2``). ``render_report`` escapes the title; section bodies are HTML.
The page's script makes tables filterable, and records any JavaScript error in ``#kubedra-errors``
(the browser tests read it), then marks ``<body data-ready="1">``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import jinja2

from kubedra import __version__
from kubedra.k8s import datafiles
from kubedra.report import templating
from kubedra.safewrite import write_atomic


@dataclass(frozen=True)
class Section:
    title: str
    body: str  # HTML
    id: str = ""


@functools.cache
def _asset(name: str) -> Markup:
    return Markup(datafiles.read_text(f"report/{name}"))


class Markup(str):
    """HTML already built (and escaped) by a helper or a chart here: the templates print it as it is."""

    def __html__(self) -> str:
        return str(self)


def _slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in text).strip("-")
    return "-".join(p for p in out.split("-") if p) or "section"


@functools.cache
def _environment() -> jinja2.Environment:
    env = templating.html()
    env.globals.update(asset=_asset, slug=_slug, version=__version__)
    return env


def template(name: str) -> jinja2.Template:
    """A template of ``data/templates/`` in the HTML environment (its macros: ``template(name).module``)."""
    return _environment().get_template(name)


def macro(template_name: str, name: str, *args: Any, **kwargs: Any) -> str:
    """Call the macro ``name`` of the template ``template_name``; its output (HTML or SVG) as a string."""
    return str(getattr(template(template_name).module, name)(*args, **kwargs))


def link(text: str, href: str) -> Markup:
    """``<a href>`` to an http(s) page (a link to follow, nothing the page loads); other schemes: the text."""
    return Markup(macro("macros.html.j2", "link", text, href))


def badge(text: str, cls: str) -> Markup:
    return Markup(macro("macros.html.j2", "badge", text, cls))


def render_report(title: str, sections: Sequence[Section], subtitle: str = "") -> str:
    return macro("page.html.j2", "page", title, sections, subtitle)


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    id: str = "",
    row_classes: Sequence[str] | None = None,
    filterable: bool = True,
) -> str:
    return macro(
        "macros.html.j2", "table", headers, rows, id=id, row_classes=row_classes, filterable=filterable
    )


def write_file(path: str, text: str) -> None:
    """Write atomically next to ``path`` (nothing half-written on error)."""
    write_atomic(path, text)
