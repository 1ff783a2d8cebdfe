"""What ``kubedra validate`` finds: one :class:`ValidationError` per problem (file:line, object, field path,
message), gathered with the warnings and unreadable inputs in a :class:`ValidationResult`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import InputError


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
