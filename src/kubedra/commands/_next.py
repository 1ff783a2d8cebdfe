"""The one-line ``next:`` hint after audit, migrate, validate and simulate: the step a newcomer takes next.

On stderr, with table output only (never with -o json/yaml/..., never on stdout), and only as a command that
runs as printed (tests/unit/cli/test_advice.py runs each): nothing when an input was stdin, which a second
command cannot read again.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import click


def hint(output: str, why: str, args: Sequence[str]) -> None:
    """One ``next:`` line naming the command (kubedra and ARGS) on stderr, for table output and re-readable inputs."""
    if output not in ("table", "wide") or "-" in args:
        return
    click.echo(f"kubedra: next: {why}: `{shlex.join(['kubedra', *args])}`", err=True)
