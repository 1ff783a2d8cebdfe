"""The CLI as a user runs it (real exit codes through cli.main), and snapshot fixtures."""

from __future__ import annotations

import click
from click.testing import CliRunner, Result

from kubedra import cli


@click.command(
    add_help_option=False, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    cli.main(list(ctx.args))


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(_entry, list(args), input=input, catch_exceptions=False)
