"""OpenAPI schema validation at a Kubernetes version, with kubernetes-validate's schemas.

The stock ``kubernetes_validate.validate()`` re-reads and parses the schema JSON on every call (~13 ms per
object). Here one ``jsonschema.Draft202012Validator`` is built per (version, schema file) and reused
(~0.3 ms per object). Strict schemas are used: unknown fields are errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jsonschema
from referencing import Registry, Resource

BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "internal.apiserver.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "rbac.authorization.k8s.io",
        "resource.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
        "storagemigration.k8s.io",
    }
)


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]
    message: str
    warning: bool = False  # the apiserver would accept it (a missing scalar decodes as its zero value)


class NoSchema(Exception):
    """No schema for this apiVersion/kind at this version (a CRD, or a version the release does not have)."""


def _schema_version(version: str) -> str:
    from kubernetes_validate.utils import all_versions, major_minor  # noqa: PLC0415

    want = major_minor(version.lstrip("v"))
    candidates: list[str] = [v for v in all_versions() if _key(major_minor(v)) <= _key(want)]
    if not candidates:
        raise NoSchema(f"kubernetes-validate has no schemas for {version}")
    return candidates[-1]


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(".") if x.isdigit())


@lru_cache(maxsize=8)
def _definitions(schema_dir: str) -> Resource[Any]:
    from kubernetes_validate.utils import schema_contents  # noqa: PLC0415

    return Resource.from_contents(
        schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", "")
    )


# what kubernetes-validate's schema files are named: the lower-cased Kind and the group's first label and version
# (``deployment-apps-v1.json``); a kind or apiVersion that does not fit names no file, and is never opened
_SCHEMA_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,200}\.json")


@lru_cache(maxsize=512)
def _validator(schema_dir: str, filename: str) -> jsonschema.Draft202012Validator:
    from kubernetes_validate.utils import schema_contents  # noqa: PLC0415

    if not _SCHEMA_NAME.fullmatch(filename):  # a kind or version with a NUL, a slash, 300 letters: no schema
        raise NoSchema(filename)
    try:
        schema = schema_contents(f"kubernetes-json-schema/{schema_dir}/{filename}", "")
    except FileNotFoundError as e:
        raise NoSchema(filename) from e
    registry: Registry[Any] = Resource.from_contents(schema) @ Registry()
    registry = _definitions(schema_dir) @ registry
    return jsonschema.Draft202012Validator(schema, registry=registry)


def schema_file(api_version: str, kind: str) -> str:
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{api}.json"


class SchemaValidator:
    """Validate objects against the strict schemas of one Kubernetes version."""

    def __init__(self, version: str, strict: bool = True) -> None:
        self.version = version
        self.dir = f"v{_schema_version(version)}-local" + ("-strict" if strict else "")

    def errors(self, obj: Mapping[str, Any]) -> list[SchemaError]:
        """Schema errors of ``obj``; raises :class:`NoSchema` when the version has no schema for it."""
        validator = _validator(
            self.dir, schema_file(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        )
        return list(self._iter(validator, obj))

    def errors_as(self, definition: str, value: Any) -> list[SchemaError]:
        """Errors of ``value`` validated as the named schema file (e.g. ``podtemplatespec-v1.json``)."""
        return list(self._iter(_validator(self.dir, definition), value))

    @staticmethod
    def _iter(validator: jsonschema.Draft202012Validator, value: Any) -> Iterator[SchemaError]:
        for err in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
            if err.validator == "required" and _zero_value_scalar(err):
                yield SchemaError(
                    tuple(err.absolute_path),
                    err.message.replace(
                        "is a required property", "is not set; the server decodes it as 0/false"
                    ),
                    warning=True,
                )
                continue
            if err.validator == "additionalProperties" and isinstance(err.instance, dict):
                extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
                for name in extra:  # one error per unknown field, at the field's own line
                    yield SchemaError((*err.absolute_path, name), f"unknown field {name!r}")
                if extra:
                    continue
            yield SchemaError(tuple(err.absolute_path), _message(err))


def _zero_value_scalar(err: jsonschema.ValidationError) -> bool:
    """Built-in types ignore OpenAPI ``required`` for plain int/bool fields: they decode as zero values."""
    missing = re.findall(r"'([^']+)' is a required property", err.message)
    props = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
    if not missing:
        return False
    types = props.get(missing[0], {}).get("type")
    types = types if isinstance(types, list) else [types]
    return bool(types) and all(t in ("integer", "boolean", "null") for t in types if t)


def _message(err: jsonschema.ValidationError) -> str:
    if err.validator == "additionalProperties":
        extra = (
            sorted(set(err.instance) - set(err.schema.get("properties", {})))
            if isinstance(err.instance, dict)
            else []
        )
        if extra:
            return f"unknown field{'s' if len(extra) > 1 else ''} {', '.join(repr(x) for x in extra)}"
    if err.validator == "required":
        return str(err.message).replace("is a required property", "is required")
    if err.validator == "type":
        types = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        types = [t for t in types if t != "null"]
        return f"expected {' or '.join(types)}, got {_json_type(err.instance)} {err.instance!r}"
    if err.validator == "enum":
        return f"must be one of {', '.join(map(str, err.validator_value))}, got {err.instance!r}"
    if err.validator in ("oneOf", "anyOf") and err.context:
        best = jsonschema.exceptions.best_match(err.context)
        return str(best.message)
    return str(err.message)


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"
