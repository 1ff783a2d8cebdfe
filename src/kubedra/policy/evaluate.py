"""Offline evaluation of ValidatingAdmissionPolicies against manifests, as if each object were created.

Follows the apiserver's admission flow for one request (operation CREATE, ``oldObject`` null):
policy ``matchConstraints`` (resourceRules incl. operations, excludeResourceRules, namespaceSelector,
objectSelector) -> each binding's ``matchResources`` -> params from ``paramRef`` (``parameterNotFoundAction``)
-> ``matchConditions`` (all must be true) -> ``variables`` in order (``variables.<name>``) -> every
validation; a false result is a violation with ``messageExpression``/``message``; an evaluation error
follows ``failurePolicy`` (Fail: violation, Ignore: skipped). The binding's ``validationActions`` say
whether the apiserver would deny, warn or audit.

CEL runs in kubedra's Kubernetes CEL environment for the target release (``kubedra.cel.build_env``), with
``object``, ``oldObject``, ``params``, ``namespaceObject``, ``request`` and ``variables`` (all dyn).
``authorizer`` is not available offline.

A namespaced object's Namespace is read from the manifests under test. When it is not among them, only its
``kubernetes.io/metadata.name`` label is known: a ``namespaceSelector`` that reads another label, or an
expression that reads ``namespaceObject``, cannot be decided, and the object gets an *undecided* verdict
naming the Namespace to add, never a silent "no match".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.cel import CELCompileError
from kubedra.cel.admission import admission_env
from kubedra.cel.checks import clean_status
from kubedra.errors import InputError, Location
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.k8s.workloads import api_group, dotted
from kubedra.model.identity import CLUSTER_SCOPED
from kubedra.model.labelselector import SelectorError, label_selector_matches, parse_label_selector
from kubedra.sources.files import Document
from kubedra.text import value_kind

ADMISSION_GROUP = "admissionregistration.k8s.io"

_IRREGULAR = {"Endpoints": "endpoints", "Ingress": "ingresses"}


def resource_of(kind: str) -> str:
    """The REST resource (plural, lower case) of a kind, like the RESTMapper's default guess."""
    if kind in _IRREGULAR:
        return _IRREGULAR[kind]
    k = kind.lower()
    if k.endswith("y") and not k.endswith(("ay", "ey", "oy", "uy")):
        return k[:-1] + "ies"
    if k.endswith(("s", "x", "z", "ch", "sh")):
        return k + "es"
    return k + "s"


@dataclass
class Verdict:
    document: Document
    policy: str
    binding: str | None
    actions: list[str]
    message: str
    reason: str = "Invalid"
    error: bool = False  # an evaluation error handled by failurePolicy Fail
    undecided: bool = False  # the answer depends on a Namespace that is not among the inputs

    @property
    def outcome(self) -> str:
        if self.undecided:
            return "undecided"
        if "Deny" in self.actions:
            return "denied"
        if "Warn" in self.actions:
            return "warned"
        return "audited"

    def to_dict(self) -> dict[str, Any]:
        d = self.document
        return {
            "source": {"file": d.file, "line": d.line},
            "object": {"apiVersion": d.api_version, "kind": d.kind, "namespace": d.namespace, "name": d.name},
            "policy": self.policy,
            "binding": self.binding,
            "validationActions": self.actions,
            "outcome": self.outcome,
            "reason": self.reason,
            "message": self.message,
        }


# --- label selectors ---------------------------------------------------------------------------------
_SELECTORS = {  # the metav1.LabelSelectors of each kind, which the apiserver validates on create
    "ValidatingAdmissionPolicy": (
        ("spec", "matchConstraints", "namespaceSelector"),
        ("spec", "matchConstraints", "objectSelector"),
    ),
    "ValidatingAdmissionPolicyBinding": (
        ("spec", "matchResources", "namespaceSelector"),
        ("spec", "matchResources", "objectSelector"),
        ("spec", "paramRef", "selector"),
    ),
}


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics (:mod:`kubedra.model.labelselector`); a missing selector matches
    everything, like the empty one the apiserver defaults it to. Selectors were checked by
    :func:`check_selectors` when the policy was loaded."""
    if selector is None:
        return True
    return label_selector_matches(selector, labels)


def check_selectors(doc: Document) -> None:
    """:class:`InputError` at the field when a label selector of the policy or binding ``doc`` is invalid: the
    apiserver refuses such an object, so it never selects anything."""
    for path in _SELECTORS.get(doc.kind, ()):
        value: Any = doc.obj
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        if value is None:
            continue
        try:
            if not isinstance(value, Mapping):
                raise SelectorError(f"is {value_kind(value)}, not a label selector")
            parse_label_selector(value)
        except SelectorError as e:
            where = (*path, *e.path)
            raise InputError(
                f"{doc.kind} {doc.name}: {dotted(where)}: {e}: the API server refuses this {doc.kind}",
                Location(doc.file, doc.line_of(where)),
            ) from None


def _rule_matches(rule: Mapping[str, Any], group: str, version: str, resource: str, namespaced: bool) -> bool:
    def has(items: Any, value: str) -> bool:
        items = list(items or [])
        return "*" in items or value in items

    if not has(rule.get("operations"), "CREATE"):
        return False
    if not has(rule.get("apiGroups"), group) or not has(rule.get("apiVersions"), version):
        return False
    resources = [r for r in rule.get("resources") or [] if "/" not in r or r.endswith("/*") or r == "*/*"]
    if not any(r in ("*", "*/*", resource) or r == f"{resource}/*" for r in resources):
        return False
    scope = rule.get("scope") or "*"
    return scope == "*" or (scope == "Namespaced") == namespaced


def undecodable(obj: Mapping[str, Any]) -> tuple[tuple[str, ...], str] | None:
    """(path, why) when the API server cannot decode ``obj``'s metadata into an ObjectMeta (a metadata, labels
    or annotations that is not a mapping): such an object never reaches admission; None otherwise."""
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, Mapping):
        return ("metadata",), f"metadata is {value_kind(meta)}, not a mapping"
    for name in ("labels", "annotations"):
        value = meta.get(name) if meta else None
        if value is not None and not isinstance(value, Mapping):
            return ("metadata", name), f"metadata.{name} is {value_kind(value)}, not a mapping"
    return None


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return {str(k): str(v) for k, v in (labels or {}).items()}


@dataclass
class _Target:
    doc: Document
    group: str
    version: str
    resource: str
    namespaced: bool
    namespace: str | None
    namespace_object: dict[str, Any] | None
    namespace_known: bool = (
        True  # False: the Namespace is not among the inputs (only its name label is known)
    )


NAME_LABEL = "kubernetes.io/metadata.name"  # the one label the apiserver sets on every Namespace


def _selector_undecided(selector: Any, name: str) -> bool:
    """Whether ``selector`` decides on labels of Namespace ``name`` beyond its name label, which are unknown
    when the Namespace is not among the inputs. A requirement on the name label that fails decides (no
    match) whatever the other labels are."""
    if not isinstance(selector, Mapping):
        return False
    keys = [str(k) for k in (selector.get("matchLabels") or {})]
    keys += [str(e.get("key")) for e in selector.get("matchExpressions") or [] if isinstance(e, Mapping)]
    if all(k == NAME_LABEL for k in keys):
        return False
    on_name = {
        "matchLabels": {k: v for k, v in (selector.get("matchLabels") or {}).items() if str(k) == NAME_LABEL},
        "matchExpressions": [
            e
            for e in selector.get("matchExpressions") or []
            if isinstance(e, Mapping) and str(e.get("key")) == NAME_LABEL
        ],
    }
    return selector_matches(on_name, {NAME_LABEL: name})


def _namespace_undecided(constraints: Any, t: _Target) -> bool:
    """Whether the namespaceSelector of ``constraints`` cannot be decided for ``t`` (its Namespace unknown)."""
    if t.namespace_known or t.namespace is None or (t.doc.kind == "Namespace" and t.group == ""):
        return False
    c = constraints if isinstance(constraints, Mapping) else {}
    return _selector_undecided(c.get("namespaceSelector"), t.namespace)


def _resources_match(constraints: Any, t: _Target, *, rules_required: bool) -> bool | None:
    """Whether ``constraints`` match ``t``; None when only the labels of its Namespace, which is not among
    the inputs, decide."""
    c = constraints if isinstance(constraints, Mapping) else {}
    rules = c.get("resourceRules") or []
    matched = any(_rule_matches(r, t.group, t.version, t.resource, t.namespaced) for r in rules)
    if (rules or rules_required) and not matched:
        return False
    if any(
        _rule_matches(r, t.group, t.version, t.resource, t.namespaced)
        for r in c.get("excludeResourceRules") or []
    ):
        return False
    if t.doc.kind == "Namespace" and t.group == "":
        ns_labels: dict[str, str] | None = _labels(t.doc.obj)
    elif t.namespaced:
        ns_labels = _labels(t.namespace_object)
    else:
        ns_labels = None  # cluster-scoped: the namespace selector does not apply
    if not selector_matches(c.get("objectSelector"), _labels(t.doc.obj)):
        return False
    if _namespace_undecided(c, t):
        return None
    return ns_labels is None or selector_matches(c.get("namespaceSelector"), ns_labels)


# --- CEL ------------------------------------------------------------------------------------------------
def _env(version: str) -> Any:
    return admission_env(version)


class _Error:
    def __init__(self, message: str) -> None:
        self.message = message


def _clean(message: str) -> str:

    text = clean_status(message)
    m = re.match(r'Key not found in map ?: ?"?([^"]*)"?', text)
    return f"no such key: {m.group(1)}" if m else text


@dataclass
class _Compiled:
    text: str
    program: Any
    where: Location


@dataclass
class Policy:
    document: Document
    name: str
    spec: Mapping[str, Any]
    match_conditions: list[tuple[str, _Compiled]] = field(default_factory=list)
    variables: list[tuple[str, _Compiled]] = field(default_factory=list)
    validations: list[tuple[Mapping[str, Any], _Compiled, _Compiled | None]] = field(default_factory=list)

    @property
    def reads_namespace(self) -> bool:
        """Whether a match condition, variable or validation reads ``namespaceObject`` (a message does not
        decide)."""
        texts = [c.text for _, c in (*self.match_conditions, *self.variables)]
        texts += [c.text for _, c, _ in self.validations]
        return any(re.search(r"\bnamespaceObject\b", t) for t in texts)


class Evaluator:
    def __init__(self, policy_documents: Sequence[Document], target_version: str = DEFAULT_TARGET) -> None:
        self.version = target_version
        self.env = _env(target_version)
        self.policies: dict[str, Policy] = {}
        self.bindings: list[Document] = []
        self.params: list[Document] = []
        for d in policy_documents:
            group = api_group(d.api_version)
            if group == ADMISSION_GROUP and d.kind == "ValidatingAdmissionPolicy":
                check_selectors(d)
                self.policies[d.name] = self._compile_policy(d)
            elif group == ADMISSION_GROUP and d.kind == "ValidatingAdmissionPolicyBinding":
                _shaped(d)
                check_selectors(d)
                self.bindings.append(d)
            else:
                self.params.append(d)
        if not self.policies:
            raise InputError("no ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) in --policy")

    def add_params(self, documents: Iterable[Document]) -> None:
        self.params.extend(documents)

    # -- compile -----------------------------------------------------------------------------------
    def _compile(self, doc: Document, path: list[str | int], text: Any) -> _Compiled:

        where = Location(doc.file, doc.line_of(path))
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{doc.kind} {doc.name}: {dotted(tuple(path))} must be a CEL expression", where)
        try:
            program = self.env.compile(text, estimate_cost=False)
        except CELCompileError as e:  # one line: the field and the compiler's first line (no caret diagram)
            first = next((ln.strip() for ln in str(e).splitlines() if ln.strip()), "does not compile")
            raise InputError(
                f"{doc.kind} {doc.name}: {dotted(tuple(path))} does not compile: {first}", where
            ) from e
        return _Compiled(text, program, where)

    def _compile_policy(self, doc: Document) -> Policy:
        spec = _shaped(doc)
        p = Policy(doc, doc.name, spec)
        for i, mc in enumerate(spec.get("matchConditions") or []):
            p.match_conditions.append(
                (
                    str(mc.get("name")),
                    self._compile(doc, ["spec", "matchConditions", i, "expression"], mc.get("expression")),
                )
            )
        for i, v in enumerate(spec.get("variables") or []):
            p.variables.append(
                (
                    str(v.get("name")),
                    self._compile(doc, ["spec", "variables", i, "expression"], v.get("expression")),
                )
            )
        for i, v in enumerate(spec.get("validations") or []):
            expr = self._compile(doc, ["spec", "validations", i, "expression"], v.get("expression"))
            msg = (
                self._compile(
                    doc, ["spec", "validations", i, "messageExpression"], v.get("messageExpression")
                )
                if v.get("messageExpression")
                else None
            )
            p.validations.append((v, expr, msg))
        if not p.validations:
            raise InputError(
                f"ValidatingAdmissionPolicy {doc.name} has no validations", Location(doc.file, doc.line)
            )
        return p

    # -- evaluate ----------------------------------------------------------------------------------
    def evaluate(self, documents: Sequence[Document], default_namespace: str = "default") -> list[Verdict]:
        namespaces = {d.name: d.obj for d in documents if d.kind == "Namespace" and d.api_version == "v1"}
        verdicts: list[Verdict] = []
        for doc in documents:
            if not doc.api_version or not doc.kind:
                continue
            why = undecodable(doc.obj)
            if why is not None:
                raise InputError(
                    f"{doc.describe()}: {why[1]}: the API server refuses the object before any admission policy "
                    "sees it",
                    Location(doc.file, doc.line_of(why[0])),
                )
            target = self._target(doc, namespaces, default_namespace)
            for policy in self.policies.values():
                verdicts.extend(self._policy(policy, target))
        return verdicts

    def _target(self, doc: Document, namespaces: Mapping[str, Any], default_ns: str) -> _Target:
        api = doc.api_version
        group = api_group(api)
        version = api.rsplit("/", 1)[-1]
        namespaced = doc.kind not in CLUSTER_SCOPED
        ns = (doc.namespace or default_ns) if namespaced else None
        ns_obj: dict[str, Any] | None = None
        known = ns is None or ns in namespaces
        if ns is not None:
            base = namespaces.get(ns) or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            ns_obj = dict(base)
            meta = dict(ns_obj.get("metadata") or {})
            labels = dict(meta.get("labels") or {})
            labels.setdefault("kubernetes.io/metadata.name", ns)  # set by the apiserver on every namespace
            meta["labels"] = labels
            ns_obj["metadata"] = meta
        return _Target(doc, group, version, resource_of(doc.kind), namespaced, ns, ns_obj, known)

    def _undecided(self, policy: Policy, t: _Target, binding: str | None, why: str) -> Verdict:
        return Verdict(
            t.doc,
            policy.name,
            binding,
            [],
            f"not decided: {why} of Namespace {t.namespace}, which is not among the inputs; "
            f"add the Namespace {t.namespace} object to them",
            "Undecided",
            undecided=True,
        )

    def _policy(self, policy: Policy, t: _Target) -> list[Verdict]:
        matched = _resources_match(policy.spec.get("matchConstraints"), t, rules_required=True)
        if matched is None:
            return [self._undecided(policy, t, None, "the policy's namespaceSelector reads the labels")]
        if not matched:
            return []
        out: list[Verdict] = []
        bindings: list[tuple[str | None, Mapping[str, Any]]] = [
            (b.name, b.obj.get("spec") or {})
            for b in self.bindings
            if (b.obj.get("spec") or {}).get("policyName") == policy.name
        ]
        if not bindings:  # an unbound policy does nothing in a cluster; test it as if bound with Deny
            bindings = [(None, {"validationActions": ["Deny"]})]
        for name, bspec in bindings:
            matched = _resources_match(bspec.get("matchResources"), t, rules_required=False)
            if matched is None:
                out.append(
                    self._undecided(policy, t, name, "the binding's namespaceSelector reads the labels")
                )
                continue
            if not matched:
                continue
            if policy.reads_namespace and not t.namespace_known and t.namespace is not None:
                out.append(self._undecided(policy, t, name, "the policy's expressions read the object"))
                continue
            actions = [str(a) for a in bspec.get("validationActions") or []]
            for params, missing in self._params(policy, bspec, t):
                if missing:
                    out.append(Verdict(t.doc, policy.name, name, actions, missing, "Invalid"))
                    continue
                out.extend(self._run(policy, t, params, name, actions))
        return out

    def _params(self, policy: Policy, bspec: Mapping[str, Any], t: _Target) -> list[tuple[Any, str]]:
        kind = policy.spec.get("paramKind")
        if not isinstance(kind, Mapping):
            return [(None, "")]
        ref = bspec.get("paramRef") or {}
        found: list[Any] = []
        for d in self.params:
            if d.api_version != kind.get("apiVersion") or d.kind != kind.get("kind"):
                continue
            want_ns = ref.get("namespace") or t.namespace
            if d.kind not in CLUSTER_SCOPED and (d.namespace or "default") != (want_ns or "default"):
                continue
            if ref.get("name") and d.name != ref.get("name"):
                continue
            if not ref.get("name") and not selector_matches(ref.get("selector"), _labels(d.obj)):
                continue
            found.append(d.obj)
        if found:
            return [(p, "") for p in found]
        if ref.get("parameterNotFoundAction") == "Allow":
            return []
        what = f"{kind.get('kind')} {ref.get('name') or ref.get('selector')}"
        return [(None, f"failed to configure binding: no params found ({what}; give it with --params)")]

    def _eval(self, c: _Compiled, activation_data: dict[str, Any]) -> Any:
        try:
            value = c.program.eval(self.env.runtime.Activation(activation_data))
        except Exception as e:  # noqa: BLE001  # pragma: no cover - the runtime reports errors as values; any other is shown as the verdict's error
            return _Error(str(e))
        if str(value.type()) in ("ERROR", "Type.ERROR") or getattr(value.type(), "name", "") == "ERROR":
            return _Error(_clean(str(value)))
        try:
            return value.plain_value()
        except Exception:  # noqa: BLE001 - a value with no plain Python form (a type, a map with odd keys): the CEL value
            return value.value()

    def _run(  # noqa: C901 - the apiserver's admission steps for one request, in their order
        self, policy: Policy, t: _Target, params: Any, binding: str | None, actions: list[str]
    ) -> list[Verdict]:
        fail = (policy.spec.get("failurePolicy") or "Fail") == "Fail"
        data: dict[str, Any] = {
            "object": t.doc.obj,
            "oldObject": None,
            "params": params,
            "namespaceObject": t.namespace_object,
            "request": {
                "uid": "kubedra-offline",
                "kind": {"group": t.group, "version": t.version, "kind": t.doc.kind},
                "resource": {"group": t.group, "version": t.version, "resource": t.resource},
                "name": t.doc.name,
                "namespace": t.namespace,
                "operation": "CREATE",
                "userInfo": {"username": "kubedra"},
                "dryRun": True,
            },
        }
        data["variables"] = {}

        def error_verdict(what: str, message: str) -> list[Verdict]:
            if not fail:
                return []
            return [
                Verdict(
                    t.doc, policy.name, binding, actions, f"{what} resulted in error: {message}", error=True
                )
            ]

        for name, c in policy.match_conditions:
            r = self._eval(c, data)
            if isinstance(r, _Error):
                return error_verdict(f"matchCondition {name!r}", r.message)
            if r is not True:
                return []
        errors: dict[str, str] = {}
        for name, c in policy.variables:
            r = self._eval(c, data)
            if isinstance(r, _Error):
                errors[name] = r.message  # like the apiserver, only an error if a validation uses it
                continue
            data["variables"] = {**data["variables"], name: r}
        out: list[Verdict] = []
        for v, expr, msg in policy.validations:
            used = [n for n in errors if re.search(rf"\bvariables\.{re.escape(n)}\b", expr.text)]
            if used:
                out += error_verdict(f"variable {used[0]!r}", errors[used[0]])
                continue
            r = self._eval(expr, data)
            if isinstance(r, _Error):
                out += error_verdict(f"expression {expr.text!r}", r.message)
                continue
            if r is True:
                continue
            if r is not False:
                out += error_verdict(f"expression {expr.text!r}", f"must evaluate to bool, got {r!r}")
                continue
            message = ""
            if msg is not None:
                m = self._eval(msg, data)
                if isinstance(m, str) and m.strip() and "\n" not in m:
                    message = m
            if not message:
                message = str(v.get("message") or f"failed expression: {expr.text}")
            out.append(
                Verdict(t.doc, policy.name, binding, actions, message, str(v.get("reason") or "Invalid"))
            )
        return out


# The fields of a policy or binding spec that kubedra reads as lists of objects (admissionregistration.k8s.io/v1
# ValidatingAdmissionPolicySpec and ValidatingAdmissionPolicyBindingSpec); the API server's schema refuses any
# other shape, so kubedra does too, with the field, instead of failing on it.
_OBJECT_LISTS = ("matchConditions", "variables", "validations", "auditAnnotations", "validationActions")


def _shaped(doc: Document) -> Mapping[str, Any]:
    """``doc``'s spec, when it has the shape the API server accepts where kubedra reads it; else an input error
    naming the field (the API server refuses such an object before it is a policy)."""
    spec = doc.obj.get("spec")
    if spec is None:
        return {}
    where = Location(doc.file, doc.line_of(["spec"]))
    if not isinstance(spec, Mapping):
        raise InputError(f"{doc.kind} {doc.name}: spec must be an object, not {value_kind(spec)}", where)
    for key in _OBJECT_LISTS:
        items = spec.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise InputError(
                f"{doc.kind} {doc.name}: spec.{key} must be a list, not {value_kind(items)}", where
            )
        want = str if key == "validationActions" else Mapping
        for i, item in enumerate(items):
            if not isinstance(item, want):
                raise InputError(
                    f"{doc.kind} {doc.name}: spec.{key}[{i}] must be {'a string' if want is str else 'an object'}, "
                    f"not {value_kind(item)}",
                    Location(doc.file, doc.line_of(["spec", key, i])),
                )
    for key in ("matchConstraints", "matchResources", "paramKind", "paramRef"):
        if spec.get(key) is not None and not isinstance(spec.get(key), Mapping):
            raise InputError(
                f"{doc.kind} {doc.name}: spec.{key} must be an object, not {value_kind(spec[key])}", where
            )
    return spec
