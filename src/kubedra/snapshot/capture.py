"""Read one live cluster into a :class:`~kubedra.model.snapshot.Snapshot` (GET requests only).

The listing reuses :mod:`kubedra.sources.cluster` (raw JSON, discovery, pagination). What is captured:
Nodes; GPU workloads (Pods, Deployments, StatefulSets, DaemonSets, Jobs, CronJobs and operator CRs whose pod
specs ask for a GPU vendor's device-plugin resources or ResourceClaims), GPU infrastructure (device plugin, DRA driver,
GPU operator) and kube-system workloads; every DRA object; admission webhooks; CRDs (without their schemas);
PriorityClasses; the ConfigMaps kubedra reads; DRA-related Events; Helm release metadata; the feature-gate
lines of ``/metrics``; versions. Every object goes through :func:`kubedra.snapshot.scrub.scrub`.

:func:`capture_into` hands each object to a :class:`Sink` as its page is read (``kubedra snapshot -o FILE.json``
writes it to the file at once, so no more than a page or two is held); :func:`capture` collects them in memory.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kubedra import __version__, vendors
from kubedra.errors import ClusterError, UsageError
from kubedra.k8s import clusterreads, gpuschemes
from kubedra.k8s.featuregates import parse_feature_metrics
from kubedra.model.snapshot import Header, HelmRelease, Snapshot
from kubedra.snapshot.scrub import scrub
from kubedra.sources import cluster as cs
from kubedra.sources import files, helm

# (group, resource) listed when served
RESOURCES = clusterreads.resources("snapshot")
WORKLOAD_KINDS = frozenset({"Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})
SYSTEM_NAMESPACES = frozenset({"kube-system"})
# names and images of GPU infrastructure whatever the vendor; each vendor adds its own (Vendor.names_component)
_INFRA = re.compile(r"device-plugin|dra-driver|gpu-operator|gpu-feature-discovery|kubelet-plugin", re.I)
_METRIC_LINES = re.compile(r"^(kubernetes_feature_enabled|apiserver_requested_deprecated_apis)\{", re.M)
DRA_EVENT_REASONS = frozenset(
    {
        "FailedPrepareDynamicResources",
        "FailedUnprepareDynamicResources",
        "FailedResourceClaimCreation",
        "FailedScheduling",
        "FailedBinding",
        "DeviceTaint",
    }
)
_CLAIM_WORDS = re.compile(r"resourceclaim|claim|dynamic resource|device class|deviceclass", re.I)


@functools.cache
def _resource_domains() -> tuple[str, ...]:
    """Every vendor's device-plugin resource prefix (``amd.com/``, ...)."""
    return tuple(v.resource_domain for v in vendors.all())


@functools.cache
def _domain_words() -> re.Pattern[str]:
    """An event about a vendor's device-plugin resources (``Insufficient amd.com/gpu``) mentions its domain."""
    return re.compile("|".join(re.escape(d.rstrip("/")) for d in _resource_domains()), re.I)


def _infrastructure(text: str) -> bool:
    return bool(_INFRA.search(text)) or any(v.names_component(text) for v in vendors.all())


def _walk_pod_specs(obj: Any, depth: int = 0) -> Iterable[dict[str, Any]]:
    if depth > 14:
        return
    if isinstance(obj, dict):
        containers = obj.get("containers")
        if isinstance(containers, list) and containers and all(isinstance(c, dict) for c in containers):
            yield obj
            return
        for k, v in obj.items():
            if k not in ("metadata", "status"):
                yield from _walk_pod_specs(v, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk_pod_specs(v, depth + 1)


def uses_gpu(obj: dict[str, Any]) -> bool:
    """A pod spec inside asks for a GPU vendor's device-plugin resources or DRA ResourceClaims."""
    for spec in _walk_pod_specs(obj.get("spec") if obj.get("kind") == "Pod" else obj):
        if spec.get("resourceClaims"):
            return True
        for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            if res.get("claims"):
                return True
            for part in ("limits", "requests"):
                if any(str(k).startswith(_resource_domains()) for k in (res.get(part) or {})):
                    return True
    return False


def is_gpu_infrastructure(obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata") or {}
    if _infrastructure(str(meta.get("name") or "")):
        return True
    for spec in _walk_pod_specs(obj.get("spec") if obj.get("kind") == "Pod" else obj):
        for c in spec.get("containers") or []:
            if _infrastructure(str(c.get("image") or "")):
                return True
    return False


def keep(obj: dict[str, Any]) -> bool:
    """Whether a listed object belongs in the snapshot (before scrubbing)."""
    kind = obj.get("kind")
    ns = str((obj.get("metadata") or {}).get("namespace") or "")
    if kind in WORKLOAD_KINDS:
        return ns in SYSTEM_NAMESPACES or uses_gpu(obj) or is_gpu_infrastructure(obj)
    if kind == "Event":
        reason = str(obj.get("reason") or "")
        if reason not in DRA_EVENT_REASONS and not reason.startswith("Failed"):
            return False
        message = str(obj.get("message") or "")
        return reason != "FailedScheduling" or bool(
            _CLAIM_WORDS.search(message) or _domain_words().search(message)
        )
    return True


def _crd(obj: dict[str, Any]) -> dict[str, Any]:
    for v in (obj.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict):
            v.pop("schema", None)
    (obj.get("spec") or {}).pop("validation", None)
    return obj


def _trim(obj: dict[str, Any]) -> dict[str, Any]:
    """Drop bulky fields nothing in kubedra reads."""
    if obj.get("kind") == "Node":
        (obj.get("status") or {}).pop("images", None)
    if obj.get("kind") == "CustomResourceDefinition":
        _crd(obj)
    return obj


def feature_gates(metrics: str) -> dict[str, bool]:
    return {name: enabled for name, (enabled, _stage) in parse_feature_metrics(metrics).items()}


def _recorder(header: Header) -> Callable[[str, str], None]:
    """Records a read that did not happen in the header (resource, verb, namespace, reason)."""

    def record(resource: str, reason: str) -> None:
        u = cs.Unread.of(resource, reason)
        header.not_inspected.append(
            {"resource": u.resource, "verb": u.verb, "namespace": u.namespace, "reason": u.reason}
        )

    return record


def _helm_releases(client: cs.Client, header: Header) -> None:
    secrets = cs.ResourceType("", "v1", "secrets", "Secret", True)
    raw = cs.attempt(
        _recorder(header),
        cs.HELM_SECRETS,
        lambda: client.list_all(
            secrets, [("labelSelector", "owner=helm"), ("fieldSelector", f"type={helm.RELEASE_SECRET_TYPE}")]
        ),
    )
    if raw is None:
        return
    decoded: list[tuple[helm.Release, dict[str, Any]]] = []
    for s in raw:
        try:
            rel = helm.decode_release_secret(s)
            data = helm.decode_release_data((s.get("data") or {}).get("release", ""))
        except (ValueError, OSError) as e:
            sm = s.get("metadata") or {}
            header.not_inspected.append(
                {"resource": f"Helm release secret {sm.get('namespace')}/{sm.get('name')}", "reason": str(e)}
            )
            continue
        decoded.append((rel, data))
    current = {(r.namespace, r.name, r.revision) for r in helm.current_releases([r for r, _ in decoded])}
    for rel, data in decoded:
        if (rel.namespace, rel.name, rel.revision) not in current:
            continue
        chart_meta = (
            ((data.get("chart") or {}).get("metadata") or {}) if isinstance(data.get("chart"), dict) else {}
        )
        objects = []
        parsed = files.parse_text(rel.manifest, f"helm:{rel.namespace}/{rel.name}", keep_nodes=False)
        for d in parsed.documents:
            ref = {"apiVersion": d.api_version, "kind": d.kind, "name": d.name}
            ref["namespace"] = d.namespace or ""
            objects.append(ref)
        header.helm_releases.append(
            HelmRelease(
                name=rel.name,
                namespace=rel.namespace,
                chart=str(chart_meta.get("name") or rel.chart),
                version=str(chart_meta.get("version") or ""),
                revision=rel.revision,
                status=rel.status,
                objects=objects,
            )
        )
    header.helm_releases.sort(key=lambda h: (h.namespace, h.name))


class Sink(Protocol):
    """Where captured items go as they are listed: a list (:class:`Items`) or a file
    (:class:`kubedra.model.snapshot.JsonWriter`). ``rollback`` drops what was added since ``mark``."""

    def mark(self) -> None: ...

    def add(self, obj: dict[str, Any]) -> None: ...

    def rollback(self) -> None: ...


class Items:
    """The items of an in-memory capture."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._mark = 0

    def mark(self) -> None:
        self._mark = len(self.items)

    def add(self, obj: dict[str, Any]) -> None:
        self.items.append(obj)

    def rollback(self) -> None:
        del self.items[self._mark :]


def capture(
    kubeconfig: str | None,
    context: str | None,
    *,
    name: str | None = None,
    timeout: float | None = None,
    helm_releases: bool = True,
    now: dt.datetime | None = None,
) -> Snapshot:
    """Capture one cluster into memory. Raises ClusterError when it cannot be reached (exit 2)."""
    items = Items()
    header = capture_into(
        items, kubeconfig, context, name=name, timeout=timeout, helm_releases=helm_releases, now=now
    )
    return Snapshot(header=header, items=items.items)


def capture_into(
    sink: Sink,
    kubeconfig: str | None,
    context: str | None,
    *,
    name: str | None = None,
    timeout: float | None = None,
    helm_releases: bool = True,
    now: dt.datetime | None = None,
) -> Header:
    """Capture one cluster, handing each scrubbed item to ``sink`` as its page is read (one page of objects
    is held at a time); returns the header, complete only at the end. A listing that fails halfway is left
    out whole (rolled back) and recorded in the header. Raises ClusterError when it cannot be reached."""
    label = name or cs.label(kubeconfig, context)
    client = cs.Client(kubeconfig, context, timeout)
    header = Header(cluster=label, kubedra_version=__version__)
    header.captured_at = (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        ver = client.get_json("/version")
        header.server_version = str(ver.get("gitVersion") or f"v{ver.get('major')}.{ver.get('minor')}")
        disc = cs.discover(client)
    except cs.HTTPError as e:
        raise ClusterError(f"cluster {label} ({client.host}): {e.reason()}") from e
    except ClusterError:
        raise
    except Exception as e:
        if cs.connection_error(e) or isinstance(e, ValueError | AttributeError):
            raise ClusterError(f"cannot reach cluster {label} at {client.host}: {cs.short_error(e)}") from e
        raise
    header.served_apis = sorted(disc.served)
    record = _recorder(header)
    operator_groups = list(gpuschemes.operator_groups())
    wanted = {g for g, _ in RESOURCES}
    plan = cs.listing_plan(client, disc, RESOURCES, operator_groups, record)

    for rt in plan:
        sink.mark()
        if cs.attempt(
            record, rt.display, functools.partial(_list, client, rt, operator_groups, wanted, sink)
        ):
            continue
        sink.rollback()
    if helm_releases:
        _helm_releases(client, header)
    raw = cs.attempt(record, cs.METRICS, lambda: client.get_raw("/metrics", accept="text/plain"))
    if raw is not None:
        metrics = raw.decode("utf-8", "replace")
        lines = [ln for ln in metrics.splitlines() if _METRIC_LINES.match(ln)]
        header.metrics = "\n".join(lines) + ("\n" if lines else "")
        header.feature_gates = feature_gates(header.metrics)
    return header


def _list(
    client: cs.Client, rt: cs.ResourceType, operator_groups: list[str], wanted: set[str], sink: Sink
) -> bool:
    operator = cs.matches_group(rt.group, operator_groups) and rt.group not in wanted
    for page in client.list_pages(rt):
        for obj in page:
            if operator and not (
                uses_gpu(obj) or rt.kind in ("ClusterPolicy", "GPUCluster") or is_gpu_infrastructure(obj)
            ):
                continue
            if not keep(obj):
                continue
            clean = scrub(_trim(obj))
            if clean is not None:
                sink.add(clean)
    return True


def resolve_context(kubeconfig: str | None, context: str | None) -> str | None:
    names = cs.resolve_contexts(kubeconfig, [context] if context else [], False)
    if not names:
        raise UsageError("no context to capture")
    return names[0]
