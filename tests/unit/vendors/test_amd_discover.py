"""``kubedra discover --amd-smi-json``: AMD GPUs from ``amd-smi static --json``.

The inputs are built here with the keys and shapes amd-smi writes (ROCm/amdsmi amdsmi_cli/amdsmi_commands.py
``static``: asic.market_name, bus.bdf, vram.size {value, unit: MB}, partition {compute_partition,
memory_partition, partition_id}; amdsmi_logger.py ``_print_json_output``: a list, one object per GPU, at
0ceca28f); no real capture of an MI300X node is in the repository.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubedra import vendors
from kubedra.cli import cli, main


def _gpu(
    i: int, name: str = "AMD Instinct MI300X", compute: str = "SPX", memory: str = "NPS1", mib: int = 196592
):
    return {
        "gpu": i,
        "asic": {"market_name": name, "device_id": "0x74a1", "num_compute_units": 304},
        "bus": {"bdf": f"0000:{0x0C + i:02x}:00.0"},
        "vram": {"type": "HBM", "vendor": "N/A", "size": {"value": mib, "unit": "MB"}, "bit_width": 8192},
        "partition": {"compute_partition": compute, "memory_partition": memory, "partition_id": 0},
    }


def _discover(tmp_path: Path, data: Any, *args: str) -> dict[str, Any]:
    f = tmp_path / "amd-smi.json"
    f.write_text(json.dumps(data))
    r = CliRunner().invoke(
        cli,
        ["discover", "--amd-smi-json", str(f), "--node-name", "mi300x-a", "-o", "json", *args],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_eight_whole_mi300x_become_one_slice_of_the_amd_driver(tmp_path: Path) -> None:
    doc = _discover(tmp_path, [_gpu(i) for i in range(8)])
    kinds = [o["kind"] for o in doc["items"]]
    assert kinds == ["DeviceClass", "ResourceSlice"]
    (rs,) = [o for o in doc["items"] if o["kind"] == "ResourceSlice"]
    assert rs["spec"]["driver"] == "gpu.amd.com"
    assert rs["spec"]["nodeName"] == "mi300x-a"
    devices = rs["spec"]["devices"]
    assert len(devices) == 8
    assert devices[0]["attributes"]["type"] == {"string": "amdgpu"}
    assert devices[0]["attributes"]["partitionProfile"] == {"string": "spx_nps1"}
    assert devices[0]["capacity"]["memory"] == {
        "value": str(196592 * 2**20)
    }  # amd-smi's VRAM, not the catalogue's


def test_cpx_nps4_partitions_are_published_as_partitions(tmp_path: Path) -> None:
    # one MI300X in CPX/NPS4: amd-smi lists its eight partitions
    doc = _discover(
        tmp_path, {"gpu_data": [_gpu(i, compute="CPX", memory="NPS4", mib=24576) for i in range(8)]}
    )
    (rs,) = [o for o in doc["items"] if o["kind"] == "ResourceSlice"]
    devices = rs["spec"]["devices"]
    assert len(devices) == 8
    assert {d["attributes"]["type"]["string"] for d in devices} == {"amdgpu-partition"}
    assert devices[0]["capacity"]["memory"] == {"value": str(24 * 2**30)}  # 192 GiB / 8


def test_the_slices_place_an_amd_pod(tmp_path: Path) -> None:
    assert [o["kind"] for o in _discover(tmp_path, [_gpu(0)], "--no-classes")["items"]] == ["ResourceSlice"]
    doc = _discover(tmp_path, [_gpu(i) for i in range(2)])
    cluster = tmp_path / "cluster.yaml"
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "mi300x-a"},
        "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}},
    }
    pod = Path(__file__).resolve().parents[2] / "realworld" / "inputs" / "amd--pytorch-pod.yaml"
    cluster.write_text(yaml.safe_dump_all([node, *doc["items"]]))
    r = CliRunner().invoke(cli, ["simulate", str(pod), str(cluster), "--mode", "dra", "-o", "json"])
    assert r.exit_code == 0, r.output
    dra = json.loads(r.stdout)["modes"]["dra"]
    assert (dra["placed"], dra["pods"][0]["node"]) == (1, "mi300x-a")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ("not json", "not JSON"),
        ({"x": 1}, "not a list of GPUs"),
        ([], "lists no GPU"),
        ([_gpu(0, name="AMD Instinct MI100")], "not in kubedra's AMD catalogue"),
        ([_gpu(0, compute="SPX", memory="NPS4")], "SPX is not allowed with memory partition NPS4"),
        ([_gpu(i, compute="CPX", memory="NPS4") for i in range(3)], "not whole MI300X boards"),
    ],
)
def test_bad_amd_smi_output_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, says: str
) -> None:
    f = tmp_path / "amd-smi.json"
    f.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(SystemExit) as e:
        main(["discover", "--amd-smi-json", str(f), "--node-name", "n"])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert says in err, err


def test_nvidia_only_options_are_refused_with_amd_smi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "amd-smi.json"
    f.write_text(json.dumps([_gpu(0)]))
    with pytest.raises(SystemExit) as e:
        main(["discover", "--amd-smi-json", str(f), "--mode", "mig-static"])
    assert e.value.code == 2
    assert "--mode: not taken with --amd-smi-json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (("--mode", "full"), "--mode"),
        (("--with-node",), "--with-node"),
        (("--driver-version", "v25.8.0"), "--driver-version"),
        (("--no-health-taints",), "--no-health-taints"),
        (("--mode", "mig-dynamic", "--no-health-taints"), "--mode, --no-health-taints"),
    ],
)
def test_each_option_amd_cannot_honour_is_refused_before_the_file_is_read(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], refused: str
) -> None:
    # the file does not exist: the refusal comes first, names every option given and says why, writes nothing
    with pytest.raises(SystemExit) as e:
        main(["discover", "--amd-smi-json", "/nonexistent/amd-smi.json", "--node-name", "n", *args])
    out = capsys.readouterr()
    assert e.value.code == 2
    assert out.out == ""
    assert f"{refused}: not taken with --amd-smi-json (the partition mode is amd-smi's" in out.err
    assert "amd-smi static reports no health" in out.err


def test_amd_smi_from_stdin_says_what_it_is_and_what_it_guessed(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["discover", "--amd-smi-json", "-", "--node-name", "mi300x-a"], input=json.dumps([_gpu(0)])
    )
    assert r.exit_code == 0, r.output
    head = r.stdout.splitlines()
    assert head[0] == "# kubedra discover: amd-smi, AMD DRA driver gpu.amd.com"
    assert head[1].startswith("# note: device names gpu-<card>-<render> are numbered from the GPU index")
    assert "kubedra: note: device names" in r.stderr
    assert [o["kind"] for o in yaml.safe_load(r.stdout)["items"]] == ["DeviceClass", "ResourceSlice"]


def test_a_drain_rule_takes_no_amd_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the amd-smi file used to be ignored silently beside --drain-rule
    f = tmp_path / "amd-smi.json"
    f.write_text(json.dumps([_gpu(0)]))
    with pytest.raises(SystemExit) as e:
        main(["discover", "--drain-rule", "n/gpu-0", "--amd-smi-json", str(f)])
    out = capsys.readouterr()
    assert (e.value.code, out.out) == (2, "")
    assert "--drain-rule takes no GPU input (--nvidia-smi-xml/--nvml/--amd-smi-json)" in out.err


def test_amd_devices_are_not_drained_by_a_rule() -> None:
    # AMD's driver publishes no health taints kubedra has read, so --drain-rule is NVIDIA's driver's
    assert vendors.get("amd").drain_selector("n", "gpu-0-128") is None
    assert vendors.get("nvidia").drain_selector("n", "gpu-0") == {
        "driver": "gpu.nvidia.com",
        "pool": "n",
        "device": "gpu-0",
    }
