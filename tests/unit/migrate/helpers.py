"""Shared helpers for the migrate tests: run a migration on text, load YAML, find the corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubedra.migrate.context import MigrateOptions, Sharing
from kubedra.migrate.engine import Migrator, SourceFile
from kubedra.migrate.report import MigrationReport
from kubedra.sources.yamldoc import YamlFile

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "tests" / "corpus"
GOLDEN = REPO / "tests" / "golden"


def migrate_text(
    text: str, name: str = "in.yaml", sharing: str | None = None, **opts: Any
) -> MigrationReport:
    if sharing is not None:
        opts["sharing"] = Sharing.parse(sharing)
    options = MigrateOptions(**opts)
    return Migrator(options).migrate([SourceFile(name, text, YamlFile(text, name))])


def output(text: str, **opts: Any) -> str:
    return migrate_text(text, **opts).files[0].output


def docs(text: str) -> list[Any]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def by_kind(text: str, kind: str) -> list[dict[str, Any]]:
    return [d for d in docs(text) if d.get("kind") == kind]
