"""``kubedra discover``: build the ResourceSlices a GPU vendor's DRA driver would publish for this node."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Any

import click

from kubedra.commands._common import (
    CommonOptions,
    driver_version_option,
    exit_codes_epilog,
    output_option,
    target_version_option,
)
from kubedra.errors import EXIT_INPUT, EXIT_OK, UsageError


def _default_node_name() -> str:
    name = socket.gethostname().split(".")[0].lower()
    return re.sub(r"[^a-z0-9-]", "-", name).strip("-") or "node"


@dataclass(frozen=True)
class DiscoverOptions:
    """``kubedra discover``'s options as parsed (-o and --target-version in ``common``)."""

    common: CommonOptions
    xml_file: str | None = None
    nvml: bool = False
    amd_smi_json: str | None = None
    node_name: str | None = None
    mode: str = "auto"
    with_node: bool = False
    no_classes: bool = False
    no_health_taints: bool = False
    drain_rule: str | None = None
    driver_version: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> DiscoverOptions:
        return cls(common=CommonOptions.take(params), **params)

    def drain_target(self) -> tuple[str, str]:
        """(node, device) of --drain-rule NODE/DEVICE."""
        from kubedra.discover import drain

        return drain.parse_target(self.drain_rule or "")

    def validate(self) -> None:
        if self.drain_rule:
            if self.xml_file or self.nvml:
                raise UsageError("--drain-rule takes no GPU input (--nvidia-smi-xml/--nvml)")
            self.drain_target()
        elif sum((bool(self.xml_file), self.nvml, bool(self.amd_smi_json))) != 1:
            raise UsageError("give exactly one of --nvidia-smi-xml FILE, --nvml or --amd-smi-json FILE")
        if self.amd_smi_json:
            nvidia_only = {
                "--mode": self.mode != "auto",
                "--with-node": self.with_node,
                "--driver-version": bool(self.driver_version),
                "--no-health-taints": self.no_health_taints,
            }
            given = [o for o, on in nvidia_only.items() if on]
            if given:
                raise UsageError(
                    f"{', '.join(given)}: not taken with --amd-smi-json (the partition mode is amd-smi's, AMD's "
                    "Node labels and driver releases are not modelled, and amd-smi static reports no health)"
                )


@click.command(
    "discover",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "written",
            EXIT_INPUT: "usage or input error (unknown GPU model, malformed XML or amd-smi JSON, no NVML, unknown "
            "--driver-version, --mode mig-dynamic on a GPU without MIG, an option --amd-smi-json does not take)",
        }
    ),
)
@click.option(
    "--nvidia-smi-xml", "xml_file", metavar="FILE", help="Output of `nvidia-smi -q -x` (- for stdin)."
)
@click.option(
    "--nvml", is_flag=True, help="Read the GPUs through NVML (needs kubedra[nvml] and an NVIDIA driver)."
)
@click.option(
    "--amd-smi-json",
    metavar="FILE",
    help="Output of `amd-smi static --json` (- for stdin): the slice AMD's DRA driver (gpu.amd.com) would publish.",
)
@click.option("--node-name", help="Node name for the slices (default: this host's name).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "full", "mig-static", "mig-dynamic"]),
    default="auto",
    show_default=True,
    help="auto: mig-static when a GPU has MIG enabled, else full; mig-dynamic on a GPU without MIG is refused.",
)
@target_version_option()
@click.option(
    "--with-node", is_flag=True, help="Also write the Node object (GFD labels, no GPU extended resources)."
)
@driver_version_option(
    all_default=False,
    help="NVIDIA DRA driver release whose devices and DeviceClasses to publish (default: the newest kubedra has "
    "read); its attribute names, MIG device names and DeviceClasses differ between releases.",
)
@click.option("--no-classes", is_flag=True, help="Leave out the driver's DeviceClasses.")
@click.option(
    "--no-health-taints",
    is_flag=True,
    help="Publish unhealthy GPUs untainted, like a driver without its NVMLDeviceHealthCheck gate.",
)
@click.option(
    "--drain-rule",
    metavar="NODE/DEVICE",
    help="Instead: write the NoExecute DeviceTaintRule that evicts the pods on one device (no GPU input).",
)
@output_option(("yaml", "json"))
def discover(**params: Any) -> None:
    """Build the ResourceSlices the NVIDIA DRA driver (gpu.nvidia.com) would publish for this node: full GPUs,
    the MIG instances that exist (mig-static), or every MIG profile and placement with counter sets
    (mig-dynamic), from `nvidia-smi -q -x` output or NVML. Give the YAML to `kubedra simulate` with your
    workloads.
    An unhealthy GPU (uncorrectable ECC, pending or failed row remap / page retirement, reset required, lost)
    is published with the device taint the driver's health monitor puts on it (never NoExecute).
    --drain-rule NODE/DEVICE writes the NoExecute DeviceTaintRule that drains one device instead.
    --amd-smi-json FILE writes what AMD's DRA driver (gpu.amd.com) would publish, from `amd-smi static --json`.
    """
    options = DiscoverOptions.complete(params)
    options.validate()
    run(options)


def run(options: DiscoverOptions) -> None:
    from kubedra.discover import build, inventory
    from kubedra.report.output import to_json, to_yaml

    output, target_version, xml_file = options.common.output, options.common.target_version, options.xml_file
    if options.drain_rule:
        from kubedra.discover import drain
        from kubedra.k8s.versions import require_supported as parse_version

        version = str(parse_version(target_version))
        rule = drain.drain_rule(*options.drain_target(), version)
        note = drain.gates_note(version)
        click.echo(to_json(rule) if output == "json" else to_yaml(rule), nl=False)
        if note:
            click.echo(f"kubedra: note: {note}", err=True)
        return
    if options.amd_smi_json:
        from kubedra.discover import smi

        objects, notes = smi.discover(
            "amd",
            options.amd_smi_json,
            options.node_name or _default_node_name(),
            include_classes=not options.no_classes,
        )
        doc = {"apiVersion": "v1", "kind": "List", "items": objects}
        head = "# kubedra discover: amd-smi, AMD DRA driver gpu.amd.com\n" + "".join(
            f"# note: {n}\n" for n in notes
        )
        click.echo(to_json(doc) if output == "json" else head + to_yaml(doc), nl=False)
        for n in notes:
            click.echo(f"kubedra: note: {n}", err=True)
        return
    inv = inventory.read_xml(xml_file) if xml_file else inventory.read_nvml()
    found = build.discover(
        inv,
        options.node_name or _default_node_name(),
        options.mode,
        target_version,
        include_classes=not options.no_classes,
        include_node=options.with_node,
        health_taints=not options.no_health_taints,
        driver_release=options.driver_version,
    )
    doc = {"apiVersion": "v1", "kind": "List", "items": found.objects}
    if output == "json":
        click.echo(to_json(doc), nl=False)
    else:
        head = (
            f"# kubedra discover: {len(inv.gpus)} x {found.model.product_name}, mode {found.mode}, "
            f"NVIDIA DRA driver {found.driver_release}\n"
        )
        head += "".join(f"# note: {n}\n" for n in found.notes)
        click.echo(head + to_yaml(doc), nl=False)
    for n in found.notes:
        click.echo(f"kubedra: note: {n}", err=True)
