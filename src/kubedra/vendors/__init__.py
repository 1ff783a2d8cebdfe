"""Vendor knowledge: what each GPU vendor's device plugin and DRA driver publish and accept.

One package per vendor (:mod:`kubedra.vendors.nvidia`, :mod:`kubedra.vendors.amd`), each implementing
:class:`kubedra.vendors.base.Vendor`; the verbs reach them only through this registry::

    from kubedra import vendors
    vendors.for_resource("amd.com/gpu").driver        # "gpu.amd.com"
    vendors.classify("nvidia.com/mig-1g.10gb").kind   # "mig"
    vendors.for_driver("gpu.nvidia.com").title        # "NVIDIA"

Vendors sit in the knowledge layer: they may use :mod:`kubedra.k8s` and :mod:`kubedra.sources`, and nothing above
them. The registry loads a vendor's module only when it is first asked for (importing ``kubedra.vendors`` loads
no catalogue).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Mapping
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s.gpunames import GpuNames
from kubedra.vendors.base import (
    ClaimSharing,
    ControllerOutput,
    DevicePluginGpus,
    GpuResource,
    NodeComponent,
    NodeLabels,
    OperatorNote,
    SharedClass,
    SharingConfigRef,
    Vendor,
)

__all__ = [
    "ClaimSharing",
    "ControllerOutput",
    "DevicePluginGpus",
    "GpuResource",
    "NodeComponent",
    "NodeLabels",
    "OperatorNote",
    "SharedClass",
    "SharingConfigRef",
    "Vendor",
    "all",
    "classify",
    "controller_output",
    "for_driver",
    "for_model",
    "for_node",
    "for_published_driver",
    "for_resource",
    "get",
    "gpu_names",
    "mode_problem",
    "node_component",
    "split_node_spec",
]

_GROUP = re.compile(r"^\d{1,12}x\d{1,6}x(?P<model>[A-Za-z0-9][A-Za-z0-9.\-]*)$")

# The registered vendors, in the order they are tried; each module has a VENDOR implementing the protocol.
_MODULES = ("kubedra.vendors.nvidia.vendor", "kubedra.vendors.amd.vendor")


@functools.cache
def all() -> tuple[Vendor, ...]:
    """Every registered vendor."""
    return tuple(importlib.import_module(m).VENDOR for m in _MODULES)


def get(name: str) -> Vendor:
    """The vendor called ``name`` (``nvidia``, ``amd``); KeyError for another."""
    for v in all():
        if v.name == name:
            return v
    raise KeyError(name)


def for_resource(name: str) -> Vendor | None:
    """The vendor whose device plugin owns the resource name ``name`` (by its domain), or ``None``."""
    return next((v for v in all() if name.startswith(v.resource_domain)), None)


def for_driver(driver: str) -> Vendor | None:
    """The vendor whose DRA driver is called ``driver``, or ``None``."""
    return next((v for v in all() if v.driver == driver), None)


def for_published_driver(driver: str) -> Vendor | None:
    """The vendor that publishes devices under DRA driver ``driver`` (any of its drivers: NVIDIA's
    ``compute-domain.nvidia.com`` too), or ``None``."""
    return next((v for v in all() if driver in v.drivers), None)


def for_model(model: str) -> Vendor | None:
    """The vendor whose catalogue has GPU model ``model`` (``H100-80GB``, ``MI300X``), or ``None``."""
    return next((v for v in all() if v.owns_node_spec(f"1x1x{model}")), None)


def for_node(labels: Mapping[str, str]) -> Vendor | None:
    """The vendor whose GPUs a node's labels announce, or ``None``."""
    return next((v for v in all() if v.owns_node(labels)), None)


def classify(name: str) -> GpuResource | None:
    """What a device-plugin resource name means, whichever vendor owns it; ``None``: no vendor's GPU resource."""
    v = for_resource(name)
    return v.classify(name) if v is not None else None


def split_node_spec(text: str) -> list[tuple[Vendor, str]]:
    """``simulate --nodes`` split per vendor, in the order each vendor first appears: (vendor, its groups). A group
    no vendor owns (a typo, an unknown model) goes to the first registered vendor, whose parser says what is wrong."""
    out: dict[str, list[str]] = {}
    first = all()[0]
    for part in text.split(","):
        owner = next((v for v in all() if v.owns_node_spec(part)), None)
        m = _GROUP.match(part.strip())
        if owner is None and m is not None:
            known = ", ".join(name for v in all() for name in v.model_names)
            raise InputError(f"unknown GPU model {m.group('model')!r} in --nodes (known: {known})")
        owner = owner or first
        out.setdefault(owner.name, []).append(part.strip())
    return [(get(name), ",".join(parts)) for name, parts in out.items()]


def controller_output(obj: Mapping[str, Any], k8s_version: str) -> ControllerOutput | None:
    """What some vendor's controllers make of input object ``obj`` (e.g. the ResourceClaimTemplate NVIDIA's
    ComputeDomain controller creates); ``None`` when no vendor owns the object's kind."""
    for v in all():
        out = v.controller_output(obj, k8s_version)
        if out is not None:
            return out
    return None


def node_component(obj: Mapping[str, Any]) -> NodeComponent | None:
    """What a DaemonSet (or one container) runs of some vendor's node components (device plugin, feature
    discovery...); ``None``: no vendor's."""
    for v in all():
        out = v.node_component(obj)
        if out is not None:
            return out
    return None


def mode_problem(mode: str) -> str | None:
    """Why ``mode`` is no vendor's GPU mode (in the words of the first vendor whose parser objects); ``None``: some
    vendor's mode."""
    problems = [v.mode_problem(mode) for v in all()]
    return None if None in problems else next(p for p in problems if p)


@functools.cache
def gpu_names() -> GpuNames:
    """How any vendor's GPU is named in a custom resource's own fields (its resource domain as a key, its GPU
    resources in a string): what :func:`kubedra.k8s.workloads.custom_resource_gpu_fields` looks for."""
    vendors = all()
    return GpuNames(
        domains=tuple(v.resource_domain for v in vendors),
        names_gpu=lambda text: any(v.names_gpu_resource(text) for v in vendors),
    )
