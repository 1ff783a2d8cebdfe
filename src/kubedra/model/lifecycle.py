"""Lifecycle data for API group/version/kinds (shared by audit and validate): generated k8s-api.yaml + overrides.yaml + user files.

An entry says when a type was introduced, deprecated and removed (Kubernetes minors), what replaces it, and
notes for the fix. Later files override earlier ones field by field, so a user file can correct a built-in
entry or add CRDs (``kubedra audit PATH --deprecations FILE``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from kubedra.errors import InputError, Location
from kubedra.k8s import datafiles
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import Version
from kubedra.model.apiversions import split_api_version, version_rank
from kubedra.text import noun

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_load(text: str) -> Any:
    """safe_load with the C loader when PyYAML has it (data files are read on every run)."""
    return yaml.load(text, Loader=_Loader)


BUILTIN_FILES = ("k8s-api.yaml", "overrides.yaml")
_FIELDS = {
    "group",
    "version",
    "kind",
    "introduced",
    "deprecated",
    "removed",
    "replacement",
    "replacementKind",
    "notes",
    "classicDra",
    "convertible",
    "source",
    "deletedFromModule",
    "lifecycleFrom",
    "offByDefault",
    "featureGate",
}


@dataclass(frozen=True)
class Lifecycle:
    group: str
    version: str
    kind: str
    introduced: Version | None = None
    deprecated: Version | None = None
    removed: Version | None = None
    replacement: str | None = None
    replacement_kind: str | None = None
    notes: str = ""
    classic_dra: bool = False
    convertible: str | None = None
    off_by_default: bool = False  # served only when enabled with --runtime-config (KEP-3136 betas, alphas)
    feature_gate: str | None = None  # served only with this kube-apiserver feature gate on, as well
    origin: str = ""  # the data file the last override came from

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def is_removed(self, at: Version) -> bool:
        return self.removed is not None and at >= self.removed

    def is_deprecated(self, at: Version) -> bool:
        return self.deprecated is not None and at >= self.deprecated and not self.is_removed(at)

    def is_introduced(self, at: Version) -> bool:
        return self.introduced is None or at >= self.introduced

    def served(self, at: Version) -> bool:
        return self.is_introduced(at) and not self.is_removed(at)

    def enable_text(self) -> str:
        """The kube-apiserver flags that serve this version: ``--runtime-config=...=true``, after the feature gate
        when one guards the resource."""
        flag = f"--runtime-config={self.api_version}=true"
        return f"--feature-gates={self.feature_gate}=true {flag}" if self.feature_gate else flag

    def story(self, at: Version) -> str:
        """Served or not at ``at``, on by default or not, deprecated and removed when: the one sentence audit and
        validate both say about this version (``resource.k8s.io/v1beta1 at 1.37: served only when enabled ...``)."""
        if not self.is_introduced(at):
            return f"not served at {at} (first served in {self.introduced})"
        if self.is_removed(at):
            return f"not served at {at} (removed in {self.removed})"
        if self.off_by_default:
            off = "off by default"
            info = gate_info(self.feature_gate, at) if self.feature_gate else None
            if info and info.get("stage") and not info.get("default"):
                off = f"off by default, and {self.feature_gate} is {info['stage']} and off"
            parts = [f"served at {at} only when enabled ({self.enable_text()}; {off})"]
        else:
            parts = [f"served at {at}"]
        if self.deprecated is not None and at >= self.deprecated:
            parts.append(f"deprecated since {self.deprecated}")
        if self.removed is not None:
            parts.append(f"removal planned for {self.removed}")
        return ", ".join(parts)


@dataclass
class DeprecationDB:
    entries: dict[tuple[str, str, str], Lifecycle] = field(default_factory=dict)
    _by_group_kind: dict[tuple[str, str], list[Lifecycle]] = field(default_factory=dict, repr=False)

    # -- loading -------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, extra: Iterable[str] = ()) -> DeprecationDB:
        db = cls()
        for name in BUILTIN_FILES:
            text = datafiles.read_text(f"deprecations/{name}")
            db.merge_text(text, f"kubedra/data/deprecations/{name}")
        for path in extra:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except OSError as e:
                raise InputError(f"cannot read deprecations file: {e.strerror}", Location(file=path)) from e
            db.merge_text(text, path)
        db._reindex()
        return db

    def merge_text(self, text: str, origin: str) -> None:
        try:
            data = yaml_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InputError(
                f"invalid YAML in deprecations file: {getattr(e, 'problem', e)}",
                Location(file=origin, line=mark.line + 1 if mark else None),
            ) from e
        rows = data.get("entries") if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise InputError(
                "deprecations file must be a list of entries (or a mapping with 'entries')", Location(origin)
            )
        wildcards: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            where = Location(file=origin, line=None)
            if not isinstance(row, dict) or not all(k in row for k in ("group", "version", "kind")):
                raise InputError(f"entry {i}: needs group, version and kind", where)
            unknown = set(row) - _FIELDS
            if unknown:
                raise InputError(
                    f"entry {i}: unknown {noun(len(unknown), 'field')} {', '.join(sorted(unknown))}", where
                )
            if row["kind"] == "*":
                wildcards.append(row)
                continue
            self._merge_row(row, origin, i)
        for row in wildcards:  # a wildcard decorates every known kind of its group/version
            for g, v, k in list(self.entries):
                if g == str(row["group"] or "") and v == str(row["version"]):
                    self._merge_row({**row, "kind": k}, origin, -1)

    def _merge_row(self, row: dict[str, Any], origin: str, index: int) -> None:
        group, version, kind = str(row["group"] or ""), str(row["version"]), str(row["kind"])
        key = (group, version, kind)
        cur = self.entries.get(key) or Lifecycle(group, version, kind)
        changes: dict[str, Any] = {"origin": origin}
        for src, dst in (("introduced", "introduced"), ("deprecated", "deprecated"), ("removed", "removed")):
            if src in row:
                value = row[src]
                if value in (None, ""):
                    changes[dst] = None
                    continue
                parsed = Version.maybe(value)
                if parsed is None:
                    raise InputError(
                        f'entry {index} ({kind} {group}/{version}): {src} must be a version like "1.32", got {value!r}',
                        Location(file=origin),
                    )
                changes[dst] = parsed
        for src, dst in (("replacement", "replacement"), ("replacementKind", "replacement_kind")):
            if src in row:
                changes[dst] = str(row[src]) if row[src] else None
        if "notes" in row:
            changes["notes"] = str(row["notes"] or "").strip()
        if "classicDra" in row:
            changes["classic_dra"] = bool(row["classicDra"])
        if "convertible" in row:
            changes["convertible"] = str(row["convertible"]) if row["convertible"] else None
        if "offByDefault" in row:
            changes["off_by_default"] = bool(row["offByDefault"])
        if "featureGate" in row:
            changes["feature_gate"] = str(row["featureGate"]) if row["featureGate"] else None
        self.entries[key] = replace(cur, **changes)

    def _reindex(self) -> None:
        self._by_group_kind = {}
        for e in self.entries.values():
            self._by_group_kind.setdefault((e.group, e.kind), []).append(e)

    # -- queries -------------------------------------------------------------------------------------------
    def lookup(self, api_version: str, kind: str) -> Lifecycle | None:
        group, version = split_api_version(api_version)
        return self.entries.get((group, version, kind))

    def never_served(self, api_version: str, kind: str) -> bool:
        """A Kubernetes-owned group and a kind it has, in a version no release ever served (``v1alpha4``).

        CRD groups always contain a dot and are not Kubernetes-owned unless they end in ``.k8s.io``; their
        versions are the CRD's business, so they are never judged here.
        """
        group, _ = split_api_version(api_version)
        kubernetes_group = "." not in group or group.endswith(".k8s.io")
        return (
            kubernetes_group
            and self.lookup(api_version, kind) is None
            and bool(self.versions_of(group, kind))
        )

    def versions_of(self, group: str, kind: str) -> list[Lifecycle]:
        return list(self._by_group_kind.get((group, kind), ()))

    def best_version(self, group: str, kind: str, at: Version) -> Lifecycle | None:
        """The most stable version of group/kind served at ``at`` and not deprecated there, else any served."""
        served = [e for e in self.versions_of(group, kind) if e.served(at)]
        if not served:
            return None
        fresh = [e for e in served if not e.is_deprecated(at)]
        return max(fresh or served, key=lambda e: version_rank(e.version))

    def replacement(self, entry: Lifecycle, at: Version) -> tuple[str | None, str]:
        """(apiVersion, kind) to move to at version ``at``.

        The explicit replacement names the group and kind; within that group the most stable version served at
        ``at`` wins, so v1beta1 DeviceClass -> resource.k8s.io/v1 at 1.37 but -> v1beta2 at 1.33 (v1 is 1.34+).
        """
        if entry.replacement:
            rgroup, _ = split_api_version(entry.replacement)
        else:
            rgroup = entry.group
        rkind = entry.replacement_kind or entry.kind
        best = self.best_version(rgroup, rkind, at)
        if best is not None and (
            best.version != entry.version or best.group != entry.group or rkind != entry.kind
        ):
            return best.api_version, rkind
        return entry.replacement, rkind
