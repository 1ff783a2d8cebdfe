"""The NVIDIA DRA driver release table (data/nvidia-dra-driver.yaml) and its preflight."""

from __future__ import annotations

import pytest

from kubedra.vendors.nvidia import driver_releases as dr


@pytest.mark.parametrize(
    ("version", "minor", "gates", "problem"),
    [
        ("25.12.0", 37, ["MPSSupport", "DynamicMIG"], None),
        ("v0.4.0", 34, ["NVMLDeviceHealthCheck"], None),
        ("v25.8.0", 37, ["NVMLDeviceHealthCheck"], "has no feature gate NVMLDeviceHealthCheck"),
        ("v25.3.2", 31, [], "needs Kubernetes 1.32+ (cluster: 1.31)"),
        ("v1.0.0", 37, [], "not in kubedra's release table"),
        ("", 37, [], "(unknown version) is not in kubedra's release table"),
    ],
)
def test_preflight(version: str, minor: int, gates: list[str], problem: str | None) -> None:
    got = dr.preflight(version, minor, gates)
    assert (problem is None and got == []) or (problem is not None and any(problem in p for p in got)), got


def test_every_release_speaks_v1_and_the_health_taints_start_at_v0_4_0() -> None:
    for v in ("v25.3.0", "v25.8.1", "v25.12.0", "v0.4.0"):
        rel = dr.release(v)
        assert rel is not None
        assert rel["resourceAPIs"][0] == "v1"
    assert dr.release("v0.4.0")["health"] == "taints"  # type: ignore[index]
    assert dr.release("25.12.0")["health"] == "removed-from-slice"  # type: ignore[index]
    assert dr.normalise("nvcr.io/x:v25.8.1-ubi9") == "v25.8.1"


@pytest.mark.parametrize(
    ("version", "gates", "problem"),
    [
        (
            "v0.5.0",
            ["DynamicMIG", "NVMLDeviceHealthCheck"],
            "DynamicMIG and NVMLDeviceHealthCheck exclude each other",
        ),
        (
            "v0.4.1",
            ["DynamicMIG", "PassthroughSupport"],
            "DynamicMIG and PassthroughSupport exclude each other",
        ),
        ("v0.4.1", ["DeviceMetadata"], "DeviceMetadata requires PassthroughSupport"),
        ("v0.5.0", ["ConsumableShares", "DRAListTypeAttributes"], None),
        ("v0.4.1", ["ConsumableShares"], "has no feature gate ConsumableShares"),
    ],
)
def test_preflight_gates_of_the_new_releases(version: str, gates: list[str], problem: str | None) -> None:
    got = dr.preflight(version, 36, gates)
    assert (problem is None and got == []) or (problem is not None and any(problem in p for p in got)), got


def test_v0_4_1_and_v0_5_0_are_known_with_what_their_devices_publish() -> None:
    """Before: a cluster running v0.5.0 was 'not in kubedra's release table'."""
    assert dr.preflight("v0.5.0", 37) == []
    assert dr.preflight("0.4.1", 34) == []
    assert dr.newest() == "v0.5.0"
    gpu = dr.device_kinds("v0.5.0")["gpu"]
    assert gpu["driver"] == "gpu.nvidia.com"
    assert "index" not in gpu["attributes"]
    assert gpu["attributes"]["resource.kubernetes.io/numaNode"] == [
        "int",
        "ints",
    ]  # ints with DRAListTypeAttributes
    assert "numaNode" not in str(
        dr.device_kinds("v0.4.1")["vfio"]["attributes"]
    )  # VFIO had `numa` until 0.5.0
    assert dr.device_kinds("v0.4.1")["vfio"]["attributes"]["numa"] == ["int"]
    assert dr.device_kinds("v25.3.2")["gpu"]["attributes"]["index"] == ["int"]  # removed in v25.8.0
    assert set(dr.device_kinds("v0.5.0")) == {"gpu", "mig", "vfio", "channel", "daemon"}
    assert "@main" in dr.schema_source("v0.5.0")
    assert "@v0.4.1" in dr.schema_source("v0.4.1")


def test_resolve_driver_version() -> None:
    assert dr.resolve(None) == dr.with_schema()
    assert dr.resolve("0.5.0") == ["v0.5.0"]
    with pytest.raises(ValueError, match="not a release kubedra has read"):
        dr.resolve("v9.9.9")
