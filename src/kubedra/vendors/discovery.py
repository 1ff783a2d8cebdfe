"""What ``kubedra discover`` and a vendor pass each other (:meth:`kubedra.vendors.base.Vendor.discover_node`): the
inputs a vendor reads, the options asked of it, and the objects it builds for the node."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class DiscoverInput:
    """One way ``kubedra discover`` reads a vendor's GPUs on a node: an option of the command."""

    option: str  # --nvidia-smi-xml
    help: str
    metavar: str | None = "FILE"  # None: a flag, the vendor reads the node's hardware itself (--nvml)

    @property
    def dest(self) -> str:
        """The option's parameter name, as click derives it."""
        return self.option.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class DiscoverRequest:
    """What ``kubedra discover`` asks of the vendor besides its input. The defaults are "not given": a vendor that
    cannot honour an option given with another value refuses it (UsageError naming the option and why)."""

    node: str
    k8s_version: str
    include_classes: bool = True
    mode: str = "auto"  # --mode
    include_node: bool = False  # --with-node
    health_taints: bool = True  # not --no-health-taints
    driver_release: str | None = None  # --driver-version


@dataclass
class DiscoveredNode:
    """The DRA driver's objects for one node, what they are in one line (the YAML's header), and notes on what the
    input did not say."""

    objects: list[dict[str, Any]]
    summary: str
    notes: list[str] = field(default_factory=list)
