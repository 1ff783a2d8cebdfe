"""SARIF 2.1.0 (the format GitHub code scanning and most CI dashboards read) for any kubedra check.

Severity maps to SARIF levels: error -> error, warning -> warning, info -> note. Results with a file carry a
physical location (file, line); results about a cluster carry a logical location instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note", "note": "note"}


@dataclass(frozen=True)
class SarifRule:
    id: str
    name: str
    help: str
    help_uri: str = ""
    level: str = "warning"


@dataclass(frozen=True)
class SarifResult:
    rule_id: str
    level: str
    message: str
    file: str | None = None
    line: int | None = None
    logical: str | None = None  # e.g. "cluster/Kind ns/name" when there is no file


def _uri(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def to_sarif(
    tool: str, version: str, information_uri: str, rules: Sequence[SarifRule], results: Sequence[SarifResult]
) -> dict[str, Any]:
    index = {r.id: i for i, r in enumerate(rules)}
    out_results = []
    for r in results:
        res: dict[str, Any] = {
            "ruleId": r.rule_id,
            "level": _LEVELS.get(r.level, "warning"),
            "message": {"text": r.message},
        }
        if r.rule_id in index:
            res["ruleIndex"] = index[r.rule_id]
        if r.file and r.file != "<stdin>":
            region = {"startLine": r.line} if r.line else None
            loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": _uri(r.file)}}}
            if region:
                loc["physicalLocation"]["region"] = region
            res["locations"] = [loc]
        elif r.logical:
            res["locations"] = [{"logicalLocations": [{"fullyQualifiedName": r.logical, "kind": "resource"}]}]
        out_results.append(res)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": tool,
                        "version": version,
                        **({"informationUri": information_uri} if information_uri else {}),
                        "rules": [
                            {
                                "id": r.id,
                                "name": r.name,
                                "shortDescription": {"text": r.name},
                                "help": {"text": r.help},
                                **({"helpUri": r.help_uri} if r.help_uri else {}),
                                "defaultConfiguration": {"level": _LEVELS.get(r.level, "warning")},
                            }
                            for r in rules
                        ],
                    }
                },
                "results": out_results,
            }
        ],
    }
