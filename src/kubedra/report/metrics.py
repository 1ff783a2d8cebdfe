"""Prometheus text exposition of audit and verify results (``-o prometheus``, ``--metrics-file``), written
with the official ``prometheus_client`` library: every metric is a gauge of the last run, in its own registry.

``--metrics-file PATH`` is for node-exporter's textfile collector: the file is written whole under a temporary
name and renamed (``prometheus_client.write_to_textfile``), so the collector never reads half a file.
Metric names and labels are listed in docs/in-cluster.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, generate_latest, write_to_textfile

from kubedra import __version__

SEVERITIES = ("error", "warning", "info")
CHECK_STATUSES = ("pass", "warn", "fail", "nothing-to-check")
CLAIM_STATES = ("allocated", "pending")


def _registry(verb: str, clusters: Iterable[str]) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=True)
    info = Gauge(
        "kubedra_build_info",
        "kubedra version and the verb and clusters of this run (value 1).",
        ["version", "verb", "cluster"],
        registry=registry,
    )
    for cluster in sorted(set(clusters)) or [""]:
        info.labels(__version__, verb, cluster).set(1)
    return registry


def audit_registry(report: Mapping[str, Any]) -> CollectorRegistry:
    """Gauges of an audit report (``Report.to_dict()``)."""
    summary = report.get("summary") or {}
    registry = _registry("audit", summary.get("clusters") or [])
    findings = Gauge(
        "kubedra_audit_findings",
        "Findings of the last audit by rule and severity (ignored findings excluded).",
        ["rule", "severity"],
        registry=registry,
    )
    by_rule_severity: dict[tuple[str, str], int] = {}
    for f in report.get("findings") or []:
        key = (str(f.get("rule")), str(f.get("severity")))
        by_rule_severity[key] = by_rule_severity.get(key, 0) + 1
    for (rule, severity), n in sorted(by_rule_severity.items()):
        findings.labels(rule, severity).set(n)
    by_severity = Gauge(
        "kubedra_audit_findings_by_severity",
        "Findings of the last audit per severity (0 when none).",
        ["severity"],
        registry=registry,
    )
    for severity in SEVERITIES:
        by_severity.labels(severity).set((summary.get("bySeverity") or {}).get(severity, 0))
    Gauge("kubedra_audit_objects_scanned", "Objects the last audit read.", registry=registry).set(
        summary.get("objectsScanned") or 0
    )
    _incomplete(registry, "audit", report.get("incomplete") or [])
    return registry


def verify_registry(data: Mapping[str, Any], dra: Any) -> CollectorRegistry:
    """Gauges of a verify result (its JSON dict) and the DRA counts of the state it checked
    (:class:`kubedra.verify.counts.DraCounts`)."""
    cluster = str(data.get("cluster") or "")
    registry = _registry("verify", [cluster])
    status = Gauge(
        "kubedra_verify_check_status",
        "1 for the status (pass, warn, fail, nothing-to-check) of each verify check, 0 for the others.",
        ["check", "status"],
        registry=registry,
    )
    for check in data.get("checks") or []:
        for s in CHECK_STATUSES:
            status.labels(str(check.get("id")), s).set(1 if check.get("status") == s else 0)
    claims = Gauge(
        "kubedra_resourceclaims",
        "ResourceClaims by state (pending: not allocated).",
        ["state"],
        registry=registry,
    )
    for state in CLAIM_STATES:
        claims.labels(state).set(dra.claims.get(state, 0))
    _per_key(
        registry,
        "driver",
        dra.published,
        (
            "kubedra_dra_devices_published",
            "Devices in the newest generation of each driver's ResourceSlice pools.",
        ),
        (
            "kubedra_dra_devices_tainted",
            "Published devices with a taint (ResourceSlice or DeviceTaintRule), per driver.",
            dra.tainted,
        ),
    )
    _per_key(
        registry,
        "deviceclass",
        dra.allocated,
        (
            "kubedra_dra_devices_allocated",
            "Devices allocated to ResourceClaims, per DeviceClass of the request.",
        ),
        (
            "kubedra_dra_devices_allocated_tainted",
            "Allocated devices that carry a taint, per DeviceClass of the request.",
            dra.allocated_tainted,
        ),
    )
    _incomplete(registry, "verify", data.get("incomplete") or [])
    return registry


def _per_key(
    registry: CollectorRegistry,
    label: str,
    totals: Mapping[str, int],
    total: tuple[str, str],
    subset: tuple[str, str, Mapping[str, int]],
) -> None:
    """Two gauges over the same label values: every key of ``totals``, and how many of those are in
    ``subset`` (0 when none), so a ratio never divides by a missing series."""
    whole = Gauge(total[0], total[1], [label], registry=registry)
    part = Gauge(subset[0], subset[1], [label], registry=registry)
    for key in sorted(totals):
        whole.labels(key).set(totals[key])
        part.labels(key).set(subset[2].get(key, 0))


def _incomplete(registry: CollectorRegistry, verb: str, rows: list[Any]) -> None:
    Gauge(
        f"kubedra_{verb}_incomplete_reads",
        "Cluster reads that were refused or failed (the result is incomplete when above 0).",
        registry=registry,
    ).set(len(rows))


def exposition(registry: CollectorRegistry) -> str:
    return generate_latest(registry).decode()


def write_textfile(path: str, registry: CollectorRegistry) -> None:
    write_to_textfile(path, registry)
