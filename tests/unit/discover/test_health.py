"""``kubedra discover``: an unhealthy GPU in nvidia-smi XML is published with the taint the NVIDIA DRA driver's
health monitor puts on its devices (keys and effects of dra-driver-nvidia-gpu device_health.go), never
NoExecute; healthy GPUs are untouched. ``--drain-rule`` writes the operator's NoExecute DeviceTaintRule."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kubedra.vendors.nvidia import health

from .helpers import run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia-smi"
A100 = FIXTURES / "a100-80gb-x8-mig.xml"
H100 = FIXTURES / "h100-80gb-x8.xml"

# element layout of real `nvidia-smi -q -x` output (DTD nvsmi_device_v12), healthy values
HEALTHY = """<gpu_recovery_action>None</gpu_recovery_action>
<ecc_errors><volatile><sram_correctable>0</sram_correctable><sram_uncorrectable_parity>0</sram_uncorrectable_parity>
<sram_uncorrectable_secded>0</sram_uncorrectable_secded><dram_correctable>0</dram_correctable>
<dram_uncorrectable>0</dram_uncorrectable></volatile></ecc_errors>
<retired_pages><pending_blacklist>N/A</pending_blacklist><pending_retirement>N/A</pending_retirement></retired_pages>
<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>0</remapped_row_unc>
<remapped_row_pending>No</remapped_row_pending><remapped_row_failure>No</remapped_row_failure></remapped_rows>
"""


def xml_with(tmp_path: Path, src: Path, sick: dict[int, str]) -> Path:
    """The fixture with HEALTHY health elements in every <gpu>, edited for the GPUs in ``sick``."""
    parts = src.read_text().split("</gpu>")
    out = []
    for i, part in enumerate(parts[:-1]):
        block = HEALTHY
        for old, new in (sick.get(i) and [tuple(x.split("=>")) for x in sick[i].split(";")]) or []:
            assert old in block, old
            block = block.replace(old, new)
        out.append(part + block)
    p = tmp_path / src.name
    p.write_text("</gpu>".join([*out, parts[-1]]))
    return p


def discover(path: Path, *args: str) -> tuple[dict[str, Any], str]:
    res = run("discover", "--nvidia-smi-xml", str(path), "--node-name", "n1", "--no-classes", *args)
    assert res.exit_code == 0, res.output
    devs = {d["name"]: d for s in yaml.safe_load(res.stdout)["items"] for d in s["spec"].get("devices") or []}
    return devs, res.stderr


def tainted(devs: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    return {n: d["taints"] for n, d in devs.items() if d.get("taints")}


PENDING = "<remapped_row_pending>No=><remapped_row_pending>Yes"


def test_pending_row_remap_taints_that_gpu_and_no_other(tmp_path: Path) -> None:
    devs, err = discover(xml_with(tmp_path, H100, {2: PENDING}))
    assert tainted(devs) == {"gpu-2": [{"key": "gpu.nvidia.com/xid", "effect": "NoSchedule", "value": "63"}]}
    assert "GPU 2 (0000:3a:00.0): row remap pending (XID 63), needs a GPU reset" in err
    assert "NVMLDeviceHealthCheck" in err


def test_healthy_node_is_untouched(tmp_path: Path) -> None:
    devs, err = discover(xml_with(tmp_path, H100, {}))
    assert tainted(devs) == {}
    assert "taint" not in err


@pytest.mark.parametrize(
    ("edit", "taint", "why"),
    [
        (
            "<remapped_row_failure>No=><remapped_row_failure>Yes",
            {"key": "gpu.nvidia.com/xid", "effect": "NoSchedule", "value": "64"},
            "(XID 64)",
        ),
        (
            "<pending_retirement>N/A=><pending_retirement>Yes",
            {"key": "gpu.nvidia.com/xid", "effect": "NoSchedule", "value": "63"},
            "page retirement pending",
        ),
        (
            "<dram_uncorrectable>0=><dram_uncorrectable>2",
            {"key": "gpu.nvidia.com/xid", "effect": "NoSchedule"},
            "2 volatile uncorrectable ECC errors (XID 94 or 95",
        ),
        (
            "<gpu_recovery_action>None=><gpu_recovery_action>Reset",
            {"key": "gpu.nvidia.com/xid", "effect": "NoSchedule"},
            "GPU requires a reset",
        ),
        (
            "<sram_correctable>0=><sram_correctable>[GPU requires reset]",
            {"key": "gpu.nvidia.com/xid", "effect": "NoSchedule"},
            "GPU requires a reset",
        ),
    ],
)
def test_each_signal_maps_to_the_drivers_taint(
    tmp_path: Path, edit: str, taint: dict[str, str], why: str
) -> None:
    devs, err = discover(xml_with(tmp_path, H100, {5: edit}))
    assert tainted(devs) == {"gpu-5": [taint]}
    assert why in err


def test_correctable_errors_are_healthy(tmp_path: Path) -> None:
    devs, _ = discover(xml_with(tmp_path, H100, {1: "<dram_correctable>0=><dram_correctable>17"}))
    assert tainted(devs) == {}


def test_a_lost_gpu_taints_every_device(tmp_path: Path) -> None:
    path = xml_with(tmp_path, H100, {})
    text = path.read_text()
    # GPU 4 fell off the bus: nvidia-smi prints the NVML error instead of its values
    gpus = text.split("<gpu id=")
    gpus[5] = re.sub(r"<(product_name|uuid|minor_number)>[^<]*<", r"<\1>[GPU is lost]<", gpus[5])
    path.write_text("<gpu id=".join(gpus))
    devs, err = discover(path)
    assert len(devs) == 8
    assert all(
        d["taints"] == [{"key": "gpu.nvidia.com/gpu-lost", "effect": "NoSchedule"}] for d in devs.values()
    )
    assert "lost (fallen off the bus, XID 79)" in err


def test_static_mig_devices_of_the_gpu_are_tainted(tmp_path: Path) -> None:
    devs, _ = discover(xml_with(tmp_path, A100, {0: PENDING}))
    hit = tainted(devs)
    assert hit
    assert all(n.startswith("gpu-0-") for n in hit)
    assert set(hit) == {n for n in devs if n.startswith("gpu-0-")}


def test_dynamic_mig_excludes_the_health_check(tmp_path: Path) -> None:
    # DynamicMIG + NVMLDeviceHealthCheck are mutually exclusive in the driver: nothing is tainted
    devs, err = discover(xml_with(tmp_path, A100, {0: PENDING}), "--mode", "mig-dynamic")
    assert tainted(devs) == {}
    assert "mutually exclusive" in err
    assert "--drain-rule" in err


def test_no_health_taints_is_a_driver_without_the_gate(tmp_path: Path) -> None:
    devs, _ = discover(xml_with(tmp_path, H100, {2: PENDING}), "--no-health-taints")
    assert tainted(devs) == {}


def test_old_targets_say_the_gate_is_needed(tmp_path: Path) -> None:
    _, err = discover(xml_with(tmp_path, H100, {2: PENDING}), "--target-version", "1.35")
    assert "DRADeviceTaints feature gate" in err


@given(
    st.lists(st.booleans(), min_size=5, max_size=5), st.integers(0, 3), st.sampled_from(["Volta", "Hopper"])
)
def test_never_noexecute(flags: list[bool], ecc: int, arch: str) -> None:
    retirement, remap, failure, reset, lost = flags
    h = health.GpuHealth(ecc, retirement, remap, failure, reset, lost)
    t = health.xid_taint(h, arch)
    assert t is None or t.effect in ("NoSchedule", "None")
    assert (t is None) == (not ecc and not any(flags[:4]))


@pytest.mark.parametrize(
    ("xid", "effect"), [(13, "None"), (43, "None"), (109, "None"), (48, "NoSchedule"), (79, "NoSchedule")]
)
def test_xid_classification_is_the_drivers(xid: int, effect: str) -> None:
    assert health.xid_effect(xid) == effect


def test_drain_rule() -> None:
    res = run("discover", "--drain-rule", "gpu-node-3/gpu-5")
    assert res.exit_code == 0, res.output
    rule = yaml.safe_load(res.stdout)
    assert rule["apiVersion"] == "resource.k8s.io/v1"
    assert rule["kind"] == "DeviceTaintRule"
    assert rule["spec"] == {
        "deviceSelector": {"driver": "gpu.nvidia.com", "pool": "gpu-node-3", "device": "gpu-5"},
        "taint": {"key": "kubedra.io/drain", "value": "unhealthy", "effect": "NoExecute"},
    }
    old = run("discover", "--drain-rule", "gpu-node-3/gpu-5", "--target-version", "1.36", code=0)
    assert yaml.safe_load(old.stdout)["apiVersion"] == "resource.k8s.io/v1beta2"
    assert "DRADeviceTaintRules (beta) feature gate (off by default)" in old.stderr
    at_134 = run("discover", "--drain-rule", "gpu-node-3/gpu-5", "--target-version", "1.34", code=0)
    assert "needs the DRADeviceTaints (alpha) feature gate" in at_134.stderr
    assert "DRADeviceTaintRules" not in at_134.stderr  # 1.34 has no such gate


@pytest.mark.parametrize(
    "args",
    [("--drain-rule", "gpu-5"), ("--drain-rule", "Node/gpu-5"), ("--drain-rule", "n/gpu-5", "--nvml")],
)
def test_drain_rule_bad_input_exits_2(args: tuple[str, ...]) -> None:
    res = run("discover", *args)
    assert res.exit_code == 2
    assert res.stdout == ""
