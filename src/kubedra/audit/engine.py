"""Run the audit rules over items grouped in scopes (the files, or one cluster each) and collect findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from kubedra.audit import checks  # noqa: F401  (registers the checks)
from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import SEVERITIES, SEVERITY_RANK, RuleBook, finding_dict
from kubedra.audit.scope import CHECKS, CheckFn, ClusterFacts, Context, Scope, check  # noqa: F401  (re-exported)
from kubedra.k8s.findings import Finding
from kubedra.k8s.versions import Version


@dataclass
class IgnoreEntry:
    rule: str = "*"
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    file: str | None = None

    @property
    def is_rule_only(self) -> bool:
        return self.kind is None and self.namespace is None and self.name is None and self.file is None

    def matches(self, f: Finding) -> bool:
        def ok(pattern: str | None, value: str | None) -> bool:
            return pattern is None or fnmatchcase(value or "", pattern)

        return (
            ok(self.rule, f.rule)
            and ok(self.kind, f.kind)
            and ok(self.namespace, f.namespace)
            and ok(self.name, f.name)
            and (self.file is None or (f.source.file is not None and _file_matches(self.file, f.source.file)))
        )


def _file_matches(pattern: str, path: str) -> bool:
    return fnmatchcase(path, pattern) or fnmatchcase(path, f"*/{pattern}") or path.endswith("/" + pattern)


@dataclass
class Report:
    target: Version
    current: Version | None
    findings: list[Finding]
    ignored: int = 0
    files_scanned: int = 0
    objects_scanned: int = 0
    clusters: list[ClusterFacts] = field(default_factory=list)
    # reads that leave the report incomplete (kubedra.sources.access): {cluster, resource, verb, namespace, ...}
    incomplete: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(f.severity for f in self.findings)

    def worst_at_least(self, threshold: str, *, except_rules: Collection[str] = ()) -> bool:
        """Some finding (of a rule not in ``except_rules``) is at or above ``threshold``."""
        if threshold == "none":
            return False
        floor = SEVERITY_RANK[threshold]
        return any(SEVERITY_RANK[f.severity] >= floor for f in self.findings if f.rule not in except_rules)

    def summary(self) -> dict[str, Any]:
        by_sev = self.counts()
        by_rule = Counter(f.rule for f in self.findings)
        not_inspected = [
            {"cluster": c.name, "resource": r, "reason": why}
            for c in self.clusters
            for (r, why) in c.not_inspected
        ]
        return {
            "total": len(self.findings),
            "bySeverity": {s: by_sev.get(s, 0) for s in SEVERITIES},
            "byRule": dict(sorted(by_rule.items())),
            "filesScanned": self.files_scanned,
            "objectsScanned": self.objects_scanned,
            "clusters": [c.name for c in self.clusters],
            "notInspected": not_inspected,
            "ignored": self.ignored,
        }

    def to_dict(self, *, finding_dicts: bool = True) -> dict[str, Any]:
        """Audit's JSON report as data; without ``finding_dicts`` its ``findings`` are the Finding objects
        themselves, for a writer that makes each one's dict (:func:`finding_dict`) only as it writes it."""
        out: dict[str, Any] = {"targetVersion": str(self.target)}
        if self.current is not None:
            out["currentVersion"] = str(self.current)
        out["findings"] = [finding_dict(f) for f in self.findings] if finding_dicts else self.findings
        out["summary"] = self.summary()
        out["incomplete"] = self.incomplete
        return out


def sort_key(f: Finding) -> tuple[Any, ...]:
    return (
        -SEVERITY_RANK[f.severity],
        f.source.cluster or "",
        f.namespace or "",
        f.source.file or "",
        f.source.line or 0,
        f.rule,
        f.kind,
        f.name,
    )


def run(  # noqa: PLR0913 - the scopes, then the run's settings, all keyword-only
    scopes: Iterable[Scope],
    *,
    target: Version,
    current: Version | None,
    db: DeprecationDB,
    rules: RuleBook,
    ignore_rules: Sequence[str] = (),
    ignore_entries: Sequence[IgnoreEntry] = (),
    pre_findings: Sequence[Finding] = (),
    driver_version: str | None = None,
) -> tuple[list[Finding], int]:
    """Run every registered check on every scope; return (kept findings sorted, number ignored).
    ``driver_version``: the NVIDIA DRA driver release selectors are checked against ("all": every release read;
    None: the releases each scope runs, else all)."""

    ctx = Context(
        target=target,
        current=current,
        db=db,
        rules=rules,
        findings=list(pre_findings),
        driver_version=driver_version,
    )
    entries = [IgnoreEntry(rule=r) for r in ignore_rules] + list(ignore_entries)
    for scope in scopes:
        # on a cluster, "current" defaults to the version its apiserver reports
        ctx.current = current or (scope.facts.server_version if scope.facts else None)
        for rule_ids, fn in CHECKS:
            if all(any(fnmatchcase(rid, e.rule) for e in entries if e.is_rule_only) for rid in rule_ids):
                continue  # every rule of this check is ignored wholesale
            fn(ctx, scope)
    kept = [f for f in ctx.findings if not any(e.matches(f) for e in entries)]
    ignored = len(ctx.findings) - len(kept)
    kept.sort(key=sort_key)
    return kept, ignored
