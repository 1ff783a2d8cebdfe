"""A (Cluster)TrainingRuntime runs no pods of its own: the TrainJobs that name it do. Kubeflow Trainer's torchtune
ClusterTrainingRuntime with a TrainJob on it was simulated right (its GPU request through the TrainJob), yet the
runtime was listed as a custom resource whose GPU request kubedra could not place, and the answer was
"incomplete" (exit 2); a namespaced TrainingRuntime the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli

RUNTIME = (
    Path(__file__).resolve().parents[2]
    / "realworld"
    / "inputs"
    / "trainer--torchtune-llama3.2-1b-runtime.yaml"
)


@pytest.mark.parametrize("kind", ["ClusterTrainingRuntime", "TrainingRuntime"])
def test_a_runtime_is_simulated_through_its_trainjob_and_is_no_gap(tmp_path: Path, kind: str) -> None:
    runtime = RUNTIME.read_text()
    if kind == "TrainingRuntime":
        runtime = runtime.replace("kind: ClusterTrainingRuntime", "kind: TrainingRuntime").replace(
            "  name: torchtune-llama3.2-1b\n", "  name: torchtune-llama3.2-1b\n  namespace: default\n", 1
        )
    (tmp_path / "runtime.yaml").write_text(runtime)
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tune, namespace: default}\n"
        f"spec:\n  runtimeRef: {{name: torchtune-llama3.2-1b, kind: {kind}}}\n"
    )
    r = CliRunner().invoke(cli, ["simulate", str(tmp_path), "--nodes", "1x8xH100-80GB", "-o", "json"])
    assert r.exit_code == 0, r.output
    dra = json.loads(r.stdout)["modes"]["dra"]
    assert (dra["placed"], dra["pending"]) == (3, 0)
    assert sum(len(p["devices"]) for p in dra["pods"]) == 2  # the runtime's node container: nvidia.com/gpu 2
