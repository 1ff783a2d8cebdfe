"""One reading of a GPU request (kubedra.vendors.gpurequest) for audit, migrate, simulate, validate, plan and verify
(the last two: tests/unit/plan/test_plan_gpu_requests.py, tests/unit/verify/test_verify.py).

The manifests are real ones (tests/corpus) with their GPU count set to zero the ways a chart writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubedra.cli import cli
from kubedra.vendors.gpurequest import admitted_counts, device_count

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
KAI_JOB = (CORPUS / "legacy-gpu" / "kai-batch-job.yaml").read_text()


def kai_job_with(count: str) -> str:
    assert 'nvidia.com/gpu: "1"' in KAI_JOB
    return KAI_JOB.replace('nvidia.com/gpu: "1"', f"nvidia.com/gpu: {count}")


def cli_run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.mark.parametrize(
    ("value", "n"), [("0", 0), ("00", 0), (0, 0), ("0.0", 0), ("2", 2), ("2000m", 2), (3, 3)]
)
def test_a_count_is_a_quantity(value: object, n: int) -> None:
    assert device_count(value) == n


@pytest.mark.parametrize(
    ("resources", "counts"),
    [
        ({"limits": {"nvidia.com/gpu": "1000m"}}, {"nvidia.com/gpu": 1}),
        ({"limits": {"nvidia.com/gpu": 2}, "requests": {"nvidia.com/gpu": "2"}}, {"nvidia.com/gpu": 2}),
        ({"limits": {"nvidia.com/gpu": "00"}}, {"nvidia.com/gpu": 0}),
        ({"requests": {"nvidia.com/gpu": "1"}}, {"nvidia.com/gpu": None}),  # limits must be set
        ({"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 2}}, {"nvidia.com/gpu": None}),
        ({"limits": {"nvidia.com/gpu": "0.5"}}, {"nvidia.com/gpu": None}),
        ("x", {}),
    ],
)
def test_limits_and_requests_as_the_apiserver_admits_them(resources: object, counts: dict) -> None:
    assert admitted_counts(resources) == counts


@pytest.mark.parametrize("value", ["0.5", "-1", -1, "{{ .Values.gpus }}", "lots", True, None])
def test_no_count_for_what_the_apiserver_refuses_or_cannot_read(value: object) -> None:
    assert device_count(value) is None


@pytest.mark.parametrize("zero", ['"0"', '"00"', "0", '"0.0"'])
def test_a_zero_gpu_request_is_no_gpu_for_every_verb(tmp_path: Path, zero: str) -> None:
    """Before: migrate wrote a claim with count 0 (the apiserver defaults it to 1, so the container took a GPU
    it never asked for), and audit reported "00" but not "0"."""
    f = tmp_path / "job.yaml"
    f.write_text(kai_job_with(zero))
    migrated = cli_run("migrate", "-", input=f.read_text())
    assert migrated.exit_code == 0, migrated.output
    assert "ResourceClaimTemplate" not in migrated.stdout
    assert "count:" not in migrated.stdout
    audit = cli_run("audit", str(f))
    assert "gpu.device-plugin-request" not in audit.output
    sim = cli_run("simulate", "-f", str(f), "--nodes", "1x1xT4", "-o", "json")
    assert sim.exit_code == 0, sim.output
    for mode in json.loads(sim.stdout)["modes"].values():
        assert (mode["placed"], mode["gpus"]["used"]) == (2, 0)


def test_validate_warns_that_an_explicit_count_0_means_one_device(tmp_path: Path) -> None:
    """pkg/apis/resource/v1/defaults.go SetDefaults_ExactDeviceRequest: ExactCount with count 0 becomes 1."""
    rct = (CORPUS / "dra" / "nvidia-quickstart-v1-gpu-test1-rct.yaml").read_text()
    assert rct.count("deviceClassName: gpu.nvidia.com\n") == 1
    f = tmp_path / "rct.yaml"
    f.write_text(
        rct.replace(
            "deviceClassName: gpu.nvidia.com\n", "deviceClassName: gpu.nvidia.com\n          count: 0\n"
        )
    )
    r = cli_run("validate", str(f))
    assert "count: 0 is defaulted to 1 by the apiserver" in r.output


def test_validate_warns_the_same_for_a_subrequest(tmp_path: Path) -> None:
    """SetDefaults_DeviceSubRequest defaults count 0 to 1 too; validate skipped subrequests (its ``subrequest``
    flag silenced the warning instead of choosing its words)."""
    f = tmp_path / "claim.yaml"
    f.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
        "    requests:\n    - name: gpu\n      firstAvailable:\n      - name: big\n"
        "        deviceClassName: gpu.nvidia.com\n        count: 0\n"
    )
    r = cli_run("validate", str(f), "-o", "json")
    (w,) = json.loads(r.stdout)["warnings"]
    assert w["path"] == "spec.devices.requests[0].firstAvailable[0].count"
    assert "this subrequest, when chosen, allocates one device" in w["message"]


# value: (1.36/1.37, 1.38) device counts; the apiserver's integer test and Value() of each release
# (tests/unit/k8s/test_integer_resources.py, tests/conformance/quantity/scaled-value.yaml)
RELEASE_COUNTS = {
    "2": (2, 2),
    "0.9999": (1, 1),  # MilliValue rounds up to 1000: admitted, and Value() is 1
    "1e20": (0, 2**63 - 1),  # 1.37: Value() 0, the kubelet gives no device
    "1Ei": (None, 2**60),  # 1.37: MilliValue wraps to MinInt64, no multiple of 1000: refused
    "9223372036854775808": (None, 2**63 - 1),  # 1.37: Value() wraps to MinInt64
    "1000000000000000000000000000000.5": (None, 2**63 - 1),  # 1.38 keeps 29 digits: an integer
}


@pytest.mark.parametrize("value", sorted(RELEASE_COUNTS))
def test_a_count_is_what_the_release_reads(value: str) -> None:
    old, new = RELEASE_COUNTS[value]
    assert [device_count(value, r) for r in ("1.36", "1.37", "1.38")] == [old, old, new]


def test_migrate_reads_the_count_as_the_target_release_does() -> None:
    job = kai_job_with('"1Ei"')
    old = cli_run("migrate", "--target-version", "1.37", "-o", "json", "-", input=job)
    assert "nvidia.com/gpu: not a whole number ('1Ei')" in old.output
    new = cli_run("migrate", "--target-version", "1.38", "-", input=job)
    assert "count: 1152921504606846976" in new.output


def test_requests_and_limits_compare_as_the_release_holds_them() -> None:
    # a request of 0.9999 is defaulted to 1 (SetDefaults_ResourceList): equal to a limit of 1 for the apiserver
    resources = {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "0.9999"}}
    assert admitted_counts(resources, "1.37") == {"nvidia.com/gpu": 1}
    assert admitted_counts(resources) == {"nvidia.com/gpu": None}  # without a release: as counts, 1 != None


def test_audit_reads_a_gpu_request_as_the_target_does() -> None:
    # 1e20 GPUs: Value() reads 0 at 1.37 (no device, no finding), MaxInt64 at 1.38 (a GPU request)
    job = kai_job_with('"1e20"')
    old = cli_run("audit", "--target-version", "1.37", "-o", "json", "-", input=job)
    new = cli_run("audit", "--target-version", "1.38", "-o", "json", "-", input=job)
    assert "gpu.device-plugin-request" not in old.output
    assert "gpu.device-plugin-request" in new.output
