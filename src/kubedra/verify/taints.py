"""Device taints over allocated devices, judged the way the device-taint eviction controller acts on them.

A device's taints are those its ResourceSlice publishes (newest generation of its pool) plus the taint of
every DeviceTaintRule whose ``spec.deviceSelector`` matches its driver, pool and device (each compared only
when set; a rule without a selector matches every device before Kubernetes 1.37.1 and none from then, so its
verdict needs the cluster's serverVersion, and says so where that is unknown). For each allocated device:

- ``NoExecute`` not tolerated (tolerations of the allocation result, effect ``NoExecute``, no
  ``tolerationSeconds``): the pods the claim is reserved for are evicted (after ``tolerationSeconds`` when a
  matching toleration sets one) → ``fail``; when no bound pod holds the claim → ``warn``.
- ``NoExecute`` tolerated, ``NoSchedule`` and ``None`` → ``warn`` (the pod keeps running on a device the
  driver or an operator marked).

Rules are reported too: one without a selector, one that selects no published device. Rules take effect only
where the cluster runs with the gates data/versions.yaml ``apis.deviceTaintRuleGates`` names for its release
(DRADeviceTaints at 1.34; DRADeviceTaintRules as well from 1.35: v1.35.4 and v1.36.3
pkg/controller/devicetainteviction and pkg/scheduler/scheduler.go read no rule without it; off by default
through 1.36): where the snapshot's feature gates (kube-apiserver ``/metrics``) have one off, each rule is named
as unread and its taint not judged; where they were not read and the release's default is off, it is named as
not judged, since kubedra cannot tell.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubedra.allocator.taints import NO_EXECUTE, eviction_delay, no_selector_matches_all, rule_matches
from kubedra.k8s import featuregates, versions
from kubedra.k8s.findings import Finding
from kubedra.model.objects import (
    DeviceTaint,
    DeviceTaintRule,
    DeviceTaintSelector,
    DeviceToleration,
    ObjectMeta,
)

DeviceKey = tuple[str, str, str]  # driver, pool, device


def _warn(message: str) -> Finding:
    return Finding(severity="warn", message=message)


def _fail(message: str) -> Finding:
    return Finding(severity="fail", message=message)


@dataclass(frozen=True)
class SourcedTaint:
    taint: DeviceTaint
    source: str  # "ResourceSlice NAME" or "DeviceTaintRule NAME"


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def taint_of(v: Any) -> DeviceTaint:
    m = _d(v)
    return DeviceTaint(
        key=str(m.get("key") or ""),
        value=str(m.get("value") or ""),
        effect=str(m.get("effect") or ""),
        time_added=m.get("timeAdded") if isinstance(m.get("timeAdded"), str) else None,
    )


def toleration_of(v: Any) -> DeviceToleration:
    m = _d(v)
    secs = m.get("tolerationSeconds")
    return DeviceToleration(
        key=str(m.get("key") or ""),
        operator=str(m.get("operator") or "Equal"),
        value=str(m.get("value") or ""),
        effect=str(m.get("effect") or ""),
        toleration_seconds=secs if isinstance(secs, int) and not isinstance(secs, bool) else None,
    )


def rule_of(obj: dict[str, Any]) -> DeviceTaintRule:
    spec = _d(obj.get("spec"))
    sel = spec.get("deviceSelector")
    selector = None
    if isinstance(sel, dict):
        selector = DeviceTaintSelector(
            driver=sel.get("driver") or None, pool=sel.get("pool") or None, device=sel.get("device") or None
        )
    meta = _d(obj.get("metadata"))
    return DeviceTaintRule(
        meta=ObjectMeta(name=str(meta.get("name") or "")),
        taint=taint_of(spec.get("taint")),
        device_selector=selector,
    )


def _text(t: DeviceTaint) -> str:
    return f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}"


def _generation(pool: dict[str, Any]) -> int:
    gen = pool.get("generation")
    return gen if isinstance(gen, int) else 0


def published_taints(
    slices: Iterable[dict[str, Any]],
) -> tuple[set[DeviceKey], dict[DeviceKey, list[SourcedTaint]]]:
    """Devices of the newest generation of each pool, and the taints their slices publish."""
    newest: dict[tuple[str, str], int] = {}
    slices = list(slices)
    for s in slices:
        sp = _d(s.get("spec"))
        pool = _d(sp.get("pool"))
        pool_key = (str(sp.get("driver")), str(pool.get("name")))
        newest[pool_key] = max(newest.get(pool_key, _generation(pool)), _generation(pool))
    devices: set[DeviceKey] = set()
    taints: dict[DeviceKey, list[SourcedTaint]] = defaultdict(list)
    for s in slices:
        sp = _d(s.get("spec"))
        pool = _d(sp.get("pool"))
        driver, name = str(sp.get("driver")), str(pool.get("name"))
        if _generation(pool) != newest[(driver, name)]:
            continue
        for d in _l(sp.get("devices")):
            key = (driver, name, str(_d(d).get("name")))
            devices.add(key)
            for t in _l(_d(d).get("taints")):
                taints[key].append(
                    SourcedTaint(taint_of(t), f"ResourceSlice {_d(s.get('metadata')).get('name')}")
                )
    return devices, taints


def rule_taints(rule: DeviceTaintRule, key: DeviceKey, release: str | None) -> bool:
    """Whether ``rule`` taints the device ``key`` at the cluster's ``release`` (its gitVersion); a rule
    without deviceSelector at an unknown release is not counted (the caller says so)."""
    if rule.device_selector is None and release is None:
        return False
    return rule_matches(rule, *key, release=release or "")


def rules_read(release: str | None, gates: Mapping[str, bool]) -> tuple[bool | None, str]:
    """Whether the cluster's kube-scheduler and device-taint eviction controller read DeviceTaintRules: True,
    False (a gate its ``release`` needs is off in ``gates``, those the cluster reported) or None (one is off by
    default there and ``gates`` does not say), with the words for the last two. An unknown release: True."""
    minor = versions.Version.maybe(release)
    if minor is None:
        return True, ""
    needed = versions.api("deviceTaintRuleGates", minor) or []
    off = [g for g in needed if g in gates and not gates[g]]
    if off:
        return False, f"the cluster runs with {' and '.join(off)} off (kube-apiserver /metrics)"
    unknown = [g for g in featuregates.taint_rule_gates_off(minor) if g.split(" ")[0] not in gates]
    if unknown:
        return (
            None,
            f"{' and '.join(unknown)} off by default at {minor}, and the cluster's feature gates were not read",
        )
    return True, ""


def judge(
    slices: Iterable[dict[str, Any]],
    rules: Iterable[dict[str, Any]],
    claims: Iterable[dict[str, Any]],
    bound_pods: dict[tuple[str, str], list[str]],
    server_version: str,
    gates: Mapping[str, bool] | None = None,
) -> tuple[list[Finding], int]:
    """Findings for taints over allocated devices and for the rules themselves, and how many allocated
    devices were checked. ``bound_pods`` maps (namespace, claim name) to the bound, live pods using it;
    ``server_version`` is the cluster's gitVersion ("" when unknown); ``gates`` the feature gates it reported."""
    devices, taints = published_taints(slices)
    typed = [rule_of(r) for r in rules]
    release = server_version if versions.Version.maybe(server_version) else None
    out: list[Finding] = []
    read, why = rules_read(release, gates or {})
    if typed and not read:
        verdict = "not read" if read is False else "cannot tell whether it is read"
        out += [
            _warn(
                f"DeviceTaintRule {r.meta.name} ({_text(r.taint)}): {verdict}: {why}; kube-scheduler and the "
                f"device-taint eviction controller read DeviceTaintRules only with "
                f"{' and '.join(versions.api('deviceTaintRuleGates', release or '') or [])} on, so its taint is "
                "not judged"
            )
            for r in typed
        ]
        typed = []
    for r in typed:
        if r.device_selector is None and release is None:
            out.append(
                _warn(
                    f"DeviceTaintRule {r.meta.name} has no deviceSelector: it taints every device before "
                    "Kubernetes 1.37.1 and none from then, and the cluster's version is unknown; "
                    "its taint is not judged"
                )
            )
        elif r.device_selector is None and not no_selector_matches_all(release or ""):
            out.append(_warn(f"DeviceTaintRule {r.meta.name} has no deviceSelector: it taints no device"))
        elif r.device_selector is None:
            out.append(
                _warn(
                    f"DeviceTaintRule {r.meta.name} has no deviceSelector: at Kubernetes {server_version} it "
                    "taints every device"
                )
            )
        elif not any(rule_taints(r, k, release) for k in devices):
            out.append(_warn(f"DeviceTaintRule {r.meta.name} ({_text(r.taint)}) selects no published device"))
    checked = 0
    allocated: set[DeviceKey] = set()
    for claim in claims:
        meta = _d(claim.get("metadata"))
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        ref = f"ResourceClaim {ns}/{name}"
        results = _l(_d(_d(_d(claim.get("status")).get("allocation")).get("devices")).get("results"))
        for res in results:
            res = _d(res)
            checked += 1
            key = (str(res.get("driver")), str(res.get("pool")), str(res.get("device")))
            allocated.add(key)
            tolerations = [toleration_of(t) for t in _l(res.get("tolerations"))]
            found = list(taints.get(key, [])) + [
                SourcedTaint(r.taint, f"DeviceTaintRule {r.meta.name}")
                for r in typed
                if rule_taints(r, key, release)
            ]
            for st in found:
                where = f"{ref} holds {key[2]} of pool {key[1]}, tainted {_text(st.taint)} by {st.source}"
                out.append(_verdict(st.taint, tolerations, where, bound_pods.get((ns, name), [])))
    for key, ts in sorted(taints.items()):
        if key not in allocated:
            effects = ", ".join(sorted({_text(t.taint) for t in ts}))
            out.append(_warn(f"device {key[2]} of pool {key[1]} is tainted ({effects}; not allocated)"))
    return out, checked


def _verdict(taint: DeviceTaint, tolerations: list[DeviceToleration], where: str, pods: list[str]) -> Finding:
    if taint.effect != NO_EXECUTE:
        return _warn(where)
    delay = eviction_delay(taint, tolerations)
    if delay is None:
        return _warn(f"{where} (tolerated: not evicted)")
    if not pods:
        return _warn(f"{where}: not tolerated; no bound pod uses the claim yet, any that does is evicted")
    when = f" {delay} s after the taint was added" if delay else ""
    return _fail(
        f"{where}: not tolerated; the device-taint eviction controller evicts {', '.join(pods)}{when}",
    )
