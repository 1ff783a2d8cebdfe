"""``kubedra explain``: why a claim can or cannot be allocated, as readable text."""

from __future__ import annotations

import sys
from typing import Any

import click

from kubedra.allocator import AllocationError
from kubedra.allocator.explain import explain as explain_claims
from kubedra.allocator.session import allocator_for, engine_config
from kubedra.commands._common import (
    exit_codes_epilog,
    feature_gates_option,
    input_options,
    load_inventory,
    output_option,
    target_version_option,
    warn,
)
from kubedra.commands.allocate import pick_nodes, result_entry
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError, UsageError
from kubedra.report.output import emit


@click.command(
    "explain",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "some node can allocate the claim",
            EXIT_FINDINGS: "no node can",
            EXIT_INPUT: "usage or input error (claim or node not in the input)",
        }
    ),
)
@input_options(missing="no input: give ResourceSlices and the claim as PATH... or -f PATH (- for stdin)")
@click.option(
    "--claim", "claim_ref", required=True, metavar="NAMESPACE/NAME", help="The ResourceClaim to explain."
)
@click.option("--node", "node_name", default=None, help="Only this node.")
@target_version_option()
@feature_gates_option()
@output_option()
def explain(
    files: tuple[str, ...],
    claim_ref: str,
    node_name: str | None,
    target_version: str,
    feature_gates: str | None,
    output: str,
) -> None:
    """Explain, per node, why a claim can or cannot be allocated: per request, how many devices the class
    selects, how many survive each selector, how many are in use, tainted, out of counters or capacity,
    and which constraint rejects a combination."""
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
        warn(f"{claim_ref} is already allocated; explaining a fresh allocation without it")
    cfg = engine_config(target_version, feature_gates)
    alloc = allocator_for(inv, cfg)
    nodes = pick_nodes(inv.nodes_or_synthesized(), node_name)
    if not nodes:
        raise InputError("no nodes: add Node objects, or ResourceSlices with spec.nodeName")
    entries: list[dict[str, Any]] = []
    for node in nodes:
        entry: dict[str, Any] = {"node": node.name, "allocatable": False, "error": None}
        try:
            res = alloc.allocate(node, [claim])
        except AllocationError as e:
            entry["error"] = str(e)
            entries.append(entry)
            continue
        if res is not None:
            entry["allocatable"] = True
            entry["results"] = [result_entry(r) for r in res[0].results]
        else:
            explanation = explain_claims(alloc, node, [claim])
            entry["explanation"] = explanation.to_list()
            entry["lines"] = explanation.lines()
        entries.append(entry)

    def text() -> None:
        for e in entries:
            if e["error"]:
                click.echo(f"node {e['node']}: error: {e['error']}")
            elif e["allocatable"]:
                devs = ", ".join(
                    f"{r['request']} → {r['driver']}/{r['pool']}/{r['device']}" for r in e["results"]
                )
                click.echo(f"node {e['node']}: can allocate: {devs}")
            else:
                for i, line in enumerate(e["lines"]):
                    click.echo(line if i == 0 else f"  {line}")

    data = {"claim": claim_ref, "nodes": [{k: v for k, v in e.items() if k != "lines"} for e in entries]}
    emit(data, output, text)
    sys.exit(EXIT_OK if any(e["allocatable"] for e in entries) else EXIT_FINDINGS)
