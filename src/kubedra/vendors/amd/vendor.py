"""AMD behind the vendor seam (:class:`kubedra.vendors.base.Vendor`): the ROCm device plugin and AMD's DRA driver.

Every fact is in ``kubedra/data/amd-gpu.yaml`` with the upstream file and commit it was read at. What kubedra
does with them:

* ``amd.com/gpu`` is whatever the device plugin advertises on the node: a whole GPU, or under the "single"
  naming strategy one partition of a partitioned GPU. DeviceClass ``gpu.amd.com`` selects every device of the
  driver, whole or partition, so a claim on it with no selector asks for exactly that.
* ``amd.com/<compute>_<memory>`` (the "mixed" strategy, e.g. ``amd.com/cpx_nps4``) is a device of that partition
  style; the driver publishes the same spelling as ``partitionProfile``, so the claim selects on it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubedra.k8s import datafiles
from kubedra.sources.files import read_text
from kubedra.vendors.amd import cluster, daemonsets, smi, views
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
from kubedra.vendors.simulated import SimulatedGroup

# What each verb cannot do with AMD GPUs yet, and why (the text of its manual item or error).
_UNSUPPORTED = {
    "extended-resource": (
        "AMD's DRA driver chart installs DeviceClass gpu.amd.com without extendedResourceName, and kubedra has not "
        "modelled one for amd.com names; use --gpu-strategy claim-template for AMD GPUs"
    ),
    "sharing": (
        "AMD's DRA driver has no sharing configuration kubedra models (no opaque config in its API at the "
        "commit read); --sharing applies to NVIDIA GPUs only"
    ),
    "plan": (
        "kubedra's rollout steps (data/plan/common.yaml) install NVIDIA's DRA driver and switch NVIDIA's device "
        "plugin off; none are written for AMD's (ROCm/k8s-gpu-dra-driver, no release of it read, its chart selects "
        "no node label), so no wave moves AMD GPU nodes: move them by hand"
    ),
}


def _repo_tag(image: str) -> tuple[str, str]:
    """An image reference's repository and tag, lower case, without a digest."""
    repo = image.lower().split("@", 1)[0]
    if ":" in repo.rsplit("/", 1)[-1]:
        name, _, tag = repo.rpartition(":")
        return name, tag
    return repo, ""


@functools.cache
def _data() -> dict[str, Any]:
    data = datafiles.load("amd-gpu.yaml")
    assert isinstance(data, dict)
    return data


class Amd:
    name = "amd"
    title = "AMD"
    full_gpu_memory_note = None  # not read in AMD's driver: simulate's note then gives the two numbers alone

    @property
    def resource_domain(self) -> str:
        return str(_data()["devicePlugin"]["resourceDomain"])

    @property
    def gpu_resource(self) -> str:
        return str(_data()["devicePlugin"]["gpuResource"])

    @property
    def driver(self) -> str:
        return str(_data()["draDriver"]["driver"])

    @property
    def gpu_class(self) -> str:
        return str(_data()["draDriver"]["deviceClasses"][0]["name"])

    @property
    def labels(self) -> NodeLabels:
        lab = _data()["devicePlugin"]["labels"]
        return NodeLabels(product=lab.get("product"), count=lab.get("count"), memory=lab.get("memory"))

    def classify(self, name: str) -> GpuResource | None:
        if not name.startswith(self.resource_domain):
            return None
        if name == self.gpu_resource:
            return GpuResource(name, "gpu", vendor=self.name)
        m = re.match(_data()["devicePlugin"]["partitionResource"], name)
        if m:
            return GpuResource(name, "partition", profile=m.group("profile"), vendor=self.name)
        return GpuResource(name, "manual", reason="unknown AMD device-plugin resource name", vendor=self.name)

    def device_classes(self) -> list[dict[str, Any]]:
        return [
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": c["name"]},
                "spec": {"selectors": [{"cel": {"expression": c["selector"]}}]},
            }
            for c in _data()["draDriver"]["deviceClasses"]
        ]

    def known_class_names(self) -> set[str]:
        return {str(c["name"]) for c in _data()["draDriver"]["deviceClasses"]}

    def claim_selectors(self, gr: GpuResource) -> tuple[str, list[str]]:
        if gr.kind == "partition" and gr.profile:
            return self.gpu_class, [f"device.attributes['{self.driver}'].partitionProfile == '{gr.profile}'"]
        return self.gpu_class, []

    def min_memory_selector(self, quantity: str) -> str:
        return f"device.capacity['{self.driver}'].memory.compareTo(quantity('{quantity}')) >= 0"

    def product_selector(self, model: str) -> str:
        return f"device.attributes['{self.driver}'].productName.upperAscii().contains('{model.upper()}')"

    def owns_node(self, labels: Mapping[str, str]) -> bool:
        present = _data()["devicePlugin"]["labels"]["present"]
        return present in labels or (self.labels.product or "") in labels

    @property
    def model_names(self) -> tuple[str, ...]:
        return tuple(m.key for m in cluster.models())

    def owns_node_spec(self, part: str) -> bool:
        return cluster.owns_spec(part)

    def gpu_mode(self, mode: str | None) -> str | None:
        return mode if cluster.is_profile(mode) else None

    def simulated_cluster(self, spec: str, mode: str | None, *, device_plugin: bool) -> list[dict[str, Any]]:
        return cluster.cluster(spec, self.gpu_mode(mode) or "spx_nps1", device_plugin=device_plugin)

    def device_plugin_gpus(self, labels: Mapping[str, str], alloc: Mapping[str, int]) -> DevicePluginGpus:
        # every advertised device is a GPU (a partition too: the device plugin does not say which GPU it is part
        # of), each with the memory the node labeller reports (amd.com/gpu.vram, GiB: "192G")
        raw = labels.get(self.labels.memory or "", "")
        gib = int(raw[:-1]) if raw.endswith("G") and raw[:-1].isdigit() else 0
        info = DevicePluginGpus(physical=sum(alloc.values()), gpu_memory=gib * 2**30, vendor=self.name)
        info.unit_memory = {k: info.gpu_memory for k in alloc}
        return info

    def used_gpus(self, info: DevicePluginGpus, used: Mapping[str, int]) -> int:
        n = sum(v for v in used.values() if v > 0)
        return min(n, info.physical) if info.physical else n

    def smi_objects(self, text: str, node: str) -> tuple[list[dict[str, Any]], list[str]] | None:
        return smi.node_objects(text, node)

    def discover_inputs(self) -> tuple[DiscoverInput, ...]:
        return (smi.INPUT,)

    def discover_node(self, given: DiscoverInput, value: str | None, req: DiscoverRequest) -> DiscoveredNode:
        smi.refuse_options(req)  # before the file is read
        got = self.smi_objects(read_text(value or "-"), req.node)
        assert got is not None  # AMD's SMI JSON gives objects or raises InputError
        return smi.discovered(*got, req)

    def drain_selector(self, node: str, device: str) -> dict[str, str] | None:
        return None  # AMD's DRA driver publishes no health taints kubedra has read: nothing to drain after

    def controller_output(self, obj: Mapping[str, Any], k8s_version: str) -> ControllerOutput | None:
        return None  # no AMD custom resource whose controller creates objects is modelled

    def node_component(self, obj: Mapping[str, Any]) -> NodeComponent | None:
        if obj.get("kind") == "DaemonSet":
            return daemonsets.daemonset_component(obj, _data()["devicePlugin"])
        return daemonsets.container_component(obj, _data()["devicePlugin"])

    @property
    def driver_releases(self) -> tuple[str, ...]:
        return tuple(_data()["draDriver"]["releases"])

    def _no_release(self, what: str) -> str:
        src = _data()["draDriver"]["source"]
        return (
            f"AMD DRA driver {what}: kubedra has read no release of it (only {src['repo']} at commit "
            f"{src['commit'][:8]})"
        )

    def resolve_driver_release(self, version: str) -> str:
        raise ValueError(self._no_release(repr(version)))

    def driver_image_release(self, image: str) -> str | None:
        name, tag = _repo_tag(image)
        want = str(_data()["draDriver"]["image"])
        return tag if name == want or name.endswith("/" + want) else None

    def driver_preflight(self, tag: str, k8s_minor: int, gates: Sequence[str] = ()) -> list[str]:
        return [self._no_release(tag or "(untagged)") + ": check its Kubernetes and API support by hand"]

    def gpu_node_labels(self) -> tuple[tuple[str, str], ...]:
        return ((str(_data()["devicePlugin"]["labels"]["present"]), "true"),)

    # --- plan and verify: the node labeller's labels against the DRA driver's devices (data/amd-gpu.yaml)

    def dra_node_labels(self) -> tuple[tuple[str, str], ...]:
        return tuple(
            (str(k), str(v)) for k, v in _data()["draDriver"]["nodeLabels"]
        )  # none: the chart selects none

    def gpu_fraction(self, resource: str) -> Fraction | None:
        # a partition counts as one device, as device_plugin_gpus counts the node's capacity (the device plugin
        # does not say which GPU it is part of): demand and capacity in the same unit
        gr = self.classify(resource)
        return Fraction(1) if gr is not None and gr.kind in ("gpu", "partition") else None

    def labelled_gpus(
        self, labels: Mapping[str, str], resources: Iterable[str] = ()
    ) -> tuple[int | str | None, str]:
        src = _data()["devicePlugin"]["source"]
        return (
            f"AMD's node labeller writes no GPU count label ({src['repo']} at {src['commit'][:8]})",
            "",
        )

    def labelled_product(self, value: str) -> str | None:
        # the labeller's Instinct_MI300X is the driver's AMD_Instinct_MI300X: related through the catalogue only
        return next((m.product for m in cluster.models() if m.label == value), None)

    def published_gpu(self, device: Mapping[str, Any]) -> tuple[str, str | None] | None:
        attrs = device.get("attributes")
        attrs = attrs if isinstance(attrs, Mapping) else {}  # an edited snapshot's may be anything

        def attr(name: str) -> Any:
            a = attrs.get(name) or attrs.get(f"{self.driver}/{name}")
            return next(iter(a.values())) if isinstance(a, dict) and a else None

        driver = _data()["draDriver"]
        kind = next((k for k, t in driver["deviceTypes"].items() if t == attr("type")), None)
        if kind is None:
            return None
        ident = attr(driver["gpuIdentity"][kind])
        product = attr("productName")
        return str(ident or device.get("name")), str(product) if product else None

    def sharing_strategy(self, labels: Mapping[str, str]) -> str | None:
        return None  # the ROCm device plugin does not share GPUs (see "sharing" in _UNSUPPORTED)

    def operator_role(self, obj: Mapping[str, Any]) -> str | None:
        return (
            None  # AMD's GPU operator (ROCm/gpu-operator, DeviceConfig) is not modelled, as in operator_notes
        )

    def names_component(self, text: str) -> bool:
        return re.search(_data()["devicePlugin"]["componentNames"], text, re.I) is not None

    def operator_notes(self, objs: Sequence[Mapping[str, Any]]) -> list[OperatorNote]:
        return []  # AMD's GPU operator (ROCm/gpu-operator, DeviceConfig) is not modelled: its objects pass unread

    def shared_resource(self, resource: str) -> str | None:
        return None  # the ROCm device plugin does not share GPUs (see "sharing" in _UNSUPPORTED)

    def unsupported(self, verb: str) -> str | None:
        return _UNSUPPORTED.get(verb)

    # --- validate (seam-migrate)

    def published_releases(
        self, driver_version: str | None
    ) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
        # data/amd-gpu.yaml lists the attribute names the driver publishes, not their types (the checks need
        # both), and --driver-version names NVIDIA's releases: AMD's selectors are not checked against it
        return {}, {}

    # --- migrate (seam-migrate): partitions are claimed by partitionProfile; no sharing (_UNSUPPORTED["sharing"])

    @property
    def claim_classes(self) -> tuple[str, ...]:
        return (self.gpu_class,)  # partitions too: the chart's one class selects every device

    def partition_claim(self, profile: str) -> tuple[str, list[str]] | None:
        gr = self.classify(self.resource_domain + profile)
        if gr is None or gr.kind != "partition":
            return None
        return self.claim_selectors(gr)

    def sharing_config(
        self, strategy: str, *, partition: bool = False, interval: str = "Default", replicas: int = 0
    ) -> dict[str, Any] | None:
        return None  # the DRA driver's API has no opaque sharing config at the commit read

    def sharing_class(
        self, name_base: str, strategy: str, *, interval: str = "Default"
    ) -> dict[str, Any] | None:
        return None

    def sharing_gate(self, strategy: str) -> str | None:
        return None

    def extended_resource_class(
        self, gr: GpuResource, *, interval: str
    ) -> tuple[str, dict[str, Any], str] | None:
        return None  # _UNSUPPORTED["extended-resource"]

    def sharing_classes(
        self, obj: Mapping[str, Any], *, extended_resource: bool, interval: str
    ) -> tuple[list[SharedClass], list[str]] | None:
        return None  # no sharing config of the ROCm device plugin is modelled (data/amd-gpu.yaml: its resource names)

    def sharing_config_refs(
        self, objects: Sequence[Mapping[str, Any]]
    ) -> dict[tuple[str, str], SharingConfigRef]:
        return {}

    def sharing_defaults(
        self, keys: Sequence[str], ref: SharingConfigRef | None
    ) -> tuple[tuple[str | None, ...], str]:
        return (None,), "the ROCm device plugin has no sharing configs"

    @property
    def sharing_node_label(self) -> str | None:
        return None

    # --- simulate's two views of a cluster (kubedra.vendors.amd.views) ------------------------------------------

    default_gpu_mode = "spx_nps1"  # whole GPUs (the driver's partitionProfile of an unpartitioned GPU)

    labeller = "ROCm node labeller"

    @property
    def accounted_types(self) -> frozenset[str]:
        return frozenset(
            str(t) for t in _data()["draDriver"]["deviceTypes"].values()
        )  # amdgpu, amdgpu-partition

    @property
    def drivers(self) -> frozenset[str]:
        return frozenset({self.driver})

    def simulated_groups(
        self, spec: str, mode: str, k8s_version: str, *, device_plugin: bool
    ) -> list[SimulatedGroup]:
        return cluster.groups(spec, self.gpu_mode(mode) or self.default_gpu_mode, device_plugin=device_plugin)

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
        objects = cluster.cluster(f"1x{gpus}x{model}", mode, device_plugin=device_plugin, node=name)
        out = [o for o in objects if o["kind"] != "DeviceClass"]
        out[0]["metadata"]["labels"].update(labels or {})
        return out

    def mode_problem(self, mode: str) -> str | None:
        if cluster.is_profile(mode):
            return None
        return f"unknown AMD partition mode {mode!r} (expected <compute>_<memory>, e.g. spx_nps1 or cpx_nps4)"

    def claim_sharing(self, mode: str) -> ClaimSharing | None:
        return None  # no sharing configuration in AMD's DRA driver API (see unsupported("sharing"))

    def device_plugin_mode(self, mode: str) -> tuple[str, str | None]:
        return (
            mode,
            None,
        )  # the device plugin advertises the partitions the GPUs run, as the driver publishes them

    def check_mode(self, spec: str, mode: str) -> None:
        views.check_mode(spec, mode)

    def generated_notes(self, spec: str, dra_mode: str, dp_mode: str) -> list[str]:
        return views.generated_notes(dra_mode, dp_mode)

    def simulated_device_classes(self, k8s_version: str) -> list[dict[str, Any]]:
        return self.device_classes()  # the chart's one class, the same at every release kubedra supports

    def device_plugin_view(self, node: str, devices: Sequence[PublishedDevice]) -> DerivedView:
        return views.device_plugin_view(
            self.gpu_resource, self.labels.memory or "", _data()["draDriver"]["deviceTypes"], devices
        )

    def dra_view(
        self,
        node: str,
        labels: Mapping[str, str],
        alloc: Mapping[str, int],
        mode: str | None,
        k8s_version: str,
    ) -> DerivedView:
        names = (self.labels.product or "", self.labels.memory or "", self.gpu_resource)
        return views.dra_view(node, labels, alloc, self.gpu_mode(mode), names)

    @property
    def partition_class(self) -> str | None:
        return self.gpu_class  # one class for whole GPUs and partitions; a claim selects on partitionProfile

    def partition_profiles(self) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        return {}  # a partition mode is set per GPU (amd-smi), not chosen per claim

    def resource_label(self, name: str) -> str:
        return name  # amd.com/gpu is a whole GPU or a partition, which the name does not say

    # --- seam-engine: each pod in both worlds ---------------------------------------------------------------

    def pod_resource(self, name: str) -> GpuResource | None:
        return self.classify(name)  # the ROCm device plugin advertises no other spelling

    def claim_request(self, gr: GpuResource) -> ClaimRequest:
        # a partition's memory is not fixed by its name (cpx_nps4 is a style, not a size): a declared need selects
        # on the memory capacity as for a whole GPU; no partition profiles to offer (partition_profiles is empty);
        # no opaque config: the driver's API has none (unsupported("sharing"))
        cls, selectors = self.claim_selectors(gr)
        return ClaimRequest(cls, tuple(selectors), shareable=gr.kind == "gpu")

    def device_plugin_request(
        self, device_class: str, selectors: Sequence[str], class_selectors: Sequence[str] | None
    ) -> DevicePluginRequest | None:
        # amd.com/gpu is whatever one device of the class is; a selector (a partitionProfile) the plugin cannot say
        if device_class == self.gpu_class and not selectors:
            return DevicePluginRequest(self.gpu_resource)
        return None

    def names_gpu_resource(self, text: str) -> bool:
        return _gpu_text().search(text) is not None

    scheme_alternatives = None  # no sharing in the driver's API (_UNSUPPORTED["sharing"])


@functools.cache
def _gpu_text() -> re.Pattern[str]:
    """amd.com/gpu or a mixed-strategy partition resource (amd.com/cpx_nps4) anywhere in a text."""
    partition = str(_data()["devicePlugin"]["partitionResource"]).removeprefix("^").removesuffix("$")
    return re.compile(re.escape(str(_data()["devicePlugin"]["gpuResource"])) + "|" + partition)


VENDOR = Amd()
