"""``kubedra audit`` on clusters, for what needs no API server: a cluster nobody answers for (a closed
loopback port) and kubeconfig problems. Everything an apiserver answers is tested against the testbed's
real control plane in tests/integration/audit/test_audit_live_cluster.py."""

from __future__ import annotations

import socket
from pathlib import Path

import yaml

from .helpers import run


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


def _kubeconfig(path: Path, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "down", "cluster": {"server": server}}],
                "users": [{"name": "down", "user": {"token": "t"}}],
                "contexts": [{"name": "down", "context": {"cluster": "down", "user": "down"}}],
                "current-context": "down",
            }
        )
    )
    return path


def test_unreachable_single_cluster_is_one_line_exit_2(tmp_path: Path) -> None:
    kc = _kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{_closed_port()}")
    r = run("audit", "--kubeconfig", str(kc), "--cluster", "--timeout", "2", "-o", "json")
    assert r.exit_code == 2
    assert r.stderr.startswith("kubedra: error: cannot reach cluster down at http://127.0.0.1:")
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_unknown_context_and_missing_kubeconfig(tmp_path: Path) -> None:
    kc = _kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{_closed_port()}")
    r = run("audit", "--kubeconfig", str(kc), "--context", "nope")
    assert r.exit_code == 2
    assert r.stderr == "kubedra: error: no context 'nope' in the kubeconfig (have: down)\n"
    r = run("audit", "--kubeconfig", str(tmp_path / "missing"), "--cluster")
    assert r.exit_code == 2
    assert r.stderr.startswith("kubedra: error: kubeconfig ")
    assert len(r.stderr.strip().splitlines()) == 1
