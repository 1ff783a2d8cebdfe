"""``kubedra allocate``: allocate ResourceClaims on nodes exactly like kube-scheduler's DRA allocator."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import click

from kubedra.allocator import AllocationError, InvalidPoolsError
from kubedra.allocator.explain import explain
from kubedra.allocator.session import allocator_for, check_class_selectors, check_classes_given, engine_config
from kubedra.commands._common import (
    CommonOptions,
    exit_codes_epilog,
    feature_gates_option,
    input_options,
    output_option,
    target_version_option,
    warn,
)
from kubedra.commands._inventory import load_inventory
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError
from kubedra.model.objects import Node, ResourceClaim
from kubedra.model.serialize import node_selector_dict, qty_map
from kubedra.report.output import emit, print_table
from kubedra.text import count


def result_entry(r: Any) -> dict[str, Any]:
    entry = {
        "request": r.request,
        "driver": r.driver,
        "pool": r.pool,
        "device": r.device,
        "adminAccess": bool(r.admin_access),
        "shareID": r.share_id,
        "consumedCapacity": qty_map(r.consumed_capacity),
    }
    if r.skip_node_operations:  # only with DRAOptionalNodeOperations (1.37 alpha)
        entry["skipNodeOperations"] = list(r.skip_node_operations)
    return entry


def pick_nodes(nodes: list[Node], name: str | None) -> list[Node]:
    if name is None:
        return nodes
    chosen = [n for n in nodes if n.name == name]
    if not chosen:
        known = ", ".join(n.name for n in nodes) or "none"
        raise InputError(f"node {name!r} not found in the input (nodes: {known})")
    return chosen


def allocate_on_nodes(
    files: tuple[str, ...],
    node_name: str | None,
    target_version: str,
    feature_gates: str | None,
    with_explanation: bool,
    not_read: list[InputError] | None = None,
) -> tuple[list[dict[str, Any]], list[ResourceClaim]]:
    inv = load_inventory(files, "allocate", not_read)
    for n in inv.notes:
        warn(n)
    cfg = engine_config(target_version, feature_gates)
    pending = [c for c in inv.claims if c.allocation is None]
    if not pending:
        raise InputError("no unallocated ResourceClaim in the input (allocated claims only count as in use)")
    nodes = pick_nodes(inv.nodes_or_synthesized(), node_name)
    if not nodes:
        raise InputError("no nodes: add Node objects, or ResourceSlices with spec.nodeName")
    check_classes_given(inv, pending)
    alloc = allocator_for(inv, cfg)
    check_class_selectors(inv, alloc)
    out = []
    for node in nodes:
        entry: dict[str, Any] = {
            "node": node.name,
            "allocated": False,
            "claims": [],
            "error": None,
            "explanation": [],
        }
        try:
            results = alloc.allocate(node, pending)
        except InvalidPoolsError as e:
            results = None
            entry["error"] = str(e)
        except AllocationError as e:
            results = None
            entry["error"] = str(e)
        if results is not None:
            entry["allocated"] = True
            for claim, res in zip(pending, results, strict=True):
                entry["claims"].append(
                    {
                        "namespace": claim.meta.namespace or None,
                        "name": claim.meta.name,
                        "results": [result_entry(r) for r in res.results],
                        "nodeSelector": node_selector_dict(res.node_selector),
                    }
                )
        elif with_explanation:
            entry["explanation"] = explain(alloc, node, pending).to_list()
        out.append(entry)
    return out, pending


def _short_reason(explanation: list[dict[str, Any]]) -> str:
    """The summary plus the first request that cannot be satisfied, for one table cell."""
    summary = next((x["summary"] for x in explanation if "summary" in x), "")
    blocked = next((x for x in explanation if "request" in x and x["available"] != x["needed"]), None)
    if blocked is None:
        return summary
    return f"{summary}: {blocked['message'].split(' — ', 1)[-1]}"


@dataclass(frozen=True)
class AllocateOptions:
    """``kubedra allocate``'s options as parsed (inputs, -o, --target-version in ``common``)."""

    common: CommonOptions
    node_name: str | None = None
    feature_gates: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> AllocateOptions:
        return cls(common=CommonOptions.take(params), **params)

    def validate(self) -> None:
        """Nothing conflicts here (no input at all is refused while the flags are parsed)."""


@click.command(
    "allocate",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "some node can take all claims",
            EXIT_FINDINGS: "no node can",
            EXIT_INPUT: "usage or input error (a DeviceClass selector that does not compile among them; a "
            "DeviceClass a claim requests that is not among them); or incomplete: some node can, but a Helm "
            "template or chart among the inputs was not read (named on stderr)",
        }
    ),
)
@input_options(missing="no input: give ResourceSlices and ResourceClaims as PATH... or -f PATH (- for stdin)")
@click.option("--node", "node_name", default=None, help="Only try this node.")
@target_version_option()
@feature_gates_option()
@output_option()
def allocate(**params: Any) -> None:
    """Allocate the unallocated ResourceClaims in the input together (as one pod's claims) on each node.

    Inputs: ResourceSlices, DeviceClasses, DeviceTaintRules, Nodes and ResourceClaims; claims that already
    have status.allocation count as in use. Without Node objects, nodes are taken from the slices'
    nodeName.
    """
    options = AllocateOptions.complete(params)
    options.validate()
    run(options)


def run(options: AllocateOptions) -> None:
    c = options.common
    not_read: list[InputError] = []
    out, pending = allocate_on_nodes(
        c.files,
        options.node_name,
        c.target_version,
        options.feature_gates,
        with_explanation=True,
        not_read=not_read,
    )

    def table() -> None:
        rows = []
        for e in out:
            if e["allocated"]:
                devs = ", ".join(
                    f"{r['request']}={r['pool']}/{r['device']}" for c in e["claims"] for r in c["results"]
                )
                rows.append([e["node"], "yes", devs])
            else:
                reason = e["error"] or _short_reason(e["explanation"])
                rows.append([e["node"], "no", reason])
        names = ", ".join(
            f"{c.meta.namespace}/{c.meta.name}" if c.meta.namespace else c.meta.name for c in pending
        )
        print_table(["node", "allocated", "devices / reason"], rows, title=f"claims: {names}")

    emit(out, c.output, table)
    # no node can: the answer (1), even with a template not read; some node can: incomplete (2) when one was
    # not read (it may hold claims or nodes), never clean
    if not any(e["allocated"] for e in out):
        sys.exit(EXIT_FINDINGS)
    if not_read:
        click.echo(
            f"kubedra: incomplete: {count(len(not_read), 'input')} not read (Helm templates or charts): render "
            "them and allocate with the output",
            err=True,
        )
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_OK)
