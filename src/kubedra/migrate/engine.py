"""``kubedra migrate``: compute every rewrite in memory, report, and only then (elsewhere) write.

Per file: split into documents, find what needs a rewrite (device-plugin GPU requests, sharing
ConfigMaps, older DRA versions, classic DRA, gangs), edit those documents with ruamel.yaml, insert the
new objects next to them and render. Untouched documents are copied byte for byte. Running the
migration on its own output changes nothing.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import yaml

from kubedra import vendors
from kubedra.errors import InputError, Location
from kubedra.k8s import kueue as kueue_config
from kubedra.k8s import namespaces
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.workloads import (
    PodTemplate,
    api_group,
    containers,
    custom_resource_gpu_fields,
    dotted,
    facts,
    get_path,
    pod_templates,
    queue_name,
)
from kubedra.migrate import dra, extended, gang, gpu, shared_claims
from kubedra.migrate.context import MigrateOptions, ObjectContext, Run, identity
from kubedra.migrate.report import FileResult, MigrationReport
from kubedra.migrate.sharing_scope import Scope, sharing_configmap
from kubedra.model import convert
from kubedra.sources.files import (
    HELM_TEMPLATE,
    TemplateInput,
    iter_documents,
    iter_manifest_files,
    json_problem,
    load_json,
    template_line,
    with_advice,
)
from kubedra.sources.files import read_text as files_read_text
from kubedra.sources.yamldoc import Chunk, JsonFile, YamlFile, iter_objects, new_map, to_plain

try:  # pragma: no cover - depends on how PyYAML was built
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"
_RELEVANT_WORDS = (
    r"gpu|resource\.k8s\.io|minAvailable|ReplicaSpecs|replicatedJobs|parallelism|resourceClaims|"
    r"ClaimParameters|ClassParameters|sharing|scheduling\.k8s\.io|workloadRef"
)


@functools.cache
def _relevant() -> re.Pattern[str]:
    """A document is looked at only if its text mentions one of these or a vendor's resource domain (everything
    else is copied as is)."""
    domains = "|".join(re.escape(v.resource_domain.rstrip("/")) for v in vendors.all())
    return re.compile(f"{domains}|{_RELEVANT_WORDS}", re.IGNORECASE)


_NOT_AN_OBJECT = (
    "not a Kubernetes object (no apiVersion/kind: a fragment or a tool's own config); nothing to migrate, "
    "check it by hand"
)


def _plugin_gpu_names(obj: Mapping[str, Any], templates: list[PodTemplate]) -> list[str]:
    """The whole-GPU device-plugin resource (``nvidia.com/gpu``, ``amd.com/gpu``) of each vendor whose GPUs the
    pod templates request: the name a Kueue quota counts them by."""
    out: list[str] = []
    for tmpl in templates:
        spec = get_path(obj, tmpl.spec)
        for _, _, c in containers(spec if isinstance(spec, Mapping) else {}):
            res = c.get("resources")
            for section in ("limits", "requests"):
                values = res.get(section) if isinstance(res, Mapping) else None
                for name in values if isinstance(values, Mapping) else ():
                    gr = vendors.classify(str(name))
                    if gr is not None and (plugin := vendors.get(gr.vendor).gpu_resource) not in out:
                        out.append(plugin)
    return out


@functools.cache
def _gpu_text() -> re.Pattern[str]:
    """A GPU request of any vendor behind kubedra.vendors (nvidia.com/gpu, nvidia.com/mig-..., amd.com/gpu...)."""
    return re.compile(
        "|".join(re.escape(v.resource_domain) + r"(gpu|mig-|[a-z]px_nps)" for v in vendors.all())
    )


@dataclass
class SourceFile:
    name: str
    text: str
    doc: YamlFile | None  # None for templates
    chart: str = ""  # why a Helm chart folder was not read (then text is empty and doc None)


_SliceEntry = tuple[SourceFile, Chunk, MutableMapping[str, Any], ObjectContext, Any]


def iter_inputs(paths: Iterable[str]) -> Iterator[str]:
    """Files under ``paths`` (folders recursively): manifests plus Helm templates and charts to report."""
    return iter_manifest_files(paths)


def read_text(name: str) -> str:
    """A file's text with its line endings kept (CRLF files are rewritten as CRLF), bounded in size."""
    return files_read_text(name, newline="")


def _is_template(name: str, text: str) -> bool:
    return template_line(name, text) is not None


def _manual(message: str, file: str, line: int | None) -> Finding:
    """A manual item about a document that is not an object (no object to name)."""
    return Finding(severity="manual", message=message, source=Location(file=file, line=line))


def _template_findings(name: str, text: str, chart: str = "") -> list[Finding]:
    if chart:
        return [Finding(severity="manual", message=chart, source=Location(file=name))]
    out = [
        Finding(
            severity="manual",
            message=f"{HELM_TEMPLATE} (helm template ... | kubedra migrate -), migrate the rendered manifests, "
            "then carry the change back into the chart; the template is not written to --out",
            source=Location(file=name, line=template_line(name, text) or 1),
        )
    ]
    for i, ln in enumerate(text.splitlines(), 1):
        if ln.lstrip().startswith("#"):
            continue
        if _gpu_text().search(ln):
            out.append(
                Finding(
                    severity="manual",
                    message=f"GPU request inside a template: {ln.strip()}",
                    source=Location(file=name, line=i),
                )
            )
    return out


def _check_syntax(name: str, chunk: Chunk) -> list[Any]:
    """Parse a document with PyYAML (fast, cached per chunk); a syntax error is an input error with file:line."""
    if chunk.is_empty:
        return []
    cached = chunk.plain
    if cached is not None:
        return cached
    chunk.plain = [d for _, d in iter_documents(chunk.body, name, chunk.line) if d is not None]
    return chunk.plain


def _open(text: str, name: str) -> YamlFile:
    stripped = text.lstrip()
    if name.endswith(".json") or (name == "<stdin>" and stripped.startswith("{")):
        try:
            load_json(text)  # bounded like every JSON kubedra reads (depth, number size, no NaN)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg}", Location(name, e.lineno)) from e
        except (ValueError, RecursionError) as e:
            raise InputError(f"invalid JSON: {json_problem(e)}", Location(name)) from e
        return JsonFile(text, name)
    return YamlFile(text, name)


def load_sources(paths: Iterable[str]) -> list[SourceFile]:
    """Read and syntax-check every input; raises InputError before anything is computed or written."""
    out: list[SourceFile] = []
    for name in iter_inputs(paths):
        try:
            text = read_text(name)
        except TemplateInput as e:  # a Helm chart folder: reported as a manual item, like a template
            if not e.chart:
                raise
            out.append(SourceFile(name, "", None, chart=with_advice(e, "migrate").message))
            continue
        display = "<stdin>" if name == STDIN else name
        if _is_template(name, text):
            out.append(SourceFile(display, text, None))
            continue
        doc = _open(text, display)
        if doc.render() != text:  # pragma: no cover - split_chunks is lossless by construction
            raise InputError("internal: document split is not lossless", Location(display))
        for chunk in doc.chunks:
            _check_syntax(display, chunk)
        out.append(SourceFile(display, text, doc))
    return out


def _index(run: Run, sources: list[SourceFile]) -> None:  # noqa: C901 - one pass over every document collects names, workloads and configs
    """Names of the objects already in the inputs, and the device plugin's sharing config."""
    per_resource: dict[str, list[str]] = {}
    objects: list[Mapping[str, Any]] = []
    workloads: list[Mapping[str, Any]] = []
    configmaps: list[tuple[Mapping[str, Any], vendors.Vendor, list[vendors.SharedClass], list[str]]] = []
    for src in sources:
        if src.doc is None:
            continue
        for chunk in src.doc.chunks:
            for data in _check_syntax(src.name, chunk):
                objs = (
                    data.get("items")
                    if isinstance(data, Mapping) and str(data.get("kind", "")).endswith("List")
                    else [data]
                )
                for obj in objs if isinstance(objs, list) else []:
                    if not isinstance(obj, Mapping):
                        continue
                    ref = ObjectRef.of(obj)
                    if ref.kind and ref.name:
                        run.reserve(ref.kind, ref.namespace, ref.name)
                    key = identity(obj)
                    if key is not None:
                        run.definitions.setdefault(key, []).append((Location(src.name, chunk.line), ref))
                    if ref.kind in ("DaemonSet", "ClusterPolicy", "Node"):
                        objects.append(obj)
                    if ref.kind in ("Deployment", "ReplicaSet", "ReplicationController"):
                        workloads.append(obj)
                    target = get_path(obj, ("spec", "scaleTargetRef"))
                    if ref.kind == "HorizontalPodAutoscaler" and isinstance(target, Mapping):
                        run.hpa_targets.add(
                            (
                                str(target.get("kind")),
                                namespaces.effective(ref.namespace),
                                str(target.get("name")),
                            )
                        )
                    shared = sharing_configmap(
                        obj,
                        extended_resource=run.options.gpu_strategy == "extended-resource",
                        interval=run.options.interval,
                    )
                    if shared is not None:
                        configmaps.append((obj, *shared))
                        for sc in shared[1]:
                            per_resource.setdefault(sc.resource, []).append(sc.name)
    run.scope = Scope.build(objects, configmaps)
    run.scope.interval = run.options.interval
    if run.options.sharing is None and run.options.gpu_strategy == "claim-template":
        found = [shared_claims.candidate(w, run.scope, run.hpa_targets) for w in workloads]
        run.packed_claims = shared_claims.pack([c for c in found if c is not None])
    for resource, classes in per_resource.items():
        if len(set(classes)) == 1:
            run.sharing_classes[resource] = classes[0]
        else:
            run.ambiguous_sharing.add(resource)


def _report_redefinitions(run: Run, results: Mapping[str, FileResult]) -> None:
    """An object defined again in a later input is replaced by it when both are applied (kubectl apply keeps
    the later definition); simulate reports the same, at the same file:line, in the same words."""
    for where in run.definitions.values():
        for (earlier, ref), (later, _) in itertools.pairwise(where):
            results[str(earlier.file)].findings.append(
                Finding(
                    severity="warning",
                    message=f"defined again at {later}; the later definition replaces this one (as kubectl "
                    "apply of both would), and what migrate writes for it keeps the same names, so it "
                    "replaces what is written here too",
                    source=earlier,
                    object=ref,
                )
            )


class Migrator:
    def __init__(self, options: MigrateOptions) -> None:
        options.check()
        self.options = options
        self.run = Run(options)
        self.emitted: set[str] = set()

    def migrate(self, sources: list[SourceFile]) -> MigrationReport:
        _index(self.run, sources)
        report = MigrationReport(target_version=self.options.target_version)
        slices: list[_SliceEntry] = []
        results: dict[str, FileResult] = {}
        for src in sources:
            result = FileResult(file=src.name, original=src.text, output=src.text)
            results[src.name] = result
            report.files.append(result)
            if src.doc is None:
                result.template = True
                result.findings.extend(_template_findings(src.name, src.text, src.chart))
                continue
            for chunk in list(src.doc.chunks):
                self._chunk(src, chunk, result, slices)
        self._split_slices(slices, results)
        _report_redefinitions(self.run, results)
        for src in sources:
            if src.doc is not None:
                results[src.name].output = src.doc.render()
        return report

    # -- one document ---------------------------------------------------------------------------
    def _chunk(
        self,
        src: SourceFile,
        chunk: Chunk,
        result: FileResult,
        slices: list[_SliceEntry],
    ) -> None:
        assert src.doc is not None
        if chunk.is_empty or chunk.new:
            return
        plain = _check_syntax(src.name, chunk)
        if not _relevant().search(chunk.body):
            for d in plain:
                if not isinstance(d, Mapping) or not d.get("apiVersion") or not d.get("kind"):
                    result.findings.append(_manual(_NOT_AN_OBJECT, src.name, chunk.line))
            return
        data = src.doc.load(chunk)
        if not isinstance(data, MutableMapping):
            result.findings.append(
                _manual("not a Kubernetes object (expected a mapping)", src.name, chunk.line)
            )
            return
        for prefix, obj in iter_objects(data):
            ctx = ObjectContext(self.run, src.name, data, prefix, chunk.line, result.findings)
            if not obj.get("apiVersion") or not obj.get("kind"):
                result.findings.append(_manual(_NOT_AN_OBJECT, src.name, ctx.line_of(())))
                continue
            before = to_plain(obj)
            new_before, new_after = self._object(ctx, obj, slices, src, chunk)
            if to_plain(obj) != before:
                chunk.dirty = True
            for n in new_before:
                src.doc.insert_before(chunk, new_map(n))
                result.new_objects += 1
            for n in reversed(new_after):
                src.doc.insert_after(chunk, new_map(n))
                result.new_objects += 1

    def _object(  # noqa: C901 - dispatch of one object to its rewrite, one branch per kind of object
        self,
        ctx: ObjectContext,
        obj: MutableMapping[str, Any],
        slices: list[_SliceEntry],
        src: SourceFile,
        chunk: Chunk,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        opts = self.options
        before: list[dict[str, Any]] = []
        after: list[dict[str, Any]] = []
        if dra.is_classic(obj):
            dra.report_classic(ctx)
            return before, after
        if dra.is_vendor_claim_parameters(obj):
            dra.report_vendor_parameters(ctx)
            return before, after
        if dra.needs_upgrade(obj) or obj.get("kind") == "DeviceTaintRule":
            dra.upgrade(ctx)
        if api_group(str(obj.get("apiVersion", ""))) == "scheduling.k8s.io":
            gang.upgrade_scheduling(ctx)
            return before, after
        if obj.get("kind") == "ResourceSlice" and str(obj.get("apiVersion", "")).startswith(
            "resource.k8s.io/"
        ):
            slices.append((src, chunk, obj, ctx, to_plain(obj)))
            return before, after
        found = sharing_configmap(
            obj, extended_resource=opts.gpu_strategy == "extended-resource", interval=opts.interval
        )
        if found is not None:
            for sc in found[1]:
                if self.run.taken("DeviceClass", None, sc.name) or sc.name in self.emitted:
                    continue  # already in the inputs (a previous run) or emitted for another ConfigMap
                self.emitted.add(sc.name)
                ctx.note(
                    "change",
                    f"{sc.resource} sharing ({sc.data_key}) -> DeviceClass {sc.name}",
                    ("data", sc.data_key),
                )
                for w in sc.warnings:
                    ctx.note("warning", w, ("data", sc.data_key))
                after.append(sc.device_class)
            for p in self.run.scope.plugins:
                if (namespaces.effective(p.namespace), p.name) != (
                    namespaces.effective(ctx.ref.namespace),
                    ctx.ref.name,
                ):
                    continue
                named = ", ".join(repr(k) for k in p.configs if k not in p.defaults) or "none"
                ctx.note(
                    "warning",
                    f"the device plugin applies one config per node: {p.default_why}; named configs ({named}) "
                    f"apply to nodes labelled {p.label}=<name>. Each pod template gets the DeviceClass of the "
                    "config every node it can land on uses (from its nodeSelector/affinity); when that differs "
                    "between its nodes it is a manual item",
                    ("data",),
                )
            return before, after
        templates = pod_templates(obj)
        if templates is None:
            self._unknown_kind(ctx, obj)
            return before, after
        dra.flatten_pod_claim_sources(ctx, templates)
        gang.report_workload_refs(ctx, templates)
        gang_info = gang.detect(obj, templates) if opts.gang else None
        if opts.gpu_strategy == "claim-template":
            handled, shared_before, shared_after = shared_claims.convert(ctx, templates)
            if handled:
                before.extend(shared_before)
                after.extend(shared_after)
            else:
                plugin_names = _plugin_gpu_names(obj, templates)  # before the rewrite removes them
                new = gpu.convert_claim_template(ctx, templates)
                before.extend(new)
                if new and queue_name(obj):
                    self._kueue_quota(ctx, obj, new, plugin_names)
        else:
            classes = extended.extended_resource_classes(ctx, templates)
            if classes:
                ctx.note("warning", extended.extended_resource_warning(opts.target))
            before.extend(classes)
        if gang_info is not None:
            before.extend(gang.convert(ctx, templates, gang_info))
        for sc in self.run.scope.platform_class_objects(_class_names([*before, *after])):
            before.insert(
                0, sc.device_class
            )  # a platform's time-sharing class, written once with its first user
            for w in sc.warnings:
                ctx.note("warning", w)
        return before, after

    def _kueue_quota(
        self,
        ctx: ObjectContext,
        obj: Mapping[str, Any],
        templates: list[dict[str, Any]],
        plugin_names: list[str],
    ) -> None:
        """A Kueue-queued workload whose GPUs became claims: its quota is charged only through Kueue's
        deviceClassMappings, which kubedra cannot see or write (the Kueue Configuration)."""
        kueue = facts()["kueue"]
        classes: set[str] = set()
        for t in templates:
            for r in get_path(t, ("spec", "spec", "devices", "requests")) or []:
                subs = [r.get("exactly") or {}, *(r.get("firstAvailable") or [])]
                classes.update(str(x["deviceClassName"]) for x in subs if x.get("deviceClassName"))
        ctx.note(
            "warning",
            f"queued in Kueue LocalQueue {queue_name(obj)}: once its GPUs are ResourceClaimTemplate requests "
            f"(DeviceClass {', '.join(sorted(classes))}), Kueue charges them to the ClusterQueue's quota only through "
            f"{kueue['device_class_mappings']} in the Kueue Configuration (each DeviceClass to the resource name "
            f"the ClusterQueue's nominalQuota uses, e.g. {' or '.join(plugin_names)}; only exactly requests are supported); "
            f"without it the GPUs are not counted. Kueue's docs recommend keeping {' or '.join(plugin_names)} for such "
            "workloads: "
            f"--gpu-strategy extended-resource ({kueue['dra_docs']})",
            ("metadata", "labels", kueue["queue_label"]),
        )

    def _unknown_kind(self, ctx: ObjectContext, obj: Mapping[str, Any]) -> None:
        quotas = kueue_config.gpu_quotas(obj, vendors.gpu_names())
        if quotas:  # a quota, not a request: nothing to rewrite, but a migration to claims needs its mapping
            ctx.note("warning", kueue_config.quota_message(ctx.ref.kind, quotas), quotas[0].path)
            return
        for path, value in custom_resource_gpu_fields(obj, vendors.gpu_names()):
            ctx.note(
                "manual",
                f"GPU setting in a field of {ctx.ref.kind} ({dotted(path)} = {value!r}): kubedra does not know how "
                "this resource turns it into pods; change it by hand or let its operator request DRA claims",
                path,
            )

    def _split_slices(
        self,
        slices: list[_SliceEntry],
        results: dict[str, FileResult],
    ) -> None:
        if not slices or self.options.target[1] < 35:
            return

        objs = [s[2] for s in slices]
        out = convert.split_partitionable_slices(objs)
        if len(out) == len(objs):
            return
        originals = {id(o): s for o, s in zip(objs, slices, strict=True)}
        pending: list[MutableMapping[str, Any]] = []
        for o in out:
            if id(o) not in originals:
                pending.append(o)
                continue
            src, chunk, obj, ctx, _snapshot = originals[id(o)]
            if pending:
                assert src.doc is not None
                for n in pending:
                    src.doc.insert_before(chunk, n)
                    results[src.name].new_objects += 1
                    ctx.note(
                        "change",
                        f"partitionable slice split for 1.35+: counter sets moved to new ResourceSlice "
                        f"{n.get('metadata', {}).get('name')}; pool.resourceSliceCount raised",
                    )
                pending = []
        for _, chunk, obj, _ctx, snapshot in slices:
            if to_plain(obj) != snapshot:
                chunk.dirty = True


def attach_validation(
    report: MigrationReport, validate_texts: Callable[[list[tuple[str, str]], str], Any]
) -> None:
    """Validate the migrated output at the target version with ``validate_texts`` (the caller passes
    :func:`kubedra.validate.engine.validate_texts`: migrate and validate are sibling use cases, so the one that
    composes them, the CLI, wires them); errors become manual items of their file.

    Objects already reported as manual (classic DRA, fragments) are not reported twice.
    """
    result = validate_texts(
        [(r.file, r.output) for r in report.files if not r.template], report.target_version
    )
    report.validation = result.to_dict()
    by_file = {r.file: r for r in report.files}
    for err in result.errors:
        fr = by_file.get(err.file)
        if fr is None or not err.kind:
            continue  # not a Kubernetes object: already reported by the migration
        ref = ObjectRef(err.api_version, err.kind, err.namespace, err.name)
        if any(f.severity == "manual" and f.object == ref for f in fr.findings):
            continue
        fr.findings.append(
            Finding(
                severity="manual",
                message=f"migrated output does not validate at {report.target_version}: "
                f"{err.path + ': ' if err.path else ''}{err.message}",
                source=Location(file=err.file, line=err.line),
                object=ref,
                path=err.path or None,
            )
        )


def _class_names(objects: Iterable[Mapping[str, Any]]) -> set[str]:
    """The DeviceClasses the exactly requests of these claims and claim templates name."""
    out = set()
    for o in objects:
        spec = get_path(o, ("spec", "spec")) if o.get("kind") == "ResourceClaimTemplate" else o.get("spec")
        for r in get_path(spec, ("devices", "requests")) or [] if isinstance(spec, Mapping) else []:
            cls = get_path(r, ("exactly", "deviceClassName")) if isinstance(r, Mapping) else None
            if cls:
                out.add(str(cls))
    return out
