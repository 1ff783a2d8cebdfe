"""``kubedra discover``: build the ResourceSlices a GPU vendor's DRA driver would publish for this node."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import Any

import click

from kubedra import vendors
from kubedra.commands._common import (
    CommonOptions,
    driver_version_option,
    exit_codes_epilog,
    output_option,
    target_version_option,
)
from kubedra.discover import node
from kubedra.errors import EXIT_INPUT, EXIT_OK, UsageError
from kubedra.vendors.discovery import DiscoverRequest


def _default_node_name() -> str:
    name = socket.gethostname().split(".")[0].lower()
    return re.sub(r"[^a-z0-9-]", "-", name).strip("-") or "node"


def _inputs_text() -> str:
    """Every vendor's discover input as a usage message names them: ``--a FILE, --b or --c FILE``."""
    named = [f"{i.option} {i.metavar}" if i.metavar else i.option for _, i in node.inputs()]
    return ", ".join(named[:-1]) + " or " + named[-1]


@dataclass(frozen=True)
class DiscoverOptions:
    """``kubedra discover``'s options as parsed (-o and --target-version in ``common``); ``inputs``: the vendors'
    GPU inputs given (parameter name, file or None for a flag), in the order the vendors list them."""

    common: CommonOptions
    inputs: tuple[tuple[str, str | None], ...] = ()
    node_name: str | None = None
    mode: str = "auto"
    with_node: bool = False
    no_classes: bool = False
    no_health_taints: bool = False
    drain_rule: str | None = None
    driver_version: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> DiscoverOptions:
        common = CommonOptions.take(params)
        given = []
        for _, i in node.inputs():
            value = params.pop(i.dest, None)
            if value:
                given.append((i.dest, None if value is True else value))
        return cls(common=common, inputs=tuple(given), **params)

    def drain_target(self) -> tuple[str, str]:
        """(node, device) of --drain-rule NODE/DEVICE."""
        from kubedra.discover import drain

        return drain.parse_target(self.drain_rule or "")

    def validate(self) -> None:
        if self.drain_rule:
            if self.inputs:
                names = "/".join(i.option for _, i in node.inputs())
                raise UsageError(f"--drain-rule takes no GPU input ({names})")
            self.drain_target()
        elif len(self.inputs) != 1:
            raise UsageError(f"give exactly one of {_inputs_text()}")


def _input_options(f: Any) -> Any:
    """One option per vendor input (``--nvidia-smi-xml FILE``, ``--amd-smi-json FILE``...), in registry order."""
    for _, i in reversed(node.inputs()):
        if i.metavar is None:
            f = click.option(i.option, is_flag=True, help=i.help)(f)
        else:
            f = click.option(i.option, metavar=i.metavar, help=i.help)(f)
    return f


def _driver_version_help() -> str:
    whose = " and ".join(v.title for v in vendors.all() if v.driver_releases)
    return (
        f"{whose} DRA driver release whose devices and DeviceClasses to publish (default: the newest kubedra has "
        "read); its attribute names, MIG device names and DeviceClasses differ between releases."
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
@_input_options
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
@driver_version_option(all_default=False, help=_driver_version_help())
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
    from kubedra.report.output import to_json, to_yaml

    output, target_version = options.common.output, options.common.target_version
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
    ((dest, value),) = options.inputs
    found = node.discover(
        dest,
        value,
        DiscoverRequest(
            node=options.node_name or _default_node_name(),
            k8s_version=target_version,
            include_classes=not options.no_classes,
            mode=options.mode,
            include_node=options.with_node,
            health_taints=not options.no_health_taints,
            driver_release=options.driver_version,
        ),
    )
    doc = {"apiVersion": "v1", "kind": "List", "items": found.objects}
    if output == "json":
        click.echo(to_json(doc), nl=False)
    else:
        head = f"# kubedra discover: {found.summary}\n" + "".join(f"# note: {n}\n" for n in found.notes)
        click.echo(head + to_yaml(doc), nl=False)
    for n in found.notes:
        click.echo(f"kubedra: note: {n}", err=True)
