"""Finding credentials without an apiserver: no kubeconfig and no in-cluster config, malformed kubeconfigs,
and a server dry-run against a stalled server (kubedra.testing.faultapi). Each is one line on stderr, exit 2,
bounded in time. The in-cluster config itself is tested against the real apiserver
(tests/integration/test_cluster_access_live.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kubedra.testing.faultapi import FaultAPI

from .helpers import run

MALFORMED = {
    "not yaml": "apiVersion: v1\nkind: Config\nclusters: [\n",
    "a list": "- 1\n- 2\n",
    "a scalar": "hello\n",
    "contexts not a list": "apiVersion: v1\nkind: Config\ncontexts: 3\ncurrent-context: x\n",
    "context without cluster": (
        "apiVersion: v1\nkind: Config\ncontexts:\n- name: x\n  context: {user: u}\n"
        "users:\n- name: u\n  user: {token: t}\ncurrent-context: x\n"
    ),
    "binary": "\x00\x01\x02",
}


@pytest.fixture
def no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("KUBEDRA_SERVICE_ACCOUNT_DIR", str(tmp_path / "sa"))
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ("verify",),
        ("snapshot", "-o", "x.yaml"),
        ("audit", "--cluster"),
        ("validate", "--server-dry-run", "-f", "cm.yaml"),
    ],
)
def test_neither_kubeconfig_nor_in_cluster(
    no_credentials: Path, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(no_credentials)
    (no_credentials / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    res = run(*args)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1, res.stderr
    assert "tried a kubeconfig" in res.stderr
    assert "in-cluster ServiceAccount config" in res.stderr
    assert "KUBERNETES_SERVICE_HOST/PORT not set" in res.stderr


def test_in_cluster_env_without_a_token(no_credentials: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    res = run("verify")
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1
    assert f"no ServiceAccount token at {no_credentials / 'sa' / 'token'}" in res.stderr


@pytest.mark.parametrize("case", sorted(MALFORMED))
@pytest.mark.parametrize("verb", ["verify", "snapshot", "audit", "validate"])
def test_malformed_kubeconfig_is_one_line(tmp_path: Path, case: str, verb: str) -> None:
    kc = tmp_path / "kc"
    kc.write_text(MALFORMED[case])
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    args = {
        "verify": ("verify",),
        "snapshot": ("snapshot", "-o", str(tmp_path / "s.yaml")),
        "audit": ("audit", "--cluster"),
        "validate": ("validate", "--server-dry-run", str(tmp_path / "cm.yaml")),
    }[verb]
    res = run(*args, "--kubeconfig", str(kc))
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"kubedra: error: kubeconfig {kc}: "), res.stderr
    assert not (tmp_path / "s.yaml").exists()


def test_server_dry_run_on_a_stalled_server_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cm = tmp_path / "cm.yaml"
    cm.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n")
    with FaultAPI(stall_seconds=60) as api:
        api.fault("*", "stall")
        kc = api.kubeconfig(tmp_path / "kc")
        started = time.monotonic()
        res = run("validate", "--server-dry-run", "--kubeconfig", str(kc), "--request-timeout", "2", str(cm))
        took = time.monotonic() - started
    assert res.exit_code == 2, (took, res.output)
    assert took < 15, (took, res.output)
    assert res.stderr.count("\n") == 1
    assert res.stderr.startswith("kubedra: error: cannot reach cluster fault at http://")
