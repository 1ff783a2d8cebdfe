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
        assert rel is not None and rel["resourceAPIs"][0] == "v1"
    assert dr.release("v0.4.0")["health"] == "taints"  # type: ignore[index]
    assert dr.release("25.12.0")["health"] == "removed-from-slice"  # type: ignore[index]
    assert dr.normalise("nvcr.io/x:v25.8.1-ubi9") == "v25.8.1"
