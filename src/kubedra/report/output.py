"""Shared output plumbing: ``-o json|yaml|table|markdown|csv`` for every verb.

Verbs build plain data (dicts/lists, camelCase keys like Kubernetes) and a table description;
this module renders them. rich is imported lazily (only for tables on a terminal).
"""

from __future__ import annotations

import csv
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
import yaml

# Writing a file safely is a plain utility below every layer; verbs reach it here or in kubedra.safewrite.
from kubedra.report.jsontext import dumps_indented
from kubedra.safewrite import write_atomic as write_atomic

FORMATS = ("table", "json", "yaml", "markdown", "csv")


def output_option(
    choices: Sequence[str] = ("table", "json", "yaml"), default: str = "table"
) -> Callable[..., Any]:
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format.",
    )


def to_json(data: Any) -> str:
    return dumps_indented(data) + "\n"  # json.dumps(indent=2, ensure_ascii=False), byte for byte, faster


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


def to_yaml(data: Any) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096
    )


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str("" if v is None else v).replace("|", "\\|").replace("\n", "<br>")

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def csv_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    return buf.getvalue()


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """kubectl-style aligned columns (used when stdout is not a terminal, and by tests)."""
    cells = [[str(h).upper() for h in headers]] + [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def print_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None, *, err: bool = False
) -> None:
    """Aligned columns on stdout (``err``: on stderr, when stdout carries an artefact); rich on a terminal."""
    stream = sys.stderr if err else sys.stdout
    if not stream.isatty():
        if title:
            click.echo(title, err=err)
        click.echo(plain_table(headers, rows), nl=False, err=err)
        return
    from rich.console import Console  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    table = Table(title=title, show_lines=False, header_style="bold")
    for h in headers:
        table.add_column(str(h))
    for r in rows:
        table.add_row(*["" if v is None else str(v) for v in r])
    Console(stderr=err).print(table)


def colour_enabled(err: bool = False) -> bool:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org)."""
    stream = sys.stderr if err else sys.stdout
    return not os.environ.get("NO_COLOR") and stream.isatty()


def line_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    colours: dict[str, str] | None = None,
    shorten: int | None = None,
) -> str:
    """One line per row, kubectl-style (no wrapping): the ``shorten`` column is cut with an ellipsis so a line
    fits the terminal; a first-column value found in ``colours`` is coloured (when colour is enabled)."""
    cells = [[str(h).upper() for h in headers]] + [["" if v is None else str(v) for v in r] for r in rows]
    if shorten is not None and sys.stdout.isatty():
        import shutil  # noqa: PLC0415  (with its archive modules, a tenth of a small run's start-up)

        width = shutil.get_terminal_size((120, 24)).columns
        others = sum(max(len(r[i]) for r in cells) + 3 for i in range(len(headers)) if i != shorten)
        room = max(width - others - 1, 20)
        for r in cells[1:]:
            if len(r[shorten]) > room:
                r[shorten] = r[shorten][: room - 1].rstrip() + "…"
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    use_colour = bool(colours) and colour_enabled()
    lines = []
    for n, r in enumerate(cells):
        line = "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        if use_colour and n and colours and r[0] in colours:
            line = click.style(r[0], fg=colours[r[0]], bold=True) + line[len(r[0]) :]
        lines.append(line)
    return "\n".join(lines) + "\n"


def emit(data: Any, fmt: str, table: Callable[[], None] | None = None) -> None:
    """Write ``data`` in ``fmt``; ``table`` renders the human form for ``table``/default."""
    if fmt == "json":
        click.echo(to_json(data), nl=False)
    elif fmt == "yaml":
        click.echo(to_yaml(data), nl=False)
    elif table is not None:  # table, wide and the verb's other human formats
        table()
    else:
        click.echo(to_json(data), nl=False)
