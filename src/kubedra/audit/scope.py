"""What the audit checks see and how they register: a scope (the files, or one cluster) with its items and
cluster facts, the context a check reports through, and the registry the ``@check`` decorator fills."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra.audit.deprecations import DeprecationDB
from kubedra.audit.model import Item, RuleBook
from kubedra.errors import Location
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.versions import Version


@dataclass
class ClusterFacts:
    """What a live cluster told us besides its objects."""

    name: str
    server_version: Version | None = None
    git_version: str = ""
    metrics: str | None = None  # kube-apiserver /metrics text, when readable
    served: set[str] = field(default_factory=set)  # "group/version" served by discovery
    not_inspected: list[tuple[str, str]] = field(default_factory=list)  # (resource, reason)
    objects: int = 0


@dataclass
class Scope:
    """Objects that belong together: every file input (name None), or one cluster."""

    name: str | None
    items: list[Item] = field(default_factory=list)
    facts: ClusterFacts | None = None
    _by_kind: dict[str, list[Item]] | None = field(default=None, repr=False)

    @property
    def live(self) -> bool:
        return self.facts is not None

    def kind(self, *kinds: str) -> list[Item]:
        if self._by_kind is None:
            self._by_kind = {}
            for it in self.items:
                self._by_kind.setdefault(it.kind, []).append(it)
        out: list[Item] = []
        for k in kinds:
            out.extend(self._by_kind.get(k, ()))
        return out

    def location(self) -> Location:
        return Location(cluster=self.name) if self.name is not None else Location()


CheckFn = Callable[["Context", Scope], None]
CHECKS: list[tuple[tuple[str, ...], CheckFn]] = []


def check(*rule_ids: str) -> Callable[[CheckFn], CheckFn]:
    """Register a detection function for the rule ids it emits."""

    def deco(fn: CheckFn) -> CheckFn:
        CHECKS.append((rule_ids, fn))
        return fn

    return deco


@dataclass
class Context:
    target: Version
    current: Version | None
    db: DeprecationDB
    rules: RuleBook
    findings: list[Finding] = field(default_factory=list)
    driver_version: str | None = None  # --driver-version: a release, "all", or None (what the scope runs)

    def emit(
        self,
        rule: str,
        item: Item | None,
        message: str,
        *,
        path: Sequence[str | int] = (),
        severity: str | None = None,
        source: Location | None = None,
        obj: ObjectRef | None = None,
        migrate: bool | None = None,
        **params: Any,
    ) -> None:
        """Record a finding of RULE; MIGRATE says whether ``kubedra migrate`` rewrites it (None: the rule
        book's ``migrate`` for the rule)."""
        meta = self.rules[rule]
        if source is None:
            source = item.where(path) if item is not None else Location()
        if obj is None:
            obj = item.ref() if item is not None else ObjectRef()
        if item is not None and item.via:
            message = f"{message} ({item.via})"
        params.setdefault("target", str(self.target))
        if item is not None and item.doc is not None:
            params.setdefault("file", item.doc.file)
        self.findings.append(
            Finding(
                rule=rule,
                severity=severity or meta.severity,
                object=obj,
                source=source,
                message=message,
                fix=meta.render_fix(params),
                fixed_by_migrate=meta.migrate if migrate is None else migrate,
            )
        )
