"""Selectors checked against what the NVIDIA DRA driver publishes (kubedra.cel.published), per release."""

from __future__ import annotations

import pytest

from kubedra.cel import SelectorEnvironment, published
from kubedra.vendors.nvidia import driver_releases as dr

ENV = SelectorEnvironment("1.36")


def problems(expr: str, versions: list[str] | None = None) -> list[published.Problem]:
    releases = {v: published.kinds_from(dr.device_kinds(v)) for v in versions or dr.with_schema()}
    return published.check_releases(
        ENV.compile(expr).program.source.expr, releases, hints=dr.replaced_names()
    )


def test_index_is_an_error_naming_what_is_published_and_where_it_breaks() -> None:
    (p,) = problems(
        "device.attributes['gpu.nvidia.com'].index == 0 || device.attributes['gpu.nvidia.com'].index == 2"
    )
    assert not p.warning
    assert "does not publish attribute `index`" in p.message
    assert "resource.kubernetes.io/pciBusID" in p.message
    assert "uuid" in p.message
    assert "productName" in p.message
    assert "v25.8.0" in p.message
    assert "v0.5.0" in p.message
    assert "fine at v25.3.0, v25.3.2" in p.message


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("device.attributes['gpu.nvidia.com'].driverVersion == '580.95.5'", "is a version (semver)"),
        ("device.attributes['gpu.nvidia.com'].productName.isGreaterThan(semver('1.0.0'))", "is a string"),
        ("device.attributes['gpu.nvidia.com'].profile == 3", "compared with an int"),
        ("device.capacity['gpu.nvidia.com'].vram.compareTo(quantity('1Gi')) >= 0", "capacity `vram`"),
        ("device.attributes['gpu.nvidia.com']['minor'] == 1", "attribute `minor`"),
    ],
)
def test_errors(expr: str, needle: str) -> None:
    got = problems(expr, ["v0.5.0"])
    assert len(got) == 1, got
    assert not got[0].warning, got
    assert needle in got[0].message, got


@pytest.mark.parametrize(
    "expr",
    [
        "has(device.attributes['gpu.nvidia.com'].index)",
        "device.attributes['gpu.nvidia.com'].type == 'gpu' && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
        "device.attributes['gpu.nvidia.com'].type == 'tpu'",
    ],
)
def test_warnings(expr: str) -> None:
    got = problems(expr, ["v0.5.0"])
    assert got, got
    assert all(p.warning for p in got), got


@pytest.mark.parametrize(
    "expr",
    [
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
        "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == "
        "'channel' && device.attributes['compute-domain.nvidia.com'].id == 0",
        "device.driver == 'compute-domain.nvidia.com' && device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
        "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('570.0.0'))",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        "device.capacity['gpu.nvidia.com'].memorySlice3.compareTo(quantity('1')) >= 0",
        "device.attributes['resource.kubernetes.io'].numaNode == 0",  # shared domain, driver not pinned
    ],
)
def test_the_drivers_own_device_classes_and_ordinary_selectors_pass(expr: str) -> None:
    assert problems(expr) == []


def test_numa_node_needs_v0_5_0_when_the_driver_is_pinned() -> None:
    (p,) = problems(
        "device.driver == 'gpu.nvidia.com' && device.attributes['resource.kubernetes.io'].numaNode == 0"
    )
    assert "fine at v0.5.0" in p.message
    assert (
        problems(
            "device.driver == 'gpu.nvidia.com' && device.attributes['resource.kubernetes.io'].numaNode == 0",
            ["v0.5.0"],
        )
        == []
    )


def test_vfio_devices_start_at_v25_12_0() -> None:
    (p,) = problems("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'")
    assert p.warning
    assert "v25.3.0, v25.3.2, v25.8.0, v25.8.1" in p.message
    assert "fine at v25.12.0" in p.message


def test_unpublished_key_hint_names_the_replacement_or_what_the_device_has() -> None:
    from kubedra.cel.published import unpublished_key_hint

    detail = "no such key: index. consider using CEL optional chaining (.? followed by orValue())"
    hints = {"index": "`resource.kubernetes.io/pciBusID` or `uuid`"}
    names = ["type", "uuid", "resource.kubernetes.io/pciBusID", "gpu.nvidia.com/productName"]
    got = unpublished_key_hint(detail, "gpu.nvidia.com", names, hints)
    assert got == "the driver does not publish `index`; use `resource.kubernetes.io/pciBusID` or `uuid`"
    got = unpublished_key_hint("no such key: foo", "gpu.nvidia.com", names, hints)
    assert got == "the driver does not publish `foo` (this device publishes: productName, type, uuid)"
    assert unpublished_key_hint("no such key: uuid", "gpu.nvidia.com", names, hints) is None
    assert unpublished_key_hint("division by zero", "gpu.nvidia.com", names, hints) is None
