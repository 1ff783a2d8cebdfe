"""Workload expansion: names, replica counts, gangs, PodGroups and precise skip reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.errors import InputError
from kubedra.model.objects import Node, ObjectMeta, Taint
from kubedra.scheduler.workloads import expand
from kubedra.simulate.inputs import load_inputs
from kubedra.sources.files import parse_text

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def docs(text: str):
    result = parse_text(text, "test.yaml")
    assert not result.errors, result.errors
    return result.documents


def names(w):
    return [p.meta.name for s in w.sets for p in s.pods()]


CONTAINER = """
        containers:
        - name: c
          image: x
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def test_deployment_replicas_and_deterministic_names():
    w = expand(
        docs(
            """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}, annotations: {kubedra.io/gpu-memory: 10Gi}}
    spec:"""
            + CONTAINER
        )
    )
    assert names(w) == ["web-0", "web-1", "web-2"]
    pods = w.sets[0].pods()
    assert all(p.meta.namespace == "prod" for p in pods)
    assert pods[1].meta.annotations["kubedra.io/gpu-memory"] == "10Gi"
    assert pods[0].containers is pods[2].containers  # one parsed template, shared


@pytest.mark.parametrize(
    ("parallelism", "completions", "expected"),
    [(None, None, 1), (4, None, 4), (4, 2, 2), (None, 5, 1), (0, 3, 0)],
)
def test_job_parallelism_capped_by_completions(parallelism, completions, expected):
    spec = ""
    if parallelism is not None:
        spec += f"  parallelism: {parallelism}\n"
    if completions is not None:
        spec += f"  completions: {completions}\n"
    w = expand(
        docs(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
            + spec
            + "  template:\n    spec:\n        restartPolicy: Never"  # else the apiserver refuses the Job
            + CONTAINER
        )
    )
    assert len(names(w)) == expected


def test_kubeflow_roles_and_gang_from_sum_of_replicas():
    w = expand(
        docs(
            """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: train}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:"""
            + CONTAINER.replace("        ", "          ")
            + """    Worker:
      replicas: 2
      template:
        spec:"""
            + CONTAINER.replace("        ", "          ")
        )
    )
    assert names(w) == ["train-master-0", "train-worker-0", "train-worker-1"]
    assert w.gangs == {"default/train": 3}
    assert all(p.scheduling_group == "train" for s in w.sets for p in s.pods())


def test_kubeflow_min_available_is_the_gang_size():
    w = expand(
        docs(
            """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf, namespace: ml}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 2}}
  tfReplicaSpecs:
    Worker:
      replicas: 3
      template:
        spec:"""
            + CONTAINER.replace("        ", "          ")
        )
    )
    assert w.gangs == {"ml/tf": 2}
    assert "minAvailable" in w.gang_sources["ml/tf"]


def test_podgroup_objects_and_scheduling_group_links():
    w = expand(
        docs(
            """
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: ns}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: b, namespace: ns}
spec: {schedulingPolicy: {basic: {}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  schedulingGroup: {podGroupName: g}
  containers: [{name: c, image: x}]
"""
        )
    )
    assert w.gangs == {"ns/g": 2}
    assert w.podgroups == {"ns/g", "ns/b"}
    assert w.sets[0].template.scheduling_group == "g"


def test_v1alpha1_workload_pod_groups_and_workload_ref():
    w = expand(
        docs(
            """
apiVersion: scheduling.k8s.io/v1alpha1
kind: Workload
metadata: {name: wl}
spec:
  podGroups:
  - {name: workers, policy: {gang: {minCount: 3}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  workloadRef: {name: wl, podGroup: workers}
  containers: [{name: c, image: x}]
"""
        )
    )
    assert w.gangs == {"default/wl/workers": 3}
    assert w.sets[0].template.scheduling_group == "wl/workers"


def test_daemonset_one_pod_per_eligible_node():
    nodes = [Node(meta=ObjectMeta(name=f"n{i}", labels={"gpu": "yes" if i < 2 else "no"})) for i in range(3)]
    nodes[1].taints = [Taint(key="dedicated", effect="NoSchedule")]
    w = expand(
        docs(
            """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm}
spec:
  template:
    spec:
      nodeSelector: {gpu: "yes"}
      containers: [{name: c, image: x}]
"""
        ),
        nodes=nodes,
    )
    (pod,) = w.sets[0].pods()
    assert pod.meta.name == "dcgm-n0"
    assert pod.affinity is not None
    term = pod.affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]
    assert term["matchFields"][0]["values"] == ["n0"]


def test_fraction_annotation_without_extended_resource_is_reported():
    w = expand(
        docs(
            """
apiVersion: v1
kind: Pod
metadata: {name: frac, annotations: {gpu-fraction: "0.5"}}
spec: {containers: [{name: c, image: x}]}
"""
        )
    )
    assert not w.sets
    (s,) = w.skipped
    assert "gpu-fraction='0.5'" in s.reason
    assert s.location is not None
    assert s.location.line == 2


def test_gpu_hidden_in_custom_resource_field_is_reported():
    w = expand(
        docs(
            """
apiVersion: example.com/v1
kind: Model
metadata: {name: m}
spec:
  serving: {gpus: 2}
"""
        )
    )
    (s,) = w.skipped
    assert "spec.serving.gpus = 2" in s.reason
    assert s.location is not None
    assert s.location.line == 6


def test_object_defined_twice_keeps_the_later_definition():
    text = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 1
  template:
    spec: {containers: [{name: c, image: x}]}
"""
    w = expand(docs(text + "---" + text.replace("replicas: 1", "replicas: 2")))
    assert names(w) == ["d-0", "d-1"]
    assert "defined again" in w.skipped[0].reason


def test_bad_quantity_in_a_template_names_the_line():
    with pytest.raises(InputError) as e:
        expand(
            docs(
                """
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits: {nvidia.com/gpu: lots}
"""
            )
        )
    assert e.value.location is not None
    assert e.value.location.line == 11
    assert "spec.template.spec.containers[0].resources.limits" in str(e.value)


def test_legacy_corpus_every_file_expands_or_is_reported():
    inputs = load_inputs([str(CORPUS / "legacy-gpu")])
    w = expand(inputs.documents)
    skipped = {
        Path(str(s.location and s.location.file)).name: s.reason for s in [*inputs.skipped, *w.skipped]
    }
    assert "a Helm template: render it first" in skipped["triton-gcp-helm-deployment-template.yaml.tpl"]
    assert "gpu-fraction" in skipped["kai-gpu-fraction-pod.yaml"]
    assert "gpu-fraction" in skipped["kuberay-raycluster-kai-gpu-fraction.yaml"]
    assert "deploymentConfig.resources.gpu" in skipped["vllm-operator-vllmruntime-cr.yaml"]
    assert "defined again" in skipped["kai-kubeflow-pytorchjob.yaml"]
    expanded = {str(s.location and s.location.file).rsplit("/", 1)[-1] for s in w.sets}
    assert expanded == {
        "device-plugin-testdata-job.yaml",
        "kai-batch-job.yaml",
        "kubeflow-pytorchjob-mnist-nccl.yaml",
        "kubeflow-tfjob-multi-worker.yaml",
        "kuberay-raycluster-kai-gpu-fraction.yaml",  # the head pod (no GPU) still runs
        "kuberay-rayjob-pytorch-distributed.yaml",
        "kuberay-rayservice-llm-serve.yaml",
        "vllm-production-stack-gpu-deployment.yaml",
        "volcano-vcjob-tf-benchmark-gpu.yaml",
    }
    all_names = names(w)
    assert "tensorflow-benchmark-gpu-worker-2" in all_names
    assert "pytorch-text-classifier-head-0" in all_names  # RayJob generateName
    assert w.gangs["default/tensorflow-benchmark-gpu"] == 4  # Volcano minAvailable
    # a Job with parallelism == completions is scheduled pod by pod (KAI: minMember 1 without batch-min-member)
    assert "default/batch-job" not in w.gangs


def test_dra_corpus_podgroup_deployments():
    inputs = load_inputs([str(CORPUS / "dra" / "example-driver-podgroup-rct-v1alpha2.yaml")])
    w = expand(inputs.documents)
    assert w.gangs == {
        "podgroup-resourceclaimtemplate/group-1": 2,
        "podgroup-resourceclaimtemplate/group-2": 2,
    }
    assert names(w) == ["group-1-0", "group-1-1", "group-2-0", "group-2-1"]
