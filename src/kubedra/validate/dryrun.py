"""Server-side dry-run: the apiserver itself judges every object (nothing is persisted).

Each object goes through server-side apply with ``dryRun=All`` and field manager ``kubedra`` (objects
with only ``generateName`` are dry-run created instead). The server's own message, and the field of
each cause it lists, are reported with the file:line of that field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from kubedra.errors import ClusterError
from kubedra.k8s.workloads import dotted
from kubedra.sources.files import Document
from kubedra.validate.engine import ValidationError

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
    try:
        from kubernetes import config, dynamic
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise ClusterError("the kubernetes package is not installed") from e
    try:
        api = config.new_client_from_config(config_file=kubeconfig, context=context)
        return dynamic.DynamicClient(api)
    except Exception as e:
        raise ClusterError(f"cannot connect to cluster {context or '(current context)'}: {e}") from e


def _default_namespace(kubeconfig: str | None, context: str | None) -> str:
    try:
        from kubernetes import config

        contexts, current = config.list_kube_config_contexts(config_file=kubeconfig)
        chosen = next((c for c in contexts if c["name"] == context), current) if context else current
        return str((chosen or {}).get("context", {}).get("namespace") or "default")
    except Exception:
        return "default"


def dry_run(
    documents: Sequence[Document],
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    client: Any = None,
) -> list[ValidationError]:
    """Dry-run every document on the cluster; returns the server's rejections."""
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import ResourceNotFoundError

    dyn = client if client is not None else _client(kubeconfig, context)
    namespace_default = _default_namespace(kubeconfig, context) if client is None else "default"
    errors: list[ValidationError] = []

    def report(doc: Document, path: Sequence[str | int], message: str) -> None:
        errors.append(
            ValidationError(
                file=doc.file,
                line=doc.line_of(list(path)),
                api_version=doc.api_version,
                kind=doc.kind,
                namespace=doc.namespace,
                name=doc.name,
                path=dotted(tuple(path)),
                message=f"server: {message}",
            )
        )

    for doc in documents:
        if not doc.api_version or not doc.kind:
            continue
        try:
            resource = dyn.resources.get(api_version=doc.api_version, kind=doc.kind)
        except ResourceNotFoundError:
            report(doc, ["apiVersion"], f"the server does not serve {doc.api_version} {doc.kind}")
            continue
        except Exception as e:
            raise ClusterError(f"API discovery failed: {e}") from e
        ns = (doc.namespace or namespace_default) if getattr(resource, "namespaced", False) else None
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
            if causes:
                for field, cause in causes:
                    report(doc, field_path(field), cause)
            else:
                report(doc, [], message)
        except Exception as e:
            if e.__class__.__name__ in ("MaxRetryError", "NewConnectionError", "ConnectionError"):
                raise ClusterError(f"cluster unreachable: {e}") from e
            report(doc, [], f"{type(e).__name__}: {e}")
    return errors


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
