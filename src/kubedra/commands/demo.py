"""``kubedra demo``: the device plugin vs DRA simulation on a built-in example (data/demo/)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import click
import yaml

from kubedra.commands._common import (
    TABLE_FORMATS,
    CommonOptions,
    exit_codes_epilog,
    output_option,
    target_version_option,
)
from kubedra.commands.simulate import build_options, report
from kubedra.errors import EXIT_INPUT, EXIT_OK, UsageError
from kubedra.k8s import datafiles
from kubedra.sources.files import parse_text


@functools.cache
def examples() -> dict[str, dict[str, Any]]:
    text = datafiles.read_text("demo/examples.yaml")
    data: dict[str, dict[str, Any]] = yaml.safe_load(text)["examples"]
    return data


def example_inputs(name: str) -> Any:
    from kubedra.simulate.inputs import Inputs

    spec = examples()[name]
    file = f"demo/{spec['workloads']}"
    text = datafiles.read_text(file)
    parsed = parse_text(text, f"kubedra/data/{file}")
    if parsed.errors:  # pragma: no cover - packaged data is tested
        raise parsed.errors[0]
    return Inputs(documents=parsed.documents)


@dataclass(frozen=True)
class DemoOptions:
    """``kubedra demo``'s options as parsed (-o and --target-version in ``common``)."""

    common: CommonOptions
    example: str = "inference"
    list_examples: bool = False
    chart: str | None = None
    bound: bool = False
    html_file: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> DemoOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        if self.list_examples:
            return
        if self.example not in examples():
            raise UsageError(f"unknown example {self.example!r} (known: {', '.join(examples())})")
        if self.chart:
            from kubedra.report.simulate_chart import check_chart_path

            check_chart_path(self.chart)


@click.command(
    "demo", epilog=exit_codes_epilog({EXIT_OK: "the demo ran", EXIT_INPUT: "usage error (unknown example)"})
)
@click.option(
    "--example",
    default="inference",
    show_default=True,
    metavar="NAME",
    help="Built-in example: inference (18 pods, 8 x A100) or cluster (32 x H100, inference + training gang).",
)
@click.option("--list", "list_examples", is_flag=True, help="List the built-in examples.")
@click.option(
    "--chart", default=None, metavar="FILE", help="Write GPU and GPU-memory use per node (.svg/.png)."
)
@click.option("--bound", is_flag=True, help="Also compute how many pods fit at best (needs ortools).")
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML report to FILE.")
@target_version_option()
@output_option((*TABLE_FORMATS, "markdown"))
def demo(**params: Any) -> None:
    """Simulate a built-in example: device-plugin pods, then the same pods migrated to DRA claims.

    Same output as kubedra simulate (-o json has the same shape). The example's cluster, GPU modes and
    workloads are data files under kubedra/data/demo/; kubedra simulate takes the same flags.
    """
    options = DemoOptions.complete(params)
    options.validate()
    run(options)


def run(options: DemoOptions) -> None:
    if options.list_examples:
        for name, spec in examples().items():
            click.echo(f"{name}: {spec['title']}")
        return
    example, chart, output = options.example, options.chart, options.common.output
    spec = examples()[example]
    from kubedra.simulate.run import simulate

    opts = build_options(
        mode="both",
        nodes=spec["nodes"],
        gpu_mode=spec.get("gpuMode"),
        dp_gpu_mode=spec.get("dpGpuMode"),
        target_version=options.common.target_version,
        feature_gates=None,
        scoring=spec.get("scoring", "LeastAllocated"),
        dra_sizing=spec.get("draSizing", "gpu"),
        gpu_memory=None,
        sharing=None,
        preemption=True,
    )
    sim = simulate(example_inputs(example), opts)
    flags = (
        f"kubedra simulate -f <workloads> --nodes {spec['nodes']} --gpu-mode {spec.get('gpuMode', 'full')}"
        + (f" --dp-gpu-mode {spec['dpGpuMode']}" if spec.get("dpGpuMode") else "")
        + (f" --dra-sizing {spec['draSizing']}" if spec.get("draSizing") else "")
    )
    preface = [f"kubedra demo: {spec['title']}\n\n", spec["story"].rstrip() + "\n\n", f"Same as: {flags}\n\n"]
    if output == "markdown":
        preface = [f"# kubedra demo: {spec['title']}\n\n", spec["story"].rstrip() + "\n\n", f"`{flags}`\n\n"]
    report(sim, opts, output, chart=chart, bound=options.bound, preface=preface)
    if options.html_file:
        from kubedra.commands._record import run_record
        from kubedra.report.pages import write_simulation

        record = run_record(
            (), opts.target_version, [("example", f"{example}: {spec['title']}"), ("same as", flags)]
        )
        write_simulation(options.html_file, sim, record, title=f"kubedra demo: {spec['title']}")
