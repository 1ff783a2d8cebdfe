"""Options and reporting shared by the verbs that read live clusters (audit, snapshot, verify, plan, validate
--server-dry-run): what could not be read (``--allow-missing``), and time bounds (``--request-timeout``,
``--deadline``). Kubeconfig/context options live with the other shared options in ``_common``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click

from kubedra.sources.access import Unread, missing
from kubedra.sources.limits import limits

F = Callable[..., Any]


def allow_missing_option() -> Callable[[F], F]:
    return click.option(
        "--allow-missing",
        "allow_missing",
        multiple=True,
        metavar="RESOURCE",
        help="Accept that RESOURCE could not be read (e.g. secrets, metrics, events, deployments.apps; "
        "wildcards, * for all): it is still reported, but does not make the exit code 2. Repeatable.",
    )


def time_options(default_timeout: float = 30.0) -> Callable[[F], F]:
    """``--request-timeout SECONDS`` (alias ``--timeout``) for each request and ``--deadline SECONDS`` for
    the whole command; the wrapped command runs with both in force (kubedra.sources.limits.limits)."""

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, timeout: float, deadline: float | None, **kw: Any) -> Any:
            with limits(request_timeout=timeout, deadline=deadline):
                return f(*args, timeout=timeout, **kw)

        wrapper = click.option(
            "--deadline",
            type=float,
            default=None,
            metavar="SECONDS",
            help="Give up (exit 2) when the cluster reads take longer than this in all.",
        )(wrapper)
        wrapper = click.option(
            "--request-timeout",
            "--timeout",
            "timeout",
            type=float,
            default=default_timeout,
            show_default=True,
            metavar="SECONDS",
            help="Seconds each request to a cluster may take (connect and each read; never retried).",
        )(wrapper)
        return wrapper

    return decorate


def incomplete_rows(unread: Iterable[tuple[str, Unread]], allow: Sequence[str]) -> list[dict[str, Any]]:
    """JSON rows (cluster, resource, verb, namespace, cause, reason) of the reads that leave a result
    incomplete."""
    rows = []
    for cluster, u in unread:
        if missing([u], allow):
            rows.append({"cluster": cluster, **u.to_dict()})
    return rows


def snapshot_incomplete(
    cluster: str, not_inspected: Iterable[dict[str, Any]], allow: Sequence[str]
) -> list[dict[str, Any]]:
    """:func:`incomplete_rows` of a snapshot header's ``notInspected`` list."""
    from kubedra.sources.access import from_header

    return incomplete_rows(((cluster, u) for u in from_header(not_inspected)), allow)


def report_incomplete(rows: Sequence[dict[str, Any]]) -> None:
    """One stderr line per read that did not happen, then how to fix or accept it."""
    for r in rows:
        u = Unread(r["resource"], r["reason"], r["verb"], r["namespace"])
        click.echo(f"kubedra: incomplete: cluster {r['cluster']}: cannot {u.describe()}", err=True)
    if rows:
        click.echo(
            "kubedra: incomplete: grant the reads (deploy/kubedra-clusterrole.yaml) or accept them with "
            "--allow-missing RESOURCE (the answer is incomplete: exit 2, or 1 when something wrong was found)",
            err=True,
        )
