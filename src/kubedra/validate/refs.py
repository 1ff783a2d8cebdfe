"""References between the inputs: DeviceClasses, ResourceClaim(Template)s, request names, PodGroups and
Workloads an object names. One not among the inputs is a warning (it must exist in the cluster), an error with
``--strict-refs``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubedra import vendors
from kubedra.k8s import namespaces
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.k8s.workloads import api_group, get_path
from kubedra.sources.files import Document
from kubedra.validate.rules import Issue

Path = tuple[str | int, ...]
_CORE_GROUPS = frozenset({"", "apps", "batch", "resource.k8s.io", "scheduling.k8s.io"})

KNOWN_CLASSES = frozenset(
    name for v in vendors.all() for name in v.known_class_names()
)  # every vendor's driver


class Index:
    """What the inputs define, for reference checks."""

    def __init__(self, documents: Iterable[Document], k8s_version: str = DEFAULT_TARGET) -> None:
        self.classes: set[str] = set()
        self.templates: dict[tuple[str, str], set[str]] = {}
        self.claims: dict[tuple[str, str], set[str]] = {}
        self.podgroups: set[tuple[str, str]] = set()
        self.workloads: set[tuple[str, str]] = set()
        self.has_selectors = False
        for d in documents:
            ns = namespaces.effective(d.namespace)
            group = api_group(d.api_version)
            if "selectors" in str(d.obj.get("spec", "")):
                self.has_selectors = True
            made = vendors.controller_output(d.obj, k8s_version) if group not in _CORE_GROUPS else None
            for o in made.objects if made else []:  # a vendor controller's templates (a ComputeDomain's)
                if o.get("kind") == "ResourceClaimTemplate":
                    key = (o["metadata"].get("namespace") or ns, o["metadata"]["name"])
                    self.templates[key] = request_names(get_path(o, ("spec", "spec")))
            if group == "resource.k8s.io":
                if d.kind == "DeviceClass":
                    self.classes.add(d.name)
                elif d.kind == "ResourceClaimTemplate":
                    self.templates[(ns, d.name)] = request_names(get_path(d.obj, ("spec", "spec")))
                elif d.kind == "ResourceClaim":
                    self.claims[(ns, d.name)] = request_names(d.obj.get("spec"))
            elif group == "scheduling.k8s.io":
                if d.kind == "PodGroup":
                    self.podgroups.add((ns, d.name))
                elif d.kind == "Workload":
                    self.workloads.add((ns, d.name))


def request_names(spec: Any) -> set[str]:
    requests = get_path(spec, ("devices", "requests")) if isinstance(spec, Mapping) else None
    if not isinstance(requests, list):  # true, 1.5: no requests (the schema reports the type)
        return set()
    return {str(r.get("name")) for r in requests if isinstance(r, Mapping)}


def class_refs(obj: Mapping[str, Any], index: Index, *, strict_refs: bool) -> list[Issue]:
    kind = obj.get("kind")
    if kind == "ResourceClaim":
        base: Path = ("spec",)
    elif kind == "ResourceClaimTemplate":
        base = ("spec", "spec")
    else:
        return []
    out: list[Issue] = []
    requests = get_path(obj, (*base, "devices", "requests"))
    for i, req in enumerate(requests if isinstance(requests, list) else []):
        if not isinstance(req, Mapping):
            continue
        candidates: list[tuple[Path, Any]] = []
        if isinstance(req.get("exactly"), Mapping):
            candidates.append(((*base, "devices", "requests", i, "exactly"), req["exactly"]))
        for j, sub in enumerate(req.get("firstAvailable") or []):
            if isinstance(sub, Mapping):
                candidates.append(((*base, "devices", "requests", i, "firstAvailable", j), sub))
        for path, ex in candidates:
            cls = ex.get("deviceClassName")
            if isinstance(cls, str) and cls and cls not in index.classes and cls not in KNOWN_CLASSES:
                out.append(
                    Issue(
                        (*path, "deviceClassName"),
                        f"DeviceClass {cls!r} is not among the inputs nor a known driver class; "
                        "it must exist in the cluster",
                        not strict_refs,
                    )
                )
    return out


def pod_refs(
    spec_path: Path, spec: Mapping[str, Any], ns: str | None, index: Index, *, strict_refs: bool
) -> list[Issue]:
    out: list[Issue] = []
    namespace = namespaces.effective(ns)
    claims = spec.get("resourceClaims")
    templates: dict[str, set[str] | None] = {}
    for i, c in enumerate(claims if isinstance(claims, list) else []):
        if not isinstance(c, Mapping):
            continue
        p: Path = (*spec_path, "resourceClaims", i)
        tname, cname = c.get("resourceClaimTemplateName"), c.get("resourceClaimName")
        if tname:
            key = (namespace, str(tname))
            if key not in index.templates:
                out.append(
                    Issue(
                        (*p, "resourceClaimTemplateName"),
                        f"ResourceClaimTemplate {tname!r} is not among the inputs (namespace "
                        f"{namespace}); it must exist before the pods",
                        not strict_refs,
                    )
                )
            templates[str(c.get("name"))] = index.templates.get(key)
        elif cname:
            key = (namespace, str(cname))
            if key not in index.claims:
                out.append(
                    Issue(
                        (*p, "resourceClaimName"),
                        f"ResourceClaim {cname!r} is not among the inputs (namespace {namespace}); "
                        "it must exist before the pods",
                        not strict_refs,
                    )
                )
            templates[str(c.get("name"))] = index.claims.get(key)
    for fld in ("initContainers", "containers"):
        items = spec.get(fld)
        for i, ctr in enumerate(items if isinstance(items, list) else []):
            res = ctr.get("resources") if isinstance(ctr, Mapping) else None
            refs = res.get("claims") if isinstance(res, Mapping) else None
            for j, ref in enumerate(refs if isinstance(refs, list) else []):
                if not isinstance(ref, Mapping) or not ref.get("request"):
                    continue
                known = templates.get(str(ref.get("name")))
                if known is not None and str(ref["request"]) not in known:
                    out.append(
                        Issue(
                            (*spec_path, fld, i, "resources", "claims", j, "request"),
                            f"request {ref['request']!r} is not a request of claim {ref.get('name')!r}",
                        )
                    )
    group = get_path(spec, ("schedulingGroup", "podGroupName"))
    if group and (namespace, str(group)) not in index.podgroups:
        out.append(
            Issue(
                (*spec_path, "schedulingGroup", "podGroupName"),
                f"PodGroup {group!r} is not among the inputs; it must exist",
                not strict_refs,
            )
        )
    wl = get_path(spec, ("workloadRef", "name"))
    if wl and (namespace, str(wl)) not in index.workloads:
        out.append(
            Issue(
                (*spec_path, "workloadRef", "name"),
                f"Workload {wl!r} is not among the inputs; it must exist",
                not strict_refs,
            )
        )
    return out
