"""Shared helpers for the audit tests: the CLI as a user runs it, and the shared corpus."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from kubedra import cli

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO.parent / "shared" / "corpus"
DATA = Path(__file__).parent / "data"


def corpus() -> Path:
    """The shared manifest corpus (../shared/corpus beside the clone); CI must have it."""
    if not CORPUS.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"shared corpus missing at {CORPUS}", pytrace=False)
        pytest.skip(f"shared corpus not found at {CORPUS}")
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
