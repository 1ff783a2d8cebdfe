"""Exec credential plugins (kubeconfig ``users[].user.exec``) run within --request-timeout and --deadline: a
plugin that hangs is stopped, with everything it started, and the command exits 2 with one line naming it
(before, kubedra waited for ever). No cluster is needed: the plugin runs before any request."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from kubedra.errors import ClusterError
from kubedra.sources import cluster
from kubedra.sources.limits import limits
from kubedra.testing.cli import run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="shell-script plugins")


def _kubeconfig(tmp: Path, script: str) -> tuple[Path, Path]:
    plugin = tmp / "plugin with space.sh"
    plugin.write_text("#!/bin/sh\n" + script)
    plugin.chmod(0o755)
    kc = tmp / "kubeconfig"
    kc.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
                "users": [
                    {
                        "name": "u",
                        "user": {
                            "exec": {
                                "apiVersion": "client.authentication.k8s.io/v1",
                                "command": str(plugin),
                                "interactiveMode": "Never",
                            }
                        },
                    }
                ],
            }
        )
    )
    return kc, plugin


def _hangs(tmp: Path) -> str:
    """A plugin that starts a child (which holds its stdout) and waits for it: the child's pid is written."""
    return f"sleep 300 &\necho $! > '{tmp / 'child.pid'}'\nwait\n"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_hanging_plugin_is_stopped_within_the_request_timeout(tmp_path: Path) -> None:
    kc, plugin = _kubeconfig(tmp_path, _hangs(tmp_path))
    t0 = time.monotonic()
    with limits(request_timeout=0.5), pytest.raises(ClusterError) as e:
        cluster.api_client(str(kc), None)
    assert time.monotonic() - t0 < 8
    assert str(plugin) in e.value.message
    assert "0.5 s" in e.value.message
    child = int((tmp_path / "child.pid").read_text())
    for _ in range(50):  # the whole process group was killed, the child too
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    kc, plugin = _kubeconfig(tmp_path, _hangs(tmp_path))
    t0 = time.monotonic()
    r = run("audit", "--kubeconfig", str(kc), "--request-timeout", "1")
    assert r.exit_code == 2
    assert time.monotonic() - t0 < 10
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(
        f"kubedra: error: exec credential plugin '{plugin}' gave no credentials within 1 s"
    )


def test_the_deadline_bounds_it_too(tmp_path: Path) -> None:
    kc, plugin = _kubeconfig(tmp_path, _hangs(tmp_path))
    t0 = time.monotonic()
    r = run("snapshot", "--kubeconfig", str(kc), "-o", str(tmp_path / "s.yaml"), "--deadline", "1")
    assert r.exit_code == 2, r.stderr
    assert time.monotonic() - t0 < 10, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert str(plugin) in r.stderr


def test_a_plugin_that_answers_still_gives_its_token(tmp_path: Path) -> None:
    answer = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "tok-123"},
    }
    kc, _ = _kubeconfig(tmp_path, f"echo '{json.dumps(answer)}'\n")
    with limits(request_timeout=5):
        api = cluster.api_client(str(kc), None)
    assert "Bearer tok-123" in api.configuration.api_key.values()


def test_a_plugin_runs_with_the_clients_environment(tmp_path: Path) -> None:
    """KUBERNETES_EXEC_INFO is set (test_exec_credential checks its content), by kubedra's provider."""
    out = tmp_path / "info.json"
    answer = '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'
    kc, _ = _kubeconfig(tmp_path, f"printf '%s' \"$KUBERNETES_EXEC_INFO\" > '{out}'\necho '{answer}'\n")
    with limits(request_timeout=5):
        cluster.api_client(str(kc), None)
    assert json.loads(out.read_text())["kind"] == "ExecCredential"
    assert sys.modules["kubernetes.config.kube_config"].ExecProvider.__name__ == "CheckedExecProvider"


def test_a_plugin_that_hangs_when_its_expired_token_is_renewed(tmp_path: Path) -> None:
    """The client runs the plugin again inside a request once its token has expired: bounded there too, and
    the request fails with the same one-line ClusterError (not a traceback, not an unauthenticated request)."""
    marker = tmp_path / "answered"
    answer = json.dumps(
        {
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": {"token": "old", "expirationTimestamp": "2000-01-01T00:00:00Z"},
        }
    )
    script = f"if [ -e '{marker}' ]; then {_hangs(tmp_path)}fi\ntouch '{marker}'\necho '{answer}'\n"
    kc, plugin = _kubeconfig(tmp_path, script)
    with limits(request_timeout=0.5):
        client = cluster.Client(str(kc), None)
        t0 = time.monotonic()
        with pytest.raises(ClusterError) as e:
            client.get_raw("/version")
    assert time.monotonic() - t0 < 8
    assert str(plugin) in e.value.message
