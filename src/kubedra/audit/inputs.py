"""Turn audit inputs (files, rendered charts, snapshot files) into scopes of items, and bad input into findings:
:func:`gather` assembles what one ``kubedra audit`` run reads from files (live clusters: ``audit.cluster``).

A file written by ``kubedra snapshot`` (a ``List`` whose ``kubedra`` header has ``format:
kubedra.io/snapshot/v1``) is audited as the cluster it captured, like a live one: its objects are reported
with ``source: {"cluster": name}``, and the header supplies what a live audit reads besides objects (the
server version, served APIs, the feature-gate and deprecated-API lines of ``/metrics``, Helm release
objects, what could not be read).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml

from kubedra.audit import snapshot as snapshot_audit
from kubedra.audit.engine import IgnoreEntry
from kubedra.audit.model import Item, RuleBook
from kubedra.audit.scope import ClusterFacts, Scope
from kubedra.errors import InputError, Location, UsageError
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.model import snapshotdata
from kubedra.model.snapshotdata import HEADER_KEY, Header, Snapshot
from kubedra.sources import files, helm, jsonstream
from kubedra.sources.access import METRICS, Unread
from kubedra.text import noun

# Every snapshot file contains this text (its header's format); others are not parsed twice to find out.
SNAPSHOT_MARK = "kubedra.io/snapshot/"


@dataclass
class FileInputs:
    scope: Scope
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    snapshots: list[Scope] = field(default_factory=list)  # one cluster scope per snapshot file


def malformed(rules: RuleBook, err: InputError) -> Finding:
    err = files.with_advice(err, "audit")
    meta = rules["input.helm-template" if isinstance(err, files.TemplateInput) else "input.malformed"]
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
    """Read files/folders/stdin; a malformed file becomes an ``input.malformed`` finding and the scan goes on.
    Snapshot files become cluster scopes of their own (:attr:`FileInputs.snapshots`)."""
    out = FileInputs(scope=scope or Scope(name=None))
    for name in files.iter_manifest_files(paths):
        out.files += 1
        snap: tuple[Scope, list[Finding]] | None
        try:
            if snapshotdata.should_stream(name) and snapshotdata.has_mark(name):
                snap = streamed_scope(name, rules)  # larger than a whole read takes: item by item
            else:
                text = files.read_text(name)
                snap = None
                if SNAPSHOT_MARK in text:
                    if _streams_small(name):
                        del text  # the items are kept, not the file's text beside them
                        snap = _streamed_small(name, rules)
                        text = "" if snap is not None else files.read_text(name)
                    if snap is None:
                        snap = snapshot_scope(text, name, rules)
        except InputError as e:
            out.findings.append(malformed(rules, e))
            continue
        if snap is not None:
            out.snapshots.append(snap[0])
            out.findings.extend(snap[1])
            continue
        result = files.parse_text(text, name, keep_nodes="lines")  # lines, not node trees: a tenth the memory
        out.findings.extend(add_documents(out.scope, result.documents, rules=rules))
        out.findings.extend(malformed(rules, e) for e in result.errors)
    return out


NOT_AN_OBJECT = (
    "not a Kubernetes object (no kind): a fragment or a tool's own configuration; not audited "
    "(kubectl refuses it too)"
)


def _documents(text: str, name: str) -> list[Any] | None:
    """Every document of ``text`` as Python data, or None when it does not parse or is refused by kubedra's
    bounds (depth, alias expansion, node count): ``parse_text`` then reads it again and says why, at file:line."""
    if name.endswith(".json") or text.lstrip().startswith(("{", "[")):
        try:
            return [files.load_json(text)]
        except (ValueError, RecursionError):
            if name.endswith(".json"):
                return None
    try:
        return [obj for _node, obj in files.iter_documents(text, name)]
    except InputError:
        return None


def _is_snapshot(doc: Any) -> bool:

    return (
        isinstance(doc, dict) and isinstance(doc.get(HEADER_KEY), dict) and isinstance(doc.get("items"), list)
    )


def snapshot_scope(text: str, name: str, rules: RuleBook) -> tuple[Scope, list[Finding]] | None:
    """The cluster scope of a ``kubedra snapshot`` file and the findings its header implies (what could not
    be read, items that are not objects), or None when ``text`` is an ordinary manifest file.

    Raises InputError for a snapshot of another format, or one that shares its file with other documents."""

    display = "<stdin>" if name == files.STDIN else name
    docs = _documents(text, name)
    if not docs or not any(_is_snapshot(d) for d in docs):
        return None
    if len(docs) > 1:
        raise InputError(
            "a kubedra snapshot must be the only document in its file (audit other manifests as files of their own)",
            Location(file=display),
        )
    data = docs[0]
    header = Header.from_dict(data[HEADER_KEY], display)
    return _scope(header, enumerate(data["items"]), display, rules)


def _streams_small(name: str) -> bool:
    """Whether a snapshot file under the large-file bound is read item by item, as verify and plan read it."""
    return snapshotdata.STREAM_SMALL and jsonstream.should_stream(name)


def _streamed_small(name: str, rules: RuleBook) -> tuple[Scope, list[Finding]] | None:
    """:func:`streamed_scope` of a JSON file under the large-file bound that names a snapshot's format (its
    items kept with one copy of each key, no text of the whole file beside them), or None when it cannot be
    read that way (no snapshot after all, malformed): it is then read whole, so that it reads as it always has."""
    try:
        return streamed_scope(name, rules)
    except InputError:
        return None


def streamed_scope(name: str, rules: RuleBook) -> tuple[Scope, list[Finding]]:
    """:func:`snapshot_scope` of a JSON snapshot too large to read whole, read item by item
    (:func:`kubedra.model.snapshotdata.streamed`); InputError when it is no snapshot or malformed."""
    with snapshotdata.streamed(name, trees=True) as stream:  # no check changes an item: equal parts shared
        items = [(i, obj) for i, (_, obj) in enumerate(stream.items())]
    return _scope(snapshotdata.streamed_header(stream, name), items, name, rules)


def _scope(
    header: Header, objects: Iterable[tuple[int, Any]], display: str, rules: RuleBook
) -> tuple[Scope, list[Finding]]:
    header.cluster = header.cluster or display
    findings: list[Finding] = []
    items = []
    for i, obj in objects:
        if isinstance(obj, dict) and obj.get("kind"):
            items.append(obj)
        else:
            findings.append(
                malformed(
                    rules, InputError(f"snapshot item {i} is not a Kubernetes object", Location(file=display))
                )
            )
    scope: Scope = snapshot_audit.scope(Snapshot(header=header, items=items, path=display))
    assert scope.facts is not None
    meta = rules["cluster.not-inspected"]
    for resource, reason in scope.facts.not_inspected:
        why = Unread.of(resource, reason).cause
        findings.append(
            Finding(
                rule=meta.id,
                severity="warning" if resource == METRICS else meta.severity,
                object=ObjectRef("", "", None, resource),
                source=Location(cluster=header.cluster),
                message=f"{resource} not inspected ({why}: {reason}) when snapshot {display} was taken",
                fix=meta.render_fix({"resource": resource}),
            )
        )
    return scope, findings


def add_documents(
    scope: Scope, docs: Iterable[files.Document], via: str = "", *, rules: RuleBook
) -> list[Finding]:
    """Add the objects of ``docs`` to ``scope``; a mapping without ``kind`` is no object the rules can read:
    an ``input.malformed`` finding each (returned), never silently scanned as an object with no findings."""
    findings = []
    for d in docs:
        if d.kind:
            scope.items.append(Item(obj=d.obj, doc=d, via=via))
        else:
            findings.append(malformed(rules, InputError(NOT_AN_OBJECT, d.location)))
    return findings


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
                f"ignore entry {i}: unknown {noun(len(unknown), 'field')} {', '.join(sorted(unknown))}",
                Location(file=path),
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

    for p in patterns:
        if not any(fnmatchcase(r, p) for r in rules.rules):
            raise UsageError(f"--ignore {p}: no such rule (see `kubedra audit --list-rules`)")


@dataclass
class AuditInputs:
    """Everything one audit reads: scopes to check, and findings about the inputs themselves."""

    scopes: list[Scope] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # unreadable files, failed renders, lost clusters
    files: int = 0
    clusters: list[ClusterFacts] = field(default_factory=list)  # snapshot files and live clusters
    unreachable: bool = False  # a cluster could not be read (one of several: its finding is in ``findings``)

    @property
    def objects(self) -> int:
        return sum(len(s.items) for s in self.scopes)


def gather(
    paths: Sequence[str],
    charts: Sequence[str],
    values: Sequence[str],
    rules: RuleBook,
) -> AuditInputs:
    """Files and folders (snapshot files become cluster scopes) and rendered charts; live clusters are added
    by :func:`kubedra.audit.cluster.gather`. Nothing read from ``paths`` is an :class:`InputError` (a typo'd
    folder is not "no findings")."""
    out = AuditInputs()
    file_scope = Scope(name=None)
    snapshots: list[Scope] = []
    if paths:
        loaded = load_files(paths, rules, file_scope)
        if not file_scope.items and not loaded.snapshots and not loaded.findings:
            shown = ", ".join("<stdin>" if f == "-" else f for f in paths)
            raise InputError(f"no manifests found in {shown}: nothing to audit")
        out.findings += loaded.findings
        out.files += loaded.files
        snapshots = loaded.snapshots
    for chart in charts:
        rendered = helm.render_chart(chart, values)
        if rendered.error:
            out.findings.append(
                input_finding(
                    rules, "input.helm-render-failed", Location(file=chart), rendered.error, {"chart": chart}
                )
            )
        out.findings += add_documents(file_scope, rendered.documents, rules=rules)
        out.findings += [malformed(rules, e) for e in rendered.errors]
        out.files += rendered.files
    if file_scope.items or charts or (paths and not snapshots):
        out.scopes.append(file_scope)
    out.scopes += snapshots  # snapshot files are audited as the clusters they captured
    out.clusters = [s.facts for s in snapshots if s.facts is not None]
    return out


def input_finding(rules: RuleBook, rule: str, where: Location, message: str, fix: dict[str, str]) -> Finding:
    meta = rules[rule]
    return Finding(
        rule=meta.id,
        severity=meta.severity,
        object=ObjectRef(),
        source=where,
        message=message,
        fix=meta.render_fix(fix),
    )
