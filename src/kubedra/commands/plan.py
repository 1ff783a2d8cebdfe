"""``kubedra plan``: rollout waves for a GPU fleet, with a runbook per wave."""

from __future__ import annotations

import sys

import click

from kubedra.errors import EXIT_FINDINGS, EXIT_OK


@click.command("plan", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--fleet", "fleet_file", required=True, metavar="FLEET.yaml", help="Clusters, distributions, pools."
)
@click.option(
    "--target-version", default="1.37", show_default=True, help="Kubernetes version to reach (1.34-1.37)."
)
@click.option(
    "--wave-size",
    type=int,
    default=10,
    show_default=True,
    help="Percent of a cluster's GPU nodes per wave (at least one node; never across node pools).",
)
@click.option("--soak", "soak", type=int, default=72, show_default=True, help="Hours to soak between waves.")
@click.option(
    "-o",
    "--output",
    "fmt",
    type=click.Choice(["markdown", "json", "yaml", "html"]),
    default="markdown",
    show_default=True,
)
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML report to FILE.")
@click.option(
    "--timeout", type=float, default=20.0, show_default=True, help="Seconds per request to live clusters."
)
def plan(
    fleet_file: str,
    target_version: str,
    wave_size: int,
    soak: int,
    fmt: str,
    html_file: str | None,
    timeout: float,
) -> None:
    """Plan the move of a GPU fleet from the NVIDIA device plugin to DRA in waves: clusters from low to high
    criticality, node pool by node pool, about --wave-size percent of the GPU nodes per wave, a soak between
    waves and a go/no-go gate for each, with exact commands for the distribution (etcd backup, control-plane
    upgrade, DRA driver, cordon/drain, device plugin off, migrated manifests, smoke test, verify, rollback).

    \b
    Audit errors are blockers to fix before wave 1; the GPU capacity of every pool is shown before, during
    and after each wave, and a wave that would leave workloads without GPUs is flagged.
    Exit codes: 0 plan ready; 1 blockers or flagged waves (the plan is still printed); 2 bad input.
    """
    from kubedra.plan import engine, fleet, runbook
    from kubedra.report import output

    fl = fleet.load_fleet(fleet_file)
    engine.parse_target(target_version)
    snaps = engine.load_snapshots(fl, timeout=timeout)
    p = engine.build(fl, snaps, target_version, wave_size=wave_size, soak_hours=soak)
    html_text = None
    if html_file or fmt == "html":
        from kubedra.plan import html as plan_html

        html_text = plan_html.render(p)
    if html_file:
        from kubedra.report.html import write_file

        assert html_text is not None
        write_file(html_file, html_text)
    if fmt == "json":
        click.echo(output.to_json(p.to_dict()), nl=False)
    elif fmt == "yaml":
        click.echo(output.to_yaml(p.to_dict()), nl=False)
    elif fmt == "html":
        click.echo(html_text, nl=False)
    else:
        click.echo(runbook.markdown(p), nl=False)
    sys.exit(EXIT_FINDINGS if p.blocked or p.flagged else EXIT_OK)
