"""What the apiserver refuses (or warns about) in any object, beyond its OpenAPI schema: names that are not DNS
labels or subdomains, containers without an image, a Job's restartPolicy, server-populated metadata, negative
and fractional quantities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubedra.k8s.quantity import QuantityError, parse_quantity
from kubedra.k8s.workloads import get_path, pod_templates
from kubedra.validate.rules import Issue, dns_label, dns_subdomain

Path = tuple[str | int, ...]


def apiserver_basics(obj: Mapping[str, Any]) -> list[Issue]:
    """What the apiserver refuses in any object and in every pod template, beyond the OpenAPI schema (found on the
    real-world corpus with a server dry-run): a namespace that is not a DNS label ("FILLED BY THE OPERATOR"), a
    serviceAccountName that is not a DNS subdomain ("$K8S_SA_NAME"), a container without an image, and a Job
    template whose restartPolicy is not OnFailure or Never."""
    out: list[Issue] = []
    meta = obj.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    if isinstance(ns, str) and ns and (why := dns_label(ns)):
        out.append(Issue(("metadata", "namespace"), f"namespace {ns!r}: {why}"))
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
                out.append(Issue((*t.spec, fld), f"{fld} {sa!r}: {why}"))
        for fld in ("initContainers", "containers"):
            containers = spec.get(fld)
            for i, c in enumerate(containers if isinstance(containers, list) else []):  # else: a schema error
                if isinstance(c, Mapping) and not c.get("image"):
                    out.append(Issue((*t.spec, fld, i, "image"), "image is required"))
        if tuple(t.spec) in job_templates and spec.get("restartPolicy") not in ("OnFailure", "Never"):
            out.append(
                Issue(
                    (*t.spec, "restartPolicy"),
                    f"a Job's pods need restartPolicy OnFailure or Never (got {spec.get('restartPolicy') or 'none'})",
                )
            )
    return out


SERVER_FIELDS = ("resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")


def server_fields(obj: Mapping[str, Any]) -> list[Issue]:
    """Fields the server sets: copied from ``kubectl get -o yaml`` they break or confuse an apply."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return []
    out: list[Issue] = []
    if meta.get("uid"):
        out.append(
            Issue(
                ("metadata", "uid"),
                "metadata.uid is set by the server; the apply fails unless this exact object exists (remove it)",
            )
        )
    present = [f for f in SERVER_FIELDS if meta.get(f) not in (None, "", [])]
    if present:
        out.append(
            Issue(
                ("metadata",),
                f"server-populated metadata ({', '.join(present)}); remove it before applying",
                True,
            )
        )
    return out


def negative(v: Any) -> str | None:
    """The apiserver's ValidateResourceQuantityValue: a request or limit below zero is refused."""
    try:
        negative = parse_quantity(v).sign() < 0
    except QuantityError:
        return None
    return f"{v!r}: must be greater than or equal to 0" if negative else None


def whole(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None
