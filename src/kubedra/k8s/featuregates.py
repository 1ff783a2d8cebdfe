"""Feature gates per Kubernetes release: defaults, stages, locks and history (data in ``data/feature-gates.yaml``,
read here only; the releases themselves are :mod:`kubedra.k8s.versions`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from kubedra.errors import UsageError
from kubedra.k8s import datafiles
from kubedra.k8s.versions import Version, api


@functools.cache
def _gate_file() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("feature-gates.yaml")
    return data


def _gate_data() -> dict[str, dict[str, dict[str, Any]]]:
    gates: dict[str, dict[str, dict[str, Any]]] = _gate_file()["gates"]
    return gates


def merged_into() -> dict[str, str]:
    """Gates whose removal is only a note because another gate took over (GangScheduling -> GenericWorkload)."""
    return dict(_gate_file().get("mergedInto") or {})


@functools.cache
def gate_histories() -> dict[str, dict[str, str]]:
    """Every gate's history as audit reads it: release -> ``stage:on|off[:locked]``, or ``absent`` for a
    release after the gate's first one where it no longer exists."""
    gates = _gate_data()
    releases = sorted({v for per in gates.values() for v in per}, key=lambda v: Version.parse(v))
    out: dict[str, dict[str, str]] = {}
    for name, per in gates.items():
        first = min((Version.parse(v) for v in per), default=None)
        history: dict[str, str] = {}
        for release in releases:
            if first is None or Version.parse(release) < first:
                continue
            info = per.get(release)
            if info is None:
                history[release] = "absent"
                continue
            state = f"{info['stage']}:{'on' if info.get('default') else 'off'}"
            history[release] = state + (":locked" if info.get("locked") else "")
        out[name] = history
    return out


def removed_in(release: str | Version) -> list[str]:
    """Every gate (any component's, not only DRA's) that ``release`` no longer registers although the release
    before did (``removed`` in data/feature-gates.yaml, generated from the Go source at both tags): a component
    of ``release`` started with one of them in its feature gates does not start."""
    removed: dict[str, list[str]] = _gate_file().get("removed") or {}
    return list(removed.get(str(release), []))


def removed_between(current: str | Version, target: str | Version) -> dict[str, str]:
    """gate -> the release that removed it, for every release after ``current`` up to ``target``."""
    lo, hi = Version.parse(str(current)), Version.parse(str(target))
    out: dict[str, str] = {}
    for release, names in (_gate_file().get("removed") or {}).items():
        if lo < Version.parse(release) <= hi:
            for name in names:
                out.setdefault(name, str(release))
    return out


def known_gates() -> list[str]:
    return sorted(_gate_data())


def gate_info(name: str, version: str | Version) -> dict[str, Any] | None:
    return _gate_data().get(name, {}).get(str(version))


@functools.cache
def dropped_fields() -> list[dict[str, Any]]:
    """What kube-apiserver clears from a new resource.k8s.io object while a gate is off (data/dropped-fields.yaml:
    ``gates``, ``from``, and per kind, or ``claimSpec``, the dotted paths)."""
    entries: list[dict[str, Any]] = datafiles.load("dropped-fields.yaml")["dropped"]
    return entries


def dropped_from(gate: str, field: str) -> Version | None:
    """The first release whose apiserver drops a field named ``field`` (a path's last name) while ``gate`` is off,
    or None when data/dropped-fields.yaml has no such field."""
    found = [
        Version.parse(e["from"])
        for e in dropped_fields()
        if gate in e["gates"]
        for k, paths in e.items()
        if k not in ("gates", "from")
        for path in paths
        if path.rsplit(".", 1)[-1].removesuffix("[]") == field
    ]
    return min(found, default=None)


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


_FEATURE = re.compile(r"^kubernetes_feature_enabled\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)", re.M)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def parse_feature_metrics(text: str) -> dict[str, tuple[bool, str]]:
    """name -> (enabled, stage) from kube-apiserver /metrics."""
    out: dict[str, tuple[bool, str]] = {}
    for m in _FEATURE.finditer(text):
        labels = dict(_LABEL.findall(m.group("labels")))
        if "name" in labels:
            try:
                enabled = float(m.group("value")) > 0
            except ValueError:
                continue
            out[labels["name"]] = (enabled, labels.get("stage", ""))
    return out


def taint_rule_gates_off(version: str | Version, gates: Mapping[str, bool] | None = None) -> list[str]:
    """The feature gates a DeviceTaintRule needs at ``version`` (data/versions.yaml ``apis.deviceTaintRuleGates``:
    DRADeviceTaints alone at 1.34, DRADeviceTaintRules too from 1.35) that are off there, by default or, given
    ``gates`` (every gate's value, :func:`effective_gates`), in those, each as ``NAME (stage)``; empty: the
    release takes DeviceTaintRules as it comes."""
    off = []
    for gate in api("deviceTaintRuleGates", version) or []:
        info = gate_info(gate, version) or {}
        if not (info.get("default") if gates is None else gates.get(gate)):
            off.append(f"{gate} ({info.get('stage', 'unknown stage')})")
    return off
