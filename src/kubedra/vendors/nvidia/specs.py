"""Node catalogue specs (``4x8xH100-80GB,2x8xA100-80GB``) and target Kubernetes versions."""

from __future__ import annotations

import re
from typing import NamedTuple

from kubedra.errors import InputError, UsageError
from kubedra.k8s.versions import require_supported
from kubedra.vendors.nvidia.models import GpuModel, get_model

MAX_GPUS_PER_NODE = 64

_GROUP_RE = re.compile(r"^(?P<count>\d{1,12})x(?P<gpus>\d{1,6})x(?P<model>[A-Za-z0-9][A-Za-z0-9.\-]*)$")


class NodeGroup(NamedTuple):
    """``nodes`` nodes with ``gpus_per_node`` GPUs of ``model`` each."""

    nodes: int
    gpus_per_node: int
    model: GpuModel


def parse_node_spec(text: str) -> list[NodeGroup]:
    """Parse ``<nodes>x<gpus>x<model>[,...]``; the model is a key or alias from ``gpu_models()``."""
    if not text or not text.strip():
        raise InputError("empty node spec (expected e.g. 4x8xH100-80GB,2x8xA100-80GB)")
    groups = []
    for part in text.split(","):
        part = part.strip()
        m = _GROUP_RE.match(part)
        if not m:
            raise InputError(
                f"invalid node spec {part!r} (expected <nodes>x<gpus>x<model>, e.g. 4x8xH100-80GB)"
            )
        count, gpus = int(m.group("count")), int(m.group("gpus"))
        if count < 1:
            raise InputError(f"invalid node spec {part!r}: node count must be at least 1")
        if not 1 <= gpus <= MAX_GPUS_PER_NODE:
            raise InputError(
                f"invalid node spec {part!r}: GPUs per node must be between 1 and {MAX_GPUS_PER_NODE}"
            )
        groups.append(NodeGroup(count, gpus, get_model(m.group("model"))))
    return groups


def k8s_minor(version: str) -> int:
    """Minor release of a target Kubernetes version (``1.37``, ``v1.35.2``); supported releases only (kubedra.k8s.versions)."""
    try:
        return require_supported(str(version)).minor
    except UsageError as e:  # a version inside a node spec or a generated cluster: bad input
        raise InputError(e.message) from None
