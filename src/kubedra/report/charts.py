"""Inline SVG charts for the HTML reports: grouped bars and a Gantt-like timeline.

This module computes the geometry; the markup is ``data/templates/charts.svg.j2``. Both return HTML
(:class:`kubedra.report.html.Markup`) to place in a page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.report import html as h

PALETTE = ("#e4572e", "#17a398", "#3b6ea5", "#f3a712", "#8e5572", "#6c757d")


@dataclass
class _Bar:
    name: str
    value: float
    y: int
    w: float
    color: str


@dataclass
class _Group:
    label: str
    y: int
    bars: list[_Bar] = field(default_factory=list)


@dataclass
class _Bars:
    title: str
    unit: str
    id: str
    width: int
    height: int
    left: int
    row: int
    groups: list[_Group]
    legend: list[tuple[int, str, str]]


def _render(macro: str, chart: Any) -> h.Markup:
    return h.Markup(h.macro("charts.svg.j2", macro, chart))


def bar_chart(
    groups: Sequence[tuple[str, Sequence[tuple[str, float]]]],
    *,
    title: str,
    unit: str = "",
    id: str = "",
) -> h.Markup:
    """Grouped horizontal bars: one group per label (a node pool), one bar per series (before/after...)."""
    series = list(dict.fromkeys(name for _, bars in groups for name, _ in bars))
    color = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    vmax = max((v for _, bars in groups for _, v in bars), default=0) or 1
    left, bar_w, row = 180, 360, 18
    height = 40 + sum(len(bars) * row + 14 for _, bars in groups) + 24
    placed = []
    y = 34
    for label, bars in groups:
        group = _Group(label, y)
        for name, value in bars:
            group.bars.append(_Bar(name, value, y, bar_w * max(0.0, float(value)) / vmax, color[name]))
            y += row
        y += 14
        placed.append(group)
    legend = []
    lx = 8
    for s in series:
        legend.append((lx, s, color[s]))
        lx += 24 + 7 * len(s)
    return _render("bar_chart", _Bars(title, unit, id, left + bar_w + 120, height, left, row, placed, legend))


_STEPS = (0.25, 0.5, 1, 2, 5, 7, 14, 30, 60, 90, 180, 365)


def _tick_step(end: float, most: int = 8) -> float:
    """The smallest round step that puts at most ``most`` ticks on [0, end]."""
    return next((s for s in _STEPS if end / s <= most), end / most)


@dataclass
class _Row:
    label: str
    group: str
    start: float
    duration: float
    cls: str
    y: int
    x: float
    w: float
    color: str
    soak: float
    soak_w: float


@dataclass
class _Timeline:
    title: str
    unit: str
    id: str
    width: int
    height: int
    top: int
    row: int
    legend: list[tuple[float, str, str]]
    legend_color: str
    ticks: list[tuple[float, float]]
    rows: list[_Row]


def timeline(
    entries: Sequence[tuple[str, str, float, float, str]],
    *,
    title: str,
    unit: str = "d",
    id: str = "",
    soaks: Sequence[float] = (),
    legend: Sequence[tuple[str, str]] = (),
) -> h.Markup:
    """A Gantt-like timeline: (label, group, start, duration, css class) per row; times in ``unit``.

    ``soaks[i]`` draws a lighter bar after row ``i`` (the wait before the next row); ``legend`` is
    (css class, text) pairs drawn as swatches under the title. Ticks fall on round steps of ``unit``."""
    soak = list(soaks) + [0.0] * (len(entries) - len(soaks))
    end = max((s + d + soak[i] for i, (_, _, s, d, _) in enumerate(entries)), default=1) or 1
    left, span, row = 230, 520, 20
    top = 40 + (18 if legend else 0)
    height = top + row * len(entries) + 24
    groups = list(dict.fromkeys(g for _, g, _, _, _ in entries))
    color = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    swatches = []
    x = 8.0
    for cls, text in legend:
        swatches.append((x, cls, text))
        x += 26 + 7 * len(text)
    ticks = []
    step = _tick_step(end)
    tick = 0.0
    while tick <= end + 1e-9:
        ticks.append((left + span * tick / end, tick))
        tick += step
    rows = []
    y = top
    for i, (label, group, start, dur, cls) in enumerate(entries):
        bx = left + span * start / end
        w = max(2.0, span * dur / end)
        rows.append(
            _Row(label, group, start, dur, cls, y, bx, w, color[group], soak[i], span * soak[i] / end)
        )
        y += row
    chart = _Timeline(title, unit, id, left + span + 40, height, top, row, swatches, PALETTE[0], ticks, rows)
    return _render("timeline", chart)
