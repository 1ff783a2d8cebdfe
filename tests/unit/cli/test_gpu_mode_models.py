"""A GPU mode the model cannot run is refused, naming the model: ``--gpu-mode mig-dynamic`` on L4
nodes exited 0 with a report whose notes described DynamicMIG announcing MIG profiles, and ``discover
--mode mig-dynamic`` on an L40S exited 0; neither GPU has MIG (data/gpus/models.yaml lists no profile)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.cli.helpers import GPU, run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia-smi"


@pytest.mark.parametrize("nodes", ["2x4xL4", "1x8xL40S-48GB", "1x8xH100-80GB,1x4xL4"])
def test_simulate_refuses_mig_dynamic_on_a_gpu_without_mig(nodes: str) -> None:
    r = run("simulate", GPU, "--nodes", nodes, "--gpu-mode", "mig-dynamic")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith("kubedra: error: GPU mode mig-dynamic: L")
    assert "does not support MIG" in r.stderr


def test_simulate_still_runs_mig_dynamic_on_a_mig_gpu() -> None:
    r = run("simulate", GPU, "--nodes", "1x8xH100-80GB", "--gpu-mode", "mig-dynamic")
    assert r.exit_code == 0, r.output


def test_discover_refuses_mig_dynamic_on_a_gpu_without_mig(tmp_path: Path) -> None:
    # the H100 fixture as an L40S (its PCI device id and memory), which has no MIG
    xml = (FIXTURES / "h100-80gb-x8.xml").read_text()
    xml = xml.replace("NVIDIA H100 80GB HBM3", "NVIDIA L40S").replace("233010DE", "26B910DE")
    (tmp_path / "l40s.xml").write_text(xml.replace("81559 MiB", "46068 MiB"))
    args = ("discover", "--nvidia-smi-xml", str(tmp_path / "l40s.xml"), "--node-name", "n1")
    assert run(*args).exit_code == 0  # the GPUs whole
    r = run(*args, "--mode", "mig-dynamic")
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (
        "kubedra: error: GPU mode mig-dynamic: L40S-48GB (NVIDIA L40S) does not support MIG; use full, "
        "time-slicing:<n> or mps:<n> for it\n"
    )
