"""Turn audit inputs (files, rendered charts) into scopes of items, and bad input into findings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubedra.audit.engine import IgnoreEntry, Scope
from kubedra.audit.model import Finding, Item, ObjectRef, RuleBook
from kubedra.errors import InputError, Location, UsageError
from kubedra.sources import files


@dataclass
class FileInputs:
    scope: Scope
    findings: list[Finding] = field(default_factory=list)
    files: int = 0


def malformed(rules: RuleBook, err: InputError) -> Finding:
    meta = rules["input.malformed"]
    loc = err.location or Location()
    return Finding(
        rule=meta.id,
        severity=meta.severity,
        object=ObjectRef(),
        source=loc if loc.file is not None else Location(file="<input>"),
        message=err.message,
        fix=meta.render_fix({}),
    )


def load_files(paths: Sequence[str], rules: RuleBook, scope: Scope | None = None) -> FileInputs:
    """Read files/folders/stdin; a malformed file becomes an ``input.malformed`` finding and the scan goes on."""
    from kubedra.audit.loader import load_each

    out = FileInputs(scope=scope or Scope(name=None))
    for _name, result in load_each(paths):
        out.files += 1
        out.scope.items.extend(Item(obj=d.obj, doc=d) for d in result.documents)
        out.findings.extend(malformed(rules, e) for e in result.errors)
    return out


def add_documents(scope: Scope, docs: Iterable[files.Document], via: str = "") -> None:
    scope.items.extend(Item(obj=d.obj, doc=d, via=via) for d in docs)


def load_ignore_file(path: str) -> list[IgnoreEntry]:
    """YAML list of {rule, kind?, namespace?, name?, file?} (shell-style wildcards allowed in each)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data: Any = yaml.safe_load(text)
    except OSError as e:
        raise InputError(f"cannot read ignore file: {e.strerror}", Location(file=path)) from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(
            f"invalid YAML in ignore file: {getattr(e, 'problem', e)}",
            Location(file=path, line=mark.line + 1 if mark else None),
        ) from e
    if isinstance(data, dict) and "ignore" in data:
        data = data["ignore"]
    if data is None:
        return []
    if not isinstance(data, list):
        raise InputError(
            "ignore file must be a YAML list of {rule, kind, namespace, name, file}", Location(file=path)
        )
    out = []
    allowed = {"rule", "kind", "namespace", "name", "file", "reason"}
    for i, row in enumerate(data):
        if not isinstance(row, dict) or "rule" not in row:
            raise InputError(f"ignore entry {i}: needs at least 'rule'", Location(file=path))
        unknown = set(row) - allowed
        if unknown:
            raise InputError(
                f"ignore entry {i}: unknown field(s) {', '.join(sorted(unknown))}", Location(file=path)
            )

        def opt(key: str, r: dict[str, Any] = row) -> str | None:
            return None if r.get(key) is None else str(r[key])

        out.append(
            IgnoreEntry(
                rule=str(row["rule"]),
                kind=opt("kind"),
                namespace=opt("namespace"),
                name=opt("name"),
                file=opt("file"),
            )
        )
    return out


def check_rule_ids(patterns: Iterable[str], rules: RuleBook) -> None:
    from fnmatch import fnmatchcase

    for p in patterns:
        if not any(fnmatchcase(r, p) for r in rules.rules):
            raise UsageError(f"--ignore {p}: no such rule (see `kubedra audit --list-rules`)")
