"""The record of a run that a shared report carries: input files (relative to the working directory), the
command line as given (flags the user set, paths relative), Kubernetes target, kubedra version and time."""

from __future__ import annotations

import datetime as dt
import os
import shlex
from collections.abc import Sequence

import click
from click.core import ParameterSource

from kubedra import __version__

_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def shown_path(path: str) -> str:
    """``path`` relative to the working directory (``-`` for stdin stays); a report names no home directory."""
    if path == "-" or not path:
        return path
    try:
        return os.path.relpath(os.path.abspath(path))
    except ValueError:  # another drive (Windows)
        return os.path.basename(path)


def _value(value: object) -> str:
    text = str(value)
    return shown_path(text) if os.path.isabs(text) or os.path.exists(text) else text


def given_flags(ctx: click.Context, skip: Sequence[str] = ("paths", "filenames")) -> list[str]:
    """The options the user set on the command line (or through the environment), as flags."""
    out: list[str] = []
    for param in ctx.command.params:
        name = param.name
        if name is None or name in skip or not isinstance(param, click.Option):
            continue
        if ctx.get_parameter_source(name) not in _GIVEN:
            continue
        value = ctx.params.get(name)
        flag = max(param.opts, key=len)
        if param.is_flag:
            if param.secondary_opts and not value:
                out.append(max(param.secondary_opts, key=len))
            elif value:
                out.append(flag)
        elif param.multiple:
            for v in value or ():
                out += [flag, _value(v)]
        elif value is not None:
            out += [flag, _value(value)]
    return out


def run_record(
    files: Sequence[str], target_version: str, extra: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """(what, value) rows for the report's Inputs section."""
    ctx = click.get_current_context()
    argv = [*(shown_path(f) for f in files), *given_flags(ctx)]
    rows = [("files", ", ".join(shown_path(f) for f in files))] if files else []
    rows += [
        *extra,
        ("command", " ".join([ctx.command_path, *(shlex.quote(a) for a in argv)])),
        ("Kubernetes", target_version),
        ("kubedra", __version__),
        ("time", dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    return rows
