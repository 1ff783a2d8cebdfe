"""Why a claim cannot be allocated on a node, in terms a user can act on.

Upstream's allocator only answers "cannot allocate all claims". kubedra re-examines every request (and
each ``firstAvailable`` alternative) against the node's devices, one filter at a time, in the allocator's
own order, and counts what survives each step:

    pools → class selectors → request selectors (each one) → node selection → in use → capacity →
    counters → taints → count needed

When enough devices survive individually but the search still failed, the cause lies in combinations:
claim constraints (matchAttribute / distinctAttribute), counters shared between the picked devices, or
devices wanted by several claims of the same pod; the explanation says which by re-running the search on
sub-problems. A CEL runtime error names the expression and the device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.allocator import capacity as cap
from kubedra.allocator.core import Allocator
from kubedra.allocator.errors import AllocationError
from kubedra.allocator.pools import Pool, PoolError, node_matches
from kubedra.allocator.requests import Dev, Req, claim_ref, requests_of
from kubedra.allocator.search import Search
from kubedra.allocator.selectors import SelectorError
from kubedra.allocator.state import device_id_str
from kubedra.allocator.taints import taint_blocks
from kubedra.model.objects import ALLOCATION_MODE_ALL, DeviceClaim, Node, ResourceClaim


@dataclass
class Step:
    """One filter and how many devices were left after it."""

    name: str
    remaining: int
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"step": self.name, "remaining": self.remaining}
        if self.detail:
            d["detail"] = self.detail
        return d


@dataclass
class RequestExplanation:
    claim: str
    request: str  # "req" or "req/sub"
    device_class: str
    needed: int | str  # a count or "All"
    available: int
    steps: list[Step] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def satisfiable_alone(self) -> bool:
        if self.errors:
            return False
        if self.needed == "All":
            return self.available > 0
        return isinstance(self.needed, int) and self.available >= self.needed

    def message(self) -> str:
        parts = []
        for s in self.steps:
            parts.append(f"{s.name}: {s.remaining}" + (f" ({s.detail})" if s.detail else ""))
        text = f"request {self.request} (class {self.device_class}) needs {self.needed}, {self.available} available"
        if parts:
            text += " — " + "; ".join(parts)
        if self.errors:
            text += " — " + "; ".join(self.errors)
        if self.note:
            text += f" — {self.note}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "request": self.request,
            "deviceClass": self.device_class,
            "needed": self.needed,
            "available": self.available,
            "steps": [s.to_dict() for s in self.steps],
            "errors": list(self.errors),
            "note": self.note or None,
            "message": self.message(),
        }


@dataclass
class Explanation:
    node: str
    summary: str
    requests: list[RequestExplanation] = field(default_factory=list)
    pools: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [self.summary, *self.pools]
        out += [f"{r.claim}: {r.message()}" for r in self.requests]
        return out

    def to_list(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = [{"summary": self.summary}]
        items += [{"pool": p} for p in self.pools]
        items += [r.to_dict() for r in self.requests]
        return items


def _pool_notes(pools: Sequence[Pool]) -> list[str]:
    notes = []
    for p in pools:
        if (
            p.incomplete and p.slices
        ):  # up to 1.34 the search allocates from it (allocator.searchSkipsUnreadyPools)
            notes.append(
                f"pool {p.id} is incomplete (being updated): an All request fails, its devices are still used"
            )
        elif p.incomplete:
            notes.append(f"pool {p.id} is incomplete (being updated): its devices are not used")
        elif p.invalid:
            notes.append(f"pool {p.id} is invalid ({p.invalid_reason}): its devices are not used")
    return notes


def _explain_request(  # noqa: C901 - one filter per step of the allocator's own order, counted as it goes
    a: Allocator, node: Node, pools: Sequence[Pool], claim: ResourceClaim, r: Req
) -> RequestExplanation:
    f = a.features
    needed: int | str = "All" if r.mode == ALLOCATION_MODE_ALL else r.count
    ex = RequestExplanation(claim_ref(claim), r.full_name, r.class_name, needed, 0)
    cls = a.classes.get(r.class_name)
    if cls is None:
        ex.errors.append(f"device class {r.class_name!r} does not exist")
        return ex
    devs = [
        Dev((p.driver, p.name, d.name), d, s, p)
        for p in pools
        if not p.invalid  # an incomplete pool has devices only where the search uses them (up to 1.34)
        for s in p.slices
        for d in s.devices
    ]
    ex.steps.append(Step("devices on node", len(devs)))

    def filt(name: str, keep: Any, detail: Any = None) -> None:
        nonlocal devs
        kept: list[Dev] = []
        dropped: list[Dev] = []
        for dv in devs:
            try:
                ok = keep(dv)
            except SelectorError as e:
                ex.errors.append(
                    f"CEL runtime error in selector `{e.expression}` on device {device_id_str(dv.id)}: {e.message}"
                    + (f" ({e.hint})" if e.hint else "")
                    if e.runtime
                    else f"CEL compile error in selector `{e.expression}`: {e.message}"
                )
                ok = False
            except (PoolError, cap.CapacityError):
                ok = False
            (kept if ok else dropped).append(dv)
        if dropped or name.startswith("class"):
            ex.steps.append(Step(name, len(kept), detail(dropped) if (detail and dropped) else ""))
        devs = kept

    if not f.device_binding_and_status:
        filt("without binding conditions (feature off)", lambda dv: not dv.device.binding_conditions)
    for i, expr in enumerate(cls.selectors):
        filt(
            f"class {cls.name} selector #{i}",
            lambda dv, i=i, expr=expr: a.matcher.matches(i, expr, dv.device, dv.id[0]),
            lambda _d, expr=expr: f"`{expr}`",
        )
    if not cls.selectors:
        ex.steps.append(Step(f"class {cls.name} (no selectors)", len(devs)))
    for i, expr in enumerate(r.selectors):
        filt(
            f"request selector #{i}",
            lambda dv, i=i, expr=expr: a.matcher.matches(i, expr, dv.device, dv.id[0]),
            lambda _d, expr=expr: f"`{expr}`",
        )
    filt(
        "node selection",
        lambda dv: (
            not dv.slice.per_device_node_selection
            or node_matches(node, dv.device.node_name, dv.device.all_nodes, dv.device.node_selector)
        ),
    )
    if not r.admin:
        filt(
            "not in use",
            lambda dv: dv.id not in a.allocated.devices,
            lambda dropped: "in use by other claims: " + _names(dropped),
        )
    if f.consumable_capacity:
        if r.capacity:  # a device without the capacity at all is not "out of" it
            wanted = ", ".join(sorted(r.capacity))
            filt(
                "has the requested capacity",
                lambda dv: all(n in dv.device.capacity for n in r.capacity),
                lambda dropped, wanted=wanted: f"no consumable capacity {wanted} at all: " + _names(dropped),
            )
        filt(
            "enough capacity",
            lambda dv: cap.fits(
                a.allocated.capacity.get(dv.id),
                r.capacity,
                dv.device.capacity,
                None,
                checked=a.capacity_checked,
            ),
            lambda dropped: "not enough consumable capacity left: " + _names(dropped),
        )
    if f.partitionable_devices:
        filt(
            "counters available",
            lambda dv: _counters_fit(a, node, pools, dv),
            lambda dropped: "shared counters used up by allocated partitions: " + _names(dropped),
        )
    else:
        filt("no counters (PartitionableDevices off)", lambda dv: not dv.device.consumes_counters)
    if f.device_taints:
        filt(
            "not tainted",
            lambda dv: taint_blocks(dv.device, r.tolerations) is None,
            lambda dropped: "taints not tolerated: " + _taints(dropped, r),
        )
    ex.available = len(devs)
    return ex


def _names(devs: Sequence[Dev], limit: int = 4) -> str:
    names = [dv.id[2] for dv in devs[:limit]]
    more = f" and {len(devs) - limit} more" if len(devs) > limit else ""
    return ", ".join(names) + more


def _taints(devs: Sequence[Dev], r: Req) -> str:
    seen: list[str] = []
    for dv in devs:
        t = taint_blocks(dv.device, r.tolerations)
        if t is not None:
            text = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
            if text not in seen:
                seen.append(text)
    return ", ".join(seen)


def _counters_fit(a: Allocator, node: Node, pools: Sequence[Pool], dv: Dev) -> bool:
    """Whether what ``dv`` consumes fits its pool's counters beside the allocated devices, by the search's own
    check (upstream ``checkAvailableCounters``: each release's pool keying and Quantity arithmetic)."""
    if not dv.device.consumes_counters:
        return True
    return Search(a, node, [], list(pools))._take_counters(dv)


def _try(a: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> bool:
    try:
        return a.allocate(node, claims) is not None
    except AllocationError:
        return False


def explain(a: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> Explanation:
    """Explain the outcome of allocating ``claims`` together on ``node``."""
    try:
        pools = a.pools_for(node)
    except AllocationError as err:
        return Explanation(node.name, f"node {node.name}: {err}")
    notes = _pool_notes(pools)
    usable = [p for p in pools if not p.invalid and (p.slices or not p.incomplete)]
    if not pools:
        return Explanation(
            node.name, f"node {node.name}: no ResourceSlice publishes devices for this node", pools=notes
        )
    out = Explanation(node.name, "", pools=notes)
    blocked: list[str] = []
    for claim in claims:
        for alts in requests_of(claim):
            exps = [_explain_request(a, node, pools, claim, r) for r in alts]
            if len(exps) > 1 and any(x.satisfiable_alone for x in exps):
                # a prioritized list: only the alternatives up to the first feasible one matter
                first = next(i for i, x in enumerate(exps) if x.satisfiable_alone)
                for x in exps[:first]:
                    x.note = "alternative not available; a later one is used"
                exps = exps[: first + 1]
            out.requests.extend(exps)
            if not any(x.satisfiable_alone for x in exps):
                blocked.append(f"{claim_ref(claim)} request {alts[0].parent or alts[0].name}")
    if blocked:
        out.summary = f"node {node.name}: cannot allocate " + ", ".join(blocked)
        return out
    if not usable:
        out.summary = f"node {node.name}: no usable resource pool"
        return out
    # every request is feasible on its own: the problem is a combination
    reasons = []
    for claim in claims:
        if not _try(a, node, [claim]):
            reasons.append(_combination_reason(a, node, claim))
    if not reasons:
        if _try(a, node, claims):
            out.summary = f"node {node.name}: all claims can be allocated"
        else:
            out.summary = (
                f"node {node.name}: each claim fits alone, but not all together "
                "(they compete for the same devices or shared counters)"
            )
        return out
    out.summary = f"node {node.name}: " + "; ".join(reasons)
    return out


def _combination_reason(a: Allocator, node: Node, claim: ResourceClaim) -> str:
    ref = claim_ref(claim)
    if claim.spec.constraints:
        relaxed = ResourceClaim(
            meta=claim.meta, spec=DeviceClaim(requests=claim.spec.requests, config=claim.spec.config)
        )
        if _try(a, node, [relaxed]):
            names = ", ".join(
                f"matchAttribute {c.match_attribute}"
                if c.match_attribute
                else f"distinctAttribute {c.distinct_attribute}"
                for c in claim.spec.constraints
            )
            return f"claim {ref}: enough devices, but no combination satisfies the constraints ({names})"
    if len(claim.spec.requests) > 1:
        return f"claim {ref}: each request fits alone, but not all requests together (they compete for devices or counters)"
    if a.features.partitionable_devices:
        return f"claim {ref}: enough devices individually, but not together: their shared counters run out"
    return f"claim {ref}: cannot allocate the devices together"


def short_reason(a: Allocator, node: Node, claims: Sequence[ResourceClaim]) -> str:
    """One phrase for a node where allocation failed, for a "0/N nodes are available: ..." summary,
    e.g. "have no device matching selector `...` (request gpu)" or "are out of shared counters"."""
    ex = explain(a, node, claims)
    for r in ex.requests:
        if r.satisfiable_alone or r.note:
            continue
        if r.errors:
            return r.errors[0]
        need = r.needed if isinstance(r.needed, int) else 1
        for step in r.steps:
            if step.remaining >= need:
                continue
            return f"{_phrase(step)} (request {r.request})"
        return f"have only {r.available} of {r.needed} devices (request {r.request})"
    return ex.summary.split(": ", 1)[-1] if ex.summary else "cannot allocate all claims"


def _phrase(step: Step) -> str:
    name = step.name
    if name == "devices on node":
        return "have no DRA devices"
    if name.startswith("class"):
        return f"have no device of {name.split(' selector')[0]}" + (
            f" matching {step.detail}" if step.detail else ""
        )
    if name.startswith("request selector"):
        return f"have no device matching selector {step.detail}"
    if name == "not in use":
        return "have all matching devices in use"
    if name == "enough capacity":
        return "are out of consumable capacity"
    if name == "has the requested capacity":
        return "have no device with the requested consumable capacity"
    if name == "counters available":
        return "are out of shared counters (partitions already in use)"
    if name == "not tainted":
        return f"have only devices with untolerated taints ({step.detail.split(': ', 1)[-1]})"
    return f"have no device left after {name}"
