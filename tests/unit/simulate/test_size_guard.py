"""simulate refuses sizes it cannot hold: exit 2 with one line naming the bound and the flag
that raises it, before any pod or node is made."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

HUGE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: huge}
spec:
  replicas: 1000000000
  template:
    spec:
      containers:
      - name: c
        image: x
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def kubedra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubedra", *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (("--nodes", "2x8xH100-80GB"), "--max-pods"),
        (("--nodes", "999999999x8xH100-80GB"), "--max-nodes"),
    ],
)
def test_oversized_simulation_is_refused_fast(tmp_path: Path, extra: tuple[str, ...], flag: str) -> None:
    (tmp_path / "w.yaml").write_text(HUGE)
    start = time.monotonic()
    proc = kubedra("simulate", str(tmp_path / "w.yaml"), *extra)
    assert time.monotonic() - start < 60
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert flag in line


def test_the_flag_raises_the_bound(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(HUGE.replace("1000000000", "30"))
    refused = kubedra("simulate", str(tmp_path / "w.yaml"), "--nodes", "1x8xH100-80GB", "--max-pods", "20")
    assert refused.returncode == 2
    assert "--max-pods" in refused.stderr
    ok = kubedra(
        "simulate", str(tmp_path / "w.yaml"), "--nodes", "1x8xH100-80GB", "--max-pods", "30", "-o", "json"
    )
    assert ok.returncode in (0, 1), ok.stderr
