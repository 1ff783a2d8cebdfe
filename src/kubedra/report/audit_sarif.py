"""``kubedra audit -o sarif``: the report as a SARIF 2.1.0 log (GitHub code scanning and other viewers).

Apart from :mod:`kubedra.report.audit` so that the other outputs do not import the SARIF writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubedra.audit.engine import Report
from kubedra.audit.model import RuleBook
from kubedra.report.sarif import SarifResult, SarifRule, to_sarif


def sarif(report: Report, rules: RuleBook, version: str) -> dict[str, Any]:
    used = sorted({f.rule for f in report.findings})
    srules: Sequence[SarifRule] = [
        SarifRule(
            id=r, name=rules[r].title, help=rules[r].fix, help_uri=rules[r].docs, level=rules[r].severity
        )
        for r in used
        if r in rules
    ]
    results = [
        SarifResult(
            rule_id=f.rule,
            level=f.severity,
            message=f"{f.object}: {f.message}. Fix: {f.fix}" if f.kind else f"{f.message}. Fix: {f.fix}",
            file=f.source.file,
            line=f.source.line,
            logical=f.source.cluster and f"{f.source.cluster}/{f.object}",
        )
        for f in report.findings
    ]
    return to_sarif("kubedra", version, "", srules, results)
