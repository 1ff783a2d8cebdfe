"""What the apiserver refuses in a pod spec before any scheduler sees it, for every verb that must not pretend
otherwise: validate reports it, simulate refuses to place such a pod (it never exists).

Each rule is the apiserver's own, read from kubernetes/kubernetes pkg/apis/core/validation/validation.go
(the same at 1.31 through 1.37):

- ``ValidateResourceRequirements``: an extended resource (a resource name with a domain that is not
  ``*kubernetes.io``, such as ``nvidia.com/gpu``) is not overcommitable: "Limit must be set for non overcommitable
  resources" when it is only requested, requests "must be equal to" limits when both are given, and
  ``ValidateResourceQuantityValue`` refuses a negative one and one that is no integer by the release's test
  (:func:`integer_resource_value`: 1.36/1.37 ``MilliValue()%1000``, which wraps past int64, so ``1e20`` passes and
  ``123456789012345678901234567890`` does not, and ``0.9999`` reads 1000 milli and passes; 1.38
  ``isIntegerResourceValue``). Requests and limits are compared as the release parses them (1.38 keeps 29
  significant digits), after API defaulting rounded them up to milli-units (:func:`admitted`).
- ``validatePodResourceClaim``: a pod claim names exactly one of ``resourceClaimName`` and
  ``resourceClaimTemplateName``. The pre-1.31 ``resourceClaims[].source`` form (k8s.io/api v0.30
  ``ClaimSource``) was removed in 1.31: the apiserver refuses the unknown field (strict field validation, kubectl's
  default), and without it the claim names neither.

And in any object (:func:`object_refusals`, found on the real-world corpus with a server dry-run and the live
agreement suite): ``ValidateObjectMeta`` a namespace that is not a DNS label ("FILLED BY THE OPERATOR");
``ValidatePodSpec`` a serviceAccountName that is not a DNS subdomain ("$K8S_SA_NAME"), a container without an
image ("Required value"); ``ValidateJobTemplateSpec`` a Job's pod template whose restartPolicy is not OnFailure or
Never.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubedra.k8s import versions
from kubedra.k8s.dnsnames import dns_label, dns_subdomain
from kubedra.k8s.quantity import Quantity, QuantityError, parse_quantity
from kubedra.k8s.quantityread import round_up
from kubedra.k8s.workloads import get_path, pod_templates

Path = tuple[str | int, ...]


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io`` (``nvidia.com/gpu``)."""
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")


MILLI = -3  # SetDefaults_ResourceList rounds every requests/limits value up to this scale


def admitted(q: Quantity, release: str) -> Quantity:
    """``q`` (parsed by v0.37's rules, as :func:`parse_quantity` does) as ``release``'s apiserver holds it after
    decoding and defaulting: parsed by its rules (1.38 keeps 29 significant digits) and rounded up to milli-units
    (``SetDefaults_ResourceList``: ``0.9999`` is ``1``, ``0.5m`` is ``1m``). Validation and kube-scheduler see
    this value."""
    return round_up(q.at(versions.holds("quantity.nineteenDigitInt64", release)), MILLI)


def integer_resource_value(q: Quantity, release: str) -> bool:
    """Whether ``ValidateResourceQuantityValue`` of ``release`` takes ``q`` as the integer an extended resource
    must be (pkg/apis/core/validation validation.go), on the defaulted value (:func:`admitted`). Through 1.37:
    ``value.MilliValue()%1000 == 0`` with that release's MilliValue, which wraps, or reads 0, past int64
    (:meth:`Quantity.scaled_value`). From 1.38 (``validation.integerResourceValue``) ``isIntegerResourceValue``:
    ``AsScale(0)`` exact, else ``AsMilliInt64`` a multiple of 1000, which a milli-rounded value that is no
    integer never is: so, an integer."""
    r = admitted(q, release)
    if not versions.holds("validation.integerResourceValue", release):
        return r.scaled_value(MILLI, False) % 1000 == 0
    return r.is_integer()


def _items(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if isinstance(value, list):
        yield from ((i, v) for i, v in enumerate(value) if isinstance(v, Mapping))


def extended_resource_issues(
    resources: Mapping[str, Any], path: Path, release: str = versions.DEFAULT_TARGET
) -> list[tuple[Path, str]]:
    """(path, the apiserver's reason) for each extended resource of one container's ``resources`` that the
    ``release``'s apiserver refuses. Values that are no quantity at all are left to the caller's quantity check."""
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
        whole = {section: integer_resource_value(q, release) for section, q in parsed.items()}
        if not all(whole.values()):
            bad = next(section for section, ok in whole.items() if not ok)
            why = f"extended resource {name} must be a whole number"
            if parsed[bad].is_integer():  # an integer the release's int64 arithmetic misreads
                milli = parsed[bad].scaled_value(
                    -3, versions.holds("validation.integerResourceValue", release)
                )
                why += f" (at {release} the apiserver reads {secs[bad]!r} as {milli} milli-units: past int64)"
            out.append(((*path, bad, name), why))
        elif "limits" not in parsed:
            out.append(
                (
                    p,
                    f"extended resource {name}: limits must be set",
                )
            )
        elif "requests" in parsed and admitted(parsed["requests"], release) != admitted(
            parsed["limits"], release
        ):
            out.append((p, f"extended resource {name}: requests must equal limits"))
    return out


HUGEPAGES = "hugepages-"


def hugepage_issues(
    resources: Mapping[str, Any], path: Path, release: str = versions.DEFAULT_TARGET
) -> list[tuple[Path, str]]:
    """(path, the apiserver's reason) for each ``hugepages-<size>`` value of one container's ``resources`` that
    ``release``'s apiserver refuses on create (pkg/apis/core/validation validation.go, 1.35-1.38,
    ``ValidateResourceRequirements``): not overcommitable (helper ``IsOvercommitAllowed`` is false for them), so a
    request needs a limit ("Limit must be set for non overcommitable resources") and must equal it; each value a
    whole multiple of its page size (``validateResourceQuantityHugePageValue``/``IsHugePageResourceValueDivisible``:
    ``Value() % pageSize.Value() == 0``, pageSize a whole number of bytes); and "HugePages require cpu or memory"
    in the same requests or limits. Values are read as the release holds them after defaulting (:func:`admitted`);
    a value that is no quantity is left to the caller's quantity check."""
    out: list[tuple[Path, str]] = []
    since = versions.holds("quantity.nineteenDigitInt64", release)
    sections = {s: v for s in ("requests", "limits") if isinstance(v := resources.get(s), Mapping)}
    held: dict[tuple[str, str], Quantity] = {}
    for section, values in sections.items():
        for name, v in values.items():
            if not str(name).startswith(HUGEPAGES):
                continue
            try:
                held[(section, str(name))] = admitted(parse_quantity(v), release)
            except QuantityError:
                continue
    if not held:
        return out
    for (section, name), q in held.items():
        try:
            page = Quantity.parse(name[len(HUGEPAGES) :], since)
        except QuantityError:
            page = None
        if q.sign() < 0:
            continue  # negative: the quantity check says so
        bad_page = page is None or page.sign() <= 0 or not page.is_integer()  # HugePageSizeFromResourceName
        if bad_page or q.scaled_value(0, since) % page.scaled_value(0, since):  # type: ignore[union-attr]
            out.append(
                ((*path, section, name), f"{q.canonical()} is not positive integer multiple of {name}")
            )
        if section == "requests" and (lim := held.get(("limits", name))) is not None and lim != q:
            out.append(((*path, "requests", name), f"must be equal to {name} limit of {lim.canonical()}"))
        if section == "requests" and name not in sections.get("limits", {}):
            out.append(
                ((*path, "limits", name), f"{name}: Limit must be set for non overcommitable resources")
            )
    if not any(k in ("cpu", "memory") for values in sections.values() for k in values):
        out.append((path, "HugePages require cpu or memory"))
    return out


def resource_issues(
    resources: Mapping[str, Any], path: Path, release: str = versions.DEFAULT_TARGET
) -> list[tuple[Path, str]]:
    """What ``ValidateResourceRequirements`` of ``release`` refuses in one container's ``resources`` beyond each
    value's own quantity check: :func:`extended_resource_issues` and :func:`hugepage_issues`."""
    return extended_resource_issues(resources, path, release) + hugepage_issues(resources, path, release)


def pod_spec_refusals(
    spec: Mapping[str, Any], path: Path = ("spec",), release: str = versions.DEFAULT_TARGET
) -> list[tuple[Path, str]]:
    """(path, reason) for what the apiserver refuses in a pod spec: extended resources without limits or with
    requests unequal to limits, and pod claims in the removed ``source`` form."""
    out: list[tuple[Path, str]] = []
    for fld in ("initContainers", "containers"):
        for i, c in _items(spec.get(fld)):
            res = c.get("resources")
            if isinstance(res, Mapping):
                out.extend(resource_issues(res, (*path, fld, i, "resources"), release))
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


def refusal(
    spec: Any,
    path: Path = ("spec",),
    obj: Mapping[str, Any] | None = None,
    release: str = versions.DEFAULT_TARGET,
) -> tuple[Path, str] | None:
    """The first thing the apiserver refuses in a pod spec at ``path`` of ``obj`` (its namespace and the
    :func:`object_refusals` of that template included, when ``obj`` is given), as (path, one-line reason);
    ``None``: it admits it."""
    found = pod_spec_refusals(spec, path, release) if isinstance(spec, Mapping) else []
    if obj is not None:
        found += [
            (at, why)
            for at, why in object_refusals(obj)
            if at == ("metadata", "namespace") or at[: len(path)] == path
        ]
    if not found:
        return None
    at, why = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    where = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in at).lstrip(".")
    return at, f"the apiserver refuses this pod, so it is never created: {where}: {why}{more}"


def object_refusals(obj: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """(path, reason) for what the apiserver refuses in any object and its pod templates, beyond the OpenAPI
    schema and :func:`pod_spec_refusals`: the namespace, serviceAccountName, images and a Job's restartPolicy."""
    out: list[tuple[Path, str]] = []
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    if isinstance(ns, str) and ns and (why := dns_label(ns)):
        out.append((("metadata", "namespace"), f"namespace {ns!r}: {why}"))
    job_templates: list[Path] = []
    if obj.get("kind") == "Job" and obj.get("apiVersion") == "batch/v1":
        job_templates = [("spec", "template", "spec")]
    elif obj.get("kind") == "CronJob" and obj.get("apiVersion") == "batch/v1":
        job_templates = [("spec", "jobTemplate", "spec", "template", "spec")]
    for t in pod_templates(obj) or []:
        spec = get_path(obj, t.spec)
        if not isinstance(spec, Mapping):
            continue
        for fld in ("serviceAccountName", "serviceAccount"):
            sa = spec.get(fld)
            if isinstance(sa, str) and sa and (why := dns_subdomain(sa)):
                out.append(((*t.spec, fld), f"{fld} {sa!r}: {why}"))
        for fld in ("initContainers", "containers"):
            containers = spec.get(fld)
            for i, c in enumerate(containers if isinstance(containers, list) else []):  # else: a schema error
                if isinstance(c, Mapping) and not c.get("image"):
                    out.append(((*t.spec, fld, i, "image"), "image is required"))
        if tuple(t.spec) in job_templates and spec.get("restartPolicy") not in ("OnFailure", "Never"):
            got = spec.get("restartPolicy") or "none"
            out.append(
                (
                    (*t.spec, "restartPolicy"),
                    f"a Job's pods need restartPolicy OnFailure or Never (got {got})",
                )
            )
    return out
