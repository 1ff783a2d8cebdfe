"""The HTML pages of real runs on the examples, read as text: counts in words, labels whole, long lists
folded, legends that match their bars (no browser)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import run

CHAR_W = 7  # px a character of a 12px label takes at most
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _svg(page: str, id: str) -> str:
    m = re.search(rf'<svg [^>]*id="{id}".*?</svg>', page, re.S)
    assert m, id
    return m.group(0)


@pytest.fixture(scope="module")
def audit_page(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("audit") / "audit.html"
    r = run("audit", "-f", str(EXAMPLES / "fleet" / "prod.yaml"), "--html", str(out), "-o", "json")
    assert r.exit_code == 1, r.output
    return out.read_text()


def test_audit_chart_counts_findings_in_words(audit_page: str) -> None:
    """A rule with one finding read '1 findings' beside its bar."""
    chart = _svg(audit_page, "rules-chart")
    values = re.findall(r'class="vlabel">([^<]*)<', chart)
    assert "1 finding" in values
    assert "19 findings" in values
    assert not any(re.fullmatch(r"1 findings", v) for v in values)


def test_audit_chart_rule_labels_are_whole_and_left_of_the_bars(audit_page: str) -> None:
    """'gpu.device-plugin-daemonset' ran under its bar (the label column was 180px whatever the label); now
    each label's lines, broken only after '.', '-' or a space, fit left of the bars and join to the rule."""
    chart = _svg(audit_page, "rules-chart")
    left = float(re.search(r'<rect x="([\d.]+)" y="\d+" width="[\d.]+" height="14" fill', chart).group(1))  # type: ignore[union-attr]  # the chart has one
    labels = re.findall(r'<text [^>]*class="glabel">(.*?)</text>', chart)
    assert labels
    rules = set()
    for label in labels:
        lines = re.findall(r"<tspan[^>]*>([^<]*)</tspan>", label)
        rules.add("".join(lines) if all(x[-1] in ".-/_" for x in lines[:-1]) else " ".join(lines))
        assert all(8 + CHAR_W * len(x) <= left for x in lines), (lines, left)
    assert {"api.removed", "gpu.device-plugin-daemonset", "gpu.device-plugin-request"} <= rules


def test_simulate_html_folds_objects_not_simulated_under_a_count(tmp_path: Path) -> None:
    """The 'not simulated' lines were a list in the summary, above the pending pods; now one <details>
    whose <summary> says how many."""
    out = tmp_path / "sim.html"
    r = run(
        "simulate",
        "-f",
        str(EXAMPLES / "legacy-gpu"),
        "--nodes",
        "2x8xH100-80GB",
        "--html",
        str(out),
        "-o",
        "json",
    )
    assert r.exit_code == 2  # incomplete: objects not simulated (stderr)
    page = out.read_text()
    summary = re.search(r'<section[^>]*id="summary".*?</section>', page, re.S)
    assert summary, page[:500]
    body = summary.group(0)
    folded = re.search(
        r"<details><summary>(\d+) objects not simulated[^<]*</summary>(.*?)</details>", body, re.S
    )
    assert folded, body
    assert int(folded.group(1)) == folded.group(2).count("<li>") >= 2
    assert "kai-gpu-fraction-pod.yaml:6" in folded.group(2)
    outside = body.replace(folded.group(0), "")
    assert "kai-gpu-fraction-pod.yaml" not in outside
    assert "not simulated (" not in outside


def test_plan_timeline_legend_uses_the_bars_colours(tmp_path: Path) -> None:
    """The legend drew every swatch in one colour ('wave (work)', 'short of GPUs') while the bars were
    coloured per cluster; now each cluster's swatch has the colour of its bars, and the style swatches
    (soak) carry the class their bars carry."""
    out = tmp_path / "plan.html"
    assert run("plan", "--fleet", str(EXAMPLES / "fleet" / "fleet.yaml"), "--html", str(out)).exit_code == 1
    chart = _svg(out.read_text(), "wave-timeline")
    bars = {
        (g, fill)
        for fill, cls, g in re.findall(
            r'<rect [^>]*fill="([^"]+)" class="([^"]+)" data-group="([^"]+)"><title>', chart
        )
        if cls != "soak"
    }
    legend = set(re.findall(r'<rect [^>]*fill="([^"]+)" data-legend="([^"]+)"/>', chart))
    assert len(bars) >= 2
    assert {(g, f) for f, g in legend} == bars
    for g, _ in bars:
        assert f"cluster {g}</text>" in chart
    assert re.search(r'<rect [^>]*class="soak"/>\s*<text[^>]*>soak \(', chart)
