"""How a node's GPUs are set up: ``GpuMode`` parsed from ``--gpu-mode`` text.

- ``full``                   whole GPUs, MIG off.
- ``mig-static:<layout>``    MIG instances created beforehand (mig-parted / GPU Operator); see
                             :mod:`kubedra.vendors.nvidia.layouts` for the layout syntax.
- ``mig-dynamic``            NVIDIA DRA driver with the ``DynamicMIG`` gate: every profile and
                             placement is announced and created on demand. On Ampere this assumes
                             MIG mode is on (otherwise the driver announces only the full GPU).
                             The device plugin has no equivalent.
- ``time-slicing:<n>``       whole GPUs shared in time. Device plugin: ``n`` replicas per GPU.
                             DRA: full-GPU devices plus an opaque ``GpuConfig`` on the claim.
- ``mps:<n>``                whole GPUs shared through MPS; like time-slicing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kubedra.errors import InputError
from kubedra.vendors.nvidia.layouts import GpuLayout, LayoutSpec, layouts_for_gpus, parse_layout
from kubedra.vendors.nvidia.models import GpuModel

ModeKind = Literal["full", "mig-static", "mig-dynamic", "time-slicing", "mps"]
MIN_REPLICAS = 2  # the device plugin rejects fewer ("number of replicas must be >= 2")
MAX_REPLICAS = 1024  # sanity bound; the device plugin itself has none

_SYNTAX = "full, mig-static:<layout>, mig-dynamic, time-slicing:<replicas>, mps:<replicas>"


@dataclass(frozen=True)
class GpuMode:
    kind: ModeKind
    layout: tuple[LayoutSpec, ...] = ()  # mig-static only
    replicas: int = 1  # time-slicing / mps only

    @staticmethod
    def parse(text: str | GpuMode) -> GpuMode:
        return parse_gpu_mode(text)

    @property
    def is_mig(self) -> bool:
        return self.kind in ("mig-static", "mig-dynamic")

    @property
    def is_shared(self) -> bool:
        return self.kind in ("time-slicing", "mps")

    @property
    def layout_text(self) -> str:
        return "/".join(s.text for s in self.layout)

    def __str__(self) -> str:
        if self.kind == "mig-static":
            return f"mig-static:{self.layout_text}"
        if self.is_shared:
            return f"{self.kind}:{self.replicas}"
        return self.kind

    def check_model(self, model: GpuModel) -> None:
        """InputError, naming the model, when ``model`` cannot run this mode: MIG on a GPU the catalogue
        (data/gpus/models.yaml) lists no MIG profile for. For a user's explicit choice of mode for a model;
        :meth:`gpu_layouts` models the driver instead, whose DynamicMIG publishes such a GPU whole."""
        if self.is_mig and not model.mig_capable:
            raise InputError(
                f"GPU mode {self}: {model.key} ({model.product_name}) does not support MIG; use full, "
                "time-slicing:<n> or mps:<n> for it"
            )

    def gpu_layouts(self, model: GpuModel, gpus: int) -> list[GpuLayout]:
        """Per GPU: None when MIG is off, else the placed MIG instances (empty for dynamic MIG)."""
        if self.kind == "mig-static":
            return layouts_for_gpus(self.layout, model, gpus)
        if self.kind == "mig-dynamic" and model.mig_capable and not model.mig_toggle_without_reset:
            return [() for _ in range(gpus)]  # Ampere: MIG mode on, instances created on demand
        return [None for _ in range(gpus)]


def parse_gpu_mode(text: str | GpuMode) -> GpuMode:
    """Parse ``full``, ``mig-static:<layout>``, ``mig-dynamic``, ``time-slicing:<n>`` or ``mps:<n>``."""
    if isinstance(text, GpuMode):
        return text
    raw = text.strip()
    kind, sep, arg = raw.partition(":")
    kind = kind.strip().lower()
    arg = arg.strip()
    if kind in ("full", "mig-dynamic"):
        if sep:
            raise InputError(f"GPU mode {kind!r} takes no argument: {raw!r}")
        return GpuMode(kind)  # type: ignore[arg-type]
    if kind == "mig-static":
        if not arg:
            raise InputError(
                "GPU mode mig-static needs a layout, e.g. mig-static:all-balanced or mig-static:1g.10gb*7"
            )
        return GpuMode("mig-static", layout=parse_layout(arg))
    if kind in ("time-slicing", "mps"):
        if not arg.isdigit():
            raise InputError(f"GPU mode {kind} needs a replica count, e.g. {kind}:4 (got {raw!r})")
        replicas = int(arg)
        if not MIN_REPLICAS <= replicas <= MAX_REPLICAS:
            raise InputError(
                f"GPU mode {kind}: replicas must be between {MIN_REPLICAS} and {MAX_REPLICAS} (got {replicas})"
            )
        return GpuMode(kind, replicas=replicas)  # type: ignore[arg-type]
    raise InputError(f"unknown GPU mode {raw!r} (expected {_SYNTAX})")
