"""How kubedra authenticates to the testbed's real apiserver, and how it says it could not.

- In-cluster config: no kubeconfig anywhere, ``KUBERNETES_SERVICE_HOST/PORT`` set and a real ServiceAccount
  token (TokenRequest for an SA bound to the shipped core ClusterRole) in a temp dir standing in for
  /var/run/secrets/kubernetes.io/serviceaccount: every live verb reads the cluster as ``in-cluster``.
- ``validate --server-dry-run`` with credentials the server refuses (401) or RBAC that forbids the dry-run
  write (403): one line naming the cause, exit 2 (it printed 15 lines saying "cannot connect").
- The dry-run's discovery cache is written to a per-user 0700 dir, not world-readable into the temp dir.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers import Objects, bind_core_role, token_kubeconfig, user_kubeconfig

from kubedra.testing.controlplane import ControlPlane

pytestmark = pytest.mark.integration

PREFIX = f"access-it-{uuid.uuid4().hex[:6]}"
NS = PREFIX
SA = "kubedra"
CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "x", "namespace": NS},
    "data": {"a": "b"},
}


@pytest.fixture(scope="module")
def world(controlplane: ControlPlane) -> Iterator[ControlPlane]:
    objects = Objects(controlplane.api)
    try:
        objects.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        objects.add({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA, "namespace": NS}})
        bind_core_role(objects, PREFIX, NS, SA)
        yield controlplane
    finally:
        objects.cleanup()


def _token(cp: ControlPlane) -> str:
    req = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    return str(
        cp.api.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/{SA}/token", req)["status"]["token"]
    )


def _kubedra(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubedra", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def _clean_env(home: Path) -> dict[str, str]:
    """This process's environment without any kubeconfig: HOME is an empty dir, KUBECONFIG unset."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
    }
    env["HOME"] = str(home)
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    return env


@pytest.fixture
def in_cluster(world: ControlPlane, tmp_path: Path) -> dict[str, str]:
    sa_dir = tmp_path / "serviceaccount"
    sa_dir.mkdir()
    (sa_dir / "token").write_text(_token(world))
    (sa_dir / "ca.crt").write_bytes((world.certs / "ca.crt").read_bytes())
    (sa_dir / "namespace").write_text(NS)
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home)
    host, port = world.url.removeprefix("https://").rsplit(":", 1)
    env.update(
        KUBERNETES_SERVICE_HOST=host, KUBERNETES_SERVICE_PORT=port, KUBEDRA_SERVICE_ACCOUNT_DIR=str(sa_dir)
    )
    return env


def test_every_live_verb_uses_in_cluster_config(in_cluster: dict[str, str], tmp_path: Path) -> None:
    res = _kubedra(in_cluster, "verify", "-o", "json")
    assert res.returncode in (0, 1), res.stderr
    data = json.loads(res.stdout)
    assert data["cluster"] == "in-cluster"
    assert data["incomplete"] == []

    snap = tmp_path / "in-cluster.yaml"
    res = _kubedra(in_cluster, "snapshot", "-o", str(snap), "--no-helm-releases")
    assert res.returncode == 0, res.stderr
    header = yaml.safe_load(snap.read_text())["kubedra"]
    assert header["cluster"] == "in-cluster"
    assert header["notInspected"] == []

    res = _kubedra(in_cluster, "audit", "--cluster", "--no-helm-releases", "-o", "json")
    assert res.returncode in (0, 1), res.stderr
    assert json.loads(res.stdout)["summary"]["clusters"] == ["in-cluster"]

    # the core role may read, not write: the dry-run write is forbidden, said on one line
    cm = tmp_path / "cm.yaml"
    cm.write_text(yaml.safe_dump(CONFIGMAP))
    res = _kubedra(in_cluster, "validate", "--server-dry-run", str(cm))
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert res.stderr.startswith("kubedra: error: cluster in-cluster (https://")
    assert ": forbidden: " in res.stderr


def test_in_cluster_without_a_token_says_both_were_tried(in_cluster: dict[str, str], tmp_path: Path) -> None:
    env = {**in_cluster, "KUBEDRA_SERVICE_ACCOUNT_DIR": str(tmp_path / "nothing-here")}
    res = _kubedra(env, "verify")
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1
    assert "kubeconfig" in res.stderr
    assert "in-cluster" in res.stderr
    assert "no ServiceAccount token" in res.stderr


def test_dry_run_with_refused_credentials_is_one_line(world: ControlPlane, tmp_path: Path) -> None:
    kc = token_kubeconfig(world, tmp_path / "wrong.kubeconfig", "not-a-valid-token", "prod")
    cm = tmp_path / "cm.yaml"
    cm.write_text(yaml.safe_dump(CONFIGMAP))
    home = tmp_path / "home"
    home.mkdir()
    res = _kubedra(_clean_env(home), "validate", "--server-dry-run", "--kubeconfig", str(kc), str(cm))
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == f"kubedra: error: cluster prod ({world.url}): unauthorised: Unauthorized\n"


def test_dry_run_discovery_cache_is_private(world: ControlPlane, tmp_path: Path) -> None:
    cm = tmp_path / "cm.yaml"
    cm.write_text(yaml.safe_dump(CONFIGMAP))
    home = tmp_path / "home"
    home.mkdir()
    before = set(Path(tempfile.gettempdir()).glob("osrcp-*.json"))
    res = _kubedra(
        _clean_env(home), "validate", "--server-dry-run", "--kubeconfig", str(world.kubeconfig), str(cm)
    )
    assert res.returncode == 0, res.stderr
    cache = home / ".cache" / "kubedra" / "discovery"
    assert [p.suffix for p in cache.iterdir()] == [".json"]
    assert cache.stat().st_mode & 0o777 == 0o700
    assert set(Path(tempfile.gettempdir()).glob("osrcp-*.json")) == before


def _exec_kubeconfig(cp: ControlPlane, tmp: Path, status: dict[str, str] | None) -> tuple[Path, Path]:
    """A kubeconfig whose user is an exec credential plugin printing an ExecCredential with ``status``."""
    answer = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential"}
    if status is not None:
        answer["status"] = status  # type: ignore[assignment]
    (tmp / "answer.json").write_text(json.dumps(answer))
    plugin = tmp / "credential plugin.sh"
    plugin.write_text(f"#!/bin/sh\ncat '{tmp / 'answer.json'}'\n")
    plugin.chmod(0o755)
    exec_config = {"apiVersion": answer["apiVersion"], "command": str(plugin), "interactiveMode": "Never"}
    kc = user_kubeconfig(cp, tmp / "exec.kubeconfig", {"exec": exec_config}, "plugin")
    return kc, plugin


def test_an_exec_plugin_certificate_reads_and_a_bad_answer_stops(world: ControlPlane, tmp_path: Path) -> None:
    """The real apiserver takes the admin certificate and key an exec plugin prints; a plugin whose answer
    has no usable credentials (the Python client went on without any: an anonymous read) is one line, exit 2,
    nothing written."""
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(home)
    cert, key = (world.certs / "admin.crt").read_text(), (world.certs / "admin.key").read_text()
    kc, _ = _exec_kubeconfig(world, tmp_path, {"clientCertificateData": cert, "clientKeyData": key})
    snap = tmp_path / "snap.yaml"
    res = _kubedra(env, "snapshot", "--kubeconfig", str(kc), "-o", str(snap), "--no-helm-releases")
    assert res.returncode == 0, res.stderr
    assert yaml.safe_load(snap.read_text())["kubedra"]["notInspected"] == []
    snap.unlink()

    for status, problem in [
        (None, "returned no status (client-go: exec plugin didn't return a status field)"),
        ({"clientCertificateData": cert}, "returned a client certificate without its key"),
    ]:
        kc, plugin = _exec_kubeconfig(world, tmp_path, status)
        res = _kubedra(env, "snapshot", "--kubeconfig", str(kc), "-o", str(snap), "--no-helm-releases")
        assert res.returncode == 2, res.stderr
        assert res.stdout == "", res.stderr
        assert not snap.exists(), res.stderr
        assert res.stderr == f"kubedra: error: exec credential plugin '{plugin}' {problem}\n"
        res = _kubedra(env, "verify", "--kubeconfig", str(kc), "-o", "json")
        assert res.returncode == 2, res.stderr
        assert res.stdout == "", res.stderr
        assert res.stderr == f"kubedra: error: exec credential plugin '{plugin}' {problem}\n"
