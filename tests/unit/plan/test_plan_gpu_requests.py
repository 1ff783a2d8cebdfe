"""plan reads a GPU request with the one model every verb uses (kubedra.vendors.gpurequest): a quantity
("1000m" is one GPU), zero is none, and a container the apiserver refuses (a GPU only requested, or a fraction)
never runs, so it holds no GPU and the plan says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.plan import inventory

from .helpers import run

DATA = Path(__file__).parent / "data"


def _dev_in_use(tmp_path: Path, resources: dict[str, Any], *target: str) -> tuple[float, list[str]]:
    """The dev cluster (3 GPUs in use) with one more running pod on a100-80gb-0 holding ``resources``."""
    snap = yaml.safe_load((DATA / "dev.yaml").read_text())
    snap["items"].append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "extra", "namespace": "ml"},
            "spec": {
                "nodeName": "a100-80gb-0",
                "containers": [{"name": "c", "image": "cuda", "resources": resources}],
            },
            "status": {"phase": "Running"},
        }
    )
    (tmp_path / "dev.yaml").write_text(yaml.safe_dump(snap))
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(
        "apiVersion: kubedra.io/v1alpha1\nkind: Fleet\nclusters:\n"
        "- {name: dev, snapshot: dev.yaml, distribution: kubeadm, criticality: low}\n"
    )
    res = run("plan", "-f", str(fleet_file), "-o", "json", *target)
    assert res.exit_code in (0, 1), res.output
    (cluster,) = json.loads(res.stdout)["clusters"]
    (pool,) = cluster["pools"]
    return pool["gpusInUse"], cluster["notes"]


@pytest.mark.parametrize(
    ("resources", "in_use"),
    [
        ({"limits": {"nvidia.com/gpu": "1000m"}}, 4.0),  # one GPU (was not counted: float("1000m") failed)
        ({"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2000m"}}, 5.0),
        ({"limits": {"nvidia.com/gpu": "0"}}, 3.0),
        ({"limits": {"nvidia.com/gpu": "00"}}, 3.0),
        ({"limits": {"nvidia.com/mig-7g.80gb": "1000m"}}, 4.0),
    ],
)
def test_gpu_requests_are_quantities(tmp_path: Path, resources: dict[str, Any], in_use: float) -> None:
    assert _dev_in_use(tmp_path, resources)[0] == in_use


@pytest.mark.parametrize(
    "resources",
    [
        {
            "requests": {"nvidia.com/gpu": "2"}
        },  # "Limit must be set for non overcommitable resources" (was 2 GPUs)
        {"limits": {"nvidia.com/gpu": "1.5"}},  # "must be an integer" (was 1.5 GPUs)
        {
            "limits": {"nvidia.com/gpu": "1"},
            "requests": {"nvidia.com/gpu": "2"},
        },  # requests must equal limits
    ],
)
def test_a_container_the_apiserver_refuses_holds_no_gpu_and_is_said(
    tmp_path: Path, resources: dict[str, Any]
) -> None:
    in_use, notes = _dev_in_use(tmp_path, resources)
    assert in_use == 3.0
    assert any(n.startswith("Pod ml/extra: the apiserver refuses its nvidia.com/gpu") for n in notes), notes


def test_a_containers_list_shared_by_pods_is_read_once_with_each_pods_claims() -> None:
    """Pods of a workload share one containers list when a snapshot is streamed (equal parts are one object):
    plan reads its GPUs once, and still adds each pod's own claims, and says a refusal for each pod."""
    containers = [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]
    refused = [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]
    claims = {("ml", "big"): 3}
    seen: dict[int, float | str] = {}
    with_claim = {"containers": containers, "resourceClaims": [{"name": "g", "resourceClaimName": "big"}]}
    assert inventory._pod_gpus(with_claim, claims, "ml", "1.37", seen) == 5.0
    assert inventory._pod_gpus({"containers": containers}, claims, "ml", "1.37", seen) == 2.0
    assert seen == {id(containers): 2.0}
    first = inventory._pod_gpus({"containers": refused}, claims, "ml", "1.37", seen)
    assert isinstance(first, str)
    assert "refuses" in first
    assert (
        inventory._pod_gpus(
            {"containers": refused, "resourceClaims": [{"name": "g"}]}, claims, "ml", "1.37", seen
        )
        == first
    )


def test_gpu_requests_are_read_as_the_target_release_reads_them(tmp_path: Path) -> None:
    """Past int64 a request is a different count per release (kubedra.vendors.gpurequest.device_count): plan
    reads it at --target-version, as its capacity views do. 1.37's Value() of 1e20 is 0, no GPU; 1.38's
    saturates at MaxInt64; 1Ei is refused at 1.37 (MilliValue wraps), 2^60 GPUs at 1.38."""
    big = {"limits": {"nvidia.com/gpu": "1e20"}}
    assert _dev_in_use(tmp_path, big, "--target-version", "1.37")[0] == 3.0
    assert _dev_in_use(tmp_path, big, "--target-version", "1.38")[0] == 3.0 + 9223372036854775807
    wraps = {"limits": {"nvidia.com/gpu": "1Ei"}}
    in_use, notes = _dev_in_use(tmp_path, wraps, "--target-version", "1.37")
    assert in_use == 3.0
    assert any("refuses its nvidia.com/gpu" in n for n in notes), notes
    assert _dev_in_use(tmp_path, wraps, "--target-version", "1.38")[0] == 3.0 + 2**60
