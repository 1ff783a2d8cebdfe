"""Managed platforms' own GPU sharing, read from a pod's nodeSelector (``kubedra/data/platforms.yaml``).

On GKE a pod that asks for ``nvidia.com/gpu: 1`` and selects ``cloud.google.com/gke-gpu-partition-size: 1g.5gb``
gets one MIG slice of that size; one that selects ``cloud.google.com/gke-gpu-sharing-strategy: time-sharing`` (or
``mps``) shares a GPU with up to ``cloud.google.com/gke-max-shared-clients-per-gpu`` containers. Neither is an
exclusive whole GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from kubedra.k8s import datafiles


@dataclass(frozen=True)
class PlatformGpu:
    """What a platform's node labels make of ``nvidia.com/gpu`` for one pod spec."""

    platform: str
    partition: str | None  # MIG profile (1g.5gb): each nvidia.com/gpu is one slice of it
    strategy: str | None  # TimeSlicing | MPS (the DRA driver's names); None: exclusive
    strategy_label: str | None  # "label=value" as the pod selects it
    clients: str | None  # max shared clients per GPU, as selected (None: not selected)
    labels: tuple[str, ...]  # "label=value" of every platform label the pod selects

    def describe(self) -> str:
        return f"{self.platform.upper()} nodeSelector {', '.join(self.labels)}"


@cache
def facts() -> Mapping[str, Any]:
    data: Mapping[str, Any] = datafiles.load("platforms.yaml")
    return data


def gpu_sharing(pod_spec: Mapping[str, Any]) -> PlatformGpu | None:
    """The platform GPU sharing ``pod_spec`` selects with its nodeSelector, or ``None``."""
    selector = pod_spec.get("nodeSelector")
    if not isinstance(selector, Mapping):
        return None
    gke = facts()["gke"]
    partition = selector.get(gke["partition_size"])
    strategy = selector.get(gke["sharing_strategy"])
    clients = selector.get(gke["max_shared_clients"])
    if partition is None and strategy is None and clients is None:
        return None
    labels = tuple(
        f"{k}={selector[k]}"
        for k in (gke["partition_size"], gke["sharing_strategy"], gke["max_shared_clients"])
        if k in selector
    )
    return PlatformGpu(
        platform="gke",
        partition=str(partition) if partition is not None else None,
        strategy=gke["strategies"].get(str(strategy), str(strategy)) if strategy is not None else None,
        strategy_label=f"{gke['sharing_strategy']}={strategy}" if strategy is not None else None,
        clients=str(clients) if clients is not None else None,
        labels=labels,
    )
