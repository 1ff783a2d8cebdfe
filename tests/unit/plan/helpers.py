"""The CLI as a user runs it (real exit codes through cli.main), and snapshot fixtures."""

from __future__ import annotations

from kubedra.testing.cli import run as run
