"""Real operator examples → pods, gangs and minimums, as each operator creates them.

The manifests under tests/data/operators/ are the operators' own examples (source repo, path, commit and licence
on their first lines). Variants (a launcher policy, a startup policy) are the same files with one field changed
here, so each case differs from upstream by exactly the field it tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubedra.k8s.workloads import gang, pod_templates, queue_name, suspended, trainjob_jobset
from kubedra.scheduler.workloads import Workloads, expand
from kubedra.sources.files import parse_text

DATA = Path(__file__).resolve().parents[2] / "data" / "operators"


def objs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DATA / name).read_text()) if isinstance(d, dict)]


def workload(name: str, kind: str) -> dict[str, Any]:
    return next(o for o in objs(name) if o.get("kind") == kind)


def shape(obj: dict[str, Any]) -> tuple[dict[str, int], int | None]:
    """({role: pods}, gang minimum) as the shared walker sees ``obj``."""
    ts = pod_templates(obj)
    assert ts is not None
    g = gang(obj, ts)
    return {t.role: t.replicas for t in ts}, (g.min_count if g else None)


def simulate(text: str) -> Workloads:
    result = parse_text(text, "test.yaml")
    assert not result.errors
    return expand(result.documents)


def pod_names(w: Workloads) -> list[str]:
    return [p.meta.name for s in w.sets for p in s.pods()]


# --- MPIJob v2beta1 ---------------------------------------------------------------------------------------------


def test_mpijob_at_startup_counts_the_launcher_in_the_gang():
    obj = workload("mpijob-tf-benchmarks.yaml", "MPIJob")
    assert shape(obj) == ({"Launcher": 1, "Worker": 2}, 3)  # mpi-operator: NUM(workers) + 1


def test_mpijob_wait_for_workers_ready_leaves_the_launcher_out_of_the_gang():
    obj = workload("mpijob-tf-benchmarks.yaml", "MPIJob")
    obj["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    ts = pod_templates(obj)
    assert ts is not None
    launcher = next(t for t in ts if t.role == "Launcher")
    assert launcher.after == "Worker"
    g = gang(obj, ts)
    assert g is not None
    assert g.min_count == 2
    assert g.problem is None


def test_mpijob_wait_for_workers_ready_with_a_min_available_counting_the_launcher_is_a_dead_gang():
    obj = workload("mpijob-tf-benchmarks.yaml", "MPIJob")
    obj["spec"]["launcherCreationPolicy"] = "WaitForWorkersReady"
    obj["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 3}
    ts = pod_templates(obj)
    assert ts is not None
    g = gang(obj, ts)
    assert g is not None
    assert g.problem is not None
    assert "never start" in g.problem


def test_mpijob_simulated_launcher_waits_for_its_workers():
    text = (
        (DATA / "mpijob-tf-benchmarks.yaml")
        .read_text()
        .replace("spec:\n", "spec:\n  launcherCreationPolicy: WaitForWorkersReady\n", 1)
    )
    w = simulate(text)
    assert w.gangs == {"default/tensorflow-benchmarks": 2}
    launcher = [k for k in w.after]
    assert launcher == ["default/tensorflow-benchmarks-launcher-0"]
    assert w.after[launcher[0]][0] == (
        "default/tensorflow-benchmarks-worker-0",
        "default/tensorflow-benchmarks-worker-1",
    )


def test_mpijob_run_launcher_as_worker_keeps_the_pod_count():
    obj = workload("mpijob-pi.yaml", "MPIJob")
    obj["spec"]["runLauncherAsWorker"] = True
    assert shape(obj) == ({"Launcher": 1, "Worker": 2}, 3)


# --- training-operator ------------------------------------------------------------------------------------------


def test_pytorchjob_elastic_gang_is_min_replicas():
    obj = workload("pytorchjob-elastic-imagenet.yaml", "PyTorchJob")
    roles, minimum = shape(obj)
    assert roles == {"Worker": 2}  # pods from spec replicas; the HPA moves them within [1, 3]
    assert minimum is None  # minReplicas 1: torchrun starts with one worker, no gang of several


def test_pytorchjob_elastic_gang_with_min_replicas_two():
    obj = workload("pytorchjob-elastic-imagenet.yaml", "PyTorchJob")
    obj["spec"]["elasticPolicy"]["minReplicas"] = 2
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 3
    assert shape(obj) == ({"Worker": 3}, 2)


def test_tfjob_and_paddlejob_gang_is_the_sum_of_replicas():
    assert shape(workload("tfjob-dist-mnist.yaml", "TFJob")) == ({"Chief": 1, "PS": 1, "Worker": 2}, 4)
    assert shape(workload("paddlejob-simple-gpu.yaml", "PaddleJob")) == ({"Worker": 2}, 2)


# --- Volcano, JobSet, LWS, Ray, TrainJob, Kueue ---------------------------------------------------------------------


def test_volcano_job_min_available_and_default():
    obj = workload("volcano-tf-example-gpu.yaml", "Job")
    assert shape(obj) == ({"ps": 1, "worker": 3}, 4)
    del obj["spec"]["minAvailable"]
    assert shape(obj) == ({"ps": 1, "worker": 3}, 4)  # webhook default: sum of task replicas
    obj["spec"]["minAvailable"] = 1
    assert shape(obj)[1] is None


def test_jobset_depends_on_creates_jobs_in_turn():
    obj = workload("jobset-depends-on.yaml", "JobSet")
    ts = pod_templates(obj)
    assert ts is not None
    assert [(t.role, t.replicas, t.after) for t in ts] == [
        ("initializer", 1, None),
        ("launcher", 1, "initializer"),
        ("worker", 4, "launcher"),
    ]
    assert gang(obj, ts) is None  # one pod exists at start: nothing to gang


def test_lws_replicas_times_size_each_group_its_own_gang():
    obj = workload("lws-vllm-gpu.yaml", "LeaderWorkerSet")
    ts = pod_templates(obj)
    assert ts is not None
    assert sum(t.replicas for t in ts) == 4  # replicas 2 x size 2
    g = gang(obj, ts)
    assert g is not None
    assert g.per_group
    assert g.min_count == 2
    w = simulate((DATA / "lws-vllm-gpu.yaml").read_text())
    assert sorted(pod_names(w)) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"]
    assert w.gangs == {"default/vllm-0": 2, "default/vllm-1": 2}


def test_lws_without_leader_template_and_leader_ready():
    text = (DATA / "lws-sample.yaml").read_text()
    w = simulate(text)
    assert len(pod_names(w)) == 12  # replicas 3 x size 4
    assert w.gangs == {f"default/leaderworkerset-sample-{g}": 4 for g in range(3)}
    obj = workload("lws-sample.yaml", "LeaderWorkerSet")
    obj["spec"]["startupPolicy"] = "LeaderReady"
    ts = pod_templates(obj)
    assert ts is not None
    assert gang(obj, ts) is None  # LWS's own PodGroup is minMember 1 then


def test_raycluster_autoscaler_clamps_replicas():
    obj = workload("raycluster-autoscaler.yaml", "RayCluster")
    roles, minimum = shape(obj)
    assert sum(roles.values()) == 1
    assert roles["head"] == 1
    assert minimum is None
    obj["metadata"].setdefault("labels", {})["ray.io/gang-scheduling-enabled"] = "true"
    obj["spec"]["workerGroupSpecs"][0]["replicas"] = 20  # above maxReplicas: KubeRay creates 10
    assert shape(obj)[1] == 11


def test_rayjob_cluster_spec():
    obj = workload("rayjob-sample.yaml", "RayJob")
    roles, _ = shape(obj)
    assert roles["head"] == 1
    assert sum(roles.values()) == 2


def test_trainjob_runs_its_runtime_jobset_with_num_nodes():
    text = (DATA / "trainer-runtime-torch-distributed.yaml").read_text() + "\n---\n"
    text += (DATA / "trainjob-multi-node.yaml").read_text()
    w = simulate(text)
    assert len(pod_names(w)) == 3  # numNodes 3 on the runtime's `node` job
    assert w.gangs == {"default/multi-node-example": 3}


def test_trainjob_without_its_runtime_is_reported():
    w = simulate((DATA / "trainjob-multi-node.yaml").read_text())
    assert not w.sets
    assert any("ClusterTrainingRuntime torch-distributed is not in the input" in s.reason for s in w.skipped)


def test_kueue_job_is_simulated_as_admitted_and_a_plain_suspended_job_is_not():
    obj = workload("kueue-sample-job.yaml", "Job")
    assert queue_name(obj) == "user-queue"
    assert suspended(obj) is None
    del obj["metadata"]["labels"]
    assert suspended(obj) is not None
    w = simulate((DATA / "kueue-sample-job.yaml").read_text())
    assert len(pod_names(w)) == 3
    assert any("Kueue LocalQueue user-queue" in n for n in w.notes)


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.yaml")))
def test_every_operator_example_names_its_source_and_licence(name: str):
    head = (DATA / name).read_text().splitlines()[:2]
    assert head[0].startswith("# source: github.com/")
    assert "@" in head[0]
    assert head[1].startswith("# licence: ")


# --- the scheduler honours creation order and per-group gangs ------------------------------------------------------


def _placed(text: str, nodes: str) -> dict[str, str | None]:
    from tests.unit.simulate.helpers import run

    res = run(text, nodes=nodes, modes=("dra",)).results["dra"]
    return {p.name: (p.node or p.reason) for p in res.pods}


def test_wait_for_workers_ready_launcher_is_not_created_when_workers_cannot_start():
    text = (
        (DATA / "mpijob-tf-benchmarks.yaml")
        .read_text()
        .replace("spec:\n", "spec:\n  launcherCreationPolicy: WaitForWorkersReady\n", 1)
    )
    got = _placed(text, "1x2xA100-80GB")  # 2 workers x 1 GPU fit: the launcher follows
    assert set(got.values()) == {"a100-80gb-0"}
    got = _placed(text.replace("replicas: 2", "replicas: 3"), "1x2xA100-80GB")  # 3 workers cannot
    assert "not created yet" in str(got["tensorflow-benchmarks-launcher-0"])
    assert all("gang" in str(v) for k, v in got.items() if "worker" in k)


def test_lws_groups_are_placed_group_by_group():
    text = (DATA / "lws-vllm-gpu.yaml").read_text()  # each pod: 8 GPUs and 1124Gi, one node
    got = _placed(text, "4x8xH100-80GB")
    assert all(str(v).startswith("h100") for v in got.values())
    got = _placed(text, "3x8xH100-80GB")  # group 0 whole, group 1 cannot be placed whole
    assert str(got["vllm-0"]).startswith("h100")
    assert str(got["vllm-0-1"]).startswith("h100")
    assert "gang default/vllm-1" in str(got["vllm-1"])
    assert "gang default/vllm-1" in str(got["vllm-1-1"])


# --- hostile shapes ---------------------------------------------------------------------------------------------------

_KINDS = [
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("batch.volcano.sh/v1alpha1", "Job"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
    ("ray.io/v1", "RayCluster"),
    ("ray.io/v1", "RayJob"),
    ("batch/v1", "Job"),
    ("apps/v1", "Deployment"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
]
_FIELDS = [
    *(
        "spec",
        "template",
        "replicas",
        "parallelism",
        "completions",
        "tasks",
        "minAvailable",
        "replicatedJobs",
    ),
    *(
        "dependsOn",
        "name",
        "leaderWorkerTemplate",
        "size",
        "leaderTemplate",
        "workerTemplate",
        "startupPolicy",
    ),
    *("headGroupSpec", "workerGroupSpecs", "minReplicas", "maxReplicas", "numOfHosts", "rayClusterSpec"),
    *(
        "pytorchReplicaSpecs",
        "mpiReplicaSpecs",
        "Worker",
        "Launcher",
        "elasticPolicy",
        "runPolicy",
        "suspend",
    ),
    *(
        "launcherCreationPolicy",
        "schedulingPolicy",
        "metadata",
        "labels",
        "trainer",
        "numNodes",
        "containers",
    ),
]
_value = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-2, 9), st.text(max_size=5), st.just("WaitForWorkersReady")
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_FIELDS), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(_KINDS), spec=_value, runtime=_value)
@example(kind=_KINDS[0], spec={"pytorchReplicaSpecs": {"Worker": {"replicas": -2}}}, runtime=None)
@example(kind=_KINDS[2], spec={"tasks": [{"replicas": -1, "template": {}}]}, runtime=None)
# a runtime template whose spec is no mapping
@example(kind=_KINDS[0], spec=None, runtime={"template": {"spec": True}})
def test_walker_never_crashes_on_malformed_workloads(kind, spec, runtime):
    obj = {"apiVersion": kind[0], "kind": kind[1], "metadata": {"name": "w"}, "spec": spec}
    ts = pod_templates(obj)
    if ts is not None:
        assert all(t.replicas >= 0 for t in ts)
        g = gang(obj, ts)
        assert g is None or g.min_count >= 0
    suspended(obj)
    trainjob_jobset(obj, {"spec": runtime})


def test_rayjob_submitter_pod_follows_the_cluster():
    obj = workload("rayjob-sample.yaml", "RayJob")
    obj["spec"]["submitterPodTemplate"] = {  # the sample's commented-out submitterPodTemplate
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "submitter", "image": "rayproject/ray:2.52.0"}],
        }
    }
    ts = pod_templates(obj)
    assert ts is not None
    sub = [t for t in ts if t.role == "submitter"]
    assert len(sub) == 1
    assert sub[0].after == "head"
    obj["spec"]["submissionMode"] = "HTTPMode"
    assert not [t for t in pod_templates(obj) or [] if t.role == "submitter"]


def test_volcano_default_min_available_is_the_sum_of_task_minimums():
    obj = workload("volcano-tf-example-gpu.yaml", "Job")
    del obj["spec"]["minAvailable"]
    obj["spec"]["tasks"][1]["minAvailable"] = 2  # workers: 3 replicas, 2 enough to start
    assert shape(obj) == ({"ps": 1, "worker": 3}, 3)
    obj["spec"]["tasks"][1]["dependsOn"] = {"name": ["ps"]}
    ts = pod_templates(obj)
    assert ts is not None
    assert ts[1].after == "ps"
