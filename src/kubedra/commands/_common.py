"""Options and helpers shared by the verbs (kubectl-style ``-f``, ``--target-version``, ``--feature-gates``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from kubedra.errors import UsageError
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.sources.files import load
from kubedra.versions import DEFAULT_TARGET, SUPPORTED


def files_option(required: bool = True) -> Callable[..., Any]:
    return click.option(
        "-f",
        "--filename",
        "files",
        multiple=True,
        required=required,
        metavar="PATH",
        help="File, folder (recursive) or - for stdin. Repeatable.",
    )


def target_version_option() -> Callable[..., Any]:
    return click.option(
        "--target-version",
        default=DEFAULT_TARGET,
        show_default=True,
        help=f"Kubernetes minor release to model ({', '.join(SUPPORTED)}).",
    )


def feature_gates_option() -> Callable[..., Any]:
    return click.option(
        "--feature-gates",
        default=None,
        metavar="A=true,B=false",
        help="Override feature-gate defaults of the target version, like kube-scheduler's flag.",
    )


def load_inventory(files: Sequence[str]) -> Inventory:
    if not files:
        raise UsageError("no input: pass -f FILE (or -f - for stdin)")
    result = load(files, strict=True)
    return build_inventory(result.documents)


def warn(message: str) -> None:
    click.echo(f"kubedra: warning: {message}", err=True)
