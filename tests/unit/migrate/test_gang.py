"""Gangs -> scheduling.k8s.io PodGroup / Workload, pinned to the target release."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.validate.engine import validate_texts

from .helpers import by_kind, migrate_text, output

VCJOB = textwrap.dedent(
    """\
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata:
      name: tf
      namespace: ml
    spec:
      minAvailable: 3
      schedulerName: volcano
      tasks:
      - name: ps
        replicas: 1
        template:
          spec:
            containers: [{name: ps, image: tf}]
      - name: worker
        replicas: 2
        template:
          spec:
            containers:
            - name: w
              image: tf
              resources: {limits: {nvidia.com/gpu: 1}}
    """
)

JOBSET = textwrap.dedent(
    """\
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec:
      replicatedJobs:
      - name: workers
        replicas: 2
        template:
          spec:
            parallelism: 4
            template:
              spec:
                containers:
                - name: w
                  resources: {limits: {nvidia.com/gpu: 8}}
    """
)


GPU_JOB = textwrap.dedent(
    """\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: train, namespace: ml}
    spec:
      parallelism: 4
      completions: 4
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
    """
)
# KAI's pod-grouper gives a Job a PodGroup of minMember 1 unless it carries this annotation (data/workloads.yaml)
KAI_GANG_JOB = GPU_JOB.replace(
    "metadata: {name: train, namespace: ml}",
    "metadata: {name: train, namespace: ml, annotations: {kai.scheduler/batch-min-member: '2'}}",
)


@pytest.mark.parametrize("target", ["1.35", "1.36", "1.37"])
def test_a_job_with_parallelism_equal_to_completions_is_no_gang(target: str) -> None:
    """k8s.io/api v0.37 JobSpec.Scheduling: omitted, "standard pod-by-pod scheduling". Before, migrate wrote
    a PodGroup of minCount 4 for this Job, which made its pods all-or-nothing."""
    rep = migrate_text(GPU_JOB, target_version=target)
    out = rep.files[0].output
    assert not by_kind(out, "PodGroup")
    assert not by_kind(out, "Workload")
    (job,) = by_kind(out, "Job")
    assert "scheduling" not in job["spec"]
    assert "schedulingGroup" not in job["spec"]["template"]["spec"]
    assert not any("gang" in f.message for f in rep.findings)


def test_kai_gang_job_at_136_becomes_podgroup_of_the_size_it_asks_for() -> None:
    rep = migrate_text(KAI_GANG_JOB, target_version="1.36")
    out = rep.files[0].output
    (pg,) = by_kind(out, "PodGroup")
    assert pg == {
        "apiVersion": "scheduling.k8s.io/v1alpha2",
        "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    (job,) = [d for d in by_kind(out, "Job") if d["apiVersion"] == "batch/v1"]
    assert job["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "train"}
    assert "GenericWorkload" in " ".join(f.message for f in rep.findings)
    assert validate_texts([("out.yaml", out)], "1.36").valid


def test_kai_gang_job_at_137_is_the_jobs_own_scheduling_field() -> None:
    """1.37: the Job controller creates the Workload and PodGroup from spec.scheduling (WorkloadWithJob)."""
    rep = migrate_text(KAI_GANG_JOB, target_version="1.37")
    out = rep.files[0].output
    assert not by_kind(out, "PodGroup")
    assert not by_kind(out, "Workload")
    (job,) = by_kind(out, "Job")
    assert job["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {"minCount": 2}}}
    assert "schedulingGroup" not in job["spec"]["template"]["spec"]
    assert any("WorkloadWithJob" in f.message and f.level == "warning" for f in rep.findings)
    assert validate_texts([("out.yaml", out)], "1.37").valid  # the field shape of the 1.37 OpenAPI


def test_a_jobs_own_gang_is_left_to_the_job_controller() -> None:
    declared = GPU_JOB.replace(
        "  completions: 4\n", "  completions: 4\n  scheduling: {schedulingPolicy: {gang: {}}}\n"
    )
    rep = migrate_text(declared, target_version="1.37")
    out = rep.files[0].output
    assert not by_kind(out, "PodGroup")
    (job,) = by_kind(out, "Job")
    assert job["spec"]["scheduling"] == {"schedulingPolicy": {"gang": {}}}


def test_target_135_writes_a_workload_and_workload_refs() -> None:
    out = output(KAI_GANG_JOB, target_version="1.35")
    (wl,) = by_kind(out, "Workload")
    assert wl["apiVersion"] == "scheduling.k8s.io/v1alpha1"
    assert wl["spec"] == {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
        "podGroups": [{"name": "gang", "policy": {"gang": {"minCount": 2}}}],
    }
    (job,) = [d for d in by_kind(out, "Job") if d["apiVersion"] == "batch/v1"]
    assert job["spec"]["template"]["spec"]["workloadRef"] == {"name": "train", "podGroup": "gang"}
    assert validate_texts([("out.yaml", out)], "1.35").valid


# An operator's pods are built by its controller from its CRD's pod template. Volcano v1.15.1's and the MPI
# operator's released CRDs (data/crds) do not declare spec.schedulingGroup: migrate linked the templates anyway,
# and the apiserver refuses such a Volcano Job (tests/integration/test_validate_crds.py). The gang is reported,
# with its size, and nothing is written.
@pytest.mark.parametrize("target", ["1.35", "1.36", "1.37"])
def test_operator_gangs_are_reported_not_linked(target: str) -> None:
    rep = migrate_text(VCJOB, target_version=target)
    out = rep.files[0].output
    assert not by_kind(out, "PodGroup")
    assert not by_kind(out, "Workload")
    (job,) = [d for d in by_kind(out, "Job") if d["apiVersion"].startswith("batch.volcano")]
    for task in job["spec"]["tasks"]:
        assert "schedulingGroup" not in task["template"]["spec"]
        assert "workloadRef" not in task["template"]["spec"]
    (note,) = [f for f in rep.findings if "created by its operator" in f.message]
    assert note.level == "warning"
    assert "gang of 3 pods (spec.minAvailable)" in note.message
    assert validate_texts([("out.yaml", out)], target).valid


def test_target_134_has_no_gang_api() -> None:
    rep = migrate_text(VCJOB, target_version="1.34")
    assert not by_kind(rep.files[0].output, "PodGroup")
    assert any("no scheduling.k8s.io gang" in f.message for f in rep.findings)


def test_jobset_gang_size_is_replicas_times_parallelism() -> None:
    """JobSet v0.12.0's CRD declares spec.schedulingGroup in its pod template: from 1.36 the gang is written and
    the template linked, as for a built-in workload (before: a warning and nothing written)."""
    rep = migrate_text(JOBSET)
    out = rep.files[0].output
    (pg,) = by_kind(out, "PodGroup")
    assert pg["spec"] == {"schedulingPolicy": {"gang": {"minCount": 8}}}
    assert any("gang of 8 pods (replicatedJobs replicas x parallelism)" in f.message for f in rep.findings)
    (js,) = by_kind(out, "JobSet")
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["schedulingGroup"] == {"podGroupName": "js"}
    checked = validate_texts(
        [("out.yaml", out)], "1.37"
    )  # against the bundled JobSet CRD (the fixture has no image)
    assert not [e for e in checked.errors if "schedulingGroup" in (e.path or "") + e.message], checked.errors
    old = migrate_text(JOBSET, target_version="1.35")  # Workload + workloadRef: not in the CRD
    assert not by_kind(old.files[0].output, "Workload")
    assert not by_kind(old.files[0].output, "PodGroup")


def test_no_gang_option_and_work_queue_jobs() -> None:
    assert not by_kind(output(VCJOB, gang=False), "PodGroup")
    queue_job = textwrap.dedent(
        """\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: q}
        spec:
          parallelism: 2
          completions: 10
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
        """
    )
    assert not by_kind(output(queue_job), "PodGroup")
    assert not by_kind(output(queue_job.replace("completions: 10", "completions: 2")), "PodGroup")


def test_already_grouped_pods_are_left_alone() -> None:
    once = output(KAI_GANG_JOB, target_version="1.36")
    assert by_kind(once, "PodGroup")
    assert output(once, target_version="1.36") == once


def test_old_podgroup_versions_are_upgraded_for_the_target() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: scheduling.k8s.io/v1alpha2
        kind: PodGroup
        metadata: {name: g}
        spec:
          podGroupTemplateRef:
            workload: {workloadName: w, podGroupTemplateName: t}
          disruptionMode: PodGroup
          schedulingPolicy:
            gang: {minCount: 2}
        """
    )
    out = output(text)
    (pg,) = by_kind(out, "PodGroup")
    assert pg["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert pg["spec"] == {
        "workloadRef": {"workloadName": "w", "templateName": "t"},
        "disruptionMode": {"all": {}},
        "schedulingPolicy": {"gang": {"minCount": 2}},
    }
    assert validate_texts([("o.yaml", out)], "1.37").valid
    # 1.36 serves v1alpha2: nothing to do
    assert output(text, target_version="1.36") == text


def test_workload_v1alpha1_becomes_templates() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: scheduling.k8s.io/v1alpha1
        kind: Workload
        metadata: {name: w}
        spec:
          podGroups:
          - name: g
            policy: {gang: {minCount: 4}}
        """
    )
    (wl,) = by_kind(output(text, target_version="1.36"), "Workload")
    assert wl["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert wl["spec"] == {"podGroupTemplates": [{"name": "g", "schedulingPolicy": {"gang": {"minCount": 4}}}]}


def test_lws_each_group_its_own_gang_writes_no_podgroup() -> None:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "data" / "operators" / "lws-vllm-gpu.yaml").read_text()
    rep = migrate_text(text)
    assert not by_kind(rep.files[0].output, "PodGroup")
    assert any("each group is its own gang of 2 pods" in f.message for f in rep.findings)


def test_mpijob_wait_for_workers_ready_launcher_stays_out_of_the_gang() -> None:
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[2] / "data" / "operators" / "mpijob-tf-benchmarks.yaml"
    ).read_text()
    text = text.replace("spec:\n", "spec:\n  launcherCreationPolicy: WaitForWorkersReady\n", 1)
    rep = migrate_text(text)
    assert not by_kind(rep.files[0].output, "PodGroup")
    assert any(
        "gang of 2 pods (workers only: the launcher is created after they are Ready)" in f.message
        for f in rep.findings
    )
    bad = text.replace(
        "    cleanPodPolicy: Running\n",
        "    cleanPodPolicy: Running\n    schedulingPolicy: {minAvailable: 3}\n",
    )
    rep = migrate_text(bad)
    assert any("can never start" in f.message for f in rep.findings if f.level == "manual")


REAL = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("jobset--pytorch-cnn-mnist.yaml", "JobSet"),
        ("training-operator--pytorch-deepspeed-demo.yaml", "PyTorchJob"),
    ],
)
def test_real_operator_gangs_are_linked_where_the_crd_declares_the_field(
    tmp_path: Path, name: str, kind: str
) -> None:
    """migrate as a user runs it on the JobSet project's and the training operator's examples: the PodGroup is
    written and the output validates against the bundled CRDs at 1.37; at 1.35 (Workload API) it is not."""
    out_dir = tmp_path / "out"
    r = CliRunner().invoke(
        cli,
        ["migrate", str(REAL / name), "--target-version", "1.37", "--out", str(out_dir)],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    written = [d for f in out_dir.rglob("*.yaml") for d in yaml.safe_load_all(f.read_text()) if d]
    assert [d["kind"] for d in written if d["kind"] == "PodGroup"] == ["PodGroup"], r.output
    assert "output valid" in r.stderr + r.stdout
    r = CliRunner().invoke(
        cli, ["migrate", str(REAL / name), "--target-version", "1.35"], catch_exceptions=False
    )
    assert "kind: Workload" not in r.stdout
    assert "created by its operator" in r.output
