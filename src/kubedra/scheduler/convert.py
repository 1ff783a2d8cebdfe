"""Each pod in both worlds: the DRA version of a device-plugin pod, the device-plugin version of a DRA pod.

Pure functions on the typed model; what each resource and request means is the vendor's
(:meth:`~kubedra.vendors.base.Vendor.pod_resource`, :meth:`~kubedra.vendors.base.Vendor.claim_request`,
:meth:`~kubedra.vendors.base.Vendor.device_plugin_request`: the same classification as ``kubedra migrate``).

Device plugin → DRA (:func:`to_dra`): every GPU resource of a container becomes one request of one claim named
``gpu`` on the pod, with the DeviceClass, selectors and opaque config its vendor gives (NVIDIA:
``nvidia.com/gpu: N`` → ``exactly {deviceClassName: gpu.nvidia.com, count: N}``; ``nvidia.com/mig-<p>: N`` →
``mig.nvidia.com`` with the selector ``profile == '<p>'``; ``nvidia.com/gpu.shared`` → whole GPUs with a
time-slicing ``GpuConfig``). Pods share a GPU only when they share a claim, see ``--sharing``, whose config is the
claim's own vendor's (:meth:`~kubedra.vendors.base.Vendor.claim_sharing`).

GPU memory is explicit, never guessed: a pod declares what each of its GPUs must hold with the annotation
``kubedra.io/gpu-memory: 20Gi`` (or the run sets a default with ``--gpu-memory``). With sizing ``gpu`` (the
default) the declared memory only becomes a selector ``memory >= need`` on whole GPUs. With sizing ``mig``
the request becomes a prioritised list (``firstAvailable``): the partition (MIG) profiles the cluster publishes
whose memory holds the need, smallest first (fewest memory slices, then fewest compute slices), and a whole GPU
last; a pod without a declared need keeps whole GPUs (and is counted in the notes).

DRA → device plugin (:func:`to_device_plugin`): a request that a vendor reads as one of its device-plugin resources
(NVIDIA: ``gpu.nvidia.com`` without selectors is ``nvidia.com/gpu``, ``mig.nvidia.com`` whose only selector names a
profile is ``nvidia.com/mig-<profile>``; a class of the input that selects exactly what those select, such as
``kubedra migrate``'s time-slicing and MPS classes, counts as them). Everything else (other drivers, CEL on
attributes or capacity, prioritised lists, constraints, ``allocationMode: All``, admin access) is "not
expressible with the device plugin", and the pod stays pending in device-plugin mode with that reason.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.errors import InputError, Location
from kubedra.k8s.dnsnames import as_dns_label
from kubedra.k8s.quantity import Quantity, QuantityError, parse_quantity
from kubedra.model.objects import (
    ALLOCATION_MODE_EXACT,
    Container,
    DeviceClaim,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ExactDeviceRequest,
    OpaqueDeviceConfiguration,
    Pod,
    PodResourceClaim,
)
from kubedra.vendors import GpuResource, Vendor
from kubedra.vendors.gpurequest import device_count

GPU_MEMORY_ANNOTATION = "kubedra.io/gpu-memory"
MAX_SUBREQUESTS = 8  # FirstAvailableDeviceRequestMaxSize

_G = re.compile(r"^(\d+)g\.")


@dataclass(frozen=True)
class MigOffer:
    """A MIG profile the DRA cluster publishes, with the memory of its devices (one value per GPU model)."""

    profile: str
    memories: tuple[int, ...]
    memory_slices: int = 0  # placement size, when known from the catalogue
    compute_slices: int = 0

    def fits(self, need: int) -> bool:
        return any(m >= need for m in self.memories)

    def smallest_fitting(self, need: int) -> int:
        return min(m for m in self.memories if m >= need)


@dataclass(frozen=True)
class DraOptions:
    sizing: str = "gpu"  # gpu | mig
    gpu_memory: int | None = None  # default per-GPU need in bytes for pods without the annotation
    offers: tuple[MigOffer, ...] = ()  # --dra-sizing mig: profiles the cluster publishes
    release: str | None = None  # --target-version: a GPU count is read as that release reads it
    # to_dra: gpu_wants of each pair of (init) containers lists, by their ids, with the lists (so no id is
    # reused while its entry lives): the pods of one workload share them
    wants_of: dict[tuple[int, int], tuple[Any, Any, Any]] = field(
        default_factory=dict, compare=False, repr=False
    )


@dataclass
class GpuWant:
    container: str
    resource: GpuResource
    count: int


@dataclass
class DraVersion:
    """The DRA version of one (template) pod."""

    pod: Pod
    spec: DeviceClaim | None = None  # spec of the added claim (None: nothing to add)
    claim_name: str | None = None
    key: tuple[object, ...] = ()  # equal keys have equal specs (to share one ResourceClaimTemplate)
    wants: list[GpuWant] = field(default_factory=list)
    need_bytes: int | None = None  # declared GPU memory per device
    shareable: bool = (
        False  # one whole GPU: --sharing may give several pods one claim (with its vendor's config)
    )
    shared_resource: bool = False  # a time-sliced resource of the device plugin (nvidia.com/gpu.shared)
    vendor: str | None = None  # the Vendor.name of the claim's one request (None: none, or several)
    error: str | None = None  # not expressible in DRA

    @property
    def devices(self) -> int:
        return sum(w.count for w in self.wants)


def memory_need(pod: Pod, default: int | None, location: Location | None = None) -> int | None:
    """Bytes each GPU of ``pod`` must hold: the annotation, else the run's default, else None."""
    raw = pod.meta.annotations.get(GPU_MEMORY_ANNOTATION)
    if raw is None:
        return default
    try:
        q = parse_quantity(str(raw))
    except QuantityError as e:
        raise InputError(
            f"pod {pod.meta.namespace}/{pod.meta.name}: annotation {GPU_MEMORY_ANNOTATION}={raw!r}: {e}",
            location,
        ) from None
    if q.nanos <= 0:
        raise InputError(
            f"pod {pod.meta.namespace}/{pod.meta.name}: annotation {GPU_MEMORY_ANNOTATION} must be positive",
            location,
        )
    return q.value()


def _classify(name: str) -> GpuResource | None:
    """What resource ``name`` on a pod is, as its vendor reads it (migrate's classification, plus the device
    plugin's own spellings: :meth:`~kubedra.vendors.base.Vendor.pod_resource`)."""
    v = vendors.for_resource(name)
    return v.pod_resource(name) if v is not None else None


def _count(q: Quantity, release: str | None) -> int | None:
    return device_count(q, release)  # the one reading of a GPU request (kubedra.vendors.gpurequest)


def gpu_wants(pod: Pod, release: str | None = None) -> tuple[list[GpuWant], str | None]:
    """GPU resources per container (sidecars and main containers; an init container only when it needs
    more than the long-lived containers, whose devices it reuses), or a reason they cannot be converted."""
    main: list[GpuWant] = []
    init: list[GpuWant] = []
    n_init = len(pod.init_containers)
    for i, c in enumerate([*pod.init_containers, *pod.containers]):
        merged = dict(c.limits)
        merged.update(c.requests)
        for rname in sorted(merged):
            gr = _classify(rname)
            if gr is None:
                continue
            if gr.kind == "manual":
                return [], f"{rname}: {gr.reason}"
            why = vendors.get(gr.vendor).unsupported("simulate")
            if why is not None:  # the seam: a vendor whose GPUs cannot be simulated says why
                return [], f"{rname}: {why}"
            n = _count(merged[rname], release)
            if n is None:
                return [], f"{rname}: {merged[rname]} is not a whole number of devices"
            if n == 0:
                continue
            w = GpuWant(c.name, gr, n)
            (init if i < n_init and c.restart_policy != "Always" else main).append(w)
    totals: dict[str, int] = {}
    for w in main:
        totals[w.resource.name] = totals.get(w.resource.name, 0) + w.count
    for w in init:
        if w.count > totals.get(w.resource.name, 0):
            main.append(w)
    return main, None


def _strip_gpus(c: Container) -> Container:
    def keep(m: Mapping[str, Quantity]) -> dict[str, Quantity]:
        return {k: v for k, v in m.items() if _classify(k) is None}

    return dataclasses.replace(c, requests=keep(c.requests), limits=keep(c.limits))


def _g(profile: str) -> int:
    m = _G.match(profile)
    return int(m.group(1)) if m else 0


def _partition_alternatives(
    vendor: Vendor, count: int, need: int, offers: Sequence[MigOffer]
) -> list[DeviceSubRequest]:
    fitting = [o for o in offers if o.fits(need)]
    fitting.sort(
        key=lambda o: (
            o.memory_slices or 0,
            o.smallest_fitting(need),
            o.compute_slices or _g(o.profile),
            o.profile,
        )
    )
    memory = vendor.min_memory_selector(str(need))
    subs: list[DeviceSubRequest] = []
    used: set[str] = set()
    for o in fitting[: MAX_SUBREQUESTS - 1]:
        claim = vendor.partition_claim(o.profile)
        label = as_dns_label("mig-" + o.profile.replace(".", "-").replace("+", "-"))
        if claim is None or label in used:
            continue
        used.add(label)
        cls, selectors = claim
        subs.append(
            DeviceSubRequest(name=label, device_class_name=cls, selectors=[*selectors, memory], count=count)
        )
    subs.append(
        DeviceSubRequest(name="gpu", device_class_name=vendor.gpu_class, selectors=[memory], count=count)
    )
    return subs


def _request_name(want: GpuWant, index: int, total: int, used: set[str]) -> str:
    base = (
        "gpu" if total == 1 else as_dns_label(want.container if index == 0 else f"{want.container}-{index}")
    )
    name, k = base, 2
    while name in used:
        name, k = f"{base}-{k}", k + 1
    used.add(name)
    return name


def _free_claim_name(pod: Pod) -> str:
    taken = {rc.name for rc in pod.resource_claims}
    name, k = "gpu", 2
    while name in taken:
        name, k = f"gpu-{k}", k + 1
    return name


def to_dra(pod: Pod, opts: DraOptions, location: Location | None = None) -> DraVersion:
    """The DRA version of ``pod`` (unchanged when it asks for no device-plugin GPU)."""
    lists = (id(pod.init_containers), id(pod.containers))
    hit = opts.wants_of.get(lists)
    if hit is not None and hit[0] is pod.init_containers and hit[1] is pod.containers:
        wants, error = hit[2]
    else:
        wants, error = gpu_wants(pod, opts.release)
        opts.wants_of[lists] = (pod.init_containers, pod.containers, (wants, error))
    need = memory_need(pod, opts.gpu_memory, location)
    if error is not None:
        return DraVersion(pod, error=f"not expressible in DRA: {error}", need_bytes=need)
    if not wants:
        return DraVersion(pod, need_bytes=need)
    requests: list[DeviceRequest] = []
    config: list[DeviceClaimConfiguration] = []
    used: set[str] = set()
    per_container: dict[str, int] = {}
    key: list[object] = [opts.sizing]
    shareable = True
    shared_resource = False
    for w in wants:
        idx = per_container.get(w.container, 0)
        per_container[w.container] = idx + 1
        rname = _request_name(w, idx, len(wants), used)
        gr = w.resource
        key.append((rname, gr.name, w.count, need))
        vendor = vendors.get(gr.vendor)
        req = vendor.claim_request(gr)
        if gr.kind == "shared":
            shared_resource = True
        if req.config is not None:  # the device plugin's own sharing of the resource, in the driver's words
            opaque = OpaqueDeviceConfiguration(req.config["driver"], req.config["parameters"])
            config.append(DeviceClaimConfiguration(requests=[rname], opaque=opaque))
        if not req.shareable or w.count != 1:
            shareable = False
        if req.partitions and opts.sizing == "mig" and need is not None:
            shareable = False
            alternatives = _partition_alternatives(vendor, w.count, need, opts.offers)
            requests.append(DeviceRequest(rname, first_available=alternatives))
            continue
        selectors = list(req.selectors)
        if need is not None and req.sized:
            selectors.append(vendor.min_memory_selector(str(need)))
        requests.append(
            DeviceRequest(
                rname, exactly=ExactDeviceRequest(req.device_class, selectors=selectors, count=w.count)
            )
        )
    claim_name = _free_claim_name(pod)
    new_pod = dataclasses.replace(
        pod,
        containers=[_strip_gpus(c) for c in pod.containers],
        init_containers=[_strip_gpus(c) for c in pod.init_containers],
        resource_claims=[
            *pod.resource_claims,
            PodResourceClaim(name=claim_name, resource_claim_template_name="(generated)"),
        ],
    )
    return DraVersion(
        new_pod,
        spec=DeviceClaim(requests=requests, config=config),
        claim_name=claim_name,
        key=tuple(key),
        wants=wants,
        need_bytes=need,
        shareable=shareable and len(wants) == 1,
        shared_resource=shared_resource,
        vendor=wants[0].resource.vendor if len(wants) == 1 else None,
    )


# --------------------------------------------------------------------------- DRA -> device plugin


def _explain_request(
    claim: str, r: DeviceRequest, classes: Mapping[str, DeviceClass] | None = None
) -> tuple[str, int] | str:
    """(device-plugin resource, count) for one request, or why the device plugin cannot express it."""
    where = f"claim {claim} request {r.name}"
    if r.exactly is None:
        return f"{where} is a prioritised list of alternatives (firstAvailable)"
    ex = r.exactly
    if ex.allocation_mode != ALLOCATION_MODE_EXACT:
        return f"{where} asks for all matching devices (allocationMode: {ex.allocation_mode})"
    if ex.admin_access:
        return f"{where} asks for admin access"
    if ex.capacity:
        return f"{where} asks for a share of a device's capacity"
    dc = (classes or {}).get(ex.device_class_name)
    class_selectors = [sel.strip() for sel in dc.selectors] if dc is not None else None
    for v in vendors.all():
        got = v.device_plugin_request(ex.device_class_name, ex.selectors, class_selectors)
        if got is not None and got.resource is not None:
            return got.resource, ex.count
        if got is not None:
            return f"{where} {got.reason}"
    return f"{where} uses DeviceClass {ex.device_class_name}"


def to_device_plugin(
    pod: Pod, specs: Sequence[tuple[str, DeviceClaim]], classes: Mapping[str, DeviceClass] | None = None
) -> tuple[Pod, str | None]:
    """The device-plugin version of a pod whose claims have the given specs ((pod claim name, spec));
    ``classes`` are the input's DeviceClasses (migrate's sharing classes map back to the driver's)."""
    extra: dict[str, int] = {}
    for claim, spec in specs:
        if spec.constraints:
            return pod, (
                f"not expressible with the device plugin: claim {claim} constrains its devices "
                "(matchAttribute/distinctAttribute)"
            )
        for r in spec.requests:
            got = _explain_request(claim, r, classes)
            if isinstance(got, str):
                return pod, f"not expressible with the device plugin: {got}"
            res, n = got
            extra[res] = extra.get(res, 0) + n
    if not pod.containers:
        return pod, "pod has no containers"
    first = pod.containers[0]
    limits = dict(first.limits)
    requests = dict(first.requests)
    for res, n in extra.items():
        q = Quantity.from_int(n + (limits[res].value() if res in limits else 0))
        limits[res] = q
        requests[res] = q
    containers = [dataclasses.replace(first, limits=limits, requests=requests), *pod.containers[1:]]
    return dataclasses.replace(pod, containers=containers, resource_claims=[]), None
