"""Prometheus text read back with prometheus_client's own parser, for tests of ``-o prometheus``."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

Sample = tuple[str, tuple[tuple[str, str], ...]]


def samples(text: str) -> dict[Sample, float]:
    """``{(name, sorted label pairs): value}`` of every sample in ``text``."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
