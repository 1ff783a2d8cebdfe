"""The HTML reports: self-contained, escaped, and rendered by headless Chromium without errors."""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from kubedra.report import html as h

from .browser import load, measure
from .helpers import run

REPO = Path(__file__).resolve().parents[3]
PLAN_FLEET = REPO / "tests" / "unit" / "plan" / "data" / "fleet.yaml"
PROD = REPO / "tests" / "unit" / "plan" / "data" / "prod.yaml"
DEV = REPO / "tests" / "unit" / "plan" / "data" / "dev.yaml"
SMALL = Path(__file__).parent / "data" / "small-inference.yaml"


def _no_network(page: str) -> None:
    body = re.sub(r"<pre><code>.*?</code></pre>", "", page, flags=re.S)  # runbook commands may name URLs
    # links to follow (rule docs) load nothing; only <a href> to http(s), nothing else
    body = re.sub(r'<a href="https?://[^"]*" rel="noopener noreferrer">', "<a>", body)
    body = body.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", body)
    assert "http://" not in body
    assert "https://" not in body
    assert "<link" not in body
    assert "@import" not in body


def test_render_report_escapes_and_inlines() -> None:
    page = h.render_report(
        "<script>alert(1)</script>", [h.Section("T", h.table(("a",), [("<img src=x onerror=alert(1)>",)]))]
    )
    assert "<script>alert(1)</script>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<script>") == 1
    assert "<style>" in page
    _no_network(page)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("reports")
    out = {name: d / f"{name}.html" for name in ("plan", "audit", "simulate", "saves", "demo")}
    assert run("plan", "--fleet", str(PLAN_FLEET), "--html", str(out["plan"]), "-o", "json").exit_code == 1
    assert run("audit", "-f", str(PROD), "--html", str(out["audit"]), "-o", "json").exit_code in (0, 1)
    assert run("simulate", "-f", str(DEV), "--html", str(out["simulate"]), "-o", "json").exit_code == 0
    saves = [
        "--nodes",
        "1x8xA100-80GB",
        "--gpu-mode",
        "mig-dynamic",
        "--dp-gpu-mode",
        "full",
        "--dra-sizing",
        "mig",
    ]
    assert run("simulate", "-f", str(SMALL), *saves, "--html", str(out["saves"]), "-o", "json").exit_code == 0
    assert run("demo", "--html", str(out["demo"]), "-o", "json").exit_code == 0
    return out


def test_pages_are_self_contained(pages: dict[str, Path]) -> None:
    for p in pages.values():
        _no_network(p.read_text())


@pytest.mark.parametrize(
    ("name", "figures"),
    [
        ("plan", ("wave-timeline", "capacity-chart", "waves", "blockers", "clusters")),
        ("audit", ("findings", "rules-chart")),
        ("simulate", ("density-chart", "summary-table", "headline", "inputs")),
        ("saves", ("density-chart", "summary-table", "headline", "inputs")),
        ("demo", ("density-chart", "summary-table", "headline", "pending", "inputs")),
    ],
)
def test_chromium_renders_without_errors(pages: dict[str, Path], name: str, figures: tuple[str, ...]) -> None:
    loaded = load(pages[name])
    assert 'data-ready="1"' in loaded.dom, "the page script did not run to the end"
    errors = re.search(r'<ul id="kubedra-errors"[^>]*>(.*?)</ul>', loaded.dom, re.S)
    assert errors is not None, errors.group(1) if errors else loaded.dom[-500:]
    assert errors.group(1).strip() == "", errors.group(1) if errors else loaded.dom[-500:]
    assert not [c for c in loaded.console if "Uncaught" in c or "Refused" in c or "Error" in c], (
        loaded.console
    )
    for fig in figures:
        assert f'id="{fig}"' in loaded.dom, fig
    charts = int(re.search(r'data-charts="(\d+)"', loaded.dom).group(1))  # type: ignore[union-attr]
    assert charts >= 1
    if name == "plan":
        # every wave is a bar in the timeline and a row in the table; soak periods are drawn as their own bars
        soak = loaded.dom.count('class="soak" data-group="')
        assert loaded.dom.count('data-group="') - soak == 20
        assert soak >= 1
        assert "api.removed" in loaded.dom
    if name in ("simulate", "saves", "demo"):
        assert "<svg" in loaded.dom
        assert "GPU and GPU memory use per node" in loaded.dom


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
    assert errors is not None
    assert "undefinedFunction" in errors.group(1)


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


def _table(page: str, id: str) -> list[list[str]]:
    table = re.search(rf'<table id="{id}"[^>]*>(.*?)</table>', page, re.S)
    assert table is not None, id
    return [
        [_text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S)
        if "<td>" in row
    ]


def test_simulate_headline_is_what_dra_saves_when_both_place_every_pod(pages: dict[str, Path]) -> None:
    page = pages["saves"].read_text()
    headline = _text(re.search(r'<p id="headline"[^>]*>(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert headline == (
        "Both place all 4 pods; DRA needs 3 fewer GPUs (1 instead of 4), 242 GiB less GPU memory allocated "
        "(78.0 GiB instead of 320 GiB)."
    )
    assert "Every pod was placed in every mode." in page
    # the pod ratio (1.00x) is still there, below the headline
    assert "= 1.00x" in page
    assert "1.00x" not in headline


def test_demo_html_lists_pending_pods_with_reasons_and_its_inputs(pages: dict[str, Path]) -> None:
    page = pages["demo"].read_text()
    headline = _text(re.search(r'<p id="headline"[^>]*>(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert headline == "density (pods placed, DRA / device plugin): 18 / 8 = 2.25x"
    pending = _table(page, "pending")
    assert pending
    assert all(mode == "device plugin" for mode, *_ in pending)
    assert (
        sum(int(m.group(1)) if (m := re.search(r"\((\d+)\)$", pods)) else 1 for _, _, pods, _ in pending)
        == 10
    )
    assert all("Insufficient nvidia.com/gpu" in reason for *_, reason in pending)
    inputs = dict(_table(page, "inputs"))
    assert inputs["example"].startswith("inference: ")
    assert inputs["command"].startswith("kubedra demo --html ")
    assert inputs["kubedra"] == "0.1.0"
    assert inputs["Kubernetes"] == "1.37"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", inputs["time"])


def test_simulate_inputs_name_files_relative_to_the_working_directory(pages: dict[str, Path]) -> None:
    page = pages["saves"].read_text()
    inputs = dict(_table(page, "inputs"))
    assert inputs["files"] == os.path.relpath(SMALL)
    assert "--dra-sizing mig" in inputs["command"]
    assert "--html" in inputs["command"]
    for p in pages.values():
        text = p.read_text()
        # no absolute path (a relative one may climb out of the working directory: ../../tmp/...)
        for absolute in (str(REPO), str(p.parent)):
            assert not re.search(rf"(?<![\w.]){re.escape(absolute)}", text), (p.name, absolute)


def test_audit_counts_are_plural_and_rules_link_to_their_docs(pages: dict[str, Path]) -> None:
    page = pages["audit"].read_text()
    summary = _text(re.search(r'<section id="summary">.*?<p>(.*?)</p>', page, re.S).group(1))  # type: ignore[union-attr]
    assert re.fullmatch(
        r"Target 1\.37: \d+ findings? \(\d+ errors?, \d+ warnings?, \d+ info\); 1 file and \d+ objects? scanned\.",
        summary,
    ), summary
    # every count agrees with its noun: 1 finding, 20 warnings (never "1 errors" or "error 0")
    pairs = re.findall(r"(\d+) (finding|error|warning|object)(s?)\b", summary)
    assert len(pairs) == 4, summary
    assert all((n == "1") == (not plural) for n, _, plural in pairs), summary
    rows = re.findall(r'<tr class="sev-[a-z]+">(.*?)</tr>', page, re.S)
    assert rows
    from kubedra.audit.model import RuleBook

    book = RuleBook.load()
    for row in rows:
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        link = re.fullmatch(r'<a href="([^"]+)" rel="noopener noreferrer">([^<]+)</a>', cells[1])
        assert link is not None, cells[1]
        assert (
            link.group(1) == html.unescape(book.rules[link.group(2)].docs).replace("&", "&amp;")
            or html.unescape(link.group(1)) == book.rules[link.group(2)].docs
        )
        assert re.fullmatch(r'<span class="badge badge-(error|warning|info)">\1</span>', cells[0]), cells[0]


def test_audit_page_severity_colours_and_wrapping_in_chromium(pages: dict[str, Path], tmp_path: Path) -> None:
    got = measure(
        pages["audit"],
        "(function () {"
        " var t = document.getElementById('findings');"
        " var colours = {};"
        " document.querySelectorAll('.badge').forEach(function (b) {"
        "   colours[b.textContent] = getComputedStyle(b).backgroundColor; });"
        " var fix = document.querySelector('#findings tbody tr td:last-child');"
        " var style = getComputedStyle(fix);"
        " return {table: t.getBoundingClientRect().right, page: document.documentElement.clientWidth,"
        "   colours: colours, fixLines: fix.getBoundingClientRect().height / parseFloat(style.lineHeight),"
        "   fixText: fix.textContent.length};"
        "})()",
        tmp_path,
    )
    assert got["table"] <= got["page"], got  # type: ignore[operator]
    colours = got["colours"]
    assert isinstance(colours, dict)
    assert colours
    assert len(set(colours.values())) == len(colours), colours  # each severity its own colour
    assert colours.get("error", "rgb(176, 0, 32)") == "rgb(176, 0, 32)"
    assert got["fixLines"] >= 2, got  # type: ignore[operator]  # a long fix wraps inside its column
