"""The one renderer of human tables (audit, migrate, validate, policy test, simulate, allocate, verify).

kubectl-like aligned columns that never cut a cell. The first column is the anchor (a finding's
``file:line``, as the user gave the path) and is always printed whole; the flexible columns (by default the
last one: the message) take what width is left:

- in a pipe (``width`` None) every row is one line, at its natural width, and a cell's embedded newlines
  (a multi-line CEL expression in a reason) become spaces, so ``grep``/``awk`` see one line per row;
- on a terminal the table keeps its columns when they fit; otherwise the flexible columns wrap inside their
  column (a hanging indent), and when even that leaves them too little room, each row is a block, ruff-like:
  the anchor on its own line, the other short cells indented under it, the message wrapped below.

No line is wider than the terminal unless one unbreakable token (a long path) forces it. Control characters
in a cell are shown escaped (``\\x1b``) and never reach the terminal as such.
"""

from __future__ import annotations

import os
import sys
import textwrap
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from typing import Any, TextIO

import click

GAP = "   "
MIN_FLEX = 30  # narrower than this, a message column is hard to read: its row becomes a block
FIELDS = "  "  # indent of a block's short cells
TEXT = "    "  # indent of a block's message (and of a stacked row's message)


def terminal_width(stream: TextIO) -> int | None:
    """The width of the terminal ``stream`` writes to (``COLUMNS`` wins, as in shutil); None in a pipe."""
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or replaced stream
        return None
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


def _escape(line: str) -> str:
    line = line.expandtabs(4)
    if line.isprintable():
        return line
    return "".join(
        f"\\x{ord(c):02x}" if unicodedata.category(c) == "Cc" else c for c in line
    )  # an escape sequence in a manifest never drives the terminal


def cell_lines(value: Any) -> list[str]:
    """A cell's text as its lines (``None`` is empty), control characters escaped."""
    text = "" if value is None else str(value)
    if text.isprintable():  # the common cell: one line, nothing to escape
        return [text.rstrip()]
    lines = [_escape(line).rstrip() for line in text.splitlines()]
    return lines or [""]


def one_line(value: Any) -> str:
    """A cell on one line: each embedded newline with the indentation around it becomes one space."""
    text = "" if value is None else str(value)
    if text.isprintable():
        return text
    return " ".join(part for part in (line.strip() for line in cell_lines(value)) if part)


def _wrap(lines: Sequence[str], width: int) -> list[str]:
    """Each line wrapped at spaces to ``width``; a word longer than that (a path) stays whole."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        out += textwrap.wrap(
            line, max(width, 1), break_long_words=False, break_on_hyphens=False, expand_tabs=False
        ) or [""]
    return out


def _share(natural: Sequence[int], floor: Sequence[int], room: int) -> list[int]:
    """Widths for the flexible columns: each its natural width if it fits, else an even share of ``room``,
    never under its ``floor`` (its longest word, which does not wrap)."""
    widths = list(floor)
    order = sorted(range(len(natural)), key=lambda i: natural[i])
    left = room - sum(floor)
    for n, i in enumerate(order):
        extra = min(natural[i] - floor[i], max(left, 0) // (len(order) - n))
        widths[i] += extra
        left -= extra
    return widths


def _longest_word(cells: Sequence[list[str]]) -> int:
    return max((len(word) for cell in cells for line in cell for word in line.split()), default=0)


class _Painter:
    def __init__(self, colours: Mapping[int, Mapping[str, str]] | None, enabled: bool) -> None:
        self.colours = (colours or {}) if enabled else {}

    def cell(self, column: int, text: str, width: int) -> str:
        fg = self.colours.get(column, {}).get(text)
        pad = " " * max(width - len(text), 0)
        return (click.style(text, fg=fg, bold=True) if fg else text) + pad


def _columns(
    cells: Sequence[Sequence[list[str]]], columns: Sequence[int], widths: Mapping[int, int], paint: _Painter
) -> list[str]:
    """Aligned lines of ``columns`` for each row: a multi-line cell adds lines, the others stay blank there."""
    out: list[str] = []
    plain = not paint.colours
    for n, row in enumerate(cells):
        if plain and all(len(row[c]) == 1 for c in columns):  # the common row: one line, no colour
            out.append(GAP.join(row[c][0].ljust(widths[c]) for c in columns).rstrip())
            continue
        height = max(len(row[c]) for c in columns)
        for k in range(height):
            parts = []
            for c in columns:
                text = row[c][k] if k < len(row[c]) else ""
                parts.append(paint.cell(c, text, widths[c]) if n and k == 0 else text.ljust(widths[c]))
            out.append(GAP.join(parts).rstrip())
    return out


def _pack(cells: Sequence[list[str]], width: int, indent: str) -> list[str]:
    """Short cells joined on lines of at most ``width`` (after ``indent``), broken between cells."""
    room = width - len(indent)
    words = [piece for cell in cells for line in cell if line for piece in _wrap([line], room)]
    lines: list[str] = []
    current = ""
    for w in words:
        if current and len(indent) + len(current) + len(FIELDS) + len(w) > width:
            lines.append(indent + current)
            current = ""
        current = f"{current}{FIELDS}{w}" if current else w
    if current:
        lines.append(indent + current)
    return lines


def _flex_text(
    headers: Sequence[str], row: Sequence[list[str]], flex: Sequence[int], width: int, *, header: bool
) -> list[str]:
    """The flexible cells under a row, indented and wrapped; under the header, their names."""
    if header:
        return _pack([[headers[c].upper()] for c in flex], width, TEXT)
    out: list[str] = []
    for j, c in enumerate(flex):
        lines = row[c]
        if not any(lines):
            continue
        if j:  # a second text (audit's fix) says what it is
            lines = [f"{headers[c].lower()}: {lines[0]}", *lines[1:]]
        out += [TEXT + line if line else "" for line in _wrap(lines, max(width - len(TEXT), 8))]
    return out


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    width: int | None = None,
    flex: Collection[int] | None = None,
    colours: Mapping[int, Mapping[str, str]] | None = None,
    colour: bool = False,
) -> str:
    """The table as text: ``width`` None for a pipe (one line per row), else the terminal's width.

    ``flex``: the columns that may wrap (default the last); ``colours``: column -> cell value -> colour,
    used when ``colour``. Headers are upper-cased, columns three spaces apart (kubectl).
    """
    n = len(headers)
    flexible = sorted(c for c in (flex if flex is not None else [n - 1]) if 0 < c < n)  # not the anchor
    fixed = [c for c in range(n) if c not in flexible]
    paint = _Painter(colours, colour)
    title_row = [[str(h).upper()] for h in headers]
    if width is None:
        cells = [title_row] + [[[one_line(v)] for v in r] for r in rows]
    else:
        cells = [title_row] + [[cell_lines(v) for v in r] for r in rows]
    natural = {c: max(len(line) for row in cells for line in row[c]) for c in range(n)}
    gaps = len(GAP) * (n - 1)
    if width is None or sum(natural.values()) + gaps <= width:
        return _joined(_columns(cells, range(n), natural, paint))
    fixed_width = sum(natural[c] for c in fixed) + gaps
    floor = [max(min(natural[c], MIN_FLEX), _longest_word([row[c] for row in cells])) for c in flexible]
    if flexible and fixed_width + sum(floor) <= width:
        shares = _share([natural[c] for c in flexible], floor, width - fixed_width)
        widths = {**natural, **dict(zip(flexible, shares, strict=True))}
        wrapped = [
            [_wrap(cell, widths[c]) if c in flexible else cell for c, cell in enumerate(r)] for r in cells
        ]
        return _joined(_columns(wrapped, range(n), widths, paint))
    lines: list[str] = []
    if sum(natural[c] for c in fixed) + len(GAP) * (len(fixed) - 1) <= width:  # stacked: text under the row
        for i, row in enumerate(cells):
            lines += _columns([title_row, row], fixed, natural, paint)[1:]
            lines += _flex_text(headers, row, flexible, width, header=i == 0)
        return _joined(lines)
    rest = fixed[1:]  # blocks: the anchor alone, the short cells under it, the text under them
    rest_width = len(FIELDS) + sum(natural[c] for c in rest) + len(GAP) * (len(rest) - 1)
    for i, row in enumerate(cells):
        lines += _wrap(row[0], width)  # a path has no space: it stays whole, however long
        if rest and rest_width <= width:
            lines += [FIELDS + line for line in _columns([title_row, row], rest, natural, paint)[1:] if line]
        elif rest:
            lines += _pack([row[c] for c in rest], width, FIELDS)
        lines += _flex_text(headers, row, flexible, width, header=i == 0)
    return _joined(lines)


def paragraph(text: str, width: int | None, hang: str = "") -> str:
    """Prose beside a table (a summary, a note) wrapped to the terminal's ``width`` at spaces, continuation
    lines indented by ``hang``; unchanged in a pipe (``width`` None). No trailing newline."""
    if width is None:
        return text
    out: list[str] = []
    for line in text.splitlines() or [""]:
        out += textwrap.wrap(
            line, width, subsequent_indent=hang, break_long_words=False, break_on_hyphens=False
        ) or [""]
    return "\n".join(out)


def _joined(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n"


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str | None = None,
    *,
    err: bool = False,
    flex: Collection[int] | None = None,
    colours: Mapping[int, Mapping[str, str]] | None = None,
) -> None:
    """The table on stdout (``err``: on stderr, when stdout carries an artefact), at the terminal's width."""
    stream = sys.stderr if err else sys.stdout
    width = terminal_width(stream)
    use_colour = bool(colours) and width is not None and not os.environ.get("NO_COLOR")
    if title:
        click.echo(title, err=err)
    click.echo(
        render(headers, rows, width=width, flex=flex, colours=colours, colour=use_colour), nl=False, err=err
    )
