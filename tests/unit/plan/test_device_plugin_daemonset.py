"""Which DaemonSet plan takes for the device plugin to patch: the one whose container runs a vendor's device plugin
(by image and command, as each vendor tells), on the upstream static manifests in tests/realworld/inputs (see
tests/realworld/SOURCES.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubedra.plan.inventory import _runs_device_plugin

INPUTS = Path(__file__).resolve().parents[2] / "realworld" / "inputs"


@pytest.mark.parametrize(
    ("name", "runs"),
    [
        ("device-plugin--nvidia-device-plugin.yaml", True),
        ("amd--device-plugin-daemonset.yaml", True),
        # GPU feature discovery runs from the k8s-device-plugin image too: it hands out no GPU, and patching it
        # away would not take the device plugin off a node
        ("device-plugin--gfd-daemonset.yaml", False),
    ],
)
def test_the_device_plugin_daemonset_is_told_by_its_container(name: str, runs: bool) -> None:
    (ds,) = [d for d in yaml.safe_load_all((INPUTS / name).read_text()) if d and d["kind"] == "DaemonSet"]
    assert _runs_device_plugin(ds) is runs
