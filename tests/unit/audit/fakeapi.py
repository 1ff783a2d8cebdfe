"""A tiny in-process Kubernetes API (discovery, paginated lists, /metrics, 403s) for fast live-audit tests.

It answers only GETs, like the audit needs, and checks the bearer token of each request. The real
control plane from the testbed covers the same paths in tests/integration/audit.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

# (group, version, resource, kind, namespaced)
RESOURCES = [
    ("", "v1", "nodes", "Node", False),
    ("", "v1", "pods", "Pod", True),
    ("", "v1", "configmaps", "ConfigMap", True),
    ("", "v1", "secrets", "Secret", True),
    ("apps", "v1", "deployments", "Deployment", True),
    ("apps", "v1", "daemonsets", "DaemonSet", True),
    ("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    ("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
    ("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", True),
    ("example.com", "v1", "widgets", "Widget", True),
]


@dataclass
class FakeAPI:
    version: str = "v1.36.2"
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # resource -> objects
    forbidden: dict[str, set[str]] = field(default_factory=dict)  # token -> resources (or "/metrics")
    metrics: str = ""
    tokens: set[str] = field(default_factory=lambda: {"admin", "viewer"})
    page_size_seen: list[int] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def add(self, resource: str, *objs: dict[str, Any]) -> None:
        self.objects.setdefault(resource, []).extend(objs)


def _groups() -> dict[str, list[tuple[str, str, str, bool]]]:
    out: dict[str, list[tuple[str, str, str, bool]]] = {}
    for g, v, r, k, ns in RESOURCES:
        out.setdefault(f"{g}/{v}" if g else v, []).append((r, k, g, ns))
    return out


def _handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a: Any) -> None:
            pass

        def _send(self, code: int, body: Any, ctype: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _status(self, code: int, msg: str) -> None:
            self._send(
                code,
                {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": msg, "code": code},
            )

        def do_GET(self) -> None:
            url = urlparse(self.path)
            q = parse_qs(url.query)
            api.requests.append(self.path)
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            if token not in api.tokens:
                return self._status(401, "Unauthorized")
            denied = api.forbidden.get(token, set())
            path = url.path
            if path == "/version":
                major, minor = api.version.lstrip("v").split(".")[:2]
                return self._send(200, {"major": major, "minor": minor, "gitVersion": api.version})
            if path == "/metrics":
                if "/metrics" in denied:
                    return self._status(403, 'forbidden: User "viewer" cannot get path "/metrics"')
                return self._send(200, api.metrics.encode(), "text/plain")
            if path == "/api":
                return self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
            if path == "/apis":
                groups = sorted({g for g, *_ in RESOURCES if g})
                return self._send(
                    200,
                    {
                        "kind": "APIGroupList",
                        "groups": [
                            {
                                "name": g,
                                "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
                                "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"},
                            }
                            for g in groups
                        ],
                    },
                )
            parts = path.strip("/").split("/")
            gv = parts[1] if parts[0] == "api" else "/".join(parts[1:3])
            rest = parts[2:] if parts[0] == "api" else parts[3:]
            known = _groups().get(gv)
            if known is None:
                return self._status(404, "not found")
            if not rest:
                return self._send(
                    200,
                    {
                        "kind": "APIResourceList",
                        "groupVersion": gv,
                        "resources": [
                            {"name": r, "kind": k, "namespaced": ns, "verbs": ["get", "list", "watch"]}
                            for r, k, _, ns in known
                        ]
                        + [
                            {"name": f"{r}/status", "kind": k, "namespaced": ns, "verbs": ["get"]}
                            for r, k, _, ns in known
                        ],
                    },
                )
            resource = rest[0]
            kind = next((k for r, k, _, _ in known if r == resource), None)
            if kind is None:
                return self._status(404, "not found")
            if resource in denied:
                return self._status(
                    403, f'{resource} is forbidden: User "viewer" cannot list resource "{resource}"'
                )
            items = list(api.objects.get(resource, []))
            for sel in q.get("labelSelector", []):
                k, _, v = sel.partition("=")
                items = [o for o in items if (o.get("metadata", {}).get("labels") or {}).get(k) == v]
            for sel in q.get("fieldSelector", []):
                k, _, v = sel.partition("=")
                if k == "type":
                    items = [o for o in items if o.get("type") == v]
            limit = int(q.get("limit", ["0"])[0] or 0)
            api.page_size_seen.append(limit)
            start = int(q.get("continue", ["0"])[0] or 0)
            page = items[start : start + limit] if limit else items[start:]
            nxt = start + len(page)
            meta = {"continue": str(nxt)} if limit and nxt < len(items) else {}
            # list items carry no apiVersion/kind, like the real apiserver
            stripped = [{k2: v2 for k2, v2 in o.items() if k2 not in ("apiVersion", "kind")} for o in page]
            return self._send(
                200, {"kind": f"{kind}List", "apiVersion": gv, "metadata": meta, "items": stripped}
            )

    return H


@contextmanager
def serve(api: FakeAPI) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def kubeconfig(path: Path, clusters: dict[str, tuple[str, str]], current: str | None = None) -> Path:
    """Write a kubeconfig: context name -> (server URL, bearer token)."""
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": []}
    for name, (server, token) in clusters.items():
        doc["clusters"].append({"name": name, "cluster": {"server": server}})
        doc["users"].append({"name": name, "user": {"token": token}})
        doc["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    doc["current-context"] = current or next(iter(clusters))
    path.write_text(json.dumps(doc))
    return path
