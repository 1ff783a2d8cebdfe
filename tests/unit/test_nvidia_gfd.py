"""Reading GPU Feature Discovery's Node labels back (kubedra.vendors.nvidia.gfd), on the labels kubedra's own
generator writes for each MIG strategy and on label sets seen on real nodes."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kubedra.vendors.nvidia import gfd
from kubedra.vendors.nvidia.cluster import cluster as nvidia_cluster


def _node(mode: str, strategy: str | None, spec: str = "1x8xH100-80GB") -> tuple[dict[str, str], list[str]]:
    objs: list[dict[str, Any]] = nvidia_cluster(spec, mode, "1.37", device_plugin=True, mig_strategy=strategy)
    node = next(o for o in objs if o["kind"] == "Node")
    return node["metadata"]["labels"], list(node["status"]["allocatable"])


@pytest.mark.parametrize(
    ("mode", "strategy", "gpus", "gpu_mode"),
    [
        ("full", None, 8, "full"),
        ("full", "single", 8, "full"),  # the strategy label alone is not MIG being on
        ("time-slicing:4", None, 8, "time-slicing:4"),
        ("mig-static:all-3g.40gb", "single", 8, "mig-static:all-3g.40gb"),
        ("mig-static:all-1g.10gb", "single", 8, "mig-static:all-1g.10gb"),
        ("mig-static:all-3g.40gb", "mixed", 8, "mig-static:all-3g.40gb"),
    ],
)
def test_generated_labels_read_back(mode: str, strategy: str | None, gpus: int, gpu_mode: str) -> None:
    labels, resources = _node(mode, strategy)
    assert gfd.physical_gpus(labels, resources) == gpus
    assert gfd.gpu_mode(labels, resources) == gpu_mode
    assert gfd.product_model(labels[gfd.PRODUCT]) is not None
    assert gfd.base_product(labels[gfd.PRODUCT]) == "NVIDIA-H100-80GB-HBM3"


def test_single_strategy_counts_mig_devices() -> None:
    labels, _ = _node("mig-static:all-3g.40gb", "single")
    assert labels[gfd.COUNT] == "16"
    assert gfd.single_strategy(labels)
    assert gfd.mig_profile(labels) == "3g.40gb"


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (
            {gfd.PRODUCT: "NVIDIA-A100-SXM4-40GB-MIG-INVALID", gfd.COUNT: "0"},
            "marks its MIG set-up invalid",
        ),
        (
            {gfd.PRODUCT: "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", gfd.COUNT: "16", gfd.MIG_CONFIG: "custom"},
            "nvidia.com/mig.config does not tell",
        ),
        (
            {gfd.PRODUCT: "NVIDIA-Imaginary-MIG-1g.5gb", gfd.COUNT: "7", gfd.MIG_CONFIG: "all-1g.5gb"},
            "not in kubedra's catalogue",
        ),
        (
            {
                gfd.PRODUCT: "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb",
                gfd.COUNT: "15",
                gfd.MIG_CONFIG: "all-3g.40gb",
            },
            "is no whole number of GPUs with layout 'all-3g.40gb'",
        ),
    ],
)
def test_labels_that_do_not_tell_the_gpus_say_why(labels: dict[str, str], why: str) -> None:
    got = gfd.physical_gpus(labels)
    assert isinstance(got, str)
    assert why in got


def test_no_count_label_is_none() -> None:
    assert gfd.physical_gpus({gfd.PRODUCT: "NVIDIA-L4"}) is None


@pytest.mark.parametrize("value", ["²", "٣", "1" * 5000, "-1", "8.0"])
def test_a_count_that_is_no_ascii_whole_number_is_none(value: str) -> None:
    # "²" is a digit to str.isdigit and no number to int(): it crashed simulate (ValueError, exit 3)
    assert gfd.physical_gpus({gfd.PRODUCT: "NVIDIA-H100-80GB-HBM3", gfd.COUNT: value}) is None


@pytest.mark.parametrize(
    "labels",
    [
        {gfd.PRODUCT: "NVIDIA-H100-80GB-HBM3", gfd.COUNT: "99999999999"},
        {
            gfd.PRODUCT: "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb",
            gfd.COUNT: "999999",
            gfd.MIG_CONFIG: "all-3g.40gb",
        },
    ],
)
def test_an_edited_count_is_bounded(labels: dict[str, str]) -> None:
    # a count no node holds made simulate build a slice per claimed GPU, or search layouts for ever (it hung)
    started = time.monotonic()
    got = gfd.physical_gpus(labels)
    assert isinstance(got, str)
    assert time.monotonic() - started < 5
