"""NVIDIA DRA driver releases against a cluster: the preflight audit, plan and verify share
(data in ``data/nvidia-dra-driver.yaml``, with its sources)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from kubedra.k8s import datafiles

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


@functools.cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = datafiles.load("nvidia-dra-driver.yaml")
    return data


def normalise(version: str) -> str | None:
    """``25.12.0``, ``v25.12.0``, an image tag ``v25.12.0-ubi9`` → ``v25.12.0``; None when not a version."""
    m = _VERSION.search(version or "")
    return f"v{m.group(1)}.{m.group(2)}.{m.group(3)}" if m else None


# the driver's image, under the repository's old and new names (NVIDIA/k8s-dra-driver-gpu, moved to
# kubernetes-sigs/dra-driver-nvidia-gpu)
_IMAGE = re.compile(r"(k8s-dra-driver-gpu|dra-driver-nvidia-gpu)[^:@]*:([^@\s]+)")


def image_tag(image: str) -> str | None:
    """The tag of an image of the DRA driver (``v25.8.0-ubi9``); None: not the driver's image."""
    m = _IMAGE.search(image)
    return m.group(2) if m else None


def known() -> list[str]:
    """Every release in the table, oldest first."""
    return list(_data()["releases"])


def newest() -> str:
    return known()[-1]


def with_schema() -> list[str]:
    """The releases whose published attributes kubedra has read, oldest first."""
    return [v for v, rel in _data()["releases"].items() if rel.get("devices")]


def resolve(version: str | None) -> list[str]:
    """``--driver-version``: one release (normalised), or every release with a schema when None/"all".

    Raises ValueError naming the known releases for one kubedra has not read."""
    if version is None or version == "all":
        return with_schema()
    v = normalise(version)
    if v is None or v not in _data()["releases"] or not _data()["releases"][v].get("devices"):
        raise ValueError(
            f"NVIDIA DRA driver {version!r} is not a release kubedra has read (known: {', '.join(with_schema())})"
        )
    return [v]


def device_kinds(version: str, gates: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """What each kind of device of release ``version`` publishes: ``{kind: {driver, attributes: {name: [types]},
    capacities: [names]}}``; with ``gates`` None every gated name is included (published with some gate on),
    else only those of the gates given."""
    rel = release(version)
    if rel is None or not rel.get("devices"):
        raise ValueError(f"kubedra has not read what NVIDIA DRA driver {version} publishes")
    schema = _data()["schemas"][rel["devices"]]
    out: dict[str, dict[str, Any]] = {}
    on = None if gates is None else set(gates)
    for name, kind in schema["kinds"].items():
        attributes = {n: [t] for n, t in kind["attributes"].items()}
        capacities = list(kind.get("capacities") or [])
        for gate, extra in (kind.get("gated") or {}).items():
            if on is not None and gate not in on:
                continue
            for n, t in (extra.get("attributes") or {}).items():
                attributes.setdefault(n, [])
                if t not in attributes[n]:
                    attributes[n].append(t)
            capacities += [c for c in extra.get("capacities") or [] if c not in capacities]
        out[name] = {"driver": kind["driver"], "attributes": attributes, "capacities": capacities}
    return out


def resolve_one(version: str | None) -> str:
    """One release kubedra has read: ``version`` normalised, or the newest when None (ValueError naming the
    known releases otherwise)."""
    return newest_with_schema() if version is None else resolve(version)[0]


def newest_with_schema() -> str:
    return with_schema()[-1]


def schema(version: str) -> dict[str, Any]:
    """The raw device schema of release ``version`` (``kinds``, ``migDeviceName``, ``source``)."""
    rel = release(version)
    if rel is None or not rel.get("devices"):
        raise ValueError(f"kubedra has not read what NVIDIA DRA driver {version} publishes")
    out: dict[str, Any] = _data()["schemas"][rel["devices"]]
    return out


def has_gate(version: str, gate: str) -> bool:
    return gate in ((release(version) or {}).get("featureGates") or [])


def device_class_specs(version: str) -> list[dict[str, Any]]:
    """The DeviceClasses release ``version``'s Helm chart installs: ``[{name, plugin, expression,
    extendedResourceName?, unlessHostManagedIMEX?}]`` (``deviceClassSets`` in the data, with its source)."""
    rel = release(version)
    if rel is None or not rel.get("deviceClasses"):
        raise ValueError(f"kubedra has not read which DeviceClasses NVIDIA DRA driver {version} installs")
    return [dict(c) for c in _data()["deviceClassSets"][rel["deviceClasses"]]["classes"]]


def schema_source(version: str) -> str:
    rel = release(version) or {}
    return str(_data()["schemas"].get(rel.get("devices"), {}).get("source", ""))


@functools.cache
def drivers() -> frozenset[str]:
    """The DRA driver names (``gpu.nvidia.com``, ``compute-domain.nvidia.com``) some release's devices use."""
    return frozenset(k["driver"] for sch in _data()["schemas"].values() for k in sch["kinds"].values())


def replaced_names() -> dict[str, str]:
    return dict(_data().get("replacedNames") or {})


def release(version: str) -> dict[str, Any] | None:
    v = normalise(version)
    return _data()["releases"].get(v) if v else None


def preflight(version: str, k8s_minor: int, gates: Iterable[str] = ()) -> list[str]:
    """Problems running driver ``version`` on Kubernetes 1.<k8s_minor> with driver ``gates`` on; an unknown
    release is itself a problem (kubedra cannot say)."""
    gates = list(gates)
    v = normalise(version)
    rel = release(version)
    if rel is None:
        known = ", ".join(_data()["releases"])
        return [
            f"NVIDIA DRA driver {version or '(unknown version)'} is not in kubedra's release table ({known}): "
            "check its Kubernetes and API support by hand"
        ]
    out: list[str] = []
    minimum = int(str(rel["minKubernetes"]).split(".")[1])
    if k8s_minor < minimum:
        out.append(f"NVIDIA DRA driver {v} needs Kubernetes {rel['minKubernetes']}+ (cluster: 1.{k8s_minor})")
    served = _data()["resourceAPIsServed"].get(f"1.{k8s_minor}", [])
    if served and not set(served) & set(rel["resourceAPIs"]):
        out.append(
            f"NVIDIA DRA driver {v} speaks resource.k8s.io {', '.join(rel['resourceAPIs'])}; Kubernetes 1.{k8s_minor} "
            f"serves {', '.join(served)} by default"
        )
    missing = [g for g in gates if g not in rel["featureGates"]]
    if missing:
        out.append(
            f"NVIDIA DRA driver {v} has no feature gate {', '.join(missing)} (it has: "
            f"{', '.join(rel['featureGates']) or 'none'})"
        )
    on = set(gates)
    for a, b in rel.get("exclusiveGates") or []:
        if a in on and b in on:
            out.append(
                f"NVIDIA DRA driver {v}: feature gates {a} and {b} exclude each other (the driver does not start)"
            )
    for a, b in rel.get("requiresGates") or []:
        if a in on and b not in on:
            out.append(f"NVIDIA DRA driver {v}: feature gate {a} requires {b}")
    return out
