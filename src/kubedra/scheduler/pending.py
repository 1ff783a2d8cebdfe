"""Why a pod stays pending, in kube-scheduler's words (``0/N nodes are available: ...``), with the allocator's
reason per node when claims could not be allocated."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kubedra.allocator.explain import short_reason
from kubedra.allocator.requests import claim_ref
from kubedra.model.objects import ResourceClaim
from kubedra.scheduler import filters
from kubedra.scheduler.pods import SimPod
from kubedra.scheduler.state import DRA_FAILURE, ClassState, SimNode

if TYPE_CHECKING:
    from kubedra.scheduler.simulator import Scheduler


def pending_reason(
    sched: Scheduler, sp: SimPod, reasons: Counter[str], nodes: Sequence[SimNode] | None = None
) -> str:
    """``nodes``: the only nodes that can have failed on the pod's claims (a pinned pod's), default all."""
    if reasons.get(DRA_FAILURE):
        reasons = explain_dra(sched, sp, reasons, nodes)
    return _message(len(sched.nodes), reasons)


def class_reason(sched: Scheduler, sp: SimPod, cls: ClassState) -> str:
    """:func:`pending_reason` for a pod of ``cls`` that fits no node, from the class's counts, which
    :meth:`ClassState.set_fit` keeps as the results change: only nodes whose DRA failure is new since the last
    message are explained, instead of every node each time a pod of the class fails after a change."""
    if cls.pinned is not None:
        reasons = Counter(f.reason or "unknown" for f in cls.results() if f is not None)
        reasons.update(cls.outside)
        return pending_reason(sched, sp, reasons, [sched.nodes[i] for i in cls.pinned])
    reasons = Counter(cls.counts)
    if not reasons.get(DRA_FAILURE):
        return _message(len(sched.nodes), reasons)
    # each node's phrase names the claims of the pod it was found for: kept named for ``cls.dra_claims``
    # (same specs, position by position, as every pod of the class), the message renamed for this pod's
    mine = _claims_of(sp)
    if cls.dra_claims is None:
        cls.dra_claims = mine
    for i in cls.dra_stale:
        node = sched.nodes[i]
        claims, _ = sched._pod_claims_for_node(sp, node)
        phrase = own_claims(short_reason(sched.allocator, node.node, claims), mine, cls.dra_claims) or ""
        cls.dra_reason[i] = phrase
        cls.dra_counts[phrase] += 1
    cls.dra_stale.clear()
    del reasons[DRA_FAILURE]
    reasons.update(cls.dra_counts)
    return own_claims(_message(len(sched.nodes), reasons), cls.dra_claims, mine) or ""


def _claims_of(sp: SimPod) -> list[ResourceClaim]:
    ext = sp.extra.get("ext_claim")
    return [*sp.claims, ext] if ext is not None else list(sp.claims)


def _message(n: int, reasons: Counter[str]) -> str:
    # the allocator's phrases start with a verb ("have no device matching ...", "are out of shared
    # counters"); say what has it, like kube-scheduler's "node(s) had untolerated taint"
    parts = [
        f"{c} node(s) {r}" if r.startswith(("have ", "are ")) else f"{c} {r}"
        for r, c in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))
    ]
    return f"0/{n} nodes are available: " + ", ".join(parts) + "."


def explain_dra(
    sched: Scheduler, sp: SimPod, reasons: Counter[str], nodes: Sequence[SimNode] | None = None
) -> Counter[str]:
    out = Counter({r: c for r, c in reasons.items() if r != DRA_FAILURE})
    required = filters.required_affinity(sp.pod)
    for node in sched.nodes if nodes is None else nodes:
        fit = sched.filter_node(sp, node, required)
        if fit.ok or fit.reason != DRA_FAILURE:
            continue
        claims, _ = sched._pod_claims_for_node(sp, node)
        out[short_reason(sched.allocator, node.node, claims)] += 1
    return out


def own_claims(
    text: str | None, computed_for: Sequence[ResourceClaim], claims: Sequence[ResourceClaim]
) -> str | None:
    """``text`` (an allocator error or pending reason) computed for an alike pod's claims, naming this pod's
    claims instead: pods from one template share the cached allocation result and the class's last reason,
    and a reason must name the pending pod's own claims. ``computed_for`` and ``claims`` pair by position."""
    if not text:
        return text
    rename = {claim_ref(a): claim_ref(b) for a, b in zip(computed_for, claims, strict=False) if a is not b}
    rename = {a: b for a, b in rename.items() if a != b}
    if not rename:
        return text
    # whole references only (web-1-gpu is no part of web-1-gpu-2), all at once (a swap stays a swap)
    pattern = re.compile(
        r"(?<![\w./-])("
        + "|".join(re.escape(a) for a in sorted(rename, key=len, reverse=True))
        + r")(?![\w.-])"
    )
    return pattern.sub(lambda m: rename[m.group(1)], text)
