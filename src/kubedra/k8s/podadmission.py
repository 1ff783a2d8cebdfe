"""What the apiserver refuses in a pod spec before any scheduler sees it, for every verb that must not pretend
otherwise: validate reports it, simulate refuses to place such a pod (it never exists).

Each rule is the apiserver's own, read from kubernetes/kubernetes pkg/apis/core/validation/validation.go
(the same at 1.31 through 1.37):

- ``ValidateResourceRequirements``: an extended resource (a resource name with a domain that is not
  ``*kubernetes.io``, such as ``nvidia.com/gpu``) is not overcommitable: "Limit must be set for non overcommitable
  resources" when it is only requested, requests "must be equal to" limits when both are given, and
  ``validateResourceQuantityValue`` refuses a negative one and a fraction ("must be an integer").
- ``validatePodResourceClaim``: a pod claim names exactly one of ``resourceClaimName`` and
  ``resourceClaimTemplateName``. The pre-1.31 ``resourceClaims[].source`` form (k8s.io/api v0.30
  ``ClaimSource``) was removed in 1.31: the apiserver refuses the unknown field (strict field validation, kubectl's
  default), and without it the claim names neither.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubedra.k8s.quantity import QuantityError, parse_quantity

Path = tuple[str | int, ...]


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io`` (``nvidia.com/gpu``)."""
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")


def _items(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if isinstance(value, list):
        yield from ((i, v) for i, v in enumerate(value) if isinstance(v, Mapping))


def extended_resource_issues(resources: Mapping[str, Any], path: Path) -> list[tuple[Path, str]]:
    """(path, the apiserver's reason) for each extended resource of one container's ``resources`` that the
    apiserver refuses. Values that are no quantity at all are left to the caller's quantity check."""
    out: list[tuple[Path, str]] = []
    values: dict[str, dict[str, Any]] = {}
    for section in ("requests", "limits"):
        sec = resources.get(section)
        for name, v in sec.items() if isinstance(sec, Mapping) else []:
            if is_extended_resource(str(name)):
                values.setdefault(str(name), {})[section] = v
    for name, secs in values.items():
        parsed = {}
        for section, v in secs.items():
            try:
                parsed[section] = parse_quantity(v)
            except QuantityError:
                parsed = {}
                break
        if len(parsed) != len(secs):
            continue  # not a quantity: the quantity check says so
        p: Path = (*path, "limits" if "limits" in secs else "requests", name)
        if any(q.sign() < 0 for q in parsed.values()):
            continue  # negative: ValidateResourceQuantityValue, the quantity check says so
        if not all(q.is_integer() for q in parsed.values()):
            out.append((p, f"extended resource {name} must be a whole number"))
        elif "limits" not in parsed:
            out.append(
                (
                    p,
                    f"extended resource {name}: limits must be set",
                )
            )
        elif "requests" in parsed and parsed["requests"] != parsed["limits"]:
            out.append((p, f"extended resource {name}: requests must equal limits"))
    return out


def pod_spec_refusals(spec: Mapping[str, Any], path: Path = ("spec",)) -> list[tuple[Path, str]]:
    """(path, reason) for what the apiserver refuses in a pod spec: extended resources without limits or with
    requests unequal to limits, and pod claims in the removed ``source`` form."""
    out: list[tuple[Path, str]] = []
    for fld in ("initContainers", "containers"):
        for i, c in _items(spec.get(fld)):
            res = c.get("resources")
            if isinstance(res, Mapping):
                out.extend(extended_resource_issues(res, (*path, fld, i, "resources")))
    for i, claim in _items(spec.get("resourceClaims")):
        if "source" in claim:
            out.append(
                (
                    (*path, "resourceClaims", i, "source"),
                    "the pre-1.31 resourceClaims[].source form was removed from the Pod API in 1.31: the apiserver "
                    "refuses the field, and the claim then names neither resourceClaimName nor "
                    "resourceClaimTemplateName",
                )
            )
    return out


def refusal(spec: Any, path: Path = ("spec",)) -> tuple[Path, str] | None:
    """The first thing the apiserver refuses in a pod spec, as (path, one-line reason); ``None``: it admits it."""
    found = pod_spec_refusals(spec, path) if isinstance(spec, Mapping) else []
    if not found:
        return None
    at, why = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in at).lstrip(".")
    return at, f"the apiserver refuses this pod, so it is never created: {where}: {why}{more}"
