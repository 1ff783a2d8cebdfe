"""``kubedra discover``: build the ResourceSlices NVIDIA's DRA driver would publish for this node."""

from __future__ import annotations

import re
import socket

import click

from kubedra.errors import UsageError


def _default_node_name() -> str:
    name = socket.gethostname().split(".")[0].lower()
    return re.sub(r"[^a-z0-9-]", "-", name).strip("-") or "node"


@click.command("discover", context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--nvidia-smi-xml", "xml_file", metavar="FILE", help="Output of `nvidia-smi -q -x` (- for stdin)."
)
@click.option(
    "--nvml", is_flag=True, help="Read the GPUs through NVML (needs kubedra[nvml] and an NVIDIA driver)."
)
@click.option("--node-name", help="Node name for the slices (default: this host's name).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "full", "mig-static", "mig-dynamic"]),
    default="auto",
    show_default=True,
    help="auto: mig-static when a GPU has MIG enabled, else full.",
)
@click.option("--target-version", default="1.37", show_default=True, help="Kubernetes version (1.34-1.37).")
@click.option(
    "--with-node", is_flag=True, help="Also write the Node object (GFD labels, no GPU extended resources)."
)
@click.option("--no-classes", is_flag=True, help="Leave out the driver's DeviceClasses.")
@click.option("-o", "--output", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True)
def discover(
    xml_file: str | None,
    nvml: bool,
    node_name: str | None,
    mode: str,
    target_version: str,
    with_node: bool,
    no_classes: bool,
    fmt: str,
) -> None:
    """Build the ResourceSlices the NVIDIA DRA driver (gpu.nvidia.com) would publish for this node: full GPUs,
    the MIG instances that exist (mig-static), or every MIG profile and placement with counter sets
    (mig-dynamic), from `nvidia-smi -q -x` output or NVML. The YAML feeds `kubedra simulate -f`.

    \b
    Exit codes: 0 written; 2 bad input (unknown GPU model, malformed XML, no NVML).
    """
    from kubedra.discover import build, inventory
    from kubedra.report import output

    if bool(xml_file) == nvml:
        raise UsageError("give exactly one of --nvidia-smi-xml FILE or --nvml")
    inv = inventory.read_xml(xml_file) if xml_file else inventory.read_nvml()
    found = build.discover(
        inv,
        node_name or _default_node_name(),
        mode,
        target_version,
        include_classes=not no_classes,
        include_node=with_node,
    )
    doc = {"apiVersion": "v1", "kind": "List", "items": found.objects}
    if fmt == "json":
        click.echo(output.to_json(doc), nl=False)
    else:
        head = f"# kubedra discover: {len(inv.gpus)} x {found.model.product_name}, mode {found.mode}\n"
        head += "".join(f"# note: {n}\n" for n in found.notes)
        click.echo(head + output.to_yaml(doc), nl=False)
    for n in found.notes:
        click.echo(f"kubedra: note: {n}", err=True)
