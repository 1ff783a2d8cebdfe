"""Server-side dry-run: the apiserver itself judges every object (nothing is persisted).

Each object goes through server-side apply with ``dryRun=All`` and field manager ``kubedra`` (objects
with only ``generateName`` are dry-run created instead). The server's own message, and the field of
each cause it lists, are reported with the file:line of that field.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kubedra.errors import ClusterError
from kubedra.k8s import namespaces
from kubedra.k8s.findings import Finding
from kubedra.sources import cluster as cs
from kubedra.sources.files import Document
from kubedra.validate.result import doc_finding

FIELD_MANAGER = "kubedra"
_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]|\[([^\]]*)\]")


def field_path(text: str) -> list[str | int]:
    """``spec.devices.requests[0].exactly.count`` -> ``['spec', 'devices', 'requests', 0, 'exactly', 'count']``."""
    out: list[str | int] = []
    for name, index, key in _STEP.findall(text or ""):
        if name:
            out.append(name)
        elif index:
            out.append(int(index))
        elif key:
            out.append(key.strip("\"'"))
    return out


def _client(kubeconfig: str | None, context: str | None) -> Any:
    """A DynamicClient on kubedra's bounded API client (kubeconfig or in-cluster config; every request under
    --request-timeout/--deadline). Its discovery cache lives in the per-user cache dir, not the shared temp dir."""
    from kubernetes import dynamic  # noqa: PLC0415
    from kubernetes.client.exceptions import ApiException  # noqa: PLC0415

    api = cs.api_client(kubeconfig, context)
    label = _label(kubeconfig, context)
    host = api.configuration.host
    try:
        return dynamic.DynamicClient(api, cache_file=str(_discovery_cache(host)))
    except ApiException as e:
        raise _refused(label, host, e) from e
    except ClusterError:
        raise
    except Exception as e:
        raise ClusterError(f"cannot reach cluster {label} at {host}: {cs.short_error(e)}") from e


def _label(kubeconfig: str | None, context: str | None) -> str:
    """The context name (the current one when none is given), or ``in-cluster``."""
    return cs.resolve_contexts(kubeconfig, [context] if context else [], False)[0] or cs.IN_CLUSTER


def _refused(label: str, host: str, e: Any) -> ClusterError:
    """One line for an API error that is about kubedra's access, not about an object."""
    status = int(getattr(e, "status", 0) or 0)
    why = {401: "unauthorised", 403: "forbidden"}.get(status, f"HTTP {status}")
    message, _ = _status(e)
    return ClusterError(f"cluster {label} ({host}): {why}: {message.splitlines()[0] if message else why}")


def _discovery_cache(host: str) -> Path:
    """``$XDG_CACHE_HOME/kubedra/discovery`` (or ``~/.cache/kubedra/discovery``), 0700, one file per server."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kubedra" / "discovery"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    if base.stat().st_mode & 0o077:
        base.chmod(0o700)
    return base / f"{hashlib.sha256(host.encode()).hexdigest()[:16]}.json"


def _default_namespace(kubeconfig: str | None, context: str | None) -> str:
    try:
        from kubernetes import config  # noqa: PLC0415

        source = cs.kubeconfig_source(kubeconfig)
        if source is None:  # in-cluster: the ServiceAccount's namespace
            ns = (cs.service_account_dir() / "namespace").read_text().strip()
            return ns or "default"
        contexts, current = config.list_kube_config_contexts(config_file=source)
        chosen = next((c for c in contexts if c["name"] == context), current) if context else current
        return str((chosen or {}).get("context", {}).get("namespace") or "default")
    except Exception:  # noqa: BLE001 - the dry run's own client reads the same kubeconfig and reports what is wrong
        return "default"


def dry_run(  # noqa: C901 - maps each API error of a dry run to its finding
    documents: Sequence[Document],
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    client: Any = None,
) -> list[Finding]:
    """Dry-run every document on the cluster; returns the server's rejections."""
    from kubernetes.client.exceptions import ApiException  # noqa: PLC0415
    from kubernetes.dynamic.exceptions import ResourceNotFoundError  # noqa: PLC0415

    dyn = client if client is not None else _client(kubeconfig, context)
    label = _label(kubeconfig, context) if client is None else context or "cluster"
    host = str(getattr(getattr(getattr(dyn, "client", None), "configuration", None), "host", "") or "?")
    namespace_default = _default_namespace(kubeconfig, context) if client is None else "default"
    errors: list[Finding] = []

    def report(doc: Document, path: Sequence[str | int], message: str) -> None:
        errors.append(doc_finding(doc, path, f"server: {message}"))

    for doc in documents:
        if not doc.api_version or not doc.kind:
            continue
        try:
            resource = dyn.resources.get(api_version=doc.api_version, kind=doc.kind)
        except ResourceNotFoundError:
            report(doc, ["apiVersion"], f"the server does not serve {doc.api_version} {doc.kind}")
            continue
        except ApiException as e:
            raise _refused(label, host, e) from e
        except ClusterError:
            raise
        except Exception as e:
            raise ClusterError(f"cluster {label} ({host}): API discovery failed: {cs.short_error(e)}") from e
        ns = (
            namespaces.effective(doc.namespace, namespace_default)
            if getattr(resource, "namespaced", False)
            else None
        )
        meta = doc.obj.get("metadata") or {}
        try:
            if isinstance(meta, dict) and meta.get("name"):
                dyn.server_side_apply(
                    resource,
                    body=doc.obj,
                    name=meta["name"],
                    namespace=ns,
                    field_manager=FIELD_MANAGER,
                    dry_run="All",
                    force_conflicts=True,
                )
            else:
                dyn.create(resource, body=doc.obj, namespace=ns, field_manager=FIELD_MANAGER, dry_run="All")
        except ApiException as e:
            message, causes = _status(e)
            if e.status == 401 or (e.status == 403 and _AUTHZ_DENIAL.search(message)):
                # about our access, not the object: the dry-run cannot decide
                raise _refused(label, host, e) from e
            if causes:
                for field, cause in causes:
                    report(doc, field_path(field), cause)
            else:
                report(doc, [], message)
        except ClusterError:
            raise
        except Exception as e:
            if cs.connection_error(e):
                raise ClusterError(f"cannot reach cluster {label} at {host}: {cs.short_error(e)}") from e
            report(doc, [], f"{type(e).__name__}: {e}")
    return errors


# A 403 from the authorizer (the apiserver's forbiddenMessage: 'User "x" cannot create resource ...'), as
# opposed to a 403 from admission (a ValidatingAdmissionPolicy or webhook denying the object: the dry-run's
# answer about the object, not about our access).
_AUTHZ_DENIAL = re.compile(r'\bUser "[^"]*" cannot ')


def _status(e: Any) -> tuple[str, list[tuple[str, str]]]:
    try:
        body = json.loads(e.body) if e.body else {}
    except (TypeError, ValueError):
        body = {}
    message = str(body.get("message") or e.reason or e)
    causes = []
    for c in (body.get("details") or {}).get("causes") or []:
        if isinstance(c, dict) and c.get("message"):
            causes.append((str(c.get("field") or ""), str(c["message"])))
    return message, causes
