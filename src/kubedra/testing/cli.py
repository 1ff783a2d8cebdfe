"""Any ``kubedra`` command line in-process as a user runs it: through :func:`kubedra.cli.main` (real exit codes: 2 for input
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


def run(*args: str, input: str | None = None, code: int | None = None) -> Result:
    """The result of ``kubedra ARGS``; with ``code``, the exit code must be that one (a test that reads only
    the output still says which exit code the output comes with: 1 and 2 are not 0)."""
    result = CliRunner().invoke(_entry, list(args), input=input, catch_exceptions=False)
    if code is not None:
        assert result.exit_code == code, (
            f"kubedra {' '.join(args)}: exit {result.exit_code}, expected {code}\n{result.output}"
        )
    return result
