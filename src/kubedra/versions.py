"""Target Kubernetes versions and feature-gate defaults per release (data in ``data/feature-gates.yaml``)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from kubedra.errors import UsageError
from kubedra.k8s.versions import DEFAULT_TARGET, SUPPORTED

__all__ = ["DEFAULT_TARGET", "SUPPORTED", "Version", "parse_version"]

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


def parse_version(text: str, *, supported_only: bool = True) -> Version:
    """Parse ``1.37``, ``v1.37.2`` etc.; only the minor release matters for kubedra."""
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise UsageError(f"invalid Kubernetes version {text!r} (expected e.g. 1.37)")
    v = Version(int(m.group(1)), int(m.group(2)))
    if supported_only and str(v) not in SUPPORTED:
        raise UsageError(f"unsupported target version {v} (supported: {', '.join(SUPPORTED)})")
    return v


@functools.cache
def _gate_data() -> dict[str, dict[str, dict[str, Any]]]:
    text = resources.files("kubedra.data").joinpath("feature-gates.yaml").read_text(encoding="utf-8")
    data: dict[str, dict[str, dict[str, Any]]] = yaml.safe_load(text)["gates"]
    return data


def known_gates() -> list[str]:
    return sorted(_gate_data())


def gate_info(name: str, version: str | Version) -> dict[str, Any] | None:
    return _gate_data().get(name, {}).get(str(version))


def default_gates(version: str | Version) -> dict[str, bool]:
    """Every known gate's default at ``version`` (gates absent in that release are False)."""
    v = str(version)
    return {name: bool(per.get(v, {}).get("default", False)) for name, per in _gate_data().items()}


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """Parse ``A=true,B=false`` like kube-scheduler's ``--feature-gates``."""
    out: dict[str, bool] = {}
    if not text:
        return out
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep or value.strip().lower() not in ("true", "false"):
            raise UsageError(f"invalid --feature-gates entry {part!r} (expected Name=true|false)")
        name = name.strip()
        if name not in _gate_data():
            raise UsageError(f"unknown feature gate {name!r} (known: {', '.join(known_gates())})")
        out[name] = value.strip().lower() == "true"
    return out


def effective_gates(version: str | Version, overrides: Mapping[str, bool] | None = None) -> dict[str, bool]:
    gates = default_gates(version)
    v = str(version)
    for name, value in (overrides or {}).items():
        info = gate_info(name, v)
        if info is None and value:
            raise UsageError(f"feature gate {name} does not exist in Kubernetes {v}")
        if info is not None and info.get("locked") and value != info.get("default"):
            raise UsageError(
                f"feature gate {name} is locked to {str(info['default']).lower()} in Kubernetes {v}"
            )
        gates[name] = value
    return gates
