"""Side by side with Pluto on the test corpus (tests/corpus): Pluto's verdicts must be exactly the `pluto:` side of
pluto-differences.yaml (kubedra's side is checked in tests/unit/audit/test_pluto_differences.py).

Needs a pluto binary: ``kubedra.testing.binaries.find("pluto")`` (``make testbed`` builds it from
../shared/peers/pluto) or ``pluto`` on PATH. Without one it skips in a lone clone, and fails under CI when the
source was there to build it from.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from kubedra.testing import binaries
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[1] / "corpus"


def _pluto() -> str:
    found = binaries.find("pluto")
    if found:
        return str(found)
    on_path = shutil.which("pluto")
    if on_path:
        return on_path
    msg = f"pluto binary not available (testbed bin dir {binaries.bin_dir()} or PATH)"
    if binaries.peer_source("pluto") is None:
        # a lone clone: no ../shared/peers/pluto to build it from, so nothing could have built it
        pytest.skip(f"{msg}; no ../shared/peers/pluto beside this checkout to build it from")
    unavailable(f"{msg}: run `make testbed` (builds it from ../shared/peers/pluto)")


def test_pluto_verdicts_match_the_recorded_differences() -> None:
    expected = yaml.safe_load((HERE / "pluto-differences.yaml").read_text())
    proc = subprocess.run(
        [
            _pluto(),
            "detect-files",
            "-d",
            ".",
            "-o",
            "json",
            "--target-versions",
            f"k8s=v{expected['target']}.0",
        ],
        # run from the corpus with -d .: Pluto prefixes the working directory to filePath, even to an absolute -d
        cwd=CORPUS,
        env={**os.environ, "PWD": str(CORPUS)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 2, 3), proc.stderr  # 2/3: deprecated/removed found
    items = json.loads(proc.stdout).get("items") or []
    got = {}
    for it in items:
        rel = Path(it["filePath"]).resolve().relative_to(CORPUS.resolve()).as_posix()
        verdict = "removed" if it.get("removed") else "deprecated"
        got[(rel, it["api"]["kind"], it["name"])] = (verdict, it["api"].get("replacement-api"))
    want = {
        (d["file"], d["kind"], d["name"]): (d["pluto"]["verdict"], d["pluto"].get("replacement"))
        for d in expected["differences"]
        if d["pluto"]["verdict"] != "none"
    }
    assert got == want
