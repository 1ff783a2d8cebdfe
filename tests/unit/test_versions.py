"""Kubernetes releases in one place: data/versions.yaml read by kubedra.k8s.versions, gates by
kubedra.k8s.featuregates; Python code names no release except where a test harness pins its builds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from tests.unit.source_strings import string_literals

from kubedra.errors import UsageError
from kubedra.k8s import featuregates, versions

SRC = Path(__file__).resolve().parents[2] / "src" / "kubedra"
RELEASE = re.compile(r"^v?1\.\d{1,2}$")


def test_supported_and_default_come_from_the_data_file() -> None:
    data = yaml.safe_load((SRC / "data" / "versions.yaml").read_text())
    assert tuple(data["supported"]) == versions.SUPPORTED
    assert data["default"] == versions.DEFAULT_TARGET and versions.DEFAULT_TARGET in versions.SUPPORTED


def test_check_target() -> None:
    assert versions.check_target("v1.36.2") == ("1.36", None)
    with pytest.raises(UsageError, match=r"supported: 1\.34-1\.37"):
        versions.check_target("1.99")
    with pytest.raises(UsageError, match="invalid"):
        versions.check_target("latest")
    version, warning = versions.check_target("1.38", partial_ok=True)
    assert version == "1.38" and warning and "only partly" in warning
    with pytest.raises(UsageError, match=r"1\.20-1\.43 partly"):
        versions.check_target("1.99", partial_ok=True)


def test_gate_history_marks_removed_gates_absent() -> None:
    h = featuregates.gate_histories()
    assert h["GangScheduling"]["1.37"] == "absent" and h["GangScheduling"]["1.36"] == "alpha:off"
    assert h["DynamicResourceAllocation"]["1.35"] == "ga:on:locked"
    assert "1.31" not in h["DRAExtendedResource"]  # before the gate's first release: unknown, not absent
    assert featuregates.merged_into()["GangScheduling"] == "GenericWorkload"


def _release_literals(path: Path) -> list[str]:
    return [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for line, text in string_literals(path)
        if RELEASE.match(text)
    ]


def test_few_release_literals_left_in_python() -> None:
    """Defaults and supported lists come from the data file; what is left pins the testbed's builds."""
    found = [lit for path in sorted(SRC.rglob("*.py")) for lit in _release_literals(path)]
    outside_testing = [f for f in found if not f.startswith("testing/")]
    assert len(found) <= 10, "\n".join(found)
    assert not outside_testing, "\n".join(outside_testing)
