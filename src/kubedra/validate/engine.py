"""``kubedra validate``: schema, DRA rules, quantities, CEL and references at a target version.

Chain (python-stack.md §3): strict OpenAPI schema per (version, kind) with a cached validator, then the
apiserver rules the schema cannot express (:mod:`kubedra.validate.rules`), quantities, CEL selectors
compiled in the target release's environment, and references between the inputs. The server-side
dry-run (``kubedra.validate.dryrun``) is the final authority when a cluster is available.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kubedra.errors import InputError
from kubedra.k8s.versions import DEFAULT_TARGET, require_supported
from kubedra.k8s.workloads import PodTemplate, api_group, dotted, get_path, pod_templates
from kubedra.migrate.nvidia import known_class_names
from kubedra.model.apiversions import Version
from kubedra.model.lifecycle import DeprecationDB
from kubedra.sources.files import Document, load, parse_text
from kubedra.validate.objects import duplicate_keys, object_issues
from kubedra.validate.rules import Issue, RuleChecker, pod_claim_issues
from kubedra.validate.schema import BUILTIN_GROUPS, NoSchema, SchemaValidator

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class ValidationError:
    file: str
    line: int | None
    api_version: str
    kind: str
    namespace: str | None
    name: str
    path: str
    message: str
    warning: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": {"file": self.file, "line": self.line},
            "object": {
                "apiVersion": self.api_version,
                "kind": self.kind,
                "namespace": self.namespace,
                "name": self.name,
            },
            "path": self.path,
            "message": self.message,
        }


@dataclass
class ValidationResult:
    target_version: str
    objects: int = 0
    errors: list[ValidationError] = field(default_factory=list)
    warnings: list[ValidationError] = field(default_factory=list)
    not_schema_checked: list[str] = field(default_factory=list)  # CRD kinds without a schema
    unreadable: list[ValidationError] = field(default_factory=list)  # files/documents that did not parse

    @property
    def valid(self) -> bool:
        return not self.errors and not self.unreadable

    def add_unreadable(self, errors: Iterable[InputError]) -> None:
        """Parse errors (malformed YAML, unrendered templates): reported with file:line, never validated."""
        for e in errors:
            loc = e.location
            self.unreadable.append(
                ValidationError(
                    loc.file if loc and loc.file else "<input>",
                    loc.line if loc else None,
                    "",
                    "",
                    None,
                    "",
                    "",
                    e.message,
                )
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "targetVersion": self.target_version,
            "objects": self.objects,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
            "notSchemaChecked": sorted(set(self.not_schema_checked)),
            "unreadable": [u.to_dict() for u in self.unreadable],
        }


def _minor(version: str) -> int:
    return require_supported(version, what="--target-version").minor


_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")


def _quantity_checker() -> Callable[[Any], str | None]:
    try:
        from kubedra.model.quantity import QuantityError, parse_quantity
    except ImportError:  # pragma: no cover - the model package is part of kubedra
        parse_quantity = None  # type: ignore[assignment]

    def check(value: Any) -> str | None:
        if value is None:
            return "quantity is required"
        if parse_quantity is not None:
            try:
                parse_quantity(value)
            except QuantityError as e:
                return f"invalid quantity {value!r}: {e}"
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return None
        if not isinstance(value, str) or not _QUANTITY_RE.match(value):
            return f"invalid quantity {value!r}"
        return None

    return check


@lru_cache(maxsize=8)
def _cel_environment(version: str) -> Any:
    try:
        from kubedra.cel import SelectorEnvironment  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    try:
        return SelectorEnvironment(target_version=version)
    except Exception:  # pragma: no cover - depends on the CEL helper
        return None


def _cel_checker(version: str) -> Callable[[str], str | None] | None:
    env = _cel_environment(version)
    if env is None:
        return None
    from kubedra.cel import CELCompileError  # type: ignore[attr-defined,unused-ignore]

    cache: dict[str, str | None] = {}

    def check(expr: str) -> str | None:
        if expr not in cache:
            try:
                env.compile(expr)
                cache[expr] = None
            except CELCompileError as e:
                cache[expr] = f"CEL: {e}"
        return cache[expr]

    return check


@lru_cache(maxsize=1)
def _lifecycle_db() -> DeprecationDB:
    return DeprecationDB.load()


def not_served(api: str, kind: str, minor: int) -> str | None:
    """Why the apiserver of 1.``minor`` has no such resource (removed, not yet served, never existed), with the
    version that removed it and what replaces it; None when the lifecycle data has nothing against it."""
    db = _lifecycle_db()
    at = Version(1, minor)
    entry = db.lookup(api, kind)
    if entry is None:
        if not db.never_served(api, kind):
            return None
        best = db.best_version(api_group(api), kind, at)
        use = f"; use {best.api_version} {kind}" if best else ""
        return f"{api} {kind}: no Kubernetes release serves this version{use}"
    if entry.served(at):
        return None
    if not entry.is_introduced(at):
        best = db.best_version(entry.group, kind, at)
        use = f"; use {best.api_version} {kind}" if best else ""
        return f"{api} {kind} is first served in {entry.introduced}, after 1.{minor}{use}"
    repl_api, repl_kind = db.replacement(entry, at)
    if repl_api is None:
        use = "; nothing replaces it (remove the object or its feature)"
    else:
        convert = ", which `kubedra migrate` converts" if entry.convertible == "kubedra-migrate" else ""
        use = f"; use {repl_api} {repl_kind}{convert}"
    if entry.classic_dra:
        use += " (classic DRA: no mechanical conversion, redesign the claim)"
    return f"{api} {kind} is not served by Kubernetes 1.{minor}: removed in {entry.removed}{use}"


def _templates_with_template_path(obj: Mapping[str, Any]) -> list[PodTemplate]:
    return pod_templates(obj) or []


class Validator:
    def __init__(self, target_version: str = DEFAULT_TARGET, *, strict_refs: bool = False) -> None:
        self.target_version = target_version
        self.minor = _minor(target_version)
        self.strict_refs = strict_refs
        self.schemas = SchemaValidator(f"1.{self.minor}")
        self.quantity = _quantity_checker()
        self.cel = _cel_checker(f"1.{self.minor}")

    # -- public ------------------------------------------------------------------------------------
    def validate(self, documents: Sequence[Document]) -> ValidationResult:
        result = ValidationResult(target_version=self.target_version)
        index = _Index(documents)
        if self.cel is None and index.has_selectors:
            result.warnings.append(
                ValidationError(
                    "", None, "", "", None, "", "", "CEL selectors were not compiled (kubedra.cel missing)"
                )
            )
        for doc in documents:
            result.objects += 1
            for line, message in duplicate_keys(doc._node):
                result.errors.append(
                    ValidationError(
                        doc.file, line, doc.api_version, doc.kind, doc.namespace, doc.name, "", message
                    )
                )
            for issue in self._document(doc, index, result):
                err = ValidationError(
                    file=doc.file,
                    line=doc.line_of(list(issue.path)),
                    api_version=doc.api_version,
                    kind=doc.kind,
                    namespace=doc.namespace,
                    name=doc.name,
                    path=dotted(issue.path),
                    message=issue.message,
                    warning=issue.warning,
                )
                (result.warnings if issue.warning else result.errors).append(err)
        result.errors.sort(key=lambda e: (e.file, e.line or 0))
        result.warnings.sort(key=lambda e: (e.file, e.line or 0))
        return result

    # -- one object --------------------------------------------------------------------------------
    def _document(self, doc: Document, index: _Index, result: ValidationResult) -> list[Issue]:
        obj = doc.obj
        api, kind = doc.api_version, doc.kind
        if not api or not kind:
            return [Issue((), "not a Kubernetes object: apiVersion and kind are required")]
        gone = not_served(api, kind, self.minor)
        if (
            gone is not None
        ):  # the apiserver refuses it before any schema: one error says why and what instead
            return [Issue(("apiVersion",), gone)]
        issues: list[Issue] = []
        group = api_group(api)
        builtin = group in BUILTIN_GROUPS
        if builtin:
            try:
                for e in self.schemas.errors(obj):
                    issues.append(Issue(e.path, e.message, e.warning))
            except NoSchema:
                return [Issue(("apiVersion",), f"{api} {kind} is not served by Kubernetes 1.{self.minor}")]
        else:
            result.not_schema_checked.append(f"{api} {kind}")
        issues.extend(self._served(api, kind))
        issues.extend(_server_fields(obj))
        issues.extend(_apiserver_basics(obj))
        issues.extend(object_issues(obj))
        if group == "admissionregistration.k8s.io" and kind == "ValidatingAdmissionPolicy":
            issues.extend(self._admission_cel(obj))
        checked: Mapping[str, Any] = obj
        if group == "resource.k8s.io" and api.rsplit("/", 1)[-1] in ("v1alpha3", "v1beta1"):
            checked = self._as_v1(obj)
        if group == "resource.k8s.io":
            issues.extend(RuleChecker(self.minor, self.quantity, self.cel).check(checked))
            issues.extend(self._class_refs(checked, index))
        templates = pod_templates(obj) or []
        for t in templates:
            spec = get_path(obj, t.spec)
            if not isinstance(spec, Mapping):
                continue
            if not builtin:
                template_path = t.metadata[:-1]
                template = get_path(obj, template_path)
                if isinstance(template, Mapping) and template_path:
                    for e in self.schemas.errors_as("podtemplatespec-v1.json", template):
                        issues.append(Issue((*template_path, *e.path), e.message, e.warning))
            issues.extend(pod_claim_issues(t.spec, spec))
            issues.extend(self._container_resources(t.spec, spec))
            issues.extend(self._pod_refs(t.spec, spec, doc.namespace, index))
        return issues

    def _as_v1(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        from kubedra.model import convert

        clone = copy.deepcopy(dict(obj))
        try:
            convert.upgrade_to_v1(clone, target_version=self.target_version)
        except Exception:  # the schema errors already say what is wrong with the shape
            return obj
        return clone

    def _admission_cel(self, obj: Mapping[str, Any]) -> list[Issue]:
        """Every CEL expression of a ValidatingAdmissionPolicy compiled as the apiserver does on create."""
        from kubedra.cel import CELCompileError
        from kubedra.cel.admission import admission_env, admission_expressions

        spec = obj.get("spec")
        if not isinstance(spec, Mapping):
            return []
        env = admission_env(f"1.{self.minor}")
        out: list[Issue] = []
        for path, text in admission_expressions(spec):
            if not isinstance(text, str) or not text.strip():
                out.append(Issue(path, "must be a non-empty CEL expression"))
                continue
            try:
                env.compile(text, estimate_cost=False)
            except CELCompileError as e:
                out.append(Issue(path, f"CEL: {str(e).splitlines()[0]}"))
        return out

    def _served(self, api: str, kind: str) -> list[Issue]:
        group = api_group(api)
        version = api.rsplit("/", 1)[-1]
        if group == "resource.k8s.io" and version != "v1":
            entry = _lifecycle_db().lookup(api, kind)
            if entry is not None:  # the same sentence audit says (model.lifecycle.Lifecycle.story)
                convert = "; kubedra migrate converts it" if entry.convertible == "kubedra-migrate" else ""
                story = entry.story(Version(1, self.minor))
                return [Issue(("apiVersion",), f"{api} {kind}: {story}{convert}", True)]
        if group == "scheduling.k8s.io" and version != "v1":
            return [
                Issue(
                    ("apiVersion",),
                    f"{api} {kind} needs the GenericWorkload feature gate (off by default) and --runtime-config",
                    True,
                )
            ]
        return []

    def _class_refs(self, obj: Mapping[str, Any], index: _Index) -> list[Issue]:
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
                            not self.strict_refs,
                        )
                    )
        return out

    def _container_resources(self, spec_path: Path, spec: Mapping[str, Any]) -> list[Issue]:
        out: list[Issue] = []
        for fld in ("initContainers", "containers"):
            items = spec.get(fld)
            for i, c in enumerate(items if isinstance(items, list) else []):
                res = c.get("resources") if isinstance(c, Mapping) else None
                if not isinstance(res, Mapping):
                    continue
                values: dict[str, dict[str, Any]] = {}
                for section in ("requests", "limits"):
                    sec = res.get(section)
                    for name, v in sec.items() if isinstance(sec, Mapping) else []:
                        p: Path = (*spec_path, fld, i, "resources", section, str(name))
                        e = self.quantity(v) or _negative(v)
                        if e:
                            out.append(Issue(p, e))
                            continue
                        values.setdefault(str(name), {})[section] = v
                for name, secs in values.items():
                    if "/" not in name or name.split("/")[0].endswith("kubernetes.io"):
                        continue
                    p = (*spec_path, fld, i, "resources", "limits" if "limits" in secs else "requests", name)
                    if not all(_whole(v) is not None for v in secs.values()):
                        out.append(Issue(p, f"extended resource {name} must be a whole number"))
                    elif len(secs) == 2 and _whole(secs["requests"]) != _whole(secs["limits"]):
                        out.append(Issue(p, f"extended resource {name}: requests must equal limits"))
                    elif "limits" not in secs and self.minor < 36:
                        out.append(Issue(p, f"extended resource {name}: limits must be set"))
        return out

    def _pod_refs(
        self, spec_path: Path, spec: Mapping[str, Any], ns: str | None, index: _Index
    ) -> list[Issue]:
        out: list[Issue] = []
        namespace = ns or ""
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
                            f"{namespace or 'default'}); it must exist before the pods",
                            not self.strict_refs,
                        )
                    )
                templates[str(c.get("name"))] = index.templates.get(key)
            elif cname:
                key = (namespace, str(cname))
                if key not in index.claims:
                    out.append(
                        Issue(
                            (*p, "resourceClaimName"),
                            f"ResourceClaim {cname!r} is not among the inputs (namespace {namespace or 'default'}); "
                            "it must exist before the pods",
                            not self.strict_refs,
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
                    not self.strict_refs,
                )
            )
        wl = get_path(spec, ("workloadRef", "name"))
        if wl and (namespace, str(wl)) not in index.workloads:
            out.append(
                Issue(
                    (*spec_path, "workloadRef", "name"),
                    f"Workload {wl!r} is not among the inputs; it must exist",
                    not self.strict_refs,
                )
            )
        return out


def _apiserver_basics(obj: Mapping[str, Any]) -> list[Issue]:
    """What the apiserver refuses in any object and in every pod template, beyond the OpenAPI schema (found on the
    real-world corpus with a server dry-run): a namespace that is not a DNS label ("FILLED BY THE OPERATOR"), a
    serviceAccountName that is not a DNS subdomain ("$K8S_SA_NAME"), a container without an image, and a Job
    template whose restartPolicy is not OnFailure or Never."""
    from kubedra.validate.rules import dns_label, dns_subdomain

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
            for i, c in enumerate(spec.get(fld) or []):
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


_SERVER_FIELDS = ("resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")


def _server_fields(obj: Mapping[str, Any]) -> list[Issue]:
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
    present = [f for f in _SERVER_FIELDS if meta.get(f) not in (None, "", [])]
    if present:
        out.append(
            Issue(
                ("metadata",),
                f"server-populated metadata ({', '.join(present)}); remove it before applying",
                True,
            )
        )
    return out


def _negative(v: Any) -> str | None:
    """The apiserver's ValidateResourceQuantityValue: a request or limit below zero is refused."""
    from kubedra.model.quantity import QuantityError, parse_quantity

    try:
        negative = parse_quantity(v).sign() < 0
    except QuantityError:
        return None
    return f"{v!r}: must be greater than or equal to 0" if negative else None


def _whole(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


KNOWN_CLASSES = frozenset(known_class_names())


class _Index:
    """What the inputs define, for reference checks."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.classes: set[str] = set()
        self.templates: dict[tuple[str, str], set[str]] = {}
        self.claims: dict[tuple[str, str], set[str]] = {}
        self.podgroups: set[tuple[str, str]] = set()
        self.workloads: set[tuple[str, str]] = set()
        self.has_selectors = False
        for d in documents:
            ns = d.namespace or ""
            group = api_group(d.api_version)
            if "selectors" in str(d.obj.get("spec", "")):
                self.has_selectors = True
            if group == "resource.k8s.io":
                if d.kind == "DeviceClass":
                    self.classes.add(d.name)
                elif d.kind == "ResourceClaimTemplate":
                    self.templates[(ns, d.name)] = _request_names(get_path(d.obj, ("spec", "spec")))
                elif d.kind == "ResourceClaim":
                    self.claims[(ns, d.name)] = _request_names(d.obj.get("spec"))
            elif group == "scheduling.k8s.io":
                if d.kind == "PodGroup":
                    self.podgroups.add((ns, d.name))
                elif d.kind == "Workload":
                    self.workloads.add((ns, d.name))


def _request_names(spec: Any) -> set[str]:
    requests = get_path(spec, ("devices", "requests")) if isinstance(spec, Mapping) else None
    return {str(r.get("name")) for r in requests or [] if isinstance(r, Mapping)}


def validate_documents(
    documents: Sequence[Document], target_version: str = DEFAULT_TARGET, **kw: Any
) -> ValidationResult:
    return Validator(target_version, **kw).validate(documents)


def validate_texts(
    texts: Iterable[tuple[str, str]], target_version: str = DEFAULT_TARGET, **kw: Any
) -> ValidationResult:
    docs: list[Document] = []
    for name, text in texts:
        parsed = parse_text(text, name)
        if parsed.errors:
            raise parsed.errors[0]
        docs.extend(parsed.documents)
    return validate_documents(docs, target_version, **kw)


def validate_paths(paths: Iterable[str], target_version: str = DEFAULT_TARGET, **kw: Any) -> ValidationResult:
    return validate_documents(load(paths, strict=True).documents, target_version, **kw)
