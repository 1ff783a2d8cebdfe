"""Gangs -> scheduling.k8s.io PodGroup / Workload, pinned to the target release."""

from __future__ import annotations

import textwrap

import pytest

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


@pytest.mark.parametrize(
    ("target", "api", "field"),
    [
        ("1.36", "scheduling.k8s.io/v1alpha2", "schedulingGroup"),
        ("1.37", "scheduling.k8s.io/v1beta1", "schedulingGroup"),
    ],
)
def test_volcano_min_available_becomes_podgroup(target: str, api: str, field: str) -> None:
    rep = migrate_text(VCJOB, target_version=target)
    out = rep.files[0].output
    (pg,) = by_kind(out, "PodGroup")
    assert pg == {
        "apiVersion": api,
        "kind": "PodGroup",
        "metadata": {"name": "tf", "namespace": "ml"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}},
    }
    (job,) = [d for d in by_kind(out, "Job") if d["apiVersion"].startswith("batch.volcano")]
    for task in job["spec"]["tasks"]:
        assert task["template"]["spec"][field] == {"podGroupName": "tf"}
    messages = " ".join(f.message for f in rep.findings)
    assert "GenericWorkload" in messages and "volcano" in messages
    # Volcano's released Job CRD (kubedra/data/crds, volcano v1.15.1) has no pod spec.schedulingGroup: the
    # apiserver refuses the linked templates (tests/integration/test_validate_crds.py), and validate says so
    result = validate_texts([("out.yaml", out)], target)
    assert {e.path for e in result.errors} == {
        f"spec.tasks[{i}].template.spec.schedulingGroup" for i in range(len(job["spec"]["tasks"]))
    }
    assert all("not in the CRD of github.com/volcano-sh/volcano@v1.15.1" in e.message for e in result.errors)


def test_target_135_writes_a_workload_and_workload_refs() -> None:
    out = output(VCJOB, target_version="1.35")
    (wl,) = by_kind(out, "Workload")
    assert wl["apiVersion"] == "scheduling.k8s.io/v1alpha1"
    assert wl["spec"] == {
        "controllerRef": {"apiGroup": "batch.volcano.sh", "kind": "Job", "name": "tf"},
        "podGroups": [{"name": "gang", "policy": {"gang": {"minCount": 3}}}],
    }
    (job,) = [d for d in by_kind(out, "Job") if d["apiVersion"].startswith("batch.volcano")]
    assert job["spec"]["tasks"][0]["template"]["spec"]["workloadRef"] == {"name": "tf", "podGroup": "gang"}
    assert validate_texts([("out.yaml", out)], "1.35").valid


def test_target_134_has_no_gang_api() -> None:
    rep = migrate_text(VCJOB, target_version="1.34")
    assert not by_kind(rep.files[0].output, "PodGroup")
    assert any("no scheduling.k8s.io gang" in f.message for f in rep.findings)


def test_jobset_gang_size_is_replicas_times_parallelism() -> None:
    (pg,) = by_kind(output(JOBSET), "PodGroup")
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 8


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
    assert by_kind(output(queue_job.replace("completions: 10", "completions: 2")), "PodGroup")


def test_already_grouped_pods_are_left_alone() -> None:
    once = output(VCJOB)
    assert output(once) == once


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


def test_mpijob_wait_for_workers_ready_launcher_stays_out_of_the_podgroup() -> None:
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[2] / "data" / "operators" / "mpijob-tf-benchmarks.yaml"
    ).read_text()
    text = text.replace("spec:\n", "spec:\n  launcherCreationPolicy: WaitForWorkersReady\n", 1)
    out = output(text)
    (pg,) = by_kind(out, "PodGroup")
    assert pg["spec"]["schedulingPolicy"]["gang"]["minCount"] == 2
    (job,) = by_kind(out, "MPIJob")
    specs = job["spec"]["mpiReplicaSpecs"]
    assert "schedulingGroup" not in specs["Launcher"]["template"]["spec"]
    assert specs["Worker"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "tensorflow-benchmarks"}
    bad = text.replace(
        "    cleanPodPolicy: Running\n",
        "    cleanPodPolicy: Running\n    schedulingPolicy: {minAvailable: 3}\n",
    )
    rep = migrate_text(bad)
    assert any("can never start" in f.message for f in rep.findings if f.level == "manual")
