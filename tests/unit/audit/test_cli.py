"""``kubedra audit`` from the command line: formats, exit codes, stdin, malformed input, ignores."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import yaml

from .helpers import corpus, run

V1BETA1_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata:
  name: one-gpu
  namespace: ml
spec:
  devices:
    requests:
    - name: gpu
      deviceClassName: gpu.nvidia.com
"""

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: main
        image: cuda
        resources:
          limits:
            nvidia.com/gpu: 2
"""

REMOVED_INGRESS = """\
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
spec: {}
"""


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_json_shape_is_exact(tmp_path: Path) -> None:
    write(tmp_path, "claim.yaml", V1BETA1_CLAIM)
    r = run("audit", str(tmp_path), "-o", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert list(out) == ["targetVersion", "findings", "summary", "incomplete"]
    assert out["incomplete"] == []  # reads a live cluster refused (none for files)
    assert out["targetVersion"] == "1.37"
    f = out["findings"][0]
    assert list(f) == ["rule", "severity", "object", "source", "message", "fix"]
    assert f["object"] == {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "namespace": "ml",
        "name": "one-gpu",
    }
    assert f["source"] == {"file": str(tmp_path / "claim.yaml"), "line": 1}
    s = out["summary"]
    assert s["bySeverity"] == {"error": 0, "warning": 1, "info": 1}
    assert s["byRule"] == {"api.deprecated": 1, "dra.v1beta1-shape": 1}
    assert (s["filesScanned"], s["objectsScanned"], s["notInspected"], s["ignored"]) == (1, 1, [], 0)


def test_finding_points_at_the_gpu_line(tmp_path: Path) -> None:
    write(tmp_path, "d.yaml", GPU_DEPLOYMENT)
    out = json.loads(run("audit", str(tmp_path / "d.yaml"), "-o", "json", code=0).stdout)
    (f,) = out["findings"]
    assert f["rule"] == "gpu.device-plugin-request"
    assert f["source"]["line"] == 14


def test_exit_codes_follow_fail_on(tmp_path: Path) -> None:
    write(tmp_path, "d.yaml", GPU_DEPLOYMENT)  # one warning
    assert run("audit", str(tmp_path)).exit_code == 0
    assert run("audit", str(tmp_path), "--fail-on", "warning").exit_code == 1
    assert run("audit", str(tmp_path), "--fail-on", "info").exit_code == 1
    write(tmp_path, "i.yaml", REMOVED_INGRESS)  # plus one error
    assert run("audit", str(tmp_path)).exit_code == 1
    assert run("audit", str(tmp_path), "--fail-on", "none").exit_code == 0


def test_stdin_and_list_kinds() -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(REMOVED_INGRESS)]})
    r = run("audit", "-f", "-", "-o", "json", input=text)
    assert r.exit_code == 1
    (f,) = json.loads(r.stdout)["findings"]
    assert f["rule"] == "api.removed"
    assert f["source"]["file"] == "<stdin>"
    assert "networking.k8s.io/v1 Ingress" in f["fix"]


def test_multi_document_yaml_from_stdin_keeps_lines() -> None:
    r = run("audit", "-f", "-", "-o", "json", input=GPU_DEPLOYMENT + "---\n" + REMOVED_INGRESS, code=1)
    lines = sorted(f["source"]["line"] for f in json.loads(r.stdout)["findings"])
    assert lines == [14, 16]


def test_malformed_file_is_reported_and_the_scan_goes_on(tmp_path: Path) -> None:
    write(tmp_path, "a-bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n  bad: [\n")
    write(tmp_path, "b-bad.json", '{"apiVersion": "v1",\n "kind": }')
    write(tmp_path, "c-good.yaml", REMOVED_INGRESS)
    r = run("audit", str(tmp_path), "-o", "json")
    assert r.exit_code == 1  # the removed Ingress found wins over the files not read
    out = json.loads(r.stdout)
    bad = {Path(f["source"]["file"]).name: f for f in out["findings"] if f["rule"] == "input.malformed"}
    assert set(bad) == {"a-bad.yaml", "b-bad.json"}
    assert bad["b-bad.json"]["source"]["line"] == 2
    assert bad["a-bad.yaml"]["source"]["line"] is not None
    assert any(f["rule"] == "api.removed" for f in out["findings"])  # the good file was still audited
    assert out["summary"]["filesScanned"] == 3
    assert "kubedra: error: 2 inputs could not be read" in r.stderr
    # nothing at --fail-on found: the files not read make it incomplete, exit 2, never clean
    assert run("audit", str(tmp_path), "--fail-on", "none").exit_code == 2
    (tmp_path / "c-good.yaml").unlink()
    assert run("audit", str(tmp_path)).exit_code == 2
    # accepting the malformed files explicitly restores the findings-based exit code
    assert run("audit", str(tmp_path), "--ignore", "input.malformed").exit_code == 0


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    r = run("audit")
    assert r.exit_code == 2
    assert "nothing to audit" in r.stderr
    r = run("audit", str(tmp_path / "missing"))
    assert r.exit_code == 2
    assert "no such file or directory" in r.stderr
    r = run("audit", str(tmp_path), "--target-version", "one.thirty")
    assert r.exit_code == 2
    assert "invalid --target-version" in r.stderr
    r = run("audit", str(tmp_path), "--target-version", "1.34", "--current-version", "1.36")
    assert r.exit_code == 2
    assert "newer than" in r.stderr
    r = run("audit", str(tmp_path), "--ignore", "no.such-rule")
    assert r.exit_code == 2
    assert "no such rule" in r.stderr
    r = run("audit", str(tmp_path), "--helm-values", "v.yaml")
    assert r.exit_code == 2
    assert "--helm-values needs --helm-chart" in r.stderr
    for err in (r.stderr,):
        assert "Traceback" not in err


def test_ignore_rule_glob_and_ignore_file(tmp_path: Path) -> None:
    write(tmp_path, "m/d.yaml", GPU_DEPLOYMENT)
    write(tmp_path, "m/i.yaml", REMOVED_INGRESS)
    out = json.loads(run("audit", str(tmp_path / "m"), "--ignore", "gpu.*", "-o", "json", code=1).stdout)
    assert [f["rule"] for f in out["findings"]] == ["api.removed"]
    assert out["summary"]["ignored"] == 0  # the check did not even run
    ignore = write(
        tmp_path,
        "accepted.yaml",
        "- rule: api.removed\n  kind: Ingress\n  name: web\n  reason: legacy, deleted next sprint\n"
        "- rule: gpu.device-plugin-request\n  file: m/d.yaml\n",
    )
    r = run("audit", str(tmp_path / "m"), "--ignore-file", str(ignore), "-o", "json")
    out = json.loads(r.stdout)
    assert out["findings"] == []
    assert out["summary"]["ignored"] == 2
    assert r.exit_code == 0
    bad = write(tmp_path, "bad-ignore.yaml", "- kind: Pod\n")
    r = run("audit", str(tmp_path / "m"), "--ignore-file", str(bad))
    assert r.exit_code == 2
    assert "needs at least 'rule'" in r.stderr


def test_current_version_explains_the_step(tmp_path: Path) -> None:
    write(tmp_path, "claim.yaml", V1BETA1_CLAIM)
    out = json.loads(
        run(
            "audit",
            str(tmp_path),
            "--current-version",
            "1.33",
            "--target-version",
            "1.38",
            "-o",
            "json",
            code=1,
        ).stdout
    )
    by_rule = {f["rule"]: f for f in out["findings"]}
    assert "still served by the current version 1.33" in by_rule["api.removed"]["message"]
    # resource.k8s.io/v1 only exists from 1.34: two steps needed
    assert "first served in 1.34" in by_rule["api.replacement-not-in-current"]["message"]
    assert "1.33 -> 1.34 -> 1.35 -> 1.36 -> 1.37 -> 1.38" in by_rule["cluster.upgrade-path"]["fix"]
    assert out["currentVersion"] == "1.33"


def test_yaml_markdown_csv_sarif(tmp_path: Path) -> None:
    write(tmp_path, "d.yaml", GPU_DEPLOYMENT)
    write(tmp_path, "i.yaml", REMOVED_INGRESS)
    y = yaml.safe_load(run("audit", str(tmp_path), "-o", "yaml", code=1).stdout)
    assert y["summary"]["total"] == 2
    md = run("audit", str(tmp_path), "-o", "markdown", code=1).stdout
    assert md.startswith("# kubedra audit: target Kubernetes 1.37")
    assert "## Error (1)" in md
    assert "| api.removed | Ingress web |" in md
    rows = list(csv.DictReader(io.StringIO(run("audit", str(tmp_path), "-o", "csv", code=1).stdout)))
    assert [r["Rule"] for r in rows] == ["api.removed", "gpu.device-plugin-request"]
    assert rows[1]["Where"].endswith("d.yaml:14")
    sarif = json.loads(run("audit", str(tmp_path), "-o", "sarif", code=1).stdout)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning"]
    loc = results[1]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("d.yaml")
    assert loc["region"]["startLine"] == 14
    rule_ids = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert rule_ids == ["api.removed", "gpu.device-plugin-request"]
    assert results[0]["ruleIndex"] == 0


def test_table_is_one_line_per_finding_errors_first(tmp_path: Path) -> None:
    write(tmp_path, "d.yaml", GPU_DEPLOYMENT)
    write(tmp_path, "i.yaml", REMOVED_INGRESS)
    out = run("audit", str(tmp_path), code=1).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["WHERE", "SEVERITY", "RULE", "OBJECT", "MESSAGE"]  # file:line first
    assert lines[1].split()[:2] == [f"{tmp_path}/i.yaml:1", "error"]
    assert lines[2].split()[:2] == [f"{tmp_path}/d.yaml:14", "warning"]
    assert len(lines) == 4
    assert "\x1b[" not in out  # not a terminal: no colour
    wide = run("audit", str(tmp_path), "-o", "wide", code=1).stdout.splitlines()
    assert wide[0].split()[0] == "WHERE"
    assert wide[0].split()[-1] == "FIX"
    assert len(wide) == 4
    assert "target 1.37: 2 findings: 1 error, 1 warning, 0 info; scanned 2 files, 2 objects" in out
    clean = tmp_path / "clean"
    clean.mkdir()
    write(clean, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert run("audit", str(clean), code=0).stdout.startswith("No findings.")


def test_user_deprecations_for_crds(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m/job.yaml",
        "apiVersion: kubeflow.org/v1beta1\nkind: PyTorchJob\nmetadata: {name: old}\nspec: {}\n",
    )
    data = write(
        tmp_path,
        "crd-deprecations.yaml",
        "- group: kubeflow.org\n  version: v1beta1\n  kind: PyTorchJob\n  deprecated: '1.30'\n  removed: '1.35'\n"
        "  replacement: kubeflow.org/v1\n  notes: training-operator 1.7 dropped v1beta1.\n"
        "- group: kubeflow.org\n  version: v1\n  kind: PyTorchJob\n  introduced: '1.20'\n",
    )
    out = json.loads(
        run("audit", str(tmp_path / "m"), "--deprecations", str(data), "-o", "json", code=1).stdout
    )
    (f,) = out["findings"]
    assert f["rule"] == "api.removed"
    assert f["fix"].startswith("Rewrite as kubeflow.org/v1 PyTorchJob.")
    assert "training-operator 1.7" in f["fix"]
    bad = write(tmp_path, "bad.yaml", "- group: x\n  version: v1\n  kind: K\n  removed: soon\n")
    r = run("audit", str(tmp_path / "m"), "--deprecations", str(bad))
    assert r.exit_code == 2
    assert "removed must be a version" in r.stderr


def test_list_rules_markdown_covers_every_rule() -> None:
    md = run("audit", "--list-rules", "-o", "markdown", code=0).stdout
    data = yaml.safe_load(
        (Path(__file__).resolve().parents[3] / "src/kubedra/data/rules/audit-rules.yaml").read_text()
    )
    for rule in data["rules"]:
        assert f"| {rule['id']} | {rule['severity']} |" in md


def test_whole_corpus_in_one_run() -> None:
    r = run("audit", "-f", str(corpus()), "-o", "json")
    out = json.loads(r.stdout)
    assert r.exit_code == 1  # errors found; the corpus's two Helm templates are reported, not read
    assert out["summary"]["filesScanned"] >= 40
    # every file parses; the corpus's fragments and tool configurations (no kind) are named, not scanned
    malformed = {
        (Path(f["source"]["file"]).name, f["source"]["line"])
        for f in out["findings"]
        if f["rule"] == "input.malformed"
    }
    assert malformed == {
        ("kep4815-a100-mig-counterset-fragment.yaml", 5),
        ("kep4815-a100-mig-counterset-fragment.yaml", 40),
        ("nvidia-mig-parted-config.yaml", 3),
        ("nvidia-resourceslice-t4-aks-excerpt-UNVERIFIED-SOURCE.yaml", 3),
    }
    templates = [
        Path(f["source"]["file"]).name for f in out["findings"] if f["rule"] == "input.helm-template"
    ]
    assert sorted(templates) == [
        "nvidia-helm-deviceclass-templates.yaml.tpl",
        "triton-gcp-helm-deployment-template.yaml.tpl",
    ]


def test_helm_template_is_reported_as_a_template_not_malformed_yaml(tmp_path: Path) -> None:
    """Every verb says 'render it first'; the rest of the scan goes on; incomplete is exit 2."""
    (tmp_path / "t.yaml").write_text('kind: Pod\nmetadata:\n  {{- include "labels" . }}\n  name: x\n')
    (tmp_path / "p.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n"
    )
    r = run("audit", str(tmp_path), "-o", "json")
    assert r.exit_code == 2
    data = json.loads(r.stdout)
    rules = {(f["rule"], Path(f["source"]["file"]).name, f["source"]["line"]) for f in data["findings"]}
    assert rules == {("input.helm-template", "t.yaml", 3)}
    assert data["summary"]["objectsScanned"] == 1


def test_a_document_that_is_no_kubernetes_object_is_named_not_scanned_clean(tmp_path: Path) -> None:
    """A mapping without kind (here the device plugin's own time-slicing configuration, as the GPU Operator's
    tests ship it) is no object the rules can read: audit said 'No findings' with exit 0 and counted it as
    an object scanned; now it is an input.malformed finding at its line, exit 2 (incomplete)."""
    config = (
        "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: 10}\n"
    )
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n"
    (tmp_path / "m.yaml").write_text(pod + "---\n" + config)
    r = run("audit", str(tmp_path / "m.yaml"), "-o", "json")
    assert r.exit_code == 2, r.output
    data = json.loads(r.stdout)
    (f,) = data["findings"]
    assert (f["rule"], f["source"]["line"]) == ("input.malformed", 6)
    assert f["message"].startswith("not a Kubernetes object (no kind)")
    assert data["summary"]["objectsScanned"] == 1
    assert "1 input could not be read" in r.stderr
    (tmp_path / "m.yaml").write_text(pod)
    assert run("audit", str(tmp_path / "m.yaml")).exit_code == 0


def test_inputs_with_no_manifest_are_not_no_findings(tmp_path: Path) -> None:
    """A folder with no manifest (a typo'd path, a render step that wrote nothing) or an empty file said
    'No findings ... scanned 0 objects' with exit 0; now one line, exit 2, as validate does."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.txt").write_text("not a manifest\n")
    (tmp_path / "empty.yaml").write_text("# only a comment\n---\n")
    for path in (tmp_path / "docs", tmp_path / "empty.yaml"):
        r = run("audit", str(path))
        assert r.exit_code == 2, r.output
        assert r.stdout == "", r.output
        assert r.stderr == f"kubedra: error: no manifests found in {path}: nothing to audit\n"
    (tmp_path / "docs" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n"
    )
    assert run("audit", str(tmp_path / "docs"), str(tmp_path / "empty.yaml")).exit_code == 0
