"""Shared helpers for the audit tests: the CLI as a user runs it, and the test corpus (tests/corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml
from click.testing import CliRunner, Result

from kubedra import cli

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "corpus"
DATA = Path(__file__).parent / "data"


def corpus() -> Path:
    """The manifest corpus the tests assert on (tests/corpus, copies with their sources)."""
    return CORPUS


@click.command(
    add_help_option=False, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    cli.main(list(ctx.args))


def run(*args: str, input: str | None = None) -> Result:
    """``kubedra ARGS`` through cli.main: real exit codes (2 for input errors), stdout and stderr apart."""
    return CliRunner().invoke(_entry, list(args), input=input, catch_exceptions=False)


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]
