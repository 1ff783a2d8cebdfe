"""What audit works on (items: raw objects with where they came from) and what it produces (findings)."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from kubedra.audit.podspecs import PodSpecAt, find_pod_specs
from kubedra.errors import Location
from kubedra.k8s import datafiles, namespaces
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.sources.files import Document

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(slots=True)
class Item:
    """One Kubernetes object, from a file (with line numbers) or a cluster (with the context name).

    Slotted, with its metadata and pod specs kept in slots of their own on first read: a ``__dict__`` made for
    them (``functools.cached_property``, or a descriptor writing to it) cost about 270 bytes an item, 2.7 MiB of
    an audit of 10,000 manifests; ``cached_property`` also takes a lock on every first read in Python 3.11."""

    obj: dict[str, Any]
    doc: Document | None = None
    cluster: str | None = None
    via: str = ""  # e.g. "Helm release ns/name rev 3", shown in messages
    _meta: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _pod_specs: list[PodSpecAt] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind") or "")

    @property
    def meta(self) -> dict[str, Any]:
        m = self._meta
        if m is None:
            m = self.obj.get("metadata")
            m = self._meta = m if isinstance(m, dict) else {}
        return m

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.meta.get("generateName") or "")

    @property
    def namespace(self) -> str | None:
        ns = self.meta.get("namespace")
        return str(ns) if ns else None

    @property
    def home(self) -> str:
        """The namespace the object lands in (``default`` when omitted): what references are keyed by."""
        return namespaces.effective(self.namespace)

    @property
    def pod_specs(self) -> list[PodSpecAt]:
        """Every pod spec in the object (the Pod's own, or workload/CRD templates), found once per item."""
        found = self._pod_specs
        if found is None:
            found = self._pod_specs = list(find_pod_specs(self.obj))
        return found

    @property
    def spec(self) -> dict[str, Any]:
        s = self.obj.get("spec")
        return s if isinstance(s, dict) else {}

    @property
    def status(self) -> dict[str, Any]:
        s = self.obj.get("status")
        return s if isinstance(s, dict) else {}

    def where(self, path: Sequence[str | int] = ()) -> Location:
        if self.doc is not None:
            return Location(file=self.doc.file, line=self.doc.line_of(path) if path else self.doc.line)
        return Location(cluster=self.cluster)

    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)


def finding_dict(f: Finding) -> dict[str, Any]:
    """An audit finding as audit's JSON, SARIF properties and plan blockers show it."""
    return {
        "rule": f.rule,
        "severity": f.severity,
        "object": (f.object or ObjectRef()).to_dict(),
        "source": f.source.to_dict(),
        "message": f.message,
        "fix": f.fix,
    }


class _Blank(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""


@dataclass(frozen=True)
class RuleMeta:
    id: str
    severity: str
    title: str
    fix: str
    docs: str
    migrate: bool = False  # `kubedra migrate` rewrites what the rule finds (the rule book's `migrate: true`)

    def render_fix(self, params: dict[str, Any]) -> str:
        names = _fix_fields(self.fix)
        if names is None:
            return _render(self.fix, params)
        # the same fix text comes back for most findings of a rule: keyed by the values it reads, when each is
        # a str (or absent) and so formats one way only
        key = (self.fix, *(params.get(n, _ABSENT) for n in names))
        if not all(type(v) is str or v is _ABSENT for v in key):
            return _render(self.fix, params)
        hit = _FIXES.get(key)
        if hit is None:
            if len(_FIXES) >= _FIXES_MAX:
                _FIXES.clear()
            hit = _FIXES[key] = _render(self.fix, params)
        return hit


_ABSENT = object()
_FIXES: dict[tuple[Any, ...], str] = {}  # 5,500 findings of 10,000 manifests: 0.07 -> 0.01 s
_FIXES_MAX = 4096


def _render(fix: str, params: dict[str, Any]) -> str:
    return " ".join(fix.format_map(_Blank(params)).split())


@cache
def _fix_fields(fix: str) -> tuple[str, ...] | None:
    """The names a fix template reads (``{a}``, ``{a.b}``, ``{a[0]}`` read ``a``), or None when it cannot be
    keyed by them (positional fields, fields nested in a format spec)."""
    names: list[str] = []
    for _, name, spec, _ in string.Formatter().parse(fix):
        if name is None:
            continue
        root = re.split(r"[.\[]", name, maxsplit=1)[0]
        if not root or root.isdigit() or "{" in (spec or ""):
            return None
        names.append(root)
    return tuple(dict.fromkeys(names))


@dataclass
class RuleBook:
    rules: dict[str, RuleMeta] = field(default_factory=dict)

    @classmethod
    def load(cls) -> RuleBook:
        data = datafiles.load("rules/audit-rules.yaml")
        book = cls()
        for r in data["rules"]:
            if r["severity"] not in SEVERITIES:  # pragma: no cover - guarded by a unit test on the data file
                raise ValueError(f"rule {r['id']}: bad severity {r['severity']}")
            book.rules[r["id"]] = RuleMeta(
                r["id"],
                r["severity"],
                r["title"],
                r["fix"],
                r.get("docs", ""),
                migrate=r.get("migrate") is True,
            )
        return book

    def __getitem__(self, rule_id: str) -> RuleMeta:
        return self.rules[rule_id]

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self.rules


@cache
def load_data(name: str) -> Any:
    """A YAML data file under kubedra/data/rules/ (read once per process; treat the result as read-only)."""
    return datafiles.load(f"rules/{name}")
