"""NVIDIA GPU models and their MIG profiles, read from ``data/gpus/models.yaml``.

The data file holds NVML facts per board (product name, memory, MIG GPU-instance profiles with
their placements). This module turns it into frozen dataclasses and answers look-ups by name or
alias, case-insensitively, with an :class:`~kubedra.errors.InputError` naming the known models.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s import datafiles

MEMORY_SLICES = 8  # memory-slice axis of every MIG-capable board modelled here
COMPUTE_SLICES = 7


@dataclass(frozen=True)
class MigProfile:
    """One MIG GPU-instance profile (with the matching full compute instance, C == G)."""

    name: str  # "1g.10gb", "1g.10gb+me"
    profile_id: int  # GI profile ID as `nvidia-smi mig -lgip` prints it
    compute_slices: int  # g
    size: int  # memory slices = placement size on the 8-slot axis
    starts: tuple[int, ...]  # valid placement starts
    memory_mib: int
    multiprocessors: int
    copy_engines: int
    decoders: int
    encoders: int
    jpeg_engines: int
    ofa_engines: int
    max_count: int
    inferred: tuple[str, ...] = ()

    @property
    def attributes(self) -> tuple[str, ...]:
        """Profile attributes after ``+`` (``("me",)`` for ``1g.10gb+me``)."""
        _, _, attrs = self.name.partition("+")
        return tuple(a for a in attrs.split("+") if a) if attrs else ()

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 1024 * 1024

    def slots(self, start: int) -> range:
        """Memory slices a GPU instance of this profile occupies when placed at ``start``."""
        return range(start, start + self.size)


@dataclass(frozen=True)
class NodeShape:
    """Kubelet-reported node size for a node with ``gpus`` GPUs (cpu and memory scale with GPUs)."""

    gpus: int = 8
    cpu: int = 192
    memory: str = "2Ti"
    pods: int = 110
    ephemeral_storage: str = "1Ti"
    machine: str = "unknown"
    platform: str = "pcie-server"


@dataclass(frozen=True)
class GpuModel:
    key: str  # "H100-80GB"
    aliases: tuple[str, ...]
    product_name: str
    pci_device_id: str
    brand: str
    architecture: str
    compute_capability: str  # "9.0"
    memory_mib: int
    multiprocessors: int
    mig_toggle_without_reset: bool
    node: NodeShape
    mig_profiles: tuple[MigProfile, ...] = ()
    balanced: tuple[tuple[str, int], ...] = ()

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 1024 * 1024

    @property
    def slug(self) -> str:
        """Lower-case DNS-label form of the key, used in node names (``h100-80gb``)."""
        return self.key.lower()

    @property
    def gfd_family(self) -> str:
        """GPU Feature Discovery's ``nvidia.com/gpu.family`` from the compute capability."""
        major, minor = (int(p) for p in self.compute_capability.split("."))
        return _arch_family(major, minor)

    def profile(self, name: str) -> MigProfile:
        """The MIG profile called ``name`` (``+me`` may also be written ``.me``, as mig-parted does)."""
        want = _normalise_profile_name(name)
        for p in self.mig_profiles:
            if p.name == want:
                return p
        if not self.mig_profiles:
            raise InputError(f"{self.key} ({self.product_name}) does not support MIG")
        known = ", ".join(p.name for p in self.mig_profiles)
        raise InputError(f"unknown MIG profile {name!r} for {self.key} (known: {known})")


def _normalise_profile_name(name: str) -> str:
    name = name.strip()
    # mig-parted spells "1g.10gb+me" as "1g.10gb.me" in layout names
    base, dot, rest = name.partition("gb.")
    if dot and rest:
        name = f"{base}gb+{rest}"  # "1g.24gb.me.all" -> "1g.24gb+me.all"
    return name


def _arch_family(major: int, minor: int) -> str:
    # Same mapping as GPU Feature Discovery (k8s-device-plugin internal/lm/resource.go).
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    return {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper", 10: "blackwell"}.get(
        major, "blackwell" if major == 12 else "undefined"
    )


def mig_memory_gb(profile_memory_mib: int, total_memory_mib: int) -> int:
    """The ``<n>gb`` go-nvlib puts into a profile name (getMigMemorySizeGB), rounding half away from 0."""
    total_bytes = total_memory_mib * 1024 * 1024
    frac = math.ceil(profile_memory_mib * 1024 * 1024 * MEMORY_SLICES / total_bytes) / MEMORY_SLICES
    total_gib = math.ceil(total_bytes / (1024**3))
    return math.floor(frac * total_gib + 0.5)


def _profile(raw: dict[str, Any]) -> MigProfile:
    return MigProfile(
        name=str(raw["name"]),
        profile_id=int(raw["id"]),
        compute_slices=int(raw["g"]),
        size=int(raw["size"]),
        starts=tuple(int(s) for s in raw["starts"]),
        memory_mib=int(raw["mib"]),
        multiprocessors=int(raw["sms"]),
        copy_engines=int(raw["ce"]),
        decoders=int(raw["dec"]),
        encoders=int(raw["enc"]),
        jpeg_engines=int(raw["jpg"]),
        ofa_engines=int(raw["ofa"]),
        max_count=int(raw["max"]),
        inferred=tuple(str(f) for f in raw.get("inferred", ())),
    )


def _model(key: str, raw: dict[str, Any]) -> GpuModel:
    node = raw.get("node") or {}
    return GpuModel(
        key=key,
        aliases=tuple(str(a) for a in raw.get("aliases", ())),
        product_name=str(raw["product_name"]),
        pci_device_id=str(raw["pci_device_id"]),
        brand=str(raw["brand"]),
        architecture=str(raw["architecture"]),
        compute_capability=str(raw["compute_capability"]),
        memory_mib=int(raw["memory_mib"]),
        multiprocessors=int(raw["multiprocessors"]),
        mig_toggle_without_reset=bool(raw["mig_toggle_without_reset"]),
        node=NodeShape(
            gpus=int(node.get("gpus", 8)),
            cpu=int(node.get("cpu", 192)),
            memory=str(node.get("memory", "2Ti")),
            pods=int(node.get("pods", 110)),
            ephemeral_storage=str(node.get("ephemeral_storage", "1Ti")),
            machine=str(node.get("machine", "unknown")),
            platform=str(node.get("platform", "pcie-server")),
        ),
        mig_profiles=tuple(_profile(p) for p in raw.get("mig_profiles", ())),
        balanced=tuple((str(k), int(v)) for k, v in (raw.get("balanced") or {}).items()),
    )


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("gpus/models.yaml")
    return data


@functools.cache
def _models() -> dict[str, GpuModel]:
    return {key: _model(key, raw) for key, raw in _data()["models"].items()}


def gpu_models() -> dict[str, GpuModel]:
    """Every known GPU model by key (``A100-40GB``, ``H100-80GB``, ...), in data-file order."""
    return dict(_models())


def get_model(name: str | GpuModel) -> GpuModel:
    """Look a model up by key or alias, case-insensitively."""
    if isinstance(name, GpuModel):
        return name
    want = name.strip().lower()
    for model in _models().values():
        if want == model.key.lower() or want in (a.lower() for a in model.aliases):
            return model
    raise InputError(f"unknown GPU model {name!r} (known: {', '.join(_models())})")


@dataclass(frozen=True)
class Platform:
    bus_ids: tuple[str, ...]
    roots: tuple[str, ...]


def platform(name: str) -> Platform:
    raw = _data()["platforms"].get(name)
    if raw is None:
        raise InputError(f"unknown server platform {name!r} (known: {', '.join(_data()['platforms'])})")
    return Platform(tuple(raw["bus_ids"]), tuple(raw["roots"]))


def default_driver_versions() -> tuple[str, str]:
    """(driver version, CUDA driver version) as nvidia-smi prints them."""
    d = _data()["driver"]
    return str(d["driver_version"]), str(d["cuda_driver_version"])
