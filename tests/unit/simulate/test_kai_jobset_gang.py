"""A JobSet under KAI is the gang KAI's pod-grouper makes of it (kai-scheduler/KAI-Scheduler v0.17.0
jobset_grouper.go), not replicas x parallelism of every replicatedJob: the JobSet's kai.scheduler/batch-min-member
says how many replicatedJobs must start, a replicatedJob template's says how many pods of each replica."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
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


def _simulated(f: Path, nodes: str) -> dict[str, Any]:
    r = CliRunner().invoke(cli, ["simulate", str(f), "--nodes", nodes, "--mode", "dra", "-o", "json"])
    assert r.exit_code == 0, r.output
    m: dict[str, Any] = json.loads(r.stdout)["modes"]["dra"]
    return m


def _placed(f: Path, nodes: str) -> tuple[int, int]:
    m = _simulated(f, nodes)
    return m["placed"], m["pending"]


def _reasons(f: Path, nodes: str) -> set[str]:
    """The pending pods' reasons, when every pod is pending (none placed)."""
    m = _simulated(f, nodes)
    assert m["placed"] == 0, m
    return {p["reason"] for p in m["pods"]}


def _job(tmp_path: Path, min_member: str) -> Path:
    """KAI's batch Job example (parallelism 3, one GPU a pod) with the given kai.scheduler/batch-min-member."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hpo", "namespace": "ml", "annotations": {KEY: min_member}},
        "spec": {
            "parallelism": 3,
            "completions": 3,
            "template": {
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "main", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}
                    ],
                }
            },
        },
    }
    f = tmp_path / "job.yaml"
    f.write_text(yaml.safe_dump(job))
    return f


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


@pytest.mark.parametrize(
    ("on_jobset", "on_workers"), [("two", None), ("0", None), ("+-1", None), (None, "-2")]
)
def test_an_invalid_min_member_keeps_every_pod_pending(
    tmp_path: Path, on_jobset: str | None, on_workers: str | None
) -> None:
    """kai-scheduler/KAI-Scheduler@d5bc503a jobset_grouper.go: a min-member that is not an int32 of at least 1 is
    an error, so pod_controller.go makes no PodGroup and the scheduler (cluster_info.go lists pods per PodGroup)
    never sees the pods: all 5 stay pending with that reason, on nodes with room for all of them."""
    reasons = _reasons(_jobset(tmp_path, on_jobset=on_jobset, on_workers=on_workers), "1x8xT4")
    assert len(reasons) == 1, reasons
    assert "refuses it and makes no PodGroup, so the pods are never scheduled" in reasons.pop()


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("two", "'two' is not a whole number"),
        ("3.0", "'3.0' is not a whole number"),
        ("2147483648", "is not a whole number"),  # over int32: strconv.ParseInt(v, 10, 32) fails
        ("-1", "the apiserver refuses KAI's PodGroup (minMember minimum 0)"),
    ],
)
def test_a_jobs_invalid_min_member_keeps_its_pods_pending(tmp_path: Path, value: str, why: str) -> None:
    """job_grouper.go calcMinMember: ParseInt(v, 10, 32) fails -> error, no PodGroup; a negative value is written
    to the PodGroup, whose CRD (minMember minimum 0) the apiserver holds it to: no PodGroup either."""
    reasons = _reasons(_job(tmp_path, value), "1x8xT4")
    assert len(reasons) == 1, reasons
    reason = reasons.pop()
    assert why in reason, reason
    assert "never scheduled" in reason


@pytest.mark.parametrize(("value", "placed"), [("0", (2, 1)), ("1", (2, 1)), ("+3", (0, 3)), ("3", (0, 3))])
def test_a_jobs_valid_min_member_is_the_gang(tmp_path: Path, value: str, placed: tuple[int, int]) -> None:
    """0 is KAI's "no gang requirement" (podgroup_types.go MinMember): pods go one by one, so two GPUs run two
    of the three; 3 (or +3, which ParseInt reads) needs all three together."""
    assert _placed(_job(tmp_path, value), "1x2xT4") == placed


def test_not_under_kai_the_jobset_stays_as_it_was() -> None:
    js = yaml.safe_load(JOBSET.read_text())
    assert not kaigangs.under_kai(js)
    assert kaigangs.jobset_gang(js) is None
