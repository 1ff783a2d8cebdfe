"""``kubedra explain``: why a claim (or a pod's claims) can or cannot be allocated, as readable text.

Offline: ``kubedra explain -f FILES --claim NS/NAME``. Live (read-only): ``kubedra explain pod/NAME -n NS
[--context C]`` or ``claim/NAME``: the pod, its claims, classes, slices, taint rules, nodes and the in-use
allocations are read from the cluster (:mod:`kubedra.sources.live`), and each node gets the same reasons.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from kubedra.allocator import AllocationError
from kubedra.allocator.explain import explain as explain_claims
from kubedra.allocator.session import allocator_for, check_class_selectors, check_classes_given, engine_config
from kubedra.commands._cluster import allow_missing_option, incomplete_rows, report_incomplete, time_options
from kubedra.commands._common import (
    CommonOptions,
    cluster_options,
    exit_codes_epilog,
    feature_gates_option,
    input_options,
    output_option,
    target_version_option,
    warn,
)
from kubedra.commands._inventory import load_inventory
from kubedra.commands.allocate import pick_nodes, result_entry
from kubedra.errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, InputError, UsageError
from kubedra.k8s.dnsnames import dns_subdomain
from kubedra.model.inventory import Inventory, build_inventory
from kubedra.model.objects import Node, Pod, ResourceClaim
from kubedra.report.output import emit
from kubedra.text import count

# any name after the kind: an invalid one is a usage error naming the rule, not a file path "not found"
_TARGET = re.compile(r"^(pod|pods|po|claim|claims|resourceclaim|resourceclaims)/(.*)$", re.DOTALL)


def _target(files: tuple[str, ...]) -> tuple[str, str] | None:
    """``pod/NAME`` or ``claim/NAME`` among the PATHs (and not a file of that name): (kind, NAME)."""
    hits = [m for f in files if (m := _TARGET.match(f)) and not os.path.exists(f)]
    if not hits:
        return None
    if len(hits) > 1:
        raise UsageError(f"give one pod/NAME or claim/NAME, not {len(hits)}")
    m = hits[0]
    kind = "pod" if m.group(1).startswith("po") else "claim"
    problem = dns_subdomain(m.group(2))  # pod and ResourceClaim names are DNS subdomains (ValidateObjectMeta)
    if problem:
        raise UsageError(f"{kind}/NAME: the name {problem}")
    return kind, m.group(2)


@dataclass(frozen=True)
class ExplainOptions:
    """``kubedra explain``'s options as parsed: inputs (or ``pod/NAME``, ``claim/NAME``), -o, --target-version
    and --kubeconfig/--context in ``common``."""

    common: CommonOptions
    claim_ref: str | None = None
    namespace: str = "default"
    timeout: float = 20.0
    allow_missing: tuple[str, ...] = ()
    node_name: str | None = None
    feature_gates: str | None = None

    @classmethod
    def complete(cls, params: dict[str, Any]) -> ExplainOptions:
        return cls(common=CommonOptions.take(params), **params)

    def target(self) -> tuple[str, str] | None:
        """(``pod`` or ``claim``, NAME) when a PATH names an object rather than a file, else None."""
        return _target(self.common.files)

    def files(self) -> tuple[str, ...]:
        """The PATHs that are files (all but ``pod/NAME``, ``claim/NAME``)."""
        t = self.target()
        if t is None:
            return self.common.files
        return tuple(f for f in self.common.files if _TARGET.match(f) is None or os.path.exists(f))

    def live_target(self) -> tuple[str, str] | None:
        """(``pod`` or ``claim``, NAME) when the cluster is to be read: an object named and no files."""
        t = self.target()
        return t if t is not None and not self.files() else None

    def claim(self) -> tuple[str, str]:
        """(namespace, name) of ``--claim`` (no slash: the name alone, namespace empty)."""
        ns, sep, name = (self.claim_ref or "").rpartition("/")
        if not sep:
            ns, name = "", self.claim_ref or ""
        if not name:
            raise UsageError("--claim must be NAMESPACE/NAME")
        return ns, name

    def validate(self) -> None:
        target = self.target()
        if target is not None and self.claim_ref:
            raise UsageError(f"{target[0]}/NAME and --claim name two subjects: give one")
        if target is not None:
            return
        if not self.common.files:
            raise UsageError(
                "no input: give ResourceSlices and the claim as PATH... or -f PATH, or pod/NAME or claim/NAME"
            )
        if not self.claim_ref:
            raise UsageError(
                "--claim NAMESPACE/NAME (or pod/NAME, claim/NAME with -n) is required with files"
            )
        self.claim()


@click.command(
    "explain",
    epilog=exit_codes_epilog(
        {
            EXIT_OK: "some node can allocate the claim (a pod's claims)",
            EXIT_FINDINGS: "no node can",
            EXIT_INPUT: "usage or input error (claim, pod or node not found; a DeviceClass selector in the files "
            "that does not compile, or a DeviceClass a claim requests that is not in the files; cluster unreachable); or incomplete: "
            "a live read was forbidden or failed and not accepted with --allow-missing (the answer may be wrong), "
            "or some node can but a Helm template or chart among the files was not read (named on stderr)",
        }
    ),
)
@input_options(
    required=False,
    help="File, folder or - for stdin (offline); or pod/NAME or claim/NAME to read the cluster.",
)
@click.option(
    "--claim", "claim_ref", metavar="NAMESPACE/NAME", help="The ResourceClaim to explain (offline)."
)
@click.option(
    "-n", "--namespace", default="default", show_default=True, help="Namespace of pod/NAME, claim/NAME."
)
@cluster_options()
@time_options(default_timeout=20.0)
@allow_missing_option()
@click.option("--node", "node_name", default=None, help="Only this node.")
@target_version_option()
@feature_gates_option()
@output_option()
def explain(**params: Any) -> None:
    """Explain, per node, why a claim can or cannot be allocated: per request, how many devices the class
    selects, how many survive each selector, how many are in use, tainted, out of counters or capacity,
    and which constraint rejects a combination. With pod/NAME or claim/NAME (and -n, --context) the objects
    are read from the cluster, read-only; for a pod, node-level reasons (taints, affinity, unschedulable)
    come first."""
    options = ExplainOptions.complete(params)
    options.validate()
    run(options)


def run(options: ExplainOptions) -> None:
    c = options.common
    output, claim_ref, namespace = c.output, options.claim_ref, options.namespace
    live = options.live_target()
    incomplete: list[dict[str, Any]] = []
    not_read: list[InputError] = []  # Helm templates among the files: named on stderr, the answer incomplete
    pod: Pod | None = None
    target = options.target()
    if live is None:
        inv = load_inventory(options.files(), "explain", not_read)
        if target is None:
            ns, name = options.claim()
            subject = str(claim_ref)
        else:  # pod/NAME or claim/NAME -n NS answered from the files, as from a cluster
            kind, name = target
            ns = namespace
            subject = f"{kind}/{name} -n {namespace}"
            claim_ref = f"{ns}/{name}"
            if kind == "pod":
                pod = next(
                    (p for p in inv.pods if p.meta.name == name and (p.meta.namespace or "default") == ns),
                    None,
                )
                if pod is None:
                    raise InputError(f"Pod {ns}/{name} not found in the input")
    else:
        from kubedra.sources import live as live_source
        from kubedra.sources.files import Document

        kind, name = live
        ns = namespace
        read = live_source.read(c.kubeconfig, c.context, namespace, kind, name, options.timeout)
        incomplete = incomplete_rows(((read.context, u) for u in read.not_read), options.allow_missing)
        inv = build_inventory(
            [
                Document(obj=o, file=f"cluster {read.context}", line=0, index=i)
                for i, o in enumerate(read.objects)
            ]
        )
        subject = f"{kind}/{name} -n {namespace}"
        if kind == "pod":
            pod = next((p for p in inv.pods if p.meta.name == name), None)
            if pod is None:
                raise InputError(f"pod {namespace}/{name} could not be read as a Pod")
    for n in inv.notes:
        warn(n)
    report_incomplete(incomplete)
    cfg = engine_config(c.target_version, options.feature_gates)
    pod_reason: Callable[[Node], str | None] = lambda _node: None  # noqa: E731
    postfilter: list[str] = []
    if pod is not None:
        from kubedra.scheduler import why

        pc = why.pod_claims(pod, inv)
        for n in pc.notes:
            warn(n)
        if pc.missing:
            _finish(
                subject,
                [],
                output,
                incomplete,
                pending=f"not queued: {'; '.join(pc.missing)}"
                + (" (or not readable: see the incomplete reads)" if incomplete else ""),
                not_read=[str(e) for e in not_read],
            )
            return
        claims = pc.to_allocate
        allocated = pc.allocated
        pod_reason = lambda node: why.node_reason(pod, node, allocated)  # noqa: E731
        postfilter = why.postfilter_hints(pod, inv.nodes_or_synthesized(), allocated, c.target_version)
    else:
        # a claim written without a namespace lands in "default", as kubectl apply would put it
        matches = [
            c for c in inv.claims if c.meta.name == name and (not ns or (c.meta.namespace or "default") == ns)
        ]
        if not matches:
            raise InputError(f"ResourceClaim {claim_ref or f'{ns}/{name}'} not found in the input")
        claims = [matches[0]]
        if claims[0].allocation is not None:
            inv.claims = [c for c in inv.claims if c is not claims[0]]
            claims[0].allocation = None
            warn(f"{subject} is already allocated; explaining a fresh allocation without it")
    nodes = pick_nodes(inv.nodes_or_synthesized(), options.node_name)
    if not nodes:
        raise InputError("no nodes: add Node objects, or ResourceSlices with spec.nodeName")
    _finish(
        subject,
        per_node(inv, cfg, nodes, claims, pod_reason, classes_are_input=live is None),
        output,
        incomplete,
        hints=[*_hints(inv, claims), *postfilter],
        not_read=[str(e) for e in not_read],
    )


def _hints(inv: Inventory, claims: list[ResourceClaim]) -> list[str]:
    """DeviceClasses the claims use that pin a driver no ResourceSlice publishes."""
    from kubedra.verify.checks import unpublished_drivers

    used: set[str] = set()
    for c in claims:
        for r in c.spec.requests:
            if r.exactly is not None:
                used.add(r.exactly.device_class_name)
            used |= {s.device_class_name for s in r.first_available}
    classes = [(c.name, list(c.selectors)) for c in inv.classes if c.name in used]
    return unpublished_drivers(classes, {s.driver for s in inv.slices})


def per_node(
    inv: Inventory,
    cfg: Any,
    nodes: Sequence[Node],
    claims: list[ResourceClaim],
    node_reason: Callable[[Node], str | None],
    *,
    classes_are_input: bool = False,
) -> list[dict[str, Any]]:
    alloc = allocator_for(inv, cfg)
    if classes_are_input:  # a class from files that does not compile is bad input (exit 2); from a cluster,
        check_class_selectors(inv, alloc)  # it is why its claims cannot be allocated (the answer, exit 1)
        check_classes_given(
            inv, claims
        )  # likewise a class not given in files; not found in a cluster: exit 1
    entries: list[dict[str, Any]] = []
    for node in nodes:
        entry: dict[str, Any] = {"node": node.name, "allocatable": False, "error": None}
        entries.append(entry)
        reason = node_reason(node)
        if reason:
            entry["reason"] = reason
            entry["lines"] = [f"node {node.name}: {reason}"]
            continue
        if not claims:
            entry["allocatable"] = True
            entry["results"] = []
            continue
        try:
            res = alloc.allocate(node, claims)
        except AllocationError as e:
            entry["error"] = str(e)
            continue
        if res is not None:
            entry["allocatable"] = True
            entry["results"] = [result_entry(r) for a in res for r in a.results]
        else:
            explanation = explain_claims(alloc, node, claims)
            entry["explanation"] = explanation.to_list()
            entry["lines"] = explanation.lines()
    return entries


def _finish(
    subject: str,
    entries: list[dict[str, Any]],
    output: str,
    incomplete: list[dict[str, Any]],
    pending: str | None = None,
    hints: Sequence[str] = (),
    not_read: Sequence[str] = (),
) -> None:
    def text() -> None:
        if pending:
            click.echo(f"{subject}: {pending}")
        for e in entries:
            if e["error"]:
                click.echo(f"node {e['node']}: error: {e['error']}")
            elif e["allocatable"]:
                devs = ", ".join(
                    f"{r['request']} → {r['driver']}/{r['pool']}/{r['device']}" for r in e["results"]
                )
                click.echo(f"node {e['node']}: can allocate: {devs or 'nothing left to allocate'}")
            else:
                for i, line in enumerate(e["lines"]):
                    click.echo(line if i == 0 else f"  {line}")
        for h in hints:
            click.echo(f"hint: {h}")

    key = "claim" if not subject.startswith("pod/") else "pod"
    data: dict[str, Any] = {
        key: subject,
        "nodes": [{k: v for k, v in e.items() if k != "lines"} for e in entries],
    }
    if pending:
        data["pending"] = pending
    if incomplete:
        data["incomplete"] = incomplete
    if hints:
        data["hints"] = list(hints)
    if not_read:
        data["notRead"] = list(not_read)
    emit(data, output, text)
    if incomplete:
        sys.exit(EXIT_INPUT)  # incomplete, like every verb that reads a cluster (stderr names the reads)
    ok = any(e["allocatable"] for e in entries) and not pending
    if ok and not_read:  # a Helm template not read may hold what changes the answer: never clean
        click.echo(
            f"kubedra: incomplete: {count(len(not_read), 'input')} not read (Helm templates or charts): render "
            "them and explain with the output",
            err=True,
        )
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_OK if ok else EXIT_FINDINGS)
