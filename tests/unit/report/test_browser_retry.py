"""The browser helper retries a Chromium that died of a signal, and nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from . import browser


def _fake(codes: list[int], calls: list[int]):
    def run(exe: str, page: Path, timeout: float) -> subprocess.CompletedProcess[str]:
        code = codes[len(calls)]
        calls.append(code)
        out = "<html><body>ok</body></html>" if code == 0 else ""
        return subprocess.CompletedProcess([exe], code, out, "")

    return run


@pytest.mark.parametrize(
    ("codes", "ok", "tries"),
    [
        ([-11, 0], True, 2),  # one crash, then the page loads
        ([-11, -6, 0], True, 3),
        ([-11, -11, -11, 0], False, 3),  # the bound holds: three crashes fail the test
        ([1, 0], False, 1),  # an ordinary failure is the page's verdict, never retried
    ],
)
def test_signal_deaths_are_retried_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, codes: list[int], ok: bool, tries: int
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(browser, "chromium", lambda: "chromium")
    monkeypatch.setattr(browser, "_run", _fake(codes, calls))
    page = tmp_path / "p.html"
    if ok:
        assert "ok" in browser.load(page).dom
    else:
        with pytest.raises(AssertionError, match="chromium failed"):
            browser.load(page)
    assert len(calls) == tries
