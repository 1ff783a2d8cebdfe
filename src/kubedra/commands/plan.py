"""``kubedra plan``: rollout waves for a GPU fleet, with a runbook per wave."""

from __future__ import annotations

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
from kubedra.commands._common import (
    CommonOptions,
    exit_codes_epilog,
    input_options,
    output_option,
    target_version_option,
)
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError
from kubedra.gcpause import paused_gc
from kubedra.text import count, some


@dataclass(frozen=True)
class PlanOptions:
    """``kubedra plan``'s options as parsed (the fleet file as input, -o, --target-version in ``common``)."""

    common: CommonOptions
    fleet_file: str | None = None
    wave_size: int = 10
    pool_wave_sizes: tuple[str, ...] = ()
    soak: int = 72
    html_file: str | None = None
    allow_missing: tuple[str, ...] = ()
    timeout: float = 30.0

    @classmethod
    def complete(cls, params: dict[str, Any]) -> PlanOptions:
        return cls(common=CommonOptions.take(params), **params)

    @property
    def fleet(self) -> str:
        """The one fleet file (FLEET.yaml, -f or --fleet)."""
        given = [*self.common.files, *([self.fleet_file] if self.fleet_file else [])]
        if len(given) != 1:
            raise UsageError("give exactly one fleet file: FLEET.yaml, -f FLEET.yaml or --fleet FLEET.yaml")
        return given[0]

    def pool_sizes(self) -> dict[str, int]:
        from kubedra.plan import engine

        return engine.parse_pool_sizes(self.pool_wave_sizes)

    def validate(self) -> None:
        """Usage errors before the fleet file or any cluster is read."""
        from kubedra.plan import engine

        self.fleet  # noqa: B018 - one fleet file
        engine.parse_target(self.common.target_version)
        self.pool_sizes()


@click.command(
    "plan",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "plan ready",
            EXIT_FINDINGS: "blockers or flagged waves; or a wave whose capacity is not checked: a node's DRA GPUs "
            "are not known (GPU model not in the catalogue, no GFD labels), stderr names it (the plan is still "
            "printed); or a GPU node in none of the fleet's node pools, or of a vendor the plan has no steps for (AMD), "
            "which no wave moves (stderr names it and why)",
            EXIT_INPUT: "usage or input error; or incomplete: a cluster read was forbidden, unauthorised, not "
            "served or failed (live, or when its snapshot was taken) and not accepted with --allow-missing (the "
            "plan is still printed, JSON/YAML list them under incomplete, stderr names them)",
        }
    ),
)
@input_options(required=False, help="The fleet file (same as --fleet).")
@click.option("--fleet", "fleet_file", metavar="FLEET.yaml", help="Clusters, distributions, pools.")
@target_version_option(help="Kubernetes version to reach.")
@click.option(
    "--wave-size",
    type=int,
    default=10,
    show_default=True,
    help="Percent of a cluster's GPU nodes per wave (at least one node; never across node pools).",
)
@click.option(
    "--pool-wave-size",
    "pool_wave_sizes",
    multiple=True,
    metavar="POOL=PERCENT",
    help="Percent of that node pool's GPU nodes per wave, instead of --wave-size (at least one node). "
    "Repeatable.",
)
@click.option("--soak", "soak", type=int, default=72, show_default=True, help="Hours to soak between waves.")
@output_option(("markdown", "json", "yaml", "html"))
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML report to FILE.")
@allow_missing_option()
@time_options()
def plan(**params: Any) -> None:
    """Plan the move of a GPU fleet from the NVIDIA device plugin to DRA in waves: clusters from low to high
    criticality, node pool by node pool, about --wave-size percent of the GPU nodes per wave, a soak between
    waves and a go/no-go gate for each, with exact commands for the distribution (etcd backup, control-plane
    upgrade, DRA driver, cordon/drain, device plugin off, migrated manifests, smoke test, verify, rollback).

    \b
    Audit errors are blockers to fix before wave 1; the GPU capacity of every pool is shown before, during
    and after each wave, and a wave that would leave workloads without GPUs is flagged.
    """
    options = PlanOptions.complete(params)
    options.validate()
    run(options)


def run(options: PlanOptions) -> None:
    from kubedra.plan import engine, fleet
    from kubedra.report import output as out

    target_version, output, html_file = (
        options.common.target_version,
        options.common.output,
        options.html_file,
    )
    fl = fleet.load_fleet(options.fleet)
    # one short-lived process: no cyclic collection while the snapshots are read and planned (acyclic objects
    # that each collection would rescan; kubedra.gcpause)
    with paused_gc(freeze=True):
        snaps = engine.load_snapshots(fl, timeout=options.timeout)
        p = engine.build(
            fl,
            snaps,
            target_version,
            wave_size=options.wave_size,
            soak_hours=options.soak,
            pool_wave_sizes=options.pool_sizes(),
        )
    incomplete = [
        row
        for name, snap in snaps.items()
        for row in snapshot_incomplete(name, snap.header.not_inspected, options.allow_missing)
    ]
    html_text = None
    if html_file or output == "html":
        from kubedra.report import plan_html

        html_text = plan_html.render(p)
    if html_file:
        from kubedra.report.html import write_file

        assert html_text is not None
        write_file(html_file, html_text)
    if output == "json":
        click.echo(out.to_json({**p.to_dict(), "incomplete": incomplete}), nl=False)
    elif output == "yaml":
        click.echo(out.to_yaml({**p.to_dict(), "incomplete": incomplete}), nl=False)
    elif output == "html":
        click.echo(html_text, nl=False)
    else:
        from kubedra.report import runbook  # Jinja2: only the Markdown runbook renders a template

        click.echo(runbook.markdown(p), nl=False)
    report_incomplete(incomplete)
    for w in p.unchecked:
        click.echo(
            f"kubedra: plan: wave {w.number} ({w.title}): capacity not checked: no DRA inventory known for "
            f"{', '.join(w.unchecked)} (GPU model not in the catalogue or no GFD labels)",
            err=True,
        )
    for cluster, node in p.unplanned:
        click.echo(
            f"kubedra: plan: cluster {cluster}: GPU node {node} matches none of the fleet's node pools: "
            "no wave moves it",
            err=True,
        )
    by_reason: dict[tuple[str, str], list[str]] = {}
    for cluster, node, why in p.unsupported:
        by_reason.setdefault((cluster, why), []).append(node)
    for (cluster, why), nodes in by_reason.items():
        click.echo(
            f"kubedra: plan: cluster {cluster}: {count(len(nodes), 'GPU node')} ({some(nodes)}): {why}",
            err=True,
        )
    if incomplete:
        sys.exit(EXIT_INPUT)
    sys.exit(
        EXIT_FINDINGS if p.blocked or p.flagged or p.unchecked or p.unplanned or p.unsupported else EXIT_OK
    )
