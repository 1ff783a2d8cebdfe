"""validate and audit check selectors against what the NVIDIA DRA driver publishes, on the driver's own files.

tests/realworld/inputs holds NVIDIA's quickstart specs (sources and licence in tests/realworld/SOURCES.yaml):
gpu-test6 selects on `index`, which the driver stopped publishing in v25.8.0 (before: validate and audit called
the claim fine, simulate left the pod pending with "no such key: index"); the other v1 quickstart specs of
0.5.0-dev must stay clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli

INPUTS = Path(__file__).parents[2] / "realworld" / "inputs"
TEST6 = str(INPUTS / "dra-driver--quickstart-v1-gpu-test6.yaml")
QUICKSTART = sorted(
    str(p)
    for p in INPUTS.glob("dra-driver*quickstart-v1-*.yaml")
    if "gpu-test6" not in p.name and "v1beta1" not in p.name
)


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_validate_rejects_the_index_selector_naming_what_is_published() -> None:
    code, out, _ = run("validate", TEST6, "-o", "wide")
    assert code == 1, out
    assert "does not publish attribute `index`" in out
    assert "resource.kubernetes.io/pciBusID" in out and "productName" in out and "fine at v25.3.0" in out


def test_validate_at_a_release_that_published_index_accepts_it() -> None:
    code, out, _ = run("validate", TEST6, "--driver-version", "v25.3.2")
    assert code == 0, out


def test_validate_driver_version_unknown_is_a_usage_error() -> None:
    code, _, err = run("validate", TEST6, "--driver-version", "v9.9.9")
    assert code == 2 and "not a release kubedra has read" in err


@pytest.mark.parametrize("path", QUICKSTART, ids=lambda p: Path(p).name)
def test_every_other_quickstart_selector_of_the_driver_passes_at_v0_5_0(path: str) -> None:
    code, out, _ = run("validate", path, "--driver-version", "v0.5.0")
    assert code == 0, out


def test_the_quickstart_set_covers_the_v0_5_specs() -> None:
    names = {Path(p).name for p in QUICKSTART}
    assert {
        "dra-driver-nvidia-gpu--v0.5-quickstart-v1-gpu-test4.yaml",
        "dra-driver--quickstart-v1-imex-test1.yaml",
    } <= names


def test_audit_flags_the_index_selector() -> None:
    code, out, _ = run("audit", TEST6, "-o", "wide")
    assert "dra.selector-unpublished" in out and "does not publish attribute `index`" in out, out
    assert code == 1
