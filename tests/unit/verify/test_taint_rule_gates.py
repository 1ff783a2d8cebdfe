"""``kubedra verify`` and DeviceTaintRules in a cluster whose feature gates leave them unread.

At 1.34-1.36 kube-scheduler and the device-taint eviction controller read DeviceTaintRules only with the gates
data/versions.yaml ``apis.deviceTaintRuleGates`` names (v1.35.4, v1.36.3 pkg/controller/devicetainteviction:
``if utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules)``), off by default there; the API server
still stores a rule once its version is enabled with --runtime-config. A rule the cluster does not read evicts
nothing: verify must not say it does, and where it cannot tell (the gates were not read), it says so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubedra.model.snapshot import Header, Snapshot, load, write
from kubedra.verify.counts import dra_counts

from .test_verify import GPU0, NOW, _rule, by_id, healthy, verify


def _snap(tmp_path: Path, server_version: str, gates: dict[str, bool]) -> str:
    p = tmp_path / "s.yaml"
    write(
        Snapshot(Header("c", server_version, NOW, feature_gates=gates), [*healthy(), _rule(**GPU0)]), str(p)
    )
    return str(p)


EVICTS = "the device-taint eviction controller evicts Pod ml/train-7f9c-x1"


@pytest.mark.parametrize(
    ("server_version", "gates", "off"),
    [
        ("v1.36.3", {"DRADeviceTaints": True, "DRADeviceTaintRules": False}, "DRADeviceTaintRules"),
        ("v1.35.4", {"DRADeviceTaints": True, "DRADeviceTaintRules": False}, "DRADeviceTaintRules"),
        ("v1.34.4", {"DRADeviceTaints": False}, "DRADeviceTaints"),
    ],
)
def test_a_rule_the_cluster_does_not_read_evicts_nothing(
    tmp_path: Path, server_version: str, gates: dict[str, bool], off: str
) -> None:
    code, data = verify("-f", _snap(tmp_path, server_version, gates))
    assert code == 0, data
    (message,) = by_id(data)["health"]["messages"]
    assert message.startswith(
        f"DeviceTaintRule drain-gpu-0 (example.com/drain=rma:NoExecute): not read: the cluster runs with {off} "
        "off (kube-apiserver /metrics)"
    ), message


@pytest.mark.parametrize(
    ("server_version", "gates"),
    [
        ("v1.36.3", {"DRADeviceTaints": True, "DRADeviceTaintRules": True}),
        ("v1.34.4", {"DRADeviceTaints": True}),  # 1.34 has no DRADeviceTaintRules gate: DRADeviceTaints alone
        ("v1.37.2", {}),  # on by default: judged as before
    ],
)
def test_a_rule_the_cluster_reads_is_judged(
    tmp_path: Path, server_version: str, gates: dict[str, bool]
) -> None:
    code, data = verify("-f", _snap(tmp_path, server_version, gates))
    assert code == 1
    assert any(EVICTS in m for m in by_id(data)["health"]["messages"]), data


def test_gates_not_read_where_the_default_is_off_cannot_be_judged(tmp_path: Path) -> None:
    code, data = verify("-f", _snap(tmp_path, "v1.36.3", {}))
    assert code == 0
    (message,) = by_id(data)["health"]["messages"]
    assert message == (
        "DeviceTaintRule drain-gpu-0 (example.com/drain=rma:NoExecute): cannot tell whether it is read: "
        "DRADeviceTaintRules (beta) off by default at 1.36, and the cluster's feature gates were not read; "
        "kube-scheduler and the device-taint eviction controller read DeviceTaintRules only with DRADeviceTaints "
        "and DRADeviceTaintRules on, so its taint is not judged"
    )


@pytest.mark.parametrize(
    ("server_version", "gates", "tainted"),
    [
        ("v1.36.3", {"DRADeviceTaints": True, "DRADeviceTaintRules": False}, 0),  # not read
        ("v1.36.3", {}, 0),  # cannot tell: not judged, not counted
        ("v1.36.3", {"DRADeviceTaints": True, "DRADeviceTaintRules": True}, 1),
        ("v1.34.4", {"DRADeviceTaints": True}, 1),
        ("v1.37.2", {}, 1),
    ],
)
def test_metrics_count_a_rule_taint_only_where_the_cluster_reads_rules(
    tmp_path: Path, server_version: str, gates: dict[str, bool], tainted: int
) -> None:
    """The published-device metrics (``--metrics-file``, ``-o prometheus``) count a rule's taint as
    check_health judges it: not where the cluster leaves the rule unread."""
    counts = dra_counts(load(_snap(tmp_path, server_version, gates)))
    assert sum(counts.tainted.values()) == tainted, counts.tainted
