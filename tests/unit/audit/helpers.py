"""Shared helpers for the audit tests: the CLI as a user runs it, and the test corpus (tests/corpus)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubedra.testing.cli import run as run

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "corpus"
DATA = Path(__file__).parent / "data"


def corpus() -> Path:
    """The manifest corpus the tests assert on (tests/corpus, copies with their sources)."""
    return CORPUS


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]
