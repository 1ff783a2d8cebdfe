"""The vendor seam: what the engine asks of a GPU vendor, and the one classification of a device-plugin resource.

Designed from two vendors (NVIDIA: :mod:`kubedra.vendors.nvidia`, AMD: :mod:`kubedra.vendors.amd`): only what the
verbs use. A vendor names its device-plugin resources and says what each is (a whole GPU, a partition, a shared
GPU, or a manual item), its DRA driver and the DeviceClass a whole GPU is claimed from, the node labels its
feature discovery writes, the CEL it accepts for memory and product, its simulated nodes (``--nodes`` groups,
GPU modes, the objects), a device-plugin node's GPU accounting, what its node DaemonSets run, the DRA objects
from its SMI JSON (the inputs ``kubedra discover`` reads), and, per verb, what it cannot do yet
(:meth:`Vendor.unsupported`), so a verb says "cannot, because" instead of ignoring the vendor's GPUs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from kubedra.vendors.claimshape import ClaimRequest, DevicePluginRequest
from kubedra.vendors.discovery import DiscoveredNode, DiscoverInput, DiscoverRequest
from kubedra.vendors.simulated import SimulatedGroup


@dataclass(frozen=True)
class GpuResource:
    """What a device-plugin resource name means for the migration."""

    name: str
    kind: str  # gpu | shared | mig | partition | manual
    profile: str | None = None  # the MIG profile (NVIDIA) or partition profile (AMD: cpx_nps4)
    shared: bool = False
    reason: str = ""
    vendor: str = field(kw_only=True)  # the Vendor.name that owns the name


@dataclass(frozen=True)
class NodeLabels:
    """The node labels a vendor's feature discovery writes (None: it writes none for that)."""

    product: str | None
    count: str | None
    memory: str | None


@dataclass
class DevicePluginGpus:
    """A device-plugin Node's GPUs as its resources and labels tell them (simulate's accounting)."""

    physical: int = 0
    gpu_memory: int = 0  # one whole GPU, bytes (0: unknown)
    replicas: int = 1  # time-slicing / MPS replicas per GPU
    unit_memory: dict[str, int] = field(default_factory=dict)  # resource -> bytes one unit of it holds
    vendor: str = ""  # the Vendor.name whose resources these are ("": none)


@dataclass(frozen=True)
class NodeComponent:
    """One of a vendor's node components, as its DaemonSet or container runs it."""

    key: str  # device-plugin | gpu-feature-discovery | mps-control-daemon | dcgm-exporter | ...
    title: str  # as a person writes it: "device plugin", "GPU feature discovery"


@dataclass(frozen=True)
class ControllerOutput:
    """What a vendor's controller and kubelet plugin make of one input object (a custom resource such as NVIDIA's
    ComputeDomain): the objects the controller creates, the DeviceClasses its chart installs for them, and the
    ResourceSlice its plugin publishes on each of the vendor's GPU nodes (``driver``'s pool per node)."""

    objects: list[dict[str, Any]]
    classes: list[dict[str, Any]] = field(default_factory=list)
    node_slice: Callable[[str], dict[str, Any]] | None = None
    driver: str = ""
    origin: str = ""  # says who creates the objects, for notes


# --- migrate (seam-migrate): the device plugin's sharing config as DRA DeviceClasses ---


@dataclass
class SharedClass:
    """One shared GPU resource of a device-plugin sharing config, as the DeviceClass whose config shares it."""

    resource: str  # the advertised name (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-...)
    data_key: str
    device_class: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    replicas: int = 1  # pods the device plugin let share one GPU (sharing.*.resources[].replicas)
    strategy: str = "TimeSlicing"  # or MPS
    who: str = (
        "the device plugin"  # what shared the GPUs: the device plugin's config, or a platform's node pool
    )

    @property
    def name(self) -> str:
        return str(self.device_class["metadata"]["name"])


@dataclass(frozen=True)
class SharingConfigRef:
    """What a device-plugin DaemonSet (or operator policy) in the input says about the ConfigMap of its configs:
    the default config, the fallbacks when there is none, the nodes it runs on and the node label that picks a
    config per node."""

    default: str | None
    fallbacks: tuple[str, ...]
    node_selector: dict[str, str]
    label: str


@dataclass(frozen=True)
class PublishedDevice:
    """One device of a DRA driver's ResourceSlice on a node, as simulate reads it to derive the device-plugin view."""

    type: str | None  # the driver's ``type`` attribute
    memory: int  # bytes of its ``memory`` capacity (0: none)
    profile: str | None = None  # its ``profile`` attribute (NVIDIA: the MIG profile)
    counter_set: str | None = None  # the counter set it consumes (a partitionable device), else None
    parent: str | None = None  # its ``parentUUID`` attribute


@dataclass
class DerivedView:
    """One node's other view, derived by its vendor (simulate): the device plugin's resources and labels for a
    node known from its DRA slices, or the DRA driver's objects for a node known from its device-plugin labels.
    ``reason`` set: it cannot be derived, and why (the node is then left unmodelled)."""

    resources: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    objects: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass(frozen=True)
class ClaimSharing:
    """How one ResourceClaim is shared by several pods (``simulate --sharing``): the opaque config it carries."""

    text: str  # the mode as given: time-slicing:4
    replicas: int  # pods per claim
    driver: str  # the opaque config's driver
    parameters: dict[str, Any]  # the opaque config's parameters

    def __str__(self) -> str:
        return self.text


# --- audit: what a vendor's GPU operator custom resources deploy ---


@dataclass(frozen=True)
class OperatorNote:
    """What one of a vendor's GPU operator custom resources deploys, as audit's gpu.operator says it."""

    index: int  # which of the objects given to Vendor.operator_notes
    message: str
    path: tuple[str, ...]  # the field that says
    severity: str | None = None  # None: the rule's


class Vendor(Protocol):
    """One GPU vendor's device plugin and DRA driver, as the verbs need them."""

    @property
    def name(self) -> str:
        """kubedra's key: ``nvidia``, ``amd``."""
        ...

    @property
    def title(self) -> str:
        """The name as people write it: NVIDIA, AMD."""
        ...

    @property
    def resource_domain(self) -> str:
        """The device plugin's resource prefix, with its slash: ``nvidia.com/``."""
        ...

    @property
    def gpu_resource(self) -> str:
        """A whole GPU as the device plugin names it: ``nvidia.com/gpu``."""
        ...

    @property
    def driver(self) -> str:
        """The DRA driver's name in ResourceSlices and CEL: ``gpu.nvidia.com``."""
        ...

    @property
    def gpu_class(self) -> str:
        """The DeviceClass a whole-GPU claim uses."""
        ...

    @property
    def labels(self) -> NodeLabels:
        """The node labels its feature discovery writes."""
        ...

    @property
    def full_gpu_memory_note(self) -> str | None:
        """Why the DRA driver's full-GPU ``memory`` capacity can differ from the GPU's total that the device
        plugin's node labels give (a clause of simulate's note); ``None``: no reason known."""
        ...

    def classify(self, name: str) -> GpuResource | None:
        """What a resource name means; ``None`` when the vendor does not own it."""
        ...

    def device_classes(self) -> list[dict[str, Any]]:
        """The DeviceClasses the vendor's DRA driver chart installs (resource.k8s.io/v1 shape)."""
        ...

    def known_class_names(self) -> set[str]:
        """Every DeviceClass name the driver installs (for validate's reference checks)."""
        ...

    def claim_selectors(self, gr: GpuResource) -> tuple[str, list[str]]:
        """The DeviceClass and CEL selectors of a claim for ``gr`` (a ``gpu`` or ``partition`` resource)."""
        ...

    def min_memory_selector(self, quantity: str) -> str:
        """CEL: a device with at least ``quantity`` of memory."""
        ...

    def product_selector(self, model: str) -> str:
        """CEL: a device whose product name contains ``model``."""
        ...

    def owns_node(self, labels: Mapping[str, str]) -> bool:
        """Whether a node's labels say it has this vendor's GPUs."""
        ...

    @property
    def model_names(self) -> tuple[str, ...]:
        """The GPU models ``simulate --nodes`` can generate for this vendor (catalogue keys)."""
        ...

    def owns_node_spec(self, part: str) -> bool:
        """Whether one ``<nodes>x<gpus>x<model>`` group of ``simulate --nodes`` names this vendor's GPU model."""
        ...

    def gpu_mode(self, mode: str | None) -> str | None:
        """``mode`` when it is one of this vendor's GPU modes (``full``, ``cpx_nps4``), else ``None``."""
        ...

    def simulated_cluster(self, spec: str, mode: str | None, *, device_plugin: bool) -> list[dict[str, Any]]:
        """The objects of a simulated cluster of this vendor's GPUs (``spec``: its node groups only): the Nodes as
        the device plugin leaves them, or the DRA driver's DeviceClasses, the Nodes and their ResourceSlices."""
        ...

    def device_plugin_gpus(self, labels: Mapping[str, str], alloc: Mapping[str, int]) -> DevicePluginGpus:
        """A device-plugin Node's GPUs from its labels and allocatable GPU resources (name -> count)."""
        ...

    def used_gpus(self, info: DevicePluginGpus, used: Mapping[str, int]) -> int:
        """How many of the node's GPUs the used units (resource -> count) occupy."""
        ...

    def smi_objects(self, text: str, node: str) -> tuple[list[dict[str, Any]], list[str]] | None:
        """The DRA driver's DeviceClasses and ResourceSlices for ``node`` from the vendor's SMI JSON output, with
        notes on what the output does not say; ``None``: discover reads this vendor's tool itself (NVIDIA:
        ``nvidia-smi -q -x`` or NVML, :mod:`kubedra.vendors.nvidia.inventory`)."""
        ...

    def discover_inputs(self) -> tuple[DiscoverInput, ...]:
        """The options through which ``kubedra discover`` reads this vendor's GPUs (``--amd-smi-json FILE``)."""
        ...

    def discover_node(self, given: DiscoverInput, value: str | None, req: DiscoverRequest) -> DiscoveredNode:
        """The driver's objects for ``req.node`` from ``given`` (``value``: its file, ``-`` stdin, None: a flag);
        InputError for output it cannot read, UsageError naming an option of ``req`` it cannot honour and why."""
        ...

    def drain_selector(self, node: str, device: str) -> dict[str, str] | None:
        """The ``deviceSelector`` of a DeviceTaintRule draining ``device`` of ``node``; ``None``: the driver taints
        no unhealthy device, so ``kubedra discover --drain-rule`` is not for it."""
        ...

    def controller_output(self, obj: Mapping[str, Any], k8s_version: str) -> ControllerOutput | None:
        """What the vendor's controllers make of input object ``obj`` at Kubernetes ``k8s_version``; ``None``: not
        one of the vendor's custom resources."""
        ...

    def node_component(self, obj: Mapping[str, Any]) -> NodeComponent | None:
        """What one of the vendor's node components ``obj`` runs: a DaemonSet (by what its containers run, then by
        anything else of the vendor's that says, such as the GPU Operator's per-component node selector), or one
        container (its command, image and name); the device plugin is key ``device-plugin`` for every vendor.
        ``None``: not one of the vendor's node components (another vendor's image of the same name included)."""
        ...

    # --- One block, added together: the DRA driver's releases (audit's preflight and selector checks, verify's
    # preflight, the --driver-version option), which labels say a node has the vendor's GPUs, what names the
    # vendor's cluster components (snapshot keeps them), and what its GPU operator's custom resources deploy.
    # AMD answers from data/amd-gpu.yaml: no driver release read yet, its operator not modelled. ---

    @property
    def driver_releases(self) -> tuple[str, ...]:
        """The DRA driver releases whose published devices kubedra has read, oldest first; ``()``: none."""
        ...

    def resolve_driver_release(self, version: str) -> str:
        """``version`` (``25.8.0``, ``v25.8.0``) as one of :attr:`driver_releases`; ValueError saying which there
        are otherwise."""
        ...

    def driver_image_release(self, image: str) -> str | None:
        """The tag of the DRA driver's image that ``image`` is (``v25.8.0-ubi9``); ``None``: not its image."""
        ...

    def driver_preflight(self, tag: str, k8s_minor: int, gates: Sequence[str] = ()) -> list[str]:
        """Why driver image tag ``tag`` cannot run on Kubernetes 1.<k8s_minor> with the driver's feature ``gates`` on
        (a release kubedra does not know is itself a line: it cannot say); ``[]``: nothing against it."""
        ...

    def gpu_node_labels(self) -> tuple[tuple[str, str], ...]:
        """(label, value) pairs that mark a node with the vendor's GPUs before or besides :attr:`labels`
        (the operator's or node feature discovery's)."""
        ...

    # --- plan and verify (seam-plan-verify): a GPU node's labels and its published devices, compared; the demand
    # of a device-plugin resource; what the vendor's operator custom resources deploy, for plan's steps. ---

    def dra_node_labels(self) -> tuple[tuple[str, str], ...]:
        """(label, value) pairs that put a node on the DRA driver (the node selector its kubelet plugin is
        documented with); ``()``: the driver's chart selects no node label."""
        ...

    def gpu_fraction(self, resource: str) -> Fraction | None:
        """Whole-GPU equivalents one unit of device-plugin resource ``resource`` holds, exactly (plan's demand;
        NVIDIA: a MIG profile ``<g>g`` is g/7); ``None``: not one of the vendor's GPU resources."""
        ...

    def labelled_gpus(
        self, labels: Mapping[str, str], resources: Iterable[str] = ()
    ) -> tuple[int | str | None, str]:
        """A node's physical GPUs as its feature discovery's labels tell them (``resources``: its allocatable
        resource names), and what the count is read from, as a message names it: the count is None without a
        count label, a reason (str) when the labels cannot tell."""
        ...

    def labelled_product(self, value: str) -> str | None:
        """The product label value ``value`` (:attr:`labels`.product) as :meth:`published_gpu` spells the
        product; ``None``: the vendor cannot relate the two."""
        ...

    def published_gpu(self, device: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """The physical GPU one device of the DRA driver's ResourceSlice is, or is part of (an identity), and its
        product as :meth:`labelled_product` spells it (None: not published); ``None``: not a GPU or a part of one."""
        ...

    def sharing_strategy(self, labels: Mapping[str, str]) -> str | None:
        """The GPU sharing a node's feature discovery labels say the device plugin runs (NVIDIA: GFD's
        ``nvidia.com/gpu.sharing-strategy``: ``time-slicing``, ``mps``); ``None``: none said."""
        ...

    def operator_role(self, obj: Mapping[str, Any]) -> str | None:
        """What custom resource ``obj`` of the vendor's GPU operator deploys, for plan's steps: ``device-plugin``
        (NVIDIA's ClusterPolicy: the device plugin, and the DRA driver only when asked), ``dra-driver`` (its
        GPUCluster: the DRA driver and no device plugin); ``None``: none of its operator's resources. Its kind and
        apiVersion decide (plan asks once per pair)."""
        ...

    def names_component(self, text: str) -> bool:
        """Whether a name or image reference is one of the vendor's cluster components (operator, plugins,
        exporters): what a snapshot keeps as GPU infrastructure."""
        ...

    def operator_notes(self, objs: Sequence[Mapping[str, Any]]) -> list[OperatorNote]:
        """What the vendor's GPU operator custom resources among ``objs`` deploy (device plugin, DRA driver) and
        what they cannot do together; ``[]``: none of its custom resources."""
        ...

    def shared_resource(self, resource: str) -> str | None:
        """The name the device plugin advertises time-sliced ``resource`` under when its config renames shared
        resources; ``None``: the vendor's plugin does not share."""
        ...

    # --- end of the block: DRA driver releases, GPU-node labels, component names, operators ---

    def unsupported(self, verb: str) -> str | None:
        """Why ``verb`` cannot handle this vendor's GPUs yet (the text of its manual item); ``None``: it can."""
        ...

    # --- validate (seam-migrate): what the DRA driver publishes, per release, for selector checks

    def published_releases(
        self, driver_version: str | None
    ) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
        """What the DRA driver publishes at release ``driver_version`` (None: every release kubedra has read):
        release -> ``{kind: {driver, attributes: {name: [types]}, capacities: [names]}}``, and the names a
        release no longer publishes -> what to use instead; ``({}, {})``: no release read (selectors on the
        driver's domain are not checked). ValueError: ``driver_version`` is no release kubedra has read."""
        ...

    # --- migrate (seam-migrate): claims for partitions and shared GPUs, the device plugin's sharing config.
    # A vendor whose driver has no sharing answers None to the sharing methods and says why in
    # unsupported("sharing"); migrate asks them only for vendors that model sharing.

    @property
    def claim_classes(self) -> tuple[str, ...]:
        """The DeviceClasses migrate's claims use: a whole GPU's, then a partition's where it differs
        (``gpu.nvidia.com``, ``mig.nvidia.com``)."""
        ...

    def partition_claim(self, profile: str) -> tuple[str, list[str]] | None:
        """The DeviceClass and CEL selectors of a claim for one partition of ``profile`` (NVIDIA: a MIG profile,
        ``1g.10gb``; AMD: a partition profile, ``cpx_nps4``); ``None``: not one of the vendor's profiles."""
        ...

    def sharing_config(
        self, strategy: str, *, partition: bool = False, interval: str = "Default", replicas: int = 0
    ) -> dict[str, Any] | None:
        """The opaque config entry (``{driver, parameters}``) that shares a claim's GPU (``partition``: a partition)
        by ``strategy`` (TimeSlicing | MPS; ``replicas`` clients); ``None``: the driver has no sharing config."""
        ...

    def sharing_class(
        self, name_base: str, strategy: str, *, interval: str = "Default"
    ) -> dict[str, Any] | None:
        """DeviceClass ``<name_base>.<driver>`` (resource.k8s.io/v1) of whole GPUs shared by ``strategy`` (a
        platform's time-sharing node pool); ``None``: the driver has no sharing config."""
        ...

    def sharing_gate(self, strategy: str) -> str | None:
        """The DRA driver's feature gate that ``strategy``'s sharing config needs; ``None``: none known."""
        ...

    def extended_resource_class(
        self, gr: GpuResource, *, interval: str
    ) -> tuple[str, dict[str, Any], str] | None:
        """For ``--gpu-strategy extended-resource``: the DeviceClass name, spec (with ``extendedResourceName``) and
        change note that map the device-plugin resource ``gr`` to DRA devices; ``None``: no such class."""
        ...

    def sharing_classes(
        self, obj: Mapping[str, Any], *, extended_resource: bool, interval: str
    ) -> tuple[list[SharedClass], list[str]] | None:
        """The DeviceClasses equivalent to the sharing in the vendor's device-plugin config ConfigMap ``obj``, and
        all its config keys (with or without sharing); ``None``: ``obj`` is no sharing config of this vendor."""
        ...

    def sharing_config_refs(
        self, objects: Sequence[Mapping[str, Any]]
    ) -> dict[tuple[str, str], SharingConfigRef]:
        """(namespace, ConfigMap name) -> what the vendor's device-plugin DaemonSets or operator policies among
        ``objects`` say about their config ConfigMap (namespace ``*``: matched by name in any namespace)."""
        ...

    def sharing_defaults(
        self, keys: Sequence[str], ref: SharingConfigRef | None
    ) -> tuple[tuple[str | None, ...], str]:
        """The configs (of ``keys``, a sharing ConfigMap's) a node without the config label may use (None: no
        config), and why; ``ref``: what the input says about the ConfigMap (None: nothing)."""
        ...

    @property
    def sharing_node_label(self) -> str | None:
        """The node label that picks a device-plugin config per node by default; ``None``: no per-node configs."""

    # --- simulate's two views of a cluster (seam-engine: simulate/, scheduler/, testing/) -------------------------

    @property
    def default_gpu_mode(self) -> str:
        """The GPU mode of a generated node when ``--gpu-mode`` names none of this vendor's: ``full``, ``spx_nps1``."""
        ...

    @property
    def drivers(self) -> frozenset[str]:
        """Every DRA driver name the vendor's devices are published under (NVIDIA: ``gpu.nvidia.com``,
        ``compute-domain.nvidia.com``): whose selectors and runtime errors it explains."""
        ...

    @property
    def accounted_types(self) -> frozenset[str]:
        """The DRA driver's device types simulate counts as GPUs or parts of one (NVIDIA: ``gpu``, ``mig``; its
        ``vfio`` re-announces a GPU for passthrough)."""
        ...

    @property
    def labeller(self) -> str:
        """What writes the node labels a device-plugin node's GPUs are read from: ``GPU Feature Discovery``."""
        ...

    def simulated_groups(
        self, spec: str, mode: str, k8s_version: str, *, device_plugin: bool
    ) -> list[SimulatedGroup]:
        """``simulated_cluster``'s nodes group by group (its DeviceClasses: ``simulated_device_classes``), each
        slice of a node on its pool named after the node."""
        ...

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
        """One named simulated node of ``gpus`` GPUs of ``model`` in ``mode`` (the test control plane's and the
        generated snapshots' nodes): the Node as the device plugin leaves it, or the Node and the ResourceSlices
        the DRA driver publishes on it; ``labels`` are added to the Node's."""
        ...

    def mode_problem(self, mode: str) -> str | None:
        """Why ``mode`` is not one of this vendor's GPU modes (its parser's words); ``None``: it is."""
        ...

    def claim_sharing(self, mode: str) -> ClaimSharing | None:
        """The config of a claim that pods share in sharing mode ``mode`` (NVIDIA: ``time-slicing:<n>``,
        ``mps:<n>``); ``None``: not a sharing mode of this vendor's (AMD's driver has no sharing config)."""
        ...

    def device_plugin_mode(self, mode: str) -> tuple[str, str | None]:
        """The GPU mode the device-plugin view of a generated cluster runs when its DRA view runs ``mode`` (one of
        this vendor's modes), and a note when the two differ (NVIDIA: ``mig-dynamic`` has no device-plugin
        equivalent; AMD: the same partition mode)."""
        ...

    def check_mode(self, spec: str, mode: str) -> None:
        """InputError when a GPU model of ``spec`` (this vendor's ``--nodes`` groups) cannot run ``mode``."""
        ...

    def generated_notes(self, spec: str, dra_mode: str, dp_mode: str) -> list[str]:
        """What a simulation of ``spec`` in these modes counts unlike the hardware (simulate's notes)."""
        ...

    def simulated_device_classes(self, k8s_version: str) -> list[dict[str, Any]]:
        """The DeviceClasses the DRA driver's chart installs, as a cluster at ``k8s_version`` serves them."""
        ...

    def device_plugin_view(self, node: str, devices: Sequence[PublishedDevice]) -> DerivedView:
        """What the device plugin (and its feature discovery) would put on node ``node`` whose GPUs the DRA driver
        publishes as ``devices``: extended resources, labels, notes."""
        ...

    def dra_view(
        self,
        node: str,
        labels: Mapping[str, str],
        alloc: Mapping[str, int],
        mode: str | None,
        k8s_version: str,
    ) -> DerivedView:
        """The DRA driver's ResourceSlices for device-plugin node ``node`` from its labels and allocatable GPU
        resources (``mode``: this vendor's ``--gpu-mode``, else read from the node), or the reason it cannot."""
        ...

    @property
    def partition_class(self) -> str | None:
        """The DeviceClass a claim for one partition profile uses (NVIDIA: ``mig.nvidia.com``; AMD selects its
        partitions from ``gpu_class``)."""
        ...

    def partition_profiles(self) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        """Per product name (the driver's ``productName``), the partitions a claim can ask for by profile:
        (compute slices, memory slices, most instances per GPU, memory bytes) for ``simulate --bound``; empty where
        partitions are a mode the whole GPU runs, not chosen claim by claim (AMD)."""
        ...

    def resource_label(self, name: str) -> str:
        """What a pod gets from one unit of device-plugin resource ``name`` (simulate's table): ``whole GPU``,
        ``mig-1g.10gb``."""
        ...

    # --- seam-engine: each pod in both worlds (scheduler.convert), without the model's types --------------------

    def pod_resource(self, name: str) -> GpuResource | None:
        """What resource ``name`` on a pod means to the scheduler: :meth:`classify`, plus the spellings the device
        plugin itself advertises that migrate leaves manual (NVIDIA: ``nvidia.com/mig-1g.10gb.me`` is profile
        ``1g.10gb+me``); ``None``: not the vendor's."""
        ...

    def claim_request(self, gr: GpuResource) -> ClaimRequest:
        """The request of a pod's DRA claim that stands for device-plugin resource ``gr`` (kind ``gpu``, ``shared``,
        ``mig`` or ``partition``)."""
        ...

    def device_plugin_request(
        self, device_class: str, selectors: Sequence[str], class_selectors: Sequence[str] | None
    ) -> DevicePluginRequest | None:
        """What a DRA request for ``device_class`` with CEL ``selectors`` is as this vendor's device-plugin resource;
        ``class_selectors``: the selectors of the input's DeviceClass of that name (None: not in the input), so a
        class that selects what the driver's own class selects (migrate's sharing classes) counts as it. ``None``:
        not one of the vendor's classes."""
        ...

    def names_gpu_resource(self, text: str) -> bool:
        """Whether free text (a value in a custom resource's own fields) names one of the vendor's device-plugin GPU
        resources (``nvidia.com/gpu``, ``nvidia.com/mig-1g.10gb``): a GPU request kubedra cannot see through."""
        ...

    @property
    def scheme_alternatives(self) -> str | None:
        """What the vendor's DRA driver offers instead of a GPU-sharing scheme's request (HAMi, KAI fractions): the
        clause of migrate's manual item (:meth:`kubedra.k8s.gpuschemes.Scheme.manual`); ``None``: its driver has
        no sharing to offer."""
        ...
