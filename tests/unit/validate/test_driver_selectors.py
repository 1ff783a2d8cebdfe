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
    assert "resource.kubernetes.io/pciBusID" in out
    assert "productName" in out
    assert "fine at v25.3.0" in out


def test_validate_at_a_release_that_published_index_accepts_it() -> None:
    code, out, _ = run("validate", TEST6, "--driver-version", "v25.3.2")
    assert code == 0, out


def test_validate_driver_version_unknown_is_a_usage_error() -> None:
    code, _, err = run("validate", TEST6, "--driver-version", "v9.9.9")
    assert code == 2
    assert "not a release kubedra has read" in err


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
    assert "dra.selector-unpublished" in out, out
    assert "does not publish attribute `index`" in out, out
    assert code == 1


def _a100_cluster(tmp_path: Path) -> str:
    from kubedra.report.output import to_yaml
    from kubedra.vendors.nvidia import dra, nodes

    objs = [*dra.device_classes("1.37"), nodes.dra_node("a1", "A100-80GB", 8, "full", k8s_version="1.37")]
    objs += dra.dra_objects("a1", "A100-80GB", 8, "full", "1.37")
    path = tmp_path / "cluster.yaml"
    path.write_text(to_yaml({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(path)


def test_simulate_pending_reason_says_what_the_driver_publishes() -> None:
    """Before: the pod stayed pending with upstream's bare "no such key: index. consider using CEL optional
    chaining ..." (which suggests guarding a name the driver never publishes)."""
    code, out, _ = run("simulate", "--nodes", "1x8xA100-80GB", "--mode", "dra", TEST6, "-o", "wide")
    assert code == 0, out
    assert "no such key: index" in out
    assert "the driver does not publish `index`; use `resource.kubernetes.io/pciBusID` or `uuid`" in out


def test_explain_says_what_the_driver_publishes(tmp_path: Path) -> None:
    import yaml

    template = next(
        d for d in yaml.safe_load_all(Path(TEST6).read_text()) if d and d["kind"] == "ResourceClaimTemplate"
    )
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"namespace": "gpu-test6", "name": "a100"},
        "spec": template["spec"]["spec"],
    }
    (tmp_path / "claim.yaml").write_text(yaml.safe_dump(claim))
    _, out, _ = run(
        "explain",
        "-f",
        _a100_cluster(tmp_path),
        "-f",
        str(tmp_path / "claim.yaml"),
        "--claim",
        "gpu-test6/a100",
    )
    assert "CEL runtime error" in out, out
    assert "the driver does not publish `index`; use `resource.kubernetes.io/pciBusID` or `uuid`" in out


_DS = """---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-dra-driver-gpu-kubelet-plugin, namespace: nvidia-dra-driver-gpu}
spec:
  selector: {matchLabels: {app: p}}
  template:
    metadata: {labels: {app: p}}
    spec:
      containers:
      - {name: gpus, image: "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.3.2"}
"""


def _with_driver(tmp_path: Path) -> str:
    path = tmp_path / "test6-on-v25.3.2.yaml"
    path.write_text(Path(TEST6).read_text() + "\n" + _DS)
    return str(path)


def test_audit_driver_version_checks_that_release() -> None:
    """Before: audit had no --driver-version; a selector could only be audited against every release or the
    one a cluster's DaemonSet runs."""
    code, out, _ = run("audit", TEST6, "-o", "wide", "--driver-version", "v25.3.2")
    assert "dra.selector-unpublished" not in out, out
    code, out, _ = run("audit", TEST6, "-o", "wide", "--driver-version", "0.5.0")
    assert "dra.selector-unpublished" in out
    assert "driver v0.5.0 does not publish attribute `index`" in out
    assert code == 1


def test_audit_driver_version_overrides_what_the_cluster_runs(tmp_path: Path) -> None:
    files = _with_driver(tmp_path)
    _, out, _ = run("audit", files, "-o", "wide")
    assert "dra.selector-unpublished" not in out, out  # v25.3.2 publishes index
    _, out, _ = run("audit", files, "-o", "wide", "--driver-version", "v0.4.1")
    assert "driver v0.4.1 does not publish attribute `index`" in out, out
    _, out, _ = run("audit", files, "-o", "wide", "--driver-version", "all")
    assert "does not publish attribute `index`" in out, out
    assert "fine at v25.3.0, v25.3.2" in out, out


def test_audit_driver_version_unknown_is_a_usage_error() -> None:
    code, out, err = run("audit", TEST6, "--driver-version", "v9.9.9")
    assert code == 2
    assert "not a release kubedra has read" in err
    assert out == ""
