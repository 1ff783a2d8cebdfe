"""API version lifecycle (deprecated/removed/not yet served) and DRA API shapes."""

from __future__ import annotations

import json
import re
from typing import Any

from kubedra.audit.deprecations import Lifecycle
from kubedra.audit.model import Item
from kubedra.audit.scope import Context, Scope, check
from kubedra.k8s import versions
from kubedra.k8s.findings import ObjectRef
from kubedra.k8s.versions import Version
from kubedra.model.apiversions import split_api_version

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _authored_versions(item: Item, scope: Scope) -> list[tuple[str, str]]:
    """(apiVersion, how we know) pairs the object was written with.

    A file or Helm manifest says it directly. A live object is returned by the apiserver in whatever version we
    listed, so there the evidence is the last-applied annotation and the managedFields of each writer.
    """
    if not scope.live or item.via:
        return [(item.api_version, "")]
    out: list[tuple[str, str]] = []
    raw = (
        (item.meta.get("annotations") or {}).get(LAST_APPLIED)
        if isinstance(item.meta.get("annotations"), dict)
        else None
    )
    if isinstance(raw, str) and raw:
        try:
            applied = json.loads(raw)
        except ValueError:
            applied = None
        if isinstance(applied, dict) and applied.get("apiVersion"):
            out.append((str(applied["apiVersion"]), "last applied with kubectl as"))
    for mf in item.meta.get("managedFields") or []:
        if isinstance(mf, dict) and mf.get("apiVersion"):
            how = f"written by field manager {mf.get('manager', '?')!r} as"
            if all(v != mf["apiVersion"] for v, _ in out):
                out.append((str(mf["apiVersion"]), how))
    return out


def _replacement_text(ctx: Context, entry: Lifecycle) -> tuple[str, str | None]:
    api_version, kind = ctx.db.replacement(entry, ctx.target)
    if api_version is None:
        return "nothing (no replacement API: remove the object or its feature)", None
    return f"{api_version} {kind}", api_version


def _span(entry: Lifecycle) -> str:
    parts = []
    if entry.introduced:
        parts.append(f"introduced {entry.introduced}")
    if entry.deprecated:
        parts.append(f"deprecated {entry.deprecated}")
    if entry.removed:
        parts.append(f"removed {entry.removed}")
    return ", ".join(parts)


def _current_note(ctx: Context, entry: Lifecycle) -> str:
    cur = ctx.current
    if cur is None:
        return ""
    if entry.is_removed(cur):
        return f"; already not served by the current version {cur}"
    if entry.is_deprecated(cur):
        return f"; already deprecated at the current version {cur}"
    return f"; still served by the current version {cur}"


@check(
    "api.removed",
    "api.deprecated",
    "api.not-yet-served",
    "api.never-served",
    "api.replacement-not-in-current",
    "api.off-by-default",
    "dra.classic",
)
def api_lifecycle(ctx: Context, scope: Scope) -> None:
    for item in scope.items:
        if not item.kind:
            continue
        for api_version, how in _authored_versions(item, scope):
            entry = ctx.db.lookup(api_version, item.kind)
            if entry is None:
                if ctx.db.never_served(api_version, item.kind):
                    _never_served(ctx, item, api_version, how)
                continue
            _judge(ctx, scope, item, entry, how)
        if scope.live and not item.via:
            _judge_live_listing(ctx, scope, item)


def _never_served(ctx: Context, item: Item, api_version: str, how: str) -> None:
    """A version of a Kubernetes group that no release had (``resource.k8s.io/v1alpha4``): the apiserver has no
    such resource, so the object is refused, as ``kubedra validate`` says."""
    group, _ = split_api_version(api_version)
    best = ctx.db.best_version(group, item.kind, ctx.target)
    known = sorted(e.version for e in ctx.db.versions_of(group, item.kind))
    prefix = f"{how} " if how else ""
    ctx.emit(
        "api.never-served",
        item,
        f"{prefix}{api_version} {item.kind}: no Kubernetes release serves this version "
        f"(known versions of {item.kind}: {', '.join(known)})",
        path=("apiVersion",),
        obj=ObjectRef(api_version, item.kind, item.namespace, item.name),
        replacement=f"{best.api_version} {item.kind}" if best else "a served version",
    )


def _judge(ctx: Context, scope: Scope, item: Item, entry: Lifecycle, how: str) -> None:
    t = ctx.target
    if (
        not entry.classic_dra
        and entry.is_introduced(t)
        and not entry.removed
        and not entry.deprecated
        and not entry.off_by_default
    ):
        return  # a GA version with no end date: the common case, decided before any formatting
    prefix = f"{how} " if how else ""
    path = ("apiVersion",)
    obj = ObjectRef(entry.api_version, item.kind, item.namespace, item.name)
    repl, repl_api = _replacement_text(ctx, entry)
    migrates = entry.convertible == "kubedra-migrate"
    convert = " with `kubedra migrate`" if migrates else ""
    params: dict[str, Any] = {
        "replacement": repl,
        "convert": convert,
        "notes": entry.notes,
        "removed": entry.removed or "removal",
    }
    if entry.classic_dra:
        ctx.emit(
            "dra.classic",
            item,
            f"{prefix}{entry.api_version} {item.kind} is classic DRA ({_span(entry)}); not served at {t}"
            f"{_current_note(ctx, entry)}",
            path=path,
            obj=obj,
        )
        return
    if not entry.is_introduced(t):
        best = ctx.db.best_version(entry.group, entry.kind, t)
        ctx.emit(
            "api.not-yet-served",
            item,
            f"{prefix}{entry.api_version} {item.kind} is first served in {entry.introduced}, after the target {t}",
            path=path,
            obj=obj,
            replacement=f"{best.api_version} {item.kind}" if best else "no served version",
            introduced=entry.introduced,
        )
        return
    if entry.is_removed(t):
        ctx.emit(
            "api.removed",
            item,
            f"{prefix}{entry.api_version} {item.kind} is not served at {t} ({_span(entry)}){_current_note(ctx, entry)}",
            path=path,
            obj=obj,
            migrate=migrates,
            **params,
        )
    elif entry.is_deprecated(t):
        ctx.emit(
            "api.deprecated",
            item,
            f"{prefix}{entry.api_version} {item.kind}: {entry.story(t)}{_current_note(ctx, entry)}",
            path=path,
            obj=obj,
            migrate=migrates,
            **params,
        )
    elif entry.off_by_default:
        # served, not deprecated, but only when kube-apiserver is told to serve it: what `kubedra migrate` and
        # `kubedra validate` warn about for a PodGroup they write at 1.37, audit says about the same object
        ctx.emit(
            "api.off-by-default",
            item,
            f"{prefix}{entry.api_version} {item.kind}: {entry.story(t)}",
            path=path,
            obj=obj,
            enable=entry.enable_text(),
            notes=entry.notes,
        )
        return
    else:
        return
    cur = ctx.current
    if cur is not None and repl_api is not None:
        rgroup, rversion = split_api_version(repl_api)
        rkind = entry.replacement_kind or entry.kind
        rentry = ctx.db.entries.get((rgroup, rversion, rkind))
        if rentry is not None and not rentry.is_introduced(cur):
            ctx.emit(
                "api.replacement-not-in-current",
                item,
                f"{prefix}{entry.api_version} {item.kind}: its replacement {repl_api} is first served in "
                f"{rentry.introduced}, after the current version {cur}",
                path=path,
                obj=obj,
                introduced=rentry.introduced,
            )


def _judge_live_listing(ctx: Context, scope: Scope, item: Item) -> None:
    """A live object listed in a version that the target drops, with no version served at both ends: the objects
    of a single-version (alpha) API do not survive the upgrade."""
    entry = ctx.db.lookup(item.api_version, item.kind)
    if entry is None or not entry.is_removed(ctx.target) or entry.classic_dra:
        return
    facts = scope.facts
    served_now = facts.served if facts else set()
    for other in ctx.db.versions_of(entry.group, entry.kind):
        if other.version != entry.version and other.served(ctx.target) and other.api_version in served_now:
            return
    ctx.emit(
        "api.removed",
        item,
        f"stored as {entry.api_version} {item.kind}, which is not served at {ctx.target} and has no version served "
        "both now and at the target: the object will be unreadable after the upgrade",
        replacement=_replacement_text(ctx, entry)[0],
        notes=entry.notes + " Export the objects and recreate them in the new version after the upgrade.",
        removed=entry.removed,
    )


@check("dra.pod-claim-source")
def pod_claim_source(ctx: Context, scope: Scope) -> None:
    for item in scope.items:
        for at in item.pod_specs:
            claims = at.spec.get("resourceClaims")
            if not isinstance(claims, list):
                continue
            for i, c in enumerate(claims):
                src = c.get("source") if isinstance(c, dict) else None
                if not isinstance(src, dict):
                    continue
                fld = next((k for k in ("resourceClaimTemplateName", "resourceClaimName") if k in src), "")
                ctx.emit(
                    "dra.pod-claim-source",
                    item,
                    f"pod resourceClaims[{i}] ({c.get('name')}) uses `source:`, removed from the Pod API in 1.31",
                    path=(*at.path, "resourceClaims", i, "source"),
                    field=fld or "resourceClaimTemplateName",
                    index=i,
                    value=src.get(fld, "..."),
                )


def _flat_requests(spec: Any) -> list[int]:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    reqs = devices.get("requests") if isinstance(devices, dict) else None
    if not isinstance(reqs, list):
        return []
    return [
        i for i, r in enumerate(reqs) if isinstance(r, dict) and "exactly" not in r and "deviceClassName" in r
    ]


@check("dra.v1beta1-shape")
def v1beta1_shape(ctx: Context, scope: Scope) -> None:
    for item in scope.kind("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
        if item.api_version != "resource.k8s.io/v1beta1":
            continue
        paths: list[tuple[str | int, ...]] = []
        what = ""
        if item.kind == "ResourceSlice":
            devices = item.spec.get("devices")
            if isinstance(devices, list):
                paths = [
                    ("spec", "devices", i, "basic")
                    for i, d in enumerate(devices)
                    if isinstance(d, dict) and "basic" in d
                ]
            what = "devices nested under `basic:`"
        else:
            base: tuple[str, ...] = ("spec",) if item.kind == "ResourceClaim" else ("spec", "spec")
            spec = item.spec if item.kind == "ResourceClaim" else item.spec.get("spec")
            paths = [(*base, "devices", "requests", i, "deviceClassName") for i in _flat_requests(spec)]
            what = "flat device requests (v1 puts them under `exactly:`)"
        if paths:
            ctx.emit(
                "dra.v1beta1-shape",
                item,
                f"v1beta1 shape, {what}: {len(paths)}",
                path=paths[0],
            )


@check("dra.mixed-counter-slice")
def mixed_counter_slice(ctx: Context, scope: Scope) -> None:
    if not versions.holds("dra.countersOnlySlices", ctx.target):
        return
    for item in scope.kind("ResourceSlice"):
        spec = item.spec
        if spec.get("sharedCounters") and spec.get("devices"):
            pool = spec.get("pool") or {}
            ctx.emit(
                "dra.mixed-counter-slice",
                item,
                f"slice has both sharedCounters and devices; from 1.35 the apiserver rejects that (target {ctx.target})",
                path=("spec", "sharedCounters"),
                pool=pool.get("name", "?") if isinstance(pool, dict) else "?",
            )


_DEPRECATED_METRIC = re.compile(
    r"^apiserver_requested_deprecated_apis\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)", re.M
)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


@check("api.deprecated-requested")
def deprecated_requested(ctx: Context, scope: Scope) -> None:
    facts = scope.facts
    if facts is None or not facts.metrics:
        return
    for m in _DEPRECATED_METRIC.finditer(facts.metrics):
        labels = dict(_LABEL.findall(m.group("labels")))
        group, version, resource = (
            labels.get("group", ""),
            labels.get("version", ""),
            labels.get("resource", ""),
        )
        removed = Version.maybe(labels.get("removed_release"))
        gv = f"{group}/{version}" if group else version
        sub = f"/{labels['subresource']}" if labels.get("subresource") else ""
        severity = "error" if removed is not None and removed <= ctx.target else "warning"
        ctx.emit(
            "api.deprecated-requested",
            None,
            f"clients requested deprecated {gv} {resource}{sub} since the apiserver started"
            + (f"; removed in {removed}" if removed else ""),
            severity=severity,
            source=scope.location(),
            obj=ObjectRef(gv, resource, None, ""),
            removed=removed or "its removal",
        )
