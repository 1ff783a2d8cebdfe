"""What ``kubedra migrate`` did, per file and object: changes, warnings and items left for a human."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from kubedra.k8s.findings import Finding

Level = Literal["change", "warning", "manual"]


def finding_dict(f: Finding) -> dict[str, Any]:
    """A migrate finding as ``kubedra migrate -o json`` shows it (``level`` is its severity)."""
    return {
        "level": f.severity,
        "source": f.source.to_dict(),
        "object": f.object.to_dict() if f.object else None,
        "path": f.path,
        "message": f.message,
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
        return [f for f in self.findings if f.severity == "manual"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "targetVersion": self.target_version,
            "manualItems": len(self.manual),
            "files": [
                {
                    "file": r.file,
                    "changed": r.changed,
                    "newObjects": r.new_objects,
                    "findings": [finding_dict(f) for f in r.findings],
                }
                for r in self.files
            ],
            "validation": self.validation,
        }
