"""Custom resources of the operator kinds kubedra knows, validated offline against their CRD's structural schema.

The schemas (``kubedra/data/crds/``, built by ``scripts/gen_crd_schemas.py`` from each operator's released CRD
manifest at a pinned version) are checked as the apiextensions-apiserver does for a CRD with a structural schema
(k8s.io/apiextensions-apiserver pkg/apiserver/schema: pruning, then kube-openapi validation):

- only the versions the CRD serves: another apiVersion is refused, naming the served ones;
- unknown fields (those the apiserver would prune) are errors, as kubectl's default ``--validate=strict``
  reports them (``unknown field "spec.x"``); ``x-kubernetes-preserve-unknown-fields`` keeps them;
  ``x-kubernetes-embedded-resource`` objects may carry ``apiVersion``, ``kind`` and ``metadata``;
- ``type`` (``x-kubernetes-int-or-string``: an integer or a string), ``nullable`` (a null property of a
  non-nullable field is dropped, as the apiserver's pruning of nulls does), ``required``, ``enum``, ``pattern``,
  ``format`` int32, lengths, item and property counts, ``minimum``/``maximum``, ``anyOf``/``allOf``/``oneOf``/``not``,
  and ``x-kubernetes-list-type`` set/map uniqueness;
- schema ``default``s are applied first, as the apiserver defaults before it validates;
- ``x-kubernetes-validations`` (CEL) rules are evaluated with kubedra's CEL (:mod:`kubedra.cel`, the
  apiserver's libraries at the target version, ``self`` the value), on the values present; a false rule is an
  error with the rule's message, an evaluation error is an error as the apiserver's. Transition rules (those
  with ``oldSelf``) never apply to a create. A rule kubedra's CEL cannot compile is not guessed: the object
  gets one warning naming how many rules were not checked.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from cel_expr_python import cel

from kubedra.cel import CELCompileError
from kubedra.cel.env import Environment, Program, build_env
from kubedra.cel.library.regex import compile_regex
from kubedra.cel.library.registry import CELFunctionError
from kubedra.k8s import datafiles
from kubedra.k8s.versions import DEFAULT_TARGET
from kubedra.validate.rules import Issue

Path = tuple[str | int, ...]

FOLDER = "crds"
INT32 = (-(1 << 31), (1 << 31) - 1)
INT64 = (-(1 << 63), (1 << 63) - 1)

# metadata fields of an embedded resource that survive pruning (ObjectMeta's JSON fields)
OBJECT_META = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)


@dataclass(frozen=True)
class CRD:
    group: str
    kind: str
    plural: str
    scope: str
    source: str  # module@version path
    versions: Mapping[str, Any]  # served version -> schema
    defs: Mapping[str, Any]


@cache
def bundled() -> dict[tuple[str, str], list[CRD]]:
    """(group, kind) -> the bundled CRDs of it (MPIJob has two: the training-operator's and the MPI operator's)."""
    out: dict[tuple[str, str], list[CRD]] = {}
    for name in sorted(datafiles.names(FOLDER)):
        if not name.endswith(".json"):
            continue
        data = json.loads(datafiles.read_text(f"{FOLDER}/{name}"))
        src = data["source"]
        crd = CRD(
            group=data["group"],
            kind=data["kind"],
            plural=data["plural"],
            scope=data["scope"],
            source=f"{src.get('module') or src.get('repository')} {src['path']}",
            versions={v["name"]: v["schema"] for v in data["versions"]},
            defs=data["defs"],
        )
        out.setdefault((crd.group, crd.kind), []).append(crd)
    return out


def known(group: str, kind: str) -> bool:
    return (group, kind) in bundled()


@cache
def _cel_env(version: str) -> Environment:
    return build_env({"self": cel.Type.DYN}, version)


@cache
def _rule(version: str, text: str) -> Program | None:
    try:
        return _cel_env(version).compile(text, estimate_cost=False)
    except CELCompileError:
        return None


def checked_against(obj: Mapping[str, Any], group: str, kind: str) -> str | None:
    """The bundled CRD (``repository@tag path``) that :func:`issues` checks ``obj`` against, or ``None`` when
    none serves its apiVersion. Call only when :func:`known`."""
    served_as = str(obj.get("apiVersion", "")).rsplit("/", 1)[-1]
    return next((crd.source for crd in bundled()[(group, kind)] if served_as in crd.versions), None)


def issues(obj: Mapping[str, Any], group: str, kind: str, version: str = DEFAULT_TARGET) -> list[Issue]:
    """What the apiserver of Kubernetes ``version``, with the bundled CRD installed, refuses in ``obj`` (plus
    one warning for CEL rules kubedra could not compile). Call only when :func:`known`."""
    crds = bundled()[(group, kind)]
    api = str(obj.get("apiVersion", ""))
    served_as = api.rsplit("/", 1)[-1]
    for crd in crds:
        if served_as in crd.versions:
            return check(
                obj, crd.versions[served_as], defs=crd.defs, source=crd.source.split()[0], version=version
            )
    served = sorted({f"{group}/{v}" for crd in crds for v in crd.versions})
    return [
        Issue(
            ("apiVersion",),
            f"{api} {kind} is not served by its CRD ({'; '.join(c.source.split()[0] for c in crds)}): "
            f"served: {', '.join(served)}",
        )
    ]


def check(
    obj: Mapping[str, Any],
    schema: Mapping[str, Any],
    *,
    defs: Mapping[str, Any] | None = None,
    source: str = "",
    version: str = DEFAULT_TARGET,
) -> list[Issue]:
    """``obj`` (a whole custom resource) against one version's ``openAPIV3Schema`` (``{"$def": name}`` nodes
    resolved in ``defs``); ``source`` names the CRD in unknown-field messages."""
    checker = _Checker(defs or {}, source, version)
    out = checker.root(checker.defaulted(obj, schema, root=True), schema)
    if checker.cel_rules:
        kind = obj.get("kind") or "object"
        out.append(
            Issue(
                (),
                f"{checker.cel_rules} x-kubernetes-validations (CEL) rule"
                f"{'s' if checker.cel_rules > 1 else ''} of the {kind} CRD not checked offline: "
                "kubedra's CEL cannot compile them (--server-dry-run has the apiserver evaluate them)",
                True,
            )
        )
    return out


def manifest(crd: CRD) -> dict[str, Any]:
    """The CRD as an apiextensions.k8s.io/v1 object (schemas expanded, first version stored), to install it."""

    def expand(s: Any) -> Any:
        if isinstance(s, Mapping) and "$def" in s:
            return expand(crd.defs[s["$def"]])
        if isinstance(s, Mapping):
            return {k: expand(v) for k, v in s.items()}
        if isinstance(s, list):
            return [expand(v) for v in s]
        return s

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{crd.plural}.{crd.group}"},
        "spec": {
            "group": crd.group,
            "names": {
                "kind": crd.kind,
                "plural": crd.plural,
                "singular": crd.kind.lower(),
                "listKind": f"{crd.kind}List",
            },
            "scope": crd.scope,
            "versions": [
                {"name": v, "served": True, "storage": i == 0, "schema": {"openAPIV3Schema": expand(s)}}
                for i, (v, s) in enumerate(crd.versions.items())
            ],
        },
    }


def _dotted(path: Path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


class _Checker:
    def __init__(self, defs: Mapping[str, Any], source: str, version: str) -> None:
        self.defs = defs
        self.source = source
        self.version = version
        self.cel_rules = 0  # rules not checked (kubedra's CEL could not compile them)

    def defaulted(self, value: Any, schema: Any, *, root: bool = False) -> Any:
        """``value`` with the schema's defaults filled in where a property is absent (or a non-nullable null)."""
        s = self.resolve(schema)
        if isinstance(value, Mapping):
            props = s.get("properties") or {}
            extra = s.get("additionalProperties")
            out = dict(value)
            for key, sub in props.items():
                if root and key in ("apiVersion", "kind", "metadata"):
                    continue
                rs = self.resolve(sub)
                if "default" in rs and (key not in out or (out[key] is None and not rs.get("nullable"))):
                    out[key] = copy.deepcopy(rs["default"])
            for key, v in out.items():
                if key in props and not (root and key == "metadata"):
                    out[key] = self.defaulted(v, props[key])
                elif key not in props and isinstance(extra, Mapping):
                    out[key] = self.defaulted(v, extra)
            return out
        if isinstance(value, list) and isinstance(s.get("items"), Mapping):
            return [self.defaulted(v, s["items"]) for v in value]
        return value

    def resolve(self, schema: Any) -> Mapping[str, Any]:
        while isinstance(schema, Mapping) and "$def" in schema:
            schema = self.defs[schema["$def"]]
        return schema if isinstance(schema, Mapping) else {}

    def root(self, obj: Mapping[str, Any], schema: Any) -> list[Issue]:
        """The object at the resource root: apiVersion and kind (checked before), metadata (ObjectMeta), the rest
        against the schema."""
        s = self.resolve(schema)
        out = list(self._metadata(("metadata",), obj["metadata"])) if "metadata" in obj else []
        rest = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
        out.extend(self._object((), rest, {**s, "x-kubernetes-embedded-resource": False}))
        out.extend(self._values((), obj, s, shape=False))
        return out

    def _metadata(self, path: Path, meta: Any) -> Iterator[Issue]:
        if not isinstance(meta, Mapping):
            if meta is not None:
                yield Issue(path, f"expected object, got {_type(meta)}")
            return
        for key in meta:
            if key not in OBJECT_META:
                yield self._unknown((*path, key))

    # -- one value against one schema ---------------------------------------------------------------
    def value(self, path: Path, value: Any, schema: Any) -> list[Issue]:
        s = self.resolve(schema)
        if value is None:
            if s.get("nullable"):
                return []
            return [Issue(path, f"Invalid value: null: {_dotted(path)} in body must be of type {_types(s)}")]
        bad = self._type(path, value, s)
        if bad:
            return [bad]
        out: list[Issue] = []
        if isinstance(value, Mapping):
            out.extend(self._object(path, value, s))
        elif isinstance(value, list):
            items = s.get("items")
            for i, item in enumerate(value):
                if items is not None:
                    out.extend(self.value((*path, i), item, items))
            out.extend(self._list_type(path, value, s))
        out.extend(self._values(path, value, s, shape=True))
        return out

    def _type(self, path: Path, value: Any, s: Mapping[str, Any]) -> Issue | None:
        if s.get("x-kubernetes-int-or-string"):
            ok = isinstance(value, str) or _is_int(value)
        else:
            t = s.get("type")
            ok = t is None or _TYPE_OK[t](value)
        if ok:
            return None
        return Issue(
            path,
            f"Invalid value: {_show(value)}: {_dotted(path)} in body must be of type {_types(s)}: {_show(value)}",
        )

    def _object(self, path: Path, value: Mapping[str, Any], s: Mapping[str, Any]) -> Iterator[Issue]:
        props = s.get("properties")
        extra = s.get("additionalProperties")
        preserve = s.get("x-kubernetes-preserve-unknown-fields")
        embedded = s.get("x-kubernetes-embedded-resource")
        for key, v in value.items():
            p = (*path, key)
            if embedded and key in ("apiVersion", "kind"):
                if not isinstance(v, str):
                    yield Issue(p, f"{_dotted(p)} must be a string")
                continue
            if embedded and key == "metadata" and not (props and key in props):
                yield from self._metadata(p, v)
                continue
            if props and key in props:
                sub = props[key]
                if v is None and not self.resolve(sub).get("nullable"):
                    continue  # the apiserver prunes a null of a non-nullable field
                yield from self.value(p, v, sub)
            elif isinstance(extra, Mapping):
                yield from self.value(p, v, extra)
            elif extra is True or preserve:
                continue
            else:
                yield self._unknown(p)
        if embedded:
            for key in ("apiVersion", "kind"):
                if not value.get(key):
                    yield Issue((*path, key), f"{_dotted((*path, key))}: Required value: must not be empty")
        yield from self._required(path, value, s)

    def _required(self, path: Path, value: Mapping[str, Any], s: Mapping[str, Any]) -> Iterator[Issue]:
        props = s.get("properties") or {}
        for name in s.get("required") or []:
            present = name in value and not (
                value[name] is None and not self.resolve(props.get(name)).get("nullable")
            )
            if not present:
                yield Issue((*path, name), f"{_dotted((*path, name))}: Required value")

    def _list_type(self, path: Path, value: list[Any], s: Mapping[str, Any]) -> Iterator[Issue]:
        kind = s.get("x-kubernetes-list-type")
        seen: dict[str, int] = {}
        for i, item in enumerate(value):
            if kind == "set":
                key = _key(item)
            elif kind == "map" and isinstance(item, Mapping):
                key = _key([item.get(k) for k in s.get("x-kubernetes-list-map-keys") or []])
            else:
                continue
            if key in seen:
                yield Issue((*path, i), f"Duplicate value: {key}")
            seen[key] = i

    def _values(self, path: Path, value: Any, s: Mapping[str, Any], *, shape: bool) -> Iterator[Issue]:  # noqa: C901 - one branch per OpenAPI value keyword
        """Value validations: enum, bounds, lengths, patterns, formats, combinators and CEL rules (counted)."""
        where = _dotted(path)
        if path == () and isinstance(value, Mapping):
            value = _named(value)
        yield from self._cel(path, value, s.get("x-kubernetes-validations") or [])
        if not shape:
            return
        if "enum" in s and value not in s["enum"]:
            allowed = ", ".join(_show(e) for e in s["enum"])
            yield Issue(path, f"Unsupported value: {_show(value)}: supported values: {allowed}")
        if _is_number(value):
            if "minimum" in s and (
                value < s["minimum"] or (s.get("exclusiveMinimum") and value == s["minimum"])
            ):
                yield Issue(
                    path,
                    f"Invalid value: {value}: {where} in body should be greater than or equal to {s['minimum']}",
                )
            if "maximum" in s and (
                value > s["maximum"] or (s.get("exclusiveMaximum") and value == s["maximum"])
            ):
                yield Issue(
                    path,
                    f"Invalid value: {value}: {where} in body should be less than or equal to {s['maximum']}",
                )
            bounds = {"int32": INT32, "int64": INT64}.get(str(s.get("format")))
            if bounds and _is_int(value) and not bounds[0] <= value <= bounds[1]:
                yield Issue(path, f"Invalid value: {value}: {where} in body must be of type {s['format']}")
        if isinstance(value, str):
            if "maxLength" in s and len(value) > s["maxLength"]:
                yield Issue(path, f"Too long: {where} may not be more than {s['maxLength']} bytes")
            if "minLength" in s and len(value) < s["minLength"]:
                yield Issue(
                    path,
                    f"Invalid value: {_show(value)}: {where} in body should be at least {s['minLength']} chars long",
                )
            pattern = _pattern(str(s.get("pattern", "")))
            if "pattern" in s and pattern is not None and not pattern.search(value):
                yield Issue(
                    path, f"Invalid value: {_show(value)}: {where} in body should match '{s['pattern']}'"
                )
        if isinstance(value, list):
            if "maxItems" in s and len(value) > s["maxItems"]:
                yield Issue(path, f"Too many: {len(value)}: must have at most {s['maxItems']} items")
            if "minItems" in s and len(value) < s["minItems"]:
                yield Issue(
                    path, f"Invalid value: {where} in body should have at least {s['minItems']} items"
                )
        if isinstance(value, Mapping):
            if "maxProperties" in s and len(value) > s["maxProperties"]:
                yield Issue(path, f"Too many: {len(value)}: must have at most {s['maxProperties']} items")
            if "minProperties" in s and len(value) < s["minProperties"]:
                yield Issue(
                    path,
                    f"Invalid value: {where} in body should have at least {s['minProperties']} properties",
                )
        for sub in s.get("allOf") or []:
            yield from self._shape_only(path, value, sub)
        if s.get("anyOf") and not any(not list(self._shape_only(path, value, sub)) for sub in s["anyOf"]):
            yield Issue(path, f"Invalid value: {where} in body must match at least one schema (anyOf)")
        if (
            s.get("oneOf")
            and sum(1 for sub in s["oneOf"] if not list(self._shape_only(path, value, sub))) != 1
        ):
            yield Issue(path, f"Invalid value: {where} in body must validate one and only one schema (oneOf)")
        if "not" in s and not list(self._shape_only(path, value, s["not"])):
            yield Issue(path, f"Invalid value: {where} in body must not validate the schema (not)")

    def _cel(self, path: Path, value: Any, rules: list[Mapping[str, Any]]) -> Iterator[Issue]:
        for r in rules:
            text = str(r.get("rule", ""))
            if "oldSelf" in text:
                continue  # a transition rule: only on update
            program = _rule(self.version, text)
            if program is None:
                self.cel_rules += 1
                continue
            env = _cel_env(self.version)
            try:
                result = program.eval(env.runtime.Activation({"self": value}))
            except Exception:  # noqa: BLE001 - a value CEL cannot hold (a YAML key that is not a string): counted, not guessed
                self.cel_rules += 1
                continue
            at = (*path, *[p for p in str(r.get("fieldPath", "")).split(".") if p])
            if result.type() == cel.Type.ERROR:
                yield Issue(at, f"Invalid value: {_show(value)}: {text}: evaluation error: {result.value()}")
            elif result.type() != cel.Type.BOOL or not result.value():
                message = r.get("message") or f"failed rule: {text}"
                yield Issue(at, f"Invalid value: {_show(value)}: {message}")

    def _unknown(self, path: Path) -> Issue:
        of = f" (not in the CRD of {self.source})" if self.source else ""
        return Issue(path, f'unknown field "{_dotted(path)}"{of}')

    def _shape_only(self, path: Path, value: Any, schema: Any) -> Iterator[Issue]:
        """A value validation inside allOf/anyOf/oneOf/not: structural schemas allow no types or properties
        of their own there, only value checks (and required) on the value and its properties."""
        s = self.resolve(schema)
        yield from self._values(path, value, s, shape=True)
        if isinstance(value, Mapping):
            yield from self._required(path, value, s)
            for key, sub in (s.get("properties") or {}).items():
                if key in value:
                    yield from self._shape_only((*path, key), value[key], sub)


def _named(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object as the apiserver's rules see it on create: a ``generateName`` has become a name (5 more
    characters) before validation."""
    meta = obj.get("metadata")
    if isinstance(meta, Mapping) and not meta.get("name") and isinstance(meta.get("generateName"), str):
        return {**obj, "metadata": {**meta, "name": meta["generateName"] + "x7k2q"}}
    return obj


def _is_int(v: Any) -> bool:
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))


def _is_number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float)


_TYPE_OK: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_int,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
}


def _types(s: Mapping[str, Any]) -> str:
    return "integer,string" if s.get("x-kubernetes-int-or-string") else str(s.get("type"))


def _type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if _is_int(v):
        return "integer"
    if _is_number(v):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _show(v: Any) -> str:
    return json.dumps(v) if isinstance(v, str | int | float | bool) or v is None else f'"{_type(v)}"'


@cache
def _pattern(text: str) -> Any:
    """The schema's ``pattern`` compiled as kube-openapi compiles it (Go regexp: RE2 syntax, linear time, so a
    crafted value cannot make validation backtrack); None for a pattern Go would refuse (the CRD itself would
    have been refused: none of the bundled ones has such a pattern, tests/unit/validate/test_crdschema.py)."""
    try:
        return compile_regex(text)
    except CELFunctionError:
        return None


def _key(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):  # YAML keys that are not strings
        return repr(value)
