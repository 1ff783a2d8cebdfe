"""Inline SVG charts for the HTML reports: grouped bars and a Gantt-like timeline.

This module computes the geometry; the markup is ``data/templates/charts.svg.j2``. Both return HTML
(:class:`kubedra.report.html.Markup`) to place in a page.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.report import html as h
from kubedra.text import count, plural

PALETTE = ("#e4572e", "#17a398", "#3b6ea5", "#f3a712", "#8e5572", "#6c757d")


@dataclass
class _Bar:
    name: str
    value: float
    y: int
    w: float
    color: str
    text: str


@dataclass
class _Group:
    label: str
    y: int
    lines: list[str]
    bars: list[_Bar] = field(default_factory=list)


CHAR_W = 7  # px per character of a 12px label, generously: a label is never wider than this many
LINE_H = 14  # px between the lines of a wrapped group label
_LABEL_CHARS = 32  # a group label longer than this wraps (at ' ', '.', '-', '/', '_'), never mid-word


def wrap_label(label: str, width: int) -> list[str]:
    """``label`` in lines of at most ``width`` characters, broken only after ' ', '.', '-', '/' or '_'; a
    piece with no such break longer than ``width`` stays whole on its line (the caller widens for it)."""
    pieces = [p for p in re.split(r"(?<=[ ./_-])", label) if p]
    lines: list[str] = []
    for p in pieces:
        if lines and len(lines[-1]) + len(p.rstrip()) <= width:
            lines[-1] += p
        else:
            lines.append(p)
    return [x.rstrip() for x in lines] or [""]


def _label_chars(labels: Sequence[str]) -> int:
    """Characters of the label column: the longest label up to ``_LABEL_CHARS``, and never less than the
    longest piece a label cannot be broken in."""
    longest = max((len(x) for x in labels), default=0)
    unbreakable = max((len(p.rstrip()) for x in labels for p in re.split(r"(?<=[ ./_-])", x)), default=0)
    return max(min(longest, _LABEL_CHARS), unbreakable, 1)


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
    counted: bool = False,
) -> h.Markup:
    """Grouped horizontal bars: one group per label (a node pool), one bar per series (before/after...).

    With ``counted``, series names are singular nouns and values whole counts: a bar reads ``1 finding``,
    ``3 findings``. Group labels wrap at word and '.' boundaries; the label column is wide enough for each
    line, so no label runs under its bars."""
    series = list(dict.fromkeys(name for _, bars in groups for name, _ in bars))
    color = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    vmax = max((v for _, bars in groups for _, v in bars), default=0) or 1
    chars = _label_chars([label for label, _ in groups])
    left, bar_w, row = max(180, 16 + CHAR_W * chars), 360, 18
    wrapped = [wrap_label(label, chars) for label, _ in groups]
    height = (
        40
        + sum(
            max(len(bars) * row, len(w) * LINE_H + 4) + 14
            for (_, bars), w in zip(groups, wrapped, strict=True)
        )
        + 24
    )
    placed = []
    y = 34
    for (label, bars), lines in zip(groups, wrapped, strict=True):
        group = _Group(label, y, lines)
        by = y
        for name, value in bars:
            text = count(int(value), name) if counted else f"{value:g}{unit} {name}"
            group.bars.append(_Bar(name, value, by, bar_w * max(0.0, float(value)) / vmax, color[name], text))
            by += row
        y += max(len(bars) * row, len(lines) * LINE_H + 4) + 14
        placed.append(group)
    legend = []
    lx = 8
    for s in series:
        name = plural(s) if counted else s
        legend.append((lx, name, color[s]))
        lx += 24 + CHAR_W * len(name)
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


NEUTRAL = "#9aa4ad"  # the fill of a legend swatch that shows a style (soak, flagged), not a group's colour


@dataclass
class _Swatch:
    x: float
    y: int
    text: str
    color: str
    cls: str = ""
    group: str = ""


@dataclass
class _Timeline:
    title: str
    unit: str
    id: str
    width: int
    height: int
    top: int
    row: int
    legend: list[_Swatch]
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
    group_noun: str = "",
) -> h.Markup:
    """A Gantt-like timeline: (label, group, start, duration, css class) per row; times in ``unit``.

    A row's bar has its group's colour; the legend names each group beside a swatch of that very colour
    (``group_noun`` before the name: "cluster prod"), then ``legend``'s (css class, text) pairs as swatches
    drawn with that class (a style such as the lighter soak, not a colour). ``soaks[i]`` draws a lighter bar
    after row ``i`` (the wait before the next row). Ticks fall on round steps of ``unit``."""
    soak = list(soaks) + [0.0] * (len(entries) - len(soaks))
    end = max((s + d + soak[i] for i, (_, _, s, d, _) in enumerate(entries)), default=1) or 1
    left, span, row = 230, 520, 20
    width = left + span + 40
    groups = list(dict.fromkeys(g for _, g, _, _, _ in entries))
    color = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(groups)}
    swatches: list[_Swatch] = []
    x, y = 8.0, 28
    wanted = [_Swatch(0, 0, f"{group_noun} {g}".strip(), color[g], group=g) for g in groups]
    wanted += [_Swatch(0, 0, text, NEUTRAL, cls) for cls, text in legend]
    for sw in wanted:
        need = 26 + CHAR_W * len(sw.text)
        if x > 8 and x + need > width:
            x, y = 8.0, y + 18
        sw.x, sw.y = x, y
        swatches.append(sw)
        x += need
    top = (y + 30) if swatches else 40
    height = top + row * len(entries) + 24
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
    chart = _Timeline(title, unit, id, width, height, top, row, swatches, ticks, rows)
    return _render("timeline", chart)
