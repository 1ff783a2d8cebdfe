"""One ``Finding`` and one ``ObjectRef`` for every verb: what was found, about which object, and where.

audit, migrate, validate and verify report through this one type. Each verb keeps its own words and its
own JSON (serialised by the verb: ``audit.model.finding_dict``, ``migrate.report.finding_dict``,
``validate.result.error_dict``), so the type carries the union of what they need:

- ``severity``: the verb's level — audit ``error|warning|info``, validate ``error|warning``, migrate
  ``change|warning|manual``, verify ``fail|warn`` (``level`` is the same value, migrate's word for it);
- ``rule`` and ``fix``: the audit rule id and its rendered fix (empty where a verb has no rule book);
- ``object``: the object the finding is about, ``None`` when it is about a file or a cluster as a whole;
- ``source``: where it was found (a file and line, or a cluster);
- ``path``: the dotted field path inside the object (migrate, validate), when there is one;
- ``fixed_by_migrate``: audit: ``kubedra migrate`` rewrites what was found (the rule's ``migrate: true`` in the
  rule book, or the API version's ``convertible: kubedra-migrate``), so audit's ``next:`` hint may name it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import Location


@dataclass(frozen=True)
class ObjectRef:
    """A Kubernetes object by apiVersion, kind, namespace and name (``generateName`` when it has no name)."""

    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    name: str = ""

    @staticmethod
    def of(obj: Mapping[str, Any]) -> ObjectRef:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        ns = meta.get("namespace")
        return ObjectRef(
            api_version=str(obj.get("apiVersion") or ""),
            kind=str(obj.get("kind") or ""),
            namespace=str(ns) if ns else None,
            name=str(meta.get("name") or meta.get("generateName") or ""),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def __str__(self) -> str:
        """``Kind namespace/name``; empty for a reference without a kind (a resource or a file, not an object)."""
        if not self.kind:
            return ""
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


def object_text(ref: ObjectRef | None) -> str:
    """``Kind namespace/name`` as migrate's and validate's tables show it: no trailing space, the name alone
    without a kind, empty for no object (``str(ref)`` is audit's form: empty without a kind)."""
    if ref is None:
        return ""
    ns = f"{ref.namespace}/" if ref.namespace else ""
    return f"{ref.kind} {ns}{ref.name}".strip()


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One thing a verb found; see the module's docstring for what each verb puts in each field."""

    severity: str
    message: str
    object: ObjectRef | None = None
    source: Location = field(default_factory=Location)
    rule: str = ""
    fix: str = ""
    path: str | None = None
    fixed_by_migrate: bool = False

    @property
    def level(self) -> str:
        """The severity, in migrate's and verify's word."""
        return self.severity

    @property
    def where(self) -> str:
        """``file:line``, ``file``, ``cluster NAME`` or ``<input>``."""
        return str(self.source)

    @property
    def file(self) -> str:
        return self.source.file or ""

    @property
    def line(self) -> int | None:
        return self.source.line

    @property
    def api_version(self) -> str:
        return self.object.api_version if self.object else ""

    @property
    def kind(self) -> str:
        return self.object.kind if self.object else ""

    @property
    def namespace(self) -> str | None:
        return self.object.namespace if self.object else None

    @property
    def name(self) -> str:
        return self.object.name if self.object else ""
