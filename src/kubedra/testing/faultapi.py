"""A fake Kubernetes API server for the faults a real one cannot be made to produce: a request that stalls, a
body that drips in or never ends, a list whose ``continue`` token never ends, a gzip bomb.

Everything else about live clusters is tested against the real control plane (kubedra.testing.controlplane).
Plain HTTP on a loopback port; ``kubeconfig(path)`` writes a kubeconfig that points at it.

    with FaultAPI() as api:
        api.fault("/api/v1/pods", "stall")
        kubedra snapshot --kubeconfig api.kubeconfig(tmp / "kc") ...
"""

from __future__ import annotations

import json
import threading
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kubedra import vendors
from kubedra.k8s.versions import DEFAULT_TARGET, Version


def _gpu_resource() -> str:
    """The device plugin's whole-GPU resource on the generated nodes: the H100's vendor's."""
    vendor = vendors.for_model("H100-80GB")
    assert vendor is not None
    return vendor.gpu_resource


FAULTS = ("stall", "drip", "endless-continue", "repeated-continue", "huge", "gzip-bomb", "forbidden")

# What discovery serves: core v1 with pods and nodes, nothing else.
_CORE_RESOURCES = [
    {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["get", "list"]},
    {"name": "nodes", "namespaced": False, "kind": "Node", "verbs": ["get", "list"]},
    {"name": "events", "namespaced": True, "kind": "Event", "verbs": ["get", "list"]},
]


@dataclass
class FaultAPI:
    """The server; ``faults`` maps a path (or ``*``) to one of FAULTS; ``requests`` records (method, path)."""

    stall_seconds: float = 300.0
    nodes: int = 0  # Nodes served (generated, each ``node_bytes`` of labels), a ``limit`` per page
    node_bytes: int = 2000
    bomb_bytes: int = 64 << 20
    faults: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False, repr=False)

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def fault(self, path: str, kind: str) -> FaultAPI:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r} (have {', '.join(FAULTS)})")
        self.faults[path] = kind
        return self

    def kubeconfig(self, path: Path, name: str = "fault") -> Path:
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": name, "cluster": {"server": self.url}}],
                    "users": [{"name": name, "user": {"token": "t"}}],
                    "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
                    "current-context": name,
                }
            )
        )
        return path

    def start(self) -> FaultAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                api._handle(self)

            def do_POST(self) -> None:
                api._handle(self)

            def do_PATCH(self) -> None:
                api._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FaultAPI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving

    def _fault_for(self, path: str) -> str | None:
        return self.faults.get(path) or self.faults.get("*")

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        path = parts.path
        self.requests.append((h.command, path))
        length = int(h.headers.get("Content-Length") or 0)
        if length:
            h.rfile.read(length)
        fault = self._fault_for(path)
        if fault == "stall":
            self._stop.wait(self.stall_seconds)
            return
        if fault == "forbidden":
            self._send(
                h,
                403,
                {"kind": "Status", "code": 403, "message": f"forbidden: {path}", "reason": "Forbidden"},
            )
            return
        if fault == "drip":
            self._drip(h)
            return
        if fault == "huge":
            self._huge(h)
            return
        if fault == "gzip-bomb":
            self._gzip_bomb(h)
            return
        body = self._normal(path, parse_qs(parts.query), fault)
        if body is None:
            self._send(h, 404, {"kind": "Status", "code": 404, "message": "not found", "reason": "NotFound"})
        else:
            self._send(h, 200, body)

    def _normal(self, path: str, query: dict[str, list[str]], fault: str | None) -> Any:
        if path == "/version":
            v = Version.parse(DEFAULT_TARGET)
            return {"major": str(v.major), "minor": str(v.minor), "gitVersion": f"v{v}.0"}
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"]}
        if path == "/apis":
            return {"kind": "APIGroupList", "groups": []}
        if path == "/api/v1":
            return {"kind": "APIResourceList", "groupVersion": "v1", "resources": _CORE_RESOURCES}
        if path == "/metrics":
            return None
        for r in _CORE_RESOURCES:
            if path == f"/api/v1/{r['name']}" or (
                r["namespaced"] and path.startswith("/api/v1/namespaces/") and path.endswith(f"/{r['name']}")
            ):
                token = (query.get("continue") or [""])[0]
                meta: dict[str, Any] = {"resourceVersion": "1"}
                if fault == "endless-continue":
                    meta["continue"] = f"page-{int(token.split('-')[1]) + 1 if token else 1}"
                elif fault == "repeated-continue":
                    meta["continue"] = "same-token"
                items: list[dict[str, Any]] = []
                if r["name"] == "nodes" and self.nodes and not fault:
                    start = int(token or 0)
                    end = min(self.nodes, start + int((query.get("limit") or [str(self.nodes)])[0]))
                    items = [self.node(i) for i in range(start, end)]
                    if end < self.nodes:
                        meta["continue"] = str(end)
                return {"kind": f"{r['kind']}List", "apiVersion": "v1", "metadata": meta, "items": items}
        return None

    def node(self, i: int) -> dict[str, Any]:
        """The ``i``-th generated Node (as listed: without apiVersion/kind)."""
        pad = {f"example.com/label-{k}": f"{i:08d}-" + "x" * 80 for k in range(self.node_bytes // 120)}
        gpu = _gpu_resource()
        return {
            "metadata": {
                "name": f"node-{i:06d}",
                "labels": {"kubernetes.io/hostname": f"node-{i:06d}", **pad},
            },
            "status": {
                "capacity": {"cpu": "64", "memory": "512Gi", gpu: "8"},
                "allocatable": {"cpu": "63", "memory": "500Gi", gpu: "8"},
            },
        }

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _drip(self, h: BaseHTTPRequestHandler) -> None:
        """A valid start of a list, one byte a second, for as long as the client listens."""
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        try:
            h.wfile.write(b'{"kind": "PodList", "items": [')
            while not self._stop.wait(0.5):
                h.wfile.write(b" ")
                h.wfile.flush()
        except OSError:
            return

    def _huge(self, h: BaseHTTPRequestHandler) -> None:
        """An endless body (chunk after chunk of whitespace inside a list)."""
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        chunk = b" " * (1 << 20)
        try:
            h.wfile.write(b'{"kind": "PodList", "items": [')
            while not self._stop.is_set():
                h.wfile.write(chunk)
        except OSError:
            return

    def _gzip_bomb(self, h: BaseHTTPRequestHandler) -> None:
        """``bomb_bytes`` of JSON whitespace that travel as about a thousandth of that in gzip."""
        data = gzip_bomb(self.bomb_bytes)
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Encoding", "gzip")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        try:
            h.wfile.write(data)
        except OSError:
            return


def gzip_bomb(size: int) -> bytes:
    """``size`` bytes of JSON whitespace inside a list start, gzip-compressed (about 1000:1)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: the gzip container
    out = [c.compress(b'{"kind": "PodList", "items": [')]
    block = b" " * (1 << 20)
    for _ in range(max(1, size >> 20)):
        out.append(c.compress(block))
    out.append(c.flush())
    return b"".join(out)
