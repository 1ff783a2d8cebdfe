"""Human output of a simulation: both modes side by side, the density ratio, then every pending pod's reason.

Pending pods with the same workload and reason are grouped on one row (``llama-8b-2 … llama-8b-7 (6)``);
``-o json`` lists every pod.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from kubedra.report import table
from kubedra.simulate.results import TITLES, ModeResult, PodOutcome, Simulation
from kubedra.text import count, noun

WITH = {"device-plugin": "with the device plugin", "dra": "with DRA"}


def gib(n: int) -> str:
    if n == 0:
        return "0"
    v = n / 2**30
    return f"{v:,.0f} GiB" if v >= 100 else f"{v:,.1f} GiB"


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}x" if b else "-"


def summary_rows(sim: Simulation) -> tuple[list[str], list[list[str]]]:
    modes = list(sim.results)
    headers = ["", *(TITLES.get(m, m) for m in modes)]
    res = [sim.results[m] for m in modes]

    def row(label: str, fn: Callable[[ModeResult], str]) -> list[str]:
        return [label, *(fn(r) for r in res)]

    rows = [
        row("pods placed", lambda r: str(r.placed)),
        row("pods pending", lambda r: str(r.pending)),
        row("GPUs used / physical", lambda r: f"{r.used} / {r.physical}"),
        row("GPU devices given", _given),
        row("GPU memory requested", lambda r: gib(r.requested_bytes)),
        row("GPU memory allocated", lambda r: gib(r.allocated_bytes)),
        row("allocated / requested", lambda r: _ratio(r.allocated_bytes, r.requested_bytes)),
        row("pods preempted or evicted", lambda r: str(len(r.evicted))),
        row("simulation time", lambda r: f"{r.seconds:.2f} s"),
    ]
    return headers, rows


def _given(r: ModeResult, limit: int = 4) -> str:
    items = list(r.given().items())
    text = ", ".join(f"{n} x {k}" for k, n in items[:limit])
    return text + (f", +{len(items) - limit} more" if len(items) > limit else "") if text else "-"


def _compact(names: Sequence[str]) -> str:
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]}, {names[1]}"
    return f"{names[0]} … {names[-1]} ({len(names)})"


def pending_groups(pods: Sequence[PodOutcome]) -> list[list[str]]:
    """Rows of pending pods: one per workload and reason. A reason that names the pod's own claims (a claim
    from a template is ``<namespace>/<pod>-<claim>``) groups with its siblings' as ``<pod>``."""
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for p in pods:
        if p.node:
            continue
        reason = p.reason or ""
        key = reason.replace(f"/{p.name}-", "/<pod>-")
        groups.setdefault((p.namespace, p.owner or p.name, key), []).append((p.name, reason))
    return [
        [ns, _compact([n for n, _ in members]), members[0][1] if len(members) == 1 else key]
        for (ns, _owner, key), members in groups.items()
    ]


def evicted_rows(r: ModeResult) -> list[list[str]]:
    """Pods preempted or evicted for a NoExecute device taint (the reason says which)."""
    return [[p.namespace, p.name, p.reason or ""] for p in r.evicted]


def header_line(sim: Simulation, target: str, scoring: str) -> str:
    nodes = len(sim.cluster.node_names)
    physical = max((r.physical for r in sim.results.values()), default=0)
    pods = len(next(iter(sim.results.values())).pods) if sim.results else 0
    where = f" ({sim.cluster.spec})" if sim.cluster.spec else ""
    return (
        f"{count(nodes, 'node')}{where}, {count(physical, 'GPU')}; {count(pods, 'pod')} simulated; "
        f"Kubernetes {target}, scoring {scoring}"
    )


def density_line(sim: Simulation) -> str | None:
    d = sim.density
    if d is None:
        return None
    dp, dra = sim.results["device-plugin"], sim.results["dra"]
    return f"density (pods placed, DRA / device plugin): {dra.placed} / {dp.placed} = {d:.2f}x"


def savings_line(sim: Simulation) -> str | None:
    """When both modes place every pod, what DRA saves: GPUs and GPU memory (the pod density ratio is then
    1.00x and says nothing). None otherwise (then :func:`density_line` is the headline)."""
    dp, dra = sim.results.get("device-plugin"), sim.results.get("dra")
    if dp is None or dra is None or dp.pending or dra.pending:
        return None
    pods = count(dra.placed, "pod")
    memory = dp.allocated_bytes - dra.allocated_bytes
    mem_text = (
        f"{gib(memory)} less GPU memory allocated ({gib(dra.allocated_bytes)} instead of {gib(dp.allocated_bytes)})"
        if memory > 0
        else f"{gib(-memory)} more GPU memory allocated"
        if memory < 0
        else "the same GPU memory allocated"
    )
    saved = dp.used - dra.used
    if saved > 0:
        return f"Both place all {pods}; DRA needs {saved} fewer {noun(saved, 'GPU')} ({dra.used} instead of {dp.used}), {mem_text}."
    if saved < 0:
        return f"Both place all {pods}; DRA needs {-saved} more {noun(-saved, 'GPU')} ({dra.used} instead of {dp.used}), {mem_text}."
    return f"Both place all {pods} on {count(dra.used, 'GPU')}; {mem_text}."


def pods_table(sim: Simulation) -> str:
    rows: list[list[Any]] = []
    for mode, r in sim.results.items():
        for p in r.pods:
            rows.append(
                [TITLES.get(mode, mode), p.namespace, p.name, p.node or "-", ", ".join(p.devices) or "-"]
            )
    width = table.terminal_width(sys.stdout)
    return table.render(["mode", "namespace", "pod", "node", "devices"], rows, width=width)
