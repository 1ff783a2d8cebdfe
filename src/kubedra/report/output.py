"""Shared output plumbing: ``-o json|yaml|table|markdown|csv`` for every verb.

Verbs build plain data (dicts/lists, camelCase keys like Kubernetes) and a table description;
this module renders them; the human table is :mod:`kubedra.report.table` (one renderer for every verb).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click
import yaml

# Writing a file safely is a plain utility below every layer; verbs reach it here or in kubedra.safewrite.
from kubedra.report.jsontext import dumps_indented, pieces_indented
from kubedra.report.table import print_table as print_table
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


def echo_json(data: Any, each: Mapping[str, Callable[[Any], Any]] | None = None) -> None:
    """``click.echo(to_json(data), nl=False)``, written in pieces (:func:`pieces_indented`): a large report is
    never one string, nor copied to bytes whole. ``each``: what each item of a top-level list is written as
    (by key), made one at a time as it is encoded."""
    pieces = pieces_indented(data, each)
    pieces.append("\n")
    for i in range(0, len(pieces), 512):
        click.echo("".join(pieces[i : i + 512]), nl=False)


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
