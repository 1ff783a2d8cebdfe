"""A JobSet under KAI is the gang KAI's pod-grouper makes of it (kai-scheduler/KAI-Scheduler v0.17.0
jobset_grouper.go), not replicas x parallelism of every replicatedJob: the JobSet's kai.scheduler/batch-min-member
says how many replicatedJobs must start, a replicatedJob template's says how many pods of each replica."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.k8s import kaigangs

JOBSET = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "jobset--paralleljobs.yaml"
KEY = "kai.scheduler/batch-min-member"


def _jobset(tmp_path: Path, *, on_jobset: str | None = None, on_workers: str | None = None) -> Path:
    """The JobSet project's paralleljobs example (workers: 1 Job of 4 pods; driver: 1 Job of 1 pod), each pod
    asking for one GPU, scheduled by KAI."""
    js = yaml.safe_load(JOBSET.read_text())
    for rj in js["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]["spec"]
        pod["schedulerName"] = "kai-scheduler"
        pod["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    if on_jobset is not None:
        js["metadata"]["annotations"] = {KEY: on_jobset}
    if on_workers is not None:
        js["spec"]["replicatedJobs"][0]["template"]["metadata"] = {"annotations": {KEY: on_workers}}
    f = tmp_path / "jobset.yaml"
    f.write_text(yaml.safe_dump(js))
    return f


def _placed(f: Path, nodes: str) -> tuple[int, int]:
    r = CliRunner().invoke(cli, ["simulate", str(f), "--nodes", nodes, "--mode", "dra", "-o", "json"])
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["modes"]["dra"]
    return m["placed"], m["pending"]


def test_kais_default_needs_every_replicated_job(tmp_path: Path) -> None:
    f = _jobset(tmp_path)
    assert _placed(f, "1x4xT4") == (0, 5)
    assert _placed(f, "1x8xT4") == (5, 0)


def test_the_jobsets_min_member_is_a_count_of_replicated_jobs(tmp_path: Path) -> None:
    """min-member 1: one replicatedJob complete starts the group; 4 GPUs run the 4 workers."""
    assert _placed(_jobset(tmp_path, on_jobset="1"), "1x4xT4") == (4, 1)


def test_a_templates_min_member_sizes_each_replica(tmp_path: Path) -> None:
    """workers' template says 2 of its 4 pods: the gang is 2 workers + the driver."""
    f = _jobset(tmp_path, on_workers="2")
    assert _placed(f, "1x2xT4") == (0, 5)
    assert _placed(f, "1x3xT4") == (3, 2)


def test_an_invalid_min_member_makes_no_pod_group(tmp_path: Path) -> None:
    js = yaml.safe_load(_jobset(tmp_path, on_jobset="two").read_text())
    gang = kaigangs.jobset_gang(js)
    assert gang is not None
    assert gang.problem
    assert "refuses it and makes no PodGroup" in gang.problem


def test_not_under_kai_the_jobset_stays_as_it_was() -> None:
    js = yaml.safe_load(JOBSET.read_text())
    assert not kaigangs.under_kai(js)
    assert kaigangs.jobset_gang(js) is None
