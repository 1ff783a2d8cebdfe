"""NVIDIA behind the vendor seam (:class:`kubedra.vendors.base.Vendor`): the device plugin's resource names, GPU
feature discovery's labels and the NVIDIA DRA driver (``gpu.nvidia.com``).

The DeviceClasses come from :mod:`kubedra.vendors.nvidia.classes` (the catalogue); the registry loads this module
only when a verb first asks for a vendor.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubedra.errors import InputError
from kubedra.vendors.base import (
    ClaimSharing,
    ControllerOutput,
    DerivedView,
    DevicePluginGpus,
    GpuResource,
    NodeComponent,
    NodeLabels,
    OperatorNote,
    PublishedDevice,
    SharedClass,
    SharingConfigRef,
)
from kubedra.vendors.claimshape import ClaimRequest, DevicePluginRequest
from kubedra.vendors.discovery import DiscoveredNode, DiscoverInput, DiscoverRequest
from kubedra.vendors.nvidia import (
    classes,
    cluster,
    computedomain,
    daemonsets,
    discover,
    dpnode,
    dra,
    driver_releases,
    gfd,
    models,
    modes,
    names,
    nodes,
    operator,
    readback,
    requests,
    resources,
    sharing,
    views,
)
from kubedra.vendors.simulated import SimulatedGroup

_GROUP = re.compile(r"^\d{1,12}x\d{1,6}x(?P<model>[A-Za-z0-9][A-Za-z0-9.\-]*)$")


class Nvidia:
    name = "nvidia"
    title = "NVIDIA"
    resource_domain = names.RESOURCE_DOMAIN
    gpu_resource = names.GPU_RESOURCE
    driver = names.DRIVER
    gpu_class = names.GPU_CLASS
    labels = NodeLabels(product=names.PRODUCT_LABEL, count=names.COUNT_LABEL, memory=names.MEMORY_LABEL)
    # cmd/gpu-kubelet-plugin/partitions.go, GpuInfo.PartCapacities: with the DynamicMIG gate (from v25.12.0) the
    # full GPU's capacities are maxCapacities, the maxima over its MIG profiles (as dra._dynamic_template
    # computes them); H100 80GB: 81,152 MiB (7g.80gb) where NVML's total is 81,559 MiB.
    full_gpu_memory_note = (
        "the NVIDIA DRA driver with DynamicMIG publishes a full GPU's memory as its largest MIG profile's, not "
        "the GPU's total"
    )

    def classify(self, name: str) -> GpuResource | None:
        return resources.classify(name)

    def device_classes(self) -> list[dict[str, Any]]:
        return classes.driver_device_classes()

    def known_class_names(self) -> set[str]:
        return classes.known_class_names()

    def claim_selectors(self, gr: GpuResource) -> tuple[str, list[str]]:
        if gr.kind == "mig" and gr.profile:
            return names.MIG_CLASS, [names.profile_selector(gr.profile)]
        return names.GPU_CLASS, []

    def min_memory_selector(self, quantity: str) -> str:
        return names.min_memory_selector(quantity)

    def product_selector(self, model: str) -> str:
        return names.product_selector(model)

    def owns_node(self, labels: Mapping[str, str]) -> bool:
        return names.PRODUCT_LABEL in labels or names.COUNT_LABEL in labels

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(models.gpu_models())

    def owns_node_spec(self, part: str) -> bool:
        m = _GROUP.match(part.strip())
        if not m:
            return False
        try:
            models.get_model(m.group("model"))
        except InputError:
            return False
        return True

    def gpu_mode(self, mode: str | None) -> str | None:
        if mode is None:
            return None
        try:
            modes.parse_gpu_mode(mode)
        except InputError:
            return None
        return mode

    def simulated_cluster(self, spec: str, mode: str | None, *, device_plugin: bool) -> list[dict[str, Any]]:
        return cluster.cluster(spec, mode or "full", device_plugin=device_plugin)

    def device_plugin_gpus(self, labels: Mapping[str, str], alloc: Mapping[str, int]) -> DevicePluginGpus:
        return dpnode.device_plugin_gpus(labels, alloc)

    def used_gpus(self, info: DevicePluginGpus, used: Mapping[str, int]) -> int:
        return dpnode.used_gpus(info, used)

    def smi_objects(self, text: str, node: str) -> tuple[list[dict[str, Any]], list[str]] | None:
        return None  # discover reads nvidia-smi XML and NVML itself (discover_inputs)

    def discover_inputs(self) -> tuple[DiscoverInput, ...]:
        return discover.INPUTS

    def discover_node(self, given: DiscoverInput, value: str | None, req: DiscoverRequest) -> DiscoveredNode:
        return discover.discover_node(given, value, req)

    def drain_selector(self, node: str, device: str) -> dict[str, str] | None:
        # the driver taints unhealthy devices NoSchedule (health.py); its pool is the node's name
        return {"driver": self.driver, "pool": node, "device": device}

    def controller_output(self, obj: Mapping[str, Any], k8s_version: str) -> ControllerOutput | None:
        return computedomain.controller_output(obj, k8s_version)

    def node_component(self, obj: Mapping[str, Any]) -> NodeComponent | None:
        if obj.get("kind") == "DaemonSet":
            return daemonsets.daemonset_component(obj)
        return daemonsets.container_component(obj)

    @property
    def driver_releases(self) -> tuple[str, ...]:
        return tuple(driver_releases.with_schema())

    def resolve_driver_release(self, version: str) -> str:
        return driver_releases.resolve(version)[0]

    def driver_image_release(self, image: str) -> str | None:
        return driver_releases.image_tag(image)

    def driver_preflight(self, tag: str, k8s_minor: int, gates: Sequence[str] = ()) -> list[str]:
        return driver_releases.preflight(tag, k8s_minor, gates)

    def gpu_node_labels(self) -> tuple[tuple[str, str], ...]:
        return names.GPU_NODE_LABELS

    # --- plan and verify (kubedra.vendors.nvidia.readback) ---

    def dra_node_labels(self) -> tuple[tuple[str, str], ...]:
        return names.DRA_NODE_LABELS

    def gpu_fraction(self, resource: str) -> Fraction | None:
        return readback.gpu_fraction(resource)

    def labelled_gpus(
        self, labels: Mapping[str, str], resources: Iterable[str] = ()
    ) -> tuple[int | str | None, str]:
        return readback.labelled_gpus(labels, resources)

    def labelled_product(self, value: str) -> str | None:
        return gfd.base_product(value)  # without GFD's -SHARED and -MIG-<profile> suffixes

    def published_gpu(self, device: Mapping[str, Any]) -> tuple[str, str | None] | None:
        return readback.published_gpu(device)

    def sharing_strategy(self, labels: Mapping[str, str]) -> str | None:
        return labels.get(gfd.SHARING_STRATEGY)

    def operator_role(self, obj: Mapping[str, Any]) -> str | None:
        return operator.role(obj)

    def names_component(self, text: str) -> bool:
        return (
            self.name in text.lower()
        )  # every NVIDIA image and chart says so (nvcr.io/nvidia/..., nvidia-...)

    def operator_notes(self, objs: Sequence[Mapping[str, Any]]) -> list[OperatorNote]:
        return operator.notes(objs)

    def shared_resource(self, resource: str) -> str | None:
        # the device plugin's renameByDefault: time-sliced resources are advertised as <name>.shared
        return resource + names.SHARED_SUFFIX if resources.classify(resource) is not None else None

    def unsupported(self, verb: str) -> str | None:
        return None  # every verb was built on NVIDIA's driver

    # --- validate (seam-migrate)

    def published_releases(
        self, driver_version: str | None
    ) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
        tables = {v: driver_releases.device_kinds(v) for v in driver_releases.resolve(driver_version)}
        return tables, driver_releases.replaced_names()

    # --- migrate (seam-migrate)

    @property
    def claim_classes(self) -> tuple[str, ...]:
        return names.GPU_CLASS, names.MIG_CLASS

    def partition_claim(self, profile: str) -> tuple[str, list[str]] | None:
        if not names.MIG_PROFILE.fullmatch(profile):
            return None
        return names.MIG_CLASS, [names.profile_selector(profile)]

    def sharing_config(
        self, strategy: str, *, partition: bool = False, interval: str = "Default", replicas: int = 0
    ) -> dict[str, Any] | None:
        return names.opaque(
            names.sharing_parameters(strategy, mig=partition, interval=interval, replicas=replicas)
        )

    def sharing_class(
        self, name_base: str, strategy: str, *, interval: str = "Default"
    ) -> dict[str, Any] | None:
        return sharing.sharing_class(name_base, strategy, interval=interval)

    def sharing_gate(self, strategy: str) -> str | None:
        return names.SHARING_GATES.get(strategy)

    def extended_resource_class(
        self, gr: GpuResource, *, interval: str
    ) -> tuple[str, dict[str, Any], str] | None:
        return classes.extended_resource_class(gr, interval=interval)

    def sharing_classes(
        self, obj: Mapping[str, Any], *, extended_resource: bool, interval: str
    ) -> tuple[list[SharedClass], list[str]] | None:
        if not sharing.is_sharing_configmap(obj):
            return None
        return sharing.plan(obj, extended_resource=extended_resource, interval=interval), sharing.config_keys(
            obj
        )

    def sharing_config_refs(
        self, objects: Sequence[Mapping[str, Any]]
    ) -> dict[tuple[str, str], SharingConfigRef]:
        return sharing.config_refs(objects)

    def sharing_defaults(
        self, keys: Sequence[str], ref: SharingConfigRef | None
    ) -> tuple[tuple[str | None, ...], str]:
        return sharing.defaults(keys, ref)

    @property
    def sharing_node_label(self) -> str | None:
        return sharing.NODE_LABEL

    # --- simulate's two views of a cluster (kubedra.vendors.nvidia.views) ---------------------------------------

    default_gpu_mode = "full"

    labeller = "GPU Feature Discovery"
    # cmd/gpu-kubelet-plugin: types gpu and mig are GPUs and MIG devices; vfio (DeviceClass vfio.gpu.nvidia.com,
    # from v25.12.0) publishes the same GPU again for passthrough to a VM
    accounted_types = frozenset({"gpu", "mig"})

    @property
    def drivers(self) -> frozenset[str]:
        return driver_releases.drivers()

    def simulated_groups(
        self, spec: str, mode: str, k8s_version: str, *, device_plugin: bool
    ) -> list[SimulatedGroup]:
        return views.simulated_groups(spec, mode, k8s_version, device_plugin)

    def simulated_node(
        self,
        name: str,
        model: str,
        gpus: int,
        mode: str,
        k8s_version: str,
        *,
        device_plugin: bool,
        labels: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        extra = dict(labels) if labels else None
        if device_plugin:
            return [nodes.device_plugin_node(name, model, gpus, mode, labels=extra, k8s_version=k8s_version)]
        node = nodes.dra_node(name, model, gpus, mode, labels=extra, k8s_version=k8s_version)
        return [node, *dra.dra_objects(name, model, gpus, mode, k8s_version)]

    def mode_problem(self, mode: str) -> str | None:
        try:
            modes.parse_gpu_mode(mode)
        except InputError as e:
            return str(e)
        return None

    def claim_sharing(self, mode: str) -> ClaimSharing | None:
        return views.claim_sharing(mode)

    def device_plugin_mode(self, mode: str) -> tuple[str, str | None]:
        return views.device_plugin_mode(mode)

    def check_mode(self, spec: str, mode: str) -> None:
        views.check_mode(spec, mode)

    def generated_notes(self, spec: str, dra_mode: str, dp_mode: str) -> list[str]:
        return views.generated_notes(spec, dra_mode)

    def simulated_device_classes(self, k8s_version: str) -> list[dict[str, Any]]:
        return dra.device_classes(k8s_version)

    def device_plugin_view(self, node: str, devices: Sequence[PublishedDevice]) -> DerivedView:
        return views.device_plugin_view(node, devices)

    def dra_view(
        self,
        node: str,
        labels: Mapping[str, str],
        alloc: Mapping[str, int],
        mode: str | None,
        k8s_version: str,
    ) -> DerivedView:
        return views.dra_view(node, labels, alloc, mode, k8s_version)

    partition_class = names.MIG_CLASS

    def partition_profiles(self) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        return {
            model.product_name: {
                p.name: (p.compute_slices, p.size, p.max_count, p.memory_bytes) for p in model.mig_profiles
            }
            for model in models.gpu_models().values()
        }

    def resource_label(self, name: str) -> str:
        return views.resource_label(name)

    # --- seam-engine: each pod in both worlds (kubedra.vendors.nvidia.requests) ----------------------------------

    def pod_resource(self, name: str) -> GpuResource | None:
        return requests.pod_resource(name)

    def claim_request(self, gr: GpuResource) -> ClaimRequest:
        return requests.claim_request(gr)

    def device_plugin_request(
        self, device_class: str, selectors: Sequence[str], class_selectors: Sequence[str] | None
    ) -> DevicePluginRequest | None:
        return requests.device_plugin_request(device_class, selectors, class_selectors)

    def names_gpu_resource(self, text: str) -> bool:
        return requests.names_gpu_resource(text)

    scheme_alternatives = names.SCHEME_ALTERNATIVES


VENDOR = Nvidia()
