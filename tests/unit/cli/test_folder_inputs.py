"""What every manifest-reading verb does with a folder: kubectl's files (``.yaml``, ``.yml``, ``.json``) are
read, files that hold no objects (``.txt``, ``.md``, no extension) are skipped like kubectl skips them, and
what holds objects kubedra cannot read yet (a Helm ``.tpl`` template, a Helm chart folder) is named, with the
command that renders it, and changes the exit code."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest
from tests.unit.cli.helpers import run

from kubedra.errors import InputError
from kubedra.sources import files, reading

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers:
  - name: c
    image: x
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
TEMPLATE = """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Values.name }}
spec:
  containers:
  - name: c
    image: x
    resources: {limits: {nvidia.com/gpu: {{ .Values.gpus }}}}
"""
# an unquoted ``{{ x }}`` value is valid YAML (a flow mapping as a key): it was reported as
# "unsupported map key of type dict" instead of as a template
CHART_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "x" . }}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits:
            nvidia.com/gpu: {{ .Values.gpus }}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "in dir"  # a space: the printed commands quote it
    (d / "chart" / "templates").mkdir(parents=True)
    (d / "pod.yaml").write_text(POD.format(name="a"))
    (d / "pod.yml").write_text(POD.format(name="b"))
    (d / "cm.json").write_text('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}')
    (d / "helpers.tpl").write_text(TEMPLATE)
    (d / "notes.txt").write_text(POD.format(name="txt"))  # kubectl skips it whatever it holds
    (d / "README.md").write_text("# readme\n")
    (d / "noext").write_text(POD.format(name="noext"))
    (d / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: mychart\nversion: 0.1.0\n")
    (d / "chart" / "values.yaml").write_text("gpus: 1\n")
    (d / "chart" / "templates" / "deploy.yaml").write_text(CHART_TEMPLATE)
    (d / "chart" / "templates" / "_helpers.tpl").write_text(TEMPLATE)
    return d


def test_the_walk_takes_manifests_templates_and_a_chart_whole(folder: Path) -> None:
    got = [Path(p).relative_to(folder).as_posix() for p in files.iter_manifest_files([str(folder)])]
    assert got == ["cm.json", "helpers.tpl", "pod.yaml", "pod.yml", "chart"]
    # a chart named itself is one input too
    assert list(files.iter_manifest_files([str(folder / "chart")])) == [str(folder / "chart")]


def test_reading_a_chart_folder_says_it_is_a_chart(folder: Path) -> None:
    with pytest.raises(files.TemplateInput) as e:
        files.read_text(str(folder / "chart"))
    assert e.value.chart == str(folder / "chart")
    assert "a Helm chart (Chart.yaml), not read" in e.value.message
    # a folder that is not a chart is still "a folder"
    with pytest.raises(InputError, match="is a folder, not a file"):
        files.read_text(str(folder))


def _chart_command(folder: Path, verb: str) -> str:
    chart = shlex.quote(str(folder / "chart"))
    if verb == "audit":
        return f"`kubedra audit --helm-chart {chart}`"
    return f"`helm template {chart} | kubedra {verb} -f -`"


def test_audit_names_the_template_and_the_chart_and_exits_2(folder: Path) -> None:
    r = run("audit", str(folder), "-o", "json")
    assert r.exit_code == 2, r.stderr
    data = json.loads(r.stdout)
    found = {(f["rule"], Path(f["source"]["file"]).name): f["message"] for f in data["findings"]}
    assert ("input.helm-template", "helpers.tpl") in found
    assert _chart_command(folder, "audit") in found[("input.helm-template", "chart")]
    assert not [f for f in data["findings"] if f["rule"] == "input.malformed"]
    assert data["summary"]["filesScanned"] == 5  # cm.json, helpers.tpl, pod.yaml, pod.yml, the chart
    assert data["summary"]["objectsScanned"] == 3
    assert "2 inputs could not be read" in r.stderr


def test_validate_lists_them_as_unreadable_and_exits_2(folder: Path) -> None:
    r = run("validate", str(folder), "-o", "json")
    assert r.exit_code == 2, r.stderr
    data = json.loads(r.stdout)
    assert data["objects"] == 3
    assert not data["errors"]
    unread = {Path(u["source"]["file"]).name: u["message"] for u in data["unreadable"]}
    assert set(unread) == {"helpers.tpl", "chart"}
    assert unread["helpers.tpl"].startswith("a Helm template")
    assert _chart_command(folder, "validate") in unread["chart"]


def test_migrate_makes_them_manual_items_and_exits_1(folder: Path) -> None:
    r = run("migrate", str(folder), "-o", "json")
    assert r.exit_code == 1, r.stderr
    data = json.loads(r.stdout)
    manual = {
        (Path(f["source"]["file"]).name, f["message"].split(":")[0])
        for file in data["files"]
        for f in file["findings"]
        if f["level"] == "manual"
    }
    assert ("helpers.tpl", "a Helm template") in manual
    assert ("chart", "a Helm chart (Chart.yaml), not read") in manual
    chart = next(f for f in data["files"] if Path(f["file"]).name == "chart")
    assert _chart_command(folder, "migrate") in chart["findings"][0]["message"]


def test_migrate_out_does_not_copy_a_chart(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("migrate", str(folder), "--out", str(out))
    assert r.exit_code == 1, r.stderr
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["cm.json", "pod.yaml", "pod.yml"]


def test_simulate_json_lists_them_under_not_read(folder: Path) -> None:
    r = run("simulate", "-f", str(folder), "--nodes", "1x8xH100-80GB", "-o", "json", code=2)
    unread = {Path(u["source"]["file"]).name: u["reason"] for u in json.loads(r.stdout)["notRead"]}
    assert set(unread) == {"helpers.tpl", "chart"}
    assert _chart_command(folder, "simulate") in unread["chart"]
    assert "not simulated: " in r.stderr
    assert "2 inputs not read" in r.stderr


def test_simulate_lists_them_as_not_simulated_and_exits_2(folder: Path) -> None:
    r = run("simulate", "-f", str(folder), "--nodes", "1x8xH100-80GB")
    assert r.exit_code == 2, r.stderr
    assert "helpers.tpl" in r.stdout
    assert _chart_command(folder, "simulate") in r.stdout
    assert r.stderr.strip().splitlines()[-1] == (
        "kubedra: error: 2 inputs not read (Helm templates or charts, under 'not simulated'): "
        "render them and simulate the output"
    )


def test_a_chart_template_with_unquoted_values_is_a_template_for_every_verb(folder: Path) -> None:
    deploy = str(folder / "chart" / "templates" / "deploy.yaml")
    for verb in ("audit", "validate"):
        r = run(verb, deploy, "-o", "json")
        assert r.exit_code == 2
        assert "a Helm template" in r.stdout
        assert "unsupported map key" not in r.stdout
    r = run("migrate", deploy, "-o", "json")
    assert r.exit_code == 1
    assert "a Helm template" in r.stdout


def test_valid_yaml_with_braces_in_strings_is_still_a_manifest(tmp_path: Path) -> None:
    f = tmp_path / "argo.yaml"
    f.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\n"
        "data:\n  a: '{{ .Values.x }}'\n  b: \"{{inputs.parameters.x}}\"\n"
    )
    assert files.template_line(str(f), f.read_text()) is None
    assert run("validate", str(f)).exit_code == 0


def test_deep_nesting_with_braces_is_bounded() -> None:
    """Hostile: the template check walks parse events (no recursion), whatever the depth."""
    text = "a: " + "[" * 50_000 + "{{ x }}" + "]" * 50_000 + "\n"
    t0 = time.process_time()
    files.template_line("deep.yaml", text)
    assert time.process_time() - t0 < 5


def test_chart_advice_quotes_the_path() -> None:
    assert (
        reading.chart_advice("audit", "my chart")
        == "audit it rendered with `kubedra audit --helm-chart 'my chart'`"
    )


def test_simulate_with_nothing_to_simulate_is_exit_2(tmp_path: Path) -> None:
    """an empty file, or a folder without YAML, said '0 pods simulated' with exit 0 (every other verb
    says exit 2). Now one line, exit 2, as the others do."""
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.txt").write_text(POD.format(name="txt"))  # skipped, as kubectl skips it
    (tmp_path / "blank.yaml").write_text("---\n# only a comment\n---\n")
    for path, why in (
        ("empty.yaml", "no manifests found in"),
        ("docs", "no manifests found in"),
        ("blank.yaml", "no manifests found in"),
    ):
        r = run("simulate", str(tmp_path / path), "--nodes", "1x8xH100-80GB")
        assert (r.exit_code, r.stdout) == (2, ""), r.output
        assert r.stderr.count("\n") == 1
        assert r.stderr.startswith(f"kubedra: error: {why} {tmp_path / path}")
        assert r.stderr.rstrip().endswith(": nothing to simulate")


def test_allocate_explain_and_policy_test_name_a_template_and_go_on(tmp_path: Path) -> None:
    """a Helm template among the inputs aborted allocate, explain and policy test (exit 2, nothing
    printed) while audit, simulate and migrate name it and go on; now they name it too ('kubedra: not read:'),
    answer for the rest, and the answer is incomplete (exit 2) unless it found something wrong (exit 1)."""
    from tests.unit.cli.helpers import ALLOCATE, POLICIES

    (tmp_path / "t.yaml").write_text(TEMPLATE)
    (tmp_path / "in.yaml").write_text(Path(ALLOCATE).read_text())
    r = run("allocate", str(tmp_path), "-o", "json")
    assert r.exit_code == 2, r.output
    assert json.loads(r.stdout), r.output  # the nodes' answers are printed
    assert f"kubedra: not read: {tmp_path / 't.yaml'}:4: a Helm template" in r.stderr
    assert "kubedra: incomplete: 1 input not read" in r.stderr
    r = run("explain", str(tmp_path), "--claim", "team-b/two-gpus", "-o", "json")
    assert r.exit_code in (1, 2), r.output
    assert json.loads(r.stdout)["notRead"], r.output
    assert f"kubedra: not read: {tmp_path / 't.yaml'}:4: a Helm template" in r.stderr

    pods = tmp_path / "pods"
    pods.mkdir()
    (pods / "t.yaml").write_text(TEMPLATE)
    (pods / "p.yaml").write_text(POD.format(name="a"))
    r = run("policy", "test", "--policy", POLICIES, str(pods), "-o", "json")
    data = json.loads(r.stdout)
    assert (r.exit_code, data["objects"], len(data["notRead"])) == (1 if data["violations"] else 2, 1, 1)
    assert f"kubedra: not read: {pods / 't.yaml'}:4: a Helm template" in r.stderr
    (pods / "p.yaml").unlink()
    r = run("policy", "test", "--policy", POLICIES, str(pods), "-o", "json")
    assert r.exit_code == 2, r.output
    assert json.loads(r.stdout)["notRead"], r.output
