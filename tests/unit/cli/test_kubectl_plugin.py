"""``kubectl-dra``, the kubectl plugin entry point the wheel installs: kubectl passes the arguments after
``dra`` unchanged; the plugin audits the current context when given no input, looks up pods in the context's
namespace as kubectl does, and refuses -n on verbs that read every namespace."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from kubedra import kubectl_plugin
from kubedra.kubectl_plugin import translate

REPO = Path(__file__).resolve().parents[3]


@click.command(
    add_help_option=False, context_settings={"ignore_unknown_options": True, "allow_extra_args": True}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    kubectl_plugin.main(list(ctx.args))


def run(*args: str) -> Result:
    return CliRunner().invoke(_entry, list(args), catch_exceptions=False)


def _kubeconfig(tmp: Path) -> Path:
    """Two contexts on a closed loopback port: ``ml`` (namespace ml, current) and ``bare`` (no namespace)."""
    path = tmp / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [
                    {"name": "ml", "context": {"cluster": "c", "user": "u", "namespace": "ml"}},
                    {"name": "bare", "context": {"cluster": "c", "user": "u"}},
                ],
                "current-context": "ml",
            }
        )
    )
    return path


def test_the_wheel_installs_kubectl_dra() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl-dra"] == "kubedra.kubectl_plugin:main"
    module, _, name = scripts["kubectl-dra"].partition(":")
    assert getattr(__import__(module, fromlist=[name]), name) is kubectl_plugin.main


def test_help_names_the_plugin() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-c", "from kubedra.kubectl_plugin import main; main()", "audit", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: kubectl dra audit [OPTIONS]")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["audit"], ["audit", "--cluster"]),
        (["audit", "-o", "json"], ["audit", "--cluster", "-o", "json"]),
        (["audit", "--target-version", "1.36"], ["audit", "--cluster", "--target-version", "1.36"]),
        (["audit", "--context", "prod"], ["audit", "--context", "prod"]),
        (["audit", "--all-contexts"], ["audit", "--all-contexts"]),
        (["audit", "manifests/"], ["audit", "manifests/"]),
        (["audit", "-f", "x.yaml"], ["audit", "-f", "x.yaml"]),
        (["verify", "--context", "prod"], ["verify", "--context", "prod"]),
        (["explain", "pod/x", "-n", "team"], ["explain", "pod/x", "-n", "team"]),
        (["--version"], ["--version"]),
        ([], []),
    ],
)
def test_arguments(
    args: list[str], expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))  # explain finds no context namespace
    assert translate(args) == expected


def test_explain_uses_the_namespace_of_the_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _kubeconfig(tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(config))
    assert translate(["explain", "pod/x"]) == ["explain", "pod/x", "--namespace", "ml"]
    assert translate(["explain", "pod/x", "--context", "bare"]) == ["explain", "pod/x", "--context", "bare"]
    assert translate(["explain", "pod/x", "--namespace=team"]) == ["explain", "pod/x", "--namespace=team"]
    monkeypatch.delenv("KUBECONFIG")
    assert translate(["explain", "pod/x", "--kubeconfig", str(config)]) == [
        "explain",
        "pod/x",
        "--kubeconfig",
        str(config),
        "--namespace",
        "ml",
    ]


def test_namespace_on_a_cluster_wide_verb_is_refused(tmp_path: Path) -> None:
    res = run("audit", "-n", "ml", "--kubeconfig", str(_kubeconfig(tmp_path)))
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "kubedra: error: kubectl dra audit: -n/--namespace is not an option of audit: it reads every namespace"
        " (choose the cluster with --context)"
    ]


def test_audit_without_input_reads_the_current_context(tmp_path: Path) -> None:
    res = run("audit", "--kubeconfig", str(_kubeconfig(tmp_path)), "--request-timeout", "2", "-o", "json")
    assert res.exit_code == 2
    assert "nothing to audit" not in res.stderr
    assert "ml" in res.stderr, res.stderr
    assert "127.0.0.1:9" in res.stderr, res.stderr


def test_krew_manifest_template_names_the_installed_executable() -> None:
    manifest = yaml.safe_load((REPO / "deploy" / "krew" / "dra.yaml").read_text())
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "dra"
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert {p["bin"] for p in manifest["spec"]["platforms"]} == {"kubectl-dra"} <= set(scripts)
