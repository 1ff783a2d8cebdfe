"""What ``kubedra migrate`` did, per file and object: changes, warnings and items left for a human."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Level = Literal["change", "warning", "manual"]


@dataclass(frozen=True)
class ObjectRef:
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
            api_version=str(obj.get("apiVersion", "")),
            kind=str(obj.get("kind", "")),
            namespace=str(ns) if ns else None,
            name=str(meta.get("name") or meta.get("generateName") or ""),
        )

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}".strip()

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }


@dataclass(frozen=True)
class Finding:
    level: Level
    message: str
    file: str
    line: int | None = None
    object: ObjectRef | None = None
    path: str | None = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "source": {"file": self.file, "line": self.line},
            "object": self.object.to_dict() if self.object else None,
            "path": self.path,
            "message": self.message,
        }


@dataclass
class FileResult:
    file: str
    original: str
    output: str
    findings: list[Finding] = field(default_factory=list)
    new_objects: int = 0
    template: bool = False  # a Helm/Go template: reported, never parsed

    @property
    def changed(self) -> bool:
        return self.output != self.original


@dataclass
class MigrationReport:
    target_version: str
    files: list[FileResult] = field(default_factory=list)
    validation: dict[str, Any] | None = None

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def manual(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "manual"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "targetVersion": self.target_version,
            "manualItems": len(self.manual),
            "files": [
                {
                    "file": r.file,
                    "changed": r.changed,
                    "newObjects": r.new_objects,
                    "findings": [f.to_dict() for f in r.findings],
                }
                for r in self.files
            ],
            "validation": self.validation,
        }
