"""The HTML reports: self-contained, escaped, and rendered by headless Chromium without errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kubedra.report import html as h

from .browser import load
from .helpers import run

REPO = Path(__file__).resolve().parents[3]
PLAN_FLEET = REPO / "tests" / "unit" / "plan" / "data" / "fleet.yaml"
PROD = REPO / "tests" / "unit" / "plan" / "data" / "prod.yaml"
DEV = REPO / "tests" / "unit" / "plan" / "data" / "dev.yaml"


def _no_network(page: str) -> None:
    body = re.sub(r"<pre><code>.*?</code></pre>", "", page, flags=re.S)  # runbook commands may name URLs
    body = body.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", body)
    assert "http://" not in body and "https://" not in body
    assert "<link" not in body and "@import" not in body


def test_render_report_escapes_and_inlines() -> None:
    page = h.render_report(
        "<script>alert(1)</script>", [h.Section("T", h.table(("a",), [("<img src=x onerror=alert(1)>",)]))]
    )
    assert "<script>alert(1)</script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<script>") == 1 and "<style>" in page
    _no_network(page)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("reports")
    out = {name: d / f"{name}.html" for name in ("plan", "audit", "simulate")}
    assert run("plan", "--fleet", str(PLAN_FLEET), "--html", str(out["plan"]), "-o", "json").exit_code == 1
    assert run("audit", "-f", str(PROD), "--html", str(out["audit"]), "-o", "json").exit_code in (0, 1)
    assert run("simulate", "-f", str(DEV), "--html", str(out["simulate"]), "-o", "json").exit_code == 0
    return out


def test_pages_are_self_contained(pages: dict[str, Path]) -> None:
    for p in pages.values():
        _no_network(p.read_text())


@pytest.mark.parametrize(
    ("name", "figures"),
    [
        ("plan", ("wave-timeline", "capacity-chart", "waves", "blockers", "clusters")),
        ("audit", ("findings", "rules-chart")),
        ("simulate", ("density-chart", "summary-table")),
    ],
)
def test_chromium_renders_without_errors(pages: dict[str, Path], name: str, figures: tuple[str, ...]) -> None:
    loaded = load(pages[name])
    assert 'data-ready="1"' in loaded.dom, "the page script did not run to the end"
    errors = re.search(r'<ul id="kubedra-errors"[^>]*>(.*?)</ul>', loaded.dom, re.S)
    assert errors is not None and errors.group(1).strip() == "", (
        errors.group(1) if errors else loaded.dom[-500:]
    )
    assert not [c for c in loaded.console if "Uncaught" in c or "Refused" in c or "Error" in c], (
        loaded.console
    )
    for fig in figures:
        assert f'id="{fig}"' in loaded.dom, fig
    charts = int(re.search(r'data-charts="(\d+)"', loaded.dom).group(1))  # type: ignore[union-attr]
    assert charts >= 1
    if name == "plan":
        # every wave is a bar in the timeline and a row in the table
        assert loaded.dom.count('data-group="') == 20
        assert "api.removed" in loaded.dom
    if name == "simulate":
        assert "<svg" in loaded.dom and "GPU and GPU memory use per node" in loaded.dom


def test_error_trap_catches_script_errors(tmp_path: Path) -> None:
    """The harness can fail: a page whose script throws shows the error in #kubedra-errors."""
    page = h.render_report("broken", [h.Section("x", "<p>x</p>")])
    page = page.replace(
        "</body>", "<script>window.setTimeout(function(){ undefinedFunction(); }, 0);</script></body>"
    )
    path = tmp_path / "broken.html"
    path.write_text(page)
    loaded = load(path)
    errors = re.search(r'<ul id="kubedra-errors"[^>]*>(.*?)</ul>', loaded.dom, re.S)
    assert errors is not None and "undefinedFunction" in errors.group(1)
