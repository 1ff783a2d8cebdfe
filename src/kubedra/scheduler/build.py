"""Turn Pods (and their ResourceClaimTemplates / ResourceClaims) into :class:`SimPod` objects.

- A ``resourceClaimTemplateName`` gets a new claim named ``<pod>-<claim>`` sharing the template's spec
  (the resourceclaim controller's job), except for a bound pod whose generated claim is in the input
  (``status.resourceClaimStatuses``): it keeps that claim and its allocation; a ``resourceClaimName`` refers to an existing claim, shared by every
  pod naming it. A missing template or claim leaves the pod pending, like PreEnqueue would.
- Priority comes from ``spec.priority`` or the PriorityClass named by ``priorityClassName``
  (``globalDefault`` class otherwise, else 0).
- With DRAExtendedResource, extended resources backed by a DeviceClass become one more claim with
  requests ``container-<i>-request-<j>`` (KEP-5004); whether the node satisfies them by DRA or by a device
  plugin is decided per node by the scheduler.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.k8s import namespaces, versions
from kubedra.k8s.podadmission import admitted
from kubedra.model.objects import (
    DeviceClaim,
    DeviceClass,
    DeviceRequest,
    ExactDeviceRequest,
    ObjectMeta,
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
)
from kubedra.scheduler.pods import SimPod, nonzero_requests, pod_requests


@dataclass
class PriorityClasses:
    values: dict[str, int] = field(default_factory=dict)
    default: int = 0

    @classmethod
    def from_objects(cls, objs: Iterable[Mapping[str, Any]]) -> PriorityClasses:
        pc = cls()
        for o in objs:
            if o.get("kind") != "PriorityClass":
                continue
            name = str((o.get("metadata") or {}).get("name", ""))
            value = o.get("value")
            if isinstance(value, int) and not isinstance(value, bool):
                pc.values[name] = value
                if o.get("globalDefault") is True:
                    pc.default = value
        return pc

    def of(self, pod: Pod) -> int:
        if pod.priority is not None:
            return pod.priority
        if pod.priority_class_name:
            return self.values.get(pod.priority_class_name, 0)
        return self.default


def extended_claim_spec(
    pod: Pod, ext_classes: Mapping[str, DeviceClass], release: str = versions.DEFAULT_TARGET
) -> tuple[DeviceClaim, frozenset[str]] | None:
    """The requests the scheduler generates for DRA-backed extended resources, or None.

    One request per (container, resource): ``container-<i>-request-<j>`` with ``i`` the index over
    initContainers + containers and ``j`` the index of the resource among the container's sorted request
    names. Regular init containers run before the others and reuse their devices: an init request is only
    added when it is larger than what the long-lived containers ask for (the largest one wins).
    """
    requests: list[DeviceRequest] = []
    names: set[str] = set()
    long_lived: dict[str, int] = {}
    init_peak: dict[str, tuple[int, DeviceRequest]] = {}
    n_init = len(pod.init_containers)
    for i, c in enumerate([*pod.init_containers, *pod.containers]):
        merged = dict(c.limits)
        merged.update(c.requests)
        regular_init = i < n_init and c.restart_policy != "Always"
        for j, res in enumerate(sorted(merged)):
            cls = ext_classes.get(res)
            # extendeddynamicresources.go createResourceRequestAndMappings: AsInt64 of the request as the
            # release parsed it; none for 2000m, an inf.Dec or past int64 (1e20): no device request
            count = admitted(merged[res], release).as_int64() or 0
            if cls is None or count <= 0:
                continue
            names.add(res)
            req = DeviceRequest(
                name=f"container-{i}-request-{j}",
                exactly=ExactDeviceRequest(device_class_name=cls.name, count=count),
            )
            if regular_init:
                if res not in init_peak or count > init_peak[res][0]:
                    init_peak[res] = (count, req)
                continue
            long_lived[res] = long_lived.get(res, 0) + count
            requests.append(req)
    for res, (count, req) in init_peak.items():
        if count > long_lived.get(res, 0):
            requests.append(req)
    if not requests:
        return None
    requests.sort(key=lambda r: r.name)
    return DeviceClaim(requests=requests), frozenset(names)


_NO_KEY: Any = object()


def _ext_key(pod: Pod, ext_classes: Mapping[str, DeviceClass]) -> tuple[Any, ...] | None:
    """The containers' requests of extended resources that DeviceClasses name, with each container's
    restartPolicy (None: the pod asks for none)."""
    per_container = [
        (
            tuple(sorted((k, str(v)) for k, v in {**c.limits, **c.requests}.items() if k in ext_classes)),
            c.restart_policy,
        )
        for c in [*pod.init_containers, *pod.containers]
    ]
    if not any(reqs for reqs, _ in per_container):
        return None
    return (len(pod.init_containers), tuple(per_container))


def build_sim_pods(
    pods: Sequence[Pod],
    templates: Sequence[ResourceClaimTemplate],
    claims: Sequence[ResourceClaim],
    priorities: PriorityClasses | None = None,
    ext_classes: Mapping[str, DeviceClass] | None = None,
    *,
    start_order: int = 0,
    release: str = versions.DEFAULT_TARGET,
) -> list[SimPod]:
    priorities = priorities or PriorityClasses()
    tmpl = {(namespaces.effective(t.meta.namespace), t.meta.name): t for t in templates}
    named = {(namespaces.effective(c.meta.namespace), c.meta.name): c for c in claims}
    ext_specs: dict[tuple[Any, ...], tuple[DeviceClaim, frozenset[str]]] = {}
    out: list[SimPod] = []
    # pods with the same containers (lists shared by the pods of one workload) have the same requests: one
    # dict for them all (the key holds ids of lists ``pods`` keeps alive)
    sized: dict[tuple[int, int, int], tuple[dict[str, int], int, int]] = {}
    ext_keys: dict[tuple[int, int], Any] = {}  # the same for the extended resources' key (_ext_key)
    for i, pod in enumerate(pods):
        ns = namespaces.effective(pod.meta.namespace)
        same = (id(pod.containers), id(pod.init_containers), id(pod.overhead))
        size = sized.get(same)
        if size is None:
            size = sized[same] = (pod_requests(pod, release), *nonzero_requests(pod, release))
        requests, cpu, mem = size
        sp = SimPod(
            pod=pod,
            order=start_order + i,
            priority=priorities.of(pod),
            requests=requests,
            score_cpu=cpu,
            score_mem=mem,
        )
        sp.gang = f"{ns}/{pod.scheduling_group}" if pod.scheduling_group else None
        for rc in pod.resource_claims:
            generated = pod.claim_statuses.get(rc.name) if pod.node_name else None
            if rc.resource_claim_template_name and generated and (ns, generated) in named:
                sp.claims.append(named[(ns, generated)])  # a bound pod's claim, as the cluster has it
            elif rc.resource_claim_template_name:
                t = tmpl.get((ns, rc.resource_claim_template_name))
                if t is None:
                    sp.reason = f'resourceclaimtemplate "{rc.resource_claim_template_name}" not found'
                    break
                claim = ResourceClaim(
                    meta=ObjectMeta(name=f"{pod.meta.name}-{rc.name}", namespace=ns), spec=t.spec
                )
                sp.claims.append(claim)
            elif rc.resource_claim_name:
                c = named.get((ns, rc.resource_claim_name))
                if c is None:
                    sp.reason = f'resourceclaim "{rc.resource_claim_name}" not found'
                    break
                sp.claims.append(c)
        if ext_classes:
            lists = (id(pod.init_containers), id(pod.containers))  # alive in ``pods``, as for ``sized``
            key = ext_keys.get(lists, _NO_KEY)
            if key is _NO_KEY:
                key = ext_keys[lists] = _ext_key(pod, ext_classes)
            if key is not None:
                if key not in ext_specs:
                    spec = extended_claim_spec(pod, ext_classes, release)
                    if spec is not None:
                        ext_specs[key] = spec
                hit = ext_specs.get(key)
                if hit is not None:
                    sp.extra["ext_claim"] = ResourceClaim(
                        meta=ObjectMeta(name=f"{pod.meta.name}-extended-resources", namespace=ns), spec=hit[0]
                    )
                    sp.extra["ext_resources"] = hit[1]
        out.append(sp)
    return out
