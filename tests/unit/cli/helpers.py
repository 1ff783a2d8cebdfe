"""The CLI as a user runs it (through cli.main: real exit codes, stdout and stderr apart), and the verbs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from kubedra import cli
from kubedra.testing.cli import run as run

DATA = Path(__file__).parent / "data"
TESTS = Path(__file__).resolve().parents[2]
GPU = str(DATA / "gpu-deployment.yaml")
CHART = str(DATA / "chart-rendered.yaml")
BROKEN = str(DATA / "broken.yaml")
WEBHOOK = str(DATA / "webhook.yaml")
POLICIES = str(DATA / "policies.yaml")
ALLOCATE = str(TESTS / "data" / "allocate" / "two-nodes.yaml")
FLEET = str(TESTS / "unit" / "plan" / "data" / "fleet.yaml")
SNAPSHOT = str(TESTS / "unit" / "plan" / "data" / "dev.yaml")
DRA_SNAPSHOT = str(
    TESTS / "unit" / "plan" / "data" / "staging.yaml"
)  # one node on DRA: verify has work to do


def verbs() -> Iterator[tuple[str, click.Command]]:
    """Every command a user can run: ``audit``, ``policy test``, ... (groups expanded)."""
    ctx = click.Context(cli.cli)

    def walk(prefix: str, group: click.Group, gctx: click.Context) -> Iterator[tuple[str, click.Command]]:
        for name in group.list_commands(gctx):
            cmd = group.get_command(gctx, name)
            assert cmd is not None
            full = f"{prefix} {name}".strip()
            if isinstance(cmd, click.Group):
                yield from walk(full, cmd, click.Context(cmd, parent=gctx))
            else:
                yield full, cmd

    yield from walk("", cli.cli, ctx)


def documented_exit_codes(cmd: click.Command) -> dict[int, str]:
    """The ``Exit codes:`` block of a verb's --help epilog."""
    text = cmd.epilog or ""
    assert "Exit codes:" in text, f"{cmd.name}: no exit codes in --help"
    block = text.split("Exit codes:", 1)[1]
    return {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"^\s+(\d+)\s+(.+)$", block, re.M)}
