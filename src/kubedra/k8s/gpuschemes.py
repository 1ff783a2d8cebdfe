"""GPU requests outside the NVIDIA device plugin's own names: HAMi and Volcano vGPU shares, Alibaba gpushare/cGPU,
other vendors' device plugins, and scheduler annotations (KAI fractions, HAMi filters). The facts are in
``kubedra/data/gpu-schemes.yaml``; audit reports each, migrate makes each a manual item (the NVIDIA DRA driver
cannot express them mechanically), simulate skips the pods with the same reason.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubedra.k8s import datafiles


@dataclass(frozen=True)
class Scheme:
    key: str  # the resource name or annotation key as written
    scheme: str  # who hands it out / honours it
    reason: str  # what it asks for
    rule: str = ""  # audit rule id (resources)
    driver: str = ""  # the vendor's DRA driver, when one exists

    def manual(self, migrates_to: str, alternatives: str) -> str:
        """Why migrate cannot rewrite it: the migrate manual item's text. The vendors' words come from the caller
        (k8s sits below the vendors): ``migrates_to`` names the DRA drivers kubedra migrates to ("NVIDIA's DRA
        driver"), ``alternatives`` what they offer instead of a sharing scheme (``Vendor.scheme_alternatives``)."""
        if self.driver:
            return (
                f"{self.reason} through the {self.scheme}: kubedra migrates to {migrates_to} only; move it "
                f"to that vendor's DRA driver ({self.driver}) by hand"
            )
        return f"{self.reason} ({self.scheme}): {alternatives} and rewrite by hand"


@functools.cache
def _data() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    data = datafiles.load("gpu-schemes.yaml")
    names = {r["name"]: r for r in data["resources"] if "name" in r}
    prefixes = {r["prefix"]: r for r in data["resources"] if "prefix" in r}
    annotations = {a["key"]: a for a in data["annotations"]}
    return names, prefixes, annotations


def resource_scheme(name: str) -> Scheme | None:
    names, prefixes, _ = _data()
    row = names.get(name) or next((r for p, r in prefixes.items() if name.startswith(p)), None)
    if row is None:
        return None
    return Scheme(name, row["scheme"], row["reason"], row["rule"], row.get("driver", ""))


def annotation_schemes(annotations: Mapping[str, Any] | None) -> list[Scheme]:
    """The GPU-sharing annotations among ``annotations``, in their order."""
    if not isinstance(annotations, Mapping):
        return []
    known = _data()[2]
    return [
        Scheme(str(k), known[str(k)]["scheme"], known[str(k)]["reason"])
        for k in annotations
        if str(k) in known
    ]


@functools.cache
def operator_groups() -> tuple[str, ...]:
    """API groups of the GPU and batch operators whose objects are read whole (``gpuOperatorGroups`` in
    data/rules/cluster-features.yaml): every listable resource of these groups is audited and captured."""
    data = datafiles.load("rules/cluster-features.yaml")
    return tuple(str(g) for g in (data or {}).get("gpuOperatorGroups", []))
