"""Conversion of resource.k8s.io objects from v1alpha3 (1.31 shape), v1beta1 and v1beta2 to v1.

One set of rules for the whole project. Sources: the shapes of k8s.io/api ``resource/{v1alpha3,v1beta1,v1beta2,v1}/
types.go`` at the tags kubernetes-1.31.0 to kubernetes-1.37.0; the conversion rules of k8s.io/dynamic-resource-
allocation ``api/v1beta1/conversion.go`` (which mirrors kubernetes ``pkg/apis/resource/v1beta1/conversion.go``);
the 1.35 split of counter slices from ``pkg/apis/resource/validation/validation.go``. The functions mutate a
mapping *in place* and keep key order, so they work on plain dicts (the model loader) and on ruamel.yaml
``CommentedMap`` trees (``kubedra migrate``, which must keep comments and order). Each returns the list of
:class:`ConversionNote` describing what changed, so callers can report it.

Rules:
- v1beta1/v1alpha3 ``devices[].basic{...}`` is flattened into the device (at the position of ``basic``).
- v1alpha3 capacity ``{memory: 80Gi}`` becomes ``{memory: {value: 80Gi}}``.
- v1beta1/v1alpha3 flat requests (``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
  ``adminAccess``, ``tolerations``, ``capacity``) move under ``exactly`` (inserted where the first flat field
  was) when any of them is set, like upstream's conversion; ``firstAvailable`` stays as it is.
- ResourceSlice ``nodeName: ""`` and ``allNodes: false`` are dropped (pointers in v1).
- v1alpha3 fields with no equivalent (``spec.controller``, ``status.deallocationRequested``,
  ``status.allocation.controller``, DeviceClass ``suitableNodes``, DeviceTaintRule selector
  ``deviceClassName``/``selectors`` removed in 1.35) are dropped with a warning.
- Classic DRA (``resource.k8s.io/v1alpha1``, ``v1alpha2``) has no mechanical mapping: :class:`ClassicDRAError`.
- 1.33/1.34 partitionable slices that mix ``sharedCounters`` and ``devices`` are split by
  :func:`split_partitionable_slices` for 1.35+ (the caller decides, since it creates new objects).
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.k8s import versions
from kubedra.k8s.versions import DEFAULT_TARGET, Version

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
STRUCTURED_OLD_VERSIONS = ("v1alpha3", "v1beta1", "v1beta2")
CLASSIC_VERSIONS = ("v1alpha1", "v1alpha2")
TAINT_RULE = "DeviceTaintRule"

# Flat v1beta1 request fields that belong to ExactDeviceRequest in v1, in v1's field order.
EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


@dataclass(frozen=True)
class ConversionNote:
    path: str
    message: str
    warning: bool = False  # True when information was dropped

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ClassicDRAError(InputError):
    """Classic DRA (v1alpha1/v1alpha2) object: there is no mechanical conversion to structured DRA."""


CLASSIC_HINT = (
    "classic DRA ({api}) has no mechanical conversion to structured DRA (resource.k8s.io/v1): "
    "ResourceClass/parametersRef/PodSchedulingContext must be redesigned as DeviceClasses with CEL "
    "selectors and claims with device requests, served by a DRA driver that publishes ResourceSlices"
)


def split_api_version(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def is_classic(api_version: str) -> bool:
    group, version = split_api_version(api_version)
    return group == GROUP and version in CLASSIC_VERSIONS


def needs_upgrade(obj: MutableMapping[str, Any]) -> bool:
    group, version = split_api_version(str(obj.get("apiVersion", "")))
    return group == GROUP and version in STRUCTURED_OLD_VERSIONS


def _new_like(parent: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    try:
        return type(parent)()
    except TypeError:  # pragma: no cover - exotic mapping types
        return {}


def _insert_at(m: MutableMapping[str, Any], index: int, key: str, value: Any) -> None:
    """Insert ``key`` at position ``index`` keeping the order of the other keys."""
    insert = getattr(m, "insert", None)
    if callable(insert):  # ruamel CommentedMap
        insert(index, key, value)
        return
    tail = [(k, m[k]) for k in list(m.keys())[index:]]
    for k, _ in tail:
        del m[k]
    m[key] = value
    for k, v in tail:
        m[k] = v


def _index_of(m: MutableMapping[str, Any], key: str) -> int:
    return list(m.keys()).index(key)


def _flatten_basic(device: MutableMapping[str, Any], path: str, notes: list[ConversionNote]) -> None:
    if "basic" not in device:
        return
    pos = _index_of(device, "basic")
    basic = device.pop("basic")
    if isinstance(basic, MutableMapping):
        for offset, (k, v) in enumerate(list(basic.items())):
            if k in device:
                notes.append(
                    ConversionNote(f"{path}.basic.{k}", "duplicate of a top-level field; dropped", True)
                )
                continue
            _insert_at(device, pos + offset, k, v)
    notes.append(ConversionNote(f"{path}.basic", "flattened into the device (v1 has no basic wrapper)"))


def _capacity_values(device: MutableMapping[str, Any], path: str, notes: list[ConversionNote]) -> None:
    cap = device.get("capacity")
    if not isinstance(cap, MutableMapping):
        return
    changed = False
    for name in list(cap.keys()):
        value = cap[name]
        if not isinstance(value, MutableMapping):
            wrapped = _new_like(cap)
            wrapped["value"] = value
            cap[name] = wrapped
            changed = True
    if changed:
        notes.append(ConversionNote(f"{path}.capacity", "capacity values wrapped as {value: ...}"))


def _upgrade_request(
    req: MutableMapping[str, Any], path: str, notes: list[ConversionNote], alpha: bool
) -> None:
    flat = [k for k in req if k in EXACT_FIELDS]
    if not flat:
        return
    if "exactly" in req:
        notes.append(
            ConversionNote(
                path, "has both flat fields and exactly; flat fields dropped (invalid in v1)", True
            )
        )
        for k in flat:
            del req[k]
        return
    pos = _index_of(req, flat[0])
    exactly = _new_like(req)
    for k in EXACT_FIELDS:
        if k in req:
            exactly[k] = req.pop(k)
    if alpha and exactly.get("adminAccess") is False:
        # v1alpha3 had a plain bool (false == unset); v1beta1 and later keep an explicit false
        del exactly["adminAccess"]
    _insert_at(req, pos, "exactly", exactly)
    if "firstAvailable" in req:
        notes.append(
            ConversionNote(
                path, "has both exactly fields and firstAvailable; invalid in v1, fix by hand", True
            )
        )
    notes.append(ConversionNote(f"{path}", "request fields moved under exactly"))


def _upgrade_claim_spec(spec: Any, path: str, notes: list[ConversionNote], alpha: bool = False) -> None:
    if not isinstance(spec, MutableMapping):
        return
    if "controller" in spec:
        spec.pop("controller")
        notes.append(
            ConversionNote(
                f"{path}.controller", "v1alpha3 control-plane controller has no equivalent; dropped", True
            )
        )
    devices = spec.get("devices")
    if not isinstance(devices, MutableMapping):
        return
    for i, req in enumerate(devices.get("requests") or []):
        if isinstance(req, MutableMapping):
            _upgrade_request(req, f"{path}.devices.requests[{i}]", notes, alpha)


def _upgrade_slice_spec(spec: Any, notes: list[ConversionNote]) -> None:
    if not isinstance(spec, MutableMapping):
        return
    if spec.get("nodeName") == "":
        del spec["nodeName"]
        notes.append(ConversionNote("spec.nodeName", "empty nodeName dropped (a pointer in v1)"))
    if spec.get("allNodes") is False:
        del spec["allNodes"]
        notes.append(ConversionNote("spec.allNodes", "allNodes: false dropped (a pointer in v1)"))
    for i, dev in enumerate(spec.get("devices") or []):
        if isinstance(dev, MutableMapping):
            p = f"spec.devices[{i}]"
            _flatten_basic(dev, p, notes)
            _capacity_values(dev, p, notes)


def _upgrade_status(status: Any, notes: list[ConversionNote]) -> None:
    if not isinstance(status, MutableMapping):
        return
    if "deallocationRequested" in status:
        status.pop("deallocationRequested")
        notes.append(
            ConversionNote("status.deallocationRequested", "no equivalent after 1.31; dropped", True)
        )
    alloc = status.get("allocation")
    if isinstance(alloc, MutableMapping) and "controller" in alloc:
        alloc.pop("controller")
        notes.append(
            ConversionNote("status.allocation.controller", "no equivalent after 1.31; dropped", True)
        )


def upgrade_to_v1(
    obj: MutableMapping[str, Any], *, location: Location | None = None, target_version: str = DEFAULT_TARGET
) -> list[ConversionNote]:
    """Convert ``obj`` in place to its v1 shape and return what changed.

    Non-DRA objects and v1 objects are left alone (empty list). DeviceTaintRule keeps an apiVersion the
    target release serves (v1 from 1.37, v1beta2 in 1.36, v1alpha3 before), but always gets the 1.35+
    selector shape.
    """
    api_version = str(obj.get("apiVersion", ""))
    group, version = split_api_version(api_version)
    if group != GROUP:
        return []
    kind = str(obj.get("kind", ""))
    if version in CLASSIC_VERSIONS:
        raise ClassicDRAError(CLASSIC_HINT.format(api=f"{api_version} {kind}"), location)
    notes: list[ConversionNote] = []
    if kind == TAINT_RULE:
        _upgrade_taint_rule(obj, notes, target_version)
        return notes
    if version not in STRUCTURED_OLD_VERSIONS:
        return notes
    obj["apiVersion"] = V1
    notes.append(ConversionNote("apiVersion", f"{api_version} -> {V1}"))
    spec = obj.get("spec")
    if kind == "ResourceSlice":
        _upgrade_slice_spec(spec, notes)
    elif kind == "ResourceClaim":
        _upgrade_claim_spec(spec, "spec", notes, version == "v1alpha3")
        _upgrade_status(obj.get("status"), notes)
    elif kind == "ResourceClaimTemplate":
        if isinstance(spec, MutableMapping):
            _upgrade_claim_spec(spec.get("spec"), "spec.spec", notes, version == "v1alpha3")
    elif kind == "DeviceClass" and isinstance(spec, MutableMapping) and "suitableNodes" in spec:
        spec.pop("suitableNodes")
        notes.append(
            ConversionNote(
                "spec.suitableNodes", "classic control-plane field has no equivalent; dropped", True
            )
        )
    return notes


def taint_rule_api_version(target_version: str) -> str:
    """The DeviceTaintRule version ``target_version`` serves (data/versions.yaml ``apis.deviceTaintRule``)."""
    release = Version.maybe(target_version) or Version.parse(DEFAULT_TARGET)
    return str(versions.api("deviceTaintRule", release) or f"{GROUP}/v1alpha3")


def _upgrade_taint_rule(
    obj: MutableMapping[str, Any], notes: list[ConversionNote], target_version: str
) -> None:
    want = taint_rule_api_version(target_version)
    if obj.get("apiVersion") != want and obj.get("apiVersion") != V1:
        notes.append(ConversionNote("apiVersion", f"{obj.get('apiVersion')} -> {want}"))
        obj["apiVersion"] = want
    spec = obj.get("spec")
    sel = spec.get("deviceSelector") if isinstance(spec, MutableMapping) else None
    if isinstance(sel, MutableMapping):
        for k in ("deviceClassName", "selectors"):
            if k in sel:
                sel.pop(k)
                notes.append(
                    ConversionNote(
                        f"spec.deviceSelector.{k}", "removed from DeviceTaintRule in 1.35; dropped", True
                    )
                )


MAX_COUNTER_SETS_PER_SLICE = 8


def split_partitionable_slices(objs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:  # noqa: C901 - one algorithm (split, rename, recount) over pools, with its helper
    """Rewrite 1.33/1.34 partitionable pools for 1.35+, where a slice holds counters *or* devices, not both.

    ``objs`` is any list of objects; ResourceSlices that mix ``sharedCounters`` and ``devices`` are split:
    their counter sets move to new counters-only slices (``<first slice name>-counters[-N]``, at most 8 sets
    each), and every slice of the affected pools gets the new ``pool.resourceSliceCount``. Counter-set names
    must already be unique in the pool (they are in drivers that follow the 1.34 rules). Other objects and
    unaffected pools are returned unchanged, in their original order; new slices come right before the first
    slice of their pool.
    """

    def pool_key(o: MutableMapping[str, Any]) -> tuple[str, str] | None:
        if o.get("kind") != "ResourceSlice":
            return None
        spec = o.get("spec")
        if not isinstance(spec, MutableMapping):
            return None
        pool = spec.get("pool")
        name = pool.get("name") if isinstance(pool, MutableMapping) else None
        return (str(spec.get("driver", "")), str(name or ""))

    mixed: set[tuple[str, str]] = set()
    for o in objs:
        k = pool_key(o)
        spec = o.get("spec")
        if (
            k is not None
            and isinstance(spec, MutableMapping)
            and spec.get("sharedCounters")
            and spec.get("devices")
        ):
            mixed.add(k)
    if not mixed:
        return list(objs)
    out: list[MutableMapping[str, Any]] = []
    emitted: set[tuple[str, str]] = set()
    for o in objs:
        k = pool_key(o)
        if k is None or k not in mixed:
            out.append(o)
            continue
        if k not in emitted:
            emitted.add(k)
            pool_objs = [x for x in objs if pool_key(x) == k]
            sets: list[Any] = []
            for x in pool_objs:
                xs = x["spec"]
                if xs.get("sharedCounters") and xs.get("devices"):
                    sets.extend(xs["sharedCounters"])
            chunks = [
                sets[i : i + MAX_COUNTER_SETS_PER_SLICE]
                for i in range(0, len(sets), MAX_COUNTER_SETS_PER_SLICE)
            ]
            new_slices: list[MutableMapping[str, Any]] = []
            for n, chunk in enumerate(chunks):
                c = copy.deepcopy(o)
                cspec = c["spec"]
                cspec.pop("devices", None)
                cspec["sharedCounters"] = chunk
                meta = c.get("metadata")
                suffix = "counters" if n == 0 else f"counters-{n}"
                if isinstance(meta, MutableMapping):
                    if meta.get("name"):
                        meta["name"] = f"{meta['name']}-{suffix}"
                    elif meta.get("generateName"):
                        meta["generateName"] = f"{meta['generateName']}{suffix}-"
                new_slices.append(c)
            for x in pool_objs:
                xs = x["spec"]
                if xs.get("sharedCounters") and xs.get("devices"):
                    del xs["sharedCounters"]
            total = len(pool_objs) + len(new_slices)
            for x in [*new_slices, *pool_objs]:
                pool = x["spec"].get("pool")
                if isinstance(pool, MutableMapping):
                    pool["resourceSliceCount"] = total
            out.extend(new_slices)
        out.append(o)
    return out
