"""The API server's ResourceSlice limits (resource.k8s.io/v1 validation), as plain checks.

``slice_violations(slice_obj, k8s_minor)`` lists what the API server would reject, one message
per problem. The catalogue runs it on every slice it builds; other callers can reuse it.
"""

from __future__ import annotations

import re
from typing import Any

from kubedra.k8s.versions import DEFAULT_TARGET, Version, holds, since

DEFAULT_MINOR = Version.parse(DEFAULT_TARGET).minor

MAX_DEVICES = 128
MAX_DEVICES_ADVANCED = 64  # any device with taints or consumesCounters (or list-type attributes)
MAX_COUNTER_SETS = 8
MAX_COUNTERS_PER_SET = 32
MAX_COUNTERS_PER_SLICE_1_34 = 32  # 1.33/1.34: counters in all sets of one slice
MAX_CONSUMPTIONS_PER_DEVICE = 2
MAX_COUNTERS_PER_CONSUMPTION = 32
MAX_CONSUMED_COUNTERS_PER_SLICE_1_34 = 1024
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_STRING = 64
MAX_DRIVER_NAME = 63
MAX_POOL_NAME = 253

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_dns_label(s: str) -> bool:
    return len(s) <= 63 and bool(_DNS_LABEL.match(s))


def is_dns_subdomain(s: str) -> bool:
    return len(s) <= 253 and bool(_DNS_SUBDOMAIN.match(s))


def is_qualified_attribute_name(s: str) -> bool:
    """Attribute/capacity name: ``[<domain>/]<C identifier of at most 32 characters>``."""
    domain, sep, ident = s.rpartition("/")
    if sep and not is_dns_subdomain(domain):
        return False
    return len(ident) <= 32 and bool(_C_IDENTIFIER.match(ident))


def slice_violations(obj: dict[str, Any], k8s_minor: int = DEFAULT_MINOR) -> list[str]:
    """What the API server would reject in this ResourceSlice (empty list: valid)."""
    name = obj.get("metadata", {}).get("name", "")
    where = f"ResourceSlice {name}"
    spec = obj.get("spec", {})
    out = _identity_violations(where, name, spec)
    devices = spec.get("devices") or []
    sets = spec.get("sharedCounters") or []
    # 1.35+: counter sets in slices of their own, pool-wide; before, in the device's slice (data/versions.yaml)
    pool_counters = holds("dra.countersOnlySlices", Version(1, k8s_minor))
    if devices and sets and pool_counters:
        out.append(
            f"{where}: devices and sharedCounters in one slice (only one may be set since "
            f"{since('dra.countersOnlySlices')})"
        )
    set_names, problems = _counter_set_violations(where, sets, pool_counters)
    return out + problems + _devices_violations(where, devices, set_names, pool_counters)


def _identity_violations(where: str, name: str, spec: dict[str, Any]) -> list[str]:
    """The slice's name, driver and pool."""
    out: list[str] = []
    if not is_dns_subdomain(name):
        out.append(f"{where}: metadata.name is not a DNS subdomain")
    driver = spec.get("driver", "")
    if len(driver) > MAX_DRIVER_NAME or not is_dns_subdomain(driver):
        out.append(f"{where}: invalid driver name {driver!r}")
    pool = spec.get("pool", {})
    if not pool.get("name") or len(pool["name"]) > MAX_POOL_NAME:
        out.append(f"{where}: invalid pool name")
    if not int(pool.get("resourceSliceCount", 0)) > 0 or int(pool.get("generation", -1)) < 0:
        out.append(f"{where}: invalid pool generation or resourceSliceCount")
    return out


def _counter_set_violations(
    where: str, sets: list[dict[str, Any]], pool_counters: bool
) -> tuple[set[str], list[str]]:
    """The slice's counter sets: their names (for the devices' consumption) and what is wrong with them."""
    out: list[str] = []
    if len(sets) > MAX_COUNTER_SETS:
        out.append(f"{where}: {len(sets)} counter sets (max {MAX_COUNTER_SETS})")
    set_names: set[str] = set()
    total_counters = 0
    for cs in sets:
        cs_name = cs.get("name", "")
        if not is_dns_label(cs_name):
            out.append(f"{where}: counter set name {cs_name!r} is not a DNS label")
        if cs_name in set_names:
            out.append(f"{where}: duplicate counter set {cs_name!r}")
        set_names.add(cs_name)
        counters = cs.get("counters") or {}
        total_counters += len(counters)
        if not counters:
            out.append(f"{where}: counter set {cs_name!r} has no counters")
        if len(counters) > MAX_COUNTERS_PER_SET:
            out.append(
                f"{where}: counter set {cs_name!r} has {len(counters)} counters (max {MAX_COUNTERS_PER_SET})"
            )
        out += [f"{where}: counter name {c!r} is not a DNS label" for c in counters if not is_dns_label(c)]
    if not pool_counters and total_counters > MAX_COUNTERS_PER_SLICE_1_34:
        out.append(
            f"{where}: {total_counters} counters in all sets (max {MAX_COUNTERS_PER_SLICE_1_34} in 1.34)"
        )
    return set_names, out


def _devices_violations(
    where: str, devices: list[dict[str, Any]], set_names: set[str], pool_counters: bool
) -> list[str]:
    """The slice's devices: how many, their names, and what each one declares and consumes."""
    out: list[str] = []
    advanced = any(d.get("consumesCounters") or d.get("taints") for d in devices)
    limit = MAX_DEVICES_ADVANCED if advanced else MAX_DEVICES
    if len(devices) > limit:
        out.append(
            f"{where}: {len(devices)} devices (max {limit}{' with counters or taints' if advanced else ''})"
        )
    seen: set[str] = set()
    consumed = 0
    for dev in devices:
        dname = dev.get("name", "")
        if not is_dns_label(dname):
            out.append(f"{where}: device name {dname!r} is not a DNS label")
        if dname in seen:
            out.append(f"{where}: duplicate device {dname!r}")
        seen.add(dname)
        out += _attribute_violations(f"{where}: device {dname}", dev)
        uses = dev.get("consumesCounters") or []
        if len(uses) > MAX_CONSUMPTIONS_PER_DEVICE:
            out.append(f"{where}: device {dname} consumes from {len(uses)} counter sets (max 2)")
        for use in uses:
            counters = use.get("counters") or {}
            consumed += len(counters)
            if len(counters) > MAX_COUNTERS_PER_CONSUMPTION:
                out.append(f"{where}: device {dname} consumes {len(counters)} counters from one set (max 32)")
            if not pool_counters and use.get("counterSet") not in set_names:
                out.append(
                    f"{where}: device {dname} consumes from counter set {use.get('counterSet')!r} not in this slice"
                )
    if not pool_counters and consumed > MAX_CONSUMED_COUNTERS_PER_SLICE_1_34:
        out.append(
            f"{where}: {consumed} consumed counters (max {MAX_CONSUMED_COUNTERS_PER_SLICE_1_34} in 1.34)"
        )
    return out


def _attribute_violations(device: str, dev: dict[str, Any]) -> list[str]:
    """One device's attributes and capacities (``device`` names it: "ResourceSlice s: device d")."""
    out: list[str] = []
    attrs = dev.get("attributes") or {}
    caps = dev.get("capacity") or {}
    if len(attrs) + len(caps) > MAX_ATTRIBUTES_AND_CAPACITIES:
        out.append(f"{device} has {len(attrs) + len(caps)} attributes and capacities (max 32)")
    for key in list(attrs) + list(caps):
        if not is_qualified_attribute_name(key):
            out.append(f"{device}: invalid attribute/capacity name {key!r}")
    for key, val in attrs.items():
        if len(val) != 1:
            out.append(f"{device}: attribute {key} must have exactly one value type")
        s = val.get("string")
        if isinstance(s, str) and len(s) > MAX_ATTRIBUTE_STRING:
            out.append(f"{device}: attribute {key} longer than {MAX_ATTRIBUTE_STRING}")
    return out


def pool_violations(slices: list[dict[str, Any]], k8s_minor: int = DEFAULT_MINOR) -> list[str]:
    """Pool-wide checks: unique device names, and (1.35+) counter sets referenced exist in the pool."""
    out: list[str] = []
    devices: set[str] = set()
    sets: dict[str, set[str]] = {}
    for s in slices:
        for cs in s["spec"].get("sharedCounters") or []:
            if cs["name"] in sets:
                out.append(f"pool {s['spec']['pool']['name']}: duplicate counter set {cs['name']!r}")
            sets[cs["name"]] = set(cs.get("counters") or {})
    for s in slices:
        for d in s["spec"].get("devices") or []:
            if d["name"] in devices:
                out.append(f"pool {s['spec']['pool']['name']}: duplicate device {d['name']!r}")
            devices.add(d["name"])
            for use in d.get("consumesCounters") or []:
                have = sets.get(use["counterSet"])
                if have is None:
                    out.append(f"device {d['name']}: counter set {use['counterSet']!r} missing from the pool")
                    continue
                missing = set(use.get("counters") or {}) - have
                if missing:
                    out.append(
                        f"device {d['name']}: counters {sorted(missing)} missing from {use['counterSet']!r}"
                    )
    counts = {int(s["spec"]["pool"]["resourceSliceCount"]) for s in slices}
    if slices and counts != {len(slices)}:
        out.append(f"pool resourceSliceCount {sorted(counts)} does not match {len(slices)} slices")
    return out
