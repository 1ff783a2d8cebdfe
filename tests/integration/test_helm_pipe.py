"""``helm template x chart | kubedra migrate -`` with the real helm from the testbed: stdout is Kubernetes YAML
that ``kubectl apply -f -`` takes (parsed here), nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubedra.testing import binaries
from kubedra.testing.require import unavailable

pytestmark = pytest.mark.integration

CHART = Path(__file__).resolve().parents[1] / "unit" / "cli" / "data" / "chart"


def test_helm_template_pipe_migrate() -> None:
    helm = binaries.find("helm")
    if helm is None:
        unavailable("testbed helm not built: run `make testbed`")
    rendered = subprocess.run(
        [str(helm), "template", "inf", str(CHART)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run(
        [sys.executable, "-m", "kubedra", "migrate", "-"],
        input=rendered,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d is not None]
    assert docs
    assert all(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") for d in docs)
    assert [d["kind"] for d in docs].count("ResourceClaimTemplate") == 2
    assert "CHANGE" in r.stderr
    assert "CHANGE" not in r.stdout
