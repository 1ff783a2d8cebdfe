"""What a verify run counts on one cluster state, for its metrics: ResourceClaims allocated and pending, DRA
devices published and tainted per driver, devices allocated and allocated-while-tainted per DeviceClass.

A device's class is the ``deviceClassName`` of the claim request (or firstAvailable subrequest) it was
allocated for; an unallocated device has no class until a claim asks for it, so published and tainted devices
are counted per driver. Taints are the published ones of the newest pool generation plus matching
DeviceTaintRules (:mod:`kubedra.verify.taints`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s.versions import Version
from kubedra.model.snapshot import Snapshot
from kubedra.verify.taints import published_taints, rule_of, rule_taints, rules_read

UNKNOWN_CLASS = "<unknown>"


@dataclass
class DraCounts:
    claims: Counter[str] = field(default_factory=Counter)  # "allocated" / "pending"
    published: Counter[str] = field(default_factory=Counter)  # driver -> devices
    tainted: Counter[str] = field(default_factory=Counter)  # driver -> devices with a taint
    allocated: Counter[str] = field(default_factory=Counter)  # device class -> allocated devices
    allocated_tainted: Counter[str] = field(default_factory=Counter)  # device class -> allocated + tainted


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def request_classes(claim: dict[str, Any]) -> dict[str, str]:
    """Request name (``req`` or ``req/sub`` for firstAvailable) -> deviceClassName of a claim's spec."""
    out: dict[str, str] = {}
    for req in _l(_d(_d(claim.get("spec")).get("devices")).get("requests")):
        req = _d(req)
        name = str(req.get("name") or "")
        exactly = _d(req.get("exactly"))
        if exactly.get("deviceClassName"):
            out[name] = str(exactly["deviceClassName"])
        elif req.get("deviceClassName"):  # v1beta1 shape
            out[name] = str(req["deviceClassName"])
        for sub in _l(req.get("firstAvailable")):
            sub = _d(sub)
            if sub.get("deviceClassName"):
                out[f"{name}/{sub.get('name')}"] = str(sub["deviceClassName"])
    return out


def dra_counts(state: Snapshot) -> DraCounts:
    counts = DraCounts()
    devices, taints = published_taints(state.kind("ResourceSlice"))
    version = state.header.server_version
    release = version if Version.maybe(version) else None  # unknown: rules without deviceSelector not counted
    # a rule the cluster does not read (its gates off), or may not (gates not read, off by default), taints
    # nothing here, as check_health leaves its taint unjudged: only the slices' own taints count then
    read, _ = rules_read(release, state.header.feature_gates or {})
    rules = [rule_of(r) for r in state.kind("DeviceTaintRule")] if read else []

    def tainted(key: tuple[str, str, str]) -> bool:
        return bool(taints.get(key)) or any(rule_taints(r, key, release) for r in rules)

    for key in devices:
        counts.published[key[0]] += 1
        if tainted(key):
            counts.tainted[key[0]] += 1
    for claim in state.kind("ResourceClaim"):
        allocation = _d(_d(claim.get("status")).get("allocation"))
        if not allocation:
            counts.claims["pending"] += 1
            continue
        counts.claims["allocated"] += 1
        classes = request_classes(claim)
        for result in _l(_d(allocation.get("devices")).get("results")):
            result = _d(result)
            cls = classes.get(str(result.get("request") or ""), UNKNOWN_CLASS)
            counts.allocated[cls] += 1
            key = (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
            if tainted(key):
                counts.allocated_tainted[cls] += 1
    return counts
