"""Load a report in headless Chromium and read back the DOM and the console.

Chromium comes from the Debian package ``chromium`` (``make browser`` installs it). Without it the browser tests
skip on a developer machine and fail under CI (``CI=true``).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kubedra.testing.require import unavailable

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=3000",
)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    msg = "headless Chromium not found (Debian: apt-get install chromium, or `make browser`)"
    unavailable(msg)


@dataclass
class Loaded:
    dom: str
    console: list[str]  # console messages and page errors Chromium logged


# Chromium itself sometimes dies of a signal when several xdist workers start it at once on a small machine (CI saw
# one SIGSEGV in ~3,000 loads, with nothing from the page in its log). A browser that crashed has said nothing about
# the page, so such a run is tried again, a bounded number of times, with launches serialised across workers; a page
# error, a CSP refusal or a non-signal exit is never retried.
CRASH_RETRIES = 2
LOCK = Path(tempfile.gettempdir()) / "kubedra-chromium.lock"


def _run(exe: str, page: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="kubedra-chromium-") as profile, LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(
            [exe, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def load(page: Path, timeout: float = 90.0) -> Loaded:
    exe = chromium()
    proc = _run(exe, page, timeout)
    for _ in range(CRASH_RETRIES):
        if proc.returncode >= 0:
            break
        proc = _run(exe, page, timeout)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise AssertionError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    console = [
        ln
        for ln in proc.stderr.splitlines()
        if "CONSOLE" in ln or "Uncaught" in ln or "Refused to" in ln or "Content Security Policy" in ln
    ]
    return Loaded(proc.stdout, console)


def measure(page: Path, script: str, tmp: Path) -> dict[str, object]:
    """Run ``script`` (a JavaScript expression giving a JSON-able value) in ``page`` once it has loaded, in
    headless Chromium, and return its value: layout and computed styles that only a browser knows."""
    import html
    import json
    import re

    probe = (
        "<script>window.addEventListener('load', function () {"
        f"document.body.setAttribute('data-measure', JSON.stringify({script}));"
        "});</script></body>"
    )
    copy = tmp / f"measured-{page.name}"
    copy.write_text(page.read_text().replace("</body>", probe, 1))
    loaded = load(copy)
    found = re.search(r'data-measure="([^"]*)"', loaded.dom)
    assert found is not None, loaded.console or loaded.dom[-500:]
    value: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return value
