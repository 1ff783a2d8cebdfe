"""``kubedra migrate`` through the CLI: modes, exit codes, nothing written on error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli

from .helpers import by_kind
from .test_gpu import DEPLOYMENT


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["migrate", *args], input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "train.yaml").write_text("# keep me\n" + DEPLOYMENT)
    (tmp_path / "apps" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    return tmp_path


def test_diff_is_the_default_and_writes_nothing(tree: Path) -> None:
    before = (tree / "apps" / "train.yaml").read_text()
    code, out, err = run(str(tree / "apps"))
    assert code == 0
    assert out.startswith("--- a/")
    assert "+kind: ResourceClaimTemplate" in out
    assert "-            nvidia.com/gpu: 2" in out
    assert "2 files, 1 changed, 1 new object, 0 manual items" in err
    assert "output valid" in err
    assert (tree / "apps" / "train.yaml").read_text() == before


def test_out_dir_mirrors_the_tree(tree: Path) -> None:
    out_dir = tree / "out"
    code, _, _ = run(str(tree / "apps"), "--out", str(out_dir))
    assert code == 0
    assert sorted(os.listdir(out_dir)) == ["cm.yaml", "train.yaml"]
    text = (out_dir / "train.yaml").read_text()
    assert text.startswith("# keep me\n")
    assert by_kind(text, "ResourceClaimTemplate")
    assert (out_dir / "cm.yaml").read_text() == (tree / "apps" / "cm.yaml").read_text()


def test_in_place_then_second_run_changes_nothing(tree: Path) -> None:
    path = tree / "apps" / "train.yaml"
    mode = 0o640
    path.chmod(mode)
    assert run(str(path), "--in-place")[0] == 0
    once = path.read_text()
    assert "ResourceClaimTemplate" in once
    assert (path.stat().st_mode & 0o777) == mode
    code, out, _ = run(str(path), "--in-place", "-o", "json")
    assert code == 0
    assert path.read_text() == once
    assert json.loads(out)["files"][0]["changed"] is False
    assert not [p for p in os.listdir(tree / "apps") if p.startswith(".kubedra-")]


def test_bad_input_exits_2_and_writes_nothing(tree: Path) -> None:
    (tree / "apps" / "zbroken.yaml").write_text("a: [1,\n")
    before = (tree / "apps" / "train.yaml").read_text()
    from kubedra.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["migrate", str(tree / "apps"), "--in-place"])
    assert exc.value.code == 2
    assert (tree / "apps" / "train.yaml").read_text() == before


def test_manual_items_exit_1_and_json_report(tree: Path) -> None:
    (tree / "apps" / "frac.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: f\n  annotations:\n    gpu-fraction: '0.5'\n"
        "spec:\n  containers: [{name: a, image: x}]\n"
    )
    code, out, _ = run(str(tree / "apps"), "-o", "json")
    assert code == 1
    data = json.loads(out)
    manual = [f for file in data["files"] for f in file["findings"] if f["level"] == "manual"]
    assert manual[0]["source"]["line"] == 6
    assert manual[0]["object"]["kind"] == "Pod"
    assert data["validation"]["valid"] is True


def test_stdin_to_stdout() -> None:
    code, out, _ = run("-", input=DEPLOYMENT)
    assert code == 0
    assert out.startswith("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate")


def test_usage_errors(tree: Path) -> None:
    from kubedra.cli import main

    for args in (["--in-place", "--diff"], ["--target-version", "1.30"], ["--sharing", "half"]):
        with pytest.raises(SystemExit) as exc:
            main(["migrate", str(tree / "apps"), *args])
        assert exc.value.code == 2


def test_json_manifest_stays_json(tmp_path: Path) -> None:
    import yaml as _yaml

    obj = _yaml.safe_load(DEPLOYMENT)
    path = tmp_path / "dep.json"
    path.write_text(json.dumps(obj, indent=2) + "\n")
    assert run(str(path), "--in-place")[0] == 0
    data = json.loads(path.read_text())
    assert data["kind"] == "List"
    assert [i["kind"] for i in data["items"]] == ["ResourceClaimTemplate", "Deployment"]
    once = path.read_text()
    assert run(str(path), "--in-place")[0] == 0
    assert path.read_text() == once


def test_helm_template_is_a_manual_item_and_not_copied_to_out(tmp_path: Path) -> None:
    """Not malformed YAML and not silently copied into --out: render it first."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
        "  {{- if .Values.gpu }}\n  replicas: 1\n  {{- end }}\n"
    )
    (src / "pod.yaml").write_text(DEPLOYMENT)
    out = tmp_path / "out"
    code, report, _ = run("--out", str(out), str(src), "-o", "json")
    assert code == 1
    manual = [f for f in json.loads(report)["files"][0]["findings"] if f["level"] == "manual"]
    assert manual
    assert manual[0]["message"].startswith("a Helm template: render it first with `helm template`")
    assert sorted(p.name for p in out.iterdir()) == ["pod.yaml"]


def test_inputs_with_no_manifest_are_an_input_error(tmp_path: Path) -> None:
    """Nothing read said '0 files, 0 changed ... output valid' with exit 0 (everything migrated and valid);
    now one line, exit 2, nothing written, as validate does."""
    from kubedra.testing.cli import run as cli_run

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.txt").write_text("not a manifest\n")
    (tmp_path / "empty.yaml").write_text("# only a comment\n---\n")
    for args in ([str(tmp_path / "docs")], [str(tmp_path / "empty.yaml")], ["-"]):
        res = cli_run("migrate", *args, "--out", str(tmp_path / "out"), input="")
        assert res.exit_code == 2, res.output
        assert res.stdout == "", res.output
        assert res.stderr.startswith("kubedra: error: no manifests found in ")
        assert res.stderr.endswith(": nothing to migrate\n")
        assert not (tmp_path / "out").exists()
    (tmp_path / "docs" / "d.yaml").write_text(DEPLOYMENT)
    code, _out, err = run(str(tmp_path / "docs"), str(tmp_path / "empty.yaml"), "-o", "json")
    assert code == 0, err


def test_output_with_a_custom_resource_is_not_said_valid() -> None:
    """the migrated output held a custom resource whose CRD kubedra does not bundle (the MXJob of
    tests/realworld/inputs), so it was not schema-checked, yet the summary said 'output valid'; now it names
    what was not checked, and an unchecked object is not an invalid one (no error: exit from the manual item)."""
    inputs = Path(__file__).parents[2] / "realworld" / "inputs"
    code, out, err = run(
        str(inputs / "legacy--training-operator-v1.8.1-mxjob-dist-gpu.yaml"), "--hide-changes"
    )
    assert code == 1  # the MXJob's GPU limit is a manual item
    assert "output valid" not in err, err
    assert "output INVALID" not in err, err
    assert err.rstrip().endswith("; output not schema-checked: kubeflow.org/v1 MXJob")
    code, out, _ = run(str(inputs / "legacy--training-operator-v1.8.1-mxjob-dist-gpu.yaml"), "-o", "json")
    validation = json.loads(out)["validation"]
    assert (validation["valid"], validation["complete"], validation["errors"]) == (False, False, [])


EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_an_object_defined_in_two_inputs_is_replaced_as_simulate_says(tmp_path: Path) -> None:
    """examples/legacy-gpu has the same PyTorchJob in two files. kubectl apply of both keeps the later one, and
    simulate says so; migrate gave the later one a ResourceClaimTemplate '…-gpu-2', a twin that applying both
    outputs would leave behind. Now both get the same name (the later replaces the earlier, as the job does) and
    a warning names both file:lines, in simulate's words."""
    legacy = EXAMPLES / "legacy-gpu"
    code, out, err = run(str(legacy), "--out", str(tmp_path / "out"))
    err += out  # the table of changes goes to stdout with --out
    assert code == 1  # the KAI fractions and the vLLM CR are manual items
    written = {p.name: p.read_text() for p in (tmp_path / "out").glob("*.yaml")}
    for name in ("kai-kubeflow-pytorchjob.yaml", "kubeflow-pytorchjob-mnist-nccl.yaml"):
        (rct,) = by_kind(written[name], "ResourceClaimTemplate")
        assert rct["metadata"]["name"] == "pytorch-dist-mnist-nccl-gpu", name
    assert "-gpu-2" not in "".join(written.values())
    earlier, later = legacy / "kai-kubeflow-pytorchjob.yaml", legacy / "kubeflow-pytorchjob-mnist-nccl.yaml"
    said = (
        f"defined again at {later}:2; the later definition replaces this one (as kubectl apply of both would)"
    )
    assert f"{earlier}:6" in err
    assert said in err
    sim = CliRunner().invoke(cli, ["simulate", str(legacy), "--nodes", "2x8xH100-80GB"])
    assert f"{earlier}:6" in sim.stdout
    assert said in " ".join(sim.stdout.split())


def test_a_gang_defined_twice_gets_its_podgroup_from_the_later_definition(tmp_path: Path) -> None:
    job = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: g}\nspec:\n  minAvailable: 2\n"
        "  tasks:\n  - replicas: 2\n    template:\n      spec:\n        containers:\n        - name: c\n"
        "          image: x\n          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.yaml").write_text(job)
    (tmp_path / "in" / "b.yaml").write_text(job)
    _, out, err = run(str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    err += out
    assert "already exists in the inputs" not in err
    assert "defined again at" in err
    assert "-gpu-2" not in (tmp_path / "out" / "b.yaml").read_text()


def test_a_template_without_namespace_is_in_default_when_migrate_names_its_own(tmp_path: Path) -> None:
    """The inputs' ResourceClaimTemplate train-gpu (no namespace: default) and a Deployment in namespace default:
    migrate wrote its own train-gpu in default, replacing the user's template on apply. Now it is train-gpu-2."""
    rct = (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: train-gpu\nspec:\n"
        "  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com}\n"
    )
    dep = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\n  namespace: default\nspec:\n"
        "  selector: {matchLabels: {app: train}}\n  template:\n    metadata: {labels: {app: train}}\n    spec:\n"
        "      containers:\n      - name: main\n        image: train:1\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (tmp_path / "in.yaml").write_text(rct + "---\n" + dep)
    run(str(tmp_path / "in.yaml"), "--out", str(tmp_path / "out"))
    written = (tmp_path / "out" / "in.yaml").read_text()
    names = [t["metadata"]["name"] for t in by_kind(written, "ResourceClaimTemplate")]
    assert names == ["train-gpu", "train-gpu-2"], names
    (deployment,) = by_kind(written, "Deployment")
    claims = deployment["spec"]["template"]["spec"]["resourceClaims"]
    assert [c["resourceClaimTemplateName"] for c in claims] == ["train-gpu-2"]


def test_the_readme_audit_of_the_migrated_tree(tmp_path: Path) -> None:
    """README: `kubedra audit "$out/migrated"  # exit 0: what migrate converted is gone; left: its manual items
    and the PyTorchJob defined twice; the gangs it wrote need GenericWorkload` (it said 'the device-plugin findings are gone', though the KAI fractions
    and the vLLM CR, migrate's manual items, are device-plugin findings that stay)."""
    run(str(EXAMPLES / "legacy-gpu"), "--out", str(tmp_path / "migrated"))
    r = CliRunner().invoke(cli, ["audit", str(tmp_path / "migrated"), "-o", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    rules = {f["rule"] for f in json.loads(r.stdout)["findings"]}
    assert rules == {
        "gpu.fraction-annotation",
        "gpu.custom-resource-request",
        "input.duplicate-object",
        # the gangs migrate writes: a PodGroup and the templates' schedulingGroup, both off by default at 1.37
        "api.off-by-default",
        "scheduling.field-dropped-at-target",
    }
