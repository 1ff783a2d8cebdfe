"""Options of a migration run and the per-object context the rewrites report through."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubedra import vendors
from kubedra.errors import Location, UsageError
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.quantity import QuantityError, parse_quantity
from kubedra.k8s.versions import DEFAULT_TARGET, require_supported
from kubedra.k8s.workloads import Path, dotted
from kubedra.migrate.report import Level
from kubedra.migrate.sharing_scope import Scope
from kubedra.model.identity import effective_namespace, object_key

STRATEGIES = ("claim-template", "extended-resource")


def parse_target(version: str) -> tuple[int, int]:
    v = require_supported(version, what="--target-version")  # resource.k8s.io/v1 is served from the oldest
    return v.major, v.minor


@dataclass(frozen=True)
class Sharing:
    """``--sharing``: exclusive, time-slicing, mps or mig:<profile>."""

    mode: str = "exclusive"
    profile: str | None = None

    @staticmethod
    def parse(text: str) -> Sharing:
        t = text.strip()
        if t in ("exclusive", "time-slicing", "mps"):
            return Sharing(t)
        if t.startswith("mig:") and len(t) > 4:
            profile = t[4:]
            # a partition profile of a vendor whose driver models sharing (NVIDIA's MIG profiles: 1g.10gb)
            if not any(
                v.unsupported("sharing") is None and v.partition_claim(profile) is not None
                for v in vendors.all()
            ):
                raise UsageError(f"--sharing {text}: not a MIG profile name like mig:1g.10gb")
            return Sharing("mig", profile)
        raise UsageError(f"--sharing {text}: expected exclusive, time-slicing, mps or mig:<profile>")


@dataclass(frozen=True)
class MigrateOptions:
    target_version: str = DEFAULT_TARGET
    gpu_strategy: str = "claim-template"
    sharing: Sharing | None = (
        None  # None: not given (exclusive unless a time-slicing ConfigMap says otherwise)
    )
    min_memory: str | None = None
    prefer: tuple[str, ...] = ()
    interval: str = "Default"
    gang: bool = True

    @property
    def target(self) -> tuple[int, int]:
        return parse_target(self.target_version)

    def check(self) -> None:
        self.target  # noqa: B018 - validates
        if self.gpu_strategy not in STRATEGIES:
            raise UsageError(f"--gpu-strategy must be one of {', '.join(STRATEGIES)}")
        if self.gpu_strategy == "extended-resource" and (self.sharing or self.min_memory or self.prefer):
            raise UsageError(
                "--sharing, --min-memory and --prefer shape ResourceClaimTemplates; they need "
                "--gpu-strategy claim-template"
            )
        if self.min_memory is not None:
            try:
                q = parse_quantity(self.min_memory)
            except QuantityError as e:
                raise UsageError(f"--min-memory {self.min_memory}: {e}") from e
            if q.nanos <= 0:
                raise UsageError("--min-memory must be positive")
        if len(self.prefer) > 8:
            raise UsageError("--prefer: at most 8 alternatives (firstAvailable holds 1..8 subrequests)")


@dataclass
class Run:
    """State shared by every file of one run."""

    options: MigrateOptions
    existing: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, namespace, name) in the inputs
    sharing_classes: dict[str, str] = field(default_factory=dict)  # advertised resource -> DeviceClass
    scope: Scope = field(default_factory=Scope)  # which sharing config applies to which pods
    hpa_targets: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, namespace, name) autoscaled
    # (kind, namespace, name) -> (namespace, ResourceClaim) its last, partial group shares with other workloads
    packed_claims: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)

    def autoscaled(self, kind: str, namespace: str | None, name: str | None) -> bool:
        return (kind, namespace or "", name or "") in self.hpa_targets

    ambiguous_sharing: set[str] = field(default_factory=set)

    def taken(self, kind: str, namespace: str | None, name: str) -> bool:
        return (kind, effective_namespace(kind, namespace), name) in self.existing

    def reserve(self, kind: str, namespace: str | None, name: str) -> None:
        self.existing.add((kind, effective_namespace(kind, namespace), name))

    def free_name(self, kind: str, namespace: str | None, base: str) -> str:
        name, n = base, 2
        while self.taken(kind, namespace, name):
            name = f"{base}-{n}"
            n += 1
        return name

    # identity (see :func:`identity`) -> where each definition of it is, in input order
    definitions: dict[tuple[str, str, str, str], list[tuple[Location, ObjectRef]]] = field(
        default_factory=dict
    )
    # (owner identity, kind, namespace, base name) -> the name given to the object written for that owner
    made: dict[tuple[Any, str, str, str], str] = field(default_factory=dict)

    def name_for(self, owner: Mapping[str, Any], kind: str, namespace: str | None, base: str) -> str:
        """A free name for a ``kind`` object written for ``owner``, reserved. An owner defined twice in the
        inputs (kubectl apply keeps the later definition) gets the same name both times, so what is written for
        the later definition replaces what was written for the earlier one, as the owner itself is replaced
        (instead of a ``-2`` twin that nothing else would remove)."""
        key = (identity(owner) or id(owner), kind, namespace or "", base)
        name = self.made.get(key)
        if name is None:
            name = self.free_name(kind, namespace, base)
            self.reserve(kind, namespace, name)
            self.made[key] = name
        return name

    def made_for(self, owner: Mapping[str, Any], kind: str, namespace: str | None, name: str) -> bool:
        """Whether ``name`` was written for an earlier definition of ``owner`` (then it is no one else's)."""
        return self.made.get((identity(owner) or id(owner), kind, namespace or "", name)) == name


def identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    """(API group, kind, namespace, name) as the apiserver keys an object (:func:`kubedra.model.identity.object_key`:
    a namespaced object without a namespace is in ``default``, as kubectl apply without -n puts it); None without
    metadata.name (a generateName makes a new object each time)."""
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not name or not isinstance(meta, Mapping):
        return None
    ns = meta.get("namespace")
    return object_key(
        str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), str(ns) if ns else None, str(name)
    )


class ObjectContext:
    """Reports findings for one object, with file:line from the ruamel tree."""

    def __init__(
        self,
        run: Run,
        file: str,
        root: Any,
        prefix: Path,
        base_line: int,
        out: list[Finding],
    ) -> None:
        self.run = run
        self.file = file
        self.root = root  # the ruamel document
        self.prefix = prefix  # path of the object inside the document (() or ('items', i))
        self.base_line = base_line
        self.out = out
        obj = root
        for step in prefix:
            obj = obj[step]
        self.obj = obj
        self.ref = ObjectRef.of(obj)

    @property
    def options(self) -> MigrateOptions:
        return self.run.options

    def line_of(self, path: Path) -> int:
        return ruamel_line(self.root, (*self.prefix, *path), self.base_line)

    def note(self, level: Level, message: str, path: Path | None = None) -> None:
        line = self.line_of(path) if path is not None else self.line_of(())
        self.out.append(
            Finding(
                severity=level,
                message=message,
                source=Location(file=self.file, line=line),
                object=self.ref,
                path=dotted(path) if path else None,
            )
        )


def ruamel_line(root: Any, path: Path, base_line: int) -> int:
    """1-based file line of ``path`` in a ruamel document whose first line is ``base_line``."""
    line = 0
    node = root
    for step in path:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(node, Mapping) and step in node:
                if lc is not None:
                    line = lc.key(step)[0]
                node = node[step]
            elif isinstance(node, Sequence) and isinstance(step, int) and 0 <= step < len(node):
                if lc is not None:
                    line = lc.item(step)[0]
                node = node[step]
            else:
                break
        except (KeyError, IndexError, TypeError, AttributeError):
            break
    return base_line + line
