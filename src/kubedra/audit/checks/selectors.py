"""Device selectors against what a vendor's DRA driver publishes (:mod:`kubedra.cel.published`), for each vendor
with releases kubedra has read (``Vendor.driver_releases``).

The release: the one the cluster runs (its kubelet plugin's image tag) when the scope shows it and kubedra has
read it, else every release kubedra has read (the message names those where the selector breaks).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from kubedra import vendors
from kubedra.audit.checks.dra_health import driver_versions
from kubedra.audit.scope import Context, Scope, check
from kubedra.cel import CELCompileError, SelectorEnvironment, published
from kubedra.k8s.versions import SUPPORTED
from kubedra.vendors import Vendor

Path = tuple[str | int, ...]


def _selectors(p: Path, selectors: Any) -> Iterator[tuple[Path, str]]:
    for i, s in enumerate(selectors if isinstance(selectors, list) else []):
        cel = s.get("cel") if isinstance(s, Mapping) else None
        expr = cel.get("expression") if isinstance(cel, Mapping) else None
        if isinstance(expr, str) and expr.strip():
            yield (*p, i, "cel", "expression"), expr


def _requests(p: Path, devices: Any) -> Iterator[tuple[Path, str]]:
    reqs = devices.get("requests") if isinstance(devices, Mapping) else None
    for i, r in enumerate(reqs if isinstance(reqs, list) else []):
        if not isinstance(r, Mapping):
            continue
        rp = (*p, "requests", i)
        yield from _selectors((*rp, "selectors"), r.get("selectors"))  # v1beta1
        ex = r.get("exactly")
        if isinstance(ex, Mapping):
            yield from _selectors((*rp, "exactly", "selectors"), ex.get("selectors"))
        subs = r.get("firstAvailable")
        for j, sub in enumerate(subs if isinstance(subs, list) else []):
            if isinstance(sub, Mapping):
                yield from _selectors((*rp, "firstAvailable", j, "selectors"), sub.get("selectors"))


def selector_expressions(obj: Mapping[str, Any]) -> Iterator[tuple[Path, str]]:
    """Every CEL selector of a DeviceClass, ResourceClaim or ResourceClaimTemplate (v1 and beta shapes)."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        return
    if kind == "DeviceClass":
        yield from _selectors(("spec", "selectors"), spec.get("selectors"))
    elif kind == "ResourceClaim":
        yield from _requests(("spec", "devices"), spec.get("devices"))
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, Mapping):
            yield from _requests(("spec", "spec", "devices"), inner.get("devices"))


@functools.lru_cache(maxsize=16)
def _environment(target: str) -> SelectorEnvironment:
    # only the AST matters here: a target past kubedra's CEL releases is read with the newest it has
    return SelectorEnvironment(target if target in SUPPORTED else SUPPORTED[-1])


@functools.lru_cache(maxsize=16)
def _releases(vendor: str, versions: tuple[str, ...]) -> dict[str, list[published.DeviceKind]]:
    tables, _ = vendors.get(vendor).published_releases(None)
    return {v: published.kinds_from(tables[v]) for v in versions}


@functools.lru_cache(maxsize=4096)
def _problems(
    expr: str, target: str, vendor: str, versions: tuple[str, ...]
) -> tuple[published.Problem, ...]:
    """The problems of one selector text: a fleet repeats the same few selectors across thousands of objects, so
    each distinct text is compiled and walked once per run."""
    if not versions:
        return ()
    try:
        program = _environment(target).compile(expr).program
    except CELCompileError:
        return ()  # validate and the apiserver say why
    _, hints = vendors.get(vendor).published_releases(versions[0])
    return tuple(published.check_releases(program.source.expr, _releases(vendor, versions), hints=hints))


def _versions(ctx: Context, scope: Scope, vendor: Vendor) -> tuple[str, ...]:
    """The vendor's releases to check against: --driver-version (one, or all), else those the scope runs, else
    all it has read."""
    read = vendor.driver_releases
    if ctx.driver_version == "all":
        return read
    if ctx.driver_version is not None:
        return (ctx.driver_version,) if ctx.driver_version in read else ()
    running = [v for v in driver_versions(scope, vendor) if v in read]
    return tuple(sorted(set(running), key=read.index)) or read


@check("dra.selector-unpublished")
def unpublished_selectors(ctx: Context, scope: Scope) -> None:
    checked = [(v.name, _versions(ctx, scope, v)) for v in vendors.all() if v.driver_releases]
    for item in scope.kind("DeviceClass", "ResourceClaim", "ResourceClaimTemplate"):
        if not item.api_version.startswith("resource.k8s.io/"):
            continue
        for path, expr in selector_expressions(item.obj):
            for vendor, versions in checked:
                for p in _problems(expr, str(ctx.target), vendor, versions):
                    ctx.emit(
                        "dra.selector-unpublished",
                        item,
                        p.message,
                        path=path,
                        severity="warning" if p.warning else None,
                        namespace=item.home,
                    )
