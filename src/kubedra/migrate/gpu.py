"""Device plugin → DRA: GPU requests in pod templates (``nvidia.com/gpu``, ``amd.com/gpu``...) become claims, or
DeviceClasses; what a claim for each vendor's GPU, partition or shared GPU is comes from the vendor
(:mod:`kubedra.vendors`).

Two strategies:

* ``claim-template``: each pod template's GPU requests (containers and init containers) become one
  ResourceClaimTemplate with a request per container, ``spec.resourceClaims`` on the pod and
  ``resources.claims`` on the containers. ``--sharing``, ``--min-memory`` and ``--prefer`` shape the
  requests (class, CEL selectors, ``firstAvailable``, opaque ``GpuConfig``/``MigDeviceConfig``).
* ``extended-resource`` (KEP-5004): pods keep the device plugin's names; a DeviceClass with
  ``extendedResourceName`` maps the name to DRA devices.

Anything kubedra cannot rewrite without guessing (Helm expressions, HAMi resources, KAI fraction
annotations, requests that disagree with limits) is reported as "manual" with its line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, MutableMapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

from kubedra import vendors
from kubedra.k8s import platforms
from kubedra.k8s.dnsnames import as_dns_label
from kubedra.k8s.gpuschemes import Scheme, annotation_schemes, resource_scheme
from kubedra.k8s.workloads import Path, PodTemplate, containers, get_path
from kubedra.migrate.context import ObjectContext
from kubedra.sources.yamldoc import remove_empty, remove_key, to_ruamel
from kubedra.vendors import GpuResource, classify
from kubedra.vendors.gpurequest import device_count


@dataclass
class ContainerGpus:
    field: str  # initContainers | containers
    index: int
    name: str
    sidecar: bool
    wants: list[tuple[GpuResource, int]] = dataclasses.field(default_factory=list)


def _count(value: Any, release: str | None = None) -> int | None:
    # the one reading of a GPU request (kubedra.vendors.gpurequest), as the target release reads it
    return device_count(value, release)


def scan_template(  # noqa: C901 - one branch per place a pod template can ask for GPUs
    ctx: ObjectContext, tmpl: PodTemplate
) -> tuple[list[ContainerGpus], list[tuple[str, Path]]] | None:
    """GPU requests of one pod template, and manual items (message, path). ``None`` if no GPU at all."""
    spec = get_path(ctx.obj, tmpl.spec)
    if not isinstance(spec, Mapping):
        return None
    found: list[ContainerGpus] = []
    manual: list[tuple[str, Path]] = []
    meta = get_path(ctx.obj, tmpl.metadata)
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    for sch in annotation_schemes(annotations):
        assert isinstance(annotations, Mapping)
        manual.append(
            (
                f"annotation {sch.key}={annotations[sch.key]!r}: {_scheme_manual(sch)}",
                (*tmpl.metadata, "annotations", sch.key),
            )
        )
    for fld, idx, c in containers(spec):
        res = c.get("resources")
        if not isinstance(res, Mapping):
            continue
        cg = ContainerGpus(fld, idx, str(c.get("name", f"{fld}-{idx}")), c.get("restartPolicy") == "Always")
        per_name: dict[str, dict[str, Any]] = {}
        other_seen: set[str] = set()
        cpath: Path = (*tmpl.spec, fld, idx, "resources")
        for section in ("limits", "requests"):
            values = res.get(section)
            if not isinstance(values, Mapping):
                continue
            for rname, value in values.items():
                gr = classify(str(rname))
                if gr is None:
                    other = resource_scheme(str(rname))  # another vendor's or scheme's GPU: cannot, because
                    if (
                        other is not None
                        and _count(value, ctx.options.target_version) != 0
                        and str(rname) not in other_seen
                    ):
                        other_seen.add(str(rname))
                        manual.append((f"{rname}: {_scheme_manual(other)}", (*cpath, section, str(rname))))
                    continue
                per_name.setdefault(str(rname), {})[section] = value
        for rname, sections in per_name.items():
            gr = classify(rname)
            assert gr is not None
            section = "limits" if "limits" in sections else "requests"
            vpath: Path = (*cpath, section, rname)
            if gr.kind == "manual":
                manual.append((f"{rname}: {gr.reason}", vpath))
                continue
            why_not_vendor = _vendor_manual(ctx, gr)
            if why_not_vendor is not None:
                manual.append((f"{rname}: {why_not_vendor}", vpath))
                continue
            counts = {s: _count(v, ctx.options.target_version) for s, v in sections.items()}
            if any(v is None for v in counts.values()):
                raw = sections.get("limits", sections.get("requests"))
                why = "a Helm/template expression" if "{{" in str(raw) else f"not a whole number ({raw!r})"
                manual.append((f"{rname}: {why}; the GPU count must be known to write a claim", vpath))
                continue
            if len(set(counts.values())) > 1:
                manual.append(
                    (f"{rname}: requests {counts.get('requests')} != limits {counts.get('limits')}", vpath)
                )
                continue
            n = next(iter(counts.values()))
            assert n is not None
            if n == 0:
                continue  # no GPU: no claim (a request count 0 would be defaulted to 1 by the apiserver)
            why_not = _platform_manual(ctx, spec, gr, n)
            if why_not is not None:
                manual.append((f"{rname}: {why_not}", vpath))
                continue
            cg.wants.append((gr, n))
        if cg.wants:
            found.append(cg)
    if not found and not manual:
        return None
    return found, manual


def _scheme_manual(scheme: Scheme) -> str:
    """The manual item of a request no vendor's DRA driver takes as it is, in the vendors' words: the drivers
    kubedra migrates to, and what those with sharing offer instead of the scheme's."""
    titles = [v.title for v in vendors.all()]
    migrates_to = " and ".join(f"{t}'s" for t in titles) + (
        " DRA drivers" if len(titles) > 1 else " DRA driver"
    )
    offers = [a for v in vendors.all() if (a := v.scheme_alternatives)]
    alternatives = "; ".join(offers) or "no DRA driver kubedra migrates to has a mechanical equivalent"
    return scheme.manual(migrates_to, alternatives)


def _vendor_manual(ctx: ObjectContext, gr: GpuResource) -> str | None:
    """Why this vendor's GPU cannot be rewritten with the options given (None: it can): the vendor says what its
    driver lacks (:meth:`kubedra.vendors.base.Vendor.unsupported`)."""
    vendor = vendors.get(gr.vendor)
    if ctx.options.gpu_strategy == "extended-resource":
        return vendor.unsupported("extended-resource")
    sharing = ctx.options.sharing
    if sharing is not None and (why := vendor.unsupported("sharing")) is not None:
        return why
    if sharing is not None and sharing.profile and vendor.partition_claim(sharing.profile) is None:
        return f"--sharing mig:{sharing.profile}: not a partition profile of {vendor.title}'s DRA driver"
    return vendor.unsupported("migrate")


def _platform_manual(ctx: ObjectContext, spec: Mapping[str, Any], gr: GpuResource, n: int) -> str | None:
    """Why a whole-GPU request on a platform's shared or partitioned nodes cannot be rewritten (None: it can,
    as a MIG claim for a partition, see :meth:`_Shaper.request`)."""
    if gr.kind != "gpu" or n == 0 or ctx.options.sharing is not None:
        return None
    plat = platforms.gpu_sharing(spec)
    if plat is None:
        return None
    if plat.strategy is not None:
        d = ctx.run.scope.decide(
            gr.name, spec
        )  # GKE time-sharing: pods sharing claims of a TimeSlicing class
        most = platforms.facts()["gke"]["time_sharing"]["max_per_container"]
        if d.shared is not None and n > most:
            return (
                f"{plat.describe()}: GKE admits at most {most} {gr.name} per container on time-sharing nodes, so "
                f"this container asking for {n} never ran there; fix the request, then migrate again"
            )
        if d.shared is not None or d.manual is not None:
            return d.manual
        clients = f"up to {plat.clients}" if plat.clients else "several"
        return (
            f"{plat.describe()}: on these nodes {gr.name} is a {plat.strategy_label} share of a GPU ({clients} "
            "containers per GPU), not an exclusive GPU; with DRA pods share a GPU only by referencing one "
            f"ResourceClaim whose config sets {plat.strategy}, so an exclusive claim per pod would divide the "
            "density: write shared ResourceClaims by hand (or pass --sharing), then migrate again"
        )
    if plat.partition is not None and vendors.get(gr.vendor).partition_claim(plat.partition) is None:
        return f"{plat.describe()}: {plat.partition!r} is not a MIG profile, so the slice cannot be claimed"
    return None


def _remove_gpu_keys(container: MutableMapping[str, Any]) -> None:
    res = container.get("resources")
    if not isinstance(res, MutableMapping):
        return
    for section in ("limits", "requests"):
        values = res.get(section)
        if isinstance(values, MutableMapping):
            for rname in [k for k in values if classify(str(k)) is not None]:
                remove_key(values, rname)
            remove_empty(res, section)


def _add_claim_ref(container: MutableMapping[str, Any], claim: str, request: str | None) -> None:
    res = container.get("resources")
    if not isinstance(res, MutableMapping):
        res = to_ruamel({})
        container["resources"] = res
    claims = res.get("claims")
    ref: dict[str, str] = {"name": claim}
    if request:
        ref["request"] = request
    if isinstance(claims, MutableSequence):
        claims.append(to_ruamel(ref))
    else:
        res["claims"] = to_ruamel([ref])


def _exact(class_name: str, count: int, selectors: list[str]) -> dict[str, Any]:
    ex: dict[str, Any] = {"deviceClassName": class_name}
    if selectors:
        ex["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if count != 1:
        ex["count"] = count
    return ex


def _first_available(
    name: str,
    cls: str,
    n: int,
    selectors: list[str],
    prefer: Sequence[str],
    product_selector: Callable[[str], str],
) -> dict[str, Any]:
    """A ``firstAvailable`` request: one subrequest per preferred model, in order (``any``: no model
    selector), each with the request's own selectors; a model named twice once."""
    subs = []
    used: set[str] = set()
    for model in prefer:
        sub_name = as_dns_label(model)
        if sub_name in used:
            continue
        used.add(sub_name)
        sel = list(selectors)
        if model.lower() != "any":
            sel.insert(0, product_selector(model))
        subs.append({"name": sub_name, **_exact(cls, n, sel)})
    return {"name": name, "firstAvailable": subs}


class _Shaper:
    """Builds the DRA request (and opaque config) for one container's GPU resource."""

    def __init__(self, ctx: ObjectContext) -> None:
        self.ctx = ctx
        self.opts = ctx.options
        self.warned: set[str] = set()
        self.pod_spec: Mapping[str, Any] = {}  # the pod template being planned (its nodes decide sharing)

    def shared_class(self, resource: str) -> str | None:
        """The device plugin's sharing class for ``resource`` on the nodes this pod template can land on."""
        d = self.ctx.run.scope.decide(resource, self.pod_spec)
        return d.shared.name if d.shared is not None and d.manual is None else None

    def warn_once(self, key: str, message: str, path: Path | None) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.ctx.note("warning", message, path)

    def request(
        self, name: str, gr: GpuResource, n: int, path: Path
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The request for ``n`` of ``gr``, and the opaque config entry of its sharing (None: none)."""
        vendor = vendors.get(gr.vendor)
        cls, selectors = vendor.claim_selectors(gr)
        selectors = list(selectors)
        if gr.kind in ("mig", "shared"):  # a MIG slice or a shared GPU: the device plugin decided what it is
            config = None
            if gr.shared:
                mapped = self.shared_class(gr.name)
                if mapped:
                    cls, selectors = mapped, []
                else:
                    config = vendor.sharing_config(
                        "TimeSlicing", partition=gr.kind == "mig", interval=self.opts.interval
                    )
                    self._ts_warning(vendor, path)
            return {"name": name, "exactly": _exact(cls, n, selectors)}, config
        return self._whole(name, gr, n, path, vendor, cls, selectors)

    def _whole(
        self,
        name: str,
        gr: GpuResource,
        n: int,
        path: Path,
        vendor: vendors.Vendor,
        cls: str,
        selectors: list[str],
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """A whole GPU (or a partition the device plugin names, AMD's ``amd.com/cpx_nps4``): shaped by a platform's
        partition, the device plugin's sharing config, or ``--sharing``; then ``--min-memory`` and ``--prefer``."""
        opts = self.opts
        config: dict[str, Any] | None = None
        sharing = opts.sharing
        mapped = self.shared_class(gr.name) if sharing is None else None
        plat = (
            platforms.gpu_sharing(self.pod_spec)
            if sharing is None and not mapped and gr.kind == "gpu"
            else None
        )
        partitioned = False
        if plat is not None and plat.partition is not None:  # a GKE MIG partition: one slice per GPU
            claim = vendor.partition_claim(plat.partition)
            assert claim is not None  # _platform_manual made it a manual item otherwise
            cls, selectors, partitioned = claim[0], [*selectors, *claim[1]], True
            self.warn_once(
                "platform-mig",
                f"{plat.describe()}: on these nodes {gr.name} is one MIG slice of profile {plat.partition}, "
                f"not a whole GPU; the claim asks for {n} MIG device{'s' if n != 1 else ''} of that profile "
                f"(DeviceClass {cls}), as the {vendor.title} DRA driver publishes them",
                path,
            )
        elif mapped:
            cls = mapped
            why = self.ctx.run.scope.decide(gr.name, self.pod_spec).why
            self.warn_once(
                "cm",
                f"{gr.name} is shared on this pod's nodes ({why}); the claim uses DeviceClass {mapped}",
                path,
            )
        elif sharing is not None and sharing.mode == "mig":
            assert sharing.profile
            claim = vendor.partition_claim(sharing.profile)
            assert claim is not None  # _vendor_manual made it a manual item otherwise
            cls, selectors, partitioned = claim[0], [*selectors, *claim[1]], True
            if n > 1:
                self.ctx.note(
                    "warning",
                    f"{gr.name}: {n} whole GPUs become {n} MIG devices of profile {sharing.profile} (--sharing "
                    f"mig): each is a slice of a GPU, so the pod gets far less than before; a multi-GPU pod "
                    "usually wants whole GPUs (leave --sharing out for it)",
                    path,
                )
        elif sharing is not None and sharing.mode == "time-slicing":
            config = vendor.sharing_config("TimeSlicing", interval=opts.interval)
            self._ts_warning(vendor, path)
        elif sharing is not None and sharing.mode == "mps":
            config = vendor.sharing_config("MPS")
            self.warn_once(
                "mps",
                f"MPS sharing needs the {vendor.title} DRA driver feature gate {vendor.sharing_gate('MPS')} (alpha, "
                "off by default); containers that reference the same request share the GPU through one MPS daemon",
                path,
            )
        if opts.min_memory and not partitioned:
            selectors.append(vendor.min_memory_selector(opts.min_memory))
        if opts.prefer and not partitioned and not mapped:
            return _first_available(name, cls, n, selectors, opts.prefer, vendor.product_selector), config
        return {"name": name, "exactly": _exact(cls, n, selectors)}, config

    def _ts_warning(self, vendor: vendors.Vendor, path: Path) -> None:
        self.warn_once(
            "ts",
            "time-slicing: containers that reference the same claim request share one GPU (driver feature gate "
            f"{vendor.sharing_gate('TimeSlicing')}, alpha/off, is needed for the interval setting); separate pods get "
            "separate GPUs unless they share one ResourceClaim, so the device plugin's oversubscription (replicas) "
            "is not reproduced",
            path,
        )


def _template_base_name(ctx: ObjectContext) -> str | None:
    meta = ctx.obj.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    name = meta.get("name") or str(meta.get("generateName") or "").rstrip("-")
    return str(name) if name else None


@dataclass
class _Plan:
    tmpl: PodTemplate
    found: list[ContainerGpus]
    names: dict[int, list[str]]
    shares: dict[int, ContainerGpus]
    devices: dict[str, Any]
    single: bool


def _plan_template(
    ctx: ObjectContext, shaper: _Shaper, tmpl: PodTemplate, found: list[ContainerGpus]
) -> _Plan:
    """Requests for one pod template: one per container and resource. A non-sidecar init container reuses
    a main container's request when that has at least as many devices (it runs before the main containers,
    as it did with the device plugin)."""
    shaper.pod_spec = get_path(ctx.obj, tmpl.spec) or {}
    mains = [c for c in found if c.field == "containers" or c.sidecar]
    shares: dict[int, ContainerGpus] = {}
    for cg in found:
        if cg in mains or not mains:
            continue
        host = max(mains, key=lambda m: sum(k for _, k in m.wants))
        if _fits(cg, host):
            shares[id(cg)] = host
    owners = [cg for cg in found if id(cg) not in shares]
    total = sum(len(cg.wants) for cg in owners)
    names: dict[int, list[str]] = {}
    requests: list[dict[str, Any]] = []
    configs: list[dict[str, Any]] = []
    used: set[str] = set()
    for cg in owners:
        names[id(cg)] = []
        for i, (gr, count) in enumerate(cg.wants):
            req_name = "gpu" if total == 1 else as_dns_label(cg.name if i == 0 else f"{cg.name}-{i}")
            base_req, k = req_name, 2
            while req_name in used:
                req_name, k = f"{base_req}-{k}", k + 1
            used.add(req_name)
            req, opaque = shaper.request(req_name, gr, count, (*tmpl.spec, cg.field, cg.index, "resources"))
            requests.append(req)
            names[id(cg)].append(req_name)
            if opaque is not None:
                configs.append({"requests": [req_name], "opaque": opaque})
    for cg in found:
        if id(cg) in shares:
            names[id(cg)] = names[id(shares[id(cg)])]
    devices: dict[str, Any] = {"requests": requests}
    if configs:
        devices["config"] = configs
    return _Plan(tmpl, found, names, shares, devices, total == 1)


def scanned_templates(
    ctx: ObjectContext, templates: list[PodTemplate]
) -> Iterator[tuple[PodTemplate, list[ContainerGpus], list[tuple[str, Path]]]]:
    """(template, GPU requests, manual items) of each template that asks for a GPU; each manual item is noted
    on ``ctx`` as it is yielded (both strategies report them the same way)."""
    for tmpl in templates:
        scan = scan_template(ctx, tmpl)
        if scan is None:
            continue
        found, manual = scan
        for message, path in manual:
            ctx.note("manual", message, path)
        yield tmpl, found, manual


def convert_claim_template(ctx: ObjectContext, templates: list[PodTemplate]) -> list[dict[str, Any]]:
    """Rewrite the GPU requests of ``ctx.obj``; returns the new ResourceClaimTemplates."""
    scans: list[tuple[PodTemplate, list[ContainerGpus]]] = []
    blocked = False
    for tmpl, found, manual in scanned_templates(ctx, templates):
        if manual:
            blocked = True
        if found:
            scans.append((tmpl, found))
    if ctx.options.sharing is None:
        for tmpl, found in scans:
            spec = get_path(ctx.obj, tmpl.spec)
            names = sorted({gr.name for cg in found for gr, _ in cg.wants})
            for name in names:
                d = ctx.run.scope.decide(name, spec if isinstance(spec, Mapping) else {})
                if d.manual:
                    ctx.note("manual", d.manual, tmpl.spec)
                    blocked = True
    if blocked or not scans:
        if blocked and scans:
            ctx.note(
                "warning", "GPU requests left unchanged because part of this object needs a manual decision"
            )
        return []
    base = _template_base_name(ctx)
    if not base:
        ctx.note("manual", "object has no name or generateName; cannot name its ResourceClaimTemplate")
        return []
    namespace = ctx.ref.namespace
    shaper = _Shaper(ctx)
    plans = [_plan_template(ctx, shaper, tmpl, found) for tmpl, found in scans]
    # pod templates with identical requests share one ResourceClaimTemplate
    distinct: dict[str, str] = {}
    for p in plans:
        distinct.setdefault(repr(p.devices), p.tmpl.role)
    new_objects: list[dict[str, Any]] = []
    rct_names: dict[str, str] = {}
    for p in plans:
        key = repr(p.devices)
        if key not in rct_names:
            role = distinct[key]
            suffix = f"-{as_dns_label(role)}" if role and len(distinct) > 1 else ""
            rct_name = ctx.run.name_for(ctx.obj, "ResourceClaimTemplate", namespace, f"{base}{suffix}-gpu")
            rct_names[key] = rct_name
            meta: dict[str, Any] = {"name": rct_name}
            if namespace:
                meta["namespace"] = namespace
            new_objects.append(
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceClaimTemplate",
                    "metadata": meta,
                    "spec": {"spec": {"devices": p.devices}},
                }
            )
        _apply_plan(ctx, p, rct_names[key])
        _keep_ray_gpu_count(ctx, p)
    return new_objects


def _keep_ray_gpu_count(ctx: ObjectContext, p: _Plan) -> None:
    """KubeRay derives ``ray start --num-gpus`` from the Ray container's GPU limit (``nvidia.com/gpu``); with a
    claim instead, the group must say it in ``rayStartParams`` or Ray sees no GPU."""
    if not ctx.ref.api_version.startswith("ray.io/") or p.tmpl.spec[-2:] != ("template", "spec"):
        return
    ray = next((cg for cg in p.found if cg.field == "containers" and cg.index == 0), None)
    if ray is None:
        return
    n = sum(k for gr, k in ray.wants if gr.kind in ("gpu", "shared"))
    limits = " or ".join(sorted({vendors.get(gr.vendor).gpu_resource for gr, _ in ray.wants}))
    group = get_path(ctx.obj, p.tmpl.spec[:-2])
    if not n or not isinstance(group, MutableMapping):
        return
    params = group.get("rayStartParams")
    if isinstance(params, Mapping) and "num-gpus" in params:
        return
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString  # noqa: PLC0415

    value = DoubleQuotedScalarString(str(n))  # KubeRay's params are strings; "1", as in its samples
    if isinstance(params, MutableMapping):
        params["num-gpus"] = value
    else:
        group["rayStartParams"] = to_ruamel({"num-gpus": value})
    ctx.note(
        "change",
        f'rayStartParams.num-gpus: "{n}" (KubeRay read it from the {limits} limit, which is gone)',
        (*p.tmpl.spec[:-2], "rayStartParams"),
    )


def _apply_plan(ctx: ObjectContext, p: _Plan, rct_name: str) -> None:
    pod_spec = get_path(ctx.obj, p.tmpl.spec)
    assert isinstance(pod_spec, MutableMapping)
    existing_claims = pod_spec.get("resourceClaims")
    taken = {str(c.get("name")) for c in existing_claims or [] if isinstance(c, Mapping)}
    claim_name, n = "gpu", 2
    while claim_name in taken:
        claim_name, n = f"gpu-{n}", n + 1
    for cg in p.found:
        host = p.shares.get(id(cg))
        if host is not None:
            ctx.note(
                "change",
                f"init container {cg.name} shares request {p.names[id(cg)][0]} with container {host.name} "
                "(it runs before it, as with the device plugin)",
                (*p.tmpl.spec, cg.field, cg.index),
            )
        container = pod_spec[cg.field][cg.index]
        _remove_gpu_keys(container)
        for req_name in p.names[id(cg)]:
            _add_claim_ref(container, claim_name, None if p.single else req_name)
        wants = ", ".join(f"{gr.name}: {k}" for gr, k in cg.wants)
        ctx.note(
            "change",
            f"{cg.field[:-1]} {cg.name}: {wants} -> claim {claim_name} (ResourceClaimTemplate {rct_name})",
            (*p.tmpl.spec, cg.field, cg.index, "resources"),
        )
    entry = {"name": claim_name, "resourceClaimTemplateName": rct_name}
    if isinstance(existing_claims, MutableSequence):
        existing_claims.append(to_ruamel(entry))
    else:
        pod_spec["resourceClaims"] = to_ruamel([entry])


def _fits(init: ContainerGpus, host: ContainerGpus) -> bool:
    """An init container can reuse ``host``'s request: one resource, same kind, no more devices."""
    if len(init.wants) != 1 or len(host.wants) != 1:
        return False
    (gi, ni), (gh, nh) = init.wants[0], host.wants[0]
    return gi.name == gh.name and ni <= nh
