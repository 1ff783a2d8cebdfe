"""Read-only inventory of live clusters for ``kubedra audit``.

Per kubeconfig context: ``/version``, API discovery, then a paginated list (``limit``/``continue``, raw JSON:
5-6x faster than the typed models) of every resource type the audit reads that the cluster actually serves,
Helm 3 release secrets, and the apiserver ``/metrics`` (feature gates, deprecated API requests). A 403 on
any of them is recorded as "not inspected", never as clean. Several clusters are read concurrently.

Only GET requests are sent; ``deploy/kubedra-audit-clusterrole.yaml`` is the RBAC this needs.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubedra.errors import ClusterError, Location, UsageError

PAGE_SIZE = 500

# (group, resource) the audit lists when served; "" is the core group. GPU operator groups are added from
# discovery (every listable resource of those groups), see OPERATOR_GROUPS in data/rules/cluster-features.yaml.
BUILTIN_RESOURCES: tuple[tuple[str, str], ...] = (
    ("", "nodes"),
    ("", "pods"),
    ("", "configmaps"),
    ("apps", "deployments"),
    ("apps", "daemonsets"),
    ("apps", "statefulsets"),
    ("apps", "replicasets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("resource.k8s.io", "deviceclasses"),
    ("resource.k8s.io", "resourceslices"),
    ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "resourceclaimtemplates"),
    ("resource.k8s.io", "devicetaintrules"),
    ("scheduling.k8s.io", "workloads"),
    ("scheduling.k8s.io", "podgroups"),
)
HELM_SECRETS = "secrets (Helm 3 releases)"
METRICS = "kube-apiserver /metrics"


class HTTPError(Exception):
    def __init__(self, status: int, path: str, body: bytes = b"") -> None:
        super().__init__(f"HTTP {status} on {path}")
        self.status = status
        self.path = path
        self.body = body

    def reason(self) -> str:
        try:
            msg = json.loads(self.body).get("message")
        except (ValueError, AttributeError):
            msg = None
        return f"HTTP {self.status}" + (f": {msg}" if msg else "")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def path(self) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{base}/{self.resource}"

    @property
    def display(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource


class Client:
    """Thin raw-JSON GET client on top of the official kubernetes client (auth, exec plugins, TLS)."""

    def __init__(self, kubeconfig: str | None, context: str | None, timeout: float) -> None:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException

        try:
            self.api = config.new_client_from_config(
                config_file=kubeconfig, context=context, persist_config=False
            )
        except ConfigException as e:
            raise UsageError(f"kubeconfig: {e}") from e
        except OSError as e:
            raise UsageError(f"kubeconfig: {e}") from e
        self.host = self.api.configuration.host
        self.timeout = timeout

    def get_raw(
        self, path: str, query: Sequence[tuple[str, Any]] = (), accept: str = "application/json"
    ) -> bytes:
        from kubernetes.client.exceptions import ApiException

        method, url, headers, body, post = self.api.param_serialize(
            "GET",
            path,
            query_params=list(query),
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
        )
        try:
            resp = self.api.call_api(method, url, headers, body, post, _request_timeout=self.timeout)
            data: bytes = resp.read()
        except ApiException as e:
            raise HTTPError(
                int(e.status or 0), path, (e.body or "").encode() if isinstance(e.body, str) else b""
            ) from e
        if resp.status >= 400:
            raise HTTPError(resp.status, path, data)
        return data

    def get_json(self, path: str, query: Sequence[tuple[str, Any]] = ()) -> Any:
        return json.loads(self.get_raw(path, query))

    def list_all(self, rt: ResourceType, query: Sequence[tuple[str, Any]] = ()) -> list[dict[str, Any]]:
        """Every object of ``rt``, page by page; apiVersion/kind filled in (list items lack them)."""
        items: list[dict[str, Any]] = []
        token = ""
        api_version = rt.group_version
        while True:
            q = [("limit", PAGE_SIZE), *query] + ([("continue", token)] if token else [])
            page = self.get_json(rt.path, q)
            api_version = page.get("apiVersion") or api_version
            for obj in page.get("items") or []:
                obj.setdefault("apiVersion", api_version)
                obj.setdefault("kind", rt.kind)
                items.append(obj)
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return items


def _connection_error(e: BaseException) -> bool:
    import urllib3

    return isinstance(e, urllib3.exceptions.HTTPError | OSError | TimeoutError)


def resolve_contexts(kubeconfig: str | None, contexts: Sequence[str], all_contexts: bool) -> list[str | None]:
    """Context names to audit; [None] means the kubeconfig's current context."""
    from kubernetes import config
    from kubernetes.config.config_exception import ConfigException

    try:
        available, active = config.list_kube_config_contexts(config_file=kubeconfig)
    except ConfigException as e:
        raise UsageError(f"kubeconfig: {e}") from e
    except OSError as e:
        raise UsageError(f"kubeconfig: {e}") from e
    names = [c["name"] for c in available or []]
    if all_contexts:
        if contexts:
            raise UsageError("--all-contexts and --context are exclusive")
        return list(names)
    for c in contexts:
        if c not in names:
            raise UsageError(f"no context {c!r} in the kubeconfig (have: {', '.join(names) or 'none'})")
    if contexts:
        return list(dict.fromkeys(contexts))
    if not active:
        raise UsageError("the kubeconfig has no current context: pass --context NAME")
    return [str(active["name"])]


@dataclass
class Discovery:
    served: set[str] = field(default_factory=set)  # every served "group/version" ("v1" for core)
    preferred: list[tuple[str, str]] = field(default_factory=list)  # (group, preferred version)


def discover(client: Client) -> Discovery:
    out = Discovery()
    core = client.get_json("/api")
    out.served.update(core.get("versions") or [])
    out.preferred.append(("", "v1"))
    groups = client.get_json("/apis")
    for g in groups.get("groups") or []:
        name = g.get("name", "")
        gvs = [gv.get("version") for gv in g.get("versions") or [] if gv.get("version")]
        out.served.update(f"{name}/{v}" for v in gvs)
        pv = (g.get("preferredVersion") or {}).get("version") or (gvs[0] if gvs else None)
        if pv:
            out.preferred.append((name, pv))
    return out


def resources_of(client: Client, group: str, version: str) -> list[ResourceType]:
    path = f"/apis/{group}/{version}" if group else f"/api/{version}"
    data = client.get_json(path)
    out = []
    for r in data.get("resources") or []:
        name = r.get("name", "")
        if "/" in name or "list" not in (r.get("verbs") or []):
            continue
        out.append(ResourceType(group, version, name, r.get("kind", ""), bool(r.get("namespaced"))))
    return out


@dataclass
class ClusterResult:
    context: str
    scope: Any = None  # kubedra.audit.engine.Scope
    findings: list[Any] = field(default_factory=list)
    error: ClusterError | UsageError | None = None


Progress = Callable[[str, int, int, str], None]


def collect(
    kubeconfig: str | None,
    context: str | None,
    *,
    timeout: float = 20.0,
    helm_releases: bool = True,
    operator_groups: Iterable[str] = (),
    progress: Progress | None = None,
) -> ClusterResult:
    """Inventory one cluster. Unreachable clusters come back with ``error`` set (never raised)."""
    from kubedra.audit.engine import ClusterFacts, Scope
    from kubedra.audit.model import Finding, Item, ObjectRef, RuleBook
    from kubedra.audit.versions import Version
    from kubedra.sources import files, helm

    rules = RuleBook.load()
    name = context or "current-context"
    result = ClusterResult(context=name)
    try:
        client = Client(kubeconfig, context, timeout)
    except UsageError as e:
        result.error = e
        return result
    facts = ClusterFacts(name=name)
    scope = Scope(name=name, facts=facts)

    def not_inspected(resource: str, reason: str, severity: str | None = None) -> None:
        facts.not_inspected.append((resource, reason))
        meta = rules["cluster.not-inspected"]
        result.findings.append(
            Finding(
                rule=meta.id,
                severity=severity or meta.severity,
                object=ObjectRef("", "", None, resource),
                source=Location(cluster=name),
                message=f"{resource} not inspected ({'forbidden' if reason.startswith('HTTP 403') else 'failed'}: {reason})",
                fix=meta.render_fix({"resource": resource}),
            )
        )

    try:
        ver = client.get_json("/version")
        facts.git_version = str(ver.get("gitVersion") or "")
        facts.server_version = Version.maybe(facts.git_version) or Version.maybe(
            f"{ver.get('major')}.{ver.get('minor')}".rstrip("+")
        )
        disc = discover(client)
    except HTTPError as e:
        if e.status in (401, 403) and e.path == "/version":
            result.error = ClusterError(
                f"cluster {name} ({client.host}) refused our credentials: {e.reason()}"
            )
        else:
            result.error = ClusterError(f"cluster {name} ({client.host}): API discovery failed: {e.reason()}")
        return result
    except Exception as e:
        if _connection_error(e) or isinstance(e, ValueError):
            result.error = ClusterError(f"cannot reach cluster {name} at {client.host}: {_short(e)}")
            return result
        raise
    facts.served = disc.served

    wanted_groups = {g for g, _ in BUILTIN_RESOURCES}
    plan: list[ResourceType] = []
    for group, version in disc.preferred:
        operator = _matches_group(group, operator_groups)
        if group not in wanted_groups and not operator:
            continue
        gv = f"{group}/{version}" if group else version
        try:
            rts = resources_of(client, group, version)
        except HTTPError as e:
            not_inspected(f"discovery of {gv}", e.reason())
            continue
        for rt in rts:
            if operator or (group, rt.resource) in BUILTIN_RESOURCES:
                plan.append(rt)
    total = len(plan) + int(helm_releases) + 1
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, total, what)

    for rt in plan:
        try:
            for obj in client.list_all(rt):
                scope.items.append(Item(obj=obj, cluster=name))
        except HTTPError as e:
            not_inspected(rt.display, e.reason())
        except Exception as e:
            if not _connection_error(e):
                raise
            not_inspected(rt.display, _short(e))
        step(rt.display)

    if helm_releases:
        secrets = ResourceType("", "v1", "secrets", "Secret", True)
        try:
            raw = client.list_all(
                secrets,
                [("labelSelector", "owner=helm"), ("fieldSelector", f"type={helm.RELEASE_SECRET_TYPE}")],
            )
            releases = []
            for s in raw:
                try:
                    releases.append(helm.decode_release_secret(s))
                except (ValueError, OSError) as e:
                    meta = rules["input.malformed"]
                    sm = s.get("metadata") or {}
                    result.findings.append(
                        Finding(
                            meta.id,
                            meta.severity,
                            ObjectRef("v1", "Secret", sm.get("namespace"), sm.get("name", "")),
                            Location(cluster=name),
                            f"Helm release secret could not be decoded: {e}",
                            meta.render_fix({}),
                        )
                    )
            for rel in helm.current_releases(releases):
                parsed = files.parse_text(rel.manifest, f"helm:{rel.namespace}/{rel.name}", keep_nodes=False)
                for d in parsed.documents:
                    scope.items.append(Item(obj=d.obj, cluster=name, via=rel.describe()))
                for err in parsed.errors:
                    meta = rules["input.malformed"]
                    result.findings.append(
                        Finding(
                            meta.id,
                            meta.severity,
                            ObjectRef(),
                            Location(cluster=name),
                            f"{rel.describe()}: manifest: {err.message}",
                            meta.render_fix({}),
                        )
                    )
        except HTTPError as e:
            not_inspected(HELM_SECRETS, e.reason())
        step("helm releases")

    try:
        facts.metrics = client.get_raw("/metrics", accept="text/plain").decode("utf-8", "replace")
    except HTTPError as e:
        not_inspected(METRICS, e.reason(), severity="warning")
    step("metrics")
    facts.objects = len(scope.items)
    result.scope = scope
    return result


def _matches_group(group: str, patterns: Iterable[str]) -> bool:
    return any(group == p or group.endswith("." + p) for p in patterns)


def _short(e: BaseException) -> str:
    text = str(getattr(e, "reason", None) or e)
    return text.splitlines()[0][:200] if text else type(e).__name__


def collect_many(
    kubeconfig: str | None,
    contexts: Sequence[str | None],
    *,
    timeout: float = 20.0,
    helm_releases: bool = True,
    progress: bool = False,
) -> list[ClusterResult]:
    """Inventory several clusters in parallel (threads: the work is network-bound), in the given order."""
    from kubedra.audit.model import load_data

    groups = [str(g) for g in load_data("cluster-features.yaml").get("gpuOperatorGroups", [])]
    workers = max(1, min(len(contexts), int(os.environ.get("KUBEDRA_AUDIT_CONCURRENCY", "8"))))

    def run(ctx: str | None, cb: Progress | None) -> ClusterResult:
        return collect(
            kubeconfig, ctx, timeout=timeout, helm_releases=helm_releases, operator_groups=groups, progress=cb
        )

    if not progress:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda c: run(c, None), contexts))

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    lock = threading.Lock()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[what]}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks = {
            c or "current-context": bar.add_task(c or "current-context", total=None, what="discovery")
            for c in contexts
        }

        def cb(name: str, done: int, total: int, what: str) -> None:
            with lock:
                bar.update(tasks[name], completed=done, total=total, what=what)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda c: run(c, cb), contexts))
