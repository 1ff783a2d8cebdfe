"""``kubedra policy generate``: the baseline policies from ``kubedra/data/policies``, with the user's options.

The data files are read with ruamel.yaml so their comments (why a policy exists, how to switch to Deny)
reach the output.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML

from kubedra.errors import UsageError
from kubedra.k8s import datafiles

ACTIONS = ("Deny", "Warn", "Audit")


@dataclass(frozen=True)
class PolicyOptions:
    required_labels: tuple[str, ...] = ()
    dra_pool_label: str | None = None
    device_classes: tuple[str, ...] = ()
    # DeviceClasses defined by the user's manifests (e.g. the time-slicing/MPS classes `kubedra migrate` writes):
    # allowed in addition to --device-class, or to the default list when --device-class is not given.
    defined_classes: tuple[str, ...] = ()
    params_namespace: str = "kube-system"
    actions: tuple[str, ...] = ("Warn", "Audit")
    only: tuple[str, ...] = ()


def _yaml() -> YAML:
    y = YAML()
    y.preserve_quotes = True
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def available() -> list[str]:
    return sorted(n[: -len(".yaml")] for n in datafiles.names("policies") if n.endswith(".yaml"))


def _load(name: str) -> list[Any]:
    text = datafiles.read_text(f"policies/{name}.yaml")
    return [d for d in _yaml().load_all(text) if d is not None]


def generate(options: PolicyOptions) -> list[Any]:  # noqa: C901 - option checks, then each policy's objects, in the order they are written
    """The selected policies, bindings and params ConfigMaps as ruamel objects (comments kept)."""
    names = available()
    chosen = list(options.only) or names
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise UsageError(f"unknown policy {', '.join(unknown)}; available: {', '.join(names)}")
    bad = [a for a in options.actions if a not in ACTIONS]
    if bad or not options.actions or ("Deny" in options.actions and "Warn" in options.actions):
        raise UsageError("--actions: Deny, Warn, Audit (Deny and Warn cannot be combined)")
    params: dict[str, Any] = {}
    for n in names:  # params ConfigMaps may live in another policy's file
        for d in _load(n):
            if d.get("kind") == "ConfigMap":
                params[str(d["metadata"]["name"])] = d
    out: list[Any] = []
    needed: list[str] = []
    for n in chosen:
        for d in _load(n):
            kind = d.get("kind")
            if kind == "ConfigMap":
                continue
            if kind == "ValidatingAdmissionPolicyBinding":
                spec = d["spec"]
                spec["validationActions"] = list(options.actions)
                ref = spec.get("paramRef")
                if ref is not None:
                    ref["namespace"] = options.params_namespace
                    if ref["name"] not in needed:
                        needed.append(str(ref["name"]))
            out.append(d)
    for name in needed:
        cm = params[name]
        cm["metadata"]["namespace"] = options.params_namespace
        data = cm["data"]
        if name == "kubedra-required-labels" and options.required_labels:
            data["labels"] = ",".join(options.required_labels)
        if name == "kubedra-gpu-hygiene":
            if options.dra_pool_label:
                data["draPoolLabel"] = options.dra_pool_label
            allowed = list(options.device_classes) or [
                c.strip() for c in str(data.get("deviceClasses", "")).split(",") if c.strip()
            ]
            allowed += [c for c in options.defined_classes if c not in allowed]
            if options.device_classes or options.defined_classes:
                data["deviceClasses"] = ",".join(allowed)
        out.append(cm)
    return out


def defined_device_classes(documents: Sequence[Any]) -> tuple[str, ...]:
    """Names of the DeviceClasses (any resource.k8s.io version) among parsed manifests, in input order."""
    names: list[str] = []
    for obj in documents:
        if not isinstance(obj, dict) or obj.get("kind") != "DeviceClass":
            continue
        if not str(obj.get("apiVersion", "")).startswith("resource.k8s.io/"):
            continue
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return tuple(names)


def render(documents: Sequence[Any]) -> str:
    buf = io.StringIO()
    _yaml().dump_all(list(documents), buf)
    return buf.getvalue()
