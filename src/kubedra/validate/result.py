"""What ``kubedra validate`` finds: one :class:`kubedra.k8s.findings.Finding` per problem (file:line, object,
field path, message; severity ``error`` or ``warning``), gathered with the unreadable inputs in a
:class:`ValidationResult`, and validate's JSON for it (:func:`error_dict`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError, Location
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.workloads import dotted
from kubedra.sources.files import Document


def doc_ref(doc: Document) -> ObjectRef:
    return ObjectRef(doc.api_version, doc.kind, doc.namespace, doc.name)


def doc_finding(
    doc: Document, path: Sequence[str | int], message: str, *, severity: str = "error", rule: str = ""
) -> Finding:
    """An error (or warning) about ``path`` in the document's object, at the path's line."""
    return Finding(
        severity=severity,
        message=message,
        object=doc_ref(doc),
        source=Location(file=doc.file, line=doc.line_of(list(path))),
        path=dotted(tuple(path)),
        rule=rule,
    )


def error_dict(e: Finding) -> dict[str, Any]:
    """An error or warning as ``kubedra validate -o json`` shows it."""
    return {
        "source": e.source.to_dict(),
        "object": (e.object or ObjectRef()).to_dict(),
        "path": e.path or "",
        "message": e.message,
    }


@dataclass
class ValidationResult:
    target_version: str
    objects: int = 0
    errors: list[Finding] = field(default_factory=list)  # severity "error"
    warnings: list[Finding] = field(default_factory=list)  # severity "warning"
    not_schema_checked: list[str] = field(default_factory=list)  # CRD kinds without a schema
    # "apiVersion kind" -> the bundled CRD it was checked against ("github.com/owner/name@tag path")
    crd_schemas: dict[str, str] = field(default_factory=dict)
    unreadable: list[Finding] = field(default_factory=list)  # files/documents that did not parse
    # the user accepted objects with no schema (validate --ignore-missing-schemas): they no longer make the
    # result incomplete, and are still listed under notSchemaChecked
    unchecked_accepted: bool = False

    @property
    def complete(self) -> bool:
        """Every input was read and every object checked against a schema (or its absence accepted)."""
        return not self.unreadable and (self.unchecked_accepted or not self.not_schema_checked)

    @property
    def valid(self) -> bool:
        """No error, and nothing left unchecked: what was not read or not checked is never "valid"."""
        return not self.errors and self.complete

    def add_unreadable(self, errors: Iterable[InputError]) -> None:
        """Parse errors (malformed YAML, unrendered templates): reported with file:line, never validated."""
        for e in errors:
            loc = e.location
            self.unreadable.append(
                Finding(
                    severity="error",
                    message=e.message,
                    object=ObjectRef(),
                    source=Location(
                        file=loc.file if loc and loc.file else "<input>", line=loc.line if loc else None
                    ),
                    path="",
                )
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "complete": self.complete,
            "targetVersion": self.target_version,
            "objects": self.objects,
            "errors": [error_dict(e) for e in self.errors],
            "warnings": [error_dict(w) for w in self.warnings],
            "notSchemaChecked": sorted(set(self.not_schema_checked)),
            "crdSchemas": dict(sorted(self.crd_schemas.items())),
            "unreadable": [error_dict(u) for u in self.unreadable],
        }
