"""The device-taint eviction controller, applied to the cluster's bound pods before the queue runs.

Upstream (``pkg/controller/devicetainteviction``, on with the ``DRADeviceTaints`` gate) deletes a scheduled
pod whose allocated claim holds a device with a ``NoExecute`` taint it does not tolerate: the taint comes
from the device's ResourceSlice or from a ``NoExecute`` DeviceTaintRule selecting its driver/pool/device;
the tolerations are those of the allocation result (see :func:`kubedra.allocator.taints.eviction_delay`:
only NoExecute tolerations count, ``tolerationSeconds`` only delays the deletion).

What follows the deletion is modelled too, as the end state after the delays:

- the claim is deallocated (the resourceclaim controller deletes a pod's generated claim, and clears the
  allocation of a shared claim nobody reserves any more), so its devices are free again;
- a pod with a controlling owner (ReplicaSet, StatefulSet, Job...) is recreated by its controller: a new
  pod (a StatefulSet's under the same name; others under ``<generateName or name->r<N>``) with new claims
  from its templates, which is scheduled with the rest of the queue and avoids the tainted device (the
  allocator does not pick a device with an untolerated NoSchedule/NoExecute taint). A pod without a
  controller stays deleted.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubedra.allocator.taints import NO_EXECUTE, eviction_delay, rule_matches
from kubedra.k8s import namespaces
from kubedra.model.objects import DeviceTaint, DeviceTaintRule, ObjectMeta, ResourceClaim, ResourceSlice
from kubedra.scheduler.pods import SimPod

DeviceKey = tuple[str, str, str]
REASON = "evicted by the device-taint eviction controller"


@dataclass(frozen=True)
class Taints:
    """NoExecute taints per device: from slices, and from DeviceTaintRules (when those are served)."""

    slices: dict[DeviceKey, list[tuple[DeviceTaint, str]]]
    rules: list[DeviceTaintRule]
    release: str  # the target release: what a rule without deviceSelector matches

    @classmethod
    def of(cls, slices: Iterable[ResourceSlice], rules: Sequence[DeviceTaintRule], release: str) -> Taints:
        out: dict[DeviceKey, list[tuple[DeviceTaint, str]]] = {}
        for s in slices:
            for d in s.devices:
                for t in d.taints:
                    if t.effect == NO_EXECUTE:
                        out.setdefault((s.driver, s.pool.name, d.name), []).append(
                            (t, f"ResourceSlice {s.meta.name}")
                        )
        return cls(out, [r for r in rules if r.taint.effect == NO_EXECUTE], release)

    def __bool__(self) -> bool:
        return bool(self.slices or self.rules)

    def on(self, key: DeviceKey) -> list[tuple[DeviceTaint, str]]:
        found = list(self.slices.get(key, []))
        found += [
            (r.taint, f"DeviceTaintRule {r.meta.name}")
            for r in self.rules
            if rule_matches(r, *key, release=self.release)
        ]
        return found


def _claims(sp: SimPod) -> list[ResourceClaim]:
    ext = sp.extra.get("ext_claim")
    return [*sp.claims, *([ext] if ext is not None else [])]


def eviction_reason(sp: SimPod, taints: Taints) -> str | None:
    """Why the controller deletes this bound pod (the earliest deletion wins), or None."""
    best: tuple[int, str] | None = None
    for claim in _claims(sp):
        if claim.allocation is None:
            continue
        for r in claim.allocation.results:
            for taint, source in taints.on((r.driver, r.pool, r.device)):
                delay = eviction_delay(taint, r.tolerations)
                if delay is None or (best is not None and best[0] <= delay):
                    continue
                value = f"={taint.value}" if taint.value else ""
                text = (
                    f"{REASON}: device {r.driver}/{r.pool}/{r.device} of claim {claim.meta.name} has the "
                    f"NoExecute taint {taint.key}{value} ({source}), not tolerated"
                    + (f"; deleted {delay} s after the taint was added (tolerationSeconds)" if delay else "")
                )
                best = (delay, text)
    return best[1] if best else None


def controller_of(sp: SimPod) -> dict[str, object] | None:
    for o in sp.pod.meta.owner_references:
        if isinstance(o, dict) and o.get("controller"):
            return o
    return None


def recreate(sp: SimPod, order: int, counter: itertools.count[int]) -> SimPod:
    """The pod the controller creates in place of an evicted one: unbound, with new template claims."""
    owner = controller_of(sp)
    pod = copy.copy(sp.pod)
    meta = copy.copy(sp.pod.meta)
    if not (owner and owner.get("kind") == "StatefulSet"):
        prefix = meta.generate_name or f"{meta.name}-"
        meta.name = f"{prefix}r{next(counter)}"
    meta.uid = ""
    pod.meta = meta
    pod.node_name = ""
    pod.phase = "Pending"
    pod.claim_statuses = {}
    ns = namespaces.effective(meta.namespace)
    claims: list[ResourceClaim] = []
    for rc, old in zip(pod.resource_claims, sp.claims, strict=False):
        if rc.resource_claim_template_name:
            claims.append(
                ResourceClaim(meta=ObjectMeta(name=f"{meta.name}-{rc.name}", namespace=ns), spec=old.spec)
            )
        else:
            claims.append(old)  # a shared claim: deallocated, allocated again for the new pod
    new = SimPod(
        pod=pod,
        order=order,
        priority=sp.priority,
        requests=sp.requests,
        score_cpu=sp.score_cpu,
        score_mem=sp.score_mem,
        claims=claims,
        gang=sp.gang,
        owner=sp.owner,
    )
    ext = sp.extra.get("ext_claim")
    if ext is not None:
        new.extra["ext_claim"] = ResourceClaim(
            meta=ObjectMeta(name=f"{meta.name}-extended-resources", namespace=ns), spec=ext.spec
        )
        new.extra["ext_resources"] = sp.extra["ext_resources"]
    new.extra["replaces"] = sp.key
    return new
