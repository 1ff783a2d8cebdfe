"""``kubectl-dra``: kubedra as a kubectl plugin (``kubectl dra audit``, ``kubectl dra explain pod/x``).

kubectl runs ``kubectl-dra`` with the arguments after ``dra`` unchanged (flags must follow the plugin name:
``kubectl dra audit --context prod``), so kubedra's own ``--context`` and ``--kubeconfig`` apply as they are.
Where kubectl users expect kubectl's behaviour, the plugin supplies it:

- ``kubectl dra audit`` with no input audits the current context (``--cluster``), like any kubectl command;
- ``kubectl dra explain pod/x`` without ``-n`` looks in the namespace of the context (kubeconfig
  ``contexts[].context.namespace``), not ``default``, as kubectl does;
- ``-n``/``--namespace`` on a verb that reads every namespace (audit, verify, snapshot...) is an error that
  says so (exit 2), not silently ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from kubedra import cli
from kubedra.errors import EXIT_INPUT, UsageError
from kubedra.sources import cluster as cs

PROG = "kubectl dra"
_NAMESPACED = {"explain"}  # verbs with -n/--namespace
_AUDIT_INPUTS = ("paths", "filenames", "charts", "contexts", "all_contexts", "current_cluster", "list_rules")


def _parse(verb: str, args: Sequence[str]) -> click.Context | None:
    """kubedra's own parse of ``verb ARGS`` (no callbacks run, nothing validated), or None when ``verb`` is
    not a kubedra verb (kubedra then says so)."""
    group = cli.cli
    with group.make_context("kubedra", [verb], resilient_parsing=True) as parent:
        command = group.get_command(parent, verb)
        if command is None:
            return None
        return command.make_context(verb, list(args), parent=parent, resilient_parsing=True)


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def context_namespace(kubeconfig: str | None, context: str | None) -> str | None:
    """The namespace of ``context`` (default: the current context) in the kubeconfig kubedra would read, or
    None when it sets none or there is no kubeconfig (in-cluster: kubedra's own default applies)."""

    try:
        source = cs.kubeconfig_source(kubeconfig)
    except UsageError:
        return None  # kubedra itself reports the missing kubeconfig when it reads it
    if source is None:
        return None
    from kubernetes import config  # noqa: PLC0415

    try:
        contexts, current = config.list_kube_config_contexts(config_file=source)
    except Exception:  # noqa: BLE001 - any bad kubeconfig: kubedra itself reports it when it reads it
        return None
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else current
    namespace = ((chosen or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else None


def translate(args: Sequence[str]) -> list[str]:
    """kubectl-style arguments for ``kubectl dra`` -> kubedra arguments (:class:`click.UsageError` when a
    kubectl flag has no meaning for the verb)."""
    args = list(args)
    if not args or args[0].startswith("-") or any(a in ("-h", "--help") for a in args):
        return args
    verb, rest = args[0], args[1:]
    if verb not in _NAMESPACED and any(
        a in ("-n", "--namespace") or a.startswith(("--namespace=", "-n=")) for a in rest
    ):
        raise click.UsageError(
            f"{PROG} {verb}: -n/--namespace is not an option of {verb}: it reads every namespace"
            " (choose the cluster with --context)"
        )
    ctx = _parse(verb, rest)
    if ctx is None:
        return args
    if verb == "audit" and not any(ctx.params.get(name) for name in _AUDIT_INPUTS):
        rest = ["--cluster", *rest]
    if verb == "explain" and not _given(ctx, "namespace"):
        namespace = context_namespace(ctx.params.get("kubeconfig"), ctx.params.get("context"))
        if namespace:
            rest = [*rest, "--namespace", namespace]
    return [verb, *rest]


def main(argv: Sequence[str] | None = None) -> Any:
    """Entry point of the ``kubectl-dra`` executable."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        args = translate(args)
    except click.UsageError as e:
        click.echo(f"kubedra: error: {e.message}", err=True)
        sys.exit(EXIT_INPUT)
    return cli.main(args, prog_name=PROG)
