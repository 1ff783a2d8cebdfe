"""Audit a live cluster: list what the rules read (read-only, bounded, every unread resource named), decode
Helm releases, and hand the objects to the audit engine; several clusters in parallel."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from kubedra.audit.inputs import AuditInputs, input_finding
from kubedra.audit.model import Item, RuleBook
from kubedra.audit.scope import ClusterFacts, Scope
from kubedra.errors import ClusterError, Location, UsageError
from kubedra.k8s import clusterreads
from kubedra.k8s.findings import Finding, ObjectRef
from kubedra.k8s.gpuschemes import operator_groups
from kubedra.k8s.versions import Version
from kubedra.sources import files, helm
from kubedra.sources.cluster import (
    HELM_SECRETS,
    METRICS,
    Client,
    Discovery,
    HTTPError,
    ResourceType,
    Unread,
    attempt,
    connection_error,
    discover,
    label,
    listing_plan,
    resolve_contexts,
    short_error,
)


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

    rules = RuleBook.load()
    name = label(kubeconfig, context)
    result = ClusterResult(context=name)
    try:
        client = Client(kubeconfig, context, timeout)
    except (UsageError, ClusterError) as e:
        result.error = e
        return result
    facts = ClusterFacts(name=name)
    scope = Scope(name=name, facts=facts)

    def not_inspected(resource: str, reason: str) -> None:
        facts.not_inspected.append((resource, reason))
        meta = rules["cluster.not-inspected"]
        result.findings.append(
            Finding(
                rule=meta.id,
                severity="warning" if resource == METRICS else meta.severity,
                object=ObjectRef("", "", None, resource),
                source=Location(cluster=name),
                message=f"{resource} not inspected ({Unread.of(resource, reason).cause}: {reason})",
                fix=meta.render_fix({"resource": resource}),
            )
        )

    disc = _discover(client, name, facts)
    if isinstance(disc, ClusterError):
        result.error = disc
        return result
    facts.served = disc.served

    plan = listing_plan(client, disc, clusterreads.resources("audit"), operator_groups, not_inspected)
    total = len(plan) + int(helm_releases) + 1
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(name, done, total, what)

    for rt in plan:
        for obj in attempt(not_inspected, rt.display, functools.partial(client.list_all, rt)) or []:
            scope.items.append(Item(obj=obj, cluster=name))
        step(rt.display)

    if helm_releases:
        items, findings = _helm_items(client, name, rules, not_inspected)
        scope.items += items
        result.findings += findings
        step("helm releases")

    metrics = attempt(not_inspected, METRICS, lambda: client.get_raw("/metrics", accept="text/plain"))
    if metrics is not None:
        facts.metrics = metrics.decode("utf-8", "replace")
    step("metrics")
    facts.objects = len(scope.items)
    result.scope = scope
    return result


def _discover(client: Client, name: str, facts: ClusterFacts) -> Discovery | ClusterError:
    """The server's version (into ``facts``) and the APIs it serves, or why the cluster cannot be read."""
    try:
        ver = client.get_json("/version")
        facts.git_version = str(ver.get("gitVersion") or "")
        facts.server_version = Version.maybe(facts.git_version) or Version.maybe(
            f"{ver.get('major')}.{ver.get('minor')}".rstrip("+")
        )
        return discover(client)
    except HTTPError as e:
        if e.status in (401, 403) and e.path == "/version":
            return ClusterError(f"cluster {name} ({client.host}) refused our credentials: {e.reason()}")
        return ClusterError(f"cluster {name} ({client.host}): API discovery failed: {e.reason()}")
    except ClusterError as e:
        return e
    except Exception as e:
        if connection_error(e) or isinstance(e, ValueError | AttributeError):
            return ClusterError(f"cannot reach cluster {name} at {client.host}: {short_error(e)}")
        raise


def _helm_items(
    client: Client, name: str, rules: RuleBook, not_inspected: Callable[[str, str], None]
) -> tuple[list[Item], list[Finding]]:
    """The objects of the current Helm 3 releases (their release secrets decoded), and what could not be read."""
    items: list[Item] = []
    findings: list[Finding] = []
    secrets = ResourceType("", "v1", "secrets", "Secret", True)
    raw = attempt(
        not_inspected,
        HELM_SECRETS,
        lambda: client.list_all(
            secrets,
            [("labelSelector", "owner=helm"), ("fieldSelector", f"type={helm.RELEASE_SECRET_TYPE}")],
        ),
    )
    releases = []
    for s in raw or []:
        try:
            releases.append(helm.decode_release_secret(s))
        except (ValueError, OSError) as e:
            meta = rules["input.malformed"]
            sm = s.get("metadata") or {}
            findings.append(
                Finding(
                    rule=meta.id,
                    severity=meta.severity,
                    object=ObjectRef("v1", "Secret", sm.get("namespace"), sm.get("name", "")),
                    source=Location(cluster=name),
                    message=f"Helm release secret could not be decoded: {e}",
                    fix=meta.render_fix({}),
                )
            )
    for rel in helm.current_releases(releases):
        parsed = files.parse_text(rel.manifest, f"helm:{rel.namespace}/{rel.name}", keep_nodes=False)
        items += [Item(obj=d.obj, cluster=name, via=rel.describe()) for d in parsed.documents]
        for err in parsed.errors:
            meta = rules["input.malformed"]
            findings.append(
                Finding(
                    rule=meta.id,
                    severity=meta.severity,
                    object=ObjectRef(),
                    source=Location(cluster=name),
                    message=f"{rel.describe()}: manifest: {err.message}",
                    fix=meta.render_fix({}),
                )
            )
    return items, findings


def collect_many(
    kubeconfig: str | None,
    contexts: Sequence[str | None],
    *,
    timeout: float = 20.0,
    helm_releases: bool = True,
    progress: bool = False,
) -> list[ClusterResult]:
    """Inventory several clusters in parallel (threads: the work is network-bound), in the given order."""

    groups = list(operator_groups())
    workers = max(1, min(len(contexts), int(os.environ.get("KUBEDRA_AUDIT_CONCURRENCY", "8"))))

    def run(ctx: str | None, cb: Progress | None) -> ClusterResult:
        return collect(
            kubeconfig, ctx, timeout=timeout, helm_releases=helm_releases, operator_groups=groups, progress=cb
        )

    if not progress:
        return _parallel(lambda c: run(c, None), contexts, workers)

    from rich.console import Console  # noqa: PLC0415
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn  # noqa: PLC0415
    from rich.progress import Progress as Bar  # noqa: PLC0415

    lock = threading.Lock()
    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[what]}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks = {
            label(kubeconfig, c): bar.add_task(label(kubeconfig, c), total=None, what="discovery")
            for c in contexts
        }

        def cb(name: str, done: int, total: int, what: str) -> None:
            with lock:
                bar.update(tasks[name], completed=done, total=total, what=what)

        return _parallel(lambda c: run(c, cb), contexts, workers)


def _parallel(
    fn: Callable[[str | None], ClusterResult], items: Sequence[str | None], workers: int
) -> list[ClusterResult]:
    """``[fn(i) for i in items]`` on ``workers`` daemon threads, in order; the first error is raised. Not a
    ThreadPoolExecutor: Python joins its workers at exit, so a Ctrl-C (or any error) would wait for every
    read in flight to end, up to the request timeout; daemon threads are dropped with the process."""
    futures: list[Future[ClusterResult]] = [Future() for _ in items]
    todo = iter(list(enumerate(items)))
    lock = threading.Lock()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            with lock:
                nxt = next(todo, None)
            if nxt is None:
                return
            i, item = nxt
            try:
                futures[i].set_result(fn(item))
            except BaseException as e:  # noqa: BLE001 - handed to the caller, who raises it
                futures[i].set_exception(e)

    for _ in range(min(workers, len(items))):
        threading.Thread(target=work, name="kubedra-audit-cluster", daemon=True).start()
    try:
        return [f.result() for f in futures]
    finally:
        stop.set()


@dataclass(frozen=True)
class ClusterRequest:
    """Which live clusters to read, and how."""

    kubeconfig: str | None
    contexts: tuple[str, ...] = ()
    all_contexts: bool = False
    timeout: float = 30.0
    helm_releases: bool = True
    progress: bool = False


def gather(out: AuditInputs, req: ClusterRequest, rules: RuleBook) -> None:
    """Read the requested clusters into ``out``: one that cannot be read raises its error when it is the only
    one, else becomes a ``cluster.unreachable`` finding."""
    names = resolve_contexts(req.kubeconfig, req.contexts, req.all_contexts)
    results = collect_many(
        req.kubeconfig, names, timeout=req.timeout, helm_releases=req.helm_releases, progress=req.progress
    )
    for res in results:
        if res.error is not None:
            if len(names) == 1:
                raise res.error  # one cluster: one clear line, exit 2
            out.unreachable = True
            out.findings.append(
                input_finding(
                    rules,
                    "cluster.unreachable",
                    Location(cluster=res.context),
                    str(res.error.message),
                    {"context": res.context},
                )
            )
            continue
        scope = res.scope
        assert scope is not None
        assert scope.facts is not None
        out.clusters.append(scope.facts)
        out.findings += res.findings
        out.scopes.append(scope)
