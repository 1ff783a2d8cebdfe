"""Self-contained HTML reports (``--html FILE`` on audit, simulate and plan).

One file, no network: the CSS and JavaScript are inlined from ``data/report/`` and charts are inline SVG.
The API is small::

    from kubedra.report.html import Section, render_report, table
    html = render_report("kubedra audit", [Section("Findings", table(headers, rows), id="findings")])

``render_report`` escapes the title; section bodies are HTML built with the helpers here (which escape every
value). The page's script makes tables filterable, and records any JavaScript error in ``#kubedra-errors``
(the browser tests read it), then marks ``<body data-ready="1">``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from importlib import resources
from typing import Any

import jinja2

from kubedra import __version__
from kubedra.report import templating
from kubedra.safewrite import write_atomic


@dataclass(frozen=True)
class Section:
    title: str
    body: str  # HTML
    id: str = ""


@functools.cache
def _asset(name: str) -> Markup:
    return Markup(resources.files("kubedra.data").joinpath(f"report/{name}").read_text(encoding="utf-8"))


class Markup(str):
    """HTML already built (and escaped) by a helper here: :func:`esc`, :func:`table` and the templates keep
    it as it is."""

    def __html__(self) -> str:
        return str(self)


def esc(value: Any) -> str:
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return escape("" if value is None else str(value), quote=True)


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


def _macro(name: str, *args: Any, template_name: str = "macros.html.j2", **kwargs: Any) -> str:
    return str(getattr(template(template_name).module, name)(*args, **kwargs))


def link(text: str, href: str) -> Markup:
    """``<a href>`` to an http(s) page (a link to follow, nothing the page loads); other schemes: the text."""
    return Markup(_macro("link", text, href))


def badge(text: str, cls: str) -> Markup:
    return Markup(_macro("badge", text, cls))


def render_report(title: str, sections: Sequence[Section], subtitle: str = "") -> str:
    return _macro("page", title, sections, subtitle, template_name="page.html.j2")


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    id: str = "",
    row_classes: Sequence[str] | None = None,
    filterable: bool = True,
) -> str:
    return _macro("table", headers, rows, id=id, row_classes=row_classes, filterable=filterable)


def para(text: str, cls: str = "") -> str:
    return _macro("para", text, cls)


def items(values: Iterable[str]) -> str:
    return _macro("items", values)


def code(lines: Sequence[str]) -> str:
    return _macro("code", lines)


def details(summary: str, inner: str, open_: bool = False) -> str:
    return _macro("details", summary, inner, open_)


def raw_svg(svg: str) -> str:
    """Embed an SVG document (from a trusted generator) inline, without its XML prolog."""
    return _macro("raw_svg", svg)


PALETTE = ("#e4572e", "#17a398", "#3b6ea5", "#f3a712", "#8e5572", "#6c757d")


def bar_chart(
    groups: Sequence[tuple[str, Sequence[tuple[str, float]]]],
    *,
    title: str,
    unit: str = "",
    id: str = "",
) -> str:
    """Grouped horizontal bars: one group per label (a node pool), one bar per series (before/after...)."""
    series = list(dict.fromkeys(name for _, bars in groups for name, _ in bars))
    color = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    vmax = max((v for _, bars in groups for _, v in bars), default=0) or 1
    left, bar_w, row = 180, 360, 18
    height = 40 + sum(len(bars) * row + 14 for _, bars in groups) + 24
    width = left + bar_w + 120
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{esc(title)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" class="bars"'
        + (f' id="{esc(id)}"' if id else "")
        + ">",
        f"<title>{esc(title)}</title>",
        f'<text x="8" y="18" class="ctitle">{esc(title)}</text>',
    ]
    y = 34
    for label, bars in groups:
        parts.append(f'<text x="8" y="{y + 12}" class="glabel">{esc(label)}</text>')
        for name, value in bars:
            w = bar_w * max(0.0, float(value)) / vmax
            parts.append(
                f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{row - 4}" fill="{color[name]}" '
                f'data-series="{esc(name)}" data-value="{value:g}"><title>{esc(label)} {esc(name)}: '
                f"{value:g}{esc(unit)}</title></rect>"
                f'<text x="{left + w + 4:.1f}" y="{y + 11}" class="vlabel">{value:g}{esc(unit)} {esc(name)}</text>'
            )
            y += row
        y += 14
    lx = 8
    for s in series:
        parts.append(
            f'<rect x="{lx}" y="{height - 16}" width="10" height="10" fill="{color[s]}"/>'
            f'<text x="{lx + 14}" y="{height - 7}" class="legend">{esc(s)}</text>'
        )
        lx += 24 + 7 * len(s)
    parts.append("</svg>")
    return '<div class="chart">' + "".join(parts) + "</div>"


_STEPS = (0.25, 0.5, 1, 2, 5, 7, 14, 30, 60, 90, 180, 365)


def _tick_step(end: float, most: int = 8) -> float:
    """The smallest round step that puts at most ``most`` ticks on [0, end]."""
    return next((s for s in _STEPS if end / s <= most), end / most)


def timeline(
    entries: Sequence[tuple[str, str, float, float, str]],
    *,
    title: str,
    unit: str = "d",
    id: str = "",
    soaks: Sequence[float] = (),
    legend: Sequence[tuple[str, str]] = (),
) -> str:
    """A Gantt-like timeline: (label, group, start, duration, css class) per row; times in ``unit``.

    ``soaks[i]`` draws a lighter bar after row ``i`` (the wait before the next row); ``legend`` is
    (css class, text) pairs drawn as swatches under the title. Ticks fall on round steps of ``unit``."""
    soak = list(soaks) + [0.0] * (len(entries) - len(soaks))
    end = max((s + d + soak[i] for i, (_, _, s, d, _) in enumerate(entries)), default=1) or 1
    left, span, row = 230, 520, 20
    top = 40 + (18 if legend else 0)
    height = top + row * len(entries) + 24
    width = left + span + 40
    groups = list(dict.fromkeys(g for _, g, _, _, _ in entries))
    color = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{esc(title)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" class="timeline"'
        + (f' id="{esc(id)}"' if id else "")
        + ">",
        f"<title>{esc(title)}</title>",
        f'<text x="8" y="18" class="ctitle">{esc(title)}</text>',
    ]
    x = 8.0
    for cls, text in legend:
        parts.append(
            f'<rect x="{x:.0f}" y="28" width="14" height="10" fill="{PALETTE[0]}" class="{esc(cls)}"/>'
            f'<text x="{x + 18:.0f}" y="37" class="tick legend">{esc(text)}</text>'
        )
        x += 26 + 7 * len(text)
    step = _tick_step(end)
    tick = 0.0
    while tick <= end + 1e-9:
        tx = left + span * tick / end
        parts.append(
            f'<line x1="{tx:.1f}" y1="{top - 4}" x2="{tx:.1f}" y2="{height - 20}" class="grid"/>'
            f'<text x="{tx:.1f}" y="{height - 6}" class="tick">{tick:g}{esc(unit)}</text>'
        )
        tick += step
    y = top
    for i, (label, group, start, dur, cls) in enumerate(entries):
        bx = left + span * start / end
        w = max(2.0, span * dur / end)
        parts.append(
            f'<text x="8" y="{y + 12}" class="glabel">{esc(label)}</text>'
            f'<rect x="{bx:.1f}" y="{y}" width="{w:.1f}" height="{row - 6}" fill="{color[group]}" '
            f'class="{esc(cls)}" data-group="{esc(group)}"><title>{esc(label)}: {start:g}{esc(unit)} + '
            f"{dur:g}{esc(unit)}</title></rect>"
        )
        if soak[i] > 0:
            sw = span * soak[i] / end
            parts.append(
                f'<rect x="{bx + w:.1f}" y="{y + 3}" width="{sw:.1f}" height="{row - 12}" fill="{color[group]}" '
                f'class="soak" data-group="{esc(group)}"><title>{esc(label)}: soak {soak[i]:g}{esc(unit)}'
                "</title></rect>"
            )
        y += row
    parts.append("</svg>")
    return '<div class="chart">' + "".join(parts) + "</div>"


def write_file(path: str, text: str) -> None:
    """Write atomically next to ``path`` (nothing half-written on error)."""
    write_atomic(path, text)
