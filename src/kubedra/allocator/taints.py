"""DeviceTaintRules: add each rule's taint to the devices it selects, before allocation.

Like the scheduler's ResourceSlice tracker (``resourceslice/tracker``): driver, pool and device are each
compared only when set in ``deviceSelector``. A rule *without* a deviceSelector depends on the release
(``dra.taintRuleWithoutSelectorMatchesNone`` in data/versions.yaml): it matches no device from v0.37.1, as the
API documentation says, and every device before (v0.37.0 and all 1.34-1.36 patches deref the nil selector to
an empty one). ``release`` is a target minor (``1.36``) or a cluster's exact gitVersion (``v1.37.0``).
Inputs are not modified: affected slices are shallow-copied with new device objects. Toleration matching is
:mod:`kubedra.model.tolerations`' (the one for core/v1 and device tolerations).

:func:`eviction_delay` is the device-taint eviction controller's decision for one allocated device
(``pkg/controller/devicetainteviction``, ``claimEvictionTime``): only ``NoExecute`` taints evict; a taint is
ignored when a toleration *with effect NoExecute* matches it and has no ``tolerationSeconds``; otherwise the
pod is deleted at ``timeAdded`` + the smallest matching ``tolerationSeconds`` (negative counts as 0), or at
``timeAdded`` when nothing matches. The tolerations are those copied into the allocation result.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from kubedra.k8s import versions
from kubedra.model.objects import Device, DeviceTaint, DeviceTaintRule, DeviceToleration, ResourceSlice
from kubedra.model.tolerations import tolerates, untolerated

NO_EXECUTE = "NoExecute"


def taint_blocks(device: Device, tolerations: Sequence[DeviceToleration]) -> DeviceTaint | None:
    """The first NoSchedule/NoExecute taint of ``device`` no toleration tolerates (None/unknown effects never
    block)."""
    return untolerated(device.taints, tolerations)


def no_selector_matches_all(release: str | versions.Version) -> bool:
    """Whether a DeviceTaintRule without deviceSelector taints every device at ``release`` (else none)."""
    return not versions.holds_at("dra.taintRuleWithoutSelectorMatchesNone", release)


def rule_matches(
    rule: DeviceTaintRule, driver: str, pool: str, device: str, *, release: str | versions.Version
) -> bool:
    sel = rule.device_selector
    if sel is None:
        return no_selector_matches_all(release)
    if sel.driver and sel.driver != driver:
        return False
    if sel.pool and sel.pool != pool:
        return False
    return not (sel.device and sel.device != device)


def apply_taint_rules(
    slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule], *, release: str | versions.Version
) -> list[ResourceSlice]:
    if not rules:
        return list(slices)
    out: list[ResourceSlice] = []
    for s in slices:
        new_devices = None
        for i, d in enumerate(s.devices):
            extra = [
                r.taint for r in rules if rule_matches(r, s.driver, s.pool.name, d.name, release=release)
            ]
            if not extra:
                continue
            if new_devices is None:
                new_devices = list(s.devices)
            nd = copy.copy(d)
            nd.taints = [*d.taints, *extra]
            new_devices[i] = nd
        if new_devices is None:
            out.append(s)
        else:
            ns = copy.copy(s)
            ns.devices = new_devices
            out.append(ns)
    return out


def eviction_delay(taint: DeviceTaint, tolerations: Sequence[DeviceToleration]) -> int | None:
    """Seconds after the taint was added until a pod holding the device is evicted; None: never."""
    if taint.effect != NO_EXECUTE:
        return None
    delay: int | None = None
    for tol in tolerations:
        if tol.effect != NO_EXECUTE or not tolerates(tol, taint):
            continue
        if tol.toleration_seconds is None:
            return None
        seconds = max(tol.toleration_seconds, 0)
        delay = seconds if delay is None else min(delay, seconds)
    return delay or 0
