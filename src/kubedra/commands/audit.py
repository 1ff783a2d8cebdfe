"""``kubedra audit``: what breaks at the target Kubernetes version, from files, Helm and live clusters."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from kubedra.commands._cluster import allow_missing_option, incomplete_rows, report_incomplete, time_options
from kubedra.commands._common import (
    TABLE_FORMATS,
    CommonOptions,
    cluster_options,
    driver_version_option,
    exit_codes_epilog,
    input_options,
    metrics_file_option,
    output_option,
    target_version_option,
)
from kubedra.commands._next import hint
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError
from kubedra.gcpause import nothing_left_to_free, paused_gc
from kubedra.text import count

if TYPE_CHECKING:
    from kubedra.audit.model import RuleBook
    from kubedra.k8s.versions import Version

FORMATS = (*TABLE_FORMATS, "markdown", "csv", "sarif", "prometheus")


@dataclass(frozen=True)
class AuditOptions:
    """``kubedra audit``'s options as parsed (inputs, -o, --target-version and clusters in ``common``)."""

    common: CommonOptions
    charts: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    all_contexts: bool = False
    current_cluster: bool = False
    helm_releases: bool = True
    current_version: str | None = None
    deprecation_files: tuple[str, ...] = ()
    ignore_rules: tuple[str, ...] = ()
    ignore_file: str | None = None
    fail_on: str = "error"
    timeout: float = 30.0
    list_rules: bool = False
    html_file: str | None = None
    allow_missing: tuple[str, ...] = ()
    metrics_file: str | None = None
    driver_version: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> AuditOptions:
        """From click's parameters (``--context`` is repeatable here: ``contexts``)."""
        return cls(common=CommonOptions.take(params, context="contexts"), **params)

    @property
    def live(self) -> bool:
        """Any cluster flag: the clusters are read (``--kubeconfig`` alone means its current context)."""
        c = self.common
        return bool(c.contexts or self.all_contexts or self.current_cluster or c.kubeconfig)

    def versions(self) -> tuple[Version, Version | None]:
        """(--target-version, --current-version) parsed; the current one must not be newer."""
        from kubedra.k8s.versions import Version

        target = Version.parse(self.common.target_version, what="--target-version")
        current = (
            Version.parse(self.current_version, what="--current-version") if self.current_version else None
        )
        if current is not None and current > target:
            raise UsageError(f"--current-version {current} is newer than --target-version {target}")
        return target, current

    def validate(self, rules: RuleBook) -> None:
        """Usage errors (exit 2) before anything is read: versions, --ignore ids, flags that need others."""
        from kubedra.audit import inputs

        self.versions()
        inputs.check_rule_ids(self.ignore_rules, rules)
        if self.values and not self.charts:
            raise UsageError("--helm-values needs --helm-chart")
        if not (self.common.files or self.charts or self.live):
            raise UsageError(
                "nothing to audit: give files or folders (-f), --helm-chart, or a cluster (--cluster, --context, --all-contexts)"
            )


@click.command(
    "audit",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "nothing at or above --fail-on",
            EXIT_FINDINGS: "findings at or above --fail-on (also when some input could not be read: what was found "
            "wins)",
            EXIT_INPUT: "usage or input error (no manifests in the files and folders given); or incomplete with no "
            "finding at or above --fail-on: a file could not be parsed or a cluster could not "
            "be reached, or a cluster read was forbidden, unauthorised, not served or failed and not accepted "
            "with --allow-missing (the report is still printed, JSON lists the missing reads under incomplete, "
            "stderr names them)",
        }
    ),
)
@input_options(required=False, help="File or folder (recursive) to audit; - for stdin. Repeatable.")
@click.option(
    "--helm-chart", "charts", multiple=True, help="Chart folder to render with `helm template` and audit."
)
@click.option("--helm-values", "values", multiple=True, help="Values file for --helm-chart (repeatable).")
@cluster_options(
    multiple_contexts=True, context_dest="contexts", context_help="Kubeconfig context to audit (repeatable)."
)
@click.option("--all-contexts", is_flag=True, help="Audit every context of the kubeconfig.")
@click.option("--cluster", "current_cluster", is_flag=True, help="Audit the kubeconfig's current context.")
@click.option(
    "--helm-releases/--no-helm-releases",
    default=True,
    show_default=True,
    help="On clusters, also decode Helm 3 release secrets (needs list on secrets).",
)
@target_version_option(partial_ok=True, help="Kubernetes version to upgrade to.")
@click.option(
    "--current-version", help="Version you run now (default on clusters: what the apiserver reports)."
)
@driver_version_option(
    all_default=True,
    keep_all=True,
    help="GPU DRA driver release whose published attributes dra.selector-unpublished checks selectors against "
    "(all: every release kubedra has read; default: the releases the audited cluster runs, else all).",
)
@click.option("--deprecations", "deprecation_files", multiple=True, help="Extra lifecycle entries (CRDs...).")
@click.option(
    "--ignore", "ignore_rules", multiple=True, help="Rule id (or glob, e.g. 'webhook.*') to ignore."
)
@click.option(
    "--ignore-file", help="YAML list of accepted findings: {rule, kind?, namespace?, name?, file?}."
)
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "none"]),
    default="error",
    show_default=True,
    help="Exit 1 when a finding at or above this severity remains.",
)
@output_option(FORMATS, help="Output format; table: one line per finding, wide: with the fix.")
@allow_missing_option()
@time_options()
@click.option("--list-rules", is_flag=True, help="Print the rules (id, severity, title, fix) and exit.")
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML report to FILE.")
@metrics_file_option()
def audit(**params: Any) -> None:
    """Report what will break when this fleet moves to --target-version: removed and deprecated APIs (DRA
    included), GPUs still on the device plugin, DRA health, admission webhooks, CRDs and cluster configuration.

    \b
    Inputs: PATHS / -f (files, folders, - for stdin), --helm-chart, and live clusters
    (--cluster, --context NAME..., --all-contexts, --kubeconfig FILE). A file written by
    `kubedra snapshot` is audited as the cluster it captured (versions, feature gates, Helm releases).
    Without a kubeconfig, the in-cluster ServiceAccount config is used.
    """
    options = AuditOptions.complete(params)
    with paused_gc(freeze=True):
        run(options)


def run(options: AuditOptions) -> None:
    from kubedra import __version__
    from kubedra.audit import engine, inputs
    from kubedra.audit.deprecations import DeprecationDB
    from kubedra.audit.model import RuleBook, finding_dict
    from kubedra.report import audit as render
    from kubedra.report import output as out
    from kubedra.sources.access import Unread

    o, c = options, options.common
    output = c.output
    rules = RuleBook.load()
    if o.list_rules:
        _print_rules(rules, output)
        return
    o.validate(rules)
    target, current = o.versions()
    ignore_entries = inputs.load_ignore_file(o.ignore_file) if o.ignore_file else []
    db = DeprecationDB.load(o.deprecation_files)
    read = inputs.gather(c.files, o.charts, o.values, rules)
    if o.live:
        from kubedra.audit import cluster as audit_cluster

        request = audit_cluster.ClusterRequest(
            c.kubeconfig,
            c.contexts,
            o.all_contexts,
            timeout=o.timeout,
            helm_releases=o.helm_releases,
            progress=_progress_enabled(output),
        )
        audit_cluster.gather(read, request, rules)
    clusters = read.clusters

    findings, ignored = engine.run(
        read.scopes,
        target=target,
        current=current,
        db=db,
        rules=rules,
        ignore_rules=o.ignore_rules,
        ignore_entries=ignore_entries,
        pre_findings=read.findings,
        driver_version=o.driver_version,
    )
    report = engine.Report(
        target=target,
        current=current,
        findings=findings,
        ignored=ignored,
        files_scanned=read.files,
        objects_scanned=read.objects,
        clusters=clusters,
        incomplete=incomplete_rows(
            ((f.name, Unread.of(r, why)) for f in clusters for r, why in f.not_inspected), o.allow_missing
        ),
    )
    if o.html_file:
        from kubedra.report.pages import write_audit

        write_audit(o.html_file, report.to_dict(), {r: rules[r].docs for r in rules.rules})
    if output == "prometheus" or o.metrics_file:
        from kubedra.report import metrics

        registry = metrics.audit_registry(report.to_dict())
        if o.metrics_file:
            metrics.write_textfile(o.metrics_file, registry)
    if output == "prometheus":
        click.echo(metrics.exposition(registry), nl=False)
    elif output == "json":
        # each finding's dict made as it is encoded, not 5,500 of them alive at once (4 MiB of peak RSS)
        out.echo_json(report.to_dict(finding_dicts=False), each={"findings": finding_dict})
    elif output == "yaml":
        click.echo(out.to_yaml(report.to_dict()), nl=False)
    elif output == "markdown":
        from kubedra.report.audit_markdown import markdown

        click.echo(markdown(report), nl=False)
    elif output == "csv":
        click.echo(render.csv(report), nl=False)
    elif output == "sarif":
        from kubedra.report.audit_sarif import sarif

        click.echo(out.to_json(sarif(report, rules, __version__)), nl=False)
    else:
        render.print_table(report, wide=output == "wide")

    report_incomplete(report.incomplete)
    unread = [f for f in findings if f.rule in _UNREAD_RULES]
    if unread:  # the report names each one; stderr says why the exit code is 2
        click.echo(
            f"kubedra: error: {count(len(unread), 'input')} could not be read (see {unread[0].rule} in the report)",
            err=True,
        )
    # a next step only when every input was read (an input error is the one line stderr carries then), and only
    # when migrate has something to rewrite: a finding it fixes (an already-migrated tree gets no such advice)
    migratable = any(f.fixed_by_migrate for f in findings)
    if migratable and c.files and not (o.charts or o.live or unread or read.unreachable):
        hint(
            output,
            "rewrite these manifests to DRA (a diff; --out DIR writes them)",
            ["migrate", *c.files, "--target-version", str(target)],
        )
    # a finding at or above --fail-on is the answer (1) even when some input was not read; incomplete is exit 2
    # only when nothing at the threshold was found, and never clean (0). Everything is written: the program
    # may end without freeing the items and findings one by one.
    nothing_left_to_free()
    if report.worst_at_least(o.fail_on, except_rules=_INCOMPLETE_RULES):
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_INPUT if read.unreachable or report.incomplete or unread else EXIT_OK)


# findings that say an input was not read (a file that did not parse, a chart not rendered, a cluster not
# reached): they make the audit incomplete (exit 2), they are not what the audit found
_UNREAD_RULES = ("input.malformed", "input.helm-template", "input.helm-render-failed")
_INCOMPLETE_RULES = (*_UNREAD_RULES, "cluster.unreachable", "cluster.not-inspected")


def _progress_enabled(fmt: str) -> bool:
    return fmt == "table" and sys.stderr.isatty()


def _print_rules(rules: Any, fmt: str) -> None:
    from kubedra.report import output

    rows = [(r.id, r.severity, r.title, r.fix) for r in rules.rules.values()]
    data = [{"id": r[0], "severity": r[1], "title": r[2], "fix": r[3]} for r in rows]
    if fmt == "json":
        click.echo(output.to_json(data), nl=False)
    elif fmt == "yaml":
        click.echo(output.to_yaml(data), nl=False)
    elif fmt == "markdown":
        click.echo(output.markdown_table(("Id", "Severity", "What", "Fix"), rows), nl=False)
    elif fmt == "csv":
        click.echo(output.csv_table(("id", "severity", "title", "fix"), rows), nl=False)
    else:
        output.print_table(("Id", "Severity", "Title"), [r[:3] for r in rows])
