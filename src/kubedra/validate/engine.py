"""``kubedra validate``: schema, DRA rules, quantities, CEL and references at a target version.

Chain: strict OpenAPI schema per (version, kind) with a cached validator, then the
apiserver rules the schema cannot express (:mod:`kubedra.validate.rules`), quantities, CEL selectors
compiled in the target release's environment, and references between the inputs. The server-side
dry-run (``kubedra.validate.dryrun``) is the final authority when a cluster is available.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from kubedra import vendors
from kubedra.cel import CELCompileError, SelectorEnvironment, published
from kubedra.cel.admission import admission_env, admission_expressions
from kubedra.errors import Location
from kubedra.k8s import versions
from kubedra.k8s.findings import Finding
from kubedra.k8s.podadmission import resource_issues
from kubedra.k8s.quantity import Quantity, QuantityError, QuantityNotModelled, parse_quantity
from kubedra.k8s.quantityread import unmodelled_string
from kubedra.k8s.versions import DEFAULT_TARGET, Version, require_supported
from kubedra.k8s.workloads import api_group, get_path, pod_templates
from kubedra.model import convert
from kubedra.model.identity import duplicate_message, duplicates, key_of
from kubedra.sources.files import Document, load, parse_text
from kubedra.text import value_kind
from kubedra.validate import crdschema
from kubedra.validate.basics import apiserver_basics, negative, server_fields
from kubedra.validate.dropped import drop_disabled
from kubedra.validate.objects import duplicate_keys, object_issues
from kubedra.validate.refs import KNOWN_CLASSES, Index, class_refs, pod_refs
from kubedra.validate.result import ValidationResult, doc_finding, doc_ref
from kubedra.validate.rules import Issue, RuleChecker, pod_claim_issues
from kubedra.validate.schema import BUILTIN_GROUPS, NoSchema, SchemaValidator
from kubedra.validate.served import not_served, served_warnings

__all__ = [
    "KNOWN_CLASSES",
    "ValidationResult",
    "Validator",
    "not_served",
    "validate_documents",
    "validate_paths",
    "validate_texts",
]

Path = tuple[str | int, ...]


def _minor(version: str) -> int:
    return require_supported(version, what="--target-version").minor


# How a quantity the decoder refuses (resource.Quantity UnmarshalJSON) is reported: such a value is refused even in
# a field the apiserver then drops (it decodes the request before dropDisabledFields).
BAD_QUANTITY = "invalid quantity "
# How a quantity kubedra does not model (kubedra.k8s.quantity.QuantityNotModelled: past 10^10000, more than 4,000
# digits) is reported: a warning that the value was not checked, never an error the apiserver may not raise.
CANNOT_CHECK = "cannot check quantity "


def _quantity_checker(release: str) -> Callable[[Any], str | None]:
    since_138 = versions.holds("quantity.nineteenDigitInt64", release)

    def check(value: Any) -> str | None:
        if value is None:
            return "quantity is required"
        try:
            parse_quantity(value)
        except QuantityNotModelled as e:
            if since_138 and isinstance(value, str):
                try:  # v0.38 refuses what v0.37 wraps (1e-2147483648) and bounds the rest the same way
                    Quantity.parse(value, True)
                except QuantityNotModelled:
                    pass
                except QuantityError as refused:
                    return f"{BAD_QUANTITY}{value!r}: {refused}"
            stored = unmodelled_string(value, since_138) if isinstance(value, str) else None
            kept = "" if stored is None else f", as {stored!r}"
            return f"{e} (ParseQuantity accepts it{kept}; the apiserver's rules on its value are not checked)"
        except QuantityError as e:
            return f"{BAD_QUANTITY}{value!r}: {e}"
        return None

    return check


@lru_cache(maxsize=8)
def _cel_environment(version: str) -> Any:
    # no fallback: an environment that cannot be built is a kubedra bug (cel-expr-python is a dependency),
    # and validating without compiling the selectors said "valid" with exit 0 about selectors never checked
    return SelectorEnvironment(target_version=version)


def _cel_checker(version: str) -> Callable[[str], str | None]:
    env = _cel_environment(version)
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


def published_checker(version: str, driver_version: str | None) -> Callable[[str], list[tuple[str, bool]]]:
    """Each selector against what each vendor's DRA driver publishes (:mod:`kubedra.cel.published`,
    :meth:`kubedra.vendors.base.Vendor.published_releases`), at ``driver_version`` or, None, at every release
    kubedra has read: (message, is warning) pairs."""
    env = _cel_environment(version)
    per_vendor = []
    for v in vendors.all():
        tables, hints = v.published_releases(driver_version)
        if tables:
            per_vendor.append(({label: published.kinds_from(t) for label, t in tables.items()}, hints))
    cache: dict[str, list[tuple[str, bool]]] = {}

    def check(expr: str) -> list[tuple[str, bool]]:
        if expr not in cache:
            try:
                program = env.compile(expr).program
            except CELCompileError:
                return []  # the compile error is reported already
            cache[expr] = [
                (p.message, p.warning)
                for releases, hints in per_vendor
                for p in published.check_releases(program.source.expr, releases, hints=hints)
            ]
        return cache[expr]

    return check


class Validator:
    def __init__(
        self,
        target_version: str = DEFAULT_TARGET,
        *,
        strict_refs: bool = False,
        driver_version: str | None = None,
    ) -> None:
        self.target_version = target_version
        self.minor = _minor(target_version)
        self.strict_refs = strict_refs
        self.schemas = SchemaValidator(f"1.{self.minor}")
        self.quantity = _quantity_checker(f"1.{self.minor}")
        self.cel = _cel_checker(f"1.{self.minor}")
        self.published = published_checker(f"1.{self.minor}", driver_version)

    # -- public ------------------------------------------------------------------------------------
    def validate(self, documents: Sequence[Document]) -> ValidationResult:
        result = ValidationResult(target_version=self.target_version)
        index = Index(documents, f"1.{self.minor}")
        for doc in documents:
            result.objects += 1
            for line, message in duplicate_keys(doc._node):
                result.errors.append(
                    Finding(
                        severity="error",
                        message=message,
                        object=doc_ref(doc),
                        source=Location(file=doc.file, line=line),
                        path="",
                    )
                )
            for issue in self._document(doc, index, result):
                err = doc_finding(
                    doc,
                    issue.path,
                    issue.message,
                    severity="warning" if issue.warning else "error",
                    rule=issue.rule,
                )
                (result.warnings if issue.warning else result.errors).append(err)
        keyed = [(key, d) for key, d in ((key_of(d), d) for d in documents) if key is not None]
        for group in duplicates((key, d.location, (key, d)) for key, d in keyed):
            where = [w for w, _ in group]
            key, first = group[0][1]
            result.warnings.append(
                Finding(
                    severity="warning",
                    message=duplicate_message(first.kind, key, where),
                    object=doc_ref(first),
                    source=where[0],
                    path="",
                )
            )
        result.errors.sort(key=lambda e: (e.file, e.line or 0))
        result.warnings.sort(key=lambda e: (e.file, e.line or 0))
        return result

    # -- one object --------------------------------------------------------------------------------
    def _document(self, doc: Document, index: Index, result: ValidationResult) -> list[Issue]:  # noqa: C901 - the ordered gates of one document, each of which may end it
        obj = doc.obj
        for field in ("apiVersion", "kind"):  # kubectl reads a non-string as missing
            if field in obj and obj[field] is not None and not isinstance(obj[field], str):
                return [Issue((field,), f"{field} is {value_kind(obj[field])}, not a string")]
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
        bundled = not builtin and crdschema.known(group, kind)
        if bundled:  # a custom resource of a kind whose CRD kubedra bundles: checked as its apiserver does
            issues.extend(crdschema.issues(obj, group, kind, f"1.{self.minor}"))
            against = crdschema.checked_against(obj, group, kind)
            if against is not None:
                result.crd_schemas[f"{api} {kind}"] = against
            if any(i.path == ("apiVersion",) and not i.warning for i in issues):
                return issues  # a version the CRD does not serve: refused before any schema
        elif builtin:
            try:
                for e in self.schemas.errors(obj):
                    issues.append(Issue(e.path, e.message, e.warning))
            except NoSchema:
                return [Issue(("apiVersion",), f"{api} {kind} is not served by Kubernetes 1.{self.minor}")]
        else:
            result.not_schema_checked.append(f"{api} {kind}")
        issues.extend(served_warnings(api, kind, self.minor))
        issues.extend(server_fields(obj))
        issues.extend(apiserver_basics(obj))
        issues.extend(object_issues(obj))
        if group == "admissionregistration.k8s.io" and kind == "ValidatingAdmissionPolicy":
            issues.extend(self._admission_cel(obj))
        checked: Mapping[str, Any] = obj
        if group == "resource.k8s.io" and api.rsplit("/", 1)[-1] in ("v1alpha3", "v1beta1"):
            checked = self._as_v1(obj)
        if group == "resource.k8s.io":
            dropped = drop_disabled(checked, Version(1, self.minor))
            issues.extend(dropped.warnings)
            if dropped.paths:
                # the apiserver decodes a dropped field, and refuses a malformed quantity in it, before the drop
                issues.extend(
                    i
                    for i in RuleChecker(self.minor, self.quantity, None).check(checked)
                    if dropped.holds(i.path) and i.message.startswith(BAD_QUANTITY)
                )
            checked = dropped.obj
            issues.extend(RuleChecker(self.minor, self.quantity, self.cel, self.published).check(checked))
            issues.extend(class_refs(checked, index, strict_refs=self.strict_refs))
        templates = pod_templates(obj) or []
        for t in templates:
            spec = get_path(obj, t.spec)
            if not isinstance(spec, Mapping):
                continue
            if not builtin and not bundled:  # no CRD schema: at least the pod template against Kubernetes'
                template_path = t.metadata[:-1]
                template = get_path(obj, template_path)
                if isinstance(template, Mapping) and template_path:
                    for e in self.schemas.errors_as("podtemplatespec-v1.json", template):
                        issues.append(Issue((*template_path, *e.path), e.message, e.warning))
            issues.extend(pod_claim_issues(t.spec, spec))
            issues.extend(self._container_resources(t.spec, spec))
            issues.extend(pod_refs(t.spec, spec, doc.namespace, index, strict_refs=self.strict_refs))
        return [
            dataclasses.replace(i, warning=True) if i.message.startswith(CANNOT_CHECK) else i for i in issues
        ]

    def _as_v1(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        clone = copy.deepcopy(dict(obj))
        try:
            convert.upgrade_to_v1(clone, target_version=self.target_version)
        except Exception:  # noqa: BLE001 - a shape convert cannot read: the schema errors already say what is wrong
            return obj
        return clone

    def _admission_cel(self, obj: Mapping[str, Any]) -> list[Issue]:
        """Every CEL expression of a ValidatingAdmissionPolicy compiled as the apiserver does on create."""
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

    def _container_resources(self, spec_path: Path, spec: Mapping[str, Any]) -> list[Issue]:
        out: list[Issue] = []
        for fld in ("initContainers", "containers"):
            items = spec.get(fld)
            for i, c in enumerate(items if isinstance(items, list) else []):
                res = c.get("resources") if isinstance(c, Mapping) else None
                if not isinstance(res, Mapping):
                    continue
                for section in ("requests", "limits"):
                    sec = res.get(section)
                    for name, v in sec.items() if isinstance(sec, Mapping) else []:
                        p: Path = (*spec_path, fld, i, "resources", section, str(name))
                        e = negative(v) or self.quantity(v)  # a huge negative is refused, not unchecked
                        if e:
                            out.append(Issue(p, e))
                # the apiserver's ValidateResourceRequirements, shared with simulate (kubedra.k8s.podadmission)
                out.extend(
                    Issue(p, why)
                    for p, why in resource_issues(res, (*spec_path, fld, i, "resources"), f"1.{self.minor}")
                )
        return out


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
