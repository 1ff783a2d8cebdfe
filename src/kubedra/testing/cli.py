"""``kubedra ARGS`` in-process as a user runs it: through :func:`kubedra.cli.main` (real exit codes: 2 for input
errors, 3 for internal ones), stdout and stderr apart."""

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
