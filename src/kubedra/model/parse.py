"""Parse Kubernetes object dicts (any supported resource.k8s.io version) into the typed v1 model.

``parse_object(obj, location)`` converts older DRA versions in a copy (:mod:`kubedra.model.convert`), then
builds the dataclasses, applying API defaults (``allocationMode: ExactCount``, ``count: 1``, toleration
``operator: Equal``). A value of the wrong type or an invalid quantity raises :class:`InputError` naming the
field path, e.g. ``spec.devices[0].capacity.memory.value: invalid quantity "lots"``.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import Location
from kubedra.model import convert
from kubedra.model.facts import DeviceFacts
from kubedra.model.fields import (
    ParseContext,
    device_claim,
    node_selector,
    object_meta,
    parse_allocation,
    parse_device,
    parse_opaque,
    parse_selectors,
    parse_taint,
    shared_counters,
)
from kubedra.model.objects import (
    Container,
    DeviceClass,
    DeviceTaintRule,
    DeviceTaintSelector,
    Node,
    ObjectMeta,
    Pod,
    PodResourceClaim,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
    Taint,
    Toleration,
)

DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")


# --------------------------------------------------------------------------- kinds


def _slice(c: ParseContext, obj: dict[str, Any]) -> ResourceSlice:
    if c.facts is None:  # devices of one slice share their equal facts at least
        c.facts = DeviceFacts()
    spec = c.mapping(obj.get("spec"), "spec")
    pool = c.mapping(spec.get("pool"), "spec.pool")
    return ResourceSlice(
        meta=object_meta(c, obj.get("metadata")),
        driver=c.string(spec.get("driver"), "spec.driver"),
        pool=ResourcePool(
            name=c.string(pool.get("name"), "spec.pool.name"),
            generation=c.integer(pool.get("generation"), "spec.pool.generation"),
            resource_slice_count=c.integer(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount", 1),
        ),
        node_name=c.opt_str(spec.get("nodeName"), "spec.nodeName") or None,
        node_selector=node_selector(c, spec.get("nodeSelector"), "spec.nodeSelector"),
        all_nodes=c.boolean(spec.get("allNodes"), "spec.allNodes") or None,
        per_device_node_selection=c.boolean(
            spec.get("perDeviceNodeSelection"), "spec.perDeviceNodeSelection"
        ),
        devices=c.each(spec.get("devices"), "spec.devices", lambda x, p: parse_device(c, x, p)),
        shared_counters=shared_counters(c, spec.get("sharedCounters")),
        skip_node_operations=c.strings(spec.get("skipNodeOperations"), "spec.skipNodeOperations"),
    )


def _claim(c: ParseContext, obj: dict[str, Any]) -> ResourceClaim:
    status = c.mapping(obj.get("status"), "status")
    return ResourceClaim(
        meta=object_meta(c, obj.get("metadata")),
        spec=device_claim(c, obj.get("spec"), "spec"),
        allocation=parse_allocation(c, status.get("allocation"), "status.allocation"),
        reserved_for=c.each(
            status.get("reservedFor"),
            "status.reservedFor",
            lambda x, p: ResourceClaimConsumerReference(
                resource=c.string((x := c.mapping(x, p)).get("resource"), f"{p}.resource"),
                name=c.string(x.get("name"), f"{p}.name"),
                uid=c.string(x.get("uid"), f"{p}.uid"),
                api_group=c.string(x.get("apiGroup"), f"{p}.apiGroup"),
            ),
        ),
        device_statuses=[d for d in c.items(status.get("devices"), "status.devices") if isinstance(d, dict)],
    )


def _template(c: ParseContext, obj: dict[str, Any]) -> ResourceClaimTemplate:
    spec = c.mapping(obj.get("spec"), "spec")
    tmeta = c.mapping(spec.get("metadata"), "spec.metadata")
    return ResourceClaimTemplate(
        meta=object_meta(c, obj.get("metadata")),
        claim_labels={
            str(k): str(v) for k, v in c.mapping(tmeta.get("labels"), "spec.metadata.labels").items()
        },
        claim_annotations={
            str(k): str(v)
            for k, v in c.mapping(tmeta.get("annotations"), "spec.metadata.annotations").items()
        },
        spec=device_claim(c, spec.get("spec"), "spec.spec"),
    )


def _class(c: ParseContext, obj: dict[str, Any]) -> DeviceClass:
    spec = c.mapping(obj.get("spec"), "spec")
    configs = []
    for i, x in enumerate(c.items(spec.get("config"), "spec.config")):
        o = parse_opaque(c, c.mapping(x, f"spec.config[{i}]").get("opaque"), f"spec.config[{i}].opaque")
        if o is not None:
            configs.append(o)
    return DeviceClass(
        meta=object_meta(c, obj.get("metadata")),
        selectors=parse_selectors(c, spec.get("selectors"), "spec.selectors"),
        config=configs,
        extended_resource_name=c.opt_str(spec.get("extendedResourceName"), "spec.extendedResourceName"),
    )


def _taint_rule(c: ParseContext, obj: dict[str, Any]) -> DeviceTaintRule:
    spec = c.mapping(obj.get("spec"), "spec")
    sel = None
    if spec.get("deviceSelector") is not None:
        s = c.mapping(spec["deviceSelector"], "spec.deviceSelector")
        sel = DeviceTaintSelector(
            driver=c.opt_str(s.get("driver"), "spec.deviceSelector.driver"),
            pool=c.opt_str(s.get("pool"), "spec.deviceSelector.pool"),
            device=c.opt_str(s.get("device"), "spec.deviceSelector.device"),
        )
    return DeviceTaintRule(
        meta=object_meta(c, obj.get("metadata")),
        taint=parse_taint(c, spec.get("taint"), "spec.taint"),
        device_selector=sel,
    )


def _node(c: ParseContext, obj: dict[str, Any]) -> Node:
    spec = c.mapping(obj.get("spec"), "spec")
    status = c.mapping(obj.get("status"), "status")
    capacity = c.qty_map(status.get("capacity"), "status.capacity")
    allocatable = (
        c.qty_map(status.get("allocatable"), "status.allocatable") if "allocatable" in status else capacity
    )
    ready = True
    for cond in c.items(status.get("conditions"), "status.conditions"):
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            ready = cond.get("status") == "True"
    info = c.mapping(status.get("nodeInfo"), "status.nodeInfo")
    return Node(
        meta=object_meta(c, obj.get("metadata")),
        capacity=capacity,
        allocatable=allocatable,
        taints=c.each(
            spec.get("taints"),
            "spec.taints",
            lambda x, p: Taint(
                key=c.string((x := c.mapping(x, p)).get("key"), f"{p}.key"),
                value=c.string(x.get("value"), f"{p}.value"),
                effect=c.string(x.get("effect"), f"{p}.effect"),
            ),
        ),
        unschedulable=bool(spec.get("unschedulable")),
        ready=ready,
        kubelet_version=str(info.get("kubeletVersion") or ""),
        declared_features=c.strings(status.get("declaredFeatures"), "status.declaredFeatures"),
    )


def _container(c: ParseContext, v: Any, path: str) -> Container:
    m = c.mapping(v, path)
    res = c.mapping(m.get("resources"), f"{path}.resources")
    return Container(
        name=c.string(m.get("name"), f"{path}.name"),
        requests=c.qty_map(res.get("requests"), f"{path}.resources.requests"),
        limits=c.qty_map(res.get("limits"), f"{path}.resources.limits"),
        claims=[
            c.string(
                c.mapping(x, f"{path}.resources.claims[{i}]").get("name"),
                f"{path}.resources.claims[{i}].name",
            )
            for i, x in enumerate(c.items(res.get("claims"), f"{path}.resources.claims"))
        ],
        restart_policy=c.opt_str(m.get("restartPolicy"), f"{path}.restartPolicy"),
    )


def _containers(c: ParseContext, v: Any, path: str) -> list[Container]:
    return c.each(v, path, lambda x, p: _container(c, x, p))


def _strings(v: Any) -> tuple[tuple[str, str], ...] | None:
    """A mapping of strings as its items (None: absent), for a content key; raises ValueError otherwise."""
    if v is None:
        return None
    if type(v) is not dict:
        raise ValueError
    for x in v.values():
        if type(x) is not str:
            raise ValueError
    return tuple(v.items())


def _container_key(m: Any) -> tuple[Any, ...]:
    """All that :func:`_container` reads of ``m`` (the ones it reads without an error); ValueError where the
    key would not tell apart values it reads differently (a number beside a string)."""
    if type(m) is not dict:
        raise ValueError
    name, policy, res = m.get("name"), m.get("restartPolicy"), m.get("resources")
    if (name is not None and type(name) is not str) or (policy is not None and type(policy) is not str):
        raise ValueError
    if res is None:
        return (name, policy)
    if type(res) is not dict:
        raise ValueError
    claims = res.get("claims")
    names = None
    if claims is not None:
        if type(claims) is not list or any(
            type(x) is not dict or type(x.get("name")) is not str for x in claims
        ):
            raise ValueError
        names = tuple(x["name"] for x in claims)
    return (name, policy, _strings(res.get("requests")), _strings(res.get("limits")), names)


def _containers_key(v: Any) -> tuple[Any, ...] | None:
    """A content key of a containers list for :meth:`ParseContext.alike` (None: it has none); absent, it
    parses as an empty list does."""
    if v is None:
        return ()
    if type(v) is not list:
        return None
    try:
        return tuple(_container_key(m) for m in v)
    except ValueError:
        return None


def _tolerations_key(v: Any) -> tuple[Any, ...] | None:
    """A content key of a tolerations list for :meth:`ParseContext.alike` (None: it has none): the four
    strings and tolerationSeconds as the parser keeps it, with its type (``True`` is an int to the parser,
    but not ``1``); absent, it parses as an empty list does."""
    if v is None:
        return ()
    if type(v) is not list:
        return None
    out = []
    for x in v:
        if type(x) is not dict:
            return None
        get = x.get
        k, op, val, eff, secs = (
            get("key"),
            get("operator"),
            get("value"),
            get("effect"),
            get("tolerationSeconds"),
        )
        if (
            (k is not None and type(k) is not str)
            or (op is not None and type(op) is not str)
            or (val is not None and type(val) is not str)
            or (eff is not None and type(eff) is not str)
        ):
            return None
        # the parser keeps an int (bool among them), else nothing
        out.append((k, op, val, eff, (type(secs), secs) if isinstance(secs, int) else None))
    return tuple(out)


def _tolerations(c: ParseContext, v: Any, path: str) -> list[Toleration]:
    return c.each(
        v,
        path,
        lambda x, p: Toleration(
            key=c.string((x := c.mapping(x, p)).get("key"), f"{p}.key"),
            operator=c.string(x.get("operator"), f"{p}.operator") or "Equal",
            value=c.string(x.get("value"), f"{p}.value"),
            effect=c.string(x.get("effect"), f"{p}.effect"),
            toleration_seconds=x.get("tolerationSeconds")
            if isinstance(x.get("tolerationSeconds"), int)
            else None,
        ),
    )


def _affinity(c: ParseContext, v: Any, path: str) -> dict[str, Any] | None:
    """The pod's affinity as written, once its required node affinity (what the scheduler's NodeAffinity
    filter reads) has the API's types: a malformed one is an error at file:line, as the API server refuses it."""
    affinity = c.mapping(v, path)
    node = c.mapping(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    node_selector(c, node.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    return v if affinity else None


def _shared_containers(c: ParseContext, v: Any, path: str) -> list[Container]:
    return c.alike(v, path, _containers_key, functools.partial(_containers, c))


def _shared_tolerations(c: ParseContext, v: Any, path: str) -> list[Toleration]:
    return c.alike(v, path, _tolerations_key, functools.partial(_tolerations, c))


def pod_spec(
    c: ParseContext, meta: ObjectMeta, spec: dict[str, Any], status: dict[str, Any] | None = None
) -> Pod:
    status = status or {}
    sg = c.mapping(spec.get("schedulingGroup"), "spec.schedulingGroup")
    claim_statuses: dict[str, str | None] = {}
    for x in c.items(status.get("resourceClaimStatuses"), "status.resourceClaimStatuses"):
        if isinstance(x, dict) and x.get("name"):
            claim_statuses[str(x["name"])] = x.get("resourceClaimName")
    return Pod(
        meta=meta,
        containers=c.once(
            spec.get("containers"), "spec.containers", functools.partial(_shared_containers, c)
        ),
        init_containers=c.once(
            spec.get("initContainers"), "spec.initContainers", functools.partial(_shared_containers, c)
        ),
        overhead=c.qty_map(spec.get("overhead"), "spec.overhead"),
        resource_claims=c.each(
            spec.get("resourceClaims"),
            "spec.resourceClaims",
            lambda x, p: PodResourceClaim(
                name=c.string((x := c.mapping(x, p)).get("name"), f"{p}.name"),
                resource_claim_name=c.opt_str(x.get("resourceClaimName"), f"{p}.resourceClaimName"),
                resource_claim_template_name=c.opt_str(
                    x.get("resourceClaimTemplateName"), f"{p}.resourceClaimTemplateName"
                ),
            ),
        ),
        node_name=c.string(spec.get("nodeName"), "spec.nodeName"),
        node_selector={
            str(k): str(v) for k, v in c.mapping(spec.get("nodeSelector"), "spec.nodeSelector").items()
        },
        affinity=c.once(spec.get("affinity"), "spec.affinity", functools.partial(_affinity, c)),
        tolerations=c.once(
            spec.get("tolerations"), "spec.tolerations", functools.partial(_shared_tolerations, c)
        ),
        priority=c.integer(spec["priority"], "spec.priority") if spec.get("priority") is not None else None,
        priority_class_name=c.string(spec.get("priorityClassName"), "spec.priorityClassName"),
        host_network=spec.get("hostNetwork") is True,
        scheduler_name=c.string(spec.get("schedulerName"), "spec.schedulerName"),
        scheduling_group=c.opt_str(sg.get("podGroupName"), "spec.schedulingGroup.podGroupName"),
        phase=str(status.get("phase") or ""),
        claim_statuses=claim_statuses,
    )


def _pod(c: ParseContext, obj: dict[str, Any]) -> Pod:
    return pod_spec(
        c,
        object_meta(c, obj.get("metadata")),
        c.mapping(obj.get("spec"), "spec"),
        c.mapping(obj.get("status"), "status"),
    )


_PARSERS: dict[str, Callable[[ParseContext, dict[str, Any]], Any]] = {
    "ResourceSlice": _slice,
    "ResourceClaim": _claim,
    "ResourceClaimTemplate": _template,
    "DeviceClass": _class,
    "DeviceTaintRule": _taint_rule,
    "Node": _node,
    "Pod": _pod,
}


@dataclass
class Parsed:
    """An object of the typed model with where it came from and what conversion changed."""

    obj: Any
    kind: str
    location: Location | None = None
    notes: list[convert.ConversionNote] = field(default_factory=list)


def parse_object(
    obj: dict[str, Any],
    location: Location | None = None,
    facts: DeviceFacts | None = None,
    seen: dict[tuple[int, str], tuple[Any, Any]] | None = None,
    parts: dict[Any, Any] | None = None,
) -> Parsed | None:
    """Typed object for a supported kind (see ``SUPPORTED_KINDS``), None for other kinds.

    ``facts``: the table that gives equal device facts (attributes, capacity, counters, taints) one object
    across the slices parsed with it (:mod:`kubedra.model.facts`); without one, only within the slice.
    ``seen``: for a caller that only checks the object (drops its model) and passes objects whose equal parts
    are one object: a Pod's containers, tolerations and affinity already parsed are not parsed again
    (:meth:`kubedra.model.fields.ParseContext.once`).
    ``parts``: for a caller whose models never change their parts: a Pod's containers and tolerations equal to
    ones parsed with the same table are that model again (:meth:`kubedra.model.fields.ParseContext.alike`).

    Raises :class:`InputError` for malformed values and :class:`convert.ClassicDRAError` for classic DRA.
    """
    kind = obj.get("kind")
    api_version = str(obj.get("apiVersion", ""))
    group, _ = convert.split_api_version(api_version)
    c = ParseContext(location, facts, seen, parts)
    if group == convert.GROUP:
        if convert.is_classic(api_version):
            convert.upgrade_to_v1(obj, location=location)  # raises ClassicDRAError
        if kind not in DRA_KINDS:
            return None
    elif kind in ("Pod", "Node"):
        if api_version != "v1":
            return None
    else:
        return None
    assert isinstance(kind, str)
    notes: list[convert.ConversionNote] = []
    if convert.needs_upgrade(obj) or kind == "DeviceTaintRule":
        obj = copy.deepcopy(obj)
        notes = convert.upgrade_to_v1(obj, location=location)
    try:
        typed = _PARSERS[kind](c, obj)
    except RecursionError:  # pragma: no cover
        raise c.fail("", "object nested too deeply") from None
    return Parsed(obj=typed, kind=kind, location=location, notes=notes)
