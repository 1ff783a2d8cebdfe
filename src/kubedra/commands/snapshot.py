"""``kubedra snapshot``: capture a cluster read-only into one scrubbed file for offline audit/simulate/plan/verify."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

import click

from kubedra.commands._cluster import (
    allow_missing_option,
    report_incomplete,
    snapshot_incomplete,
    time_options,
)
from kubedra.commands._common import CommonOptions, cluster_options, exit_codes_epilog
from kubedra.errors import EXIT_INPUT, EXIT_OK


@dataclass(frozen=True)
class SnapshotOptions:
    """``kubedra snapshot``'s options as parsed (--kubeconfig/--context in ``common``). Its ``-o`` names the file
    to write (``out``), not a format."""

    common: CommonOptions
    name: str | None = None
    out: str = "-"
    helm_releases: bool = True
    allow_missing: tuple[str, ...] = ()
    timeout: float = 30.0

    @classmethod
    def complete(cls, params: dict[str, Any]) -> SnapshotOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        """Nothing conflicts here (-o FILE is required while the flags are parsed)."""


@click.command(
    "snapshot",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "written, complete",
            EXIT_INPUT: "usage error or unreachable cluster (nothing written); or incomplete: a read was "
            "forbidden, unauthorised, not served or failed and not accepted with --allow-missing (the file is "
            "written, its header lists each under notInspected, stderr names them)",
        }
    ),
)
@cluster_options(context_help="Kubeconfig context to capture (default: the current context).")
@click.option("--name", help="Cluster name written in the header (default: the context name).")
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    metavar="FILE",
    help="File to write: .json (JSON, written item by item: use it for large clusters) or .yaml/.yml (YAML, "
    "built in memory); - for YAML on stdout.",
)
@click.option(
    "--helm-releases/--no-helm-releases",
    default=True,
    show_default=True,
    help="Record Helm 3 release metadata (name, chart, version, status, object kinds; never values).",
)
@allow_missing_option()
@time_options()
def snapshot(**params: Any) -> None:
    """Capture what kubedra needs from a cluster into one file (a Kubernetes List with a kubedra header):
    nodes, GPU workloads, DRA objects, webhooks, CRDs, kube-system configuration, feature gates and versions.

    \b
    Only GET requests are sent. Secrets are never written (Helm releases: metadata only), container env
    values, tokens, ConfigMap data (except the kube-proxy mode, kubelet cgroup and device-plugin sharing
    settings) and last-applied-configuration annotations are scrubbed.
    audit, simulate, plan and verify accept the file instead of a live cluster (-f FILE).
    -o names the file to write here (the snapshot is the artefact), not a format.
    Without a kubeconfig, the in-cluster ServiceAccount config is used.
    """
    options = SnapshotOptions.complete(params)
    options.validate()
    run(options)


def run(options: SnapshotOptions) -> None:
    from kubedra import safewrite
    from kubedra.model import snapshot as format
    from kubedra.snapshot import capture

    kubeconfig, out = options.common.kubeconfig, options.out
    ctx = capture.resolve_context(kubeconfig, options.common.context)
    what = functools.partial(
        capture.capture_into, name=options.name, timeout=options.timeout, helm_releases=options.helm_releases
    )
    if out.endswith(".json"):  # written item by item as the pages are read: any cluster size fits in memory
        with safewrite.open_atomic(out) as f:
            writer = format.JsonWriter(f)
            header = what(writer, kubeconfig, ctx)
            writer.finish(header)
        kinds = writer.kinds
    else:  # YAML (or stdout): rendered whole in memory
        items = capture.Items()
        header = what(items, kubeconfig, ctx)
        format.write(format.Snapshot(header=header, items=items.items), out)
        kinds = {}
        for o in items.items:
            kinds[str(o.get("kind"))] = kinds.get(str(o.get("kind")), 0) + 1
    if out != "-":
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        click.echo(
            f"snapshot of {header.cluster} ({header.server_version}) written to {out}: "
            f"{sum(kinds.values())} objects ({summary or 'none'}), {len(header.helm_releases)} Helm releases"
            + (f"; not inspected: {len(header.not_inspected)}" if header.not_inspected else ""),
            err=True,
        )
    rows = snapshot_incomplete(header.cluster, header.not_inspected, options.allow_missing)
    report_incomplete(rows)
    if rows:
        sys.exit(EXIT_INPUT)
