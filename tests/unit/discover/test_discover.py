"""``kubedra discover``: the slices for a node read from nvidia-smi XML are exactly the catalogue's for that
GPU inventory, with the node's real identities (UUIDs, PCI bus IDs, minor numbers)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubedra.vendors.nvidia import discover as build
from kubedra.vendors.nvidia import dra, identity, inventory, models
from kubedra.vendors.nvidia import driver_releases as dr

from .helpers import run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia-smi"
A100 = FIXTURES / "a100-80gb-x8-mig.xml"
H100 = FIXTURES / "h100-80gb-x8.xml"
H200 = FIXTURES / "h200-x8-mixed.xml"


def discover(xml: Path, *args: str) -> list[dict[str, Any]]:
    res = run("discover", "--nvidia-smi-xml", str(xml), "--node-name", "n1", *args)
    assert res.exit_code == 0, res.output
    return yaml.safe_load(res.stdout)["items"]


def slices(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == "ResourceSlice"]


def devices(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for s in slices(objs) for d in s["spec"].get("devices") or []}


def with_real_uuids(expected: list[dict[str, Any]], inv: inventory.NodeInventory) -> list[dict[str, Any]]:
    """The catalogue's objects with its stand-in GPU UUIDs replaced by the inventory's."""
    text = json.dumps(expected)
    for i, g in enumerate(sorted(inv.gpus, key=lambda g: g.minor)):
        text = text.replace(identity.gpu_uuid("n1", i), g.uuid)
    return json.loads(text)


def test_full_gpus_match_the_catalogue() -> None:
    inv = inventory.read_xml(str(H100))
    assert (inv.driver_version, inv.cuda_version, len(inv.gpus)) == ("580.95.05", "13.0", 8)
    assert inv.gpus[0].bus_id == "0000:18:00.0"
    assert inv.gpus[0].pci_device_id == "0x233010DE"
    got = discover(H100)
    driver = dra.DriverInfo("580.95.05", "13.0")
    expected = dra.device_classes("1.37") + dra.dra_objects(
        "n1", "H100-80GB", 8, "full", "1.37", driver=driver
    )
    assert got == with_real_uuids(expected, inv)
    dev = devices(got)["gpu-3"]["attributes"]
    assert dev["uuid"]["string"] == inv.gpus[3].uuid
    assert dev["resource.kubernetes.io/pciBusID"]["string"] == "0000:5d:00.0"
    assert dev["resource.kubernetes.io/pcieRoot"]["string"] == "pci0000:5a"  # DGX H100 topology


def test_static_mig_matches_the_catalogue_layout() -> None:
    inv = inventory.read_xml(str(A100))
    got = discover(A100)
    layout = "/".join(["all-balanced"] * 7 + ["all-enabled"])
    driver = dra.DriverInfo("580.95.05", "13.0")
    expected = dra.device_classes("1.37") + dra.dra_objects(
        "n1", "A100-80GB", 8, f"mig-static:{layout}", "1.37", driver=driver
    )
    assert got == with_real_uuids(expected, inv)
    names = sorted(devices(got))
    assert len(names) == 7 * 4
    assert "gpu-0-mig-3g40gb-9-4" in names
    assert "gpu-0-mig-1g10gb-19-0" in names
    assert not any(n.startswith("gpu-7") for n in names)  # MIG on, no instance: nothing to publish


def test_mixed_h200_real_minors_bus_ids_and_unknown_roots() -> None:
    inv = inventory.read_xml(str(H200))
    got = discover(H200)
    devs = devices(got)
    full = sorted(n for n in devs if re.fullmatch(r"gpu-\d", n))
    assert full == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert sum(1 for n in devs if "-mig-3g71gb-" in n) == 2
    assert sum(1 for n in devs if "-mig-1g18gb-" in n) == 14
    by_minor = {g.minor: g for g in inv.gpus}
    # minor 2 sits on the first bus: names follow the driver's minor numbers, not the order in the file
    assert devs["gpu-2"]["attributes"]["resource.kubernetes.io/pciBusID"]["string"] == "0000:1b:00.0"
    assert devs["gpu-2"]["attributes"]["uuid"]["string"] == by_minor[2].uuid
    mig = next(d for n, d in devs.items() if n.startswith("gpu-6-mig-1g18gb"))
    assert mig["attributes"]["parentUUID"]["string"] == by_minor[6].uuid
    assert all("resource.kubernetes.io/pcieRoot" not in d["attributes"] for d in devs.values())
    assert all(d["attributes"]["driverVersion"]["version"] == "570.133.20" for d in devs.values())
    # the same devices as the catalogue publishes for that layout, apart from identities
    driver = dra.DriverInfo("570.133.20", "12.8")
    layout = "all-disabled/all-disabled/all-disabled/all-disabled/3g.71gb,4g.71gb/3g.71gb,4g.71gb/1g.18gb*7/1g.18gb*7"
    ref = dra.dra_objects("n1", "H200-141GB", 8, f"mig-static:{layout}", "1.37", driver=driver)
    assert sorted(devs) == sorted(d["name"] for s in ref for d in s["spec"]["devices"])


def test_dynamic_mig_counter_sets() -> None:
    got = discover(H100, "--mode", "mig-dynamic", "--target-version", "1.35")
    sl = slices(got)
    assert len(sl) == 9
    assert "sharedCounters" in sl[0]["spec"]
    assert len(devices(got)) == 8 * 26
    # each GPU's devices consume its own counter set
    d = devices(got)["gpu-5-mig-1g10gb-19-3"]
    assert d["consumesCounters"][0]["counterSet"] == "gpu-5-counter-set"
    assert d["attributes"]["parentUUID"]["string"] == inventory.read_xml(str(H100)).gpus[5].uuid


def test_output_feeds_the_simulator(tmp_path: Path) -> None:
    from kubedra.model.inventory import build_inventory
    from kubedra.simulate.cluster import DRA, ClusterOptions, build_cluster
    from kubedra.sources import files

    out = tmp_path / "node.yaml"
    res = run("discover", "--nvidia-smi-xml", str(A100), "--node-name", "a100-node", "--with-node")
    assert res.exit_code == 0
    out.write_text(res.stdout)
    inv = build_inventory(files.load([str(out)]).documents)
    cluster = build_cluster(inv, ClusterOptions(modes=(DRA,)))
    assert cluster.views[DRA].physical_gpus() == {"a100-node": 7}  # GPU 7 has MIG on and no instance


def _edit(tmp_path: Path, src: Path, fn: Any) -> Path:
    p = tmp_path / src.name
    p.write_text(fn(src.read_text()))
    return p


@pytest.mark.parametrize(
    ("edit", "args", "message"),
    [
        (
            lambda t: t.replace("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090").replace(
                "233010DE", "268410DE"
            ),
            (),
            "not in kubedra's catalogue",
        ),
        (
            # an A10 vGPU profile keeps the A10's PCI device ID (Azure NV72ads_A10_v5 "NVIDIA A10-24Q",
            # pci_id 0x223610DE in mlcommons inference results' custom systems) with a fraction of its memory
            lambda t: t.replace("NVIDIA H100 80GB HBM3", "NVIDIA A10-24Q").replace("233010DE", "223610DE"),
            (),
            "that PCI device is NVIDIA A10 (A10-24GB) there, but NVML names this one 'NVIDIA A10-24Q'",
        ),
        (lambda t: t.replace("</nvidia_smi_log>", ""), (), "not valid XML"),
        (lambda t: t.replace("<uuid>", "<uuidx>", 1).replace("</uuid>", "</uuidx>", 1), (), "missing <uuid>"),
        (lambda t: t.replace("nvidia_smi_log", "other"), (), "not nvidia-smi -q -x output"),
        (lambda t: t, ("--mode", "full", "--nvidia-smi-xml", str(A100)), "MIG is enabled"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, edit: Any, args: tuple[str, ...], message: str) -> None:
    path = _edit(tmp_path, H100, edit)
    argv = ["discover", "--node-name", "n1", *(args or ("--nvidia-smi-xml", str(path)))]
    res = run(*argv)
    assert res.exit_code == 2, res.output
    assert message in res.stderr


def test_board_recognised_by_pci_id_and_name(tmp_path: Path) -> None:
    # NVIDIA A10 as nvidia-smi -q names it (thamada/gls gls/A10_smi.py: Device Id 0x223610DE)
    path = _edit(
        tmp_path,
        H100,
        lambda t: t.replace("NVIDIA H100 80GB HBM3", "NVIDIA A10").replace("233010DE", "223610DE"),
    )
    devs = devices(discover(path, "--mode", "full"))
    assert {d["attributes"]["productName"]["string"] for d in devs.values()} == {"NVIDIA A10"}
    assert {d["capacity"]["memory"]["value"] for d in devs.values()} == {"23028Mi"}


def test_needs_exactly_one_source() -> None:
    assert run("discover").exit_code == 2
    assert run("discover", "--nvml", "--nvidia-smi-xml", str(H100)).exit_code == 2


def test_profile_recognised_from_engines_and_memory() -> None:
    a100 = models.get_model("A100-80GB")
    p10 = a100.profile("1g.10gb")
    inst = inventory.MigInstance(
        1,
        0,
        p10.multiprocessors,
        p10.copy_engines,
        p10.encoders,
        p10.decoders,
        p10.ofa_engines,
        p10.jpeg_engines,
        9700,
    )
    assert build.match_profile(a100, inst, "x").name == "1g.10gb"
    p20 = a100.profile("1g.20gb")
    inst20 = inventory.MigInstance(
        1,
        0,
        p20.multiprocessors,
        p20.copy_engines,
        p20.encoders,
        p20.decoders,
        p20.ofa_engines,
        p20.jpeg_engines,
        19900,
    )
    assert build.match_profile(a100, inst20, "x").name == "1g.20gb"
    # NVML's profile ID wins
    by_id = inventory.MigInstance(1, 0, 0, 0, 0, 0, 0, 0, 0, placement_start=4, profile_id=9)
    assert build.match_profile(a100, by_id, "x").name == "3g.40gb"


def test_nvml_placements_and_uuids_are_used() -> None:
    inv = inventory.read_xml(str(A100))
    g = inv.gpus[0]
    p = models.get_model("A100-80GB").profile("3g.40gb")
    g.mig = [
        inventory.MigInstance(
            1,
            0,
            p.multiprocessors,
            p.copy_engines,
            p.encoders,
            p.decoders,
            p.ofa_engines,
            p.jpeg_engines,
            p.memory_mib,
            placement_start=0,
            profile_id=9,
            uuid="MIG-real-uuid",
        )
    ]
    found = build.discover(inv, "n1", "auto", "1.37", include_classes=False)
    devs = {d["name"]: d for s in found.objects for d in s["spec"].get("devices") or []}
    assert devs["gpu-0-mig-3g40gb-9-0"]["attributes"]["uuid"]["string"] == "MIG-real-uuid"


@pytest.mark.skipif(not os.path.exists("/dev/nvidiactl"), reason="needs an NVIDIA GPU and driver (NVML)")
def test_nvml_on_a_gpu_machine() -> None:  # pragma: no cover - run on a GPU machine
    pytest.importorskip("pynvml")
    inv = inventory.read_nvml()
    found = build.discover(inv, "gpu-host", "auto", "1.37")
    assert len(inv.gpus) >= 1
    assert slices(found.objects)


def test_driver_version_publishes_that_releases_attributes_and_names() -> None:
    """Before: discover had no --driver-version and published v0.4/v0.5's names for every release; a v25.3.x node
    publishes index, minor, pcieBusID and parentIndex, and MIG devices named gpu-<minor>-mig-<id>-<start>-<size>
    (deviceinfo.go @v25.3.0)."""
    inv = inventory.read_xml(str(A100))
    old = devices(discover(A100, "--driver-version", "v25.3.2"))
    new = devices(discover(A100))
    mig_old = next(d for n, d in old.items() if "-mig-" in n)
    assert re.fullmatch(r"gpu-\d+-mig-\d+-\d+-\d+", mig_old["name"]), mig_old["name"]
    assert {"index", "parentIndex", "pcieBusID"} <= set(mig_old["attributes"])
    assert "resource.kubernetes.io/pciBusID" not in mig_old["attributes"]
    assert mig_old["attributes"]["parentUUID"]["string"] in {g.uuid for g in inv.gpus}
    mig_new = next(d for n, d in new.items() if "-mig-" in n)
    assert not {"index", "parentIndex", "pcieBusID", "minor"} & set(mig_new["attributes"])
    # the release's schema is the whole truth: nothing outside it
    kinds = dr.device_kinds("v25.3.2")
    for d in old.values():
        kind = d["attributes"]["type"]["string"]
        assert set(d["attributes"]) <= set(kinds[kind]["attributes"]), d["name"]


def test_driver_version_full_gpus_carry_the_real_minor() -> None:
    got = devices(discover(H100, "--driver-version", "25.3.0"))
    inv = inventory.read_xml(str(H100))
    gpu3 = got["gpu-3"]["attributes"]
    assert gpu3["minor"] == {"int": sorted(inv.gpus, key=lambda g: g.minor)[3].minor}
    assert gpu3["pcieBusID"]["string"] == "0000:5d:00.0"
    assert "addressingMode" not in gpu3


def test_driver_version_device_classes_are_that_charts() -> None:
    """v25.8.x's chart installs no vfio.gpu.nvidia.com and never sets extendedResourceName (templates @v25.8.1)."""
    old = {
        o["metadata"]["name"]: o
        for o in discover(H100, "--driver-version", "v25.8.1", "--target-version", "1.37")
    }
    new = {o["metadata"]["name"]: o for o in discover(H100, "--target-version", "1.37")}
    assert "vfio.gpu.nvidia.com" not in old
    assert "vfio.gpu.nvidia.com" in new
    assert "extendedResourceName" not in old["gpu.nvidia.com"]["spec"]
    assert new["gpu.nvidia.com"]["spec"]["extendedResourceName"] == "nvidia.com/gpu"


def test_driver_version_without_dynamic_mig_is_refused() -> None:
    res = run(
        "discover", "--nvidia-smi-xml", str(H100), "--mode", "mig-dynamic", "--driver-version", "v25.8.1"
    )
    assert res.exit_code == 2, res.output
    assert "has no DynamicMIG" in res.stderr, res.output


def test_unknown_driver_version_exits_2_naming_the_known() -> None:
    res = run("discover", "--nvidia-smi-xml", str(H100), "--driver-version", "v9.9.9")
    assert res.exit_code == 2, res.output
    assert "known: v25.3.0" in res.stderr, res.output
    assert "v0.5.0" in res.stderr, res.output
    assert res.stdout == ""
