"""audit reads what migrate writes like any manifest: every object of migrate's output that validate (and migrate)
warn about at the target, because that release serves its API version only in part, gets an audit finding too.

Before: `kubedra audit` of a migrated folder reported 0 findings for the scheduling.k8s.io/v1beta1 PodGroup that
migrate writes at 1.37, which migrate and validate both said is refused unless GenericWorkload and
--runtime-config are set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.unit.cli.helpers import run

REPO = Path(__file__).resolve().parents[3]
KAI_GANG_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml, annotations: {kai.scheduler/batch-min-member: '2'}}
spec:
  parallelism: 4
  completions: 4
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def _key(obj: dict[str, str | None]) -> tuple[str | None, ...]:
    return (obj.get("apiVersion"), obj.get("kind"), obj.get("namespace") or None, obj.get("name"))


@pytest.mark.parametrize("target", ["1.35", "1.36", "1.37"])
def test_audit_finds_what_validate_says_of_migrates_output(target: str, tmp_path: Path) -> None:
    apps = tmp_path / "apps"
    shutil.copytree(REPO / "examples" / "dra", apps / "dra")
    shutil.copytree(REPO / "examples" / "legacy-gpu", apps / "legacy-gpu")
    (apps / "kai-gang-job.yaml").write_text(KAI_GANG_JOB)
    out = tmp_path / "out"
    run("migrate", str(apps), "--out", str(out), "--target-version", target)
    assert out.is_dir()
    validated = json.loads(run("validate", str(out), "--target-version", target, "-o", "json").stdout)
    audited = json.loads(run("audit", str(out), "--target-version", target, "-o", "json").stdout)
    served = [w for w in validated["warnings"] + validated["errors"] if w["path"] == "apiVersion"]
    found: dict[tuple[str | None, ...], set[str]] = {}
    for f in audited["findings"]:
        found.setdefault(_key(f["object"]), set()).add(f["rule"])
    missing = [f"{w['object']}: {w['message']}" for w in served if _key(w["object"]) not in found]
    assert not missing, "validate warns, audit says nothing:\n" + "\n".join(missing)
    # the gang migrate writes for the KAI Job: a PodGroup or Workload before 1.37 (served only when enabled), the
    # Job's own spec.scheduling from 1.37 (dropped unless WorkloadWithJob is on): audit says both, as migrate does
    rules = {rule for k, rs in found.items() if k[3] == "train" for rule in rs}
    assert ("scheduling.field-dropped-at-target" if target == "1.37" else "api.off-by-default") in rules, (
        found
    )


def test_the_podgroup_migrate_writes_at_137_is_off_by_default_in_audit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(
        "migrate",
        str(REPO / "examples" / "dra" / "example-driver-podgroup-rct-v1alpha2.yaml"),
        "--out",
        str(out),
    )
    r = run("audit", str(out), "-o", "json", "--fail-on", "warning", code=1)
    pg, _ = [f for f in json.loads(r.stdout)["findings"] if f["object"]["kind"] == "PodGroup"]
    assert pg["rule"] == "api.off-by-default"
    assert pg["object"]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert "--feature-gates=GenericWorkload=true --runtime-config=scheduling.k8s.io/v1beta1=true" in pg["fix"]
    assert "GenericWorkload is beta and off" in pg["message"]
