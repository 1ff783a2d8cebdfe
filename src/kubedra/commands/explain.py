"""``kubedra explain``: why a claim can or cannot be allocated, as readable text."""

from __future__ import annotations

import sys

import click

from kubedra.allocator import AllocationError
from kubedra.allocator.explain import explain as explain_claims
from kubedra.allocator.session import allocator_for, engine_config
from kubedra.commands._common import (
    feature_gates_option,
    files_option,
    load_inventory,
    target_version_option,
    warn,
)
from kubedra.commands.allocate import pick_nodes
from kubedra.errors import EXIT_FINDINGS, EXIT_OK, InputError, UsageError


@click.command("explain")
@files_option()
@click.option(
    "--claim", "claim_ref", required=True, metavar="NAMESPACE/NAME", help="The ResourceClaim to explain."
)
@click.option("--node", "node_name", default=None, help="Only this node.")
@target_version_option()
@feature_gates_option()
def explain(
    files: tuple[str, ...],
    claim_ref: str,
    node_name: str | None,
    target_version: str,
    feature_gates: str | None,
) -> None:
    """Explain, per node, why a claim can or cannot be allocated: per request, how many devices the class
    selects, how many survive each selector, how many are in use, tainted, out of counters or capacity,
    and which constraint rejects a combination. Exit 0 if some node can allocate it, 1 if none can."""
    ns, sep, name = claim_ref.rpartition("/")
    if not sep:
        ns, name = "", claim_ref
    if not name:
        raise UsageError("--claim must be NAMESPACE/NAME")
    inv = load_inventory(files)
    for n in inv.notes:
        warn(n)
    matches = [c for c in inv.claims if c.meta.name == name and (not ns or c.meta.namespace == ns)]
    if not matches:
        raise InputError(f"ResourceClaim {claim_ref} not found in the input")
    claim = matches[0]
    if claim.allocation is not None:
        inv.claims = [c for c in inv.claims if c is not claim]
        claim.allocation = None
        click.echo(f"note: {claim_ref} is already allocated; explaining a fresh allocation without it")
    cfg = engine_config(target_version, feature_gates)
    alloc = allocator_for(inv, cfg)
    nodes = pick_nodes(inv.nodes_or_synthesized(), node_name)
    if not nodes:
        raise InputError("no nodes: add Node objects, or ResourceSlices with spec.nodeName")
    ok_any = False
    for node in nodes:
        try:
            res = alloc.allocate(node, [claim])
        except AllocationError as e:
            click.echo(f"node {node.name}: error: {e}")
            continue
        if res is not None:
            ok_any = True
            devs = ", ".join(f"{r.request} → {r.driver}/{r.pool}/{r.device}" for r in res[0].results)
            click.echo(f"node {node.name}: can allocate: {devs}")
            continue
        for i, line in enumerate(explain_claims(alloc, node, [claim]).lines()):
            click.echo(line if i == 0 else f"  {line}")
    sys.exit(EXIT_OK if ok_any else EXIT_FINDINGS)
