"""The Helm chart (deploy/chart/kubedra) lints and renders with the testbed's helm; its ClusterRole is the shipped
deploy/kubedra-clusterrole.yaml (one source of truth), read-only, with no Secrets unless helmReleases.enabled;
the CronJob runs kubedra commands that kubedra's CLI accepts, non-root on a read-only root filesystem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from kubedra import cli
from kubedra.testing import binaries, chart
from kubedra.testing.require import unavailable

DEPLOY = chart.REPO / "deploy"


@pytest.fixture(autouse=True)
def _helm() -> None:
    if binaries.find("helm") is None:
        unavailable(f"testbed helm not built in {binaries.bin_dir()}: run `make testbed`")


def _shipped(name: str, kind: str = "ClusterRole") -> dict[str, Any]:
    docs = yaml.safe_load_all((DEPLOY / name).read_text())
    return next(d for d in docs if d and d["kind"] == kind)


def _of(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def _secret_rules(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        rule
        for o in objects
        if o["kind"] in ("ClusterRole", "Role")
        for rule in o["rules"]
        if "" in rule.get("apiGroups", []) and {"secrets", "*"} & set(rule.get("resources", []))
    ]


def _container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    pod = _of(objects, "CronJob")[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    container: dict[str, Any] = pod["containers"][0]
    return container


@pytest.mark.parametrize(
    "values", [[], ["--set", "helmReleases.enabled=true", "--set", "resultsConfigMap.enabled=true"]]
)
def test_lints_strict(values: list[str]) -> None:
    result = chart.lint(*values)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_default_is_the_shipped_read_only_role_without_secrets() -> None:
    objects = chart.render()
    assert sorted(o["kind"] for o in objects) == [
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "CronJob",
        "ServiceAccount",
    ]
    (role,) = _of(objects, "ClusterRole")
    assert role["rules"] == _shipped("kubedra-clusterrole.yaml")["rules"]
    verbs = {v for rule in role["rules"] for v in rule["verbs"]}
    assert verbs == {"get", "list"}
    assert _secret_rules(objects) == []
    (binding,) = _of(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kubedra", "namespace": "kubedra"}]
    audit = next(r for r in chart.runs(objects) if r["name"] == "audit")
    assert "--no-helm-releases" in audit["args"]


def test_helm_release_secrets_are_opt_in() -> None:
    objects = chart.render({"helmReleases.enabled": True})
    rules = _secret_rules(objects)
    assert (
        rules
        == _shipped("kubedra-helm-releases-clusterrole.yaml")["rules"]
        == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]
    )
    bound = {b["roleRef"]["name"] for b in _of(objects, "ClusterRoleBinding")}
    assert bound == {r["metadata"]["name"] for r in _of(objects, "ClusterRole")}
    audit = next(r for r in chart.runs(objects) if r["name"] == "audit")
    assert "--no-helm-releases" not in audit["args"]


def test_results_configmap_write_is_limited_to_that_configmap() -> None:
    assert not _of(chart.render(), "Role")
    objects = chart.render({"resultsConfigMap.enabled": True}, release="fleet")
    (role,) = _of(objects, "Role")
    assert role["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "resourceNames": ["fleet-kubedra-results"],
            "verbs": ["get", "patch"],
        }
    ]
    names = {o["metadata"]["name"] for o in _of(objects, "ConfigMap")}
    assert names == {"fleet-kubedra-results", "fleet-kubedra-runner"}
    env = {e["name"]: e.get("value") for e in _container(objects)["env"]}
    assert env["KUBEDRA_RESULTS_CONFIGMAP"] == "fleet-kubedra-results"


def test_runs_json_commands_kubedra_accepts() -> None:
    values = {"audit.targetVersion": "1.36", "verify.extraArgs": ["--allow-missing", "metrics"]}
    runs = chart.runs(chart.render(values))
    assert [r["name"] for r in runs] == ["audit", "verify"]
    for run in runs:
        args = run["args"]
        assert args[args.index("-o") + 1] == "json"
        # every flag exists and every value is valid: click parses the command line as kubedra would
        group = cli.cli
        with group.make_context("kubedra", list(args), resilient_parsing=False) as ctx:
            sub = group.get_command(ctx, args[0])
            assert isinstance(sub, click.Command)
            sub.make_context(args[0], list(args[1:]), parent=ctx)
    assert runs[0]["args"][:2] == ["audit", "--cluster"]
    assert "1.36" in runs[0]["args"]
    assert runs[1]["args"][-2:] == ["--allow-missing", "metrics"]
    assert [r["name"] for r in chart.runs(chart.render({"verify.enabled": False}))] == ["audit"]


def test_pod_runs_non_root_on_a_read_only_root_filesystem() -> None:
    objects = chart.render()
    pod = _of(objects, "CronJob")[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = _container(objects)
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]["memory"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts
    assert env["HOME"].startswith("/tmp")
    assert env["XDG_CACHE_HOME"].startswith("/tmp")


def test_runner_script_in_the_configmap_is_the_chart_file() -> None:
    objects = chart.render()
    runner = next(o for o in _of(objects, "ConfigMap") if o["metadata"]["name"].endswith("-runner"))
    assert runner["data"]["run.py"] == Path(chart.CHART / "files" / "run.py").read_text().rstrip("\n")
