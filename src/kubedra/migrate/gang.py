"""Gangs → ``scheduling.k8s.io`` PodGroup (or Workload), in the version the target release serves.

| target | objects | pod field |
|---|---|---|
| 1.35 | ``scheduling.k8s.io/v1alpha1`` Workload ``spec.podGroups[]{name, policy.gang.minCount}`` | ``spec.workloadRef{name, podGroup}`` |
| 1.36 | ``scheduling.k8s.io/v1alpha2`` PodGroup ``spec.schedulingPolicy.gang.minCount`` | ``spec.schedulingGroup.podGroupName`` |
| 1.37 | ``scheduling.k8s.io/v1beta1`` PodGroup (same spec) | ``spec.schedulingGroup.podGroupName`` |

Field names checked against the 1.35/1.36/1.37 OpenAPI schemas shipped in kubernetes-validate.
1.34 has no gang API. Which workloads are gangs and of how many pods is shared knowledge
(:func:`kubedra.k8s.workloads.gang`, facts in ``data/workloads.yaml``); pods that the operator creates only
after the gang is Ready (an MPIJob launcher with ``WaitForWorkersReady``) are not linked to the PodGroup.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from kubedra.k8s import crdfields, versions, workloads
from kubedra.k8s.featuregates import gate_info
from kubedra.k8s.versions import Version
from kubedra.k8s.workloads import Gang, PodTemplate, api_group, get_path
from kubedra.migrate.context import ObjectContext
from kubedra.sources.yamldoc import splice, to_ruamel

DEFAULT_SCHEDULERS = (None, "", "default-scheduler")
BUILTIN_GROUPS = (
    "",
    "apps",
    "batch",
)  # workloads whose pods Kubernetes' own controllers create from the template


def detect(obj: Mapping[str, Any], templates: list[PodTemplate]) -> Gang | None:
    """The operator's gang for ``obj`` (shared knowledge: :func:`kubedra.k8s.workloads.gang`)."""
    return workloads.gang(obj, templates)


def _already_grouped(ctx: ObjectContext, templates: list[PodTemplate]) -> bool:
    for t in templates:
        spec = get_path(ctx.obj, t.spec)
        if isinstance(spec, Mapping) and (spec.get("schedulingGroup") or spec.get("workloadRef")):
            return True
    return False


def convert(ctx: ObjectContext, templates: list[PodTemplate], gang: Gang) -> list[dict[str, Any]]:
    """Add the gang objects for ``ctx.obj`` and link its pod templates; returns the new objects."""
    release = Version(*ctx.options.target)
    gang_api = _gang_api(ctx, templates, gang, release)
    if gang_api is None:
        return []
    meta = ctx.obj.get("metadata") if isinstance(ctx.obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    if not meta.get("name"):
        ctx.note("manual", "gang workload without metadata.name: name its PodGroup by hand")
        return []
    name = str(meta["name"])
    namespace = ctx.ref.namespace
    kind, api = gang_api["kind"], gang_api["apiVersion"]
    new, link, gate = _gang_object(ctx, gang, gang_api, name, release)
    if ctx.run.taken(kind, namespace, name) and not ctx.run.made_for(ctx.obj, kind, namespace, name):
        ctx.note("warning", f"{kind} {name} already exists in the inputs; pods linked to it, nothing created")
        new_objects: list[dict[str, Any]] = []
    else:  # new, or written for an earlier definition of this object, which this one replaces
        ctx.run.name_for(ctx.obj, kind, namespace, name)
        new_objects = [new]
    schedulers = set()
    for t in templates:
        spec = get_path(ctx.obj, t.spec)
        if not isinstance(spec, MutableMapping) or t.after:
            continue  # pods created only after the gang is Ready are not part of it
        for k, v in link.items():
            spec[k] = to_ruamel(v)
        schedulers.add(spec.get("schedulerName"))
    ctx.note("change", f"gang of {gang.min_count} pods ({gang.source}) -> {api} {kind} {name}; pods linked")
    if api_group(ctx.ref.api_version) not in BUILTIN_GROUPS:
        ctx.note(
            "warning",
            f"{ctx.ref.kind}'s operator does not create or delete {kind} {name}: apply it with the {ctx.ref.kind} and delete it after",
        )
    ctx.note("warning", gate)
    _other_schedulers(ctx, schedulers, kind)
    return new_objects


def _gang_api(
    ctx: ObjectContext, templates: list[PodTemplate], gang: Gang, release: Version
) -> Mapping[str, str] | None:
    """The scheduling.k8s.io gang API (kind, apiVersion) to write at the target release; ``None`` when nothing is
    written, each case with its note (already grouped, a manual item, per-group gangs, the Job's own gang, no API
    at the target, an operator whose pod templates cannot be linked)."""
    gang_api: Mapping[str, str] | None = versions.api("gang", release)  # data/versions.yaml apis.gang
    if _already_grouped(ctx, templates):
        return None
    if gang.problem:
        ctx.note("manual", f"gang of {gang.min_count} pods ({gang.source}): {gang.problem}")
        return None
    if gang.per_group:
        ctx.note(
            "warning",
            f"each group is its own gang of {gang.min_count} pods ({gang.source}); a pod template cannot name a "
            "PodGroup per group, so no scheduling.k8s.io PodGroup is written: keep the controller's own gang "
            "support (LWS schedulerProvider) or a gang scheduler",
        )
        return None
    if gang.native:
        return None  # the Job's own spec.scheduling: the Job controller creates its Workload and PodGroup
    if api_group(ctx.ref.api_version) == "batch" and release >= Version.parse(
        workloads.facts()["job_gang"]["since"]
    ):
        _job_scheduling(ctx, gang, release)
        return None
    if gang_api is None:
        ctx.note(
            "warning",
            f"gang of {gang.min_count} pods ({gang.source}): Kubernetes 1.{release.minor} has no scheduling.k8s.io "
            "gang API; keep the batch scheduler's own gang (Volcano/KAI/Kueue) until 1.35+",
        )
        return None
    if api_group(ctx.ref.api_version) not in BUILTIN_GROUPS and not _operator_links(
        ctx, templates, gang, gang_api
    ):
        return None
    return gang_api


def _gang_object(
    ctx: ObjectContext, gang: Gang, gang_api: Mapping[str, str], name: str, release: Version
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The gang object of ``gang_api`` (a Workload with one pod group, or a PodGroup), the field that links a pod
    to it, and the warning on its feature gate at the target release."""
    minor = release.minor
    obj_meta: dict[str, Any] = {"name": name}
    if ctx.ref.namespace:
        obj_meta["namespace"] = ctx.ref.namespace
    kind, api = gang_api["kind"], gang_api["apiVersion"]
    stage = (gate_info("GenericWorkload", release) or {}).get("stage", "alpha")
    if kind == "Workload":
        group = api_group(ctx.ref.api_version)
        controller: dict[str, Any] = {"kind": ctx.ref.kind, "name": name}
        if group:
            controller = {"apiGroup": group, **controller}
        new = {
            "apiVersion": api,
            "kind": kind,
            "metadata": obj_meta,
            "spec": {
                "controllerRef": controller,
                "podGroups": [{"name": "gang", "policy": {"gang": {"minCount": gang.min_count}}}],
            },
        }
        link: dict[str, Any] = {"workloadRef": {"name": name, "podGroup": "gang"}}
        gate = (
            f"GenericWorkload is {stage} (off) in 1.{minor} and {api} must be enabled with --runtime-config"
        )
        return new, link, gate
    new = {
        "apiVersion": api,
        "kind": kind,
        "metadata": obj_meta,
        "spec": {"schedulingPolicy": {"gang": {"minCount": gang.min_count}}},
    }
    link = {"schedulingGroup": {"podGroupName": name}}
    gate = (
        f"GenericWorkload is {stage} and off by default in 1.{minor}: enable it on kube-apiserver and "
        f"kube-scheduler and serve {api} with --runtime-config, or the PodGroup is rejected and "
        f"{next(iter(link))} is dropped from pods"
    )
    return new, link, gate


def _other_schedulers(ctx: ObjectContext, schedulers: set[Any], kind: str) -> None:
    """A gang object is honoured by kube-scheduler only: say so when pods name another scheduler."""
    others = sorted(str(s) for s in schedulers if s not in DEFAULT_SCHEDULERS)
    spec_obj = ctx.obj.get("spec")
    if isinstance(spec_obj, Mapping) and spec_obj.get("schedulerName") not in DEFAULT_SCHEDULERS:
        others.append(str(spec_obj.get("schedulerName")))
    if others:
        ctx.note(
            "warning",
            f"pods are scheduled by {', '.join(sorted(set(others)))}; a scheduling.k8s.io {kind} is honoured by "
            "kube-scheduler only, keep that scheduler's own gang until you switch",
        )


def _operator_links(
    ctx: ObjectContext, templates: list[PodTemplate], gang: Gang, gang_api: Mapping[str, str]
) -> bool:
    """Whether an operator's pod templates can carry the link: its pods come from its own controller, built from
    its CRD's pod template, so only a CRD that declares ``spec.schedulingGroup`` there (from 1.36:
    versions.yaml ``scheduling.podGroupLink``; the bundled CRDs of JobSet v0.12, LWS, KubeRay, the training
    operator and Trainer do, Volcano's and the MPI operator's do not) keeps it; otherwise the apiserver prunes it
    and a controller built on older Kubernetes types would drop it anyway (a warning says so)."""
    field = "spec.workloadRef" if gang_api["kind"] == "Workload" else "spec.schedulingGroup.podGroupName"
    why = f"whose pod template has no {field}"
    if gang_api["kind"] != "Workload" and versions.holds(
        "scheduling.podGroupLink", Version(*ctx.options.target)
    ):
        found = [
            crdfields.declares(ctx.ref.api_version, ctx.ref.kind, (*t.spec, "schedulingGroup"))
            for t in templates
            if not t.after
        ]
        if found and all(d.yes for d in found):
            return True
        missing = sorted({m for d in found for m in d.missing})
        if missing:
            why = f"whose CRD ({', '.join(missing)}) declares no spec.schedulingGroup in the pod template"
    ctx.note(
        "warning",
        f"gang of {gang.min_count} pods ({gang.source}): {ctx.ref.kind} pods are created by its operator, "
        f"{why}, so no scheduling.k8s.io {gang_api['kind']} is written; keep the operator's own gang (its "
        "PodGroup with Volcano, Kueue or scheduler-plugins) until it supports the Workload API",
    )
    return False


def _job_scheduling(ctx: ObjectContext, gang: Gang, release: Version) -> None:
    """A Job's gang from 1.37 is the Job's own ``spec.scheduling.schedulingPolicy.gang.minCount``: the Job
    controller creates the Workload and PodGroup (data/workloads.yaml job_gang)."""
    f = workloads.facts()["job_gang"]
    path = workloads.job_spec_path(ctx.obj)
    job = get_path(ctx.obj, path)
    if not isinstance(job, MutableMapping):
        ctx.note("manual", f"gang of {gang.min_count} pods ({gang.source}): no Job spec to write it in")
        return
    if job.get("scheduling") is not None:
        ctx.note(
            "manual",
            f"gang of {gang.min_count} pods ({gang.source}), but spec.scheduling is already set: reconcile by hand",
            (*path, "scheduling"),
        )
        return
    policy, gate = f["policy"].split("."), f["gate"]
    job[policy[0]] = to_ruamel({policy[1]: {"gang": {"minCount": gang.min_count}}})
    info = gate_info(gate, release)
    state = (
        f"{info.get('stage')}, {'on' if info.get('default') else 'off'} by default in 1.{release.minor}"
        if info
        else f"alpha in 1.37, off by default; check its default in 1.{release.minor}"
    )
    where = workloads.dotted((*path, *policy))
    ctx.note("change", f"gang of {gang.min_count} pods ({gang.source}) -> {where}.gang.minCount", path)
    ctx.note(
        "warning",
        f"{where} needs {gate} ({state}) on kube-apiserver and "
        "kube-controller-manager, and GenericWorkload with scheduling.k8s.io served, for the Job controller to "
        "create the Workload and PodGroup; with the gate off the apiserver drops the field and the pods are "
        "scheduled one by one",
        path,
    )
    scheduler = get_path(job, ("template", "spec", "schedulerName"))
    if scheduler not in DEFAULT_SCHEDULERS:
        ctx.note(
            "warning",
            f"pods are scheduled by {scheduler}; the Job's Workload and PodGroup are honoured by kube-scheduler "
            "only, keep that scheduler's own gang until you switch",
            path,
        )


# --- scheduling.k8s.io versions ------------------------------------------------------------------
_DISRUPTION = {"Pod": "single", "PodGroup": "all", "Single": "single", "All": "all"}


def target_api(minor: int) -> str | None:
    """The PodGroup/Workload version kubedra writes for a target release (None: no gang API)."""
    gang_api = versions.api("gang", Version(1, minor))  # data/versions.yaml apis.gang
    return str(gang_api["apiVersion"]) if gang_api else None


def _disruption(container: MutableMapping[str, Any], path: tuple[str | int, ...], ctx: ObjectContext) -> None:
    mode = container.get("disruptionMode")
    if isinstance(mode, str):
        new = _DISRUPTION.get(mode)
        if new is None:
            ctx.note("manual", f"unknown disruptionMode {mode!r}", (*path, "disruptionMode"))
            return
        container["disruptionMode"] = to_ruamel({new: {}})
        ctx.note("change", f"disruptionMode {mode!r} -> {{{new}: {{}}}}", (*path, "disruptionMode"))


def upgrade_scheduling(ctx: ObjectContext) -> None:
    """PodGroup/Workload of an older scheduling.k8s.io version -> the version the target serves (forward only)."""
    obj = ctx.obj
    api = str(obj.get("apiVersion", ""))
    version = api.rsplit("/", 1)[-1]
    kind = obj.get("kind")
    minor = ctx.options.target[1]
    want = target_api(minor)
    order = ["v1alpha1", "v1alpha2", "v1alpha3", "v1beta1"]
    if want is None or kind not in ("PodGroup", "Workload") or version not in order:
        return
    want_version = want.rsplit("/", 1)[-1]
    if order.index(version) >= order.index(want_version):
        return
    spec = obj.get("spec")
    if not isinstance(spec, MutableMapping):
        return
    if kind == "PodGroup":
        if want_version == "v1alpha1":
            return  # 1.35 has no PodGroup kind
        ref = spec.get("podGroupTemplateRef")
        if isinstance(ref, Mapping):
            wl = ref.get("workload") if isinstance(ref.get("workload"), Mapping) else {}
            assert isinstance(wl, Mapping)

            splice(
                spec,
                "podGroupTemplateRef",
                [
                    (
                        "workloadRef",
                        {
                            "workloadName": wl.get("workloadName"),
                            "templateName": wl.get("podGroupTemplateName"),
                        },
                    )
                ],
            )
            ctx.note(
                "change", "podGroupTemplateRef.workload -> workloadRef{workloadName, templateName}", ("spec",)
            )
        if want_version == "v1beta1":
            _disruption(spec, ("spec",), ctx)
    else:
        groups = spec.get("podGroups")
        if version == "v1alpha1" and isinstance(groups, list):
            templates = []
            for g in groups:
                if isinstance(g, Mapping):
                    t: dict[str, Any] = {"name": g.get("name")}
                    if g.get("policy") is not None:
                        t["schedulingPolicy"] = g.get("policy")
                    templates.append(t)

            splice(spec, "podGroups", [("podGroupTemplates", templates)])
            ctx.note("change", "podGroups[].policy -> podGroupTemplates[].schedulingPolicy", ("spec",))
            ctx.note(
                "warning",
                "from 1.36 pods join a PodGroup (spec.schedulingGroup.podGroupName), not the Workload; "
                "PodGroups are created from these templates by the workload's controller",
                ("spec",),
            )
        if want_version == "v1beta1":
            for i, t in enumerate(spec.get("podGroupTemplates") or []):
                if isinstance(t, MutableMapping):
                    _disruption(t, ("spec", "podGroupTemplates", i), ctx)
    obj["apiVersion"] = want
    ctx.note("change", f"apiVersion: {api} -> {want} (the version Kubernetes 1.{minor} serves)")


def report_workload_refs(ctx: ObjectContext, templates: list[PodTemplate]) -> None:
    """1.35 ``pod.spec.workloadRef`` has no place in 1.36+ pods (tombstoned)."""
    if ctx.options.target[1] < 36:
        return
    for t in templates:
        spec = get_path(ctx.obj, t.spec)
        if isinstance(spec, Mapping) and spec.get("workloadRef"):
            ctx.note(
                "manual",
                "spec.workloadRef (1.35) was removed in 1.36: create a PodGroup for this gang and set "
                "spec.schedulingGroup.podGroupName instead",
                (*t.spec, "workloadRef"),
            )
