"""``kubedra validate``: schema, DRA rules, CEL and references at the target version; server dry-run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from kubedra.commands._cluster import time_options
from kubedra.commands._common import (
    CommonOptions,
    cluster_options,
    driver_version_option,
    exit_codes_epilog,
    input_options,
    output_option,
    target_version_option,
)
from kubedra.commands._next import hint
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError, UsageError
from kubedra.k8s.findings import object_text
from kubedra.report.output import emit, print_table
from kubedra.text import count


@dataclass(frozen=True)
class ValidateOptions:
    """``kubedra validate``'s options as parsed (inputs, -o, --target-version, --kubeconfig/--context in
    ``common``)."""

    common: CommonOptions
    server_dry_run: bool = False
    strict_refs: bool = False
    ignore_missing_schemas: bool = False
    timeout: float = 30.0
    driver_version: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> ValidateOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        if (self.common.kubeconfig or self.common.context) and not self.server_dry_run:
            raise UsageError("--kubeconfig/--context are only used with --server-dry-run")


@click.command(
    "validate",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "valid: every input read and every object checked (or its missing schema accepted with "
            "--ignore-missing-schemas)",
            EXIT_FINDINGS: "invalid: an error found, also when other inputs were not read or checked (what was found "
            "wins)",
            EXIT_INPUT: "usage or input error (no manifests found in the inputs among them); with --server-dry-run also "
            "an unreachable cluster, credentials refused (unauthorised) or a dry-run write forbidden by RBAC, each "
            "on one line; or incomplete with no error found: a file that does not parse (every other file is still "
            "validated and each parse error reported with file:line), or objects of a kind with no schema (custom "
            "resources whose CRD kubedra does not bundle) not schema-checked, without --server-dry-run or "
            "--ignore-missing-schemas (the report is still printed and says INCOMPLETE, JSON valid and complete are "
            "false, stderr names the kinds)",
        }
    ),
)
@input_options(missing="no input: give PATH... or -f PATH (- for stdin) to validate")
@target_version_option(help="Kubernetes minor to validate for.")
@cluster_options(context_help="Kubeconfig context for --server-dry-run.")
@click.option(
    "--server-dry-run", is_flag=True, help="Also dry-run every object on the cluster (nothing persisted)."
)
@click.option("--strict-refs", is_flag=True, help="References to objects not among the inputs are errors.")
@click.option(
    "--ignore-missing-schemas",
    is_flag=True,
    help="Accept objects of kinds with no schema (custom resources whose CRD kubedra does not bundle: only "
    "their metadata and pod templates "
    "are checked) instead of exit 2.",
)
@driver_version_option(
    all_default=True,
    help="DRA driver release whose published attributes and capacities each selector is checked against "
    "(default: every release kubedra has read, naming those where a selector breaks).",
)
@output_option()
@time_options()
def validate(**params: Any) -> None:
    """Validate manifests for --target-version: strict schemas (unknown fields are errors), DRA limits and
    name formats, quantities, enums, CEL selectors in the target's environment, and references between the
    inputs. With --server-dry-run the cluster's apiserver checks every object too (server-side apply with
    dryRun=All: nothing is persisted; it needs create/patch RBAC on those kinds). Without a kubeconfig, the
    in-cluster ServiceAccount config is used.
    """
    options = ValidateOptions.complete(params)
    options.validate()
    run(options)


def run(options: ValidateOptions) -> None:
    from kubedra.sources.files import load, with_advice
    from kubedra.validate.engine import Validator

    c = options.common
    files, target_version, output = c.files, c.target_version, c.output
    loaded = load(files, strict=False)  # every file is read and reported; a bad one does not stop the rest
    documents = loaded.documents
    if not documents and not loaded.errors:  # nothing validated is not "valid"
        raise InputError(
            f"no manifests found in {', '.join('<stdin>' if f == '-' else f for f in files)}: nothing to validate"
        )
    result = Validator(
        target_version, strict_refs=options.strict_refs, driver_version=options.driver_version
    ).validate(documents)
    result.add_unreadable([with_advice(e, "validate") for e in loaded.errors])
    if options.server_dry_run:
        from kubedra.validate.dryrun import dry_run

        result.errors.extend(dry_run(documents, kubeconfig=c.kubeconfig, context=c.context))
        result.not_schema_checked.clear()  # the apiserver checked them against their CRDs
    # kinds with no schema (custom resources): only their metadata and pod templates were checked
    result.unchecked_accepted = options.ignore_missing_schemas
    result.errors.sort(key=lambda e: (e.file, e.line or 0))
    if output in ("table", "wide"):
        rows = [[e.where, "-", "UNREADABLE", "", e.message] for e in result.unreadable]
        rows += [[e.where, object_text(e.object), "ERROR", e.path or "", e.message] for e in result.errors]
        rows += [
            [w.where, object_text(w.object), "WARNING", w.path or "", w.message] for w in result.warnings
        ]
        if rows:
            print_table(["SOURCE", "OBJECT", "LEVEL", "PATH", "MESSAGE"], rows)
        # what was not read or not checked is never "valid": INCOMPLETE unless an error makes it INVALID
        state = "INVALID" if result.errors else "valid" if result.valid else "INCOMPLETE"
        unread = f", {count(len(result.unreadable), 'unreadable file')}" if result.unreadable else ""
        if result.not_schema_checked:
            unread += f", {count(len(result.not_schema_checked), 'object')} not schema-checked" + (
                " (accepted)" if result.unchecked_accepted else ""
            )
        click.echo(
            f"{count(result.objects, 'object')} at {target_version}: {state}, {count(len(result.errors), 'error')}, "
            f"{count(len(result.warnings), 'warning')}{unread}",
            err=True,
        )
    else:
        emit(result.to_dict(), output)
    # custom resources checked against a bundled CRD: which operator release's schema said so
    for kind, against in sorted(result.crd_schemas.items()):
        click.echo(f"kubedra: {kind} checked against the CRD of {against}", err=True)
    # kinds with no schema (custom resources): only their metadata and pod templates were checked; the
    # apiserver checks them against their CRD with --server-dry-run (their list is then empty)
    for kind in sorted(set(result.not_schema_checked)):
        n = result.not_schema_checked.count(kind)
        click.echo(
            f"kubedra: {'accepted' if options.ignore_missing_schemas else 'incomplete'}: {count(n, 'object')} "
            f"of {kind} not schema-checked (no schema: a custom resource; --server-dry-run checks "
            "it against its CRD"
            + ("" if options.ignore_missing_schemas else ", --ignore-missing-schemas accepts it")
            + ")",
            err=True,
        )
    if not result.errors and not result.unreadable and not options.server_dry_run:
        hint(
            output,
            "how many of these pods fit with DRA (pick your nodes)",
            ["simulate", *files, "--nodes", "2x8xH100-80GB", "--target-version", target_version],
        )
    # an error found is the answer (1) even when other inputs were not read or checked; incomplete is exit 2
    # only when nothing wrong was found, and never clean: what was not read or checked was not validated
    code = EXIT_FINDINGS if result.errors else EXIT_OK if result.complete else EXIT_INPUT
    click.get_current_context().exit(code)
